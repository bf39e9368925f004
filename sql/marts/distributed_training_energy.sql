-- asset: group=marts
-- marts.distributed_training_energy (paper Table 2, our estimate: the paper's cells are not
-- published). Grain: scenario x edge device class (core.scenario_devices) x communication
-- pattern, for OPT-1.3B.
-- Compute: Table 1 energy scaled to 1.3B parameters (as in marts.scaling_energy), shared by
--   a fleet of `table2_devices` devices (total compute energy does not change with N).
-- Patterns: every row of core.patterns every scenario is evaluated on that moves bytes and charges its radio on them (the
-- paper's radio window needs a training window, which Table 2 does not have), its bytes by its
-- coefficients (comm_bytes in sql/model/macros.sql), for the workload's tokens (steps x batch x
-- sequence length, the same work whatever the fleet size; a data-parallel device takes a batch
-- per step, so N devices need 1/N of the steps). Shipped: idealized (paper, footnote 1): each
-- device sends the parameters once per sync: N x p x b; parameter_server: 2 N p b per sync;
-- ring_allreduce: 2 (N - 1) p b per sync; pipeline (DT-FM style): S stages (comm_stages: the
-- fewest that hold the training state, or one per device up to one per layer, whichever moves
-- fewer bytes); each step's activations cross S - 1 boundaries forward and their gradients
-- backward: 2 x (S - 1) x batch x sequence x hidden x activation bytes, plus a ring all-reduce
-- between the N / S pipeline replicas; all divided by the compression factor.
-- Communication energy = radio power x the pattern's radio_per_byte x bytes / bandwidth + network
-- kWh/GB x GB, the kWh/GB by the network energy rule of the scenario's accounting frame (core.frames;
-- network_kwh_per_gb_for_rule). The radio power is the sender's, plus, where the frame charges it
-- (core.frames charges_receiving_radio), the receive power of each device at a byte's other home
-- ends (receiving_radios), busy for the same time.
-- The ratio compares the cloud GPU's scaled Table 1 energy with the edge total.
with s as (
    select scenarios.*, frames.network_energy_rule, frames.charges_receiving_radio
    from core.scenarios as scenarios
    inner join core.frames as frames using (accounting_frame)
),

-- OPT-1.3B, and the parameter count of OPT-125M (Table 1's model) that its energy is scaled from
model as (
    select model.params, model.hidden_size, model.n_layers, base.params as base_params
    from staging.model_configs as model
    inner join staging.model_configs as base on base.model_id = 'OPT-125M'
    where model.model_id = 'OPT-1.3B'
),

-- every edge device class of the scenario (core.scenario_devices) with a measured Table 1 energy
edge as (
    select scenario_id, device_class, table1_energy_j, device_memory_gb as memory_gb
    from core.scenario_devices
    where table1_energy_j is not null
),

patterns as (
    select
        edge.scenario_id,
        edge.device_class,
        pattern.pattern,
        s.table2_devices as devices,
        energy_scaled_kwh(edge.table1_energy_j, model.base_params, model.params) as compute_kwh,
        energy_scaled_kwh(s.cloud_table1_energy_j, model.base_params, model.params) as cloud_kwh,
        comm_bytes(pattern.sync_n, pattern.sync_n_minus_1, pattern.activations, pattern.stage_allreduce, s.table2_devices, model.params,
                   s.bytes_per_param, s.workload_steps * s.batch_size * s.sequence_length, s.batch_size * s.sequence_length,
                   s.local_steps_per_sync, model.hidden_size, s.activation_bytes, s.comm_compression,
                   case when pattern.splits_model then
                       comm_stages(s.table2_devices, model.params, s.bytes_per_param, s.batch_size * s.sequence_length, s.local_steps_per_sync,
                                   model.hidden_size, s.activation_bytes, model.n_layers,
                                   memory_floor_devices(model.params, s.training_bytes_per_param, edge.memory_gb, s.edge_usable_memory_fraction),
                                   pattern.activations, pattern.stage_allreduce)
                   end)
            / 1e9 as comm_gb,
        s.edge_bandwidth_mb_per_s,
        s.wifi_radio_power_w * pattern.radio_per_byte
            + weighted(receiving_radios(s.charges_receiving_radio, pattern.home_ends), weighted(pattern.radio_per_byte, s.wifi_receive_power_w))
            as wifi_radio_power_w,
        network_kwh_per_gb_for_rule(s.network_energy_rule, s.network_kwh_per_gb, s.router_kwh_per_gb, s.network_marginal_w_per_mbps,
                                    s.router_marginal_w_per_mbps) as network_kwh_per_gb
    from edge
    inner join s using (scenario_id)
    cross join model
    inner join core.patterns as pattern on pattern.moves_bytes and pattern.radio_per_window = 0 and pattern.every_scenario
),

final as (
    select
        scenario_id,
        device_class,
        'OPT-1.3B' as model_id,
        pattern,
        devices,
        compute_kwh,
        comm_gb,
        comm_kwh(comm_gb * 1e9, edge_bandwidth_mb_per_s, wifi_radio_power_w, network_kwh_per_gb) as comm_kwh,
        compute_kwh + comm_kwh(comm_gb * 1e9, edge_bandwidth_mb_per_s, wifi_radio_power_w, network_kwh_per_gb) as total_kwh,
        cloud_kwh,
        cloud_kwh / (compute_kwh + comm_kwh(comm_gb * 1e9, edge_bandwidth_mb_per_s, wifi_radio_power_w, network_kwh_per_gb))
            as energy_ratio_vs_cloud_gpu
    from patterns
)

select * from final order by scenario_id, device_class, pattern
