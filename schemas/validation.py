"""staging.validation_cases and marts.validation: published training footprints and our computation of them."""

from __future__ import annotations

from typing import Any

import pandera.polars as pa
import polars as pl

from schemas.base import Contract, FiniteProvenance
from schemas.device_specs import STATUSES

CASE_KINDS = ["case", "headline"]
MODES = ["accounting", "predictive"]
METRICS = ["accelerator_hours", "energy_mwh", "operational_tco2e"]
#: How the predictive mode counts a case's training FLOPs (sql/marts/validation.sql).
ARCHITECTURES = ["decoder_only", "encoder_decoder"]
#: The inputs of a case: each value column X has its ``X_status`` and ``X_citation`` columns.
INPUTS = [
    "accelerator_hours",
    "power_w",
    "pue",
    "grid_gco2e_per_kwh",
    "params",
    "tokens",
    "architecture",
    "target_tokens_per_input_token",
    "peak_tflops",
    "mfu",
    "goodput",
]
#: Inputs with a plausible range ``X_low`` .. ``X_high`` (sharing X's status and citation): the
#: predictive mode's interval spans them.
RANGED_INPUTS = ["mfu", "goodput"]
#: A case that gives these inputs is a predictive case (sql/marts/validation.sql), and gives its goodput too.
PREDICTIVE_INPUTS = ["params", "tokens", "peak_tflops", "mfu"]
CASE_ID_PATTERN = r"^[a-z0-9]+(_[a-z0-9]+)*$"


def status_of(name: str, detail: str = "") -> Any:
    """The ``<name>_status`` column of an input: one of :data:`STATUSES`, or empty."""
    return pa.Field(nullable=True, isin=STATUSES, description=f"Status of {name}{detail}.")


def source_of(name: str, detail: str = "") -> Any:
    """The ``<name>_citation`` column of an input: where its value comes from, or empty."""
    return pa.Field(nullable=True, description=f"Source of {name}{detail}.")


