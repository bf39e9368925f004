-- marts.lifecycle_carbon (paper Fig. 4). Grain: scenario x device (cloud GPU, laptop, phone).
-- Cloud GPU: embodied = the scenario's per-GPU factor, charged in full to the horizon, or
--   amortised over the node's life under the attributional frame;
--   operational = (GPU power + host share) x utilisation x cloud hours/day x 365 x T x PUE x
--   (1 + cluster comm share) x CI (MLCO2 method when utilisation = PUE = 1, no host share and
--   no comm share).
-- Formulas: the macros of sql/model/macros.sql.
-- Laptop, phone: embodied = report total x non-use share, re-amortised to the horizon as
--   x min(T / report lifetime, 1); operational = online share x training power x wall factor
--   (charger and battery losses) x edge hours/day x 365 x T x CI.
with s as (
    select * from core.scenarios
),

devices as (
    select
        scenario_id,
        'cloud_gpu' as device_class,
        cloud_embodied_charged_kgco2e(accounting_frame, cloud_gpu_embodied_kgco2e, horizon_years, cloud_embodied_life_years)
            as embodied_kgco2e,
        cloud_operational_kgco2e(cloud_gpu_power_w + cloud_node_overhead_w, cloud_utilisation, cloud_hours_per_day, horizon_years, cloud_pue,
                                 cloud_comm_energy_share, cloud_grid_gco2e_per_kwh) as operational_kgco2e,
        case when cast(accounting_frame as integer) = 1 then 'per-GPU embodied factor x min(T / node life, 1)'
            else 'per-GPU embodied factor, charged in full' end as embodied_rule
    from s
    union all
    select
        scenario_id,
        edge.device_class,
        device_embodied_kgco2e(edge.embodied_kgco2e, edge.nonuse_share, horizon_years, edge.lifetime_years),
        edge_operational_kgco2e(1, device_online_fraction,
                                edge.train_power_w * edge_wall_factor(edge_charger_efficiency, battery_throughput_share, battery_round_trip_efficiency),
                                edge_hours_per_day, horizon_years, edge_grid_gco2e_per_kwh),
        'report total x non-use share x min(T / lifetime, 1)'
    from s
    cross join lateral (values
        ('laptop', s.laptop_embodied_kgco2e, s.laptop_nonuse_share, s.laptop_lifetime_years, s.laptop_train_power_w),
        ('phone', s.phone_embodied_kgco2e, s.phone_nonuse_share, s.phone_lifetime_years, s.phone_train_power_w)
    ) as edge (device_class, embodied_kgco2e, nonuse_share, lifetime_years, train_power_w)
),

final as (
    select
        devices.scenario_id,
        devices.device_class,
        s.horizon_years,
        devices.embodied_kgco2e,
        devices.operational_kgco2e,
        devices.embodied_kgco2e + devices.operational_kgco2e as total_kgco2e,
        devices.embodied_kgco2e / (devices.embodied_kgco2e + devices.operational_kgco2e) as embodied_share,
        devices.operational_kgco2e / (devices.embodied_kgco2e + devices.operational_kgco2e) as operational_share,
        devices.embodied_rule
    from devices
    inner join s using (scenario_id)
)

select * from final order by scenario_id, device_class
