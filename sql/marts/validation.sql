-- marts.validation. Grain: validation case x mode x metric.
-- Published training footprints (staging.validation_cases, kind = 'case') against the model's
-- own workload formulas (sql/model/macros.sql), in two modes:
--   accounting: the publication's accelerator-hours, power per accelerator, PUE and grid
--     intensity through job_kwh and job_kgco2e. It checks that the macros compute what the
--     publication computed from the same inputs; the target is 2% (rounding of the inputs).
--   predictive: training FLOPs (training_flops; N = parameters active per token, D = training
--     tokens), accelerator-hours at the accelerator's peak x MFU (accelerator_hours), then the same
--     power, PUE and grid: LLMCarbon's method, whose paper reports agreement within 8.2%. The FLOPs
--     are 6 x N x D, which runs every token through all N parameters (a decoder-only model), unless
--     the case declares architecture = 'encoder_decoder': then the D input tokens pass the encoder
--     (N/2) and D x target_tokens_per_input_token target tokens the decoder (N/2), so
--     6 x N/2 x D + 6 x N/2 x D x r (T5's span corruption: r = 114 / 512). What else limits it: the
--     MFU must be the whole run's (a measured throughput, not a best configuration); and for
--     mixtures of experts the active N and the tokens are rarely published together.
-- A mode is skipped for a case that lacks one of its inputs; a metric appears only where the
-- publication gives it. Relative error = (computed - published) / published.
with cases as (
    select * from staging.validation_cases where kind = 'case'
),

accounting as (
    select
        case_id,
        'accounting' as mode,
        accelerator_hours as hours,
        job_kwh(accelerator_hours, power_w, pue) as kwh,
        cast(null as double) as model_flops,
        cast(null as double) as mfu_used,
        printf('%s accelerator-h x %s W x PUE %.2f', format('{:,}', round(accelerator_hours)::bigint), format('{:g}', power_w), pue)
            as inputs,
        [hours_status, power_status, pue_status] as statuses
    from cases
    where accelerator_hours is not null and power_w is not null and pue is not null
),

flops as (
    select
        *,
        architecture = 'encoder_decoder' as encoder_decoder,
        -- an encoder-decoder's two stacks of N/2: the encoder reads the D input tokens, the
        -- decoder the D x r target tokens
        case when architecture = 'encoder_decoder'
            then training_flops(params / 2, tokens) + training_flops(params / 2, tokens * target_tokens_per_input_token)
            else training_flops(params, tokens)
        end as model_flops
    from cases
    where params is not null and tokens is not null
        and (architecture is distinct from 'encoder_decoder' or target_tokens_per_input_token is not null)
),

predictive as (
    select
        case_id,
        'predictive' as mode,
        accelerator_hours(model_flops, peak_tflops, mfu) as hours,
        job_kwh(accelerator_hours(model_flops, peak_tflops, mfu), power_w, pue) as kwh,
        model_flops,
        mfu as mfu_used,
        case when encoder_decoder
            then printf('6 x %.4gB params x %.4gB input tokens + 6 x %.4gB params x %.4gB target tokens (%.4g per input token)',
                        params / 2e9, tokens / 1e9, params / 2e9, tokens * target_tokens_per_input_token / 1e9,
                        target_tokens_per_input_token)
            else printf('6 x %.4gB params x %.4gB tokens', params / 1e9, tokens / 1e9)
        end
        || printf(' = %.3g FLOP at %s TFLOPS x MFU %.3f; %s W x PUE %.2f',
                  model_flops, format('{:g}', peak_tflops), mfu, format('{:g}', power_w), pue) as inputs,
        [params_status, tokens_status, architecture_status, targets_status, peak_status, mfu_status, power_status, pue_status]
            as statuses
    from flops
    where peak_tflops is not null and mfu is not null and power_w is not null and pue is not null
),

computed as (
    select * from accounting
    union all by name
    select * from predictive
),

metrics as (
    select c.*, 'accelerator_hours' as metric, 'accelerator-h' as unit,
        k.accelerator_hours as published_value, c.hours as computed_value, cast(null as double) as llmcarbon_value
    from computed as c
    inner join cases as k using (case_id)
    where c.mode = 'predictive' and k.accelerator_hours is not null
    union all by name
    select c.*, 'energy_mwh' as metric, 'MWh' as unit,
        k.published_energy_kwh / 1000 as published_value, c.kwh / 1000 as computed_value, cast(null as double) as llmcarbon_value
    from computed as c
    inner join cases as k using (case_id)
    where k.published_energy_kwh is not null
    union all by name
    select c.*, 'operational_tco2e' as metric, 'tCO2e' as unit,
        k.published_operational_kgco2e / 1000 as published_value,
        job_kgco2e(c.kwh, k.grid_gco2e_per_kwh) / 1000 as computed_value,
        case when c.mode = 'predictive' then k.llmcarbon_operational_kgco2e / 1000 end as llmcarbon_value
    from computed as c
    inner join cases as k using (case_id)
    where k.published_operational_kgco2e is not null and k.grid_gco2e_per_kwh is not null
)

select
    m.case_id,
    k.model,
    k.accelerator,
    m.mode,
    m.metric,
    m.unit,
    m.published_value,
    m.computed_value,
    (m.computed_value - m.published_value) / m.published_value as relative_error,
    -- accounting: rounding of the published inputs; predictive: LLMCarbon's reported bound
    case m.mode when 'accounting' then 0.02 else 0.082 end as target_abs_error,
    abs(m.computed_value - m.published_value) / m.published_value <= case m.mode when 'accounting' then 0.02 else 0.082 end
        as within_target,
    case
        when list_contains(statuses, 'assumed')
            or (m.metric = 'operational_tco2e' and k.grid_status = 'assumed') then 'assumed'
        when list_contains(statuses, 'derived')
            or (m.metric = 'operational_tco2e' and k.grid_status = 'derived') then 'derived'
        when list_contains(statuses, 'paper')
            or (m.metric = 'operational_tco2e' and k.grid_status = 'paper') then 'paper'
        else 'primary'
    end as input_status,
    case when m.metric = 'operational_tco2e'
        then m.inputs || '; ' || format('{:g}', k.grid_gco2e_per_kwh) || ' gCO2e/kWh'
        else m.inputs
    end as inputs,
    m.model_flops,
    m.mfu_used as mfu,
    k.llmcarbon_operational_kgco2e is not null as llmcarbon_case,
    m.llmcarbon_value,
    (m.llmcarbon_value - m.published_value) / m.published_value as llmcarbon_relative_error,
    k.published_citation,
    k.source_id
from metrics as m
inner join cases as k using (case_id)
order by m.case_id, m.mode, m.metric
