"""Pandera models of the marts: column meaning, units and the checks that gate them."""

from __future__ import annotations

import datetime as dt

import pandera.polars as pa
import polars as pl
from pandera.engines import polars_engine as pe

from schemas.base import Contract
from schemas.benchmark_series import TABLE1_CLAIMS
from schemas.device_specs import DEVICE_CLASSES
from schemas.grid_intensity import EMISSION_SCOPES, ZONE_PATTERN
from schemas.siting import INTENSITY_BASES as SITING_BASES
from schemas.siting import SIDES as SITING_SIDES
from schemas.statuses import REPRODUCTION_STATUSES
from schemas.vocabulary import (
    ACCOUNTING_FRAMES,
    BASES,
    CAPACITY_UNITS,
    COMM_PATTERNS,
    DEVICE_CLASS_PATTERN,
    FEASIBLE_SHARE_MIN,
    NETWORK_METHODS,
    PATTERNS,
    POLICIES,
    RESIZE_POWERS,
    VERDICT_HOLDS,
    VERDICTS,
)

UTC_TS = pe.DateTime(time_zone="UTC")


def finite_positive(data: pa.PolarsData) -> pl.LazyFrame:
    """Null, or a finite number > 0 (reduction factors, ratios)."""
    col = pl.col(data.key)
    return data.lazyframe.select(col.is_null() | (col.is_finite() & (col > 0)))


def whole_at_least_one(data: pa.PolarsData) -> pl.LazyFrame:
    """A whole number of devices, at least 1."""
    col = pl.col(data.key)
    return data.lazyframe.select((col >= 1) & (col == col.floor()))



#: Columns that record which run computed a row (provenance, not a result): two builds of the same
#: inputs agree on every other column.
RUN_STAMP_COLUMNS = ("computed_run_id",)

class TrainingEnergy(Contract):
    """marts.training_energy (paper Table 1). Grain: one benchmark series (repeated runs of one
    device and workload); any number of series may share a device and workload."""

    #: The warehouse table(s) this model is the contract of (pipelines.warehouse.dictionary finds it so).
    __tables__ = ("marts.training_energy",)

    series_id: str = pa.Field(unique=True, description="Benchmark series (repeated runs).")
    device_id: str = pa.Field(description="Device: a base_device_id of staging.device_specs, the one id of a device (a run on any other id is quarantined).")
    device_class: str = pa.Field(isin=DEVICE_CLASSES, description="The device's class in staging.device_specs: " + " | ".join(DEVICE_CLASSES) + ".")
    model: str = pa.Field(nullable=True, description="ML model trained, e.g. OPT-125M.")
    workload: str = pa.Field(description="Workload of the series.")
    n_runs: int = pa.Field(ge=1, description="Repeated runs.")
    energy_j_mean: float = pa.Field(gt=0, description="Mean energy per run, J.")
    energy_j_ci95_low: float = pa.Field(nullable=True, description="95% CI of the mean, low, J.")
    energy_j_ci95_high: float = pa.Field(nullable=True, description="95% CI of the mean, high, J.")
    duration_s_mean: float = pa.Field(gt=0, description="Mean run duration, s.")
    mean_power_w_mean: float = pa.Field(gt=0, description="Mean power, W.")
    energy_ratio_vs_cloud_gpu: float = pa.Field(nullable=True, description="Reference series' energy / this energy (same workload); > 1 means less energy than the GPU.")
    slowdown_vs_cloud_gpu: float = pa.Field(nullable=True, description="This duration / reference series' duration.")
    reference_device_id: str = pa.Field(description="The reference cloud GPU.")
    reference_series_id: str = pa.Field(
        nullable=True,
        description="The reference GPU's series the ratios divide by: of its series of this workload, the one that reproduces "
                    "the paper, else the first by series_id; null when it has none.",
    )
    is_synthetic: bool = pa.Field(description="True when the logs are synthesised, not measured.")
    reproduces: str = pa.Field(
        nullable=True, isin=list(TABLE1_CLAIMS),
        description="The paper claim this series reproduces (marts.paper_reproduction reads it from this series only); null for "
                    "every other series.",
    )
    source_id: str = pa.Field(description="Source of the series' first run (joins staging.sources).")

    @pa.check("energy_ratio_vs_cloud_gpu", "slowdown_vs_cloud_gpu", name="finite_positive")
    @classmethod
    def ratios_finite_positive(cls, data: pa.PolarsData) -> pl.LazyFrame:
        return finite_positive(data)

    @pa.check("reproduces", name="one_series_per_claim")
    @classmethod
    def one_series_per_claim(cls, data: pa.PolarsData) -> pl.LazyFrame:
        """A paper claim is reproduced by one series at most."""
        col = pl.col(data.key)
        return data.lazyframe.select(col.is_null() | ~col.is_duplicated())


