"""The model's methods as rows (schemas/vocabulary.py): core.frames, core.frame_network_methods,
core.workload_kinds, core.embodied_policies, core.frame_embodied_policies, core.resize_powers,
core.frame_resize_powers, core.bases, core.verdicts, core.network_methods and core.patterns; and the claims
under audit, core.claim (the registry's cloud/edge ratio claims, sql/core/claim.sql)."""

from __future__ import annotations

import pandera.polars as pa
import polars as pl

from schemas.base import Contract
from schemas.scenario_parameters import STATUSES
from schemas.vocabulary import (
    ACCOUNTING_FRAMES,
    BASES,
    CAPACITY_UNITS,
    CLOUD_EMBODIED_RULES,
    NETWORK_ENERGY_RULES,
    NETWORK_METHODS,
    POLICIES,
    RESIZE_POWERS,
    VERDICTS,
    WORKLOADS,
)


class Frames(Contract):
    """core.frames: the accounting frames and their rules, which the model joins. Grain: one frame."""

    #: The warehouse table(s) this model is the contract of (pipelines.warehouse.dictionary finds it so).
    __tables__ = ("core.frames",)

    accounting_frame: str = pa.Field(unique=True, isin=list(ACCOUNTING_FRAMES), description="Accounting frame: what a scenario's accounting_frame names.")
    position: int = pa.Field(ge=0, unique=True, description="Report order.")
    amortises_cloud_embodied: bool = pa.Field(description="Whether the cloud node's embodied carbon is amortised over its life (x min(T / life, 1)), else charged to the job in full (sql/model/macros.sql cloud_embodied_charged_kgco2e).")
    cloud_embodied_rule: str = pa.Field(isin=list(CLOUD_EMBODIED_RULES.values()), description="That rule in words (marts.lifecycle_carbon embodied_rule).")
    network_energy_rule: str = pa.Field(isin=list(NETWORK_ENERGY_RULES), description="How the marts that price bytes at one intensity price a GB: " + "; ".join(f"{k}: {v}" for k, v in NETWORK_ENERGY_RULES.items()) + " (network_kwh_per_gb_for_rule).")
    headline_network_method: str = pa.Field(isin=list(NETWORK_METHODS), description="The frame's headline network method (its first in core.frame_network_methods).")
    resizes_fleet: bool = pa.Field(description="Whether a fleet over its link is resized to the smallest fleet whose links carry its traffic (the paper's frame keeps the paper's fleet).")
    edge_embodied_policy: str = pa.Field(nullable=True, isin=list(POLICIES), description="The edge embodied policy a scenario in the frame must use (null: any); sql/checks/frame_consistency.sql.")
    requires_network_factors: bool = pa.Field(description="Whether a scenario in the frame must give its network energy rule's factors (> 0); sql/checks/frame_consistency.sql.")
    charges_receiving_radio: bool = pa.Field(description="Whether the radio of a device that receives the traffic (a pattern's home ends besides the sender's, home_ends - 1) is charged beside the sender's, at wifi_receive_power_w for the bytes' time at the link rate (sql/model/macros.sql receiving_radio_kwh); the paper's frame charges the sender alone.")
    description: str = pa.Field(description="What the frame counts.")


class WorkloadKinds(Contract):
    """core.workload_kinds: how a job's length is given (a scenario's workload_kind). Grain: one kind."""

    #: The warehouse table(s) this model is the contract of (pipelines.warehouse.dictionary finds it so).
    __tables__ = ("core.workload_kinds",)

    workload_kind: str = pa.Field(unique=True, isin=list(WORKLOADS), description="Workload kind.")
    horizon: float = pa.Field(ge=0, description="Weight of the scenario's horizon_years in the job's length (sql/core/model_evaluation.sql job_years).")
    gpu_hours: float = pa.Field(ge=0, description="Weight of the job length of workload_gpu_hours accelerator-hours on cloud_gpu_count accelerators.")
    tokens: float = pa.Field(ge=0, description="Weight of the job length of fleet_model_params x workload_tokens (6 N D FLOPs at workload_mfu); above 0, the job's tokens are workload_tokens.")
    description: str = pa.Field(description="What sets the job's length (sql/core/model_evaluation.sql job_years).")


