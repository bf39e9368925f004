"""core.model_evaluation: the model's one formula (the macro model_rows, sql/model/model_rows.sql) evaluated once
over every parameter set of core.variants (each scenario as it stands, family 'base', and the what-ifs' families),
every row the marts read, so they read this table instead of evaluating again. The contracts of core.variants and
the tables over it are here too."""

from __future__ import annotations

import pandera.polars as pa
import polars as pl

from schemas.base import Contract
from schemas.scenario_parameters import ScenarioDevices
from schemas.vocabulary import (
    BASES,
    BASIS_FILTERS,
    CAPACITY_UNITS,
    DEVICE_CLASS_PATTERN,
    NETWORK_METHODS,
    PATTERN_ROWS,
    PATTERNS,
    POLICIES,
    RESIZE_POWERS,
)

#: A family's name (sql/variants/<family>.sql): 'base', each scenario as it stands, and the what-ifs'.
FAMILY_PATTERN = r"^[a-z][a-z0-9_]*$"
#: Which method rows a variant is evaluated on (sql/model/model_rows.sql, the CTE ``methods``).
METHOD_FILTERS = ("headline", "network", "rows", "all")
#: An override: the parameter, and its number or its name (a method's).
OVERRIDE = pl.Struct({"parameter": pl.String, "value": pl.Float64, "value_text": pl.String})


class Variants(Contract):
    """core.variants: the parameter sets the model evaluates (core.model_evaluation), the rows each is evaluated on and the parameters it overrides, one file per family (sql/variants/<family>.sql). Grain: scenario x variant."""

    #: The warehouse table(s) this model is the contract of (pipelines.warehouse.dictionary finds it so).
    __tables__ = ("core.variants",)

    scenario_id: str = pa.Field(description="Scenario (core.scenarios).")
    variant_id: str = pa.Field(description="The parameter set within its scenario: 'base', the scenario's own values; else its family's name for it (a model_id, a policy, ...).")
    family: str = pa.Field(str_matches=FAMILY_PATTERN, description="What kind of variant (its file, sql/variants/<family>.sql): 'base', the scenario as it stands; 'model_sizes', 'policies', ...")
    bases: pl.List(pl.String) = pa.Field(nullable=True, description="The bases it is evaluated on (rows of core.bases); null: every one.")
    basis_filter: str = pa.Field(isin=list(BASIS_FILTERS), description="Which of those bases' rows to keep: 'all', 'headline' (the scenario's headline basis), 'headline_and_measured' (the headline, and the measured basis on the patterns marts.verdict reads) or 'measured'.")
    patterns: pl.List(pl.String) = pa.Field(nullable=True, description="The communication patterns it is evaluated on (rows of core.patterns, an edge design only where the frame resizes its fleet); null: every pattern the scenario's frame admits.")
    own_pattern: bool = pa.Field(description="Its own comm_pattern beside those patterns.")
    designs: bool = pa.Field(description="Its edge training designs (core.patterns edge_design, where its frame resizes the fleet) beside those patterns.")
    method_filter: str = pa.Field(isin=list(METHOD_FILTERS), description="Which method rows: 'headline' (the frame's headline row), 'network' (every network method at the headline policy and resize power), 'rows' (method_rows) or 'all' (every row on the scenario's own pattern and designs, every allocation policy on the pattern that moves no bytes, the headline row elsewhere).")
    method_rows: pl.List(pl.Struct({"network_method": pl.String, "policy": pl.String, "resize_power": pl.String})) = pa.Field(
        nullable=True, description="The (network method, allocation policy, resize power) rows it is evaluated on where method_filter is 'rows'.")
    overrides: pl.List(OVERRIDE) = pa.Field(description="The parameters it sets in place of its scenario's (parameter, value or value_text); empty for 'base'. core.variant_parameters lists them as rows.")

    class Config:
        unique = ["scenario_id", "variant_id"]