class LifecycleCarbon(Contract):
    """marts.lifecycle_carbon (paper Fig. 4). Grain: scenario x device class."""

    #: The warehouse table(s) this model is the contract of (pipelines.warehouse.dictionary finds it so).
    __tables__ = ("marts.lifecycle_carbon",)

    scenario_id: str = pa.Field(description="Scenario.")
    device_class: str = pa.Field(str_matches=DEVICE_CLASS_PATTERN, description="cloud_gpu, or an edge device class of the scenario (core.scenario_devices).")
    horizon_years: float = pa.Field(gt=0, description="Years T the terms are counted over: the model's job_years (the scenario's horizon_years, or its workload's duration on cloud_gpu_count GPUs).")
    embodied_kgco2e: float = pa.Field(ge=0, description="Embodied carbon charged to T, kgCO2e (the model's per-unit term).")
    operational_kgco2e: float = pa.Field(ge=0, description="Operational carbon over T, kgCO2e (the model's per-unit term).")
    total_kgco2e: float = pa.Field(gt=0, description="Embodied + operational, kgCO2e.")
    embodied_share: float = pa.Field(in_range={"min_value": 0, "max_value": 1}, description="Embodied / total.")
    operational_share: float = pa.Field(in_range={"min_value": 0, "max_value": 1}, description="Operational / total.")
    embodied_rule: str = pa.Field(description="How embodied carbon was charged.")

    class Config:
        unique = ["scenario_id", "device_class"]

    @pa.dataframe_check(description="shares sum to 1 within 0.01")
    @classmethod
    def shares_sum_to_one(cls, data: pa.PolarsData) -> pl.LazyFrame:
        return data.lazyframe.select(((pl.col("embodied_share") + pl.col("operational_share")) - 1).abs() <= 0.01)


class FleetEquivalence(Contract):
    """marts.fleet_equivalence (paper Fig. 5). Grain: scenario x edge device class x basis; a
    mixed fleet adds one row for the fleet as a whole (device_class 'fleet', its classes summed)."""

    #: The warehouse table(s) this model is the contract of (pipelines.warehouse.dictionary finds it so).
    __tables__ = ("marts.fleet_equivalence",)

    scenario_id: str = pa.Field(description="Scenario.")
    device_class: str = pa.Field(str_matches=DEVICE_CLASS_PATTERN, description="Edge device class: any class the scenario declares by its <class>_train_power_w row; 'fleet' for a mixed fleet as a whole.")
    basis: str = pa.Field(isin=list(BASES), description="Equivalence basis: " + ", ".join(BASES) + ".")
    is_headline: bool = pa.Field(description="The basis the scenario's headline uses: peak_flops when it states a count, else its headline_basis (binding or measured_throughput).")
    cloud_gpu_capacity: float = pa.Field(gt=0, description="Cloud GPU capacity on this basis, in capacity_unit.")
    device_capacity: float = pa.Field(nullable=True, gt=0, description="(Null on the fleet row.) Edge device capacity on this basis, in capacity_unit.")
    capacity_unit: str = pa.Field(isin=list(CAPACITY_UNITS), description="TFLOPS (peak, roofline-attainable; the GPU's x cloud utilisation), GB/s (bandwidth) or jobs/h (measured throughput of the same job).")
    online_fraction: float = pa.Field(gt=0, le=1, description="Share of the training window a device is online (1 except on availability and binding).")
    devices_exact: float = pa.Field(nullable=True, gt=0, description="(Null on the fleet row.) (X_gpu x h_gpu) / (X_dev x h_dev x online / slowdown) before rounding (at least the memory floor on binding and measured_throughput).")
    devices_formula: float = pa.Field(nullable=True, description="ceil(devices_exact). (Null on the fleet row.)")
    devices_per_gpu: float = pa.Field(gt=0, description="devices / cloud_gpu_count.")
    devices: float = pa.Field(gt=0, description="Devices used for the whole cloud job: the stated count (peak_flops) or the formula, times the device multiplier, times cloud_gpu_count, times the class's fleet share (rounded up).")
    cloud_gpu_count: float = pa.Field(ge=1, description="Cloud accelerators the job runs on (1 in the paper).")
    fleet_share: float = pa.Field(nullable=True, in_range={"min_value": 0, "max_value": 1}, description="The class's share of a mixed fleet's work (summed on the fleet row); null when the class stands alone against the whole job.")
    job_years: float = pa.Field(gt=0, description="Calendar years of the job (the horizon, or the workload's accelerator-hours over cloud_gpu_count x cloud hours a day).")
    devices_from: str = pa.Field(isin=["formula", "stated", "memory_capacity", "device_peak", "fleet"], description="formula | stated (the paper's own count) | memory_capacity (the memory floor binds) | device_peak (measured basis: the devices needed to do the GPU's work at their peak FLOPS bind) | fleet (a mixed fleet's sum).")
    devices_memory_floor: float = pa.Field(nullable=True, ge=1, description="(Null on the fleet row.) Memory floor: devices holding the fleet model's training state per GPU holding it. A capacity floor under every basis, not an equivalence (no R of its own).")
    edge_added_kgco2e: float = pa.Field(gt=0, description="Edge training carbon over the horizon (operational + allocated embodied), kgCO2e.")
    edge_operational_kgco2e: float = pa.Field(ge=0, description="Operational part, kgCO2e.")
    edge_embodied_kgco2e: float = pa.Field(ge=0, description="Allocated embodied part (0 under the paper's policy), kgCO2e.")
    comm_pattern: str = pa.Field(isin=list(COMM_PATTERNS), description="The communication pattern behind comm_* and reduction_factor_with_comm: the scenario's comm_pattern (the paper's radio window in its own scenarios).")
    comm_gb: float = pa.Field(ge=0, description="Data the pattern needs the fleet to move over the horizon, GB (network energy is charged on these bytes).")
    comm_kgco2e: float = pa.Field(ge=0, description="Communication carbon under comm_pattern (radio + network), kgCO2e.")
    link_time_share: float = pa.Field(ge=0, description="Radio time one online device needs for comm_pattern / its training window; > 1: the links cannot carry it in time.")
    cloud_total_kgco2e: float = pa.Field(gt=0, description="The cloud job's lifecycle total (the class's share of it in a mixed fleet): cloud_gpu_count GPUs over job_years, kgCO2e.")
    reduction_factor: float = pa.Field(description="R = cloud total / edge added.")
    reduction_factor_with_comm: float = pa.Field(description="R with comm_pattern's communication added to the edge side.")
    train_power_w_for_r4: float = pa.Field(nullable=True, ge=0, description="Edge training power at which R = 4 with the embodied part held fixed, W; null where no power reaches R = 4, or the scenario's claim is not a ratio R with a row of core.claim (marts.break_even solves every parameter exactly).")

    class Config:
        unique = ["scenario_id", "device_class", "basis"]

    @pa.check("reduction_factor", "reduction_factor_with_comm", name="finite_positive")
    @classmethod
    def factors_finite_positive(cls, data: pa.PolarsData) -> pl.LazyFrame:
        return finite_positive(data)

    @pa.check("devices_formula", name="whole_at_least_one")
    @classmethod
    def counts_whole(cls, data: pa.PolarsData) -> pl.LazyFrame:
        return whole_at_least_one(data)


