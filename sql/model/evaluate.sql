-- The reduction factor, evaluated set-wise over any number of parameter sets.
-- Input: the view `model_inputs`, one row per (scenario_id, variant_id) with one column per
-- model parameter (the columns of core.scenarios). The deterministic marts pass core.scenarios
-- (variant 'base'); sensitivity, break-even and Monte Carlo pass substituted or drawn rows.
-- Variables, set by pipelines.model.model_view: getvariable('model_bases') (the bases to
-- evaluate), getvariable('model_basis_filter') ('all', 'headline': only each scenario's
-- headline basis, 'headline_and_measured': the headline and measured_throughput) and
-- getvariable('model_patterns') (none, radio_window, idealized, parameter_server,
-- ring_allreduce, pipeline).
-- Edge devices, by the view `model_devices`: one row per parameter set and edge device class,
-- each class's `<class>_<field>` parameters under common names (pipelines.model.formula
-- device_rows), so a class is added by parameter rows, never here. A class with a fleet_share
-- is one part of a mixed fleet: it takes that share of the cloud job, and a row with
-- device_class 'fleet' sums the classes (shares sum to 1: sql/checks/frame_consistency.sql).
-- Workload (workload_kind): 0 the paper's cloud_gpu_count accelerators for horizon_years; 1
-- workload_gpu_hours accelerator-hours; 2 fleet_model_params x workload_tokens at 6 N D FLOPs
-- and workload_mfu of the accelerator's FP16/BF16 peak. Either sets the job's duration on
-- cloud_gpu_count accelerators (job_years), over which both sides are counted.
-- Output grain: scenario x variant x edge device class (and 'fleet' for a mixed fleet) x
-- equivalence basis x communication pattern.
--
-- Cloud accelerator: the main GPU's rows, or the alternative variant's (cloud_gpu_variant = 1:
-- e.g. PCIe instead of SXM), so power, FLOPS, bandwidth and measured speed move together
-- (memory and embodied carbon stay the main GPU's: both H100 variants hold 80 GB, and no
-- per-variant footprint is at hand).
-- Rated bases deliver cloud_utilisation x the rated capacity; the node draws cloud_utilisation
-- x (GPU power + its share of host power): utilisation moves power and throughput together.
--
-- Devices per cloud GPU on basis X: N = ceil((X_gpu x h_gpu) / (X_dev x h_dev x online / slowdown)),
-- with online = 1 and slowdown = 1 except on the availability, binding and measured bases:
--   peak_flops          the scenario's FLOPS figures (a stated count, scaled as stated x
--                       (h_gpu / h_stated_gpu) x (h_stated / h_dev), replaces the formula here);
--   peak_fp16           FP16/BF16 peak (tensor cores on the GPU);
--   memory_bandwidth    memory bandwidth;
--   roofline            min(F, I x B) at the scenario's arithmetic intensity I;
--   availability        peak FLOPS with the online fraction and straggler slowdown;
--   binding             max(roofline with availability, the memory floor);
--   measured_throughput jobs per hour of the same measured job (paper Table 1: device time,
--                       reference GPU time / the cloud GPU's measured speed-up over it), with
--                       availability, at least the memory floor.
-- The memory floor (devices holding the model's training state / GPUs holding it) is a
-- capacity floor, not an equivalence: every row reports it (devices_memory_floor).
-- The headline basis is peak_flops when the scenario states a count, else headline_basis
-- (code: 0 binding, 1 measured_throughput). Every count is then multiplied by the device multiplier.
-- Cloud total = charged embodied + P x u x h x 365 x T x PUE x (1 + cluster comm share) x CI.
-- Edge added  = N x online x P x wall factor x h x 365 x T x CI + N x allocated embodied + communication.
-- Communication: 'none'; 'radio_window' (the paper's radio busy for the training window, the
--   network charged on the idealized pattern's bytes); byte patterns move comm_bytes(...) for
--   the tokens the GPU would train on over the horizon: tokens = u x min(F_gpu, I B_gpu) x 3600 x
--   h_gpu x 365 x T / (6 x params), each device taking batches of batch_size x sequence_length tokens.
-- Network energy per GB follows the scenario's accounting frame (network_kwh_per_gb_for_frame).
-- R = cloud total / edge added.
with gpus as (
    select
        model_inputs.*,
        case when cast(cloud_gpu_variant as integer) = 1 then cloud_alt_gpu_power_w else cloud_gpu_power_w end as gpu_power_w,
        case when cast(cloud_gpu_variant as integer) = 1 then cloud_alt_gpu_tflops else cloud_gpu_tflops end as gpu_tflops,
        case when cast(cloud_gpu_variant as integer) = 1 then cloud_alt_gpu_fp16_tflops else cloud_gpu_fp16_tflops end as gpu_fp16_tflops,
        case when cast(cloud_gpu_variant as integer) = 1 then cloud_alt_gpu_mem_bandwidth_gb_per_s else cloud_gpu_mem_bandwidth_gb_per_s end
            as gpu_mem_bandwidth_gb_per_s,
        case when cast(cloud_gpu_variant as integer) = 1 then cloud_alt_speedup_vs_ref else cloud_speedup_vs_ref end as gpu_speedup_vs_ref,
        network_kwh_per_gb_for_frame(accounting_frame, network_kwh_per_gb, router_kwh_per_gb, network_marginal_w_per_mbps,
                                     router_marginal_w_per_mbps) as frame_network_kwh_per_gb,
        edge_wall_factor(edge_charger_efficiency, battery_throughput_share, battery_round_trip_efficiency) as wall_factor
    from model_inputs
),

inputs as (
    select
        gpus.*,
        case cast(workload_kind as integer)
            when 1 then job_years(workload_gpu_hours, cloud_gpu_count, cloud_hours_per_day)
            when 2 then job_years(accelerator_hours(training_flops(fleet_model_params, workload_tokens), gpu_fp16_tflops, workload_mfu),
                                  cloud_gpu_count, cloud_hours_per_day)
            else horizon_years
        end as job_years
    from gpus
),

-- one row per parameter set and edge device class (model_devices), the class's hours a day and
-- its share of a mixed fleet (1: the class alone against the whole cloud job)
classes as (
    select
        inputs.*,
        model_devices.* exclude (scenario_id, variant_id),
        coalesce(model_devices.class_hours_per_day, inputs.edge_hours_per_day) as hours_per_day,
        coalesce(model_devices.fleet_share, 1.0) as share,
        model_devices.device_embodied_total_kgco2e * model_devices.device_nonuse_share as device_nonuse_kgco2e
    from inputs
    inner join model_devices
        on inputs.scenario_id = model_devices.scenario_id and inputs.variant_id = model_devices.variant_id
    where model_devices.train_power_w is not null
),

capacities as (
    select
        classes.*,
        attainable_tflops(gpu_tflops, arithmetic_intensity_flop_per_byte, gpu_mem_bandwidth_gb_per_s) as gpu_attainable_tflops,
        attainable_tflops(device_tflops, arithmetic_intensity_flop_per_byte, device_bandwidth_gb_per_s) as device_attainable_tflops,
        memory_floor_devices(fleet_model_params, training_bytes_per_param, device_memory_gb, edge_usable_memory_fraction)
            / memory_floor_devices(fleet_model_params, training_bytes_per_param, cloud_gpu_memory_gb, cloud_usable_memory_fraction)
            as devices_memory_exact,
        whole_devices(stated_devices * (cloud_hours_per_day / devices_stated_cloud_hours_per_day)
                      * (devices_stated_hours_per_day / hours_per_day)) as devices_stated,
        device_embodied_kgco2e(device_embodied_total_kgco2e, device_nonuse_share, job_years, lifetime_years)
            as device_horizon_embodied_kgco2e,
        case
            when stated_devices is not null then 'peak_flops'
            when cast(headline_basis as integer) = 1 then 'measured_throughput'
            else 'binding'
        end as headline_name
    from classes
),

bases as (
    select
        capacities.*,
        basis.name as basis,
        basis.name = headline_name as is_headline,
        case basis.name
            when 'peak_flops' then gpu_tflops
            when 'peak_fp16' then gpu_fp16_tflops
            when 'memory_bandwidth' then gpu_mem_bandwidth_gb_per_s
            when 'availability' then gpu_tflops
            when 'measured_throughput' then 3600 * gpu_speedup_vs_ref / cloud_ref_job_time_s
            else gpu_attainable_tflops
        end * case when basis.name = 'measured_throughput' then 1 else cloud_utilisation end as cloud_gpu_capacity,
        case basis.name
            when 'peak_flops' then device_tflops
            when 'peak_fp16' then device_fp16_tflops
            when 'memory_bandwidth' then device_bandwidth_gb_per_s
            when 'availability' then device_tflops
            when 'measured_throughput' then 3600 / job_time_s
            else device_attainable_tflops
        end as device_capacity,
        case basis.name when 'memory_bandwidth' then 'GB/s' when 'measured_throughput' then 'jobs/h' else 'TFLOPS' end as capacity_unit,
        case when basis.name in ('availability', 'binding', 'measured_throughput') then device_online_fraction else 1.0 end as online_fraction,
        case when basis.name in ('availability', 'binding', 'measured_throughput') then straggler_slowdown else 1.0 end as slowdown
    from capacities
    -- every basis asked for, or only the headline (and the measured basis beside it)
    inner join (select unnest(getvariable('model_bases')) as name) as basis
        on getvariable('model_basis_filter') = 'all'
        or basis.name = headline_name
        or (getvariable('model_basis_filter') = 'headline_and_measured' and basis.name = 'measured_throughput')
),

counted as (
    select
        bases.*,
        whole_devices(devices_memory_exact) as devices_memory_floor,
        -- devices that together hold the fleet model's training state: the fewest pipeline stages
        memory_floor_devices(fleet_model_params, training_bytes_per_param, device_memory_gb, edge_usable_memory_fraction)
            as devices_memory_stages,
        devices_for_throughput(cloud_gpu_capacity, cloud_hours_per_day, device_capacity, hours_per_day, online_fraction, slowdown)
            as devices_throughput_exact,
        case
            -- a class without a memory figure has no floor, so no binding or measured count
            when basis in ('binding', 'measured_throughput') and devices_memory_exact is null then null
            when basis in ('binding', 'measured_throughput') then greatest(
                devices_for_throughput(cloud_gpu_capacity, cloud_hours_per_day, device_capacity, hours_per_day, online_fraction, slowdown),
                whole_devices(devices_memory_exact))
            else devices_for_throughput(cloud_gpu_capacity, cloud_hours_per_day, device_capacity, hours_per_day, online_fraction, slowdown)
        end as devices_exact
    from bases
),

fleet as (
    select
        counted.*,
        whole_devices(devices_exact) as devices_formula,
        case
            when basis = 'peak_flops' and devices_stated is not null then 'stated'
            when basis in ('binding', 'measured_throughput') and devices_memory_floor > whole_devices(devices_throughput_exact)
                then 'memory_capacity'
            else 'formula'
        end as devices_from,
        -- the class's share of the job on every cloud accelerator
        whole_devices(share * case when basis = 'peak_flops' and devices_stated is not null then devices_stated else devices_exact end)
            * device_multiplier * cloud_gpu_count as devices,
        share * cloud_gpu_count * (
            cloud_embodied_charged_kgco2e(accounting_frame, cloud_gpu_embodied_kgco2e, job_years, cloud_embodied_life_years)
            + cloud_operational_kgco2e(gpu_power_w + cloud_node_overhead_w, cloud_utilisation, cloud_hours_per_day, job_years,
                                       cloud_pue, cloud_comm_energy_share, cloud_grid_gco2e_per_kwh)) as cloud_total_kgco2e,
        -- tokens of the class's share of the job: the workload's, or what the accelerators would
        -- train on over the job: their delivered work / (6 x params FLOPs per token)
        share * case when cast(workload_kind as integer) = 2 then workload_tokens
            else cloud_gpu_count * cloud_utilisation * gpu_attainable_tflops * 1e12 * 3600 * cloud_hours_per_day * 365 * job_years
                / training_flops(fleet_model_params, 1) end as tokens,
        -- one device's scheduled training window over the job, s (the online share is counted
        -- once, in the devices online)
        hours_per_day * 3600 * 365 * job_years as window_s
    from counted
),

carbon as (
    select
        fleet.*,
        edge_operational_kgco2e(devices, online_fraction, train_power_w * wall_factor, hours_per_day, job_years,
                                edge_grid_gco2e_per_kwh) as edge_operational_kgco2e,
        devices * embodied_allocated_kgco2e(
            edge_embodied_policy, device_nonuse_kgco2e, device_horizon_embodied_kgco2e, battery_embodied_share,
            battery_cycles(battery_throughput_share, train_power_w, hours_per_day, online_fraction, job_years, battery_wh),
            battery_rated_cycles, hours_per_day * online_fraction, owner_hours_per_day, owner_cycles_per_year,
            device_replacement_share, job_years, lifetime_years) as edge_embodied_kgco2e
    from fleet
),

patterns as (
    select
        carbon.*,
        pattern.name as pattern,
        devices * online_fraction as devices_online,
        case when pattern.name = 'pipeline' then comm_stages(devices * online_fraction, fleet_model_params, bytes_per_param,
                                                            batch_size * sequence_length, local_steps_per_sync, fleet_model_hidden_size,
                                                            activation_bytes, fleet_model_layers, devices_memory_stages) end as pipeline_stages
    from carbon
    cross join (select unnest(getvariable('model_patterns')) as name) as pattern
),

staged as (
    select
        patterns.*,
        case pattern
            when 'none' then 0.0
            else comm_bytes(pattern, devices_online, fleet_model_params, bytes_per_param, tokens,
                            batch_size * sequence_length, local_steps_per_sync, fleet_model_hidden_size, activation_bytes,
                            comm_compression, pipeline_stages)
        end as comm_bytes
    from patterns
),

energy as (
    select
        staged.*,
        case pattern
            when 'none' then 0.0
            when 'radio_window' then radio_window_kwh(devices_online, wifi_radio_power_w, window_s, link_utilisation) * wall_factor
                + comm_bytes / 1e9 * frame_network_kwh_per_gb
            else comm_kwh(comm_bytes, edge_bandwidth_mb_per_s, wifi_radio_power_w, frame_network_kwh_per_gb, wall_factor)
        end as comm_kwh,
        -- radio time one online device needs / its training window
        case pattern
            when 'none' then 0.0
            else comm_bytes / devices_online / (edge_bandwidth_mb_per_s * 1e6) / window_s
        end as link_time_share,
        -- data-parallel patterns hold the whole training state on every device; a pipeline 1/S of it
        fleet_model_params * training_bytes_per_param
            / case when pattern = 'pipeline' then pipeline_stages else 1 end
            <= device_memory_gb * 1e9 * edge_usable_memory_fraction as memory_feasible,
        pipeline_stages
    from staged
)

,

rows as (
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
        devices_memory_floor,
        devices,
        cloud_total_kgco2e,
        edge_operational_kgco2e,
        edge_embodied_kgco2e,
        comm_bytes / 1e9 as comm_gb,
        comm_kwh,
        comm_kwh * edge_grid_gco2e_per_kwh / 1000 as comm_kgco2e,
        link_time_share,
        memory_feasible,
        pipeline_stages,
        edge_operational_kgco2e + edge_embodied_kgco2e + comm_kwh * edge_grid_gco2e_per_kwh / 1000 as edge_added_kgco2e,
        fleet_share,
        hours_per_day,
        job_years,
        cloud_gpu_count,
        wall_factor
    from energy
)

-- a basis the class lacks the figures for (e.g. no measured job time) is left out
select
    *,
    cloud_total_kgco2e / edge_added_kgco2e as reduction_factor
from rows
where devices is not null