class EmbodiedPolicies(Contract):
    """core.embodied_policies: how much of an edge device's embodied carbon training is charged. Grain: one policy."""

    #: The warehouse table(s) this model is the contract of (pipelines.warehouse.dictionary finds it so).
    __tables__ = ("core.embodied_policies",)

    policy: str = pa.Field(unique=True, isin=list(POLICIES), description="Policy: what a scenario's edge_embodied_policy names.")
    battery_wear: float = pa.Field(ge=0, description="Weight of the battery-wear term (battery share of non-use embodied carbon x extra cycles / rated cycles, or a worn-out device's lost life; sql/model/macros.sql embodied_allocated_kgco2e).")
    use_hours: float = pa.Field(ge=0, description="Weight of the use-hour term (embodied carbon re-amortised to the job x training hours / (training + owner hours)).")
    calendar_hours: float = pa.Field(ge=0, description="Weight of the calendar-time term (embodied carbon re-amortised to the job x training hours / 24; ACT, Gupta et al. 2022).")
    description: str = pa.Field(description="What the policy charges (sql/model/macros.sql embodied_allocated_kgco2e).")


class Bases(Contract):
    """core.bases: the equivalence bases and their rules, which the model joins. Grain: one basis."""

    #: The warehouse table(s) this model is the contract of (pipelines.warehouse.dictionary finds it so).
    __tables__ = ("core.bases",)

    basis: str = pa.Field(unique=True, isin=list(BASES), description="Equivalence basis.")
    position: int = pa.Field(ge=0, unique=True, description="Report order.")
    capacity_unit: str = pa.Field(isin=list(CAPACITY_UNITS), description="Unit of the basis's capacities (cloud_gpu_capacity, device_capacity).")
    counts_availability: bool = pa.Field(description="Whether the devices' online fraction and straggler slowdown enter its count.")
    headline_choice: bool = pa.Field(description="Whether a scenario's headline_basis may name it (peak_flops heads wherever a count is stated).")
    memory_floor: bool = pa.Field(description="Whether its count is at least the memory floor (devices that hold the training state); a class without a memory figure has no count on it.")
    fp32_peak: float = pa.Field(ge=0, description="Weight of peak FP32 FLOPS in the capacities it compares (sql/core/model_evaluation.sql cloud_gpu_capacity, device_capacity).")
    fp16_peak: float = pa.Field(ge=0, description="Weight of peak FP16/BF16 FLOPS (tensor cores on the GPU).")
    bandwidth: float = pa.Field(ge=0, description="Weight of memory bandwidth, GB/s.")
    roofline: float = pa.Field(ge=0, description="Weight of the roofline min(F, I x B) at the scenario's arithmetic intensity.")
    job_rate: float = pa.Field(ge=0, description="Weight of jobs per hour of the same measured job; a measured rate is not scaled by the GPU's utilisation.")
    measured_rate: float = pa.Field(ge=0, description="Weight of measured training TFLOPS (cloud_gpu_measured_tflops; a device's <class>_measured_share x its FP32 peak); not scaled by the GPU's utilisation, and the GPU's work is then its measured rate.")
    takes_stated_count: bool = pa.Field(description="Whether a device count the scenario states replaces its formula (the paper's peak FLOPS count).")
    device_peak_floor: bool = pa.Field(description="Whether its count is at least the devices that deliver the GPU's work at their peak FLOPS.")
    measured: bool = pa.Field(description="Whether it compares a measured job rate (job_rate > 0): marts.verdict reports it beside the headline, marts.siting alone.")
    description: str = pa.Field(description="What the basis compares.")


class Verdicts(Contract):
    """core.verdicts: the verdict categories of marts.verdict, in order of precedence. Grain: one category."""

    #: The warehouse table(s) this model is the contract of (pipelines.warehouse.dictionary finds it so).
    __tables__ = ("core.verdicts",)

    verdict: str = pa.Field(unique=True, isin=list(VERDICTS), description="The category's label (the claim's low end in it).")
    precedence: int = pa.Field(ge=0, unique=True, description="Order of precedence: the first that applies is the verdict.")
    rule: str = pa.Field(description="What sets it.")


