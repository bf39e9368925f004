"""The Monte Carlo benchmark's numpy baseline: the model's headline reduction factor, vectorised.

A baseline to time ``make bench``'s SQL against and to check it by, not a second model: the
model is ``sql/core/model_evaluation.sql``, and tests/bench/test_bench.py holds this copy to it on every
scenario and branch. A change to the model's formula is made there, then mirrored here.


It evaluates what ``sql/core/model_evaluation.sql`` (over the macros of ``sql/model/macros.sql``)
evaluates for each scenario's headline basis: ``peak_flops`` where the device class has a
stated count, else the basis ``headline_basis`` names (binding or measured_throughput), for both
device classes and all six communication patterns, each under its accounting frame's headline
network method (the first of its :data:`schemas.vocabulary.FRAMES` entry's network methods:
as_published radio, attributional volume, consequential marginal). That covers the job's length by workload
(``job_years``), the accelerators' work (``work_tflops``: a stated count at the devices' peak,
else the accelerator's utilisation x its FP32 roofline) and the tokens it trains on, the
measured basis's floor of devices at their peak, the battery-wear policy's replaced share and its
replacement batteries beyond the rated cycles (:func:`battery_replacements`), the waiting devices (online
while their pipeline is incomplete, a - a^S of the window) at the class's idle power, and
a pipeline fleet grown to keep its pipelines complete (a^S of the window, :func:`training_share`) and,
over its link, resized in the frames that resize (:data:`RESIZING_FRAMES`; no cap). Each draw also carries link_feasible (its fleet sends its
traffic within the window), and the summary is over the feasible draws, as
``sql/model/uncertainty_summary.sql``. Not covered: mixed fleets (a class's ``fleet_share``), whose
'fleet' rows the SQL adds beside the classes'. Every expression keeps the SQL's operand order,
so the two agree to the last few bits (``make bench`` and the tests hold them to 1e-9 relative).

Inputs are :class:`pipelines.model.uncertainty.Draws`: the drawn columns (one row per draw) and each
scenario's constants. A parameter is a numpy array (one value per draw) or a float (the same
for every draw); numpy broadcasting mixes the two, so constants are never copied per draw.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

import numpy as np
import polars as pl
import pyarrow as pa
import pyarrow.compute as pc

from pipelines.model.uncertainty import Draws
from schemas.vocabulary import (
    FRAMES,
    MEASURED_BASIS,
    MEASURED_RATES_BASIS,
    PATTERN_ROWS,
    PATTERNS,
    CommPattern,
)

#: Edge device classes, in report order (the column prefixes of their parameters).
DEVICE_CLASSES = ("laptop", "phone")
#: The summary's quantiles of R (uncertainty_summary.sql: p05, p50, p95).
QUANTILES = (0.05, 0.5, 0.95)
#: Headline bases, as codes of this module: the three a scenario's headline_basis names, and a stated device count.
BINDING, MEASURED, STATED, MEASURED_RATES = 0, 1, 2, 3
#: whole_devices' tolerance: an exact ratio a hair above an integer does not round up.
WHOLE_EPS = 1e-9
#: Each accounting frame's headline network method (core.frames headline_network_method).
HEADLINE_METHODS = {name: frame.network_methods[0] for name, frame in FRAMES.items()}
#: The frames that resize a fleet over its link (core.frames resizes_fleet).
RESIZING_FRAMES = tuple(name for name, frame in FRAMES.items() if frame.resizes_fleet)
#: The link check's tolerance: a fleet is over its link above (1 + this) x what it can send.
LINK_EPS = 1e-9

Value = np.ndarray | float
Params = Mapping[str, Value]


# --- the macros ---------------------------------------------------------------------------


def sql_integer(x: Value) -> Value:
    """``cast(x as integer)`` for a double: rounded to the nearest, halves away from zero."""
    return np.trunc(x + np.copysign(0.5, x))


def choose(condition: Value, if_true: Value, if_false: Value) -> Value:
    """``case when condition then if_true else if_false end``, without a pass over the draws when it is constant."""
    if np.ndim(condition) == 0:
        return if_true if bool(condition) else if_false
    return np.where(condition, if_true, if_false)


def case_of(name: Value | str, branches: Mapping[str, Callable[[], Value]], default: Callable[[], Value]) -> Value:
    """``case name when k then branches[k] ... else default end`` for a name, one for every draw (a
    str) or one per draw (an array of names): only the names present are evaluated."""
    if isinstance(name, str):
        return branches.get(name, default)()
    names = np.asarray(name)
    present = [str(k) for k in np.unique(names)]
    values = [np.broadcast_to(branches.get(k, default)(), np.shape(names)) for k in present]
    if len(present) == 1:
        return values[0]
    return np.select([names == k for k in present], values)


def frame_rule(frame: Value | str, rule: str) -> Value:
    """A rule of each draw's accounting frame (a column of core.frames, e.g. amortises_cloud_embodied)."""
    values = {name: getattr(rules, rule) for name, rules in FRAMES.items()}
    return case_of(frame, {name: (lambda value=value: value) for name, value in values.items()}, lambda: np.nan)


def whole_devices(x: Value) -> Value:
    """A whole number of devices: ceil with a small tolerance."""
    return np.ceil(x - WHOLE_EPS)


def kwh_of_joules(energy_j: Value) -> Value:
    """Joules to kWh."""
    return energy_j / 3.6e6


