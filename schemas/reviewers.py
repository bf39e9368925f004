"""Pandera models of the marts that answer the reviewers: fleet sizing per model size,
communication patterns, embodied-allocation policies, sensitivity, break-even and Monte Carlo.
"""

from __future__ import annotations

import pandera.polars as pa
import polars as pl

from schemas.base import Contract
from schemas.marts import finite_positive
from schemas.statuses import STATUS_TEXT
from schemas.vocabulary import (
    BASES,
    DEVICE_CLASS_PATTERN,
    NETWORK_METHODS,
    PATTERN_ROWS,
    PATTERNS,
    POLICIES,
    RESIZE_POWERS,
)

PATTERN_LIST = list(PATTERNS)
#: Every pattern row: the Monte Carlo also evaluates each scenario's own named pattern (its comm_pattern).
EVALUATED_PATTERN_LIST = list(PATTERN_ROWS)


class FleetSizing(Contract):
    """marts.fleet_sizing: devices per cloud GPU on each equivalence basis, and the memory floor, per model size. Grain: scenario x edge device class x model size (OPT 125M-66B) x basis (a row of core.bases)."""

    #: The warehouse table(s) this model is the contract of (pipelines.warehouse.dictionary finds it so).
    __tables__ = ("marts.fleet_sizing",)

    scenario_id: str = pa.Field(description="Scenario.")
    device_class: str = pa.Field(str_matches=DEVICE_CLASS_PATTERN, description="Edge device class ('fleet': a mixed fleet as a whole).")
    model_id: str = pa.Field(description="Model the fleet trains (staging.model_configs).")
    params: float = pa.Field(gt=0, description="Parameters.")
    basis: str = pa.Field(isin=list(BASES), description="Equivalence basis (core.bases): " + ", ".join(BASES) + ".")
    devices: float = pa.Field(nullable=True, ge=1, description="Devices per GPU on the basis (its formula; peak_flops never takes a stated count here). Null where the class lacks the basis's figures.")
    devices_memory_capacity: float = pa.Field(nullable=True, ge=1, description="Memory floor: devices holding the model's training state per GPU holding it (a floor under every basis, not an equivalence). Null where the class lacks the figures.")
    binding_basis: str = pa.Field(isin=["roofline", "memory_capacity"], description="Which binds the binding basis: roofline with availability, or the memory floor.")

    class Config:
        unique = ["scenario_id", "device_class", "model_id", "basis"]


class Communication(Contract):
    """marts.communication: traffic, energy, link and memory feasibility and R per communication pattern. Grain: scenario x edge device class x model size x communication pattern."""

    #: The warehouse table(s) this model is the contract of (pipelines.warehouse.dictionary finds it so).
    __tables__ = ("marts.communication",)

    scenario_id: str = pa.Field(description="Scenario.")
    device_class: str = pa.Field(str_matches=DEVICE_CLASS_PATTERN, description="Edge device class ('fleet': a mixed fleet as a whole).")
    model_id: str = pa.Field(description="Model the fleet trains.")
    params: float = pa.Field(gt=0, description="Parameters.")
    pattern: str = pa.Field(isin=PATTERN_LIST, description="Communication pattern: " + ", ".join(PATTERNS) + ".")
    devices: float = pa.Field(gt=0, description="Devices per GPU on the scenario's headline basis for this model.")
    devices_from: str = pa.Field(isin=["formula", "stated", "memory_capacity", "device_peak", "fleet"], description="Where the count comes from (device_peak: the devices the work needs at their peak bind; fleet: a mixed fleet's classes summed).")
    comm_gb: float = pa.Field(ge=0, description="Data the fleet moves over the horizon, GB.")
    comm_kwh: float = pa.Field(ge=0, description="Radio (power x time at the link bandwidth) + network (kWh/GB) energy, kWh.")
    comm_kgco2e: float = pa.Field(ge=0, description="Communication carbon at the edge grid intensity, kgCO2e.")
    link_time_share: float = pa.Field(ge=0, description="Radio time one device needs / its training window; > 1: the link cannot carry the traffic in time.")
    link_feasible: bool = pa.Field(description="link_time_share <= 1.")
    memory_feasible: bool = pa.Field(description="The training state a device must hold fits its usable memory (data-parallel: all of it; pipeline: 1/S of it).")
    pipeline_stages: float = pa.Field(nullable=True, description="A pattern that splits the model (core.patterns splits_model; the pipeline): stages S, at most min(online devices, model layers); the other devices form S-stage replicas that train data-parallel with each other. Null for other patterns.")
    edge_added_kgco2e: float = pa.Field(gt=0, description="Edge compute + allocated embodied + communication, kgCO2e.")
    cloud_total_kgco2e: float = pa.Field(gt=0, description="One cloud GPU's lifecycle total, kgCO2e.")
    reduction_factor: float = pa.Field(description="R = cloud total / edge added.")

    class Config:
        unique = ["scenario_id", "device_class", "model_id", "pattern"]

    @pa.check("reduction_factor", name="finite_positive")
    @classmethod
    def r_finite_positive(cls, data: pa.PolarsData) -> pl.LazyFrame:
        return finite_positive(data)