class NetworkMethods(Contract):
    """core.network_methods: how communication's network energy is counted. Grain: one method."""

    #: The warehouse table(s) this model is the contract of (pipelines.warehouse.dictionary finds it so).
    __tables__ = ("core.network_methods",)

    network_method: str = pa.Field(unique=True, isin=list(NETWORK_METHODS), description="Method name.")
    per_gb_one_end: float = pa.Field(ge=0, description="Weight of GB x (network + router average kWh per GB) at one end (the paper's; sql/model/macros.sql network_kwh).")
    per_gb_by_ends: float = pa.Field(ge=0, description="Weight of GB x (home ends x (network + router kWh/GB) + server ends x network kWh/GB).")
    marginal_by_ends: float = pa.Field(ge=0, description="Weight of GB x (core marginal W per Mbit/s + home ends x router's) x 8,000 J per GB.")
    line_time: float = pa.Field(ge=0, description="Weight of the home line and router's power x training's share of the line x the hours training holds it.")
    per_bit: float = pa.Field(ge=0, description="Weight of GB x a path's summed energy per bit as kWh per GB (a claim case's per_bit_kwh_per_gb); charged by sql/marts/claims.sql only, never by the model.")
    description: str = pa.Field(description="What the method charges (sql/model/macros.sql network_kwh).")


class FrameNetworkMethods(Contract):
    """core.frame_network_methods: the network methods each accounting frame admits. Grain: frame x method."""

    #: The warehouse table(s) this model is the contract of (pipelines.warehouse.dictionary finds it so).
    __tables__ = ("core.frame_network_methods",)

    accounting_frame: str = pa.Field(isin=list(ACCOUNTING_FRAMES), description="Accounting frame (core.frames).")
    network_method: str = pa.Field(isin=list(NETWORK_METHODS), description="A method the frame admits.")
    is_frame_headline: bool = pa.Field(description="The frame's headline method: the one every mart but marts.verdict and marts.uncertainty uses.")

    class Config:
        unique = ["accounting_frame", "network_method"]


class FrameEmbodiedPolicies(Contract):
    """core.frame_embodied_policies: the allocation policies each accounting frame admits as method rows (marts.verdict
    reads them as it reads network methods). Grain: frame x policy."""

    #: The warehouse table(s) this model is the contract of (pipelines.warehouse.dictionary finds it so).
    __tables__ = ("core.frame_embodied_policies",)

    accounting_frame: str = pa.Field(isin=list(ACCOUNTING_FRAMES), description="Accounting frame (core.frames).")
    policy: str = pa.Field(isin=list(POLICIES), description="A policy the frame admits (core.embodied_policies).")
    is_frame_headline: bool = pa.Field(nullable=True, description="The frame's headline policy (the one its scenarios name in edge_embodied_policy); false: a method row evaluated beside it; null: the frame requires no policy, and a scenario in it is evaluated under its own only.")

    class Config:
        unique = ["accounting_frame", "policy"]


class ResizePowers(Contract):
    """core.resize_powers: how a fleet's devices draw power where the fleet holds more device-hours than its work needs
    (resized over its link, or grown so its pipelines are complete). Grain: one row.

    Operational carbon = fleet_training x every device at training power for its training share of its window
    + work_training x the work's device-hours (compute-equivalent devices x online share x window) at training power
    + extra_idle x the fleet's other training device-hours at the class's idle power
    + under every row, the waiting device-hours (online while their pipeline is incomplete, devices x (a - a^S) x the
    window) at the class's idle power (sql/core/model_evaluation.sql)."""

    #: The warehouse table(s) this model is the contract of (pipelines.warehouse.dictionary finds it so).
    __tables__ = ("core.resize_powers",)

    resize_power: str = pa.Field(unique=True, isin=list(RESIZE_POWERS), description="Row name.")
    fleet_training: float = pa.Field(ge=0, description="Weight of every device of the fleet at training power.")
    work_training: float = pa.Field(ge=0, description="Weight of the work's device-hours at training power.")
    extra_idle: float = pa.Field(ge=0, description="Weight of the fleet's extra training device-hours at the class's idle power (<class>_idle_power_w).")
    description: str = pa.Field(description="What the row charges.")