def transfer_seconds(bytes_moved: Value, bandwidth_mb_per_s: Value) -> Value:
    """Seconds to move ``bytes_moved`` at a link bandwidth in MB/s."""
    return bytes_moved / (bandwidth_mb_per_s * 1e6)


def attainable_tflops(peak_tflops: Value, intensity: Value, bandwidth_gb_per_s: Value) -> Value:
    """Roofline: min(peak, I x bandwidth)."""
    return np.minimum(peak_tflops, intensity * bandwidth_gb_per_s / 1000)


def devices_for_throughput(gpu_capacity: Value, gpu_hours: Value, device_capacity: Value, device_hours: Value,
                           online_fraction: Value, slowdown: Value) -> Value:
    """Devices per GPU on a throughput basis, before rounding."""
    return (gpu_capacity * gpu_hours) / (device_capacity * device_hours * online_fraction / slowdown)


def memory_floor_devices(params: Value, training_bytes_per_param: Value, memory_gb: Value, usable_fraction: Value) -> Value:
    """Devices that hold a model's training state, at least 1."""
    return np.maximum(whole_devices(params * training_bytes_per_param / (memory_gb * 1e9 * usable_fraction)), 1)


def optional(p: Params, name: str, default: float) -> Value:
    """A parameter a scenario may leave unset (sql/model/macros.sql optional_parameters), ``default`` where it does."""
    value = p.get(name, np.nan)
    return choose(np.isnan(value), default, value)


def memory_fits(p: Params, memory_gb: Value, row: CommPattern, stages: Value) -> Value:
    """Whether a device holds what it trains with (sql/model/macros.sql training_memory_bytes against the usable memory):
    its share of the state at the pattern's bytes per parameter, its layers' stored inputs and one layer's working set."""
    s, h, b = p["sequence_length"], p["fleet_model_hidden_size"], optional(p, "micro_batch_sequences", 0.0)
    state = optional(p, "lean_training_bytes_per_param", p["training_bytes_per_param"]) if row.lean_state else p["training_bytes_per_param"]
    split = stages if row.splits_model else 1.0
    need = (p["fleet_model_params"] * state / split + np.ceil(p["fleet_model_layers"] / split) * 2 * s * b * h
            + s * b * h * (34 + 5 * optional(p, "fleet_model_heads", 0.0) * s / h))
    return need / 1e9 <= memory_gb * p["edge_usable_memory_fraction"] * (1 + 1e-12)


def stage_memory_floor(p: Params, memory_gb: Value) -> Value:
    """The fewest stages whose devices hold the training state and its activations (sql/model/macros.sql
    stage_memory_floor; activations 0 where the scenario sets no micro-batch)."""
    s, h, b = p["sequence_length"], p["fleet_model_hidden_size"], optional(p, "micro_batch_sequences", 0.0)
    layer_input = 2 * s * b * h
    working = s * b * h * (34 + 5 * optional(p, "fleet_model_heads", 0.0) * s / h)
    room = memory_gb * 1e9 * p["edge_usable_memory_fraction"] - working - layer_input
    with np.errstate(divide="ignore", invalid="ignore"):
        floor = np.maximum(whole_devices((p["fleet_model_params"] * p["training_bytes_per_param"] + p["fleet_model_layers"] * layer_input)
                                         / room), 1)
    return choose(room > 0, floor, np.nan)


def cloud_operational_kgco2e(power_w: Value, utilisation: Value, hours_per_day: Value, horizon_years: Value, pue: Value,
                             comm_share: Value, grid_gco2e_per_kwh: Value) -> Value:
    """Cloud GPU operational carbon over the horizon: P x u x h x 365 x T x PUE x (1 + comm share) x CI."""
    return power_w * utilisation * hours_per_day * 365 * horizon_years * pue * (1 + comm_share) * grid_gco2e_per_kwh / 1e6


def training_flops(params: Value, tokens: Value) -> Value:
    """Training FLOPs of a dense transformer: 6 x N x D."""
    return 6 * params * tokens


def accelerator_hours(flops: Value, peak_tflops: Value, mfu: Value) -> Value:
    """Accelerator-hours to deliver ``flops`` at a model FLOPs utilisation of a peak in TFLOPS."""
    return flops / (peak_tflops * 1e12 * mfu) / 3600


def job_years(hours: Value, count: Value, hours_per_day: Value) -> Value:
    """Calendar years a job of ``hours`` accelerator-hours takes on ``count`` accelerators."""
    return hours / (count * hours_per_day * 365)


def cloud_embodied_charged_kgco2e(amortised: Value, embodied_kgco2e: Value, horizon_years: Value, life_years: Value) -> Value:
    """Cloud embodied carbon charged to the horizon: amortised over its life where the frame does, in full otherwise."""
    return embodied_kgco2e * choose(amortised, np.minimum(horizon_years / life_years, 1), 1)


def edge_wall_factor(charger_efficiency: Value, battery_throughput_share: Value, round_trip_efficiency: Value) -> Value:
    """Electricity from the wall per unit the device uses: charger and battery round-trip losses."""
    return (1 - battery_throughput_share + battery_throughput_share / round_trip_efficiency) / charger_efficiency


def device_embodied_kgco2e(total_kgco2e: Value, nonuse_share: Value, horizon_years: Value, lifetime_years: Value) -> Value:
    """A device's non-use-phase embodied carbon re-amortised to the horizon."""
    return total_kgco2e * nonuse_share * np.minimum(horizon_years / lifetime_years, 1)


