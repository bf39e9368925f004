-- Sensitivity heatmap: the reduction factor over a grid of device multiplier m x edge hours per
-- day h, per scenario and edge device class, from marts.fleet_equivalence and core.scenarios
-- with the fleet formula of marts.fleet_equivalence:
--   R(m, h) = cloud total / (N x m x P_train x h x 365 x T x CI_edge / 1e6 + m x edge embodied)
-- where N is the scenario's device count and edge embodied its allocated embodied carbon
-- (0 under the paper's policy). At m = 1 and h = the scenario's hours, R equals the mart's.
-- Parameters: $basis (equivalence basis), $multipliers (list of m), $hours_min, $hours_max.
with s as (
    select * from core.scenarios
),

fleet as (
    select
        f.scenario_id,
        f.device_class,
        f.basis,
        f.devices_per_gpu,
        f.cloud_total_kgco2e,
        f.edge_embodied_kgco2e,
        f.reduction_factor as scenario_reduction_factor,
        case f.device_class when 'laptop' then s.laptop_train_power_w else s.phone_train_power_w end as train_power_w,
        s.edge_hours_per_day as scenario_hours_per_day,
        s.horizon_years,
        s.edge_grid_gco2e_per_kwh
    from marts.fleet_equivalence as f
    inner join s using (scenario_id)
    where f.basis = $basis
),

multipliers as (
    select unnest($multipliers::double[]) as device_multiplier
),

hours as (
    select cast(range as double) as hours_per_day from range($hours_min, $hours_max + 1)
)

select
    fleet.scenario_id,
    fleet.device_class,
    fleet.basis,
    multipliers.device_multiplier,
    hours.hours_per_day,
    fleet.devices_per_gpu * multipliers.device_multiplier as devices,
    fleet.cloud_total_kgco2e,
    fleet.devices_per_gpu * multipliers.device_multiplier * fleet.train_power_w * hours.hours_per_day * 365
        * fleet.horizon_years * fleet.edge_grid_gco2e_per_kwh / 1e6
        + multipliers.device_multiplier * fleet.edge_embodied_kgco2e as edge_added_kgco2e,
    fleet.cloud_total_kgco2e / (
        fleet.devices_per_gpu * multipliers.device_multiplier * fleet.train_power_w * hours.hours_per_day * 365
            * fleet.horizon_years * fleet.edge_grid_gco2e_per_kwh / 1e6
        + multipliers.device_multiplier * fleet.edge_embodied_kgco2e
    ) as reduction_factor,
    fleet.scenario_hours_per_day,
    fleet.scenario_reduction_factor,
    multipliers.device_multiplier = 1 and hours.hours_per_day = fleet.scenario_hours_per_day as is_scenario_point
from fleet
cross join multipliers
cross join hours
order by fleet.scenario_id, fleet.device_class, multipliers.device_multiplier, hours.hours_per_day
