-- The model's formulas, written once. Every mart, the sensitivity and break-even searches and
-- the Monte Carlo evaluation call these macros, so one formula serves a scenario and a million
-- draws. Units are in the argument names; energies in kWh, carbon in kgCO2e, grid in g/kWh.

-- The cloud GPU's figure under the scenario's drawn variant: the alternative GPU's where
-- cloud_gpu_variant is 1 (a Bernoulli draw of cloud_gpu_alt_share), else the main GPU's.
create or replace temp macro gpu_variant(variant, alt, main) as case when cast(variant as integer) = 1 then alt else main end;

-- A whole number of devices: ceil, with a small epsilon so an exact ratio such as
-- 15.000000000001 does not round up to 16.
create or replace temp macro whole_devices(x) as ceil(x - 1e-9);

-- Joules to kWh.
create or replace temp macro kwh_of_joules(energy_j) as energy_j / 3.6e6;

-- A measured job's energy scaled to a model of `params` parameters (kWh): training FLOPs ~ 6 x
-- params x tokens, so at a fixed token budget and the same energy per FLOP, energy ~ params.
create or replace temp macro energy_scaled_kwh(measured_energy_j, measured_params, params) as
    kwh_of_joules(measured_energy_j * params / measured_params);

-- Seconds to move `bytes` at a link bandwidth in MB/s.
create or replace temp macro transfer_seconds(bytes, bandwidth_mb_per_s) as bytes / (bandwidth_mb_per_s * 1e6);

-- Roofline-attainable throughput (TFLOPS) at arithmetic intensity I (FLOP/byte):
-- min(peak, I x bandwidth); null when either is unknown (least() alone would skip a null).
create or replace temp macro attainable_tflops(peak_tflops, intensity_flop_per_byte, bandwidth_gb_per_s) as
    case when bandwidth_gb_per_s is not null then least(peak_tflops, intensity_flop_per_byte * bandwidth_gb_per_s / 1000) end;

-- Devices per cloud GPU on a throughput basis, before rounding:
-- (X_gpu x h_gpu) / (X_dev x h_dev x online fraction / slowdown).
create or replace temp macro devices_for_throughput(gpu_capacity, gpu_hours, device_capacity, device_hours, online_fraction, slowdown) as
    (gpu_capacity * gpu_hours) / (device_capacity * device_hours * online_fraction / slowdown);

-- Devices needed to hold a model's training state: params x training bytes per param /
-- (memory x usable fraction), at least 1.
create or replace temp macro memory_floor_devices(params, training_bytes_per_param, memory_gb, usable_fraction) as
    case when memory_gb is not null then greatest(whole_devices(params * training_bytes_per_param / (memory_gb * 1e9 * usable_fraction)), 1) end;

-- Cloud GPU operational carbon over the horizon (MLCO2 method when utilisation = PUE = 1 and the
-- cluster communication share is 0): P x utilisation x h x 365 x T x PUE x (1 + comm share) x CI.
-- P is the GPU's rated power plus its share of the node's rated host power (CPUs, DRAM, NICs,
-- fans: cloud_node_overhead_w, 0 in the paper), so utilisation scales the whole node's draw.
create or replace temp macro cloud_operational_kgco2e(power_w, utilisation, hours_per_day, horizon_years, pue, comm_share, grid_gco2e_per_kwh) as
    power_w * utilisation * hours_per_day * 365 * horizon_years * pue * (1 + comm_share) * grid_gco2e_per_kwh / 1e6;

-- Workloads. Training FLOPs of a dense transformer: 6 x N x D (N parameters, or active
-- parameters per token for a mixture of experts; D training tokens; Kaplan et al. 2020).
create or replace temp macro training_flops(params, tokens) as 6 * params * tokens;

-- Accelerator-hours to deliver `flops` at a model FLOPs utilisation (MFU) of a peak in TFLOPS.
create or replace temp macro accelerator_hours(flops, peak_tflops, mfu) as flops / (peak_tflops * 1e12 * mfu) / 3600;

-- Calendar years a job of `accelerator_hours` takes on `count` accelerators running
-- `hours_per_day` hours a day.
create or replace temp macro job_years(accelerator_hours, count, hours_per_day) as accelerator_hours / (count * hours_per_day * 365);

-- Energy of a job (kWh): accelerator-hours x power per accelerator (W, node share included) x PUE.
create or replace temp macro job_kwh(accelerator_hours, power_w, pue) as accelerator_hours * power_w * pue / 1000;

-- Operational carbon of a job's energy (kgCO2e) at a grid intensity in gCO2e/kWh.
create or replace temp macro job_kgco2e(kwh, grid_gco2e_per_kwh) as kwh * grid_gco2e_per_kwh / 1000;

