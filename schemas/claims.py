"""The claims registry: published claims about edge, federated or decentralised training as rows
(staging.claims), the inputs that recompute them as parameter rows with a status
(staging.claim_parameters), and what the recomputation gives (marts.claims, marts.claim_traffic).

A claim is a paper's headline statement in its own terms: a cloud/edge ratio R, a bandwidth ratio,
an emission ratio or share, or an amount of carbon. Its ``quantity`` names the recomputation
(sql/marts/claims.sql), so a claim of a kind already known is added by rows alone: its row here and
its case's parameter rows.
"""

from __future__ import annotations

import pandera.polars as pa
import polars as pl

from schemas.base import Contract, Provenance
from schemas.scenario_parameters import STATUSES
from schemas.statuses import CLAIM_STATUSES, STANCES, STATUS_TEXT

#: What a claim states, each with the recomputation sql/marts/claims.sql gives it:
#: reduction_factor: cloud / edge carbon R of the scenario ``case_id`` (marts.verdict, compute only, headline rows);
#: bandwidth_ratio: wide-area bytes of ``baseline_case_id`` over those of ``case_id`` (comm_bytes over core.patterns);
#: emission_ratio: a case's operational emissions over each of its baselines' (its parameter rows);
#: emission_share: a part's share of a federated client session's energy (the case's session rows, each network
#: method that charges bytes by their ends); emissions: a run's account in kgCO2e (energy or accelerator-hours x power,
#: PUE, idle energy, grid intensity and embodied carbon: sql/marts/claims.sql `runs`).
QUANTITIES = ["reduction_factor", "bandwidth_ratio", "emission_ratio", "emission_share", "emissions"]
#: The quantity that is a cloud/edge ratio R: a claim of it is a row of core.claim, which marts.verdict judges the
#: scenarios naming it against (their claim_id parameter); a claim in other terms is judged in marts.claims only.
RATIO_QUANTITY = "reduction_factor"
#: The parts of a federated session's energy an emission_share claim names (sql/marts/claims.sql `session_parts`).
PARTS = ["client_compute", "upload", "download", "server"]
ID = r"^[a-z][a-z0-9_]*$"


class Claims(Provenance):
    """staging.claims: one published claim per row, quoted, with its bounds and the case that recomputes it.
    Grain: one claim."""

    #: The warehouse table(s) this model is the contract of (pipelines.warehouse.dictionary finds it so).
    __tables__ = ("staging.claims",)

    claim_id: str = pa.Field(unique=True, str_matches=ID, description="Stable id: first author, year and what it states.")
    paper: str = pa.Field(str_length={"min_value": 1}, description="First author et al. and year.")
    title: str = pa.Field(str_length={"min_value": 1}, description="The paper's title and where it appeared.")
    citation_url: str = pa.Field(str_startswith="http", description="Link to the paper.")
    quote: str = pa.Field(str_length={"min_value": 1}, description="The sentence that states the claim, as published.")
    location: str = pa.Field(str_length={"min_value": 1}, description="Where in the paper (section, figure, abstract).")
    quantity: str = pa.Field(isin=QUANTITIES, description="What it states, which names its recomputation: " + " | ".join(QUANTITIES) + ".")
    unit: str = pa.Field(description="Unit of the published bounds (x, fraction, kgCO2e).")
    published_low: float = pa.Field(nullable=True, description="The published value, or the low end of a published range.")
    published_high: float = pa.Field(nullable=True, description="The high end of a published range (the value again where single).")
    published_text: str = pa.Field(description="The published value as stated.")
    tolerance: float = pa.Field(ge=0, description="Relative error within which a recomputed end counts as reproduced.")
    case_id: str = pa.Field(nullable=True, description="The parameter set that recomputes it: a scenario (reduction_factor) or a case of staging.claim_parameters; null where none can.")
    baseline_case_id: str = pa.Field(nullable=True, description="The case it is compared against, where the claim is a ratio of two cases (bandwidth_ratio).")
    part: str = pa.Field(nullable=True, isin=PARTS, description="The part of a run's energy an emission_share claim is about: " + " | ".join(PARTS) + ".")
    stance: str = pa.Field(isin=STANCES, description="for | against | neutral: which side of 'train outside the data centre' the claim argues (schemas/statuses.py STANCES).")
    missing: str = pa.Field(nullable=True, description="What the paper does not publish that a recomputation needs (a claim with no case).")
    notes: str = pa.Field(str_length={"min_value": 1}, description="How it is recomputed, or why it cannot be.")

    @pa.dataframe_check(description="a claim has a case to recompute it on, or names what is missing")
    @classmethod
    def case_or_missing(cls, data: pa.PolarsData) -> pl.LazyFrame:
        return data.lazyframe.select(pl.col("case_id").is_not_null() | pl.col("missing").is_not_null())

    @pa.dataframe_check(description="published_low <= published_high")
    @classmethod
    def ordered_bounds(cls, data: pa.PolarsData) -> pl.LazyFrame:
        return data.lazyframe.select((pl.col("published_low") <= pl.col("published_high")).fill_null(True))