class EmbodiedAllocation(Contract):
    """marts.embodied_allocation: edge embodied carbon charged to training, and R, under each allocation policy. Grain: scenario x edge device class x allocation policy."""

    #: The warehouse table(s) this model is the contract of (pipelines.warehouse.dictionary finds it so).
    __tables__ = ("marts.embodied_allocation",)

    scenario_id: str = pa.Field(description="Scenario.")
    device_class: str = pa.Field(str_matches=DEVICE_CLASS_PATTERN, description="Edge device class ('fleet': a mixed fleet as a whole).")
    policy: str = pa.Field(isin=list(POLICIES), description="Allocation policy (core.embodied_policies): " + " | ".join(POLICIES) + ".")
    is_scenario_policy: bool = pa.Field(description="The policy the scenario itself uses.")
    devices: float = pa.Field(gt=0, description="Devices per GPU (headline basis).")
    embodied_per_device_kgco2e: float = pa.Field(ge=0, description="Embodied carbon charged to training per device over the horizon, kgCO2e.")
    edge_embodied_kgco2e: float = pa.Field(ge=0, description="Fleet total, kgCO2e.")
    edge_added_kgco2e: float = pa.Field(gt=0, description="Fleet operational + embodied (no communication), kgCO2e.")
    reduction_factor: float = pa.Field(description="R without communication under this policy.")

    class Config:
        unique = ["scenario_id", "device_class", "policy"]

    @pa.check("reduction_factor", name="finite_positive")
    @classmethod
    def r_finite_positive(cls, data: pa.PolarsData) -> pl.LazyFrame:
        return finite_positive(data)


class Sensitivity(Contract):
    """marts.sensitivity: R at each ranged parameter's low and high end, all others at the scenario's values (tornado). Grain: scenario x edge device class x pattern x network method (every method the frame admits) x ranged parameter."""

    #: The warehouse table(s) this model is the contract of (pipelines.warehouse.dictionary finds it so).
    __tables__ = ("marts.sensitivity",)

    scenario_id: str = pa.Field(description="Scenario.")
    device_class: str = pa.Field(str_matches=DEVICE_CLASS_PATTERN, description="Edge device class ('fleet': a mixed fleet as a whole).")
    pattern: str = pa.Field(isin=PATTERN_LIST, description="Communication pattern.")
    network_method: str = pa.Field(isin=list(NETWORK_METHODS), description="How the network energy is counted (core.network_methods): every method the scenario's frame admits.")
    is_headline_method: bool = pa.Field(description="The frame's headline network method (the tornado pages show it).")
    parameter: str = pa.Field(description="Parameter varied (core.scenario_parameters).")
    unit: str = pa.Field(description="Unit of the values.")
    status: str = pa.Field(description=STATUS_TEXT + ".")
    value: float = pa.Field(description="Scenario value.")
    value_low: float = pa.Field(description="Low end of the range.")
    value_high: float = pa.Field(description="High end of the range.")
    reduction_factor_at_low: float = pa.Field(nullable=True, description="R with this parameter at its low end, all others at the scenario value.")
    reduction_factor_at_high: float = pa.Field(nullable=True, description="R at the high end.")
    baseline_reduction_factor: float = pa.Field(description="R at the scenario values.")
    swing: float = pa.Field(nullable=True, ge=0, description="|R(high) - R(low)|.")
    rank: int = pa.Field(ge=1, description="1 = largest swing (per scenario, class, pattern and network method).")

    class Config:
        unique = ["scenario_id", "device_class", "pattern", "network_method", "parameter"]