def edge_operational_kgco2e(devices: Value, online_fraction: Value, power_w: Value, hours_per_day: Value, horizon_years: Value,
                            grid_gco2e_per_kwh: Value) -> Value:
    """Training electricity of a fleet over the horizon: devices x online x P x h x 365 x T x CI."""
    return devices * online_fraction * power_w * hours_per_day * 365 * horizon_years * grid_gco2e_per_kwh / 1e6


def battery_cycles(throughput_share: Value, power_w: Value, hours_per_day: Value, online_fraction: Value, horizon_years: Value,
                   battery_wh: Value) -> Value:
    """Extra battery charge cycles per device over the horizon from training."""
    return throughput_share * power_w * hours_per_day * online_fraction * 365 * horizon_years / battery_wh


def battery_replacements(cycles: Value, rated_cycles: Value) -> Value:
    """Replacement batteries the extra cycles take beyond the device's own: ceil(cycles / rated) - 1, at least 0."""
    return np.maximum(whole_devices(cycles / rated_cycles) - 1, 0)


def battery_life_lost_years(rated_cycles: Value, owner_cycles_per_year: Value, training_cycles: Value,
                            horizon_years: Value, lifetime_years: Value) -> Value:
    """Years of device life lost when training's extra cycles wear the battery out early."""
    return np.maximum(np.minimum(rated_cycles / owner_cycles_per_year, lifetime_years)
                      - rated_cycles / (owner_cycles_per_year + training_cycles / horizon_years), 0)


def replaced_share(replacement_share: Value, life_lost_years: Value) -> Value:
    """The share of devices replaced whole because training wore their battery out early (none where no life is lost)."""
    return choose(life_lost_years > 0, replacement_share, 0.0)


def embodied_allocated_kgco2e(policy: Value | str, nonuse_kgco2e: Value, horizon_embodied_kgco2e: Value, battery_embodied_share: Value,
                              cycles: Value, rated_cycles: Value, training_hours_per_day: Value, owner_hours_per_day: Value,
                              owner_cycles_per_year: Value, replacement_share: Value, horizon_years: Value,
                              lifetime_years: Value, battery_kgco2e: Value) -> Value:
    """One device's embodied carbon charged to training, per policy (none, battery_wear, per_use_hour, calendar_time).

    Battery wear: a device replaced whole (replaced_share) is charged its share of service life
    lost, and carries no separate battery wear; the rest are charged their own battery's wear up to
    its rated cycles and a replacement battery's embodied carbon (``battery_kgco2e``) for each
    battery the cycles wear out after it.
    """

    def battery_wear() -> Value:
        lost = battery_life_lost_years(rated_cycles, owner_cycles_per_year, cycles, horizon_years, lifetime_years)
        replaced = replaced_share(replacement_share, lost)
        replacements = battery_replacements(cycles, rated_cycles)
        return (replaced * nonuse_kgco2e * np.minimum(lost / lifetime_years, 1)
                + (1 - replaced) * (nonuse_kgco2e * battery_embodied_share * np.minimum(cycles, rated_cycles) / rated_cycles
                                    + choose(replacements == 0, 0.0, replacements * battery_kgco2e)))

    def per_use_hour() -> Value:
        return horizon_embodied_kgco2e * training_hours_per_day / (training_hours_per_day + owner_hours_per_day)

    def calendar_time() -> Value:
        return horizon_embodied_kgco2e * training_hours_per_day / 24

    return case_of(policy, {"none": lambda: 0.0, "battery_wear": battery_wear, "per_use_hour": per_use_hour,
                            "calendar_time": calendar_time}, lambda: np.nan)


def pipeline_stages(devices_online: Value, layers: Value, min_stages: Value, activation_bytes_per_boundary: Value,
                    allreduce_bytes_per_token: Value) -> Value:
    """Stages of the least-traffic pipeline: the fewest that hold the state, or one per device (at most one per layer)."""
    most = np.minimum(np.maximum(np.floor(devices_online), 1), layers)
    fewest = np.minimum(np.maximum(min_stages, 1), most)
    return choose(activation_bytes_per_boundary > allreduce_bytes_per_token / devices_online, fewest, most)


def weighted(coefficient: float, term: Callable[[], Value]) -> Value:
    """A coefficient of a pattern's row times a term, 0 (the term not computed) where the coefficient is 0."""
    return coefficient * term() if coefficient else 0.0


def comm_bytes(row: CommPattern, devices: Value, params: Value, bytes_per_param: Value, tokens: Value, tokens_per_device_step: Value,
               local_steps_per_sync: Value, hidden_size: Value, activation_bytes: Value, compression: Value,
               stages: Value) -> Value:
    """Bytes a fleet of ``devices`` online devices moves to train on ``tokens`` tokens: the pattern row's coefficients
    times the byte terms."""
    syncs = tokens / (devices * tokens_per_device_step * local_steps_per_sync)
    moved = (weighted(row.sync_n, lambda: syncs * devices * params * bytes_per_param)
             + weighted(row.sync_n_minus_1, lambda: syncs * np.maximum(devices - 1, 0) * params * bytes_per_param)
             + weighted(row.activations, lambda: tokens * 2 * (stages - 1) * hidden_size * activation_bytes)
             + weighted(row.stage_allreduce, lambda: tokens * 2 * params * bytes_per_param / (tokens_per_device_step * local_steps_per_sync)
                        * np.maximum(1 - stages / devices, 0)))
    return moved / compression