-- Accounting frames (core.frames, the scenario's accounting_frame) are rows whose rules are
-- columns; the macros below take a rule's value, never a frame's name.
-- Cloud embodied carbon charged to the horizon: a frame that amortises it (core.frames
-- amortises_cloud_embodied: the attributional frame) charges the node over its stated life
-- (T / life, at most 1); the others charge the node added for the training in full, as the
-- paper does.
create or replace temp macro cloud_embodied_charged_kgco2e(amortised, embodied_kgco2e, horizon_years, life_years) as
    embodied_kgco2e * case when amortised then least(horizon_years / life_years, 1) else 1 end;

-- Network energy per GB by a frame's network energy rule (core.frames network_energy_rule):
-- 'average' intensities (network kWh/GB + the home router's allocated kWh/GB), or the
-- 'marginal' power of a power model (W per Mbit/s of the access and core network and of the
-- router): a GB is 8,000 Mbit, so W per Mbit/s x 8,000 J per GB / 3.6e6 J per kWh.
create or replace temp macro network_kwh_per_gb_for_rule(rule, network_kwh_per_gb, router_kwh_per_gb, network_marginal_w_per_mbps, router_marginal_w_per_mbps) as
    case when rule = 'marginal'
        then (network_marginal_w_per_mbps + router_marginal_w_per_mbps) * 8000 / 3.6e6
        else network_kwh_per_gb + router_kwh_per_gb
    end;

-- Electricity drawn from the wall per unit of energy the device uses while training: the
-- charger's losses on all of it, and the battery's round-trip losses on the share that passes
-- through the battery. 1 in the paper (device energy only).
create or replace temp macro edge_wall_factor(charger_efficiency, battery_throughput_share, battery_round_trip_efficiency) as
    (1 - battery_throughput_share + battery_throughput_share / battery_round_trip_efficiency) / charger_efficiency;

-- A device's non-use-phase embodied carbon re-amortised to the horizon:
-- report total x non-use share x min(T / report lifetime, 1).
create or replace temp macro device_embodied_kgco2e(total_kgco2e, nonuse_share, horizon_years, lifetime_years) as
    total_kgco2e * nonuse_share * least(horizon_years / lifetime_years, 1);

-- Training electricity of a fleet over the horizon: devices x online fraction x P x h x 365 x T x CI.
create or replace temp macro edge_operational_kgco2e(devices, online_fraction, power_w, hours_per_day, horizon_years, grid_gco2e_per_kwh) as
    devices * online_fraction * power_w * hours_per_day * 365 * horizon_years * grid_gco2e_per_kwh / 1e6;

-- The same formula solved for the power: the training power (W) at which a fleet's training
-- electricity emits `kgco2e` over the horizon.
create or replace temp macro edge_power_w_for_kgco2e(kgco2e, devices, online_fraction, hours_per_day, horizon_years, grid_gco2e_per_kwh) as
    kgco2e / edge_operational_kgco2e(devices, online_fraction, 1.0, hours_per_day, horizon_years, grid_gco2e_per_kwh);

-- Extra battery charge cycles per device over the horizon from training:
-- battery throughput share x P x h x online x 365 x T / battery capacity (Wh). P is the device's
-- training power (not through the wall factor: the cycles are the battery's, not the wall's), and
-- `online_fraction` the share of its window the device trains (its online share, or a^S in a
-- pattern that splits the model: training_share).
create or replace temp macro battery_cycles(throughput_share, power_w, hours_per_day, online_fraction, horizon_years, battery_wh) as
    throughput_share * power_w * hours_per_day * online_fraction * 365 * horizon_years / battery_wh;

-- Replacement batteries training's extra cycles take: a battery lasts its rated cycles, so the
-- cycles wear out ceil(cycles / rated) batteries, the first the device's own: ceil(cycles / rated) - 1,
-- at least 0 (whole_devices' ceil with its tolerance: exactly the rated cycles take none).
create or replace temp macro battery_replacements(cycles, rated_cycles) as
    greatest(whole_devices(cycles / rated_cycles) - 1, 0);

-- A replacement battery's embodied carbon (kgCO2e): its capacity (Wh) x a battery's embodied carbon per kWh.
create or replace temp macro battery_embodied_kgco2e(battery_wh, kgco2e_per_kwh) as
    battery_wh / 1000 * kgco2e_per_kwh;

-- Years of device life lost when training's extra cycles wear the battery out before the
-- device's service life ends: the battery would last rated / owner cycles a year (at most the
-- service life); with training it lasts rated / (owner + training cycles a year).
create or replace temp macro battery_life_lost_years(rated_cycles, owner_cycles_per_year, training_cycles, horizon_years, lifetime_years) as
    greatest(least(rated_cycles / owner_cycles_per_year, lifetime_years)
             - rated_cycles / (owner_cycles_per_year + training_cycles / horizon_years), 0);

-- The share of devices replaced whole because training wore their battery out early: the
-- owners who replace the device (replacement_share), only where the device loses life at all.
create or replace temp macro replaced_share(replacement_share, life_lost_years) as
    case when life_lost_years > 0 then replacement_share else 0.0 end;

-- A coefficient of a method's row (core.patterns, core.embodied_policies) times one of the model's
-- terms; 0 where the coefficient is 0, whatever the term (a pattern that does not split the model has
-- no stages, a device without a battery figure no battery wear).
create or replace temp macro weighted(coefficient, term) as
    case when coefficient = 0 then 0.0 else coefficient * term end;

-- Embodied carbon of one device charged to training over the horizon, three terms an allocation
-- policy's row (core.embodied_policies) weighs:
--   battery_wear (consequential): the device's own battery worn by the extra charge cycles, up to
--     its rated cycles: the battery's share of the device's non-use-phase embodied carbon x
--     min(cycles, rated) / rated; beyond them, a whole replacement battery's embodied carbon
--     (battery_kgco2e) for each battery the cycles wear out after it (battery_replacements:
--     ceil(cycles / rated) - 1); for the share of owners who replace the whole device when its
--     battery wears out early, the device's embodied carbon x the share of its service life lost,
--     min(lost / lifetime, 1), instead (a device charged for its replacement carries no separate
--     battery wear);
create or replace temp macro embodied_battery_wear_kgco2e(nonuse_kgco2e, battery_embodied_share, cycles, rated_cycles, owner_cycles_per_year,
                                                          replacement_share, horizon_years, lifetime_years, battery_kgco2e) as
    replaced_share(replacement_share, battery_life_lost_years(rated_cycles, owner_cycles_per_year, cycles, horizon_years, lifetime_years))
     * nonuse_kgco2e * least(battery_life_lost_years(rated_cycles, owner_cycles_per_year, cycles, horizon_years, lifetime_years) / lifetime_years, 1)
    + (1 - replaced_share(replacement_share, battery_life_lost_years(rated_cycles, owner_cycles_per_year, cycles, horizon_years, lifetime_years)))
     * (nonuse_kgco2e * battery_embodied_share * least(cycles, rated_cycles) / rated_cycles
        + weighted(battery_replacements(cycles, rated_cycles), battery_kgco2e));

--   use_hours (attributional, per use hour): the embodied carbon re-amortised to the horizon x
--     training hours / (training hours + the owner's own use hours);
create or replace temp macro embodied_use_hours_kgco2e(horizon_embodied_kgco2e, training_hours_per_day, owner_hours_per_day) as
    horizon_embodied_kgco2e * training_hours_per_day / (training_hours_per_day + owner_hours_per_day);

--   calendar_hours (attributional, per calendar hour; ACT, Gupta et al. 2022: embodied carbon x
--     the job's time / the device's lifetime): the embodied carbon re-amortised to the horizon x
--     the share of each day training holds the device, training hours / 24.
create or replace temp macro embodied_calendar_kgco2e(horizon_embodied_kgco2e, training_hours_per_day) as
    horizon_embodied_kgco2e * training_hours_per_day / 24;

-- A policy's charge from its weights of the first two terms (the paper's policy, none, weighs every
-- term 0: devices are owned anyway); the model weighs all three, each computed once
-- (sql/model/model_rows.sql).
create or replace temp macro embodied_allocated_kgco2e(battery_wear, use_hours, nonuse_kgco2e, horizon_embodied_kgco2e, battery_embodied_share, cycles, rated_cycles, training_hours_per_day, owner_hours_per_day, owner_cycles_per_year, replacement_share, horizon_years, lifetime_years, battery_kgco2e) as
    weighted(battery_wear, embodied_battery_wear_kgco2e(nonuse_kgco2e, battery_embodied_share, cycles, rated_cycles, owner_cycles_per_year,
                                                        replacement_share, horizon_years, lifetime_years, battery_kgco2e))
    + weighted(use_hours, embodied_use_hours_kgco2e(horizon_embodied_kgco2e, training_hours_per_day, owner_hours_per_day));

-- Activation memory of training a transformer layer at s tokens a sequence, b sequences a micro-batch, hidden
-- size h and a attention heads, in 16-bit activations (Korthikanti et al., Reducing Activation Recomputation in
-- Large Transformer Models, MLSys 2023, arXiv 2205.05198, section 4): s b h (34 + 5 a s / h) bytes while the layer
-- runs (its working set, recomputed in the backward pass), and, with full activation checkpointing, only its
-- input, 2 s b h bytes, stored for every layer between the passes.
create or replace temp macro layer_input_bytes(sequence_length, micro_batch, hidden_size) as
    2 * sequence_length * micro_batch * hidden_size;

create or replace temp macro layer_working_bytes(sequence_length, micro_batch, hidden_size, heads) as
    sequence_length * micro_batch * hidden_size * (34 + 5 * heads * sequence_length / hidden_size);

-- The training memory one device holds (bytes) when the model is split into `stages` stages (1: a whole replica):
-- its share of the training state, params x state bytes / S, the stored inputs of its ceil(layers / S) layers,
-- and one layer's working set.
create or replace temp macro training_memory_bytes(params, state_bytes_per_param, layers, stages, layer_input_bytes, layer_working_bytes) as
    params * state_bytes_per_param / stages + ceil(layers / stages) * layer_input_bytes + layer_working_bytes;

-- The fewest pipeline stages S whose devices hold that memory within their usable memory U: params x state bytes
-- / S + (layers / S + 1) x input + working <= U, so S >= (params x state bytes + layers x input) / (U - working -
-- input), at least 1 (with no activations, memory_floor_devices); null where a device cannot hold one layer's
-- activations.
create or replace temp macro stage_memory_floor(params, state_bytes_per_param, layers, layer_input_bytes, layer_working_bytes, memory_gb,
                                                usable_fraction) as
    case when memory_gb is not null and memory_gb * 1e9 * usable_fraction - layer_working_bytes - layer_input_bytes > 0 then
        greatest(whole_devices((params * state_bytes_per_param + layers * layer_input_bytes)
                               / (memory_gb * 1e9 * usable_fraction - layer_working_bytes - layer_input_bytes)), 1)
    end;

-- Pipeline stages S for N online devices. Per token, a hybrid of S-stage pipelines that train
-- data-parallel with each other moves a x (S - 1) bytes of activations and their gradients
-- (a = 2 x hidden x activation bytes per stage boundary) plus d x (1 - S / N) bytes of
-- gradient all-reduce between the N / S replicas (d = 2 x params x bytes per param / (tokens
-- per step x local steps)). That is linear in S, so the least traffic is at an end: the fewest
-- stages that hold the training state (min_stages) when a > d / N, else one stage per device,
-- at most one per layer of the model.
create or replace temp macro pipeline_stages(devices_online, layers, min_stages, activation_bytes_per_boundary, allreduce_bytes_per_token) as
    case when activation_bytes_per_boundary > allreduce_bytes_per_token / devices_online
        then least(greatest(min_stages, 1), least(greatest(floor(devices_online), 1), layers))
        else least(greatest(floor(devices_online), 1), layers)
    end;

-- Pipeline stages S of a pattern that splits the model (core.patterns splits_model), for N online
-- devices: pipeline_stages over its per-token terms, each times the pattern's coefficient
-- (activations: a = 2 x hidden x activation bytes per boundary; stage_allreduce: d = 2 x params
-- x bytes per param / (tokens per step x local steps)).
create or replace temp macro comm_stages(devices, params, bytes_per_param, tokens_per_device_step, local_steps_per_sync, hidden_size,
                                         activation_bytes, layers, min_stages, activations, stage_allreduce) as
    pipeline_stages(devices, layers, min_stages, weighted(activations, 2 * hidden_size * activation_bytes),
                    weighted(stage_allreduce, 2 * params * bytes_per_param / (tokens_per_device_step * local_steps_per_sync)));

-- Bytes a fleet of N (online) devices moves to train on `tokens` tokens: one linear combination of
-- the byte terms, each times its coefficient in the pattern's row of core.patterns
-- (sources/curated/patterns.csv), all divided by the compression factor:
--   per sync: each device trains on its own batch of `tokens_per_device_step` tokens and the
--     fleet synchronises every `local_steps_per_sync` steps, so
--     syncs = tokens / (N x tokens per device step x local steps); per sync
--       sync_n x N p b (idealized, the paper's footnote 1: every device sends the parameters
--         once, 1; the paper's radio window moves the same bytes; parameter_server: push
--         gradients and pull parameters, 2);
--       sync_n_minus_1 x max(N - 1, 0) p b (ring_allreduce: 2 (N - 1) / N x p b per device, 2);
--   per token, for a model split into S = `stages` stages (comm_stages: at most min(N, layers)):
--       activations x 2 (S - 1) x hidden x activation bytes: every token's activations cross
--         the S - 1 stage boundaries forward and their gradients backward (pipeline 1);
--       stage_allreduce x 2 p b / (tokens per step x local steps) x max(1 - S / N, 0): the N / S
--         replicas train data-parallel with each other, each stage's p / S parameters
--         all-reduced (ring) across them every sync, 2 (N / S - 1) p b per sync for the whole
--         model, with syncs = tokens / (N / S x tokens per step x local steps) (pipeline 1).
create or replace temp macro comm_bytes(sync_n, sync_n_minus_1, activations, stage_allreduce, devices, params, bytes_per_param, tokens,
                                        tokens_per_device_step, local_steps_per_sync, hidden_size, activation_bytes, compression, stages) as
    (weighted(sync_n, tokens / (devices * tokens_per_device_step * local_steps_per_sync) * devices * params * bytes_per_param)
     + weighted(sync_n_minus_1, tokens / (devices * tokens_per_device_step * local_steps_per_sync) * greatest(devices - 1, 0)
                                * params * bytes_per_param)
     + weighted(activations, tokens * 2 * (stages - 1) * hidden_size * activation_bytes)
     + weighted(stage_allreduce, tokens * 2 * params * bytes_per_param / (tokens_per_device_step * local_steps_per_sync)
                                 * greatest(1 - stages / devices, 0)))
    / compression;

-- Communication energy of moving bytes: the device radio for the time at the link bandwidth
-- (x the edge wall factor: radio energy comes through the charger like the rest) plus the
-- network's energy per GB.
create or replace temp macro comm_kwh(bytes, bandwidth_mb_per_s, radio_power_w, network_kwh_per_gb, wall_factor := 1.0) as
    kwh_of_joules(transfer_seconds(bytes, bandwidth_mb_per_s) * radio_power_w) * wall_factor + bytes / 1e9 * network_kwh_per_gb;

-- The paper's radio model: the radio of every device training at once (devices_online: N a, or
-- N a^S in a pattern that splits the model) busy for its window at the link utilisation (window_s:
-- one device's scheduled training seconds over the horizon, the training share counted once, in
-- devices_online), so the radio draws for the device's training hours.
create or replace temp macro radio_window_kwh(devices_online, radio_power_w, window_s, link_utilisation) as
    devices_online * window_s * link_utilisation * radio_power_w / 3.6e6;

-- Network energy of a pattern's traffic (kWh), four terms a network method's row
-- (core.network_methods) weighs, as one struct (the model computes it once per fleet and each
-- method row weighs its fields); the sending device's radio is charged apart (comm radio terms in
-- sql/model/model_rows.sql):
--   per_gb_one_end   the paper's: average kWh per GB of the network and the router, at one end;
--   per_gb_by_ends   average kWh per GB: the fixed network and the home router at each of the
--                    `home_ends` a byte passes (both for device-to-device traffic), the fixed
--                    network alone at a server's end (`server_ends`);
--   marginal_by_ends a power model: the core's marginal W per Mbit/s once, the access line and
--                    router's at every home end; a GB is 8,000 Mbit, so W per Mbit/s x 8,000 J per GB;
--   line_time        the home line and router's power (line_w) for the hours the training holds
--                    them (line_hours: the devices training at once, N a or N a^S, x the window:
--                    training hours, not the hours a device is online), times training's share
--                    of the line; the bytes do not enter.
-- A pattern whose bytes pass no end (compute only) charges no network energy.
create or replace temp macro network_terms_kwh(gb, home_ends, server_ends, network_kwh_per_gb, router_kwh_per_gb,
                                               network_marginal_w_per_mbps, router_marginal_w_per_mbps, line_w, line_share, line_hours) as {
    'per_gb_one_end': gb * (network_kwh_per_gb + router_kwh_per_gb),
    'per_gb_by_ends': gb * (home_ends * (network_kwh_per_gb + router_kwh_per_gb) + server_ends * network_kwh_per_gb),
    'marginal_by_ends': gb * case when home_ends + server_ends > 0
        then network_marginal_w_per_mbps + home_ends * router_marginal_w_per_mbps else 0 end * 8000 / 3.6e6,
    'line_time': case when home_ends + server_ends > 0 then line_w * line_share * line_hours / 1000 else 0 end};

