"""The model's headline reduction factor in numpy: the Monte Carlo benchmark's baseline.

It evaluates what ``sql/model/evaluate.sql`` (over the macros of ``sql/model/macros.sql``)
evaluates for each scenario's headline basis: ``peak_flops`` where the device class has a
stated count, else ``headline_basis`` (0 binding, 1 measured_throughput), for both device
classes and all six communication patterns. Every expression keeps the SQL's operand order,
so the two agree to the last few bits (``make bench`` and the tests hold them to 1e-9
relative).

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
from schemas.vocabulary import PATTERNS

#: Edge device classes, in report order (the column prefixes of their parameters).
DEVICE_CLASSES = ("laptop", "phone")
#: The summary's quantiles of R (uncertainty_summary.sql: p05, p50, p95).
QUANTILES = (0.05, 0.5, 0.95)
#: Headline bases, as codes: scenario headline_basis 0 and 1, and a stated device count.
BINDING, MEASURED, STATED = 0, 1, 2
#: whole_devices' tolerance: an exact ratio a hair above an integer does not round up.
WHOLE_EPS = 1e-9

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


def whole_devices(x: Value) -> Value:
    """A whole number of devices: ceil with a small tolerance."""
    return np.ceil(x - WHOLE_EPS)


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


def network_kwh_per_gb_for_frame(frame: Value, network_kwh_per_gb: Value, router_kwh_per_gb: Value,
                                 network_marginal_w_per_mbps: Value, router_marginal_w_per_mbps: Value) -> Value:
    """Network energy per GB: marginal power in the consequential frame (2), average intensities otherwise."""
    return choose(sql_integer(frame) == 2,
                  (network_marginal_w_per_mbps + router_marginal_w_per_mbps) * 8000 / 3.6e6,
                  network_kwh_per_gb + router_kwh_per_gb)


def edge_wall_factor(charger_efficiency: Value, battery_throughput_share: Value, round_trip_efficiency: Value) -> Value:
    """Electricity from the wall per unit the device uses: charger and battery round-trip losses."""
    return (1 - battery_throughput_share + battery_throughput_share / round_trip_efficiency) / charger_efficiency


def battery_life_lost_years(rated_cycles: Value, owner_cycles_per_year: Value, training_cycles: Value,
                            horizon_years: Value, lifetime_years: Value) -> Value:
    """Years of device life lost when training's extra cycles wear the battery out early."""
    return np.maximum(np.minimum(rated_cycles / owner_cycles_per_year, lifetime_years)
                      - rated_cycles / (owner_cycles_per_year + training_cycles / horizon_years), 0)


def pipeline_stages(devices_online: Value, layers: Value, min_stages: Value, activation_bytes_per_boundary: Value,
                    allreduce_bytes_per_token: Value) -> Value:
    """Stages of the least-traffic pipeline: the fewest that hold the state, or one per device (at most one per layer)."""
    most = np.minimum(np.maximum(np.floor(devices_online), 1), layers)
    fewest = np.minimum(np.maximum(min_stages, 1), most)
    return choose(activation_bytes_per_boundary > allreduce_bytes_per_token / devices_online, fewest, most)


# --- the evaluation -----------------------------------------------------------------------


@dataclass(frozen=True)
class Fleet:
    """A device class's fleet per draw on its headline basis: devices and the fraction of them online."""

    devices: Value
    online_fraction: Value


@dataclass(frozen=True)
class Cloud:
    """What the cloud side contributes per draw, the same for every device class and pattern."""

    total_kgco2e: Value
    attainable_tflops: Value
    tokens: Value
    speedup_vs_ref: Value


def cloud(p: Params) -> Cloud:
    """The cloud GPU (main or alternative variant): carbon over the horizon, roofline speed and tokens trained."""
    alt = sql_integer(p["cloud_gpu_variant"]) == 1
    power_w = choose(alt, p["cloud_alt_gpu_power_w"], p["cloud_gpu_power_w"])
    tflops = choose(alt, p["cloud_alt_gpu_tflops"], p["cloud_gpu_tflops"])
    bandwidth = choose(alt, p["cloud_alt_gpu_mem_bandwidth_gb_per_s"], p["cloud_gpu_mem_bandwidth_gb_per_s"])
    speedup = choose(alt, p["cloud_alt_speedup_vs_ref"], p["cloud_speedup_vs_ref"])
    horizon, hours, utilisation = p["horizon_years"], p["cloud_hours_per_day"], p["cloud_utilisation"]
    charged = p["cloud_gpu_embodied_kgco2e"] * choose(
        sql_integer(p["accounting_frame"]) == 1, np.minimum(horizon / p["cloud_embodied_life_years"], 1), 1)
    operational = ((power_w + p["cloud_node_overhead_w"]) * utilisation * hours * 365 * horizon * p["cloud_pue"]
                   * (1 + p["cloud_comm_energy_share"]) * p["cloud_grid_gco2e_per_kwh"] / 1e6)
    attainable = attainable_tflops(tflops, p["arithmetic_intensity_flop_per_byte"], bandwidth)
    tokens = utilisation * attainable * 1e12 * 3600 * hours * 365 * horizon / (6 * p["fleet_model_params"])
    return Cloud(charged + operational, attainable, tokens, speedup)


