-- The model's rows (model_class_rows: sql/model/evaluate.sql) and, for a mixed fleet (classes
-- with a fleet_share), one row for the fleet as a whole: its classes' devices and carbon summed,
-- R = the cloud job's total / the fleet's added carbon. Only a scenario with a mixed fleet
-- reads this, so the other evaluations stream straight through evaluate.sql.
select * from model_class_rows
union all by name
-- a mixed fleet as a whole: its classes' devices and carbon summed, in class order (a float sum in no
-- fixed order could differ in its last bit from one build to the next)
select
    scenario_id,
    variant_id,
    'fleet' as device_class,
    basis,
    bool_and(is_headline) as is_headline,
    pattern,
    network_method,
    embodied_policy,
    resize_power,
    bool_and(is_headline_method) as is_headline_method,
    bool_and(is_headline_policy) as is_headline_policy,
    bool_and(is_headline_resize_power) as is_headline_resize_power,
    any_value(cloud_gpu_capacity) as cloud_gpu_capacity,
    any_value(capacity_unit) as capacity_unit,
    any_value(online_fraction) as online_fraction,
    'fleet' as devices_from,
    sum(devices order by device_class) as devices,
    case when bool_or(resized_from is not null) then sum(coalesce(resized_from, devices) order by device_class) end as resized_from,
    sum(cloud_total_kgco2e order by device_class) as cloud_total_kgco2e,
    sum(edge_operational_kgco2e order by device_class) as edge_operational_kgco2e,
    sum(edge_embodied_kgco2e order by device_class) as edge_embodied_kgco2e,
    sum(comm_gb order by device_class) as comm_gb,
    sum(comm_kwh order by device_class) as comm_kwh,
    sum(comm_kgco2e order by device_class) as comm_kgco2e,
    max(link_time_share) as link_time_share,
    max(required_link_mb_per_s) as required_link_mb_per_s,
    min(link_mb_per_s) as link_mb_per_s,
    bool_and(link_feasible) as link_feasible,
    -- the most any of its classes' lines is charged, and physical only where every class is
    max(network_w_per_line) as network_w_per_line,
    any_value(line_power_physical_max_w) as line_power_physical_max_w,
    bool_and(network_physical) as network_physical,
    max(implied_device_utilisation) as implied_device_utilisation,
    bool_and(memory_feasible) as memory_feasible,
    sum(edge_added_kgco2e order by device_class) as edge_added_kgco2e,
    sum(fleet_share order by device_class) as fleet_share,
    max(job_years) as job_years,
    max(cloud_gpu_count) as cloud_gpu_count,
    sum(cloud_total_kgco2e order by device_class) / sum(edge_added_kgco2e order by device_class) as reduction_factor
from model_class_rows
where fleet_share is not null
group by scenario_id, variant_id, basis, pattern, network_method, embodied_policy, resize_power
-- every class of the fleet has this basis and method row (their shares sum to 1)
having abs(sum(fleet_share order by device_class) - 1) < 1e-6