def radio_window_kwh(devices_online: Value, radio_power_w: Value, window_s: Value, link_utilisation: Value) -> Value:
    """The paper's radio model: every online device's radio busy for its window at the link utilisation."""
    return devices_online * window_s * link_utilisation * radio_power_w / 3.6e6


def radio_kwh(row: CommPattern, bytes_moved: Value, bandwidth_mb_per_s: Value, radio_power_w: Value, devices_online: Value,
              window_s: Value, link_utilisation: Value) -> Value:
    """The sending device's radio energy (kWh, at the device): the pattern row's coefficients times the radio window
    and the radio busy for the bytes at the link rate."""
    return (weighted(row.radio_per_window, lambda: radio_window_kwh(devices_online, radio_power_w, window_s, link_utilisation))
            + weighted(row.radio_per_byte, lambda: kwh_of_joules(transfer_seconds(bytes_moved, bandwidth_mb_per_s) * radio_power_w)))


def receiving_radios(frame: Value | str, row: CommPattern) -> Value:
    """The devices that receive each byte besides its sender (the pattern's home ends but the sender's) where each
    draw's accounting frame charges their radio (core.frames charges_receiving_radio), else 0."""
    receivers = float(max(row.home_ends - 1, 0))
    return case_of(frame, {name: (lambda charged=rules.charges_receiving_radio: receivers if charged else 0.0)
                           for name, rules in FRAMES.items()}, lambda: np.nan)


def receiving_radio_kwh(receivers: Value, row: CommPattern, bytes_moved: Value, bandwidth_mb_per_s: Value,
                        receive_power_w: Value) -> Value:
    """The receiving devices' radio energy (kWh, at the device): receivers x the pattern row's radio_per_byte x the
    radio busy receiving the bytes for their time at the link rate, at its receive power; 0 where no device receives
    (whatever the term, as the SQL's weighted)."""
    def term() -> Value:
        return weighted(row.radio_per_byte, lambda: kwh_of_joules(transfer_seconds(bytes_moved, bandwidth_mb_per_s) * receive_power_w))

    if np.ndim(receivers) == 0:
        return weighted(float(receivers), term)
    with np.errstate(invalid="ignore"):
        return np.where(receivers == 0, 0.0, receivers * term())


def network_kwh(method: str, gb: Value, home_ends: int, server_ends: int, network_kwh_per_gb: Value, router_kwh_per_gb: Value,
                network_marginal_w_per_mbps: Value, router_marginal_w_per_mbps: Value, line_w: Value, line_share: Value,
                line_hours: Value) -> Value:
    """Network energy of a pattern's traffic (kWh) by network method: radio, volume, marginal or time."""
    if method == "radio":
        return gb * (network_kwh_per_gb + router_kwh_per_gb)
    if method == "volume":
        return gb * (home_ends * (network_kwh_per_gb + router_kwh_per_gb) + server_ends * network_kwh_per_gb)
    if method == "marginal":
        per_mbps = network_marginal_w_per_mbps + home_ends * router_marginal_w_per_mbps if home_ends + server_ends > 0 else 0
        return gb * per_mbps * 8000 / 3.6e6
    if method == "time":
        return line_w * line_share * line_hours / 1000 if home_ends + server_ends > 0 else 0
    raise ValueError(f"unknown network method {method!r}")


def pipeline_bytes_at(activation_bytes_per_stage: Value, kp: Value, n: Value, s: Value) -> Value:
    """Pipeline traffic at a fixed global batch for ``n`` online devices in ``s`` stages."""
    return activation_bytes_per_stage * (s - 1) + kp * (n / s - 1)


def pipeline_completeness(online_fraction: Value, stages: Value) -> Value:
    """The share of the time all S stages of a pipeline are online, each independently a share a: a^S."""
    return np.power(online_fraction, stages)


def training_share(online_fraction: Value, splits_model: bool, stages: Value) -> Value:
    """The share of its window a device trains: its online share, or a^S where the pattern splits the model."""
    return pipeline_completeness(online_fraction, stages) if splits_model else online_fraction


def pipeline_fleet_for_link(activation_bytes_per_stage: Value, kp: Value, s0: Value, layers: Value,
                            link_bytes_per_window: Value, online_fraction: Value,
                            splits_model: bool, n_work: Value = 0.0) -> tuple[np.ndarray, np.ndarray]:
    """The smallest fleet whose links carry a pipeline's traffic, as (devices, s) per draw (NaN where none can).

    For each stage count s from s0 to the layers where the link beats each device's share of the
    all-reduce, n = max((a (s - 1) - kp) / (L W - kp / s), s, n_work) devices training at once (at
    least the devices the work needs training at once), over the
    share of its window a device trains at s stages (:func:`training_share`); the fewest devices,
    then the least s (``list_min`` of the SQL's {devices, n, s} structs), over a draws x stage counts grid.
    """
    a, kp, s0, layers, link, online, work = np.broadcast_arrays(*(np.atleast_1d(np.asarray(x, dtype=np.float64))
                                                                  for x in (activation_bytes_per_stage, kp, sql_integer(s0),
                                                                            sql_integer(layers), link_bytes_per_window,
                                                                            online_fraction, n_work)))
    s = np.arange(np.min(s0), np.max(layers) + 1, dtype=np.float64) if a.size else np.empty(0)
    if s.size == 0:
        return np.full(a.shape, np.nan), np.full(a.shape, np.nan)
    a, kp, s0, layers, link, online, work = (x[:, None] for x in (a, kp, s0, layers, link, online, work))
    valid = (s >= s0) & (s <= layers) & (link > kp / s)
    with np.errstate(divide="ignore", invalid="ignore"):
        n = np.where(valid, np.maximum(np.maximum((a * (s - 1) - kp) / (link - kp / s), s), work)
                     / training_share(online, splits_model, s), np.inf)
    best = np.argmin(n, axis=1)  # the first fewest devices: the least s among equal counts
    rows = np.arange(n.shape[0])
    found = valid[rows, best]
    return np.where(found, n[rows, best], np.nan), np.where(found, s[best], np.nan)