class ScalingEnergy(Contract):
    """marts.scaling_energy (paper Fig. 3). Grain: scenario x device class x model size."""

    #: The warehouse table(s) this model is the contract of (pipelines.warehouse.dictionary finds it so).
    __tables__ = ("marts.scaling_energy",)

    scenario_id: str = pa.Field(description="Scenario.")
    device_class: str = pa.Field(str_matches=DEVICE_CLASS_PATTERN, description="Device class: cloud_gpu, or an edge device class of the scenario (core.scenario_devices).")
    model_id: str = pa.Field(description="OPT size.")
    params: float = pa.Field(gt=0, description="Parameters.")
    compute_kwh: float = pa.Field(gt=0, description="Compute energy, kWh.")
    comm_gb: float = pa.Field(ge=0, description="Data moved, GB.")
    comm_time_s: float = pa.Field(ge=0, description="Transfer time at the link bandwidth, s.")
    comm_kwh: float = pa.Field(ge=0, description="Communication energy, kWh.")
    total_kwh: float = pa.Field(gt=0, description="Compute + communication, kWh.")

    class Config:
        unique = ["scenario_id", "device_class", "model_id"]


class DistributedTrainingEnergy(Contract):
    """marts.distributed_training_energy (paper Table 2, estimate). Grain: scenario x device class x pattern."""

    #: The warehouse table(s) this model is the contract of (pipelines.warehouse.dictionary finds it so).
    __tables__ = ("marts.distributed_training_energy",)

    scenario_id: str = pa.Field(description="Scenario.")
    device_class: str = pa.Field(str_matches=DEVICE_CLASS_PATTERN, description="Edge device class of the scenario (core.scenario_devices).")
    model_id: str = pa.Field(description="Model trained (OPT-1.3B).")
    pattern: str = pa.Field(isin=list(COMM_PATTERNS), description="Communication pattern: each of core.patterns that moves bytes and charges its radio on them (comm_bytes in sql/model/macros.sql).")
    devices: float = pa.Field(ge=1, description="Devices in the fleet.")
    compute_kwh: float = pa.Field(gt=0, description="Fleet compute energy, kWh.")
    comm_gb: float = pa.Field(ge=0, description="Data moved, GB.")
    comm_kwh: float = pa.Field(ge=0, description="Communication energy, kWh.")
    total_kwh: float = pa.Field(gt=0, description="Compute + communication, kWh.")
    cloud_kwh: float = pa.Field(gt=0, description="The cloud GPU's energy for the same work, kWh.")
    energy_ratio_vs_cloud_gpu: float = pa.Field(description="Cloud energy / edge total.")

    class Config:
        unique = ["scenario_id", "device_class", "pattern"]

    @pa.check("energy_ratio_vs_cloud_gpu", name="finite_positive")
    @classmethod
    def ratio_finite_positive(cls, data: pa.PolarsData) -> pl.LazyFrame:
        return finite_positive(data)


class ScenarioIds(Contract):
    """marts.scenarios: the scenarios the build evaluated (core.scenarios), for the pages' scenario selectors. Grain: scenario."""

    #: The warehouse table(s) this model is the contract of (pipelines.warehouse.dictionary finds it so).
    __tables__ = ("marts.scenarios",)

    scenario_id: str = pa.Field(unique=True, description="Scenario id (joins every mart's scenario_id).")
    comm_pattern: str = pa.Field(isin=list(COMM_PATTERNS), description="The scenario's own communication pattern (its comm_pattern): a pattern the pages offer.")
    compute_only_pattern: str = pa.Field(isin=list(PATTERNS), description="The pattern that moves no bytes (core.patterns): the pages' R without communication.")


class GridDaily(Contract):
    """marts.grid_daily: daily mean grid carbon intensity per zone from the sub-daily (hourly or half-hourly)
    actual series of staging.grid_intensity, in one emission scope per zone (lifecycle where the zone has it).
    Grain: zone x UTC day."""

    #: The warehouse table(s) this model is the contract of (pipelines.warehouse.dictionary finds it so).
    __tables__ = ("marts.grid_daily",)

    zone: str = pa.Field(str_matches=ZONE_PATTERN, description="Zone id (staging.grid_intensity.zone).")
    emission_scope: str = pa.Field(isin=EMISSION_SCOPES, description="The zone's one scope: lifecycle where its sub-daily series has it, else direct.")
    day: dt.date = pa.Field(description="UTC day.")
    gco2e_per_kwh: float = pa.Field(ge=0, description="Mean intensity of the day's periods, gCO2e/kWh.")
    periods: int = pa.Field(ge=1, description="Hourly or half-hourly periods averaged.")

    class Config:
        unique = ["zone", "day"]


