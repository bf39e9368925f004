"""The Monte Carlo baseline: a straightforward per-draw Python loop over the model.

It evaluates, draw by draw, device class by device class and pattern by pattern, the headline
reduction factor that ``sql/model/evaluate.sql`` computes set-wise (the stated count, or the
binding basis: max(roofline with availability, memory floor)). ``make bench`` times it on a
subsample and checks it agrees with the SQL on every value.
"""

from __future__ import annotations

import math
import random
from statistics import NormalDist, quantiles
from typing import Any

PATTERNS = ("none", "radio_window", "idealized", "parameter_server", "ring_allreduce", "pipeline")
Z95 = 1.959963984540054
_STANDARD_NORMAL = NormalDist()


def draw_one(u: float, distribution: str, value: float, low: float, high: float) -> float:
    """One draw from a parameter's distribution by its inverse CDF (as pipelines.uncertainty)."""
    if distribution == "uniform":
        return low + u * (high - low)
    if distribution == "triangular":
        cut = (value - low) / (high - low)
        if u < cut:
            return low + math.sqrt(u * (high - low) * (value - low))
        return high - math.sqrt((1 - u) * (high - low) * (high - value))
    z = _STANDARD_NORMAL.inv_cdf(min(max(u, 1e-12), 1 - 1e-12))
    if distribution == "normal":
        return value + z * (high - low) / (2 * Z95)
    return value * math.exp(z * math.log(high / low) / (2 * Z95))


def monte_carlo(base: dict[str, Any], ranged: list[tuple[str, str, float, float, float]], draws: int, seed: int) -> dict:
    """The loop: per draw, sample every ranged parameter, evaluate every class and pattern; then summarise.

    Returns {(class, pattern): (p05, p50, p95, mean)} of R.
    """
    rng = random.Random(seed)
    results: dict[tuple[str, str], list[float]] = {}
    for _ in range(draws):
        params = dict(base)
        for name, distribution, value, low, high in ranged:
            params[name] = draw_one(rng.random(), distribution, value, low, high)
        for key, r in reduction_factors(params).items():
            results.setdefault(key, []).append(r)
    summary = {}
    for key, values in results.items():
        q = quantiles(values, n=20, method="inclusive")
        summary[key] = (q[0], quantiles(values, n=2, method="inclusive")[0], q[-1], sum(values) / len(values))
    return summary


def _whole(x: float) -> float:
    return math.ceil(x - 1e-9)


def _memory_floor(params: float, bytes_per_param: float, memory_gb: float, usable: float) -> float:
    return max(_whole(params * bytes_per_param / (memory_gb * 1e9 * usable)), 1)


def reduction_factors(p: dict[str, Any]) -> dict[tuple[str, str], float]:
    """{(device class, pattern): R} for one parameter set (a row of model inputs)."""
    out: dict[tuple[str, str], float] = {}
    horizon = p["horizon_years"]
    cloud_total = p["cloud_gpu_embodied_kgco2e"] + (
        p["cloud_gpu_power_w"] * p["cloud_utilisation"] * p["cloud_hours_per_day"] * 365 * horizon * p["cloud_pue"]
        * (1 + p["cloud_comm_energy_share"]) * p["cloud_grid_gco2e_per_kwh"] / 1e6
    )
    gpu_att = min(p["cloud_gpu_tflops"], p["arithmetic_intensity_flop_per_byte"] * p["cloud_gpu_mem_bandwidth_gb_per_s"] / 1000)
    gpus_for_model = _memory_floor(p["fleet_model_params"], p["training_bytes_per_param"], p["cloud_gpu_memory_gb"],
                                   p["cloud_usable_memory_fraction"])
    tokens = gpu_att * 1e12 * 3600 * p["cloud_hours_per_day"] * 365 * horizon / (6 * p["fleet_model_params"])
    tokens_per_step = p["batch_size"] * p["sequence_length"]
    for device in ("laptop", "phone"):
        stated = p[f"{device}_devices_per_gpu"]
        if stated is not None and not (isinstance(stated, float) and math.isnan(stated)):
            devices = _whole(stated * p["devices_stated_hours_per_day"] / p["edge_hours_per_day"])
            online, slowdown = 1.0, 1.0
        else:
            online, slowdown = p["device_online_fraction"], p["straggler_slowdown"]
            dev_att = min(p[f"{device}_tflops"], p["arithmetic_intensity_flop_per_byte"] * p[f"{device}_mem_bandwidth_gb_per_s"] / 1000)
            throughput = gpu_att * p["cloud_hours_per_day"] / (dev_att * p["edge_hours_per_day"] * online / slowdown)
            memory = _memory_floor(p["fleet_model_params"], p["training_bytes_per_param"], p[f"{device}_memory_gb"],
                                   p["edge_usable_memory_fraction"]) / gpus_for_model
            devices = max(throughput, _whole(memory))
            devices = _whole(devices)
        devices *= p["device_multiplier"]
        power = p[f"{device}_train_power_w"]
        hours = p["edge_hours_per_day"]
        operational = devices * online * power * hours * 365 * horizon * p["edge_grid_gco2e_per_kwh"] / 1e6
        policy = int(p["edge_embodied_policy"])
        nonuse = p[f"{device}_embodied_kgco2e"] * p[f"{device}_nonuse_share"]
        if policy == 0:
            per_device = 0.0
        elif policy == 1:
            cycles = p["battery_throughput_share"] * power * hours * online * 365 * horizon / p[f"{device}_battery_wh"]
            per_device = nonuse * p[f"{device}_battery_embodied_share"] * cycles / p[f"{device}_battery_rated_cycles"]
        else:
            amortised = nonuse * min(horizon / p[f"{device}_lifetime_years"], 1)
            per_device = amortised * hours * online / (hours * online + p[f"{device}_owner_hours_per_day"])
        embodied = devices * per_device
        window_s = hours * online * 3600 * 365 * horizon
        active = devices * online
        for pattern in PATTERNS:
            syncs = tokens / (active * tokens_per_step * p["local_steps_per_sync"])
            size = p["fleet_model_params"] * p["bytes_per_param"]
            if pattern == "none":
                comm_kwh = 0.0
            elif pattern == "radio_window":
                comm_kwh = active * window_s * p["link_utilisation"] * (
                    p["wifi_radio_power_w"] / 3.6e6 + p["edge_bandwidth_mb_per_s"] * 1e6 / 1e9 * p["network_kwh_per_gb"])
            else:
                if pattern == "idealized":
                    moved = syncs * active * size
                elif pattern == "parameter_server":
                    moved = syncs * 2 * active * size
                elif pattern == "ring_allreduce":
                    moved = syncs * 2 * max(active - 1, 0) * size
                else:
                    moved = tokens * 2 * max(active - 1, 0) * p["fleet_model_hidden_size"] * p["activation_bytes"]
                moved /= p["comm_compression"]
                comm_kwh = moved / (p["edge_bandwidth_mb_per_s"] * 1e6) * p["wifi_radio_power_w"] / 3.6e6 + moved / 1e9 * p["network_kwh_per_gb"]
            comm = comm_kwh * p["edge_grid_gco2e_per_kwh"] / 1000
            out[(device, pattern)] = cloud_total / (operational + embodied + comm)
    return out