# --- the evaluation -----------------------------------------------------------------------


@dataclass(frozen=True)
class Fleet:
    """A device class's fleet per draw on its headline basis: devices, the fraction of them online,
    and the work one accelerator delivers (TFLOPS) on the basis that counts them."""

    devices: Value
    online_fraction: Value
    work_tflops: Value


@dataclass(frozen=True)
class Cloud:
    """What the cloud side contributes per draw, the same for every device class and pattern."""

    total_kgco2e: Value
    attainable_tflops: Value
    speedup_vs_ref: Value
    job_years: Value
    #: the main GPU's measured training rate at the variant's share of its FP16/BF16 peak
    measured_tflops: Value


def cloud(p: Params) -> Cloud:
    """The cloud GPUs (main or alternative variant): the job's length, its carbon and the roofline speed."""
    alt = sql_integer(p["cloud_gpu_variant"]) == 1
    power_w = choose(alt, p["cloud_alt_gpu_power_w"], p["cloud_gpu_power_w"])
    tflops = choose(alt, p["cloud_alt_gpu_tflops"], p["cloud_gpu_tflops"])
    fp16_tflops = choose(alt, p["cloud_alt_gpu_fp16_tflops"], p["cloud_gpu_fp16_tflops"])
    bandwidth = choose(alt, p["cloud_alt_gpu_mem_bandwidth_gb_per_s"], p["cloud_gpu_mem_bandwidth_gb_per_s"])
    speedup = choose(alt, p["cloud_alt_speedup_vs_ref"], p["cloud_speedup_vs_ref"])
    count, hours = p["cloud_gpu_count"], p["cloud_hours_per_day"]
    years = case_of(p["workload_kind"], {
        "gpu_hours": lambda: job_years(p["workload_gpu_hours"], count, hours),
        "params_tokens": lambda: job_years(accelerator_hours(training_flops(p["fleet_model_params"], p["workload_tokens"]), fp16_tflops,
                                               p["workload_mfu"]), count, hours),
    }, lambda: p["horizon_years"])
    total = count * (
        cloud_embodied_charged_kgco2e(frame_rule(p["accounting_frame"], "amortises_cloud_embodied"), p["cloud_gpu_embodied_kgco2e"],
                                      years, p["cloud_embodied_life_years"])
        + cloud_operational_kgco2e(power_w + p["cloud_node_overhead_w"], p["cloud_utilisation"], hours, years, p["cloud_pue"],
                                   p["cloud_comm_energy_share"], p["cloud_grid_gco2e_per_kwh"]))
    attainable = attainable_tflops(tflops, p["arithmetic_intensity_flop_per_byte"], bandwidth)
    measured = p.get("cloud_gpu_measured_tflops", np.nan) * choose(alt, p["cloud_alt_gpu_fp16_tflops"] / p["cloud_gpu_fp16_tflops"], 1.0)
    return Cloud(total, attainable, speedup, years, measured)


def headline_codes(p: Params, stated: Value) -> Value:
    """Each draw's headline basis: STATED where a count is stated, else the basis the scenario's headline_basis names."""
    named = np.asarray(p["headline_basis"])
    measured = choose(named == MEASURED_BASIS, MEASURED, choose(named == MEASURED_RATES_BASIS, MEASURED_RATES, BINDING))
    return choose(~np.isnan(stated), STATED, measured)


def fleet_on_basis(p: Params, c: str, gpu: Cloud, hours: Value, basis: int, stated: Value, memory_exact: Value) -> Fleet:
    """Devices (x the device multiplier x the accelerators), online fraction and work of class ``c`` on one headline basis."""
    multiplier, count, cloud_hours = p["device_multiplier"], p["cloud_gpu_count"], p["cloud_hours_per_day"]
    if basis == STATED:
        return Fleet(whole_devices(stated) * multiplier * count, 1.0, stated * p[f"{c}_tflops"] * hours / cloud_hours)
    gpu_work = p["cloud_utilisation"] * gpu.attainable_tflops
    online, slowdown = p["device_online_fraction"], p["straggler_slowdown"]
    if basis == MEASURED:
        gpu_capacity = 3600 * gpu.speedup_vs_ref / p["cloud_ref_job_time_s"]
        device_capacity = 3600 / p[f"{c}_job_time_s"]
    elif basis == MEASURED_RATES:
        # measured training TFLOPS of both sides; the GPU's work is its measured rate (unless a job of tokens sets it)
        gpu_work = choose(np.asarray(p["workload_kind"]) == "params_tokens", gpu_work, gpu.measured_tflops)
        gpu_capacity = gpu_work
        device_capacity = p[f"{c}_measured_share"] * p[f"{c}_tflops"]
    else:
        gpu_capacity = gpu.attainable_tflops * p["cloud_utilisation"]
        device_capacity = attainable_tflops(p[f"{c}_tflops"], p["arithmetic_intensity_flop_per_byte"],
                                            p[f"{c}_mem_bandwidth_gb_per_s"])
    exact = np.maximum(devices_for_throughput(gpu_capacity, cloud_hours, device_capacity, hours, online, slowdown),
                       whole_devices(memory_exact))
    if basis == MEASURED:
        # devices cannot run above their peak: at least those that deliver the GPU's work at it
        exact = np.maximum(exact, devices_for_throughput(gpu_work, cloud_hours, p[f"{c}_tflops"], hours, online, slowdown))
    return Fleet(whole_devices(exact) * multiplier * count, online, gpu_work)