class GridProfiles(Contract):
    """marts.grid_profiles: mean, lowest and highest grid carbon intensity per zone by hour of the day (UTC),
    over the sub-daily actual series in the scope marts.grid_daily chose for the zone. Grain: zone x hour of day."""

    #: The warehouse table(s) this model is the contract of (pipelines.warehouse.dictionary finds it so).
    __tables__ = ("marts.grid_profiles",)

    zone: str = pa.Field(str_matches=ZONE_PATTERN, description="Zone id (staging.grid_intensity.zone).")
    emission_scope: str = pa.Field(isin=EMISSION_SCOPES, description="The zone's one scope (as in marts.grid_daily).")
    hour_utc: int = pa.Field(in_range={"min_value": 0, "max_value": 23}, description="Hour of the day the periods start in, UTC.")
    mean_gco2e_per_kwh: float = pa.Field(ge=0, description="Mean intensity of the periods starting in that hour, gCO2e/kWh.")
    min_gco2e_per_kwh: float = pa.Field(ge=0, description="Lowest intensity of those periods, gCO2e/kWh.")
    max_gco2e_per_kwh: float = pa.Field(ge=0, description="Highest intensity of those periods, gCO2e/kWh.")
    periods: int = pa.Field(ge=1, description="Hourly or half-hourly periods averaged.")

    class Config:
        unique = ["zone", "hour_utc"]


class GridAnnual(Contract):
    """marts.grid_annual: annual average grid carbon intensity per zone, lifecycle scope (the annual_average rows of
    staging.grid_intensity). Grain: zone x year."""

    #: The warehouse table(s) this model is the contract of (pipelines.warehouse.dictionary finds it so).
    __tables__ = ("marts.grid_annual",)

    zone: str = pa.Field(str_matches=ZONE_PATTERN, description="Zone id (staging.grid_intensity.zone).")
    zone_name: str = pa.Field(description="Readable name of the zone as the source means it.")
    year: int = pa.Field(description="Calendar year (UTC) the average covers.")
    gco2e_per_kwh: float = pa.Field(ge=0, description="Annual average lifecycle intensity, gCO2e/kWh.")
    source_id: str = pa.Field(description="Source of the average (joins marts.sources).")

    class Config:
        unique = ["zone", "year"]


class PaperReproduction(Contract):
    """marts.paper_reproduction: every number the paper publishes, recomputed, with a verdict. Grain: one published claim."""

    #: The warehouse table(s) this model is the contract of (pipelines.warehouse.dictionary finds it so).
    __tables__ = ("marts.paper_reproduction",)

    claim_id: str = pa.Field(unique=True, description="Claim id (staging.paper_claims).")
    claim: str = pa.Field(description="The claim in words.")
    paper_value: float = pa.Field(nullable=True, description="Published number, where single.")
    paper_value_text: str = pa.Field(description="Published value as stated.")
    reproduced_value: float = pa.Field(nullable=True, description="Recomputed number, where single.")
    reproduced_value_text: str = pa.Field(description="Recomputed value(s) in words.")
    unit: str = pa.Field(description="Unit.")
    relative_error: float = pa.Field(nullable=True, description="reproduced / paper - 1 (largest over a range's ends).")
    status: str = pa.Field(isin=REPRODUCTION_STATUSES, description=" | ".join(REPRODUCTION_STATUSES) + " (an input of status calibrated, chosen to meet this output, is read by its recomputation).")
    explanation: str = pa.Field(str_length={"min_value": 10}, description="Why, in a sentence or two.")
    scenario_id: str = pa.Field(description="Scenario the claim was checked under.")
    location: str = pa.Field(description="Where in the paper.")
    source_id: str = pa.Field(description="The claim's source (joins staging.sources).")


