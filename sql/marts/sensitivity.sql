-- asset: group=reviewers
-- marts.sensitivity: the tornado, R with each ranged parameter at its low and at its high value, all others at the
-- scenario's (core.model_evaluation's family 'tornado', each scenario's headline basis). Grain: scenario x edge
-- device class x pattern x network method (every method the scenario's frame admits, so a verdict set by any of
-- them finds its own; at the frame's headline allocation policy and resize power) x ranged parameter. Ranked by
-- swing |R(high) - R(low)| within each (scenario, class, pattern, network method); equal swings rank in the
-- parameters' alphabetical order.
with evaluated as (
    select * from core.model_evaluation where family = 'tornado'
),

ranged as (
    select scenario_id, parameter, unit, status, value, low as value_low, high as value_high
    from core.scenario_parameters
    where low is not null and high is not null and low < high
),

ends as (
    select
        scenario_id, device_class, pattern, network_method,
        split_part(variant_id, ':', 1) as parameter,
        max(reduction_factor) filter (where split_part(variant_id, ':', 2) = 'low') as reduction_factor_at_low,
        max(reduction_factor) filter (where split_part(variant_id, ':', 2) = 'high') as reduction_factor_at_high
    from evaluated
    where variant_id <> 'baseline'
    group by all
),

baseline as (
    select scenario_id, device_class, pattern, network_method, is_headline_method, reduction_factor as baseline_reduction_factor
    from evaluated
    where variant_id = 'baseline'
),

swings as (
    select
        ends.scenario_id, ends.device_class, ends.pattern, ends.network_method, baseline.is_headline_method,
        ends.parameter, ranged.unit, ranged.status, ranged.value, ranged.value_low, ranged.value_high,
        ends.reduction_factor_at_low, ends.reduction_factor_at_high, baseline.baseline_reduction_factor,
        abs(ends.reduction_factor_at_high - ends.reduction_factor_at_low) as swing
    from ends
    inner join ranged using (scenario_id, parameter)
    inner join baseline using (scenario_id, device_class, pattern, network_method)
)

select
    *,
    -- a swing that cannot be computed (an end without R) has no rank
    case when swing is not null then row_number() over (
        partition by scenario_id, device_class, pattern, network_method, swing is null order by swing desc, parameter) end as rank
from swings
order by scenario_id, device_class, pattern, network_method, rank nulls first
