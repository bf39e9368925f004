-- Sensitivity tornado: marts.sensitivity for the patterns in $patterns (the frame's headline network method), with each bar's ends.
select
    scenario_id,
    device_class,
    pattern,
    parameter,
    unit,
    value,
    value_low,
    value_high,
    reduction_factor_at_low,
    reduction_factor_at_high,
    least(reduction_factor_at_low, reduction_factor_at_high) as reduction_factor_min,
    greatest(reduction_factor_at_low, reduction_factor_at_high) as reduction_factor_max,
    baseline_reduction_factor,
    swing,
    rank,
    -- the scenario's fleet of that class cannot send its traffic (dashboards/sql/fleet_feasibility.sql)
    coalesce(f.infeasible, false) as infeasible
from marts.sensitivity
left join (
    -- include: fleet_feasibility
) as f using (scenario_id, device_class)
where list_contains($patterns::varchar[], pattern) and is_headline_method
order by scenario_id, device_class, pattern, rank
