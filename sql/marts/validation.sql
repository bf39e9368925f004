-- marts.validation. Grain: validation case x mode x metric.
-- Published training footprints (staging.validation_cases, kind = 'case') against the model's
-- own workload formulas (sql/model/macros.sql), in two modes:
--   accounting: the publication's accelerator-hours, power per accelerator, PUE and grid
--     intensity through job_kwh and job_kgco2e. It checks that the macros compute what the
--     publication computed from the same inputs; the target is 2% (rounding of the inputs). Where
--     the published power already includes PUE (power_w_includes_pue), PUE is not applied again.
--   predictive: training FLOPs (training_flops; N = parameters active per token, D = training
--     tokens), elapsed accelerator-hours at the accelerator's peak x MFU x goodput
--     (accelerator_hours; goodput = the share of elapsed accelerator time that trains), then the
--     same power, PUE and grid: LLMCarbon's method, whose paper reports agreement within 8.2%,
--     with the time a run loses. The point takes the case's central MFU and goodput;
--     predicted_low and predicted_high the highest and the lowest of their ranges. The FLOPs
--     are 6 x N x D, which runs every token through all N parameters (a decoder-only model), unless
--     the case declares architecture = 'encoder_decoder': then the D input tokens pass the encoder
--     (N/2) and D x target_tokens_per_input_token target tokens the decoder (N/2), so
--     6 x N/2 x D + 6 x N/2 x D x r (T5's span corruption: r = 114 / 512). What else limits it: the
--     MFU must be the whole run's (a measured throughput, not a best configuration); and for
--     mixtures of experts the active N and the tokens are rarely published together.
-- A mode is skipped for a case that lacks one of its inputs; a metric appears only where the
-- publication gives it. Relative error = (computed - published) / published.
with cases as (
    select
        *,
        -- the PUE still to apply to power_w: none where the publication's power already includes it
        case when power_w_includes_pue then 1.0 else pue end as pue_applied,
        case when power_w_includes_pue
            then printf('%s W (PUE included)', format('{:g}', power_w))
            else printf('%s W x PUE %.2f', format('{:g}', power_w), pue)
        end as power_text
    from staging.validation_cases
    where kind = 'case'
),

accounting as (
    select
        case_id,
        'accounting' as mode,
        accelerator_hours as hours,
        cast(null as double) as hours_low,
        cast(null as double) as hours_high,
        cast(null as double) as model_flops,
        cast(null as double) as mfu_used,
        cast(null as double) as goodput_used,
        printf('%s accelerator-h x %s', format('{:,}', round(accelerator_hours)::bigint), power_text) as inputs,
        [accelerator_hours_status, power_w_status, pue_status] as statuses
    from cases
    where accelerator_hours is not null and power_w is not null and pue_applied is not null
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
        -- elapsed accelerator-hours: the FLOPs at peak x MFU while training, over the goodput (the
        -- share of elapsed time that trains). The point takes the central MFU and goodput; the
        -- interval the ends of their ranges (an input without a range holds at its value).
        accelerator_hours(model_flops, peak_tflops, mfu * goodput) as hours,
        accelerator_hours(model_flops, peak_tflops, coalesce(mfu_high, mfu) * coalesce(goodput_high, goodput)) as hours_low,
        accelerator_hours(model_flops, peak_tflops, coalesce(mfu_low, mfu) * coalesce(goodput_low, goodput)) as hours_high,
        model_flops,
        mfu as mfu_used,
        goodput as goodput_used,
        case when encoder_decoder
            then printf('6 x %.4gB params x %.4gB input tokens + 6 x %.4gB params x %.4gB target tokens (%.4g per input token)',
                        params / 2e9, tokens / 1e9, params / 2e9, tokens * target_tokens_per_input_token / 1e9,
                        target_tokens_per_input_token)
            else printf('6 x %.4gB params x %.4gB tokens', params / 1e9, tokens / 1e9)
        end
        || printf(' = %.3g FLOP at %s TFLOPS x MFU %.3f', model_flops, format('{:g}', peak_tflops), mfu)
        || case when mfu_low is null then '' else printf(' (%.3f-%.3f)', mfu_low, mfu_high) end
        || printf(' x goodput %.3f', goodput)
        || case when goodput_low is null then '' else printf(' (%.3f-%.3f)', goodput_low, goodput_high) end
        || '; ' || power_text as inputs,
        [params_status, tokens_status, architecture_status, target_tokens_per_input_token_status, peak_tflops_status,
         mfu_status, goodput_status, power_w_status, pue_status]
            as statuses
    from flops
    where peak_tflops is not null and mfu is not null and goodput is not null
        and power_w is not null and pue_applied is not null
),

computed as (
    select
        c.*,
        job_kwh(c.hours, k.power_w, k.pue_applied) as kwh,
        job_kwh(c.hours_low, k.power_w, k.pue_applied) as kwh_low,
        job_kwh(c.hours_high, k.power_w, k.pue_applied) as kwh_high
    from (
        select * from accounting
        union all by name
        select * from predictive
    ) as c
    inner join cases as k using (case_id)
),

metrics as (
    select c.*, 'accelerator_hours' as metric, 'accelerator-h' as unit,
        k.accelerator_hours as published_value, c.hours as computed_value,
        c.hours_low as predicted_low, c.hours_high as predicted_high, cast(null as double) as llmcarbon_value
    from computed as c
    inner join cases as k using (case_id)
    where c.mode = 'predictive' and k.accelerator_hours is not null
    union all by name
    select c.*, 'energy_mwh' as metric, 'MWh' as unit,
        k.published_energy_kwh / 1000 as published_value, c.kwh / 1000 as computed_value,
        c.kwh_low / 1000 as predicted_low, c.kwh_high / 1000 as predicted_high, cast(null as double) as llmcarbon_value
    from computed as c
    inner join cases as k using (case_id)
    where k.published_energy_kwh is not null
    union all by name
    select c.*, 'operational_tco2e' as metric, 'tCO2e' as unit,
        k.published_operational_kgco2e / 1000 as published_value,
        job_kgco2e(c.kwh, k.grid_gco2e_per_kwh) / 1000 as computed_value,
        job_kgco2e(c.kwh_low, k.grid_gco2e_per_kwh) / 1000 as predicted_low,
        job_kgco2e(c.kwh_high, k.grid_gco2e_per_kwh) / 1000 as predicted_high,
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
            or (m.metric = 'operational_tco2e' and k.grid_gco2e_per_kwh_status = 'assumed') then 'assumed'
        when list_contains(statuses, 'derived')
            or (m.metric = 'operational_tco2e' and k.grid_gco2e_per_kwh_status = 'derived') then 'derived'
        when list_contains(statuses, 'paper')
            or (m.metric = 'operational_tco2e' and k.grid_gco2e_per_kwh_status = 'paper') then 'paper'
        else 'primary'
    end as input_status,
    case when m.metric = 'operational_tco2e'
        then m.inputs || '; ' || format('{:g}', k.grid_gco2e_per_kwh) || ' gCO2e/kWh'
        else m.inputs
    end as inputs,
    m.model_flops,
    m.mfu_used as mfu,
    m.goodput_used as goodput,
    m.predicted_low,
    m.predicted_high,
    case when m.mode = 'predictive'
        then m.published_value between m.predicted_low and m.predicted_high
    end as published_within_interval,
    k.llmcarbon_operational_kgco2e is not null as llmcarbon_case,
    m.llmcarbon_value,
    (m.llmcarbon_value - m.published_value) / m.published_value as llmcarbon_relative_error,
    k.published_citation,
    k.source_id
from metrics as m
inner join cases as k using (case_id)
order by m.case_id, m.mode, m.metric
