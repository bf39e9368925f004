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
    is_scenario_point
from marts.sensitivity_grid
where pattern = $pattern
order by scenario_id, device_class, device_multiplier, hours_per_day
