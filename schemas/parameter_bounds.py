"""The allowed range of every scenario parameter, as data, checked before the model runs.

Each parameter's bounds are declared once, here:

- a device class's ``<class>_<field>`` rows (:data:`schemas.vocabulary.DEVICE_FIELDS`) take the
  bounds of the core.scenario_devices column they fill, read from that table's pandera model
  (:class:`schemas.scenario_parameters.ScenarioDevices`), so a new class is bounded as soon as
  it is named;
- a method a scenario names (``accounting_frame``, ``comm_pattern``, ...: :data:`NAMED`) is one
  of the names in its reference table (core.frames, core.patterns, ...), which the
  ``model_methods`` asset writes from the same vocabulary (:mod:`schemas.vocabulary`);
- the claim a scenario tests (``claim_id``) is an id of a row of data, the claims registry
  (staging.claims): any id here, and the build checks the registry has it;
- a switch (``grid_shared``, ``cloud_gpu_variant``) is one of its codes;
- every other parameter has its row in :data:`PARAMETER_BOUNDS`.

A scenario's value and the ends of its range must lie within them. The build checks every row
of core.scenario_parameters (a blocking check, before core.scenarios and the model), and
``edge-carbon scenario new`` refuses a ``--set`` or ``--range`` outside them.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import dataclass, field

import pandera.polars as pa

from schemas.bounds import GRID_MAX_G_PER_KWH, GRID_MIN_G_PER_KWH
from schemas.scenario_parameters import ScenarioDevices
from schemas.vocabulary import (
    BASIS_RULES,
    COMM_PATTERNS,
    DEVICE_FIELDS,
    FRAMES,
    POLICIES,
    WORKLOADS,
)

#: An id a scenario names, of a row of a data table (a claim of staging.claims).
ID = r"[a-z][a-z0-9_]*"


def _number(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else f"{value:g}"


@dataclass(frozen=True)
class Bounds:
    """An interval, each end closed, open (``low_open``, ``high_open``) or absent; or, with
    ``codes``, a whole number that is one of the codes (code -> its meaning); or, with
    ``names``, a name that is one of the names of the reference table ``table``; or, with
    ``registry``, an id (:data:`ID`) of a row of the data table ``table``, which the build checks."""

    low: float | None = None
    high: float | None = None
    low_open: bool = False
    high_open: bool = False
    codes: Mapping[int, str] = field(default_factory=dict)
    names: tuple[str, ...] = ()
    table: str = ""
    registry: bool = False

    def admits(self, value: float | str) -> bool:
        """Whether ``value`` is a finite number inside the bounds, or, for names, one of them."""
        if self.registry:
            return isinstance(value, str) and re.fullmatch(ID, value) is not None
        if self.names or isinstance(value, str):
            return bool(self.names) and value in self.names
        if not math.isfinite(value):
            return False
        if self.codes:
            return float(value).is_integer() and int(value) in self.codes
        if self.low is not None and (value < self.low or (self.low_open and value == self.low)):
            return False
        return not (self.high is not None and (value > self.high or (self.high_open and value == self.high)))

    def describe(self) -> str:
        """The bounds in words: ``> 0``, ``in [0, 1]``, ``one of 0 (independent draws), 1 (...)``, ``one of the names in core.frames: ...``."""
        if self.names:
            return f"one of the names in {self.table}: " + ", ".join(self.names)
        if self.registry:
            return f"the id of a row of {self.table}"
        if self.codes:
            return "one of " + ", ".join(f"{code} ({meaning})" for code, meaning in self.codes.items())
        if self.low is not None and self.high is not None:
            return (f"in {'(' if self.low_open else '['}{_number(self.low)}, "
                    f"{_number(self.high)}{')' if self.high_open else ']'}")
        if self.low is not None:
            return f"{'>' if self.low_open else '>='} {_number(self.low)}"
        if self.high is not None:
            return f"{'<' if self.high_open else '<='} {_number(self.high)}"
        return "any finite number"


def contract_bounds(model: type[pa.DataFrameModel], column: str) -> Bounds:
    """The bounds the pandera ``model`` puts on ``column`` (its gt/ge/lt/le/in_range checks)."""
    low = high = None
    low_open = high_open = False
    for check in model.to_schema().columns[column].checks:
        stats = check.statistics
        if check.name in ("greater_than", "greater_than_or_equal_to"):
            low, low_open = stats["min_value"], check.name == "greater_than"
        elif check.name in ("less_than", "less_than_or_equal_to"):
            high, high_open = stats["max_value"], check.name == "less_than"
        elif check.name == "in_range":
            low, low_open = stats["min_value"], not stats.get("include_min", True)
            high, high_open = stats["max_value"], not stats.get("include_max", True)
    return Bounds(low, high, low_open, high_open)


POSITIVE = Bounds(0, low_open=True)
NON_NEGATIVE = Bounds(0)
AT_LEAST_ONE = Bounds(1)
#: A share or fraction that may be 0.
SHARE = Bounds(0, 1)
#: A fraction that divides or scales work: 0 would leave nothing.
POSITIVE_SHARE = Bounds(0, 1, low_open=True)
HOURS_A_DAY = Bounds(0, 24, low_open=True)
GRID = Bounds(GRID_MIN_G_PER_KWH, GRID_MAX_G_PER_KWH)

#: The parameters a scenario gives as a name (core.scenario_parameters value_text), each one of the
#: names of its reference table (written from the same vocabulary by the model_methods asset).
NAMED: dict[str, Bounds] = {
    "accounting_frame": Bounds(names=tuple(FRAMES), table="core.frames"),
    "edge_embodied_policy": Bounds(names=tuple(POLICIES), table="core.embodied_policies"),
    "workload_kind": Bounds(names=tuple(WORKLOADS), table="core.workload_kinds"),
    "comm_pattern": Bounds(names=COMM_PATTERNS, table="core.patterns"),
    # peak_flops is the headline wherever a count is stated; the name chooses between the others
    "headline_basis": Bounds(names=tuple(b for b, rule in BASIS_RULES.items() if rule.headline_choice), table="core.bases"),
    # the claim the scenario tests: a row of the claims registry (data), which the build checks it names
    "claim_id": Bounds(table="staging.claims", registry=True),
}

#: Every parameter that is not a device class's ``<class>_<field>`` row -> its bounds.
PARAMETER_BOUNDS: dict[str, Bounds] = {
    **NAMED,
    # switches: codes the model reads as numbers (the Monte Carlo draws cloud_gpu_variant)
    "grid_shared": Bounds(codes={0: "independent draws", 1: "one draw for both sides"}),
    "cloud_gpu_variant": Bounds(codes={0: "main", 1: "alternative"}),
    # the horizon and the hours in it
    "horizon_years": POSITIVE,
    "edge_hours_per_day": HOURS_A_DAY,
    "cloud_hours_per_day": HOURS_A_DAY,
    "devices_stated_hours_per_day": HOURS_A_DAY,
    "devices_stated_cloud_hours_per_day": HOURS_A_DAY,
    # the cloud accelerator (and its alternative variant)
    "cloud_gpu_count": AT_LEAST_ONE,
    "cloud_gpu_power_w": POSITIVE,
    "cloud_alt_gpu_power_w": POSITIVE,
    "cloud_gpu_tflops": POSITIVE,
    "cloud_alt_gpu_tflops": POSITIVE,
    "cloud_gpu_fp16_tflops": POSITIVE,
    "cloud_alt_gpu_fp16_tflops": POSITIVE,
    "cloud_gpu_mem_bandwidth_gb_per_s": POSITIVE,
    "cloud_alt_gpu_mem_bandwidth_gb_per_s": POSITIVE,
    "cloud_gpu_memory_gb": POSITIVE,
    "cloud_speedup_vs_ref": POSITIVE,
    "cloud_gpu_measured_tflops": POSITIVE,
    "cloud_alt_speedup_vs_ref": POSITIVE,
    "cloud_gpu_alt_share": SHARE,
    "cloud_utilisation": POSITIVE_SHARE,
    "cloud_pue": AT_LEAST_ONE,
    "cloud_node_overhead_w": NON_NEGATIVE,
    "cloud_comm_energy_share": SHARE,
    "cloud_gpu_embodied_kgco2e": NON_NEGATIVE,
    "cloud_embodied_life_years": POSITIVE,
    "cloud_usable_memory_fraction": POSITIVE_SHARE,
    "cloud_ref_job_time_s": POSITIVE,
    "cloud_table1_energy_j": POSITIVE,
    # grids
    "cloud_grid_gco2e_per_kwh": GRID,
    "edge_grid_gco2e_per_kwh": GRID,
    # the edge fleet as a whole
    "device_online_fraction": POSITIVE_SHARE,
    "straggler_slowdown": AT_LEAST_ONE,
    "device_multiplier": POSITIVE,
    "edge_usable_memory_fraction": POSITIVE_SHARE,
    "edge_charger_efficiency": POSITIVE_SHARE,
    "battery_round_trip_efficiency": POSITIVE_SHARE,
    "battery_throughput_share": SHARE,
    "device_replacement_share": SHARE,
    # a replacement battery's embodied carbon per kWh of its capacity (x each class's <class>_battery_wh)
    "battery_embodied_kgco2e_per_kwh": NON_NEGATIVE,
    "arithmetic_intensity_flop_per_byte": POSITIVE,
    "training_bytes_per_param": POSITIVE,
    # the model trained and the workload
    "fleet_model_params": AT_LEAST_ONE,
    "fleet_model_layers": AT_LEAST_ONE,
    "fleet_model_hidden_size": AT_LEAST_ONE,
    "table2_devices": AT_LEAST_ONE,
    "batch_size": AT_LEAST_ONE,
    "sequence_length": AT_LEAST_ONE,
    "workload_steps": AT_LEAST_ONE,
    "workload_gpu_hours": NON_NEGATIVE,
    "workload_tokens": NON_NEGATIVE,
    "workload_mfu": SHARE,
    # communication and the network
    "bytes_per_param": POSITIVE,
    "activation_bytes": POSITIVE,
    "local_steps_per_sync": AT_LEAST_ONE,
    "comm_compression": AT_LEAST_ONE,
    # edge training designs (core.patterns edge_design): DiLoCo-style outer syncs, lean state, activations
    "outer_steps_per_sync": AT_LEAST_ONE,
    "outer_compression": AT_LEAST_ONE,
    "outer_token_overhead": AT_LEAST_ONE,
    "lean_training_bytes_per_param": POSITIVE,
    "micro_batch_sequences": AT_LEAST_ONE,
    "fleet_model_heads": AT_LEAST_ONE,
    "max_pipeline_stages": AT_LEAST_ONE,
    # below 1: a link carries framing and headers besides its payload
    "link_headroom": Bounds(0, 1, low_open=True, high_open=True),
    "edge_bandwidth_mb_per_s": POSITIVE,
    "link_utilisation": POSITIVE_SHARE,
    "wifi_radio_power_w": NON_NEGATIVE,
    "wifi_receive_power_w": NON_NEGATIVE,
    "network_kwh_per_gb": NON_NEGATIVE,
    "router_kwh_per_gb": NON_NEGATIVE,
    "network_marginal_w_per_mbps": NON_NEGATIVE,
    "router_marginal_w_per_mbps": NON_NEGATIVE,
    "line_power_w": NON_NEGATIVE,
    "line_training_share": SHARE,
    "line_power_physical_max_w": POSITIVE,
}

#: A device class's ``<class>_<field>`` rows -> their bounds: the core.scenario_devices column's
#: (ScenarioDevices).
CLASS_FIELD_BOUNDS: dict[str, Bounds] = {
    suffix: contract_bounds(ScenarioDevices, column) for suffix, column in DEVICE_FIELDS.items()
}
_BY_LENGTH = sorted(CLASS_FIELD_BOUNDS, key=len, reverse=True)


def bounds_for(parameter: str) -> Bounds | None:
    """The bounds of ``parameter``: its row of :data:`PARAMETER_BOUNDS`, else those of the
    longest ``<class>_<field>`` ending it has (:data:`CLASS_FIELD_BOUNDS`); None when neither."""
    if parameter in PARAMETER_BOUNDS:
        return PARAMETER_BOUNDS[parameter]
    for suffix in _BY_LENGTH:
        if parameter.endswith("_" + suffix) and len(parameter) > len(suffix) + 1:
            return CLASS_FIELD_BOUNDS[suffix]
    return None


def is_named(parameter: str) -> bool:
    """Whether ``parameter`` is given as a name (:data:`NAMED`), not a number."""
    return parameter in NAMED


def refusal(parameter: str, value: float | str, unit: str | None = None, *, end: str | None = None) -> str | None:
    """Why ``value`` cannot be ``parameter``'s (its bounds, in words), or None when it can;
    ``end`` (low or high) when the value is an end of the parameter's range."""
    bounds = bounds_for(parameter)
    if bounds is None or bounds.admits(value):
        return None
    if isinstance(value, str):
        shown = repr(value) if bounds.names or bounds.registry else f"{value!r} (not a number)"
    else:
        shown = _number(value) if math.isfinite(value) else str(value)
    if unit and unit not in ("code", "name") and not isinstance(value, str):
        shown += f" {unit}"
    what = parameter if end is None else f"{parameter} ({end} end of its range)"
    return f"{what} = {shown} is outside its bounds: {parameter} must be {bounds.describe()}"