class Verdict(Contract):
    """marts.verdict: the answer. Grain: scenario x basis x edge device class x method row (network method,
    allocation policy, resize power).

    The one table the README, the tests and the dashboards read for the verdict. A scenario's
    accounting frame admits one or more network methods (core.frame_network_methods), allocation
    policies (core.frame_embodied_policies) and resize powers (core.frame_resize_powers); a row is one
    combination, and the verdict is the frame's reading over all of them, repeated on each of its rows.
    """

    #: The warehouse table(s) this model is the contract of (pipelines.warehouse.dictionary finds it so).
    __tables__ = ("marts.verdict",)

    scenario_id: str = pa.Field(description="Scenario.")
    accounting_frame: str = pa.Field(isin=list(ACCOUNTING_FRAMES), description="Accounting frame (core.frames): " + " | ".join(ACCOUNTING_FRAMES) + " (the first the paper's mixed frame).")
    basis: str = pa.Field(isin=list(BASES), description="Equivalence basis: the scenario's headline and measured_throughput.")
    is_headline: bool = pa.Field(description="The scenario's headline basis (every design and method row of it; is_answer is one of these rows).")
    device_class: str = pa.Field(str_matches=DEVICE_CLASS_PATTERN, description="Edge device class ('fleet': a mixed fleet as a whole).")
    network_method: str = pa.Field(isin=list(NETWORK_METHODS), description="How communication's network energy is counted: radio (the paper's), volume (average kWh/GB at both ends), time (line and router power for the hours held) or marginal (a power model).")
    embodied_policy: str = pa.Field(isin=list(POLICIES), description="How the devices' embodied carbon is allocated (core.embodied_policies): the scenario's own edge_embodied_policy, and the frame's others (core.frame_embodied_policies; attributional: per_use_hour and calendar_time).")
    resize_power: str = pa.Field(isin=list(RESIZE_POWERS), description="How the fleet's extra device-hours (a resize over the link, or pipelines grown to complete) draw power (core.resize_powers): full (every device at training power while it trains) or online_idle (the work's device-hours at training power, the rest of the training device-hours at the class's idle power); under both, the waiting device-hours (online while their pipeline is incomplete) at the class's idle power.")
    is_headline_method: bool = pa.Field(description="The frame's headline method row: its headline network method, the scenario's allocation policy and the frame's headline resize power (the row the other marts use), on every design; is_answer is the method row that sets the verdict instead, on the best design.")
    is_headline_policy: bool = pa.Field(description="The scenario's own allocation policy.")
    is_headline_resize_power: bool = pa.Field(description="The frame's headline resize power.")
    devices_per_gpu: float = pa.Field(gt=0, description="Devices per cloud GPU on this basis (the compute-equivalent fleet).")
    reduction_factor: float = pa.Field(gt=0, description="Deterministic R, compute only.")
    p05: float = pa.Field(gt=0, description="Monte Carlo 5th percentile of R, compute only.")
    p50: float = pa.Field(gt=0, description="Monte Carlo median of R, compute only.")
    p95: float = pa.Field(gt=0, description="Monte Carlo 95th percentile of R, compute only.")
    share_r_below_1: float = pa.Field(in_range={"min_value": 0, "max_value": 1}, description="Share of draws with R < 1, compute only.")
    share_r_below_4: float = pa.Field(in_range={"min_value": 0, "max_value": 1}, description="Share of draws with R < 4 (below the paper's low end), compute only.")
    comm_pattern: str = pa.Field(description="The scenario's named communication pattern (its comm_pattern): the only design of a scenario whose frame does not resize its fleet.")
    edge_design: str = pa.Field(description="The edge training design of the 'with communication' columns: a row of core.patterns, the scenario's comm_pattern or, where its frame resizes the fleet, an edge training design (edge_design: pipeline, the rigid pipeline; diloco_server and diloco_ring, DiLoCo with a full replica per device through a server or a ring all-reduce; diloco_pipeline, DiLoCo across pipeline replicas).")
    design_admissible: bool = pa.Field(description="The design can run: its links carry its traffic below link_headroom and its devices hold its training memory (memory_feasible; a pipeline is no deeper than max_pipeline_stages).")
    design_inadmissible_reason: str = pa.Field(nullable=True, description="Why the design cannot run (the link's time share above its headroom; the memory it needs above the usable memory); null where it can.")
    link_headroom: float = pa.Field(gt=0, le=1, description="The share of a link's rate training traffic may take (the scenario's link_headroom, sourced: TCP/IP and Ethernet framing leave 94.15% for payload; 1 where a scenario sets none); a row whose link_time_share exceeds it is infeasible.")
    training_memory_gb: float = pa.Field(nullable=True, ge=0, description="Memory one device holds to train with this design, GB (core.model_evaluation training_memory_gb: state at the design's bytes per parameter, per stage in a pipeline, plus activations).")
    device_memory_gb: float = pa.Field(nullable=True, ge=0, description="The memory a device may use for training, GB (its memory x edge_usable_memory_fraction).")
    memory_feasible: bool = pa.Field(nullable=True, description="training_memory_gb <= device_memory_gb.")
    pipeline_stages: float = pa.Field(nullable=True, description="Stages of a design that splits the model; null for one that keeps a replica on every device.")
    token_overhead: float = pa.Field(nullable=True, description="Tokens the design trains per token of the job (outer_token_overhead for a DiLoCo-style design, else 1).")
    edge_operational_kgco2e: float = pa.Field(ge=0, description="The fleet's training electricity, kgCO2e (a cause of edge_added_kgco2e).")
    edge_embodied_kgco2e: float = pa.Field(nullable=True, ge=0, description="The devices' embodied carbon allocated to training, battery wear included, kgCO2e.")
    edge_battery_wear_kgco2e: float = pa.Field(nullable=True, ge=0, description="The battery-wear part of edge_embodied_kgco2e, kgCO2e.")
    comm_kgco2e: float = pa.Field(ge=0, description="Communication carbon (the network and the devices' radios), kgCO2e.")
    edge_added_kgco2e: float = pa.Field(gt=0, description="The devices' added carbon: edge_operational_kgco2e + edge_embodied_kgco2e + comm_kgco2e, kgCO2e; reduction_factor_with_comm is the cloud's total over it.")
    is_best_design: bool = pa.Field(description="The admissible design with the highest reduction_factor_with_comm (the lowest edge carbon) of its scenario, basis, class and method row (where none is admissible, the highest R of all): the edge at its best. On the headline basis its Monte Carlo columns read the best admissible design of each draw (on the measured basis beside it, its own design's draws); `verdict` is read on these rows.")
    is_worst_design: bool = pa.Field(description="The admissible design with the lowest reduction_factor_with_comm of its scenario, basis, class and method row (where none is admissible, the lowest R of all): the pessimistic case beside the best.")
    is_answer: bool = pa.Field(description="The row README.md's answer and `make run`'s last lines show: one per scenario outside the paper's frame and device class, at the headline basis (is_headline), the best design (is_best_design) and the method row that sets the verdict (verdict_driver_method, _policy, _resize_power). is_headline_method marks the frame's headline method row instead, which need not be the one that sets the verdict.")
    devices_with_comm_per_gpu: float = pa.Field(gt=0, description="Devices per cloud GPU of the fleet that communicates: where the pattern splits the model, enough for its pipelines to train while all their stages are online (a^S of the window); resized to carry its traffic where the frame resizes; else the compute-equivalent fleet.")
    resized_from: float = pa.Field(nullable=True, gt=0, description="The compute-equivalent count per GPU the fleet was grown from, for its pipelines to complete (a^S) or to carry its traffic; null when not grown.")
    reduction_factor_with_comm: float = pa.Field(gt=0, description="Deterministic R with edge_design's communication and this network method (the resized fleet).")
    p05_with_comm: float = pa.Field(nullable=True, gt=0, description="Monte Carlo 5th percentile of R with communication, over the feasible draws (null: none is feasible); on the headline basis's is_best_design row, of the best admissible design of each draw.")
    p50_with_comm: float = pa.Field(nullable=True, gt=0, description="Monte Carlo median of R with communication, over the feasible draws.")
    p95_with_comm: float = pa.Field(nullable=True, gt=0, description="Monte Carlo 95th percentile of R with communication, over the feasible draws.")
    share_r_below_1_with_comm: float = pa.Field(nullable=True, in_range={"min_value": 0, "max_value": 1}, description="Share of the feasible draws with R < 1, with communication.")
    p05_with_comm_all_draws: float = pa.Field(ge=0, description="Monte Carlo 5th percentile of R with communication over every draw, an infeasible draw counted as a failure (R = 0: its fleet delivers none of the job). `verdict` reads this band on the is_best_design rows; the is_answer row's is the README's range.")
    p50_with_comm_all_draws: float = pa.Field(ge=0, description="Monte Carlo median of R with communication over every draw, an infeasible draw counted as R = 0.")
    p95_with_comm_all_draws: float = pa.Field(ge=0, description="Monte Carlo 95th percentile of R with communication over every draw, an infeasible draw counted as R = 0.")
    share_feasible_r_ge_1: float = pa.Field(in_range={"min_value": 0, "max_value": 1}, description="Share of every Monte Carlo draw whose fleet can send its traffic and whose R with communication is at least 1 (the edge emits less).")
    share_feasible_r_ge_4: float = pa.Field(in_range={"min_value": 0, "max_value": 1}, description="Share of every Monte Carlo draw whose fleet can send its traffic and whose R with communication is at least the claim's low end (4).")
    link_time_share: float = pa.Field(ge=0, description="Radio time the design needs / the training window (deterministic, the fleet that communicates); above link_headroom the links cannot carry it.")
    required_link_mb_per_s: float = pa.Field(nullable=True, ge=0, description="Link rate, MB/s, each online device needs to send its share of the traffic within its training window (deterministic).")
    link_mb_per_s: float = pa.Field(gt=0, description="The scenario's link rate per device, MB/s (edge_bandwidth_mb_per_s).")
    feasible_share: float = pa.Field(in_range={"min_value": 0, "max_value": 1}, description="Share of the Monte Carlo draws whose fleet (resized the same way) can send its traffic over its links.")
    network_w_per_line: float = pa.Field(ge=0, description="The network power this method charges (with communication, no radio), averaged over the home lines the training holds (each online device its line for its window), W.")
    network_physical: bool = pa.Field(description="Whether network_w_per_line stays within the scenario's line_power_physical_max_w (twice the most a fixed broadband line draws, Malmodin 2020). A method that is not physical for a row is kept as a bound but sets no verdict (unless no method of the frame is physical).")
    implied_device_utilisation: float = pa.Field(gt=0, le=1, description="The device's achieved FLOPS over its FP32 peak while it trains: the cloud GPU's work (its stated utilisation x FP32 roofline, or a stated count at the devices' peak) over the compute-equivalent fleet's peak, online and slowed by stragglers. Above 1 no fleet of this size could do the work, so the measured basis counts at least the devices that can (blocking); a warning check flags values above the best reported training utilisations.")
    claim_id: str = pa.Field(description="The claim the scenario tests (its claim_id parameter): a cloud/edge ratio claim of core.claim, whose bounds the row is read against.")
    claim_low: float = pa.Field(gt=0, description="The claim's low end of R (core.claim; Xue et al.'s 4x), which the verdict reads.")
    claim_high: float = pa.Field(gt=0, description="The claim's high end of R (core.claim; Xue et al.'s 8x).")
    verdict_if_feasible: str = pa.Field(isin=list(VERDICTS[1:]), description="The frame's reading of R with communication over its physical methods (lowest p05, highest p95 of the feasible draws) against the claim's low end, were the fleet feasible.")
    verdict_driver_method: str = pa.Field(isin=list(NETWORK_METHODS), description="The network method of the method row whose bound sets verdict (over every draw; verdict_if_feasible's where the fleet is infeasible): the lowest p05 where the claim holds or is uncertain, the highest p95 where R stays below it.")
    verdict_driver_policy: str = pa.Field(isin=list(POLICIES), description="The allocation policy of that method row.")
    verdict_driver_resize_power: str = pa.Field(isin=list(RESIZE_POWERS), description="The resize power of that method row.")
    verdict: str = pa.Field(isin=list(VERDICTS), description="'infeasible at the stated link' where the fleet's traffic exceeds its link even resized (deterministically, or in more draws than core.claim.feasible_share_min allows) or its required rate is unknown; else the frame's reading of R with communication over every draw (an infeasible draw counted as R = 0: the lowest p05_with_comm_all_draws and highest p95_with_comm_all_draws over its methods) against the claim's low end.")
    gpu_rate_id: str = pa.Field(nullable=True, description="On a basis that weighs measured training rates (measured_rates): the staging.training_throughput row (throughput_id) the cloud GPU's rate comes from, the key of cloud_gpu_measured_tflops's factor_ref; null on other bases.")
    edge_rate_id: str = pa.Field(nullable=True, description="On a basis that weighs measured training rates (measured_rates): the staging.training_throughput row (throughput_id) the edge class's rate comes from, the key of the factor_ref of its <class>_measured_tflops row (the measured device's achieved TFLOPS, over whose FP32 peak <class>_measured_share is read); null on other bases or where the scenario names no row for the class.")
    verdict_deciding_assumptions: str = pa.Field(nullable=True, description="Headline rows: the parameters of status 'assumed', 'calibrated' or 'secondary' (schemas.statuses.UNSOURCED_STATUSES) whose range alone (one at a time, marts.sensitivity: headline basis, the scenario's pattern, the frame's headline method) moves deterministic R with communication across 1 or the claim's low end, as 'parameter low-high (R at one end-R at the other)'; null when none does.")

    class Config:
        unique = ["scenario_id", "basis", "device_class", "network_method", "embodied_policy", "resize_power", "edge_design"]

    @pa.dataframe_check(description="p05 <= p50 <= p95, compute only, and with communication where any draw is feasible")
    @classmethod
    def ordered(cls, data: pa.PolarsData) -> pl.LazyFrame:
        return data.lazyframe.select(
            (pl.col("p05") <= pl.col("p50")) & (pl.col("p50") <= pl.col("p95"))
            & ((pl.col("p05_with_comm") <= pl.col("p50_with_comm")) & (pl.col("p50_with_comm") <= pl.col("p95_with_comm")))
            .fill_null(pl.col("p05_with_comm").is_null()))

    @pa.dataframe_check(description="no row reads 'claim holds' where its fleet cannot send its traffic")
    @classmethod
    def holds_only_if_feasible(cls, data: pa.PolarsData) -> pl.LazyFrame:
        infeasible = ((pl.col("link_time_share") > pl.col("link_headroom") * (1 + 1e-9)) | pl.col("required_link_mb_per_s").is_null()
                      | (pl.col("feasible_share") < FEASIBLE_SHARE_MIN))
        return data.lazyframe.select(~(infeasible & (pl.col("verdict") == VERDICT_HOLDS)))