class FrameResizePowers(Contract):
    """core.frame_resize_powers: the resize-power rows each accounting frame admits. Grain: frame x row."""

    #: The warehouse table(s) this model is the contract of (pipelines.warehouse.dictionary finds it so).
    __tables__ = ("core.frame_resize_powers",)

    accounting_frame: str = pa.Field(isin=list(ACCOUNTING_FRAMES), description="Accounting frame (core.frames).")
    resize_power: str = pa.Field(isin=list(RESIZE_POWERS), description="A row of core.resize_powers the frame admits.")
    is_frame_headline: bool = pa.Field(description="The frame's headline row: the one every mart but marts.verdict and marts.uncertainty uses.")

    class Config:
        unique = ["accounting_frame", "resize_power"]


class Patterns(Contract):
    """core.patterns: the communication patterns, each one's traffic as coefficients of the model's byte and radio
    terms, and the ends of each byte it moves. Grain: one pattern.

    Bytes a fleet of N online devices moves to train on D tokens (sql/model/macros.sql comm_bytes), with
    syncs = D / (N x tokens per device step x local steps per sync), p parameters of b bytes, S stages:
    (sync_n x syncs x N p b + sync_n_minus_1 x syncs x max(N - 1, 0) p b
     + activations x D x 2 (S - 1) x hidden x activation bytes
     + stage_allreduce x D x 2 p b / (tokens per device step x local steps) x max(1 - S / N, 0)) / compression.
    """

    #: The warehouse table(s) this model is the contract of (pipelines.warehouse.dictionary finds it so).
    __tables__ = ("core.patterns",)

    pattern: str = pa.Field(unique=True, description="Communication pattern: a row of sources/curated/patterns.csv (schemas/patterns.py), whose rows are the patterns.")
    home_ends: int = pa.Field(ge=0, le=2, description="Home access lines and routers each byte passes: 2 between devices, 1 to a server.")
    server_ends: int = pa.Field(ge=0, le=2, description="Data-centre ends each byte passes (a parameter server or controller 1; between data centres 2).")
    sync_n: float = pa.Field(ge=0, description="Bytes per sync in units of N x p x b: every device sends the parameters sync_n times (idealized 1; parameter server 2, push and pull).")
    sync_n_minus_1: float = pa.Field(ge=0, description="Bytes per sync in units of max(N - 1, 0) x p x b (ring all-reduce 2: 2 (N - 1) / N x p b per device).")
    activations: float = pa.Field(ge=0, description="Bytes per token in units of 2 (S - 1) x hidden x activation bytes: activations forward and their gradients back across the S - 1 stage boundaries (pipeline 1).")
    stage_allreduce: float = pa.Field(ge=0, description="Multiplies the ring all-reduce between the N / S replicas of an S-stage model, D x 2 p b / (tokens per device step x local steps) x max(1 - S / N, 0) bytes (pipeline 1).")
    radio_per_window: float = pa.Field(ge=0, description="Multiplies the paper's radio energy: every online device's radio busy for its training window at the link utilisation (sql/model/macros.sql radio_window_kwh; the radio_window pattern 1).")
    radio_per_byte: float = pa.Field(ge=0, description="Multiplies the sending radio's energy for the time the bytes take at the link rate (every byte pattern 1).")
    splits_model: bool = pa.Field(description="Whether the model is split into S stages (sql/model/macros.sql comm_stages; null for a pattern that does not): each device holds 1 / S of the training state.")
    resizable: bool = pa.Field(description="Whether the traffic each device sends falls as the fleet grows at a fixed global batch, so a larger fleet can carry it (its stage terms: sql/model/macros.sql pipeline_bytes_at).")
    every_scenario: bool = pa.Field(description="Whether every scenario is evaluated on the pattern (sql/core/model_evaluation.sql), else only a scenario whose comm_pattern names it (a pattern a published claim needs).")
    edge_design: bool = pa.Field(description="Whether the pattern is an edge training design: a scenario whose frame resizes its fleet (core.frames resizes_fleet) is evaluated on every design, and marts.verdict reads its best admissible design and its worst.")
    outer_sync: bool = pa.Field(description="Whether the pattern syncs every outer step of DiLoCo-style local training: outer_steps_per_sync inner steps, its gradient bytes compressed by outer_compression, outer_token_overhead more tokens trained (else every local_steps_per_sync steps at comm_compression).")
    lean_state: bool = pa.Field(description="Whether each device holds the training state at lean_training_bytes_per_param (bf16 weights and gradients, 8-bit Adam), else training_bytes_per_param.")
    moves_bytes: bool = pa.Field(description="Whether the pattern moves any bytes (a byte coefficient above 0); the one that moves none is the compute-only row every mart reads R without communication from.")

    @pa.dataframe_check(description="moves_bytes is whether a byte coefficient is above 0")
    @classmethod
    def moves_bytes_from_coefficients(cls, data: pa.PolarsData) -> pl.LazyFrame:
        coefficients = pl.sum_horizontal("sync_n", "sync_n_minus_1", "activations", "stage_allreduce")
        return data.lazyframe.select(pl.col("moves_bytes") == (coefficients > 0))

    @pa.dataframe_check(description="exactly one pattern moves no bytes: the compute-only row")
    @classmethod
    def one_compute_only(cls, data: pa.PolarsData) -> pl.LazyFrame:
        return data.lazyframe.select((~pl.col("moves_bytes")).sum() == 1)

    @pa.dataframe_check(description="stage terms, and resizing, only where the model is split into stages")
    @classmethod
    def stages_where_split(cls, data: pa.PolarsData) -> pl.LazyFrame:
        staged = (pl.col("activations") > 0) | (pl.col("stage_allreduce") > 0) | pl.col("resizable")
        return data.lazyframe.select(~staged | pl.col("splits_model"))

    @pa.dataframe_check(description="a resizable pattern's traffic is its stage terms only (no per-sync terms)")
    @classmethod
    def resizable_without_sync_terms(cls, data: pa.PolarsData) -> pl.LazyFrame:
        return data.lazyframe.select(~pl.col("resizable") | ((pl.col("sync_n") == 0) & (pl.col("sync_n_minus_1") == 0)))


