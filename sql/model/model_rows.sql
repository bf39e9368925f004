-- The model's one formula, set-wise over any number of parameter sets: the table macros model_class_rows
-- (one row per parameter set x edge device class x basis x communication pattern x method row) and
-- model_rows (those rows, and one 'fleet' row per mixed fleet: the macro fleet_rows). Arguments, each the
-- name of a table or view (named so that no column of the model's shares a name with one):
--   set_table: the parameter sets, one row per (scenario_id, variant_id), a column per model parameter
--     (core.scenarios' columns: core.variant_inputs, or core.scenarios, each scenario's base set);
--   device_table: their edge devices, one row per set and edge device class, its `<class>_<field>` parameters
--     under common names, so a class is added by rows (the macro device_rows: core.variant_devices);
--   variant_table: one row per set, its family and the rows it is evaluated on (core.variants): bases (null:
--     every row of core.bases), basis_filter ('all'; 'headline': each scenario's headline basis;
--     'headline_and_measured'; 'measured': measured_throughput), patterns (null: every row of
--     core.patterns the scenario's frame admits), own_pattern (true: each set's own comm_pattern beside
--     them), designs (true: each set's edge training designs, where its frame resizes the fleet, beside
--     them), method_filter (the CTE `methods`) and method_rows.
-- The defaults are the warehouse's tables of every variant, so sql/core/model_evaluation.sql is `select * from
-- model_rows()`; the Monte Carlo and break-even (pipelines.model.formula) and marts.siting (sql/marts/siting.sql) pass
-- tables of their own. A class with a fleet_share takes that share of the cloud job; the 'fleet' row sums
-- the classes (shares sum to 1: sql/checks/fleet_shares.sql). The steps in words: docs/model.md.
create or replace temp macro model_class_rows(set_table := 'core.variant_inputs', device_table := 'core.variant_devices',
                                              variant_table := 'core.variants') as table
with gpus as (
    select
        model_inputs.*,
        variant.family,
        variant.bases as variant_bases,
        variant.basis_filter as variant_basis_filter,
        variant.patterns as variant_patterns,
        variant.own_pattern as variant_own_pattern,
        variant.designs as variant_designs,
        variant.method_filter as variant_method_filter,
        variant.method_rows as variant_method_rows,
        gpu_variant(cloud_gpu_variant, cloud_alt_gpu_power_w, cloud_gpu_power_w) as gpu_power_w,
        gpu_variant(cloud_gpu_variant, cloud_alt_gpu_tflops, cloud_gpu_tflops) as gpu_tflops,
        gpu_variant(cloud_gpu_variant, cloud_alt_gpu_fp16_tflops, cloud_gpu_fp16_tflops) as gpu_fp16_tflops,
        gpu_variant(cloud_gpu_variant, cloud_alt_gpu_mem_bandwidth_gb_per_s, cloud_gpu_mem_bandwidth_gb_per_s) as gpu_mem_bandwidth_gb_per_s,
        gpu_variant(cloud_gpu_variant, cloud_alt_speedup_vs_ref, cloud_speedup_vs_ref) as gpu_speedup_vs_ref,
        -- the main GPU's measured training rate, carried to the variant at the same share of its FP16/BF16 peak
        cloud_gpu_measured_tflops * gpu_variant(cloud_gpu_variant, cloud_alt_gpu_fp16_tflops / cloud_gpu_fp16_tflops, 1.0)
            as gpu_measured_tflops,
        edge_wall_factor(edge_charger_efficiency, battery_throughput_share, battery_round_trip_efficiency) as wall_factor
    -- the parameters a scenario may leave unset are columns whatever the scenarios set (macro optional_parameters)
    from (select * from query_table(set_table) union all by name select * from optional_parameters()) as model_inputs
    -- each set's variant row: its family and which bases, patterns and method rows to evaluate it on
    inner join query_table(variant_table) as variant using (scenario_id, variant_id)
),

inputs as (
    select
        gpus.*,
        frame.amortises_cloud_embodied,
        frame.resizes_fleet,
        frame.charges_receiving_radio,
        -- the embodied terms any allocation policy the scenario is evaluated under weighs (its own, and
        -- its frame's others: core.embodied_policies); a term no policy weighs is not computed
        greatest(own.battery_wear, coalesce(others.battery_wear, 0)) > 0 as weighs_battery_wear,
        greatest(own.use_hours, coalesce(others.use_hours, 0)) > 0 as weighs_use_hours,
        greatest(own.calendar_hours, coalesce(others.calendar_hours, 0)) > 0 as weighs_calendar_hours,
        workload.tokens as workload_tokens_weight,
        -- the job's length: the weights of the scenario's workload kind (core.workload_kinds)
        weighted(workload.horizon, horizon_years)
        + weighted(workload.gpu_hours, job_years(workload_gpu_hours, cloud_gpu_count, cloud_hours_per_day))
        + weighted(workload.tokens, job_years(accelerator_hours(training_flops(fleet_model_params, workload_tokens), gpu_fp16_tflops,
                                                                workload_mfu),
                                              cloud_gpu_count, cloud_hours_per_day)) as job_years
    from gpus
    inner join core.frames as frame on frame.accounting_frame = gpus.accounting_frame
    inner join core.workload_kinds as workload on workload.workload_kind = gpus.workload_kind
    inner join core.embodied_policies as own on own.policy = gpus.edge_embodied_policy
    left join (
        select rows.accounting_frame, max(weights.battery_wear) as battery_wear, max(weights.use_hours) as use_hours,
            max(weights.calendar_hours) as calendar_hours
        from core.frame_embodied_policies as rows
        inner join core.embodied_policies as weights on weights.policy = rows.policy
        where not coalesce(rows.is_frame_headline, true)
        group by rows.accounting_frame
    ) as others on others.accounting_frame = gpus.accounting_frame
),

-- one row per parameter set and edge device class (the table `device_table`), the class's hours a day, its
-- grid and its share of a mixed fleet (1: the class alone against the whole cloud job)
classes as (
    select
        -- the class's own grid intensity where it has one (<class>_grid_gco2e_per_kwh), else the scenario's edge grid
        inputs.* replace (coalesce(model_devices.class_grid_gco2e_per_kwh, inputs.edge_grid_gco2e_per_kwh) as edge_grid_gco2e_per_kwh),
        model_devices.* exclude (scenario_id, variant_id, class_grid_gco2e_per_kwh),
        coalesce(model_devices.class_hours_per_day, inputs.edge_hours_per_day) as hours_per_day,
        coalesce(model_devices.fleet_share, 1.0) as share,
        model_devices.device_embodied_total_kgco2e * model_devices.device_nonuse_share as device_nonuse_kgco2e,
        -- a replacement battery's embodied carbon: the class's battery capacity x battery_embodied_kgco2e_per_kwh
        battery_embodied_kgco2e(model_devices.battery_wh, inputs.battery_embodied_kgco2e_per_kwh) as battery_replacement_kgco2e
    from inputs
    inner join query_table(device_table) as model_devices
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
        -- one device's training electricity over the job, online its share of its window
        -- (marts.lifecycle_carbon; the fleet's rows count their basis's online share below)
        edge_operational_kgco2e(1, device_online_fraction, train_power_w * wall_factor, hours_per_day, job_years,
                                edge_grid_gco2e_per_kwh) as device_operational_kgco2e,
        -- one cloud accelerator's charged embodied and operational carbon over the job
        cloud_embodied_charged_kgco2e(amortises_cloud_embodied, cloud_gpu_embodied_kgco2e, job_years, cloud_embodied_life_years)
            as cloud_embodied_per_gpu_kgco2e,
        cloud_operational_kgco2e(gpu_power_w + cloud_node_overhead_w, cloud_utilisation, cloud_hours_per_day, job_years,
                                 cloud_pue, cloud_comm_energy_share, cloud_grid_gco2e_per_kwh) as cloud_operational_per_gpu_kgco2e,
        case when stated_devices is not null then (select basis from core.bases where takes_stated_count) else headline_basis end
            as headline_name,
        -- the work one accelerator delivers while it trains (TFLOPS), as the job sets it: a job of
        -- workload_tokens is 6 N D FLOPs over the accelerators' hours (at workload_mfu of their
        -- FP16/BF16 peak: job_years); any other job is the accelerator's utilisation x its FP32 roofline
        case when workload_tokens_weight > 0
            then training_flops(fleet_model_params, workload_tokens)
                 / (cloud_gpu_count * 3600 * cloud_hours_per_day * 365 * job_years) / 1e12
            else cloud_utilisation * attainable_tflops(gpu_tflops, arithmetic_intensity_flop_per_byte, gpu_mem_bandwidth_gb_per_s)
        end as gpu_work_tflops
    from classes
),

bases as (
    select
        -- the work one accelerator delivers: its measured training rate on a basis that weighs
        -- measured rates (cloud_gpu_measured_tflops), unless the job's tokens set it
        capacities.* replace (
            case when basis.measured_rate > 0 and workload_tokens_weight = 0
                then weighted(basis.measured_rate, gpu_measured_tflops)
                else gpu_work_tflops
            end as gpu_work_tflops),
        basis.basis,
        basis.basis = headline_name as is_headline,
        -- the capacities the basis compares: its weights of the capacity measures (core.bases); a
        -- rated measure is delivered at the GPU's utilisation, a measured job rate already is
        (weighted(basis.fp32_peak, gpu_tflops) + weighted(basis.fp16_peak, gpu_fp16_tflops)
         + weighted(basis.bandwidth, gpu_mem_bandwidth_gb_per_s) + weighted(basis.roofline, gpu_attainable_tflops)
         + weighted(basis.job_rate, 3600 * gpu_speedup_vs_ref / cloud_ref_job_time_s))
            * case when basis.measured then 1 else cloud_utilisation end
        -- a measured training rate already is what the GPU delivers; where the job's tokens set the
        -- GPU's work, the devices match that work at their measured rates
        + weighted(basis.measured_rate, case when workload_tokens_weight > 0 then gpu_work_tflops else gpu_measured_tflops end)
            as cloud_gpu_capacity,
        weighted(basis.fp32_peak, device_tflops) + weighted(basis.fp16_peak, device_fp16_tflops)
        + weighted(basis.bandwidth, device_bandwidth_gb_per_s) + weighted(basis.roofline, device_attainable_tflops)
        + weighted(basis.job_rate, 3600 / job_time_s)
        + weighted(basis.measured_rate, device_measured_share * device_tflops) as device_capacity,
        basis.capacity_unit,
        basis.memory_floor as floors_at_memory,
        basis.takes_stated_count,
        basis.device_peak_floor,
        case when basis.counts_availability then device_online_fraction else 1.0 end as online_fraction,
        case when basis.counts_availability then straggler_slowdown else 1.0 end as slowdown
    from capacities
    -- every basis asked for, only the headline (and the measured basis beside it), or the measured basis only
    inner join core.bases as basis
        on (capacities.variant_bases is null or list_contains(capacities.variant_bases, basis.basis))
        and case capacities.variant_basis_filter
            when 'all' then true
            when 'headline' then basis.basis = headline_name
            when 'headline_and_measured' then basis.basis = headline_name or basis.measured
            when 'measured' then basis.measured
        end
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
        -- devices cannot run above their peak: at least the devices that deliver the GPU's work
        -- (gpu_work_tflops) at the devices' peak FLOPS, on the measured basis and wherever the
        -- job's tokens set the work (a capacity comparison then does not count the job's work)
        case when device_peak_floor or workload_tokens_weight > 0 then
            devices_for_throughput(gpu_work_tflops, cloud_hours_per_day, device_tflops, hours_per_day, online_fraction, slowdown)
        end as devices_peak_exact,
        case
            -- a side without the basis's capacity figure (e.g. no measured rate) has no count on it
            when cloud_gpu_capacity is null or device_capacity is null then null
            -- a class without a memory figure has no floor, so no binding or measured count
            when floors_at_memory and devices_memory_exact is null then null
            when floors_at_memory and not (device_peak_floor or workload_tokens_weight > 0)
                then greatest(devices_throughput_exact, whole_devices(devices_memory_exact))
            when floors_at_memory then greatest(devices_throughput_exact, whole_devices(devices_memory_exact), devices_peak_exact)
            when device_peak_floor or workload_tokens_weight > 0 then greatest(devices_throughput_exact, devices_peak_exact)
            else devices_throughput_exact
        end as devices_exact
    from bases
),

fleet as (
    select
        counted.*,
        whole_devices(devices_exact) as devices_formula,
        case
            when takes_stated_count and devices_stated is not null then 'stated'
            when floors_at_memory and devices_memory_floor > whole_devices(devices_throughput_exact)
                and devices_memory_floor >= whole_devices(coalesce(devices_peak_exact, 0)) then 'memory_capacity'
            when devices_peak_exact is not null and whole_devices(devices_peak_exact) > whole_devices(devices_throughput_exact)
                then 'device_peak'
            else 'formula'
        end as devices_from,
        -- the class's share of the job on every cloud accelerator
        whole_devices(share * case when takes_stated_count and devices_stated is not null then devices_stated else devices_exact end)
            * device_multiplier * cloud_gpu_count as devices,
        share * cloud_gpu_count * (cloud_embodied_per_gpu_kgco2e + cloud_operational_per_gpu_kgco2e) as cloud_total_kgco2e,
        -- the work one accelerator delivers (TFLOPS over its hours), from the basis that counts
        -- the devices: a stated count (the paper's) at the devices' peak, as the paper equates
        -- them; otherwise the job's work (gpu_work_tflops: the workload's tokens, or the
        -- accelerator's utilisation x its FP32 roofline, which on the measured basis is its
        -- measured job rate x the job's FLOPs at that utilisation)
        case when takes_stated_count and devices_stated is not null
            then devices_stated * device_tflops * hours_per_day / cloud_hours_per_day
            else gpu_work_tflops
        end as work_tflops,
        -- one device's scheduled training window over the job, s (the online share is counted
        -- once, in the devices online)
        hours_per_day * 3600 * 365 * job_years as window_s
    from counted
),

carbon as (
    select
        fleet.*,
        -- tokens of the class's share of the job: the workload's, or what the accelerators train
        -- on over the job: their work / (6 x params FLOPs per token)
        share * case when workload_tokens_weight > 0 then workload_tokens
            else cloud_gpu_count * work_tflops * 1e12 * 3600 * cloud_hours_per_day * 365 * job_years
                / training_flops(fleet_model_params, 1) end as tokens,
        -- the device's achieved FLOPS over its peak: the class's share of the work over its
        -- devices' peak while they train, online and slowed by stragglers (to 12 decimals: a
        -- stated count is exactly at its peak)
        round(share * cloud_gpu_count * work_tflops * cloud_hours_per_day * slowdown
              / (devices * online_fraction * device_tflops * hours_per_day), 12) as implied_device_utilisation,
        -- one device's training electricity over the job, online its share of its window, and the
        -- three terms of its embodied carbon an allocation policy weighs (core.embodied_policies)
        edge_operational_kgco2e(1, online_fraction, train_power_w * wall_factor, hours_per_day, job_years,
                                edge_grid_gco2e_per_kwh) as edge_operational_per_device_kgco2e,
        case when weighs_battery_wear then embodied_battery_wear_kgco2e(
            device_nonuse_kgco2e, battery_embodied_share,
            battery_cycles(battery_throughput_share, train_power_w, hours_per_day, online_fraction, job_years, battery_wh),
            battery_rated_cycles, owner_cycles_per_year, device_replacement_share, job_years, lifetime_years,
            battery_replacement_kgco2e) else 0.0 end
            as battery_wear_per_device_kgco2e,
        case when weighs_use_hours then embodied_use_hours_kgco2e(device_horizon_embodied_kgco2e, hours_per_day * online_fraction,
                                                                 owner_hours_per_day) else 0.0 end as use_hours_per_device_kgco2e,
        case when weighs_calendar_hours then embodied_calendar_kgco2e(device_horizon_embodied_kgco2e, hours_per_day * online_fraction)
            else 0.0 end as calendar_hours_per_device_kgco2e
    from fleet
),

-- one row per communication pattern (core.patterns: its coefficients, its ends, whether it splits the model
-- into stages and whether a larger fleet carries its traffic) the scenario is evaluated on: every pattern every
-- scenario is (every_scenario), its own comm_pattern, and, where its frame resizes the fleet, every edge training
-- design (core.patterns edge_design: the ways a home fleet can train, among which marts.verdict reads the best
-- admissible one). A design's own terms: an outer-sync design (outer_sync: DiLoCo-style local training) trains
-- outer_token_overhead more tokens for the same quality, so that much more work on that many more devices, and
-- syncs every outer_steps_per_sync inner steps at outer_compression; a lean design (lean_state) holds
-- lean_training_bytes_per_param per parameter.
designs as (
    select
        carbon.* replace (
            case when pattern.outer_sync and carbon.outer_token_overhead <> 1
                then whole_devices(carbon.devices * carbon.outer_token_overhead) else carbon.devices end as devices,
            case when pattern.outer_sync then carbon.tokens * carbon.outer_token_overhead else carbon.tokens end as tokens),
        pattern.pattern as pattern,
        pattern.home_ends,
        pattern.server_ends,
        pattern.resizable and carbon.resizes_fleet as resizable,
        pattern.sync_n,
        pattern.sync_n_minus_1,
        pattern.activations,
        pattern.stage_allreduce,
        pattern.radio_per_window,
        pattern.radio_per_byte,
        -- the devices that receive each byte besides its sender, where the frame charges their radio
        receiving_radios(carbon.charges_receiving_radio, pattern.home_ends) as receiving_radios,
        pattern.splits_model,
        pattern.moves_bytes,
        pattern.outer_sync,
        pattern.edge_design,
        case when pattern.outer_sync then carbon.outer_token_overhead else 1.0 end as token_overhead,
        -- a pattern marts.verdict reads with communication: the scenario's own, and a design of a frame that resizes
        pattern.pattern = carbon.comm_pattern or (pattern.edge_design and carbon.resizes_fleet) as is_scenario_design,
        -- the steps between gradient syncs, times the sync's compression over comm_compression (every byte term is
        -- divided by comm_compression): an outer-sync design's gradient terms at outer_steps_per_sync x
        -- outer_compression, its activations (a pipeline's) at comm_compression
        case when pattern.outer_sync then carbon.outer_steps_per_sync * carbon.outer_compression / carbon.comm_compression
            else carbon.local_steps_per_sync end as sync_steps,
        -- the training state per parameter each device holds (its stage's share where the model is split)
        case when pattern.lean_state then coalesce(carbon.lean_training_bytes_per_param, carbon.training_bytes_per_param)
            else carbon.training_bytes_per_param end as state_bytes_per_param,
        -- the deepest pipeline: one stage per layer, at most max_pipeline_stages
        least(carbon.fleet_model_layers, coalesce(carbon.max_pipeline_stages, carbon.fleet_model_layers)) as max_stages,
        -- activation memory at the micro-batch, with full activation checkpointing (sql/model/macros.sql
        -- activation_memory_bytes): 0 where the scenario sets no micro-batch (the paper's, state only)
        coalesce(layer_input_bytes(carbon.sequence_length, carbon.micro_batch_sequences, carbon.fleet_model_hidden_size), 0)
            as layer_input_bytes,
        coalesce(layer_working_bytes(carbon.sequence_length, carbon.micro_batch_sequences, carbon.fleet_model_hidden_size,
                                     carbon.fleet_model_heads), 0) as layer_working_bytes
    from carbon
    inner join core.patterns as pattern
        on (carbon.variant_patterns is null
            and (pattern.every_scenario or pattern.pattern = carbon.comm_pattern or (pattern.edge_design and carbon.resizes_fleet)))
        -- a pattern asked for by name; an edge design that is not every scenario's only where the frame resizes its fleet
        or (list_contains(carbon.variant_patterns, pattern.pattern)
            and (pattern.every_scenario or not pattern.edge_design or carbon.resizes_fleet))
        or (carbon.variant_own_pattern and pattern.pattern = carbon.comm_pattern)
        or (carbon.variant_designs and pattern.edge_design and carbon.resizes_fleet)
    -- beside the headline basis, the measured basis only on the patterns marts.verdict reads (the
    -- scenario's own and its designs, and the one that moves no bytes); an outer-sync design only where the scenario
    -- sets its outer step, compression and token overhead (a draw of a scenario that sets none holds them as NaN)
    where (not pattern.outer_sync
           or coalesce(isfinite(carbon.outer_steps_per_sync) and isfinite(carbon.outer_compression)
                       and isfinite(carbon.outer_token_overhead), false))
        and (carbon.is_headline or carbon.variant_basis_filter <> 'headline_and_measured'
        or not pattern.moves_bytes or pattern.pattern = carbon.comm_pattern or (pattern.edge_design and carbon.resizes_fleet))
),

patterns as (
    select
        designs.*,
        devices * online_fraction as devices_online_base,
        -- where the pattern splits the model: the fewest stages whose devices hold the state and its activations
        -- (stage_memory_floor), then comm_stages' choice, at most max_stages
        case when splits_model then comm_stages(devices * online_fraction, fleet_model_params, bytes_per_param,
                                                batch_size * sequence_length, sync_steps, fleet_model_hidden_size,
                                                activation_bytes, max_stages,
                                                stage_memory_floor(fleet_model_params, state_bytes_per_param, fleet_model_layers,
                                                                   layer_input_bytes, layer_working_bytes, device_memory_gb,
                                                                   edge_usable_memory_fraction),
                                                activations, stage_allreduce) end as pipeline_stages
    from designs
),

-- the traffic of the compute-equivalent fleet, and what one device can send in its window
staged as (
    select
        patterns.*,
        comm_bytes(sync_n, sync_n_minus_1, activations, stage_allreduce, devices_online_base, fleet_model_params, bytes_per_param,
                   tokens, batch_size * sequence_length, sync_steps, fleet_model_hidden_size, activation_bytes,
                   comm_compression, pipeline_stages) as comm_bytes_base,
        -- what one device may send in its window: its link's rate below the headroom (link_headroom; 1 where unset)
        edge_bandwidth_mb_per_s * 1e6 * window_s * coalesce(link_headroom, 1.0) as link_bytes_per_window,
        -- the share of its window a device trains: its online share, or a^S where the pattern
        -- splits the model into S stages (training_share: the whole pipeline online)
        training_share(online_fraction, splits_model, pipeline_stages) as training_share_base,
        -- a staged pattern's activation bytes per stage boundary, and its all-reduce coefficient at
        -- the global batch of the compute-equivalent fleet (pipeline_bytes_at), each times its coefficient
        activations * (tokens * 2 * fleet_model_hidden_size * activation_bytes / comm_compression) as activation_bytes_per_stage,
        stage_allreduce * (tokens * 2 * fleet_model_params * bytes_per_param
                           / (batch_size * sequence_length * sync_steps * comm_compression)
                           * pipeline_stages / (devices * online_fraction)) as allreduce_kp
    from patterns
),

-- a fleet over its link, where the frame resizes and the pattern's per-device traffic can fall (a resizable
-- pattern: its stage terms), is resized: the fewest devices (and their stages) that carry it and still do the job,
-- counting that a pipeline of s stages trains a^s of its window (the list of each stage count's fleet,
-- pipeline_fleet_devices, computed once; its fewest_devices and their stages: pipeline_fleet_for_link in one
-- struct). Where none can carry it, it stays as counted, over its link (link_feasible false: infeasible in
-- marts.verdict); no cap bounds a resize.
sized as (
    select
        staged.*,
        -- where the pattern splits the model, the devices training at once (devices x online)
        -- over the share of its window each trains: more devices, as each pipeline is complete
        -- (a^S) less often than its devices are online (a)
        case when splits_model then whole_devices(devices * online_fraction / training_share_base) else devices end
            as devices_complete,
        case when resizable and comm_bytes_base / devices_online_base > link_bytes_per_window * (1 + 1e-9)
            then pipeline_fleet_devices(activation_bytes_per_stage, allreduce_kp, pipeline_stages, max_stages,
                                        link_bytes_per_window, online_fraction, splits_model, devices_online_base)
        end as resize_list
    from staged
),

-- the devices of the pattern: the complete-pipeline count, or the resized one
resized as (
    select
        sized.*,
        greatest(coalesce(whole_devices(fewest_devices(resize_list)), devices_complete), devices_complete) as devices_pattern,
        coalesce(fewest_devices_stages(resize_list, pipeline_stages), pipeline_stages) as stages_pattern
    from sized
),

-- the devices training at once: online, and where the pattern splits the model, with their
-- whole pipeline online (training_share); they send the traffic and draw training power
traffic as (
    select
        resized.*,
        training_share(online_fraction, splits_model, stages_pattern) as training_share_pattern,
        devices_pattern * training_share(online_fraction, splits_model, stages_pattern) as devices_online,
        case when devices_pattern <> devices or stages_pattern <> pipeline_stages
            then pipeline_bytes_at(activation_bytes_per_stage, allreduce_kp,
                                   devices_pattern * training_share(online_fraction, splits_model, stages_pattern), stages_pattern)
            else comm_bytes_base
        end as comm_bytes
    from resized
),

-- the terms of the pattern's energy and embodied carbon, each computed once; the method rows below weigh them
terms as (
    select
        traffic.*,
        -- training power: every device of the pattern's fleet for its training share of its window,
        -- or only the device-hours the work needs (the compute-equivalent devices, online their
        -- share); the fleet's other training device-hours at the class's idle power (the resize-power
        -- rows weigh these three)
        devices_pattern * case when splits_model
            then edge_operational_kgco2e(1, training_share_pattern, train_power_w * wall_factor, hours_per_day, job_years,
                                         edge_grid_gco2e_per_kwh)
            else edge_operational_per_device_kgco2e
        end as fleet_training_kgco2e,
        devices * edge_operational_per_device_kgco2e as work_training_kgco2e,
        edge_operational_kgco2e(greatest(devices_online - devices * online_fraction, 0), 1, idle_power_w * wall_factor, hours_per_day,
                                job_years, edge_grid_gco2e_per_kwh) as extra_idle_kgco2e,
        -- the waiting devices: online while their pipeline is incomplete, a - a^S of their window (0 where the pattern
        -- does not split the model: a device trains whenever it is online), drawing the class's idle power through the
        -- charger (its training power where the class has no idle power: an upper bound) under every resize-power row
        devices_pattern * (online_fraction - training_share_pattern) * hours_per_day * 365 * job_years as waiting_device_hours,
        case when online_fraction > training_share_pattern
            then edge_operational_kgco2e(devices_pattern, online_fraction - training_share_pattern,
                                         coalesce(idle_power_w, train_power_w) * wall_factor, hours_per_day, job_years,
                                         edge_grid_gco2e_per_kwh)
            else 0.0 end as waiting_idle_kgco2e,
        -- a device of a pattern that splits the model trains (and wears, and is used) its training
        -- share of its window: the three embodied terms at that share (else at its online share), for
        -- every device of the fleet
        devices_pattern * case when splits_model and weighs_battery_wear
            then embodied_battery_wear_kgco2e(
                device_nonuse_kgco2e, battery_embodied_share,
                battery_cycles(battery_throughput_share, train_power_w, hours_per_day, training_share_pattern, job_years, battery_wh),
                battery_rated_cycles, owner_cycles_per_year, device_replacement_share, job_years, lifetime_years,
                battery_replacement_kgco2e)
            else battery_wear_per_device_kgco2e
        end as battery_wear_kgco2e,
        -- one device's extra charge cycles over the job, at the share of its window it trains (its online share, or
        -- a^S where the pattern splits the model); the battery wear above charges them (marts and readers see them)
        battery_cycles(battery_throughput_share, train_power_w, hours_per_day, training_share_pattern, job_years, battery_wh)
            as battery_extra_cycles,
        devices_pattern * case when splits_model and weighs_use_hours
            then embodied_use_hours_kgco2e(device_horizon_embodied_kgco2e, hours_per_day * training_share_pattern, owner_hours_per_day)
            else use_hours_per_device_kgco2e
        end as use_hours_kgco2e,
        devices_pattern * case when splits_model and weighs_calendar_hours
            then embodied_calendar_kgco2e(device_horizon_embodied_kgco2e, hours_per_day * training_share_pattern)
            else calendar_hours_per_device_kgco2e
        end as calendar_hours_kgco2e,
        -- the radios (the sender's; the receiver's where the frame charges it), through the charger
        (radio_kwh(radio_per_window, radio_per_byte, comm_bytes, edge_bandwidth_mb_per_s, wifi_radio_power_w, devices_online, window_s,
                   link_utilisation)
         + receiving_radio_kwh(receiving_radios, radio_per_byte, comm_bytes, edge_bandwidth_mb_per_s, wifi_receive_power_w))
            * wall_factor as radio_kwh,
        -- the network's four terms (network_terms_kwh), for the hours the training holds the home lines
        devices_online * window_s / 3600 as line_hours,
        network_terms_kwh(comm_bytes / 1e9, home_ends, server_ends, network_kwh_per_gb, router_kwh_per_gb, network_marginal_w_per_mbps,
                          router_marginal_w_per_mbps, line_power_w, line_training_share, devices_online * window_s / 3600) as network_terms,
        -- the link rate one online device needs to send its share within its training window
        case when moves_bytes then comm_bytes / devices_online / window_s / 1e6 else 0.0 end as required_link_mb_per_s,
        -- radio time one online device needs / its training window
        case when moves_bytes then comm_bytes / devices_online / (edge_bandwidth_mb_per_s * 1e6) / window_s else 0.0 end
            as link_time_share,
        -- the training memory one device holds (sql/model/macros.sql training_memory_bytes): the whole training state
        -- where the pattern keeps a replica on every device, 1/S of it and its layers' activations in S stages
        training_memory_bytes(fleet_model_params, state_bytes_per_param, fleet_model_layers,
                              case when splits_model then stages_pattern else 1 end, layer_input_bytes, layer_working_bytes)
            / 1e9 as training_memory_gb,
        device_memory_gb * edge_usable_memory_fraction as usable_memory_gb
    from traffic
),

-- the allocation policies a scenario is evaluated under: its own edge_embodied_policy (the null row)
-- and the others its frame admits (core.frame_embodied_policies)
policy_choices as (
    select accounting_frame, policy from core.frame_embodied_policies where not coalesce(is_frame_headline, true)
    union all
    select distinct accounting_frame, null as policy from core.frame_embodied_policies
),

-- one row per method row the scenario's frame admits: a network method (core.frame_network_methods), an allocation
-- policy (policy_choices: the scenario's own edge_embodied_policy, the headline, and the frame's others) and a
-- resize power (core.frame_resize_powers), each a row of weights of the terms above, never a name. Filter
-- 'headline': the frame's headline row of each kind; 'network': every network method at the headline policy and
-- resize power; 'rows': the rows the variant names (its method_rows); 'all': every combination on the
-- scenario's own pattern (the one marts.verdict reads with communication), every allocation policy on the pattern
-- that moves no bytes (its R does not depend on the network or the link), the headline row on the others. A resize
-- power that weighs idle power is left out for a class without one (idle_power_w null).
methods as (
    select
        terms.*,
        method.network_method,
        policy.policy as embodied_policy,
        power.resize_power,
        choice.policy is null as is_headline_policy,
        power_rows.is_frame_headline as is_headline_resize_power,
        -- the frame's headline method row: its headline network method, the scenario's policy and the headline resize power
        method.is_frame_headline and choice.policy is null and power_rows.is_frame_headline as is_headline_method,
        -- the resize-power row's weights of the training terms, and the waiting devices at idle power under every row
        weighted(power.fleet_training, fleet_training_kgco2e) + weighted(power.work_training, work_training_kgco2e)
            + weighted(power.extra_idle, extra_idle_kgco2e) + waiting_idle_kgco2e as edge_operational_kgco2e,
        weighted(policy.battery_wear, battery_wear_kgco2e) + weighted(policy.use_hours, use_hours_kgco2e)
            + weighted(policy.calendar_hours, calendar_hours_kgco2e) as edge_embodied_kgco2e,
        -- the battery-wear part of edge_embodied_kgco2e (the README's causes)
        weighted(policy.battery_wear, battery_wear_kgco2e) as edge_battery_wear_kgco2e,
        network_method_kwh(network.per_gb_one_end, network.per_gb_by_ends, network.marginal_by_ends, network.line_time, network_terms)
            as network_kwh
    from terms
    inner join core.frame_network_methods as method on method.accounting_frame = terms.accounting_frame
    inner join core.network_methods as network on network.network_method = method.network_method
    inner join policy_choices as choice on choice.accounting_frame = terms.accounting_frame
    inner join core.embodied_policies as policy on policy.policy = coalesce(choice.policy, terms.edge_embodied_policy)
    inner join core.frame_resize_powers as power_rows on power_rows.accounting_frame = terms.accounting_frame
    inner join core.resize_powers as power on power.resize_power = power_rows.resize_power
    -- another policy of the frame only where it is not the scenario's own; a resize power that weighs
    -- idle power only for a class that has one
    where (choice.policy is null or choice.policy <> terms.edge_embodied_policy)
        and (power.extra_idle = 0 or terms.idle_power_w is not null)
        and case terms.variant_method_filter
            when 'headline' then method.is_frame_headline and choice.policy is null and power_rows.is_frame_headline
            when 'network' then choice.policy is null and power_rows.is_frame_headline
            when 'rows' then list_contains(terms.variant_method_rows,
                                           {'network_method': method.network_method, 'policy': policy.policy,
                                            'resize_power': power.resize_power})
            else (method.is_frame_headline and choice.policy is null and power_rows.is_frame_headline) or terms.is_scenario_design
                or (not terms.moves_bytes and method.is_frame_headline and power_rows.is_frame_headline)
        end
),

energy as (
    select
        methods.*,
        radio_kwh + network_kwh as comm_kwh,
        -- the network's part alone (no radio), as an average power over the home lines the
        -- training holds (line_hours: the devices training at once, N a or N a^S where the pattern
        -- splits the model, each its line for its window: training hours, not online hours), W: a
        -- method that charges more than a line can draw is not physical for this row (network_physical)
        network_kwh * 1000 / line_hours as network_w_per_line
    from methods
),

rows as (
    select
        scenario_id, variant_id, family, device_class, basis, is_headline, pattern, network_method, embodied_policy, resize_power,
        is_headline_method, is_headline_policy, is_headline_resize_power, cloud_gpu_capacity, device_capacity,
        capacity_unit, online_fraction, devices_exact, devices_formula, devices_from, devices_memory_floor,
        devices_pattern as devices, case when devices_pattern > devices then devices end as resized_from,
        cloud_total_kgco2e, edge_operational_kgco2e, edge_embodied_kgco2e,
        -- the per-unit terms the totals are built from (marts.lifecycle_carbon reads them)
        cloud_embodied_per_gpu_kgco2e, cloud_operational_per_gpu_kgco2e,
        device_horizon_embodied_kgco2e as device_embodied_kgco2e, device_operational_kgco2e, comm_bytes / 1e9 as comm_gb,
        comm_kwh, comm_kwh * edge_grid_gco2e_per_kwh / 1000 as comm_kgco2e, network_w_per_line, line_power_physical_max_w,
        coalesce(network_w_per_line <= line_power_physical_max_w, true) as network_physical, link_time_share,
        required_link_mb_per_s, edge_bandwidth_mb_per_s as link_mb_per_s, coalesce(link_headroom, 1.0) as link_headroom,
        link_time_share <= coalesce(link_headroom, 1.0) * (1 + 1e-9) as link_feasible,
        training_memory_gb, usable_memory_gb as device_memory_gb,
        training_memory_gb <= usable_memory_gb * (1 + 1e-12) as memory_feasible,
        -- a design that can run: its links carry its traffic below their headroom and, for an edge training design, its
        -- devices hold its training memory (a pipeline no deeper than max_stages by construction)
        link_time_share <= coalesce(link_headroom, 1.0) * (1 + 1e-9)
            and (not edge_design or coalesce(training_memory_gb <= usable_memory_gb * (1 + 1e-12), true)) as design_admissible,
        stages_pattern as pipeline_stages, max_stages as max_pipeline_stages, is_scenario_design, token_overhead,
        edge_battery_wear_kgco2e, implied_device_utilisation, waiting_device_hours, battery_extra_cycles, battery_rated_cycles,
        battery_replacements(battery_extra_cycles, battery_rated_cycles) as battery_replacements,
        edge_operational_kgco2e + edge_embodied_kgco2e + comm_kwh * edge_grid_gco2e_per_kwh / 1000 as edge_added_kgco2e,
        fleet_share, hours_per_day, job_years, cloud_gpu_count, wall_factor
    from energy
)

-- a basis the class lacks the figures for (e.g. no measured job time) is left out
select
    *,
    cloud_total_kgco2e / edge_added_kgco2e as reduction_factor
from rows
where devices is not null;

-- model_class_rows and, for a mixed fleet (classes with a fleet_share), the fleet as a whole (the macro
-- fleet_rows, sql/model/macros.sql), its class rows evaluated once (materialized) for both parts.
create or replace temp macro model_rows(set_table := 'core.variant_inputs', device_table := 'core.variant_devices',
                                        variant_table := 'core.variants') as table
with class_rows as materialized (select * from model_class_rows(set_table, device_table, variant_table))
select * from class_rows
union all by name
select * from fleet_rows('class_rows');
