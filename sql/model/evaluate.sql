-- The reduction factor, evaluated set-wise over any number of parameter sets.
-- Input: the view `model_inputs`, one row per (scenario_id, variant_id) with one column per
-- model parameter (the columns of core.scenarios). The deterministic marts pass core.scenarios
-- (variant 'base'); sensitivity, break-even and Monte Carlo pass substituted or drawn rows.
-- Variable: getvariable('model_all_bases') (false: only each scenario's headline basis, as Monte
-- Carlo needs) and getvariable('model_patterns') (the patterns to evaluate: none, radio_window,
-- idealized, parameter_server, ring_allreduce, pipeline); both set by pipelines.model.model_view.
-- Output grain: scenario x variant x edge device class x equivalence basis x communication pattern.
--
-- Devices per cloud GPU on basis X: N = ceil((X_gpu x h_gpu) / (X_dev x h_dev x online / slowdown)),
-- with online = 1 and slowdown = 1 except on the availability and binding bases:
--   peak_flops        the scenario's FLOPS figures (a stated count, scaled as stated x h_stated / h_dev,
--                     replaces the formula on this basis);
--   peak_fp16         FP16/BF16 peak (tensor cores on the GPU);
--   memory_bandwidth  memory bandwidth;
--   roofline          min(F, I x B) at the scenario's arithmetic intensity I;
--   memory_capacity   devices holding the model's training state / GPUs holding it;
--   availability      peak FLOPS with the online fraction and straggler slowdown;
--   binding           max(roofline with availability, memory_capacity).
-- The headline basis is peak_flops when the scenario states a count, else binding. Every count
-- is then multiplied by the device multiplier.
-- Cloud total = GPU embodied + P x u x h x 365 x T x PUE x (1 + cluster comm share) x CI.
-- Edge added  = N x online x P x h x 365 x T x CI + N x allocated embodied + communication.
-- Communication: 'none'; 'radio_window' (the paper's radio busy for the training window);
--   byte patterns move comm_bytes(...) for the tokens the GPU would train on over the horizon:
--   tokens = min(F_gpu, I B_gpu) x 3600 x h_gpu x 365 x T / (6 x params), each device taking
--   batches of batch_size x sequence_length tokens.
-- R = cloud total / edge added.
with inputs as (
    select * from model_inputs
),

classes as (
    select
        inputs.*,
        'laptop' as device_class,
        laptop_tflops as device_tflops,
        laptop_fp16_tflops as device_fp16_tflops,
        laptop_mem_bandwidth_gb_per_s as device_bandwidth_gb_per_s,
        laptop_memory_gb as device_memory_gb,
        laptop_train_power_w as train_power_w,
        laptop_devices_per_gpu as stated_devices,
        laptop_embodied_kgco2e * laptop_nonuse_share as device_nonuse_kgco2e,
        device_embodied_kgco2e(laptop_embodied_kgco2e, laptop_nonuse_share, horizon_years, laptop_lifetime_years)
            as device_horizon_embodied_kgco2e,
        laptop_battery_wh as battery_wh,
        laptop_battery_rated_cycles as battery_rated_cycles,
        laptop_battery_embodied_share as battery_embodied_share,
        laptop_owner_hours_per_day as owner_hours_per_day
    from inputs
    union all
    select
        inputs.*,
        'phone',
        phone_tflops,
        phone_fp16_tflops,
        phone_mem_bandwidth_gb_per_s,
        phone_memory_gb,
        phone_train_power_w,
        phone_devices_per_gpu,
        phone_embodied_kgco2e * phone_nonuse_share,
        device_embodied_kgco2e(phone_embodied_kgco2e, phone_nonuse_share, horizon_years, phone_lifetime_years),
        phone_battery_wh,
        phone_battery_rated_cycles,
        phone_battery_embodied_share,
        phone_owner_hours_per_day
    from inputs
),

capacities as (
    select
        classes.*,
        attainable_tflops(cloud_gpu_tflops, arithmetic_intensity_flop_per_byte, cloud_gpu_mem_bandwidth_gb_per_s) as gpu_attainable_tflops,
        attainable_tflops(device_tflops, arithmetic_intensity_flop_per_byte, device_bandwidth_gb_per_s) as device_attainable_tflops,
        memory_floor_devices(fleet_model_params, training_bytes_per_param, device_memory_gb, edge_usable_memory_fraction)
            / memory_floor_devices(fleet_model_params, training_bytes_per_param, cloud_gpu_memory_gb, cloud_usable_memory_fraction)
            as devices_memory_exact,
        whole_devices(stated_devices * devices_stated_hours_per_day / edge_hours_per_day) as devices_stated
    from classes
),

bases as (
    select
        capacities.*,
        basis.name as basis,
        case when devices_stated is not null then 'peak_flops' else 'binding' end = basis.name as is_headline,
        case basis.name
            when 'peak_flops' then cloud_gpu_tflops
            when 'peak_fp16' then cloud_gpu_fp16_tflops
            when 'memory_bandwidth' then cloud_gpu_mem_bandwidth_gb_per_s
            when 'memory_capacity' then cloud_gpu_memory_gb
            when 'availability' then cloud_gpu_tflops
            else gpu_attainable_tflops
        end as cloud_gpu_capacity,
        case basis.name
            when 'peak_flops' then device_tflops
            when 'peak_fp16' then device_fp16_tflops
            when 'memory_bandwidth' then device_bandwidth_gb_per_s
            when 'memory_capacity' then device_memory_gb
            when 'availability' then device_tflops
            else device_attainable_tflops
        end as device_capacity,
        case basis.name when 'memory_bandwidth' then 'GB/s' when 'memory_capacity' then 'GB' else 'TFLOPS' end as capacity_unit,
        case when basis.name in ('availability', 'binding') then device_online_fraction else 1.0 end as online_fraction,
        case when basis.name in ('availability', 'binding') then straggler_slowdown else 1.0 end as slowdown
    from capacities
    -- every basis, or only the two a headline can use (peak_flops when a count is stated, else binding)
    cross join (
        select unnest(case when getvariable('model_all_bases') then
            ['peak_flops', 'peak_fp16', 'memory_bandwidth', 'roofline', 'memory_capacity', 'availability', 'binding']
            else ['peak_flops', 'binding'] end) as name
    ) as basis
),

counted as (
    select
        bases.*,
        case
            when basis = 'memory_capacity' then devices_memory_exact
            when basis = 'binding' then greatest(
                devices_for_throughput(cloud_gpu_capacity, cloud_hours_per_day, device_capacity, edge_hours_per_day, online_fraction, slowdown),
                whole_devices(devices_memory_exact))
            else devices_for_throughput(cloud_gpu_capacity, cloud_hours_per_day, device_capacity, edge_hours_per_day, online_fraction, slowdown)
        end as devices_exact
    from bases
    where getvariable('model_all_bases') or is_headline
),

fleet as (
    select
        counted.*,
        whole_devices(devices_exact) as devices_formula,
        case
            when basis = 'peak_flops' and devices_stated is not null then 'stated'
            when basis = 'binding' and whole_devices(devices_memory_exact) > whole_devices(devices_for_throughput(
                cloud_gpu_capacity, cloud_hours_per_day, device_capacity, edge_hours_per_day, online_fraction, slowdown))
                then 'memory_capacity'
            else 'formula'
        end as devices_from,
        (case when basis = 'peak_flops' and devices_stated is not null then devices_stated else whole_devices(devices_exact) end)
            * device_multiplier as devices,
        cloud_gpu_embodied_kgco2e
            + cloud_operational_kgco2e(cloud_gpu_power_w, cloud_utilisation, cloud_hours_per_day, horizon_years, cloud_pue,
                                       cloud_comm_energy_share, cloud_grid_gco2e_per_kwh) as cloud_total_kgco2e,
        -- tokens the GPU would train on over the horizon: its work / (6 x params FLOPs per token)
        gpu_attainable_tflops * 1e12 * 3600 * cloud_hours_per_day * 365 * horizon_years
            / (6 * fleet_model_params) as tokens,
        -- the training window of one device over the horizon, s
        edge_hours_per_day * online_fraction * 3600 * 365 * horizon_years as window_s
    from counted
),

carbon as (
    select
        fleet.*,
        edge_operational_kgco2e(devices, online_fraction, train_power_w, edge_hours_per_day, horizon_years,
                                edge_grid_gco2e_per_kwh) as edge_operational_kgco2e,
        devices * embodied_allocated_kgco2e(
            edge_embodied_policy, device_nonuse_kgco2e, device_horizon_embodied_kgco2e, battery_embodied_share,
            battery_cycles(battery_throughput_share, train_power_w, edge_hours_per_day, online_fraction, horizon_years, battery_wh),
            battery_rated_cycles, edge_hours_per_day * online_fraction, owner_hours_per_day) as edge_embodied_kgco2e
    from fleet
),

patterns as (
    select
        carbon.*,
        pattern.name as pattern,
        case pattern.name
            when 'none' then 0.0
            when 'radio_window' then devices * online_fraction * edge_bandwidth_mb_per_s * 1e6 * window_s * link_utilisation
            else comm_bytes(pattern.name, devices * online_fraction, fleet_model_params, bytes_per_param, tokens,
                            batch_size * sequence_length, local_steps_per_sync, fleet_model_hidden_size, activation_bytes,
                            comm_compression)
        end as comm_bytes
    from carbon
    cross join (select unnest(getvariable('model_patterns')) as name) as pattern
),

energy as (
    select
        patterns.*,
        case pattern
            when 'none' then 0.0
            when 'radio_window' then radio_window_kwh(devices * online_fraction, wifi_radio_power_w, edge_bandwidth_mb_per_s, window_s,
                                                      link_utilisation, network_kwh_per_gb)
            else comm_kwh(comm_bytes, edge_bandwidth_mb_per_s, wifi_radio_power_w, network_kwh_per_gb)
        end as comm_kwh,
        -- radio time one device needs / its training window
        case pattern
            when 'none' then 0.0
            when 'radio_window' then link_utilisation
            else comm_bytes / (devices * online_fraction) / (edge_bandwidth_mb_per_s * 1e6) / window_s
        end as link_time_share,
        -- data-parallel patterns hold the whole training state on every device; a pipeline 1/N of it
        fleet_model_params * training_bytes_per_param
            / case when pattern = 'pipeline' then devices * online_fraction else 1 end
            <= device_memory_gb * 1e9 * edge_usable_memory_fraction as memory_feasible
    from patterns
)

select
    scenario_id,
    variant_id,
    device_class,
    basis,
    is_headline,
    pattern,
    cloud_gpu_capacity,
    device_capacity,
    capacity_unit,
    online_fraction,
    devices_exact,
    devices_formula,
    devices_from,
    devices,
    cloud_total_kgco2e,
    edge_operational_kgco2e,
    edge_embodied_kgco2e,
    comm_bytes / 1e9 as comm_gb,
    comm_kwh,
    comm_kwh * edge_grid_gco2e_per_kwh / 1000 as comm_kgco2e,
    link_time_share,
    memory_feasible,
    edge_operational_kgco2e + edge_embodied_kgco2e + comm_kwh * edge_grid_gco2e_per_kwh / 1000 as edge_added_kgco2e,
    cloud_total_kgco2e / (edge_operational_kgco2e + edge_embodied_kgco2e + comm_kwh * edge_grid_gco2e_per_kwh / 1000)
        as reduction_factor
from energy
