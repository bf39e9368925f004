-- Sensitivity heatmap: marts.sensitivity_grid for one communication pattern ($pattern).
select
    scenario_id,
    device_class,
    device_multiplier,
    hours_per_day,
    devices,
    edge_added_kgco2e,
    cloud_total_kgco2e,
    reduction_factor,
    is_scenario_point,
    -- the scenario's fleet of that class cannot send its traffic (dashboards/sql/fleet_feasibility.sql)
    coalesce(f.infeasible, false) as infeasible
from marts.sensitivity_grid
left join (
    -- include: fleet_feasibility
) as f using (scenario_id, device_class)
where pattern = $pattern
order by scenario_id, device_class, device_multiplier, hours_per_day