-- A network method's charge: its row's weights (core.network_methods) of network_terms_kwh's four terms.
create or replace temp macro network_method_kwh(per_gb_one_end, per_gb_by_ends, marginal_by_ends, line_time, terms) as
    weighted(per_gb_one_end, terms.per_gb_one_end) + weighted(per_gb_by_ends, terms.per_gb_by_ends)
    + weighted(marginal_by_ends, terms.marginal_by_ends) + weighted(line_time, terms.line_time);

-- The same from the traffic and the factors.
create or replace temp macro network_kwh(per_gb_one_end, per_gb_by_ends, marginal_by_ends, line_time, gb, home_ends, server_ends,
                                         network_kwh_per_gb, router_kwh_per_gb, network_marginal_w_per_mbps, router_marginal_w_per_mbps,
                                         line_w, line_share, line_hours) as
    network_method_kwh(per_gb_one_end, per_gb_by_ends, marginal_by_ends, line_time,
                       network_terms_kwh(gb, home_ends, server_ends, network_kwh_per_gb, router_kwh_per_gb, network_marginal_w_per_mbps,
                                         router_marginal_w_per_mbps, line_w, line_share, line_hours));

-- The sending device's radio energy (kWh, at the device: the wall factor is applied by the
-- caller), a linear combination by the pattern's row of core.patterns: radio_per_window x the
-- paper's radio window (the radio of every device training at once busy for its window at the
-- link utilisation) + radio_per_byte x the radio busy for the bytes at the link rate.
create or replace temp macro radio_kwh(radio_per_window, radio_per_byte, bytes, bandwidth_mb_per_s, radio_power_w, devices_online, window_s,
                                       link_utilisation) as
    weighted(radio_per_window, radio_window_kwh(devices_online, radio_power_w, window_s, link_utilisation))
    + weighted(radio_per_byte, kwh_of_joules(transfer_seconds(bytes, bandwidth_mb_per_s) * radio_power_w));