class SensitivityGrid(Contract):
    """marts.sensitivity_grid: R over the device multiplier and the edge's training hours per day. Grain: scenario x class x pattern x device multiplier x edge hours per day."""

    #: The warehouse table(s) this model is the contract of (pipelines.warehouse.dictionary finds it so).
    __tables__ = ("marts.sensitivity_grid",)

    scenario_id: str = pa.Field(description="Scenario.")
    device_class: str = pa.Field(str_matches=DEVICE_CLASS_PATTERN, description="Edge device class ('fleet': a mixed fleet as a whole).")
    pattern: str = pa.Field(isin=PATTERN_LIST, description="Communication pattern.")
    device_multiplier: float = pa.Field(gt=0, description="Multiplier on the basis's device count.")
    hours_per_day: float = pa.Field(gt=0, le=24, description="Edge training hours per day.")
    devices: float = pa.Field(gt=0, description="Devices per GPU at this point.")
    edge_added_kgco2e: float = pa.Field(gt=0, description="Edge added carbon, kgCO2e.")
    cloud_total_kgco2e: float = pa.Field(gt=0, description="Cloud GPU total, kgCO2e.")
    reduction_factor: float = pa.Field(description="R at this point.")
    is_scenario_point: bool = pa.Field(description="Multiplier 1 at the scenario's hours.")

    class Config:
        unique = ["scenario_id", "device_class", "pattern", "device_multiplier", "hours_per_day"]


class BreakEven(Contract):
    """marts.break_even: the value of each parameter at which R reaches 1 and 4, all others fixed. Grain: scenario x edge device class x pattern x parameter that moves R."""

    #: The warehouse table(s) this model is the contract of (pipelines.warehouse.dictionary finds it so).
    __tables__ = ("marts.break_even",)

    scenario_id: str = pa.Field(description="Scenario.")
    device_class: str = pa.Field(str_matches=DEVICE_CLASS_PATTERN, description="Edge device class ('fleet': a mixed fleet as a whole).")
    pattern: str = pa.Field(isin=PATTERN_LIST, description="none (compute only) | radio_window (the paper's radio model).")
    parameter: str = pa.Field(description="Parameter solved for, all others at the scenario value.")
    unit: str = pa.Field(description="Unit.")
    value: float = pa.Field(description="Scenario value.")
    low: float = pa.Field(nullable=True, description="Low end of the parameter's plausible range.")
    high: float = pa.Field(nullable=True, description="High end.")
    baseline_reduction_factor: float = pa.Field(description="R at the scenario values.")
    value_r1: float = pa.Field(nullable=True, description="Value at which R = 1 (nearest the scenario value); null if R does not reach 1 in the search span.")
    value_r4: float = pa.Field(nullable=True, description="Value at which R = 4; null if not reached.")
    reduction_factor_at_r1: float = pa.Field(nullable=True, description="R with value_r1 substituted back (1 unless R jumps there, e.g. a device count rounding up).")
    reduction_factor_at_r4: float = pa.Field(nullable=True, description="R with value_r4 substituted back.")
    value_r1_in_range: bool = pa.Field(description="value_r1 lies inside [low, high].")
    value_r4_in_range: bool = pa.Field(description="value_r4 lies inside [low, high].")
    search_low: float = pa.Field(gt=0, description="Search span, low (value / 1000).")
    search_high: float = pa.Field(gt=0, description="Search span, high (value x 1000, at most 24 h/day or a fraction of 1).")

    class Config:
        unique = ["scenario_id", "device_class", "pattern", "parameter"]


