-- asset: group=claims
-- marts.claims: every claim of staging.claims with its published value, the value recomputed
-- from rows, the status and the verdict in the claim's own terms. A claim's quantity names its
-- recomputation: reduction_factor, R compute only of each device class of its scenario (the
-- headline rows of marts.verdict); bandwidth_ratio, its baseline's wide-area bytes over its own
-- (marts.claim_traffic); emission_ratio, its case's emissions over each baseline's
-- (staging.claim_parameters energy_kwh x gco2e_per_kwh over baseline_energy_kwh x
-- baseline_gco2e_per_kwh_<baseline>); emission_share, a part's share of a federated client
-- session's energy (its case's session rows); emissions, a run's account in kgCO2e (its energy or
-- accelerator-hours at their power, PUE, idle energy, grid intensity and embodied carbon). A claim with no case is not reproducible, naming what is
-- missing. The span (over classes or baselines, at central values) is what the published value
-- or range is compared with; recomputed_low and recomputed_high also take in the ends of the
-- parameters' sourced ranges. Grain: one claim.
with reduction as (
    select
        claims.claim_id,
        min(v.reduction_factor) as span_low,
        max(v.reduction_factor) as span_high,
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
    from core.claim_values
    where range_end = 'central'
    group by case_id
),

baselines as (
    select case_id, parameter[length('baseline_gco2e_per_kwh_') + 1:] as baseline, value as gco2e_per_kwh
    from core.claim_values
    where range_end = 'central' and starts_with(parameter, 'baseline_gco2e_per_kwh_')
),