#: The two readings of R on the siting marts: compute only, and with the scenario's communication.
SITING_R_KINDS = ["compute_only", "with_comm"]


class Siting(Contract):
    """marts.siting. Grain: scenario x cloud zone x edge zone (or the scenario's edge mix) x edge device class.

    R for every pair of a cloud zone and an edge zone with data in the scenario's year and scope
    (core.zone_intensity), and for every cloud zone against the scenario's own edge mix
    (``edge_zone = 'mix'``: its zones' intensities weighted by their shares), from the model's one
    formula over core.scenarios with the pair's two intensities in place of the scenario's grid
    parameters, read as marts.verdict reads its answer for the scenario and class: on the scenario's
    headline basis, compute only and with the answer's edge design (the best admissible one at the
    scenario's own intensities), under the method row that sets the verdict (verdict_driver_method,
    verdict_driver_policy, verdict_driver_resize_power). Deterministic (no Monte Carlo per pair). The cloud runs around the
    clock in its zone; the edge charges in its window in each edge zone's local time.
    """

    #: The warehouse table(s) this model is the contract of (pipelines.warehouse.dictionary finds it so).
    __tables__ = ("marts.siting",)

    scenario_id: str = pa.Field(description="Scenario (core.scenario_zones names its year, scope, signal and windows).")
    accounting_frame: str = pa.Field(isin=list(ACCOUNTING_FRAMES), description="Accounting frame (core.frames): " + " | ".join(ACCOUNTING_FRAMES) + ".")
    cloud_zone: str = pa.Field(description="Zone the cloud accelerator runs in, around the clock.")
    edge_zone: str = pa.Field(description="Zone the edge devices charge in, in their window in local time; 'mix': the scenario's own edge mix (edge_mix).")
    edge_mix: str = pa.Field(nullable=True, description="The scenario's edge mix the row evaluates, its zones and shares (core.scenario_zones), e.g. 'US 0.5, DE 0.25, FR 0.25'; null for one edge zone.")
    device_class: str = pa.Field(str_matches=DEVICE_CLASS_PATTERN, description="Edge device class of the scenario (core.scenario_devices).")
    basis: str = pa.Field(isin=list(BASES), description="Equivalence basis of the device count: the scenario's headline basis, the one of marts.verdict's answer row for the scenario and class.")
    comm_pattern: str = pa.Field(isin=list(COMM_PATTERNS), description="The scenario's named communication pattern (core.scenarios comm_pattern).")
    edge_design: str = pa.Field(isin=list(COMM_PATTERNS), description="The edge training design of reduction_factor_with_comm: marts.verdict's answer design for the scenario and class (edge_design of its best admissible row at the scenario's own intensities; the paper's frame: its named pattern).")
    network_method: str = pa.Field(isin=list(NETWORK_METHODS), description="The network method of reduction_factor_with_comm: the one that sets marts.verdict's reading for the scenario and class on this basis (verdict_driver_method).")
    embodied_policy: str = pa.Field(isin=list(POLICIES), description="The allocation policy of both R columns: the one of the method row that sets marts.verdict's reading (verdict_driver_policy).")
    resize_power: str = pa.Field(isin=list(RESIZE_POWERS), description="The resize power of reduction_factor_with_comm: the one of the method row that sets marts.verdict's reading (verdict_driver_resize_power).")
    reduction_factor: float = pa.Field(nullable=True, description="R = cloud total / edge added, compute only.")
    reduction_factor_with_comm: float = pa.Field(nullable=True, description="R with communication: the edge design (edge_design) under the network method.")
    link_feasible_with_comm: bool = pa.Field(nullable=True, description="The fleet's links carry its traffic (a fleet over its link is infeasible whatever its R; marts.verdict).")
    cloud_gco2e_per_kwh: float = pa.Field(ge=0, description="Intensity the cloud meets in cloud_zone, around the clock, gCO2e/kWh.")
    edge_gco2e_per_kwh: float = pa.Field(ge=0, description="Intensity the edge meets in edge_zone, in its charging window, gCO2e/kWh (the mix: its zones' intensities, each in its own window, weighted by their shares).")
    cloud_intensity_basis: str = pa.Field(isin=SITING_BASES, description="hourly | hourly_shaped | monthly | annual (core.zone_intensity).")
    edge_intensity_basis: str = pa.Field(isin=SITING_BASES, description="hourly | hourly_shaped | monthly | annual (the mix: its coarsest zone's).")
    year: int = pa.Field(description="The scenario's year of grid data.")
    cloud_fetched_at: UTC_TS = pa.Field(description="When the newest value of the cloud zone's intensity was fetched (its signal, scope, data year and age: core.zone_intensity).")  # type: ignore[valid-type]
    edge_fetched_at: UTC_TS = pa.Field(description="When the newest value of the edge zone's intensity was fetched (the mix: of any of its zones).")  # type: ignore[valid-type]
    computed_run_id: str = pa.Field(description="The run that last computed the row: a refresh re-stamps only the rows whose intensities or R changed.")

    class Config:
        unique = ["scenario_id", "cloud_zone", "edge_zone", "device_class"]

    @pa.check("reduction_factor", "reduction_factor_with_comm", name="finite_positive")
    @classmethod
    def finite_positive(cls, data: pa.PolarsData) -> pl.LazyFrame:
        return finite_positive(data)


