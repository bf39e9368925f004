-- asset: group=claims
-- marts.claims: every claim of staging.claims with its published value, the value recomputed
-- from rows, the status and the verdict in the claim's own terms. A claim's quantity names its
-- recomputation: reduction_factor, R compute only of each device class of its scenario (the
-- headline rows of marts.verdict); bandwidth_ratio, its baseline's wide-area bytes over its own
-- (marts.claim_traffic); emission_ratio, its case's emissions over each baseline's
-- (staging.claim_parameters energy_kwh x gco2e_per_kwh over baseline_energy_kwh x
-- baseline_gco2e_per_kwh_<baseline>). A claim with no case is not reproducible, naming what is
-- missing. The span (over classes or baselines, at central values) is what the published value
-- or range is compared with; recomputed_low and recomputed_high also take in the ends of the
-- parameters' sourced ranges. Grain: one claim.
with reduction as (
    select
        claims.claim_id,
        (min(v.reduction_factor) + max(v.reduction_factor)) / 2 as central,
        min(v.reduction_factor) as span_low,
        max(v.reduction_factor) as span_high,
        min(v.reduction_factor) as low,
        max(v.reduction_factor) as high,
        string_agg(v.device_class || ' ' || printf('%.4f', v.reduction_factor) || 'x', ', ' order by v.reduction_factor) as recomputed_text
    from staging.claims as claims
    inner join marts.verdict as v on v.scenario_id = claims.case_id
    where claims.quantity = 'reduction_factor'
        and v.is_headline and v.is_headline_method and v.is_headline_policy and v.is_headline_resize_power
    group by claims.claim_id
),

bytes as (
    -- one method's rows: the bytes do not depend on the network method
    select scenario_id, range_end, any_value(wan_tb) as wan_tb
    from marts.claim_traffic
    group by scenario_id, range_end
),

bandwidth as (
    select
        claims.claim_id,
        max(baseline.wan_tb / own.wan_tb) filter (where own.range_end = 'central') as central,
        max(baseline.wan_tb / own.wan_tb) filter (where own.range_end = 'central') as span_low,
        max(baseline.wan_tb / own.wan_tb) filter (where own.range_end = 'central') as span_high,
        min(baseline.wan_tb / own.wan_tb) as low,
        max(baseline.wan_tb / own.wan_tb) as high,
        printf('%.4gx (%.4g TB against %.4g TB); %.4gx to %.4gx over the ends of the sourced ranges',
               max(baseline.wan_tb / own.wan_tb) filter (where own.range_end = 'central'),
               max(baseline.wan_tb) filter (where own.range_end = 'central'), max(own.wan_tb) filter (where own.range_end = 'central'),
               min(baseline.wan_tb / own.wan_tb), max(baseline.wan_tb / own.wan_tb)) as recomputed_text
    from staging.claims as claims
    inner join bytes as own on own.scenario_id = claims.case_id
    inner join bytes as baseline on baseline.scenario_id = claims.baseline_case_id and baseline.range_end = own.range_end
    where claims.quantity = 'bandwidth_ratio'
    group by claims.claim_id
),

case_values as (
    select
        case_id,
        max(value) filter (where parameter = 'energy_kwh') * max(value) filter (where parameter = 'gco2e_per_kwh') / 1000 as kgco2e,
        max(value) filter (where parameter = 'baseline_energy_kwh') as baseline_energy_kwh
    from staging.claim_parameters
    group by case_id
),

baselines as (
    select case_id, parameter[length('baseline_gco2e_per_kwh_') + 1:] as baseline, value as gco2e_per_kwh
    from staging.claim_parameters
    where starts_with(parameter, 'baseline_gco2e_per_kwh_')
),

emission as (
    select
        claims.claim_id,
        (min(r.ratio) + max(r.ratio)) / 2 as central,
        min(r.ratio) as span_low,
        max(r.ratio) as span_high,
        min(r.ratio) as low,
        max(r.ratio) as high,
        printf('%.4g kgCO2e against ', any_value(r.kgco2e))
        || string_agg(r.baseline || ' ' || printf('%.4g kg (%.1f%%)', r.baseline_kgco2e, 100 * r.ratio), ', ' order by r.ratio) as recomputed_text
    from staging.claims as claims
    inner join (
        select
            baselines.case_id,
            baselines.baseline,
            case_values.kgco2e,
            case_values.baseline_energy_kwh * baselines.gco2e_per_kwh / 1000 as baseline_kgco2e,
            case_values.kgco2e / (case_values.baseline_energy_kwh * baselines.gco2e_per_kwh / 1000) as ratio
        from baselines
        inner join case_values using (case_id)
    ) as r on r.case_id = claims.case_id
    where claims.quantity = 'emission_ratio'
    group by claims.claim_id
),

recomputed as (
    from reduction
    union all by name
    from bandwidth
    union all by name
    from emission
),

judged as (
    select
        claims.*,
        r.central,
        r.low,
        r.high,
        r.recomputed_text,
        greatest(abs(r.span_low / claims.published_low - 1), abs(r.span_high / claims.published_high - 1)) as relative_error
    from staging.claims as claims
    left join recomputed as r using (claim_id)
)

select
    claim_id,
    paper,
    quantity,
    unit,
    quote,
    published_low,
    published_high,
    published_text,
    central as recomputed_value,
    low as recomputed_low,
    high as recomputed_high,
    coalesce(recomputed_text, 'not recomputed') as recomputed_text,
    relative_error,
    tolerance,
    case when central is null then 'not reproducible' when relative_error <= tolerance then 'reproduced' else 'differs' end as status,
    case
        when central is null then 'Missing: ' || coalesce(missing, 'no case recomputes it') || ' ' || notes
        when relative_error <= tolerance then notes
        else printf('The published %s does not follow from its inputs: recomputed %s (largest relative error %.1f%%, tolerance %.0f%%). ',
                    published_text, recomputed_text, 100 * relative_error, 100 * tolerance) || notes
    end as reason,
    case
        when central is null then printf('%s cannot be checked: its inputs are not published.', published_text)
        when relative_error <= tolerance then printf('%s holds as arithmetic: recomputed %s.', published_text, recomputed_text)
        else printf('%s does not hold as published: recomputed %s.', published_text, recomputed_text)
    end as verdict,
    case_id,
    citation_url
from judged
order by claim_id