def headline_fleet(p: Params, c: str, gpu: Cloud, hours: Value, memory_stages: Value) -> Fleet:
    """The fleet of class ``c`` on each draw's headline basis (the bases present, merged per draw)."""
    stated = whole_devices(p[f"{c}_devices_per_gpu"] * (p["cloud_hours_per_day"] / p["devices_stated_cloud_hours_per_day"])
                           * (p["devices_stated_hours_per_day"] / hours))
    memory_exact = memory_stages / memory_floor_devices(p["fleet_model_params"], p["training_bytes_per_param"],
                                                        p["cloud_gpu_memory_gb"], p["cloud_usable_memory_fraction"])
    codes = headline_codes(p, stated)
    present = [int(code) for code in np.unique(codes)]
    fleets = {basis: fleet_on_basis(p, c, gpu, hours, basis, stated, memory_exact) for basis in present}
    if len(present) == 1:
        return fleets[present[0]]
    conditions = [codes == b for b in present]

    def merged(field: str) -> np.ndarray:
        return np.select(conditions, [np.broadcast_to(getattr(fleets[b], field), np.shape(codes)) for b in present])

    return Fleet(merged("devices"), merged("online_fraction"), merged("work_tflops"))


@dataclass(frozen=True)
class Traffic:
    """A pattern's fleet per draw, grown to keep its pipelines complete and resized where its frame resizes a
    fleet over its link: devices, bytes moved, and the share of its window a device trains."""

    devices: Value
    comm_bytes: Value
    training_share: Value
    #: the stages of a pattern that splits the model (NaN for one that does not)
    stages: Value = np.nan


def pattern_traffic(p: Params, pattern: str, fleet: Fleet, tokens: Value, window_s: Value, memory_stages: Value) -> Traffic:
    """The pattern's traffic from the compute-equivalent fleet; a pattern that splits the model needs the devices
    training at once over a^S (its pipelines complete a^S of the window), and a pipeline over its link in a
    resizing frame is resized to the fewest devices (and stages) that carry it."""
    devices, online = fleet.devices, fleet.online_fraction
    row = PATTERN_ROWS[pattern]
    if not row.moves_bytes:
        return Traffic(devices, 0.0, online)
    params, bytes_per_param, compression = p["fleet_model_params"], p["bytes_per_param"], p["comm_compression"]
    tokens_per_step, local_steps = p["batch_size"] * p["sequence_length"], p["local_steps_per_sync"]
    hidden, activation = p["fleet_model_hidden_size"], p["activation_bytes"]
    # the deepest pipeline: one stage per layer, at most max_pipeline_stages
    layers = np.minimum(p["fleet_model_layers"], optional(p, "max_pipeline_stages", np.inf))
    n = devices * online
    stages = (pipeline_stages(n, layers, memory_stages, weighted(row.activations, lambda: 2 * hidden * activation),
                              weighted(row.stage_allreduce, lambda: 2 * params * bytes_per_param / (tokens_per_step * local_steps)))
              if row.splits_model else np.nan)
    base = comm_bytes(row, n, params, bytes_per_param, tokens, tokens_per_step, local_steps, hidden, activation, compression,
                      stages)
    resizable = row.resizable and np.isin(p["accounting_frame"], RESIZING_FRAMES)
    if not row.splits_model and not np.any(resizable):
        return Traffic(devices, base, online)
    devices_complete = (whole_devices(devices * online / training_share(online, row.splits_model, stages)) if row.splits_model
                        else devices)
    link = p["edge_bandwidth_mb_per_s"] * 1e6 * window_s * optional(p, "link_headroom", 1.0)
    per_stage = row.activations * (tokens * 2 * hidden * activation / compression)
    kp = row.stage_allreduce * (tokens * 2 * params * bytes_per_param / (tokens_per_step * local_steps * compression) * stages / (devices * online))
    over = np.broadcast_to(resizable & (base / n > link * (1 + LINK_EPS)), np.shape(base / n))
    shape = np.broadcast_shapes(np.shape(over), np.shape(per_stage), np.shape(kp), np.shape(stages), np.shape(link),
                                np.shape(devices), np.shape(online))
    over = np.broadcast_to(over, shape)

    def at_over(x: Value) -> np.ndarray:
        return np.broadcast_to(x, shape)[over]

    d_link, s_link = np.full(shape, np.nan), np.full(shape, np.nan)
    if np.any(over):
        d_link[over], s_link[over] = pipeline_fleet_for_link(at_over(per_stage), at_over(kp), at_over(stages), at_over(layers),
                                                             at_over(link), at_over(online), row.splits_model, at_over(n))
    resized = ~np.isnan(d_link)
    with np.errstate(invalid="ignore"):
        devices_pattern = np.where(resized, np.maximum(whole_devices(d_link), devices_complete), devices_complete)
    stages_pattern = np.where(resized, s_link, stages)
    share = training_share(online, row.splits_model, stages_pattern)
    changed = (devices_pattern != devices) | (stages_pattern != stages)
    moved = np.where(changed, pipeline_bytes_at(per_stage, kp, devices_pattern * share, stages_pattern), base)
    return Traffic(devices_pattern, moved, share, stages_pattern)