class ClaimParameters(Provenance):
    """staging.claim_parameters: the inputs that recompute a claim, one parameter of one case per row, each with
    its status and source; a value may instead name a row of staging.network_energy (factor_id), which it then
    takes. Grain: case x parameter."""

    #: The warehouse table(s) this model is the contract of (pipelines.warehouse.dictionary finds it so).
    __tables__ = ("staging.claim_parameters",)

    case_id: str = pa.Field(str_matches=ID, description="The case (a claim's configuration) the parameter belongs to.")
    parameter: str = pa.Field(str_matches=ID, description="The parameter's name.")
    value: float = pa.Field(nullable=True, description="The value, in `unit` (null where value_text or factor_id gives it).")
    value_text: str = pa.Field(nullable=True, description="A named value (comm_pattern: a row of sources/curated/patterns.csv).")
    low: float = pa.Field(nullable=True, description="Low end of the value's sourced range.")
    high: float = pa.Field(nullable=True, description="High end of the value's sourced range.")
    unit: str = pa.Field(str_length={"min_value": 1}, description="Unit of value, low and high.")
    factor_id: str = pa.Field(nullable=True, description="A row of staging.network_energy whose value this parameter takes.")
    status: str = pa.Field(isin=STATUSES, description=STATUS_TEXT + ".")
    citation: str = pa.Field(str_length={"min_value": 1}, description="Where the value comes from.")
    citation_url: str = pa.Field(nullable=True, description="A link to the citation, where it has one.")
    reasoning: str = pa.Field(str_length={"min_value": 1}, description="Why the value, and any arithmetic behind it.")

    class Config:
        unique = ["case_id", "parameter"]

    @pa.dataframe_check(description="exactly one of value, value_text and factor_id gives the value")
    @classmethod
    def one_value(cls, data: pa.PolarsData) -> pl.LazyFrame:
        given = (pl.col("value").is_not_null().cast(pl.Int8) + pl.col("value_text").is_not_null().cast(pl.Int8)
                 + pl.col("factor_id").is_not_null().cast(pl.Int8))
        return data.lazyframe.select(given == 1)


class ClaimValues(Contract):
    """core.claim_values: every parameter of every claim case at its central value and at the low and high ends of its
    sourced range (the central value where it has none); a factor_id's row of staging.network_energy gives its value.
    Grain: case x parameter x range end."""

    #: The warehouse table(s) this model is the contract of (pipelines.warehouse.dictionary finds it so).
    __tables__ = ("core.claim_values",)

    case_id: str = pa.Field(description="The case (staging.claim_parameters).")
    parameter: str = pa.Field(description="The parameter's name.")
    range_end: str = pa.Field(isin=["central", "low", "high"], description="central, or the low (high) end of the parameter's sourced range.")
    value: float = pa.Field(nullable=True, description="The value at that end (null for a named value).")
    value_text: str = pa.Field(nullable=True, description="A named value (comm_pattern).")

    class Config:
        unique = ["case_id", "parameter", "range_end"]