-- The devices whose radio receives each byte, charged by a frame's row (core.frames
-- charges_receiving_radio) and a pattern's (core.patterns home_ends): the ends of a byte at home
-- besides its sender's, home_ends - 1 (1 between two devices; 0 to a server, whose end has no
-- device radio), where the frame charges the receiving radio; else 0.
create or replace temp macro receiving_radios(charges_receiving_radio, home_ends) as
    case when charges_receiving_radio then greatest(home_ends - 1, 0) else 0 end;

-- The receiving devices' radio energy (kWh, at the device: the wall factor is applied by the
-- caller): receiving_radios x radio_per_byte x the radio busy receiving the bytes for their time
-- at the link rate, at its receive power.
create or replace temp macro receiving_radio_kwh(receiving_radios, radio_per_byte, bytes, bandwidth_mb_per_s, receive_power_w) as
    weighted(receiving_radios, weighted(radio_per_byte, kwh_of_joules(transfer_seconds(bytes, bandwidth_mb_per_s) * receive_power_w)));

-- Pipeline traffic at a fixed global batch when a fleet of n0 online devices in s0 stages is
-- resized to n online devices in s stages: the activations cross s - 1 boundaries whatever n is
-- (activation_bytes_per_stage x (s - 1)), while the n / s replicas all-reduce the whole model
-- every sync: kp x (n / s - 1) bytes, where kp = the all-reduce coefficient of comm_bytes x s0 / n0
-- (the global batch, n0 / s0 replicas of a device batch each, is held).
create or replace temp macro pipeline_bytes_at(activation_bytes_per_stage, kp, n, s) as
    activation_bytes_per_stage * (s - 1) + kp * (n / s - 1);