class SitingSummary(Contract):
    """marts.siting_summary. Grain: scenario x device class x R kind x side x zone.

    Where the answer flips, from marts.siting. For an edge zone (and the scenario's edge mix, zone
    ``mix``): R against the cloud's intensity is a straight line (drawn through the model's own
    rows), and the cloud intensity where it crosses R = 1 (below it the edge loses) and R = 4
    (below it the claim's 4x fails); for a cloud zone: the share of edge zones where R >= 1 and
    R >= 4. Every row carries the zone's intensity, its basis and age, and its electricity demand
    (the Siting page's zone choice).
    """

    #: The warehouse table(s) this model is the contract of (pipelines.warehouse.dictionary finds it so).
    __tables__ = ("marts.siting_summary",)

    scenario_id: str = pa.Field(description="Scenario.")
    accounting_frame: str = pa.Field(isin=list(ACCOUNTING_FRAMES), description="Accounting frame (core.frames): " + " | ".join(ACCOUNTING_FRAMES) + ".")
    device_class: str = pa.Field(str_matches=DEVICE_CLASS_PATTERN, description="Edge device class.")
    r_kind: str = pa.Field(isin=SITING_R_KINDS, description="compute_only (reduction_factor) | with_comm (reduction_factor_with_comm).")
    side: str = pa.Field(isin=SITING_SIDES, description="edge: the zone's break-even cloud intensities | cloud: the zone's share of winning edge zones.")
    zone: str = pa.Field(description="The edge or cloud zone.")
    year: int = pa.Field(description="Calendar year of the grid data.")
    n_pairs: int = pa.Field(ge=1, description="Pairs behind the row (zones on the other side).")
    r_min: float = pa.Field(nullable=True, description="Lowest R over those pairs.")
    r_max: float = pa.Field(nullable=True, description="Highest R over those pairs.")
    share_r_ge_1: float = pa.Field(nullable=True, ge=0, le=1, description="Share of the other side's zones with R >= 1.")
    share_r_ge_4: float = pa.Field(nullable=True, ge=0, le=1, description="Share of the other side's zones with R >= 4 (the claim's low end).")
    r_at_zero_cloud_intensity: float = pa.Field(nullable=True, description="Edge rows: R on a carbon-free cloud grid (the cloud's embodied carbon only).")
    r_per_cloud_gco2e_per_kwh: float = pa.Field(nullable=True, description="Edge rows: how much R rises per gCO2e/kWh of the cloud's intensity.")
    cloud_gco2e_per_kwh_for_r1: float = pa.Field(nullable=True, description="Edge rows: the cloud intensity below which R < 1 (the edge loses), gCO2e/kWh; negative: R >= 1 even on a carbon-free cloud grid.")
    cloud_gco2e_per_kwh_for_r4: float = pa.Field(nullable=True, description="Edge rows: the cloud intensity below which R < 4 (the claim fails), gCO2e/kWh; negative: R >= 4 on any cloud grid.")
    edge_mix: str = pa.Field(nullable=True, description="Edge rows of zone 'mix': the scenario's edge mix, its zones and shares (marts.siting.edge_mix); else null.")
    zone_gco2e_per_kwh: float = pa.Field(ge=0, description="The zone's intensity on its side (core.zone_intensity; the mix: its share-weighted mean), gCO2e/kWh.")
    intensity_basis: str = pa.Field(isin=SITING_BASES, description="hourly | hourly_shaped | monthly | annual (the mix: its coarsest zone's).")
    data_through: UTC_TS = pa.Field(nullable=True, description="End of the newest hour of the zone's hourly series (hourly, hourly_shaped): how old the intensity is.")  # type: ignore[valid-type]
    fetched_at: UTC_TS = pa.Field(description="When the newest value read was fetched.")  # type: ignore[valid-type]
    demand_twh: float = pa.Field(nullable=True, ge=0, description="The zone's electricity demand in the year (Ember), TWh; null for a zone Ember does not list.")
    demand_rank: int = pa.Field(nullable=True, ge=1, description="Its rank among countries by demand (1: the most).")
    scenario_share: float = pa.Field(nullable=True, gt=0, le=1, description="The zone's share on its side in the scenario's own zones (core.scenario_zones: the cloud's zone 1, the edge mix's shares; the mix itself 1); null where the scenario does not name it.")

    class Config:
        unique = ["scenario_id", "device_class", "r_kind", "side", "zone"]
