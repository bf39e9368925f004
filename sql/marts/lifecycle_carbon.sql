-- marts.lifecycle_carbon (paper Fig. 4). Grain: scenario x device (the cloud GPU and every edge
-- device class of core.scenario_devices).
-- Cloud GPU: embodied = the scenario's per-GPU factor, charged in full to the horizon, or
--   amortised over the node's life under the attributional frame;
--   operational = (GPU power + host share) x utilisation x cloud hours/day x 365 x T x PUE x
--   (1 + cluster comm share) x CI (MLCO2 method when utilisation = PUE = 1, no host share and
--   no comm share).
-- Formulas: the macros of sql/model/macros.sql.
-- Edge classes: embodied = report total x non-use share, re-amortised to the horizon as
--   x min(T / report lifetime, 1); operational = online share x training power x wall factor
--   (charger and battery losses) x the class's hours/day x 365 x T x CI.
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
        s.scenario_id,
        edge.device_class,
        device_embodied_kgco2e(edge.device_embodied_total_kgco2e, edge.device_nonuse_share, s.horizon_years, edge.lifetime_years),
        edge_operational_kgco2e(1, s.device_online_fraction,
                                edge.train_power_w * edge_wall_factor(s.edge_charger_efficiency, s.battery_throughput_share,
                                                                      s.battery_round_trip_efficiency),
                                coalesce(edge.class_hours_per_day, s.edge_hours_per_day), s.horizon_years, s.edge_grid_gco2e_per_kwh),
        'report total x non-use share x min(T / lifetime, 1)'
    from s
    -- a class without a manufacturer footprint has no lifecycle row
    inner join core.scenario_devices as edge using (scenario_id)
    where edge.device_embodied_total_kgco2e is not null
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