-- Pipeline completeness: a pipeline of S stages trains only while all S of its devices are
-- online. Each device online a share a of its window, independently of the others
-- (device_online_fraction), the pipeline is complete a^S of the time: 3 stages at a = 0.7,
-- 0.343; 6 stages, 0.118.
create or replace temp macro pipeline_completeness(online_fraction, stages) as power(online_fraction, stages);

-- The share of its training window a device of a pattern trains: its online share, or, in a
-- pattern that splits the model into S stages (core.patterns splits_model), the share its
-- whole pipeline is online, a^S (pipeline_completeness). Where availability is not counted
-- (core.bases counts_availability: a = 1) both are 1.
create or replace temp macro training_share(online_fraction, splits_model, stages) as
    case when splits_model then pipeline_completeness(online_fraction, stages) else online_fraction end;

-- The devices training at once (n) whose links carry a pipeline's traffic in s stages:
-- bytes(n, s) / n <= L W gives n >= (a (s - 1) - kp) / (L W - kp / s), at least s, where L W is
-- what one device can send in its window (finite wherever L W > kp / s), and at least the
-- devices the work needs training at once (n_work: the compute-equivalent fleet x its online
-- share), as a fleet that carries its traffic must still do the job; a larger n sends fewer
-- bytes per device, so the link still carries it.
create or replace temp macro pipeline_training_for_link(activation_bytes_per_stage, kp, s, link_bytes_per_window, n_work) as
    greatest((activation_bytes_per_stage * (s - 1) - kp) / (link_bytes_per_window - kp / s), s, n_work);