class Uncertainty(Contract):
    """marts.uncertainty (Monte Carlo). Grain: scenario x edge device class x basis x pattern x method row (network
    method, allocation policy, resize power) x metric. The frame's other allocation policies and resize powers are
    evaluated on the patterns marts.verdict reads: the scenario's own (every row) and the one that moves no bytes
    (every policy, under the headline network method and resize power); every other pattern at the headline row.

    Quantiles and means are over the feasible draws: those whose fleet, resized where the frame
    resizes it, can send its traffic over its links in its training window.
    """

    #: The warehouse table(s) this model is the contract of (pipelines.warehouse.dictionary finds it so).
    __tables__ = ("marts.uncertainty",)

    scenario_id: str = pa.Field(description="Scenario.")
    device_class: str = pa.Field(str_matches=DEVICE_CLASS_PATTERN, description="Edge device class ('fleet': a mixed fleet as a whole).")
    basis: str = pa.Field(description="Equivalence basis: the scenario's headline, and measured_throughput beside it.")
    is_headline: bool = pa.Field(description="The scenario's headline basis.")
    pattern: str = pa.Field(nullable=True, isin=EVALUATED_PATTERN_LIST, description="Communication pattern (a scenario's own comm_pattern and, where its frame resizes the fleet, its edge training designs among them); null on a best_design row.")
    best_design: bool = pa.Field(description="The row reads, in each draw, the best admissible edge training design of the scenario's (the highest R among core.model_evaluation's rows with is_scenario_design and design_admissible); a draw with none admissible is infeasible. marts.verdict's is_best_design rows take their bands from it.")
    network_method: str = pa.Field(isin=list(NETWORK_METHODS), description="How the network energy is counted (core.network_methods).")
    embodied_policy: str = pa.Field(isin=list(POLICIES), description="How the devices' embodied carbon is allocated (core.embodied_policies; the frame's rows: core.frame_embodied_policies).")
    resize_power: str = pa.Field(isin=list(RESIZE_POWERS), description="How a fleet's extra device-hours draw power (core.resize_powers; the frame's rows: core.frame_resize_powers).")
    is_headline_method: bool = pa.Field(description="The frame's headline method row: its headline network method, the scenario's allocation policy and the frame's headline resize power (the row every other mart uses).")
    is_headline_policy: bool = pa.Field(description="The scenario's own allocation policy (edge_embodied_policy).")
    is_headline_resize_power: bool = pa.Field(description="The frame's headline resize power.")
    metric: str = pa.Field(isin=["reduction_factor", "edge_added_kgco2e", "cloud_total_kgco2e"], description="reduction_factor | edge_added_kgco2e | cloud_total_kgco2e.")
    p05: float = pa.Field(nullable=True, description="5th percentile over the feasible draws (null: none is feasible).")
    p50: float = pa.Field(nullable=True, description="Median over the feasible draws.")
    p95: float = pa.Field(nullable=True, description="95th percentile over the feasible draws.")
    mean: float = pa.Field(nullable=True, description="Mean over the feasible draws.")
    n_draws: int = pa.Field(ge=1, description="Draws.")
    n_feasible: int = pa.Field(ge=0, description="Draws whose fleet can send its traffic over its links (resized where the frame resizes).")
    share_r_below_1: float = pa.Field(nullable=True, in_range={"min_value": 0, "max_value": 1}, description="Share of draws with R < 1 (R rows only).")
    share_r_below_4: float = pa.Field(nullable=True, in_range={"min_value": 0, "max_value": 1}, description="Share of draws with R < 4.")
    share_link_feasible: float = pa.Field(nullable=True, in_range={"min_value": 0, "max_value": 1}, description="Share of draws whose traffic fits the links in the training window.")
    share_memory_feasible: float = pa.Field(nullable=True, in_range={"min_value": 0, "max_value": 1}, description="Share of draws whose training state fits device memory.")
    share_resized: float = pa.Field(nullable=True, in_range={"min_value": 0, "max_value": 1}, description="Share of draws whose fleet was grown from its compute-equivalent count (its pipelines complete a^S of the window, or it was resized to carry its traffic).")
    p05_all_draws: float = pa.Field(nullable=True, ge=0, description="5th percentile of R over every draw, an infeasible draw counted as a failure (R = 0: its fleet delivers none of the job) (R rows only).")
    p50_all_draws: float = pa.Field(nullable=True, ge=0, description="Median of R over every draw, an infeasible draw counted as R = 0.")
    p95_all_draws: float = pa.Field(nullable=True, ge=0, description="95th percentile of R over every draw, an infeasible draw counted as R = 0.")
    share_feasible_r_ge_1: float = pa.Field(nullable=True, in_range={"min_value": 0, "max_value": 1}, description="Share of every draw whose fleet is feasible and reaches R >= 1 (R rows only).")
    share_feasible_r_ge_4: float = pa.Field(nullable=True, in_range={"min_value": 0, "max_value": 1}, description="Share of every draw whose fleet is feasible and reaches the claim's low end (R >= 4) (R rows only).")
    seed: int = pa.Field(description="Random seed of the draws.")

    class Config:
        unique = ["scenario_id", "device_class", "basis", "best_design", "pattern", "network_method", "embodied_policy", "resize_power",
                  "metric"]

    @pa.dataframe_check(description="p05 <= p50 <= p95, or all three null (no feasible draw)")
    @classmethod
    def ordered(cls, data: pa.PolarsData) -> pl.LazyFrame:
        return data.lazyframe.select(
            pl.when(pl.col("p05").is_null())
            .then(pl.col("p50").is_null() & pl.col("p95").is_null())
            .otherwise((pl.col("p05") <= pl.col("p50")) & (pl.col("p50") <= pl.col("p95"))))

    @pa.dataframe_check(description="the all-draw band is ordered and never above the feasible draws' band (an infeasible draw counts as R = 0)")
    @classmethod
    def all_draws_below_feasible(cls, data: pa.PolarsData) -> pl.LazyFrame:
        ordered = (pl.col("p05_all_draws") <= pl.col("p50_all_draws")) & (pl.col("p50_all_draws") <= pl.col("p95_all_draws"))
        below = (pl.col("p95_all_draws") <= pl.col("p95") * (1 + 1e-12)).fill_null(True)
        return data.lazyframe.select((ordered & below).fill_null(pl.col("p05_all_draws").is_null()))