class ValidationCases(FiniteProvenance):
    """Grain: one published training run (``kind = case``) or one published headline that gives no inputs (``kind = headline``).

    A case carries the publication's footprint (energy and operational carbon of the run) and
    the inputs to recompute it, each value column X with its own ``X_status`` and ``X_citation``:
    accelerator-hours, power per accelerator (node share included, or PUE too where
    ``power_w_includes_pue``), PUE and grid intensity (accounting mode), and parameters active per
    token, training tokens, the architecture (with, for an encoder-decoder, the target tokens per
    input token), the accelerator's peak, a model FLOPs utilisation and the goodput, the last two
    with an optional range ``X_low`` .. ``X_high`` (predictive mode). An input the publication does
    not give is sourced elsewhere and labelled ``assumed``, or left empty (the mode that needs it
    is then skipped); no input is solved from the published result.
    """

    #: The warehouse table(s) this model is the contract of (pipelines.warehouse.dictionary finds it so).
    __tables__ = ("staging.validation_cases", "marts.validation_headlines")

    case_id: str = pa.Field(
        unique=True,
        str_matches=CASE_ID_PATTERN,
        description="Stable id: first author, year and model, e.g. patterson2021_t5.",
    )
    kind: str = pa.Field(
        isin=CASE_KINDS,
        description="case (recomputed in marts.validation) | headline (a published claim without the inputs to recompute it).",
    )
    model: str = pa.Field(description="The model trained, e.g. GPT-3 (175B).")
    accelerator: str = pa.Field(
        nullable=True, description="The accelerator the run used, e.g. TPU v3."
    )
    headline: str = pa.Field(
        nullable=True, description="A headline row's published claim, in words."
    )
    published_energy_kwh: float = pa.Field(
        nullable=True, gt=0, description="Published energy of the training run, kWh."
    )
    published_operational_kgco2e: float = pa.Field(
        nullable=True, gt=0, description="Published operational carbon of the run, kgCO2e."
    )
    published_citation: str = pa.Field(
        description="Where the published values are (paper, table, row)."
    )
    published_url: str = pa.Field(str_startswith="http", description="Link to the publication.")
    accelerator_hours: float = pa.Field(
        nullable=True, gt=0, description="Accelerator-hours of the run (chips x hours)."
    )
    accelerator_hours_status: str = status_of("accelerator_hours", ": primary | paper | derived | assumed")
    accelerator_hours_citation: str = source_of("accelerator_hours")
    power_w: float = pa.Field(
        nullable=True,
        gt=0,
        description="Average power per accelerator while training, its share of the node included, W.",
    )
    power_w_status: str = status_of("power_w")
    power_w_citation: str = source_of("power_w")
    power_w_includes_pue: bool = pa.Field(
        nullable=True,
        description="true: power_w is facility power per accelerator that the publication already multiplied by "
        "the datacentre's PUE (e.g. Llama 2's Table 2, power 'adjusted for power usage efficiency'), so PUE is "
        "not applied again and pue stays empty; empty or false: power_w is the accelerator's own draw (its "
        "node share included) and pue is applied.",
    )
    pue: float = pa.Field(
        nullable=True,
        ge=1,
        le=3,
        description="Power usage effectiveness of the datacentre, applied to power_w (1 where the published figure "
        "carries none; empty where power_w_includes_pue).",
    )
    pue_status: str = status_of("pue")
    pue_citation: str = source_of("pue")
    grid_gco2e_per_kwh: float = pa.Field(
        nullable=True,
        ge=0,
        le=2000,
        description="Carbon intensity of the electricity the publication used, gCO2e/kWh.",
    )
    grid_gco2e_per_kwh_status: str = status_of("grid_gco2e_per_kwh")
    grid_gco2e_per_kwh_citation: str = source_of("grid_gco2e_per_kwh")
    params: float = pa.Field(
        nullable=True,
        gt=0,
        description="Parameters active per token (all parameters for a dense model).",
    )
    params_status: str = status_of("params")
    params_citation: str = source_of("params")
    tokens: float = pa.Field(
        nullable=True,
        gt=0,
        description="Training tokens (for an encoder-decoder, the input tokens its encoder reads).",
    )
    tokens_status: str = status_of("tokens")
    tokens_citation: str = source_of("tokens")
    architecture: str = pa.Field(
        nullable=True,
        isin=ARCHITECTURES,
        description="decoder_only (every token through all N parameters: 6 x N x D) | encoder_decoder "
        "(encoder and decoder of N/2 each: 6 x N/2 x D + 6 x N/2 x D x target_tokens_per_input_token); "
        "empty: counted as 6 x N x D, the way the N and D were published (notes).",
    )
    architecture_status: str = status_of("architecture")
    architecture_citation: str = source_of("architecture")
    target_tokens_per_input_token: float = pa.Field(
        nullable=True,
        gt=0,
        description="An encoder-decoder's decoder (target) tokens per encoder input token in pre-training, "
        "e.g. 114 / 512 for T5's span corruption.",
    )
    target_tokens_per_input_token_status: str = status_of("target_tokens_per_input_token")
    target_tokens_per_input_token_citation: str = source_of("target_tokens_per_input_token")
    peak_tflops: float = pa.Field(
        nullable=True,
        gt=0,
        description="Peak of the accelerator at the training precision, dense, TFLOPS.",
    )
    peak_tflops_status: str = status_of("peak_tflops")
    peak_tflops_citation: str = source_of("peak_tflops")
    mfu: float = pa.Field(
        nullable=True,
        gt=0,
        le=1,
        description="Model FLOPs utilisation while the run trains: achieved / peak throughput (a fraction); the "
        "predictive mode's central value.",
    )
    mfu_low: float = pa.Field(
        nullable=True,
        gt=0,
        le=1,
        description="Lowest plausible MFU of the run (the predicted interval's high end); empty with mfu_high: "
        "no range, mfu holds for the whole run.",
    )
    mfu_high: float = pa.Field(
        nullable=True,
        gt=0,
        le=1,
        description="Highest plausible MFU of the run (the predicted interval's low end); empty with mfu_low: no range.",
    )
    mfu_status: str = status_of("mfu", " (and of its range)")
    mfu_citation: str = source_of("mfu", " (and of its range)")
    goodput: float = pa.Field(
        nullable=True,
        gt=0,
        le=1,
        description="Share of the run's elapsed accelerator time that trains: whose steps the final model keeps "
        "(time lost to failures, restarts, rolled-back steps, evaluation and checkpointing is the rest); the "
        "predictive mode's central value. 1 where the mfu is itself an average over the elapsed time.",
    )
    goodput_low: float = pa.Field(
        nullable=True,
        gt=0,
        le=1,
        description="Lowest plausible goodput of the run (the predicted interval's high end); empty with "
        "goodput_high: no range, goodput holds.",
    )
    goodput_high: float = pa.Field(
        nullable=True,
        gt=0,
        le=1,
        description="Highest plausible goodput of the run (the predicted interval's low end); empty with "
        "goodput_low: no range.",
    )
    goodput_status: str = status_of("goodput", " (and of its range)")
    goodput_citation: str = source_of("goodput", " (and of its range)")
    llmcarbon_operational_kgco2e: float = pa.Field(
        nullable=True,
        gt=0,
        description="LLMCarbon's prediction of the run's operational carbon, where it covers the case, kgCO2e.",
    )
    llmcarbon_citation: str = source_of("llmcarbon_operational_kgco2e")
    notes: str = pa.Field(
        nullable=True,
        description="The arithmetic behind derived inputs, and why an input or a mode is missing.",
    )

    @pa.dataframe_check(
        name="inputs_have_status_and_citation",
        description="every input given has its status and its citation",
    )
    @classmethod
    def inputs_have_status_and_citation(cls, data: pa.PolarsData) -> pl.LazyFrame:
        given = [
            pl.col(value).is_null()
            | (pl.col(f"{value}_status").is_not_null() & pl.col(f"{value}_citation").is_not_null())
            for value in INPUTS
        ]
        return data.lazyframe.select(pl.all_horizontal(given))

    @pa.dataframe_check(
        name="derived_or_assumed_inputs_explain",
        description="a case with a derived or assumed input has notes",
    )
    @classmethod
    def derived_or_assumed_inputs_explain(cls, data: pa.PolarsData) -> pl.LazyFrame:
        weak = pl.any_horizontal(
            [
                pl.col(f"{value}_status").is_in(["derived", "assumed"]).fill_null(False)
                for value in INPUTS
            ]
        )
        return data.lazyframe.select(~weak | pl.col("notes").is_not_null())

    @pa.dataframe_check(
        name="ranges_hold_their_value",
        description="an input's range gives both ends, around the input's value: low <= value <= high",
    )
    @classmethod
    def ranges_hold_their_value(cls, data: pa.PolarsData) -> pl.LazyFrame:
        held = []
        for value in RANGED_INPUTS:
            low, high = pl.col(f"{value}_low"), pl.col(f"{value}_high")
            both_or_none = low.is_null() == high.is_null()
            around = low.is_null() | (
                pl.col(value).is_not_null() & (low <= pl.col(value)) & (pl.col(value) <= high)
            )
            held.append(both_or_none & around.fill_null(False))
        return data.lazyframe.select(pl.all_horizontal(held))

    @pa.dataframe_check(
        name="predictive_cases_give_goodput",
        description="a case with parameters, tokens, peak and MFU gives its goodput (docs/validation.md: the "
        "publication's, else the documented default with its range)",
    )
    @classmethod
    def predictive_cases_give_goodput(cls, data: pa.PolarsData) -> pl.LazyFrame:
        predictive = pl.all_horizontal([pl.col(c).is_not_null() for c in PREDICTIVE_INPUTS])
        return data.lazyframe.select(~predictive | pl.col("goodput").is_not_null())

    @pa.dataframe_check(
        name="pue_applied_once",
        description="power that already includes PUE (power_w_includes_pue) leaves pue empty, so PUE is not applied twice",
    )
    @classmethod
    def pue_applied_once(cls, data: pa.PolarsData) -> pl.LazyFrame:
        included = pl.col("power_w_includes_pue").fill_null(False)
        return data.lazyframe.select(~included | pl.col("pue").is_null())

    @pa.dataframe_check(
        name="encoder_decoders_give_target_ratio",
        description="an encoder_decoder case gives its target tokens per input token, and no other case does",
    )
    @classmethod
    def encoder_decoders_give_target_ratio(cls, data: pa.PolarsData) -> pl.LazyFrame:
        encoder_decoder = (pl.col("architecture") == "encoder_decoder").fill_null(False)
        return data.lazyframe.select(
            encoder_decoder == pl.col("target_tokens_per_input_token").is_not_null()
        )

    @pa.dataframe_check(
        name="cases_publish_a_footprint",
        description="a case gives a published energy or operational carbon",
    )
    @classmethod
    def cases_publish_a_footprint(cls, data: pa.PolarsData) -> pl.LazyFrame:
        published = (
            pl.col("published_energy_kwh").is_not_null()
            | pl.col("published_operational_kgco2e").is_not_null()
        )
        return data.lazyframe.select((pl.col("kind") != "case") | published)

    @pa.dataframe_check(
        name="headlines_state_the_claim",
        description="a headline row states its claim and why it is not a case",
    )
    @classmethod
    def headlines_state_the_claim(cls, data: pa.PolarsData) -> pl.LazyFrame:
        stated = pl.col("headline").is_not_null() & pl.col("notes").is_not_null()
        return data.lazyframe.select((pl.col("kind") != "headline") | stated)