-- The fleet a pipeline needs at each stage count s from s0 to the model's layers: the devices
-- training at once (pipeline_training_for_link) over the share of its window a device trains at
-- s stages (training_share: a^s where the pattern splits the model), +inf where no fleet's links
-- carry it at s (each device's share of the all-reduce alone, kp / s, reaches what its link
-- sends). More stages carry the traffic on fewer bytes per device but complete less often.
create or replace temp macro pipeline_fleet_devices(activation_bytes_per_stage, kp, s0, layers, link_bytes_per_window, online_fraction,
                                                    splits_model, n_work) as
    list_transform(range(cast(s0 as bigint), cast(layers as bigint) + 1),
                   lambda s: case when link_bytes_per_window > kp / s
                       then pipeline_training_for_link(activation_bytes_per_stage, kp, s, link_bytes_per_window, n_work)
                            / training_share(online_fraction, splits_model, s)
                       else 'inf'::double end);

-- The fewest devices of a list of pipeline_fleet_devices, null where every stage count is +inf:
-- no stage count lets any fleet carry it, and there is no other bound on the fleet, so a fleet is
-- either carried by a finite fleet or stays over its link.
create or replace temp macro fewest_devices(devices_by_stages) as
    case when isfinite(list_min(devices_by_stages)) then list_min(devices_by_stages) end;

-- The stage count of that fleet: the first (the fewest stages) among equal counts.
create or replace temp macro fewest_devices_stages(devices_by_stages, s0) as
    case when isfinite(list_min(devices_by_stages)) then s0 + list_position(devices_by_stages, list_min(devices_by_stages)) - 1 end;