class Claim(Contract):
    """core.claim: the claims marts.verdict judges, each that edge training emits claim_low to claim_high times less
    carbon (R): every claim of the registry (staging.claims) whose quantity is a cloud/edge ratio R
    (sql/core/claim.sql). A scenario names the claim it tests (its claim_id parameter). Grain: one claim."""

    #: The warehouse table(s) this model is the contract of (pipelines.warehouse.dictionary finds it so).
    __tables__ = ("core.claim",)

    claim_id: str = pa.Field(unique=True, description="The claim's id in staging.claims (e.g. xue2025_reduction_4_8x).")
    claim_low: float = pa.Field(gt=0, description="The claim's low end of R: the registry's published_low (Xue et al.'s 4x).")
    claim_high: float = pa.Field(gt=0, description="The claim's high end of R: the registry's published_high (Xue et al.'s 8x).")
    feasible_share_min: float = pa.Field(in_range={"min_value": 0, "max_value": 1}, description="The share of a row's Monte Carlo draws that must be feasible for marts.verdict to give it a category rather than 'infeasible' (schemas/vocabulary.py FEASIBLE_SHARE_MIN). The category itself reads the all-draw band, in which every infeasible draw counts as a failure (R = 0), so this threshold only decides between 'infeasible' and a category.")
    feasible_share_min_status: str = pa.Field(isin=STATUSES, description="Status of feasible_share_min (a parameter with no published source is 'assumed').")
    feasible_share_min_reasoning: str = pa.Field(description="Why feasible_share_min has its value.")

    @pa.dataframe_check(description="low end at most the high end")
    @classmethod
    def ordered(cls, data: pa.PolarsData) -> pl.LazyFrame:
        return data.lazyframe.select(pl.col("claim_low") <= pl.col("claim_high"))