class Validation(Contract):
    """marts.validation: published training footprints against our computation. Grain: validation case x mode x metric.

    accounting recomputes a publication's footprint from its own accelerator-hours, power, PUE and
    grid intensity (job_kwh, job_kgco2e); predictive starts from training FLOPs (training_flops: 6 x N x D,
    or for an encoder-decoder 6 x N/2 x D for the encoder's input tokens plus 6 x N/2 x D x r for the
    decoder's targets) and the accelerator's peak x MFU x goodput (accelerator_hours), then the same power, PUE
    and grid; its point takes the central MFU and goodput, and predicted_low .. predicted_high their ranges.
    One row per metric the publication gives and the mode can compute.
    """

    #: The warehouse table(s) this model is the contract of (pipelines.warehouse.dictionary finds it so).
    __tables__ = ("marts.validation",)

    case_id: str = pa.Field(
        str_matches=CASE_ID_PATTERN, description="Validation case (staging.validation_cases)."
    )
    model: str = pa.Field(description="The model trained.")
    accelerator: str = pa.Field(nullable=True, description="The accelerator the run used.")
    mode: str = pa.Field(
        isin=MODES,
        description="accounting (the publication's own inputs) | predictive (training FLOPs at peak x MFU).",
    )
    metric: str = pa.Field(
        isin=METRICS,
        description="accelerator_hours (predictive only) | energy_mwh | operational_tco2e.",
    )
    unit: str = pa.Field(
        isin=["accelerator-h", "MWh", "tCO2e"],
        description="Unit of published_value and computed_value.",
    )
    published_value: float = pa.Field(gt=0, description="The publication's value.")
    computed_value: float = pa.Field(
        gt=0,
        description="Our value from the case's inputs and the model's macros. Predictive rows: at the case's "
        "central MFU and goodput, so the time a run loses to failures and restarts is in it (the point is the run "
        "as expected, not its best case, which is predicted_low).",
    )
    relative_error: float = pa.Field(description="(computed - published) / published.")
    target_abs_error: float = pa.Field(
        gt=0,
        description="The mode's target |relative_error|: 0.02 for accounting, 0.082 (LLMCarbon's reported bound) for predictive.",
    )
    within_target: bool = pa.Field(description="|relative_error| <= target_abs_error.")
    input_status: str = pa.Field(
        isin=STATUSES,
        description="The weakest status of the inputs the mode used (assumed < derived < paper, primary).",
    )
    inputs: str = pa.Field(
        description="The inputs in words, e.g. 245,760 accelerator-h x 310 W x PUE 1.12; 545 gCO2e/kWh."
    )
    model_flops: float = pa.Field(
        nullable=True,
        gt=0,
        description="Training FLOPs (predictive rows): 6 x N x D, or for an encoder-decoder "
        "6 x N/2 x D + 6 x N/2 x D x target tokens per input token.",
    )
    mfu: float = pa.Field(
        nullable=True, gt=0, le=1, description="Model FLOPs utilisation used (predictive rows)."
    )
    goodput: float = pa.Field(
        nullable=True,
        gt=0,
        le=1,
        description="Goodput used by the point (predictive rows): the case's central share of elapsed "
        "accelerator time that trains.",
    )
    predicted_low: float = pa.Field(
        nullable=True,
        gt=0,
        description="Predictive rows: the value at the highest MFU and goodput of the case's ranges (its best "
        "case); empty on accounting rows.",
    )
    predicted_high: float = pa.Field(
        nullable=True,
        gt=0,
        description="Predictive rows: the value at the lowest MFU and goodput of the case's ranges; empty on "
        "accounting rows.",
    )
    published_within_interval: bool = pa.Field(
        nullable=True,
        description="Predictive rows: predicted_low <= published_value <= predicted_high. The interval spans only "
        "the ranges of MFU and goodput (the FLOPs, power, PUE and grid are taken at their values), so a case whose "
        "MFU and goodput have no range has an interval of one point. Empty on accounting rows.",
    )
    llmcarbon_case: bool = pa.Field(description="LLMCarbon reports a prediction for this case.")
    llmcarbon_value: float = pa.Field(
        nullable=True,
        gt=0,
        description="LLMCarbon's predicted value, on the predictive operational_tco2e row of a case it covers.",
    )
    llmcarbon_relative_error: float = pa.Field(
        nullable=True, description="(LLMCarbon - published) / published."
    )
    published_citation: str = pa.Field(description="Where the published value is.")
    source_id: str = pa.Field(description="The case's source file (joins staging.sources).")

    @pa.dataframe_check(
        name="predictive_rows_have_an_interval",
        description="a predictive row has predicted_low <= computed_value <= predicted_high and says whether the "
        "published value is inside; an accounting row has no interval",
    )
    @classmethod
    def predictive_rows_have_an_interval(cls, data: pa.PolarsData) -> pl.LazyFrame:
        low, high = pl.col("predicted_low"), pl.col("predicted_high")
        inside = (low <= pl.col("computed_value")) & (pl.col("computed_value") <= high)
        stated = pl.col("published_within_interval").is_not_null()
        none = low.is_null() & high.is_null() & pl.col("published_within_interval").is_null()
        predictive = pl.col("mode") == "predictive"
        return data.lazyframe.select(
            pl.when(predictive).then(inside.fill_null(False) & stated).otherwise(none)
        )

    @pa.dataframe_check(
        name="one_row_per_case_mode_metric",
        description="case_id, mode and metric are unique together",
    )
    @classmethod
    def one_row_per_case_mode_metric(cls, data: pa.PolarsData) -> pl.LazyFrame:
        return data.lazyframe.select(pl.struct("case_id", "mode", "metric").is_unique())