-- The smallest fleet whose links carry a pipeline's traffic as {devices, n, s}: the fewest devices
-- over the stage counts (pipeline_fleet_devices), n of them training at once, in s stages; null
-- where none can.
create or replace temp macro pipeline_fleet_for_link(activation_bytes_per_stage, kp, s0, layers, link_bytes_per_window, online_fraction,
                                                     splits_model, n_work) as
    case when fewest_devices(pipeline_fleet_devices(activation_bytes_per_stage, kp, s0, layers, link_bytes_per_window, online_fraction,
                                                    splits_model, n_work)) is not null then {
        'devices': fewest_devices(pipeline_fleet_devices(activation_bytes_per_stage, kp, s0, layers, link_bytes_per_window,
                                                         online_fraction, splits_model, n_work)),
        'n': pipeline_training_for_link(activation_bytes_per_stage, kp,
                                        fewest_devices_stages(pipeline_fleet_devices(activation_bytes_per_stage, kp, s0, layers,
                                                                                     link_bytes_per_window, online_fraction,
                                                                                     splits_model, n_work), s0),
                                        link_bytes_per_window, n_work),
        's': fewest_devices_stages(pipeline_fleet_devices(activation_bytes_per_stage, kp, s0, layers, link_bytes_per_window,
                                                          online_fraction, splits_model, n_work), s0)} end;