def headline_codes(p: Params, stated: Value) -> Value:
    """Each draw's headline basis: STATED where a count is stated, else the scenario's headline_basis code."""
    measured = choose(sql_integer(p["headline_basis"]) == 1, MEASURED, BINDING)
    return choose(~np.isnan(stated), STATED, measured)


def fleet_on_basis(p: Params, c: str, gpu: Cloud, basis: int, stated: Value, memory_exact: Value) -> Fleet:
    """Devices (x the device multiplier) and online fraction of class ``c`` on one headline basis."""
    if basis == STATED:
        return Fleet(stated * p["device_multiplier"], 1.0)
    if basis == MEASURED:
        gpu_capacity = 3600 * gpu.speedup_vs_ref / p["cloud_ref_job_time_s"]
        device_capacity = 3600 / p[f"{c}_job_time_s"]
    else:
        gpu_capacity = gpu.attainable_tflops * p["cloud_utilisation"]
        device_capacity = attainable_tflops(p[f"{c}_tflops"], p["arithmetic_intensity_flop_per_byte"],
                                            p[f"{c}_mem_bandwidth_gb_per_s"])
    online = p["device_online_fraction"]
    exact = np.maximum(devices_for_throughput(gpu_capacity, p["cloud_hours_per_day"], device_capacity, p["edge_hours_per_day"],
                                              online, p["straggler_slowdown"]),
                       whole_devices(memory_exact))
    return Fleet(whole_devices(exact) * p["device_multiplier"], online)


def headline_fleet(p: Params, c: str, gpu: Cloud, memory_stages: Value) -> Fleet:
    """The fleet of class ``c`` on each draw's headline basis (the bases present, merged per draw)."""
    stated = whole_devices(p[f"{c}_devices_per_gpu"] * (p["cloud_hours_per_day"] / p["devices_stated_cloud_hours_per_day"])
                           * (p["devices_stated_hours_per_day"] / p["edge_hours_per_day"]))
    memory_exact = memory_stages / memory_floor_devices(p["fleet_model_params"], p["training_bytes_per_param"],
                                                        p["cloud_gpu_memory_gb"], p["cloud_usable_memory_fraction"])
    codes = headline_codes(p, stated)
    present = [int(code) for code in np.unique(codes)]
    fleets = {basis: fleet_on_basis(p, c, gpu, basis, stated, memory_exact) for basis in present}
    if len(present) == 1:
        return fleets[present[0]]
    return Fleet(np.select([codes == b for b in present], [np.broadcast_to(fleets[b].devices, np.shape(codes)) for b in present]),
                 np.select([codes == b for b in present],
                           [np.broadcast_to(fleets[b].online_fraction, np.shape(codes)) for b in present]))


def embodied_allocated_kgco2e(p: Params, c: str, online: Value) -> Value:
    """One device's embodied carbon charged to training, per edge_embodied_policy (0 none, 1 battery wear, 2 per use hour)."""
    horizon, hours, power = p["horizon_years"], p["edge_hours_per_day"], p[f"{c}_train_power_w"]
    lifetime, rated = p[f"{c}_lifetime_years"], p[f"{c}_battery_rated_cycles"]
    nonuse = p[f"{c}_embodied_kgco2e"] * p[f"{c}_nonuse_share"]
    policy = sql_integer(p["edge_embodied_policy"])

    def battery_wear() -> Value:
        cycles = p["battery_throughput_share"] * power * hours * online * 365 * horizon / p[f"{c}_battery_wh"]
        lost = battery_life_lost_years(rated, p[f"{c}_owner_cycles_per_year"], cycles, horizon, lifetime)
        return (nonuse * p[f"{c}_battery_embodied_share"] * cycles / rated
                + p["device_replacement_share"] * nonuse * np.minimum(lost / lifetime, 1))

    def per_use_hour() -> Value:
        horizon_embodied = p[f"{c}_embodied_kgco2e"] * p[f"{c}_nonuse_share"] * np.minimum(horizon / lifetime, 1)
        training_hours = hours * online
        return horizon_embodied * training_hours / (training_hours + p[f"{c}_owner_hours_per_day"])

    branches: dict[int, Callable[[], Value]] = {0: lambda: 0.0, 1: battery_wear, 2: per_use_hour}
    if np.ndim(policy) == 0:
        return branches.get(int(policy), lambda: np.nan)()
    return np.select([policy == code for code in branches], [np.broadcast_to(f(), np.shape(policy)) for f in branches.values()],
                     np.nan)