def headline_network_kwh(p: Params, pattern: str, gb: Value, line_hours: Value) -> Value:
    """network_kwh under each draw's accounting frame's headline network method."""
    home_ends, server_ends = PATTERN_ROWS[pattern].home_ends, PATTERN_ROWS[pattern].server_ends

    def by(method: str) -> Callable[[], Value]:
        return lambda: network_kwh(method, gb, home_ends, server_ends, p["network_kwh_per_gb"], p["router_kwh_per_gb"],
                                   p["network_marginal_w_per_mbps"], p["router_marginal_w_per_mbps"], p["line_power_w"],
                                   p["line_training_share"], line_hours)

    return case_of(p["accounting_frame"], {frame: by(method) for frame, method in HEADLINE_METHODS.items()}, lambda: np.nan)


def job_tokens(p: Params, work_tflops: Value, years: Value) -> Value:
    """Tokens of the job: the workload's, or what the accelerators train on over it: their work / (6 x params FLOPs per token)."""
    return case_of(p["workload_kind"], {"params_tokens": lambda: p["workload_tokens"]},
                   lambda: (p["cloud_gpu_count"] * work_tflops * 1e12 * 3600 * p["cloud_hours_per_day"] * 365 * years
                            / training_flops(p["fleet_model_params"], 1)))


def link_feasible(pattern: str, comm_bytes_moved: Value, devices_online: Value, bandwidth_mb_per_s: Value, window_s: Value,
                  headroom: Value = 1.0) -> Value:
    """Whether each online device sends its share within its training window below the link's headroom: radio time /
    window <= headroom (+ 1e-9)."""
    if not PATTERN_ROWS[pattern].moves_bytes:
        return True
    return comm_bytes_moved / devices_online / (bandwidth_mb_per_s * 1e6) / window_s <= headroom * (1 + LINK_EPS)


def reduction_factors(p: Params, n_draws: int) -> dict[tuple[str, str], tuple[np.ndarray, np.ndarray]]:
    """R on the headline basis and network method per (device class, pattern), one value per draw,
    and whether the draw's fleet can send its traffic over its links (link_feasible)."""
    gpu = cloud(p)
    years = gpu.job_years
    wall = edge_wall_factor(p["edge_charger_efficiency"], p["battery_throughput_share"], p["battery_round_trip_efficiency"])
    grid = p["edge_grid_gco2e_per_kwh"]
    out: dict[tuple[str, str], tuple[np.ndarray, np.ndarray]] = {}
    for c in DEVICE_CLASSES:
        hours = p.get(f"{c}_hours_per_day", np.nan)
        hours = choose(np.isnan(hours), p["edge_hours_per_day"], hours)
        memory_stages = memory_floor_devices(p["fleet_model_params"], p["training_bytes_per_param"], p[f"{c}_memory_gb"],
                                             p["edge_usable_memory_fraction"])
        fleet = headline_fleet(p, c, gpu, hours, memory_stages)
        online = fleet.online_fraction
        tokens = job_tokens(p, fleet.work_tflops, years)
        window_s = hours * 3600 * 365 * years
        power = p[f"{c}_train_power_w"]
        # a waiting device (online, its pipeline incomplete) draws the class's idle power, its training power where it has none
        idle = p.get(f"{c}_idle_power_w", np.nan)
        idle = choose(np.isnan(idle), power, idle)
        battery_kg = p[f"{c}_battery_wh"] / 1000 * p["battery_embodied_kgco2e_per_kwh"]
        operational = edge_operational_kgco2e(1, online, power * wall, hours, years, grid)
        embodied = embodied_allocated_kgco2e(
            p["edge_embodied_policy"], p[f"{c}_embodied_kgco2e"] * p[f"{c}_nonuse_share"],
            device_embodied_kgco2e(p[f"{c}_embodied_kgco2e"], p[f"{c}_nonuse_share"], years, p[f"{c}_lifetime_years"]),
            p[f"{c}_battery_embodied_share"],
            battery_cycles(p["battery_throughput_share"], power, hours, online, years, p[f"{c}_battery_wh"]),
            p[f"{c}_battery_rated_cycles"], hours * online, p[f"{c}_owner_hours_per_day"], p[f"{c}_owner_cycles_per_year"],
            p["device_replacement_share"], years, p[f"{c}_lifetime_years"], battery_kg)
        for pattern in PATTERNS:
            traffic = pattern_traffic(p, pattern, fleet, tokens, window_s, stage_memory_floor(p, p[f"{c}_memory_gb"]))
            devices_online = traffic.devices * traffic.training_share
            if PATTERN_ROWS[pattern].splits_model:  # each term at the share of its window a device trains
                share = traffic.training_share
                operational_pattern = edge_operational_kgco2e(1, share, power * wall, hours, years, grid)
                embodied_pattern = embodied_allocated_kgco2e(
                    p["edge_embodied_policy"], p[f"{c}_embodied_kgco2e"] * p[f"{c}_nonuse_share"],
                    device_embodied_kgco2e(p[f"{c}_embodied_kgco2e"], p[f"{c}_nonuse_share"], years, p[f"{c}_lifetime_years"]),
                    p[f"{c}_battery_embodied_share"],
                    battery_cycles(p["battery_throughput_share"], power, hours, share, years, p[f"{c}_battery_wh"]),
                    p[f"{c}_battery_rated_cycles"], hours * share, p[f"{c}_owner_hours_per_day"], p[f"{c}_owner_cycles_per_year"],
                    p["device_replacement_share"], years, p[f"{c}_lifetime_years"], battery_kg)
                # the waiting devices: online while their pipeline is incomplete, a - a^S of the window, at idle power
                waiting = choose(online > share, edge_operational_kgco2e(traffic.devices, online - share, idle * wall, hours, years, grid),
                                 0.0)
            else:
                operational_pattern, embodied_pattern, waiting = operational, embodied, 0.0
            row = PATTERN_ROWS[pattern]
            comm = ((radio_kwh(row, traffic.comm_bytes, p["edge_bandwidth_mb_per_s"], p["wifi_radio_power_w"], devices_online,
                               window_s, p["link_utilisation"])
                     + receiving_radio_kwh(receiving_radios(p["accounting_frame"], row), row, traffic.comm_bytes,
                                           p["edge_bandwidth_mb_per_s"], p["wifi_receive_power_w"])) * wall
                    + headline_network_kwh(p, pattern, traffic.comm_bytes / 1e9, devices_online * window_s / 3600))
            r = gpu.total_kgco2e / (traffic.devices * operational_pattern + waiting + traffic.devices * embodied_pattern
                                    + comm * grid / 1000)
            feasible = link_feasible(pattern, traffic.comm_bytes, devices_online, p["edge_bandwidth_mb_per_s"], window_s,
                                     optional(p, "link_headroom", 1.0))
            if row.edge_design:  # an edge training design runs only where its devices hold its memory (design_admissible)
                feasible = feasible & memory_fits(p, p[f"{c}_memory_gb"], row, traffic.stages)
            out[(c, pattern)] = (np.broadcast_to(np.asarray(r, dtype=np.float64), (n_draws,)),
                                 np.broadcast_to(np.asarray(feasible, dtype=bool), (n_draws,)))
    return out