emission as (
    select
        claims.claim_id,
        min(r.ratio) as span_low,
        max(r.ratio) as span_high,
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

sessions as (
    -- a federated client session (emission_share): its case's rows at each range end
    select
        case_id,
        range_end,
        max(value_text) filter (where parameter = 'comm_pattern') as comm_pattern,
        max(value) filter (where parameter = 'cpu_power_w') * max(value) filter (where parameter = 'cpu_seconds') as compute_j,
        max(value) filter (where parameter = 'radio_tx_power_w') as tx_w,
        max(value) filter (where parameter = 'radio_rx_power_w') as rx_w,
        max(value) filter (where parameter = 'link_mb_per_s') as link_mb_per_s,
        max(value) filter (where parameter = 'params') as params,
        max(value) filter (where parameter = 'bytes_per_param') as bytes_per_param,
        max(value) filter (where parameter = 'network_kwh_per_gb') as network_kwh_per_gb,
        max(value) filter (where parameter = 'router_kwh_per_gb') as router_kwh_per_gb,
        max(value) filter (where parameter = 'network_marginal_w_per_mbps') as network_marginal_w_per_mbps,
        max(value) filter (where parameter = 'router_marginal_w_per_mbps') as router_marginal_w_per_mbps,
        max(value) filter (where parameter = 'per_bit_kwh_per_gb') as per_bit_kwh_per_gb,
        max(value) filter (where parameter = 'server_power_w') * max(value) filter (where parameter = 'servers')
        * max(value) filter (where parameter = 'server_pue') * max(value) filter (where parameter = 'round_seconds')
        / max(value) filter (where parameter = 'concurrency') as server_j
    from core.claim_values
    where case_id in (select case_id from staging.claims where quantity = 'emission_share')
    group by case_id, range_end
),

session_parts as (
    -- joules per client session: compute; the upload (the sending radio for the update at the link rate and the
    -- network for its bytes) and the download likewise, each one way of the pattern's bytes per client and round
    -- (comm_bytes of one client, one round); the server's share of the round; under each network method that
    -- charges bytes by the ends they pass (core.network_methods: volume, marginal) and, where the case gives the
    -- path's energy per bit (per_bit_kwh_per_gb), the per-bit method
    select
        s.case_id,
        s.range_end,
        method.network_method,
        one_way.bytes,
        s.compute_j,
        s.tx_w * one_way.bytes / (s.link_mb_per_s * 1e6) + one_way.network_kwh / kwh_of_joules(1) as upload_j,
        s.rx_w * one_way.bytes / (s.link_mb_per_s * 1e6) + one_way.network_kwh / kwh_of_joules(1) as download_j,
        s.server_j
    from sessions as s
    inner join core.patterns as pattern on pattern.pattern = s.comm_pattern
    cross join core.network_methods as method
    cross join lateral (
        select
            comm_bytes(pattern.sync_n, pattern.sync_n_minus_1, 0, 0, 1, s.params, s.bytes_per_param, 1, 1, 1, 0, 0, 1, 1) / 2 as bytes,
            network_method_kwh(method.per_gb_one_end, method.per_gb_by_ends, method.marginal_by_ends, method.line_time,
                               network_terms_kwh(bytes / 1e9, pattern.home_ends, pattern.server_ends, s.network_kwh_per_gb,
                                                 s.router_kwh_per_gb, s.network_marginal_w_per_mbps, s.router_marginal_w_per_mbps, 0, 0, 0))
            -- the per-bit method's term, which the model's four do not hold: the path's equipment, once per byte
            + weighted(method.per_bit, bytes / 1e9 * s.per_bit_kwh_per_gb) as network_kwh
    ) as one_way
    where method.per_gb_one_end = 0 and method.line_time = 0
        and (method.per_bit = 0 or s.per_bit_kwh_per_gb is not null)
),

shares as (
    select
        claims.claim_id,
        parts.range_end,
        parts.network_method,
        case claims.part
            when 'client_compute' then parts.compute_j
            when 'upload' then parts.upload_j
            when 'download' then parts.download_j
            when 'server' then parts.server_j
        end / (parts.compute_j + parts.upload_j + parts.download_j + parts.server_j) as share
    from staging.claims as claims
    inner join session_parts as parts on parts.case_id = claims.case_id
    where claims.quantity = 'emission_share'
),

emission_share as (
    -- the paper's own method charges the network per bit (core.network_methods per_bit): its central share is the
    -- claim's recomputation where the case gives the path's energy per bit, else the volume method's; the other
    -- methods and the range ends bound it
    select
        claim_id,
        coalesce(max(share) filter (where network_method = 'per_bit' and range_end = 'central'),
                 max(share) filter (where network_method = 'volume' and range_end = 'central')) as central,
        central as span_low,
        central as span_high,
        min(share) as low,
        max(share) as high,
        coalesce(printf('%.1f%% per bit (the paper''s method), ', 100 * max(share) filter (where network_method = 'per_bit' and range_end = 'central')), '')
        || printf('%.1f%% by volume (average energy per GB), %.1f%% by marginal energy; %.1f%% to %.1f%% over the methods and the sourced ranges',
                  100 * max(share) filter (where network_method = 'volume' and range_end = 'central'),
                  100 * max(share) filter (where network_method = 'marginal' and range_end = 'central'),
                  100 * min(share), 100 * max(share)) as recomputed_text
    from shares
    group by claim_id
),

runs as (
    -- a training run's account (emissions): its energy, given (energy_kwh) or as accelerator-hours at their
    -- power, times the PUE where the account applies one, plus energy it counts apart (idle_energy_kwh), at its
    -- grid intensity, plus the embodied carbon it charges; kgCO2e at each range end
    select
        case_id,
        range_end,
        (coalesce(max(value) filter (where parameter = 'energy_kwh'),
                  max(value) filter (where parameter = 'accelerator_hours') * max(value) filter (where parameter = 'accelerator_power_w') / 1000)
         * coalesce(max(value) filter (where parameter = 'pue'), 1)
         + coalesce(max(value) filter (where parameter = 'idle_energy_kwh'), 0))
        * max(value) filter (where parameter = 'gco2e_per_kwh') / 1000
        + coalesce(max(value) filter (where parameter = 'embodied_kgco2e'), 0) as kgco2e
    from core.claim_values
    where case_id in (select case_id from staging.claims where quantity = 'emissions')
    group by case_id, range_end
),

emissions as (
    select
        claims.claim_id,
        max(runs.kgco2e) filter (where runs.range_end = 'central') as span_low,
        span_low as span_high,
        min(runs.kgco2e) as low,
        max(runs.kgco2e) as high,
        printf('%.4g t CO2e', span_low / 1000)
        || case when min(runs.kgco2e) < max(runs.kgco2e)
                then printf(' (%.4g-%.4g t over the ends of the sourced ranges)', min(runs.kgco2e) / 1000, max(runs.kgco2e) / 1000)
                else '' end as recomputed_text
    from staging.claims as claims
    inner join runs on runs.case_id = claims.case_id
    where claims.quantity = 'emissions' and runs.kgco2e is not null
    group by claims.claim_id
),

recomputed as (
    -- a recomputation that gives only its span (reduction, emission) is centred on it and bounded by it
    select
        claim_id,
        coalesce(central, (span_low + span_high) / 2) as central,
        span_low,
        span_high,
        coalesce(low, span_low) as low,
        coalesce(high, span_high) as high,
        recomputed_text
    from (
        from reduction
        union all by name
        from bandwidth
        union all by name
        from emission
        union all by name
        from emission_share
        union all by name
        from emissions
    )
),

inputs as (
    -- the input rows each claim rests on, by status: its scenario's parameter rows (a reduction_factor claim) or its
    -- case's and baseline case's rows
    select claims.claim_id, rows.status, count(*) as n
    from staging.claims as claims
    inner join (
        select scenario_id as case_id, status from core.scenario_parameters
        union all
        select case_id, status from staging.claim_parameters
    ) as rows on rows.case_id in (claims.case_id, claims.baseline_case_id)
    group by claims.claim_id, rows.status
),

input_counts as (
    select
        claim_id,
        coalesce(sum(n) filter (where status = 'paper'), 0) as inputs_paper,
        coalesce(sum(n) filter (where status = 'secondary'), 0) as inputs_secondary,
        string_agg(status || ' ' || n, ', ' order by n desc, status) as inputs_by_status
    from inputs
    group by claim_id
),

judged as (
    select
        claims.*,
        r.central,
        r.low,
        r.high,
        r.recomputed_text,
        -- the published value inside what the inputs' sourced ranges (or the other methods) add around the central span;
        -- a span over device classes or baselines alone is judged end by end, never inconclusive
        coalesce((r.low < r.span_low or r.high > r.span_high)
                 and r.low <= claims.published_low and claims.published_high <= r.high, false) as inside_range,
        case
            -- one recomputed value against a published range: how far outside the range it falls
            when r.span_low = r.span_high and claims.published_low < claims.published_high
                then greatest(0, 1 - r.span_low / claims.published_low, r.span_high / claims.published_high - 1)
            -- a recomputed span against the published one (each class's or baseline's end against its own)
            else greatest(abs(r.span_low / claims.published_low - 1), abs(r.span_high / claims.published_high - 1))
        end as relative_error
    from staging.claims as claims
    left join recomputed as r using (claim_id)
)

select
    claim_id,
    paper,
    stance,
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
    case
        when central is null then 'not reproducible'
        when relative_error <= tolerance then 'reproduced'
        when inside_range then 'inconclusive'
        else 'differs'
    end as status,
    case
        when central is null then 'Missing: ' || coalesce(missing, 'no case recomputes it') || ' ' || notes
        when relative_error <= tolerance then notes
        -- the published value inside the span the inputs' sourced ranges give, outside the central value's tolerance
        when inside_range then printf('The published %s lies inside the recomputed range (%s) but not within %.0f%% of its central '
                                      || 'value (relative error %.1f%%): which end holds turns on inputs the sources leave open. ',
                                      published_text, recomputed_text, 100 * tolerance, 100 * relative_error) || notes
        -- recomputed on this project's rows where the paper does not publish its inputs
        when missing is not null then printf('The paper does not publish its inputs (%s), so they are this project''s rows: recomputed %s '
                                             || '(relative error %.1f%%, tolerance %.0f%%). ', missing, recomputed_text,
                                             100 * relative_error, 100 * tolerance) || notes
        else printf('The published %s does not follow from its inputs: recomputed %s (largest relative error %.1f%%, tolerance %.0f%%). ',
                    published_text, recomputed_text, 100 * relative_error, 100 * tolerance) || notes
    end as reason,
    case
        when central is null then printf('%s cannot be checked: its inputs are not published.', published_text)
        when relative_error <= tolerance then printf('%s holds as arithmetic: recomputed %s.', published_text, recomputed_text)
        when inside_range then printf('%s is neither confirmed nor refuted: it lies inside the recomputed range (%s).',
                                      published_text, recomputed_text)
        when missing is not null
            then printf('%s is not reached on this project''s rows (recomputed %s); the paper''s own inputs are not published.',
                        published_text, recomputed_text)
        else printf('%s does not hold as published: recomputed %s.', published_text, recomputed_text)
    end as verdict,
    case_id,
    citation_url,
    coalesce(counts.inputs_paper, 0)::bigint as inputs_paper,
    coalesce(counts.inputs_secondary, 0)::bigint as inputs_secondary,
    coalesce(counts.inputs_by_status, 'none: no case recomputes it') as inputs_by_status
from judged
left join input_counts as counts using (claim_id)
order by claim_id
