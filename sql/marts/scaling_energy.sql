-- asset: group=marts
-- marts.scaling_energy (paper Fig. 3). Grain: scenario x device class x model size.
-- Compute: the measured Table 1 energy of OPT-125M on each device class (the cloud GPU's, and
--   each edge class's in core.scenario_devices), scaled linearly in
--   parameter count (training FLOPs ~ 6 x params x tokens at a fixed token budget, so energy
--   per token scales with params on the same device at the same efficiency).
-- Communication (edge only, the paper's idealized model of footnote 1): every parameter is
--   sent once per step: bytes = steps x params x bytes_per_param; radio energy = radio power x
--   bytes / bandwidth; network energy = GB x network kWh/GB (by the network energy rule of the
--   scenario's accounting frame, core.frames). The cloud GPU has none.
with s as (
    select
        scenarios.*,
        network_kwh_per_gb_for_rule(frames.network_energy_rule, network_kwh_per_gb, router_kwh_per_gb, network_marginal_w_per_mbps,
                                    router_marginal_w_per_mbps) as frame_network_kwh_per_gb
    from core.scenarios as scenarios
    inner join core.frames as frames using (accounting_frame)
),

base as (
    select params as base_params from staging.model_configs where model_id = 'OPT-125M'
),

-- the cloud GPU, and every edge device class of the scenario (core.scenario_devices) that has
-- a measured Table 1 energy (<class>_table1_energy_j)
classes as (
    select scenario_id, 'cloud_gpu' as device_class, cloud_table1_energy_j as table1_energy_j, false as communicates
    from s
    union all
    select scenario_id, device_class, table1_energy_j, true as communicates
    from core.scenario_devices
    where table1_energy_j is not null
),

sized as (
    select
        classes.scenario_id,
        classes.device_class,
        models.model_id,
        models.params,
        energy_scaled_kwh(classes.table1_energy_j, base.base_params, models.params) as compute_kwh,
        case when classes.communicates
            then s.workload_steps * models.params * s.bytes_per_param / 1e9
            else 0 end as comm_gb
    from classes
    inner join s using (scenario_id)
    cross join staging.model_configs as models
    cross join base
),

final as (
    select
        sized.scenario_id,
        sized.device_class,
        sized.model_id,
        sized.params,
        sized.compute_kwh,
        sized.comm_gb,
        transfer_seconds(sized.comm_gb * 1e9, s.edge_bandwidth_mb_per_s) as comm_time_s,
        comm_kwh(sized.comm_gb * 1e9, s.edge_bandwidth_mb_per_s, s.wifi_radio_power_w, s.frame_network_kwh_per_gb) as comm_kwh,
        sized.compute_kwh
            + comm_kwh(sized.comm_gb * 1e9, s.edge_bandwidth_mb_per_s, s.wifi_radio_power_w, s.frame_network_kwh_per_gb) as total_kwh
    from sized
    inner join s using (scenario_id)
)

select * from final order by scenario_id, device_class, params