# --- from draws to values and summaries ---------------------------------------------------


def _number(value: object) -> float | str:
    """A constant as a float (null as NaN: the SQL's null stated count); a name as itself."""
    if isinstance(value, str):
        return value
    return np.nan if value is None else float(value)  # type: ignore[arg-type]


def scenario_params(draws: Draws) -> dict[str, tuple[np.ndarray, dict[str, Value]]]:
    """Per scenario: its draws' variant ids and its parameters (drawn columns as arrays, constants as floats)."""
    out: dict[str, tuple[np.ndarray, dict[str, Value]]] = {}
    drawn: pa.Table = draws.drawn
    scenarios = pc.unique(drawn.column("scenario_id")).to_pylist()
    names = [name for name in drawn.column_names if name not in ("scenario_id", "variant_id")]
    for row in draws.constants.iter_rows(named=True):
        scenario = row["scenario_id"]
        if scenario not in scenarios:
            continue
        own = drawn if len(scenarios) == 1 else drawn.filter(pc.equal(drawn.column("scenario_id"), scenario))
        params: dict[str, Value] = {k: _number(v) for k, v in row.items() if k != "scenario_id"}
        for name in names:
            params[name] = own.column(name).to_numpy()
        out[scenario] = (own.column("variant_id").to_numpy(), params)
    return out


def evaluate(draws: Draws) -> pl.DataFrame:
    """R per draw: scenario_id, variant_id, device_class, pattern, reduction_factor, link_feasible
    (headline basis, each frame's headline network method)."""
    frames = []
    for scenario, (variants, params) in scenario_params(draws).items():
        for (c, pattern), (r, feasible) in reduction_factors(params, len(variants)).items():
            frames.append(pl.DataFrame({"scenario_id": scenario, "variant_id": variants, "device_class": c,
                                        "pattern": pattern, "reduction_factor": r, "link_feasible": feasible}))
    return pl.concat(frames)


def summarize(draws: Draws) -> pl.DataFrame:
    """p05, p50, p95 (linear interpolation, as DuckDB's quantile_cont) and mean of R per scenario x class x pattern.

    As uncertainty_summary.sql, over the draws whose fleet can send its traffic (n_feasible of
    n_draws); NaN where none can (the SQL's null).
    """
    rows = []
    for scenario, (variants, params) in scenario_params(draws).items():
        for (c, pattern), (r, feasible) in reduction_factors(params, len(variants)).items():
            kept = r if feasible.all() else r[feasible]
            p05, p50, p95 = np.quantile(kept, QUANTILES) if kept.size else (np.nan,) * len(QUANTILES)
            mean = np.mean(kept) if kept.size else np.nan
            rows.append({"scenario_id": scenario, "device_class": c, "pattern": pattern, "n_draws": len(r),
                         "n_feasible": int(kept.size), "p05": float(p05), "p50": float(p50), "p95": float(p95),
                         "mean": float(mean)})
    return pl.DataFrame(rows).sort("scenario_id", "device_class", "pattern")