class VariantParameters(Contract):
    """core.variant_parameters: each variant's overrides as rows (core.variants overrides). Grain: scenario x variant x parameter."""

    #: The warehouse table(s) this model is the contract of (pipelines.warehouse.dictionary finds it so).
    __tables__ = ("core.variant_parameters",)

    scenario_id: str = pa.Field(description="Scenario (core.scenarios).")
    variant_id: str = pa.Field(description="The parameter set (core.variants).")
    family: str = pa.Field(str_matches=FAMILY_PATTERN, description="Its family (core.variants).")
    parameter: str = pa.Field(description="The parameter it sets in place of the scenario's (a column of core.scenarios).")
    value: float = pa.Field(nullable=True, description="Its number (null where it names a method: value_text).")
    value_text: str = pa.Field(nullable=True, description="The method it names (an allocation policy, ...), else null.")

    class Config:
        unique = ["scenario_id", "variant_id", "parameter"]

    @pa.dataframe_check(description="a number or a name: exactly one of value and value_text")
    @classmethod
    def number_or_name(cls, data: pa.PolarsData):  # type: ignore[no-untyped-def]
        return data.lazyframe.select(pl.col("value").is_null() != pl.col("value_text").is_null())


class VariantDevices(ScenarioDevices):
    """core.variant_devices: every variant's edge devices as rows (the macro device_rows over core.variant_inputs), the model's devices. Grain: scenario x variant x edge device class."""

    #: The warehouse table(s) this model is the contract of (pipelines.warehouse.dictionary finds it so).
    __tables__ = ("core.variant_devices",)

    variant_id: str = pa.Field(description="The parameter set (core.variants).")
    device_ids: str = pa.Field(nullable=True, description="Unset here: core.scenario_devices names the devices a scenario's rows were read from.")

    class Config:
        unique = ["scenario_id", "variant_id", "device_class"]