def comm_kwh_per_pattern(p: Params, gpu: Cloud, devices_online: Value, memory_stages: Value, wall: Value) -> dict[str, Value]:
    """Communication energy (kWh) of each pattern for a fleet with ``devices_online`` devices online."""
    params, bytes_per_param, compression = p["fleet_model_params"], p["bytes_per_param"], p["comm_compression"]
    tokens, n = gpu.tokens, devices_online
    tokens_per_step = p["batch_size"] * p["sequence_length"]
    hidden, activation = p["fleet_model_hidden_size"], p["activation_bytes"]
    syncs = gpu.tokens / (n * tokens_per_step * p["local_steps_per_sync"])
    allreduce_per_token = 2 * params * bytes_per_param / (tokens_per_step * p["local_steps_per_sync"])
    stages = pipeline_stages(n, p["fleet_model_layers"], memory_stages, 2 * hidden * activation, allreduce_per_token)
    idealized = syncs * n * params * bytes_per_param / compression
    moved = {
        "idealized": idealized,
        "parameter_server": syncs * 2 * n * params * bytes_per_param / compression,
        "ring_allreduce": syncs * 2 * np.maximum(n - 1, 0) * params * bytes_per_param / compression,
        "pipeline": (tokens * 2 * (stages - 1) * hidden * activation
                     + tokens * 2 * params * bytes_per_param / (tokens_per_step * p["local_steps_per_sync"])
                     * np.maximum(1 - stages / n, 0)) / compression,
    }
    network = network_kwh_per_gb_for_frame(p["accounting_frame"], p["network_kwh_per_gb"], p["router_kwh_per_gb"],
                                           p["network_marginal_w_per_mbps"], p["router_marginal_w_per_mbps"])
    bandwidth, radio = p["edge_bandwidth_mb_per_s"], p["wifi_radio_power_w"]
    window_s = p["edge_hours_per_day"] * 3600 * 365 * p["horizon_years"]
    out: dict[str, Value] = {"none": 0.0,
                             "radio_window": n * window_s * p["link_utilisation"] * radio / 3.6e6 * wall
                             + idealized / 1e9 * network}
    for pattern, bytes_moved in moved.items():
        out[pattern] = bytes_moved / (bandwidth * 1e6) * radio / 3.6e6 * wall + bytes_moved / 1e9 * network
    return out


def reduction_factors(p: Params, n_draws: int) -> dict[tuple[str, str], np.ndarray]:
    """R on the headline basis per (device class, pattern), one value per draw."""
    gpu = cloud(p)
    wall = edge_wall_factor(p["edge_charger_efficiency"], p["battery_throughput_share"], p["battery_round_trip_efficiency"])
    grid = p["edge_grid_gco2e_per_kwh"]
    out: dict[tuple[str, str], np.ndarray] = {}
    for c in DEVICE_CLASSES:
        memory_stages = memory_floor_devices(p["fleet_model_params"], p["training_bytes_per_param"], p[f"{c}_memory_gb"],
                                             p["edge_usable_memory_fraction"])
        fleet = headline_fleet(p, c, gpu, memory_stages)
        devices, online = fleet.devices, fleet.online_fraction
        operational = (devices * online * (p[f"{c}_train_power_w"] * wall) * p["edge_hours_per_day"] * 365 * p["horizon_years"]
                       * grid / 1e6)
        embodied = devices * embodied_allocated_kgco2e(p, c, online)
        comm = comm_kwh_per_pattern(p, gpu, devices * online, memory_stages, wall)
        for pattern in PATTERNS:
            r = gpu.total_kgco2e / (operational + embodied + comm[pattern] * grid / 1000)
            out[(c, pattern)] = np.broadcast_to(np.asarray(r, dtype=np.float64), (n_draws,))
    return out


# --- from draws to values and summaries ---------------------------------------------------


def _number(value: object) -> float:
    """A constant as a float; null as NaN (the SQL's null stated count)."""
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
    """R per draw: scenario_id, variant_id, device_class, pattern, reduction_factor (headline basis)."""
    frames = []
    for scenario, (variants, params) in scenario_params(draws).items():
        for (c, pattern), r in reduction_factors(params, len(variants)).items():
            frames.append(pl.DataFrame({"scenario_id": scenario, "variant_id": variants, "device_class": c,
                                        "pattern": pattern, "reduction_factor": r}))
    return pl.concat(frames)


def summarize(draws: Draws) -> pl.DataFrame:
    """p05, p50, p95 (linear interpolation, as DuckDB's quantile_cont) and mean of R per scenario x class x pattern."""
    rows = []
    for scenario, (variants, params) in scenario_params(draws).items():
        for (c, pattern), r in reduction_factors(params, len(variants)).items():
            p05, p50, p95 = np.quantile(r, QUANTILES)
            rows.append({"scenario_id": scenario, "device_class": c, "pattern": pattern, "n_draws": len(r),
                         "p05": float(p05), "p50": float(p50), "p95": float(p95), "mean": float(np.mean(r))})
    return pl.DataFrame(rows).sort("scenario_id", "device_class", "pattern")