-- The edge devices of a table of parameter sets (one row per scenario_id, variant_id, one column
-- per model parameter: core.scenarios' columns) as rows: one per set and edge device class, a class
-- being any <class> whose <class>_train_power_w is set, its <class>_<field> parameters under the
-- model's names (null where unset; the fields: schemas/vocabulary.py DEVICE_FIELDS), so a class is
-- added by parameter rows. The model (sql/model/model_rows.sql) reads these rows (its argument `devices`).
create or replace temp macro device_rows(parameter_sets) as table
with long as (
    unpivot (select scenario_id, variant_id, columns('^[a-z][a-z0-9_]*_(tflops|fp16_tflops|mem_bandwidth_gb_per_s|memory_gb|train_power_w|devices_per_gpu|embodied_kgco2e|nonuse_share|lifetime_years|battery_wh|battery_rated_cycles|battery_embodied_share|owner_hours_per_day|owner_cycles_per_year|job_time_s|measured_share|table1_energy_j|hours_per_day|fleet_share|idle_power_w|grid_gco2e_per_kwh)$')::double from query_table(parameter_sets))
    on columns(* exclude (scenario_id, variant_id)) into name name value value
),

classes as (
    select scenario_id, variant_id, name[:-length('_train_power_w') - 1] as device_class
    from long
    where suffix(name, '_train_power_w')
),

fields as (
    select classes.*, long.name[length(classes.device_class) + 2:] as field, long.value
    from classes
    inner join long
        on long.scenario_id = classes.scenario_id and long.variant_id = classes.variant_id
        and starts_with(long.name, classes.device_class || '_')
)

select
    scenario_id,
    variant_id,
    max(value) filter (where field = 'tflops') as device_tflops,
    max(value) filter (where field = 'fp16_tflops') as device_fp16_tflops,
    max(value) filter (where field = 'mem_bandwidth_gb_per_s') as device_bandwidth_gb_per_s,
    max(value) filter (where field = 'memory_gb') as device_memory_gb,
    max(value) filter (where field = 'train_power_w') as train_power_w,
    max(value) filter (where field = 'devices_per_gpu') as stated_devices,
    max(value) filter (where field = 'embodied_kgco2e') as device_embodied_total_kgco2e,
    max(value) filter (where field = 'nonuse_share') as device_nonuse_share,
    max(value) filter (where field = 'lifetime_years') as lifetime_years,
    max(value) filter (where field = 'battery_wh') as battery_wh,
    max(value) filter (where field = 'battery_rated_cycles') as battery_rated_cycles,
    max(value) filter (where field = 'battery_embodied_share') as battery_embodied_share,
    max(value) filter (where field = 'owner_hours_per_day') as owner_hours_per_day,
    max(value) filter (where field = 'owner_cycles_per_year') as owner_cycles_per_year,
    max(value) filter (where field = 'job_time_s') as job_time_s,
    max(value) filter (where field = 'measured_share') as device_measured_share,
    max(value) filter (where field = 'table1_energy_j') as table1_energy_j,
    max(value) filter (where field = 'hours_per_day') as class_hours_per_day,
    max(value) filter (where field = 'fleet_share') as fleet_share,
    max(value) filter (where field = 'idle_power_w') as idle_power_w,
    max(value) filter (where field = 'grid_gco2e_per_kwh') as class_grid_gco2e_per_kwh,
    device_class
from fields
group by scenario_id, variant_id, device_class;

-- The parameters a scenario may leave unset, as typed empty columns: the model reads its inputs united by name
-- with this empty table, so a build whose scenarios set none of them (the paper's alone) still has each column, null
-- (the edge training designs' parameters, whose patterns only a frame that resizes its fleet evaluates, and the
-- link's headroom and activation memory, 1 and 0 where unset).
create or replace temp macro optional_parameters() as table
select null::double as outer_steps_per_sync, null::double as outer_compression, null::double as outer_token_overhead,
    null::double as lean_training_bytes_per_param, null::double as micro_batch_sequences, null::double as fleet_model_heads,
    null::double as max_pipeline_stages, null::double as link_headroom
limit 0;

-- A variant row's columns (core.variants), as typed empty columns with their defaults: a family's file
-- (sql/variants/<family>.sql) selects the columns it sets, united by name with this table, and a column it leaves
-- unset takes the default below (pipelines.model.variants): every basis (bases null, basis_filter 'all'), every
-- pattern its frame admits (patterns null), not its own pattern or designs beside them, the method rows 'all'
-- and no override.
create or replace temp macro variant_columns() as table
select null::varchar as scenario_id, null::varchar as variant_id, null::varchar as family, null::varchar[] as bases,
    null::varchar as basis_filter, null::varchar[] as patterns, null::boolean as own_pattern, null::boolean as designs,
    null::varchar as method_filter, null::struct(network_method varchar, policy varchar, resize_power varchar)[] as method_rows,
    null::struct(parameter varchar, value double, value_text varchar)[] as overrides
limit 0;

-- A mixed fleet as a whole, from the model's rows of its classes (`class_rows`: the name of a table or CTE of
-- the macro model_class_rows' rows, sql/model/model_rows.sql): one row per parameter set, basis, pattern and method row, its
-- classes' devices and carbon summed, R = the cloud job's total / the fleet's added carbon. The summed terms
-- are collected in a list sorted by class and added in that order, so the sums are the same bits every build
-- whatever order DuckDB's threads meet the rows in.
create or replace temp macro fleet_rows(class_rows) as table
    with fleets as (
        select
            scenario_id, variant_id, any_value(family) as family, basis, bool_and(is_headline) as is_headline, pattern, network_method,
            embodied_policy, resize_power, bool_and(is_headline_method) as is_headline_method,
            bool_and(is_headline_policy) as is_headline_policy, bool_and(is_headline_resize_power) as is_headline_resize_power,
            any_value(cloud_gpu_capacity) as cloud_gpu_capacity, any_value(capacity_unit) as capacity_unit,
            any_value(online_fraction) as online_fraction, bool_or(resized_from is not null) as any_resized,
            max(link_time_share) as link_time_share, max(required_link_mb_per_s) as required_link_mb_per_s,
            min(link_mb_per_s) as link_mb_per_s, min(link_headroom) as link_headroom, bool_and(link_feasible) as link_feasible,
            bool_and(is_scenario_design) as is_scenario_design, max(training_memory_gb) as training_memory_gb,
            bool_and(design_admissible) as design_admissible,
            -- the most any of its classes' lines is charged, and physical only where every class is
            max(network_w_per_line) as network_w_per_line, any_value(line_power_physical_max_w) as line_power_physical_max_w,
            bool_and(network_physical) as network_physical, max(implied_device_utilisation) as implied_device_utilisation,
            bool_and(memory_feasible) as memory_feasible, max(job_years) as job_years, max(cloud_gpu_count) as cloud_gpu_count,
            -- sorted by class after collecting (the struct's first field): an ordered aggregate costs far more
            list_sort(list({'class': device_class, 'devices': devices, 'resized_from': coalesce(resized_from, devices),
                            'cloud': cloud_total_kgco2e, 'operational': edge_operational_kgco2e, 'embodied': edge_embodied_kgco2e,
                            'gb': comm_gb, 'kwh': comm_kwh, 'comm': comm_kgco2e, 'added': edge_added_kgco2e,
                            'battery': edge_battery_wear_kgco2e, 'waiting': waiting_device_hours,
                            'share': fleet_share})) as parts
        from query_table(class_rows)
        where fleet_share is not null
        group by scenario_id, variant_id, basis, pattern, network_method, embodied_policy, resize_power
    )
    select
        * exclude (any_resized, parts), 'fleet' as device_class, 'fleet' as devices_from,
        list_sum([p.devices for p in parts]) as devices,
        case when any_resized then list_sum([p.resized_from for p in parts]) end as resized_from,
        list_sum([p.cloud for p in parts]) as cloud_total_kgco2e, list_sum([p.operational for p in parts]) as edge_operational_kgco2e,
        list_sum([p.embodied for p in parts]) as edge_embodied_kgco2e, list_sum([p.battery for p in parts]) as edge_battery_wear_kgco2e,
        list_sum([p.waiting for p in parts]) as waiting_device_hours,
        list_sum([p.gb for p in parts]) as comm_gb,
        list_sum([p.kwh for p in parts]) as comm_kwh, list_sum([p.comm for p in parts]) as comm_kgco2e,
        list_sum([p.added for p in parts]) as edge_added_kgco2e, list_sum([p.share for p in parts]) as fleet_share,
        list_sum([p.cloud for p in parts]) / list_sum([p.added for p in parts]) as reduction_factor
    from fleets
    -- every class of the fleet has this basis and method row (their shares sum to 1)
    where abs(list_sum([p.share for p in parts]) - 1) < 1e-6;