class ClaimRows(Contract):
    """marts.claims: every registered claim with its published value, the value this project recomputes from
    parameter rows, the status and the verdict in the claim's own terms. Grain: one claim."""

    #: The warehouse table(s) this model is the contract of (pipelines.warehouse.dictionary finds it so).
    __tables__ = ("marts.claims",)

    claim_id: str = pa.Field(unique=True, description="Claim id (staging.claims).")
    paper: str = pa.Field(description="First author et al. and year.")
    stance: str = pa.Field(isin=STANCES, description="for | against | neutral: which side of 'train outside the data centre' the claim argues (staging.claims).")
    quantity: str = pa.Field(isin=QUANTITIES, description="What the claim states (schemas/claims.py QUANTITIES).")
    unit: str = pa.Field(description="Unit of the published and recomputed values.")
    quote: str = pa.Field(description="The sentence that states the claim.")
    published_low: float = pa.Field(nullable=True, description="The published value, or its range's low end.")
    published_high: float = pa.Field(nullable=True, description="The published range's high end.")
    published_text: str = pa.Field(description="The published value as stated.")
    recomputed_value: float = pa.Field(nullable=True, description="The recomputed value at the case's central parameter values (for a claim over several classes or baselines: their midpoint); null where not reproducible.")
    recomputed_low: float = pa.Field(nullable=True, description="The lowest recomputed value: over the case's device classes or baselines, and over the ends of its parameters' sourced ranges.")
    recomputed_high: float = pa.Field(nullable=True, description="The highest recomputed value, likewise.")
    recomputed_text: str = pa.Field(description="The recomputed value(s) in words.")
    relative_error: float = pa.Field(nullable=True, description="The larger of the two ends' relative errors, recomputed / published - 1.")
    tolerance: float = pa.Field(ge=0, description="Relative error within which an end counts as reproduced.")
    status: str = pa.Field(isin=CLAIM_STATUSES, description="reproduced (within the tolerance of the central value) | inconclusive (outside it, but the published value lies inside the recomputed low-high range) | differs | not reproducible.")
    reason: str = pa.Field(description="Why it differs, or what is missing; how it was recomputed where reproduced.")
    verdict: str = pa.Field(description="The verdict in the claim's own terms, in one sentence.")
    case_id: str = pa.Field(nullable=True, description="The parameter set it is recomputed on.")
    citation_url: str = pa.Field(description="Link to the paper.")
    inputs_paper: int = pa.Field(ge=0, description="Input rows of status paper the claim rests on: its scenario's parameter rows (a reduction_factor claim) or its cases' rows.")
    inputs_secondary: int = pa.Field(ge=0, description="Input rows of status secondary (the paper's number read through another document) it rests on.")
    inputs_by_status: str = pa.Field(description="Its input rows counted by status, most first ('none: no case recomputes it' where it has none).")


class ClaimTraffic(Contract):
    """marts.claim_traffic: the wide-area traffic of each case whose pattern moves bytes, and its network energy
    under each network method that applies to a link between data centres (those that charge bytes by their
    ends: volume and marginal). Grain: case x network method x range end (central, low, high)."""

    #: The warehouse table(s) this model is the contract of (pipelines.warehouse.dictionary finds it so).
    __tables__ = ("marts.claim_traffic",)

    scenario_id: str = pa.Field(description="The case (staging.claim_parameters case_id).")
    network_method: str = pa.Field(description="A row of core.network_methods that charges a wide-area link's bytes.")
    comm_pattern: str = pa.Field(description="The case's pattern (core.patterns).")
    range_end: str = pa.Field(isin=["central", "low", "high"], description="The case's parameters at their central values, or every one at the low (high) end of its sourced range.")
    nodes: float = pa.Field(gt=0, description="Nodes exchanging over the link.")
    syncs: float = pa.Field(ge=0, description="All-reduces over the run: tokens / (nodes x tokens per node step x local steps per sync).")
    wan_tb: float = pa.Field(ge=0, description="Bytes over the wide-area link, TB (1e12 B): sql/model/macros.sql comm_bytes.")
    network_kwh: float = pa.Field(ge=0, description="The network's energy for those bytes under the method (sql/model/macros.sql network_terms_kwh, network_method_kwh), kWh.")