class ModelEvaluation(Contract):
    """The model evaluated on every parameter set. Grain: scenario x variant (core.variants) x edge device class ('fleet': a mixed fleet as a whole) x basis (every row of core.bases the class has the figures for) x communication pattern (every row of core.patterns) x method row (network method, allocation policy, resize power): every row of the frame's headline, every row the frame admits on the scenario's own pattern, and every allocation policy on the pattern that moves no bytes."""

    #: The warehouse table(s) this model is the contract of (pipelines.warehouse.dictionary finds it so).
    __tables__ = ("core.model_evaluation",)

    scenario_id: str = pa.Field(description="Scenario (core.scenarios).")
    variant_id: str = pa.Field(description="The parameter set (core.variants): 'base', the scenario's own values; else its family's name for it.")
    family: str = pa.Field(str_matches=FAMILY_PATTERN, description="The variant's family (core.variants): 'base', the scenario as it stands (the rows marts.verdict, marts.lifecycle_carbon and marts.fleet_equivalence read); 'model_sizes', 'policies', ... (a what-if mart's).")
    device_class: str = pa.Field(str_matches=DEVICE_CLASS_PATTERN, description="Edge device class ('fleet': a mixed fleet as a whole).")
    basis: str = pa.Field(isin=list(BASES), description="Equivalence basis (core.bases).")
    is_headline: bool = pa.Field(description="The scenario's headline basis.")
    pattern: str = pa.Field(isin=list(PATTERN_ROWS), description="Communication pattern (core.patterns): " + ", ".join(PATTERNS)
                             + "; and a scenario's own comm_pattern where no other scenario is evaluated on it.")
    network_method: str = pa.Field(isin=list(NETWORK_METHODS), description="How communication's network energy is counted (core.network_methods).")
    embodied_policy: str = pa.Field(isin=list(POLICIES), description="How the devices' embodied carbon is allocated (core.embodied_policies).")
    resize_power: str = pa.Field(isin=list(RESIZE_POWERS), description="How a grown fleet's extra training device-hours draw power (core.resize_powers); the waiting device-hours (waiting_device_hours) draw idle power under every row.")
    is_headline_method: bool = pa.Field(description="The frame's headline method row: its headline network method, the scenario's allocation policy and the frame's headline resize power.")
    is_headline_policy: bool = pa.Field(description="The scenario's own allocation policy.")
    is_headline_resize_power: bool = pa.Field(description="The frame's headline resize power.")
    cloud_gpu_capacity: float = pa.Field(description="Cloud GPU capacity on this basis, in capacity_unit.")
    device_capacity: float = pa.Field(nullable=True, description="Edge device capacity on this basis, in capacity_unit (null on the fleet row).")
    capacity_unit: str = pa.Field(isin=list(CAPACITY_UNITS), description="The unit of the basis's capacities (core.bases).")
    online_fraction: float = pa.Field(description="Share of the training window a device is online (1 where the basis does not count availability).")
    devices_exact: float = pa.Field(nullable=True, description="(X_gpu x h_gpu) / (X_dev x h_dev x online / slowdown) before rounding (null on the fleet row).")
    devices_formula: float = pa.Field(nullable=True, description="ceil(devices_exact) (null on the fleet row).")
    devices_from: str = pa.Field(isin=["formula", "stated", "memory_capacity", "device_peak", "fleet"], description="Where the count comes from: the formula, the scenario's stated count, the memory floor, the devices at their peak, or a mixed fleet's sum.")
    devices_memory_floor: float = pa.Field(nullable=True, description="Devices holding the fleet model's training state per GPU holding it: a floor under every basis, not an equivalence (null on the fleet row).")
    devices: float = pa.Field(gt=0, description="Devices used for the whole cloud job: the count times the device multiplier, cloud_gpu_count and the class's fleet share, grown where the frame resizes the fleet.")
    resized_from: float = pa.Field(nullable=True, description="The compute-equivalent count the fleet was grown from (pipelines to complete, or traffic to carry); null when not grown.")
    cloud_total_kgco2e: float = pa.Field(ge=0, description="The cloud job's lifecycle total (the class's share of it in a mixed fleet), kgCO2e.")
    edge_operational_kgco2e: float = pa.Field(ge=0, description="Edge operational carbon of the fleet over the job, kgCO2e: its training device-hours as the resize-power row weighs them, plus its waiting device-hours (waiting_device_hours) at the class's idle power (its training power where it has none), all through the wall factor.")
    edge_embodied_kgco2e: float = pa.Field(nullable=True, ge=0, description="Edge embodied carbon allocated to training under the policy, kgCO2e.")
    cloud_embodied_per_gpu_kgco2e: float = pa.Field(nullable=True, ge=0, description="One cloud GPU's embodied carbon charged to the job, kgCO2e.")
    cloud_operational_per_gpu_kgco2e: float = pa.Field(nullable=True, ge=0, description="One cloud GPU's operational carbon over the job, kgCO2e.")
    device_embodied_kgco2e: float = pa.Field(nullable=True, ge=0, description="One edge device's embodied carbon over the job (its report's non-use-phase share, re-amortised), kgCO2e.")
    device_operational_kgco2e: float = pa.Field(nullable=True, ge=0, description="One edge device's training electricity carbon over the job, kgCO2e.")
    comm_gb: float = pa.Field(ge=0, description="Data the pattern needs the fleet to move over the job, GB.")
    comm_kwh: float = pa.Field(ge=0, description="Communication energy under the network method (radio and network), kWh.")
    comm_kgco2e: float = pa.Field(ge=0, description="Communication carbon at the edge grid intensity, kgCO2e.")
    network_w_per_line: float = pa.Field(nullable=True, description="The network power the method charges, averaged over the line-hours the training holds, W: network_kwh x 1000 / (the devices training at once x their window), where the devices training at once are devices x online_fraction, or devices x online_fraction^pipeline_stages for a pattern that splits the model (N a^S: training hours, not the hours a device is online).")
    line_power_physical_max_w: float = pa.Field(nullable=True, description="The most a fixed broadband line can draw (twice Malmodin 2020's figure), W: the bound network_physical checks.")
    network_physical: bool = pa.Field(description="network_w_per_line stays within line_power_physical_max_w.")
    link_time_share: float = pa.Field(ge=0, description="Radio time the pattern needs / the training window; > 1: the links cannot carry it.")
    required_link_mb_per_s: float = pa.Field(nullable=True, description="Link rate each online device needs to send its share within its window, MB/s.")
    link_mb_per_s: float = pa.Field(nullable=True, description="The scenario's link rate per device, MB/s (edge_bandwidth_mb_per_s).")
    link_headroom: float = pa.Field(gt=0, le=1, description="The share of a link's rate training traffic may take (the scenario's link_headroom: TCP/IP and Ethernet framing leave 94.15% of it for payload; 1 where a scenario sets none); a resize sizes the fleet to stay below it.")
    link_feasible: bool = pa.Field(description="link_time_share <= link_headroom: the links carry the traffic below their headroom.")
    training_memory_gb: float = pa.Field(nullable=True, ge=0, description="Memory one device holds to train, GB: the training state at the design's bytes per parameter (training_bytes_per_param, or lean_training_bytes_per_param for a lean design), 1/S of it in an S-stage pipeline, the stored inputs of its layers and one layer's working activations at micro_batch_sequences with full activation checkpointing (sql/model/macros.sql training_memory_bytes; activations 0 where the scenario sets no micro-batch); the most of any class on the fleet row.")
    device_memory_gb: float = pa.Field(nullable=True, ge=0, description="The memory a device may use for training, GB: its memory x edge_usable_memory_fraction (null on the fleet row).")
    memory_feasible: bool = pa.Field(nullable=True, description="training_memory_gb <= device_memory_gb: the device holds what it trains with.")
    design_admissible: bool = pa.Field(description="The design can run: link_feasible and, for an edge training design (core.patterns edge_design), memory_feasible (a pipeline is no deeper than max_pipeline_stages by construction, so one whose state needs more stages does not fit). marts.verdict's best and worst designs are among the admissible ones.")
    pipeline_stages: float = pa.Field(nullable=True, description="Stages of a pattern that splits the model (core.patterns splits_model); null for other patterns.")
    max_pipeline_stages: float = pa.Field(nullable=True, description="The deepest pipeline a design may run: the model's layers, at most the scenario's max_pipeline_stages (null on the fleet row).")
    is_scenario_design: bool = pa.Field(nullable=True, description="The pattern is one marts.verdict reads with communication: the scenario's own comm_pattern, or an edge training design (core.patterns edge_design) of a frame that resizes its fleet.")
    token_overhead: float = pa.Field(nullable=True, description="Tokens the design trains per token of the job (outer_token_overhead for an outer-sync design, else 1): its devices and traffic are for that much more work (null on the fleet row).")
    edge_battery_wear_kgco2e: float = pa.Field(nullable=True, ge=0, description="The battery-wear part of edge_embodied_kgco2e, kgCO2e: the policy's weight of the training's extra charge cycles (the own battery's share of the device's embodied carbon up to its rated cycles, a replacement battery's embodied carbon for each of battery_replacements, or a worn-out device's lost life).")
    implied_device_utilisation: float = pa.Field(nullable=True, description="The devices' achieved FLOPS over their FP32 peak while they train (the cloud GPU's work over the fleet's online peak).")
    waiting_device_hours: float = pa.Field(ge=0, description="Device-hours over the job the fleet's devices are online while their pipeline is incomplete: devices x (online_fraction - online_fraction^pipeline_stages) x hours_per_day x 365 x job_years (0 for a pattern that does not split the model, and where online_fraction is 1); charged at the class's idle power under every resize-power row (summed over the classes on the fleet row).")
    battery_extra_cycles: float = pa.Field(nullable=True, ge=0, description="Extra full charge cycles one device's battery makes over the job from training: battery_throughput_share x training power x hours_per_day x the share of its window it trains (online_fraction, or online_fraction^pipeline_stages for a pattern that splits the model) x 365 x job_years / battery Wh (null without a battery figure, and on the fleet row).")
    battery_rated_cycles: float = pa.Field(nullable=True, ge=0, description="The class's rated full cycles (<class>_battery_rated_cycles): a battery lasts that many, then a replacement is charged (null without one, and on the fleet row).")
    battery_replacements: float = pa.Field(nullable=True, ge=0, description="Replacement batteries one device needs for its extra cycles: ceil(battery_extra_cycles / battery_rated_cycles) - 1, at least 0 (the device's own battery is the first); under the battery-wear policy each is charged a replacement battery's embodied carbon (battery Wh x battery_embodied_kgco2e_per_kwh) for the owners who keep the device (null without a battery figure, and on the fleet row).")
    edge_added_kgco2e: float = pa.Field(nullable=True, ge=0, description="Edge training carbon: operational + allocated embodied + communication, kgCO2e (null where the variant's allocation policy charges a term the class has no figure for, e.g. battery wear of a class without a battery: marts.embodied_allocation leaves such rows out; no base row is null).")
    fleet_share: float = pa.Field(nullable=True, description="The class's share of a mixed fleet's work; null when the class stands alone against the whole job.")
    hours_per_day: float = pa.Field(nullable=True, description="The class's training hours a day (its own class_hours_per_day, else the scenario's edge_hours_per_day).")
    job_years: float = pa.Field(gt=0, description="Calendar years of the job.")
    cloud_gpu_count: float = pa.Field(gt=0, description="Cloud accelerators the job runs on.")
    wall_factor: float = pa.Field(nullable=True, description="Wall electricity per unit of the device's training power: the charger's efficiency and the battery's round trip on the share of energy that passes through it.")
    reduction_factor: float = pa.Field(nullable=True, description="R = cloud_total_kgco2e / edge_added_kgco2e (null where edge_added_kgco2e is).")

    class Config:
        unique = ["scenario_id", "variant_id", "device_class", "basis", "pattern", "network_method", "embodied_policy", "resize_power"]