class UncertaintyDistribution(Contract):
    """marts.uncertainty_distribution: histogram of R. Grain: scenario x edge device class x pattern x bin."""

    #: The warehouse table(s) this model is the contract of (pipelines.warehouse.dictionary finds it so).
    __tables__ = ("marts.uncertainty_distribution",)

    scenario_id: str = pa.Field(description="Scenario.")
    device_class: str = pa.Field(str_matches=DEVICE_CLASS_PATTERN, description="Edge device class ('fleet': a mixed fleet as a whole).")
    pattern: str = pa.Field(isin=EVALUATED_PATTERN_LIST, description="Communication pattern (a scenario's own comm_pattern among them).")
    bin_low: float = pa.Field(gt=0, description="Lower edge of the bin of R (log-spaced, 20 per decade).")
    bin_high: float = pa.Field(gt=0, description="Upper edge of the bin.")
    draws: int = pa.Field(ge=1, description="Draws whose R falls in the bin.")
    share: float = pa.Field(gt=0, le=1, description="draws / all draws of the scenario.")

    class Config:
        unique = ["scenario_id", "device_class", "pattern", "bin_low"]


class UncertaintyDrivers(Contract):
    """marts.uncertainty_drivers (Sobol indices). Grain: scenario x edge device class x pattern x ranged parameter."""

    #: The warehouse table(s) this model is the contract of (pipelines.warehouse.dictionary finds it so).
    __tables__ = ("marts.uncertainty_drivers",)

    scenario_id: str = pa.Field(description="Scenario.")
    device_class: str = pa.Field(str_matches=DEVICE_CLASS_PATTERN, description="Edge device class ('fleet': a mixed fleet as a whole).")
    pattern: str = pa.Field(isin=PATTERN_LIST, description="Communication pattern.")
    parameter: str = pa.Field(description="Parameter drawn.")
    s1: float = pa.Field(description="First-order Sobol index of log R (SALib), headline basis.")
    s1_ci95: float = pa.Field(description="Half-width of its bootstrap 95% CI.")
    st: float = pa.Field(description="Total-order Sobol index of log R.")
    st_ci95: float = pa.Field(description="Half-width of its bootstrap 95% CI.")
    st_share_of_sum: float = pa.Field(in_range={"min_value": 0, "max_value": 1}, description="max(ST, 0) / the sum of every input's ST. Not a share of the variance: total indices count interactions once per input, so they sum to more than 1 when inputs interact; this only ranks and scales them.")
    model_runs: int = pa.Field(ge=1, description="Model evaluations behind the indices (N x (D + 2)).")
    base_samples: int = pa.Field(ge=1, description="Sobol base samples N (the build's setting; docs/findings.md names the full study's).")
    rank: int = pa.Field(ge=1, description="1 = largest total index.")

    class Config:
        unique = ["scenario_id", "device_class", "pattern", "parameter"]
