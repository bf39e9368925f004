"""The model's methods and the claim under audit as rows (schemas/vocabulary.py): core.frames,
core.frame_network_methods, core.workload_kinds, core.embodied_policies, core.bases, core.verdicts,
core.network_methods, core.patterns and core.claim."""

from __future__ import annotations

import pandera.polars as pa
import polars as pl

from schemas.vocabulary import (
    ACCOUNTING_FRAMES,
    BASES,
    CAPACITY_UNITS,
    CLOUD_EMBODIED_RULES,
    NETWORK_ENERGY_RULES,
    NETWORK_METHODS,
    PATTERNS,
    POLICIES,
    VERDICTS,
    WORKLOADS,
)


class Frames(pa.DataFrameModel):
    """core.frames: the accounting frames and their rules, which the model joins. Grain: one frame."""

    accounting_frame: str = pa.Field(unique=True, isin=list(ACCOUNTING_FRAMES), description="Accounting frame: what a scenario's accounting_frame names.")
    position: int = pa.Field(ge=0, unique=True, description="Report order.")
    amortises_cloud_embodied: bool = pa.Field(description="Whether the cloud node's embodied carbon is amortised over its life (x min(T / life, 1)), else charged to the job in full (sql/model/macros.sql cloud_embodied_charged_kgco2e).")
    cloud_embodied_rule: str = pa.Field(isin=list(CLOUD_EMBODIED_RULES.values()), description="That rule in words (marts.lifecycle_carbon embodied_rule).")
    network_energy_rule: str = pa.Field(isin=list(NETWORK_ENERGY_RULES), description="How the marts that price bytes at one intensity price a GB: " + "; ".join(f"{k}: {v}" for k, v in NETWORK_ENERGY_RULES.items()) + " (network_kwh_per_gb_for_rule).")
    headline_network_method: str = pa.Field(isin=list(NETWORK_METHODS), description="The frame's headline network method (its first in core.frame_network_methods).")
    resizes_fleet: bool = pa.Field(description="Whether a fleet over its link is resized to the smallest fleet whose links carry its traffic (the paper's frame keeps the paper's fleet).")
    edge_embodied_policy: str = pa.Field(nullable=True, isin=list(POLICIES), description="The edge embodied policy a scenario in the frame must use (null: any); sql/checks/frame_consistency.sql.")
    requires_network_factors: bool = pa.Field(description="Whether a scenario in the frame must give its network energy rule's factors (> 0); sql/checks/frame_consistency.sql.")
    description: str = pa.Field(description="What the frame counts.")

    class Config:
        strict = True


class WorkloadKinds(pa.DataFrameModel):
    """core.workload_kinds: how a job's length is given (a scenario's workload_kind). Grain: one kind."""

    workload_kind: str = pa.Field(unique=True, isin=list(WORKLOADS), description="Workload kind.")
    description: str = pa.Field(description="What sets the job's length (sql/model/evaluate.sql job_years).")

    class Config:
        strict = True


class EmbodiedPolicies(pa.DataFrameModel):
    """core.embodied_policies: how much of an edge device's embodied carbon training is charged. Grain: one policy."""

    policy: str = pa.Field(unique=True, isin=list(POLICIES), description="Policy: what a scenario's edge_embodied_policy names.")
    description: str = pa.Field(description="What the policy charges (sql/model/macros.sql embodied_allocated_kgco2e).")

    class Config:
        strict = True


class Bases(pa.DataFrameModel):
    """core.bases: the equivalence bases and their rules, which the model joins. Grain: one basis."""

    basis: str = pa.Field(unique=True, isin=list(BASES), description="Equivalence basis.")
    position: int = pa.Field(ge=0, unique=True, description="Report order.")
    capacity_unit: str = pa.Field(isin=list(CAPACITY_UNITS), description="Unit of the basis's capacities (cloud_gpu_capacity, device_capacity).")
    counts_availability: bool = pa.Field(description="Whether the devices' online fraction and straggler slowdown enter its count.")
    headline_choice: bool = pa.Field(description="Whether a scenario's headline_basis may name it (peak_flops heads wherever a count is stated).")
    memory_floor: bool = pa.Field(description="Whether its count is at least the memory floor (devices that hold the training state); a class without a memory figure has no count on it.")
    description: str = pa.Field(description="What the basis compares.")

    class Config:
        strict = True


class Verdicts(pa.DataFrameModel):
    """core.verdicts: the verdict categories of marts.verdict, in order of precedence. Grain: one category."""

    verdict: str = pa.Field(unique=True, isin=list(VERDICTS), description="The category's label (the claim's low end in it).")
    precedence: int = pa.Field(ge=0, unique=True, description="Order of precedence: the first that applies is the verdict.")
    rule: str = pa.Field(description="What sets it.")

    class Config:
        strict = True


class NetworkMethods(pa.DataFrameModel):
    """core.network_methods: how communication's network energy is counted. Grain: one method."""

    network_method: str = pa.Field(unique=True, isin=list(NETWORK_METHODS), description="Method name.")
    description: str = pa.Field(description="What the method charges (sql/model/macros.sql network_kwh).")

    class Config:
        strict = True


class FrameNetworkMethods(pa.DataFrameModel):
    """core.frame_network_methods: the network methods each accounting frame admits. Grain: frame x method."""

    accounting_frame: str = pa.Field(isin=list(ACCOUNTING_FRAMES), description="Accounting frame (core.frames).")
    network_method: str = pa.Field(isin=list(NETWORK_METHODS), description="A method the frame admits.")
    is_frame_headline: bool = pa.Field(description="The frame's headline method: the one every mart but marts.verdict and marts.uncertainty uses.")

    class Config:
        strict = True
        unique = ["accounting_frame", "network_method"]


class Patterns(pa.DataFrameModel):
    """core.patterns: the communication patterns and the ends of each byte they move. Grain: one pattern."""

    pattern: str = pa.Field(unique=True, isin=list(PATTERNS), description="Communication pattern (sql/model/macros.sql comm_bytes).")
    home_ends: int = pa.Field(ge=0, le=2, description="Home access lines and routers each byte passes: 2 between devices, 1 to a server.")
    server_ends: int = pa.Field(ge=0, le=1, description="Data-centre ends each byte passes (a parameter server or controller).")
    resizable: bool = pa.Field(description="Whether the traffic each device sends falls as the fleet grows at a fixed global batch, so a larger fleet can carry it.")

    class Config:
        strict = True


class Claim(pa.DataFrameModel):
    """core.claim: the claim under audit, edge training emits claim_low to claim_high times less carbon (R). Grain: one row."""

    claim_low: float = pa.Field(gt=0, description="The claim's low end of R (the paper's 4x; schemas/vocabulary.py CLAIM_LOW).")
    claim_high: float = pa.Field(gt=0, description="The claim's high end of R (the paper's 8x; schemas/vocabulary.py CLAIM_HIGH).")

    class Config:
        strict = True

    @pa.dataframe_check(description="one row, low end below the high end")
    @classmethod
    def one_ordered_row(cls, data: pa.PolarsData) -> pl.LazyFrame:
        return data.lazyframe.select((pl.col("claim_low") < pl.col("claim_high")) & (pl.len() == 1))
