-- The model's formulas, written once. Every mart, the sensitivity and break-even searches and
-- the Monte Carlo evaluation call these macros, so one formula serves a scenario and a million
-- draws. Units are in the argument names; energies in kWh, carbon in kgCO2e, grid in g/kWh.

-- A whole number of devices: ceil, with a small epsilon so an exact ratio such as
-- 15.000000000001 does not round up to 16.
create or replace temp macro whole_devices(x) as ceil(x - 1e-9);

-- Roofline-attainable throughput (TFLOPS) at arithmetic intensity I (FLOP/byte):
-- min(peak, I x bandwidth).
create or replace temp macro attainable_tflops(peak_tflops, intensity_flop_per_byte, bandwidth_gb_per_s) as
    least(peak_tflops, intensity_flop_per_byte * bandwidth_gb_per_s / 1000);

-- Devices per cloud GPU on a throughput basis, before rounding:
-- (X_gpu x h_gpu) / (X_dev x h_dev x online fraction / slowdown).
create or replace temp macro devices_for_throughput(gpu_capacity, gpu_hours, device_capacity, device_hours, online_fraction, slowdown) as
    (gpu_capacity * gpu_hours) / (device_capacity * device_hours * online_fraction / slowdown);

-- Devices needed to hold a model's training state: params x training bytes per param /
-- (memory x usable fraction), at least 1.
create or replace temp macro memory_floor_devices(params, training_bytes_per_param, memory_gb, usable_fraction) as
    greatest(whole_devices(params * training_bytes_per_param / (memory_gb * 1e9 * usable_fraction)), 1);

-- Cloud GPU operational carbon over the horizon (MLCO2 method when utilisation = PUE = 1 and the
-- cluster communication share is 0): P x utilisation x h x 365 x T x PUE x (1 + comm share) x CI.
create or replace temp macro cloud_operational_kgco2e(power_w, utilisation, hours_per_day, horizon_years, pue, comm_share, grid_gco2e_per_kwh) as
    power_w * utilisation * hours_per_day * 365 * horizon_years * pue * (1 + comm_share) * grid_gco2e_per_kwh / 1e6;

-- A device's non-use-phase embodied carbon re-amortised to the horizon:
-- report total x non-use share x min(T / report lifetime, 1).
create or replace temp macro device_embodied_kgco2e(total_kgco2e, nonuse_share, horizon_years, lifetime_years) as
    total_kgco2e * nonuse_share * least(horizon_years / lifetime_years, 1);

-- Training electricity of a fleet over the horizon: devices x online fraction x P x h x 365 x T x CI.
create or replace temp macro edge_operational_kgco2e(devices, online_fraction, power_w, hours_per_day, horizon_years, grid_gco2e_per_kwh) as
    devices * online_fraction * power_w * hours_per_day * 365 * horizon_years * grid_gco2e_per_kwh / 1e6;

-- Extra battery charge cycles per device over the horizon from training:
-- battery throughput share x P x h x online x 365 x T / battery capacity (Wh).
create or replace temp macro battery_cycles(throughput_share, power_w, hours_per_day, online_fraction, horizon_years, battery_wh) as
    throughput_share * power_w * hours_per_day * online_fraction * 365 * horizon_years / battery_wh;

-- Embodied carbon of one device charged to training over the horizon, per allocation policy:
--   0 none: devices are owned anyway (the paper);
--   1 battery wear: the battery's share of the device's non-use-phase embodied carbon x extra
--     charge cycles / rated cycles (more cycles than rated means replacement batteries);
--   2 per use hour: the embodied carbon re-amortised to the horizon x training hours /
--     (training hours + the owner's own use hours).
create or replace temp macro embodied_allocated_kgco2e(policy, nonuse_kgco2e, horizon_embodied_kgco2e, battery_embodied_share, cycles, rated_cycles, training_hours_per_day, owner_hours_per_day) as
    case cast(policy as integer)
        when 0 then 0.0
        when 1 then nonuse_kgco2e * battery_embodied_share * cycles / rated_cycles
        when 2 then horizon_embodied_kgco2e * training_hours_per_day / (training_hours_per_day + owner_hours_per_day)
    end;

-- Bytes a fleet of N devices moves to train on `tokens` tokens, per communication pattern:
--   data-parallel patterns: each device trains on its own batch of `tokens_per_device_step`
--     tokens and the fleet synchronises every `local_steps_per_sync` steps, so
--     syncs = tokens / (N x tokens per device step x local steps); per sync
--       idealized (the paper's footnote 1): every device sends the parameters once: N p b;
--       parameter_server: push gradients and pull parameters: 2 N p b;
--       ring_allreduce: 2 (N - 1) / N x p b per device: 2 (N - 1) p b;
--   pipeline: the model is split into N stages; every token's activations cross the N - 1
--     stage boundaries forward and their gradients backward: tokens x 2 (N - 1) x hidden x
--     activation bytes;
-- all divided by the compression factor.
create or replace temp macro comm_bytes(pattern, devices, params, bytes_per_param, tokens, tokens_per_device_step, local_steps_per_sync, hidden_size, activation_bytes, compression) as
    case pattern
        when 'idealized' then tokens / (devices * tokens_per_device_step * local_steps_per_sync) * devices * params * bytes_per_param
        when 'parameter_server' then tokens / (devices * tokens_per_device_step * local_steps_per_sync) * 2 * devices * params * bytes_per_param
        when 'ring_allreduce' then tokens / (devices * tokens_per_device_step * local_steps_per_sync) * 2 * greatest(devices - 1, 0) * params * bytes_per_param
        when 'pipeline' then tokens * 2 * greatest(devices - 1, 0) * hidden_size * activation_bytes
        else 0.0
    end / compression;

-- Communication energy of moving bytes: the device radio for the time at the link bandwidth
-- plus the network's energy per GB.
create or replace temp macro comm_kwh(bytes, bandwidth_mb_per_s, radio_power_w, network_kwh_per_gb) as
    bytes / (bandwidth_mb_per_s * 1e6) * radio_power_w / 3.6e6 + bytes / 1e9 * network_kwh_per_gb;

-- The paper's radio model: every online device's radio busy for the training window at the
-- link utilisation, plus the data that moves at the link bandwidth meanwhile x network kWh/GB.
create or replace temp macro radio_window_kwh(devices_online, radio_power_w, bandwidth_mb_per_s, window_s, link_utilisation, network_kwh_per_gb) as
    devices_online * window_s * link_utilisation * (radio_power_w / 3.6e6 + bandwidth_mb_per_s * 1e6 / 1e9 * network_kwh_per_gb);
