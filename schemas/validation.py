"""staging.validation_cases and marts.validation: published training footprints and our computation of them."""

from __future__ import annotations

import pandera.polars as pa
import polars as pl

from schemas.base import FiniteProvenance
from schemas.device_specs import STATUSES

CASE_KINDS = ["case", "headline"]
MODES = ["accounting", "predictive"]
METRICS = ["accelerator_hours", "energy_mwh", "operational_tco2e"]
#: How the predictive mode counts a case's training FLOPs (sql/marts/validation.sql).
ARCHITECTURES = ["decoder_only", "encoder_decoder"]
#: Each input group of a case: its value column, and its ``<group>_status`` and ``<group>_citation`` columns.
INPUT_GROUPS = {
    "hours": "accelerator_hours",
    "power": "power_w",
    "pue": "pue",
    "grid": "grid_gco2e_per_kwh",
    "params": "params",
    "tokens": "tokens",
    "architecture": "architecture",
    "targets": "target_tokens_per_input_token",
    "peak": "peak_tflops",
    "mfu": "mfu",
}
CASE_ID_PATTERN = r"^[a-z0-9]+(_[a-z0-9]+)*$"


class ValidationCases(FiniteProvenance):
    """Grain: one published training run (``kind = case``) or one published headline that gives no inputs (``kind = headline``).

    A case carries the publication's footprint (energy and operational carbon of the run) and
    the inputs to recompute it, each with its own status and citation: accelerator-hours, power
    per accelerator (node share included), PUE and grid intensity (accounting mode), and
    parameters active per token, training tokens, the architecture (with, for an encoder-decoder,
    the target tokens per input token), the accelerator's peak and a model FLOPs utilisation
    (predictive mode). An input the publication does not give is sourced elsewhere
    and labelled ``assumed``, or left empty (the mode that needs it is then skipped); no input is
    solved from the published result.
    """

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
    hours_status: str = pa.Field(
        nullable=True,
        isin=STATUSES,
        description="Status of accelerator_hours: primary | paper | derived | assumed.",
    )
    hours_citation: str = pa.Field(nullable=True, description="Source of accelerator_hours.")
    power_w: float = pa.Field(
        nullable=True,
        gt=0,
        description="Average power per accelerator while training, its share of the node included, W.",
    )
    power_status: str = pa.Field(nullable=True, isin=STATUSES, description="Status of power_w.")
    power_citation: str = pa.Field(nullable=True, description="Source of power_w.")
    pue: float = pa.Field(
        nullable=True,
        ge=1,
        le=3,
        description="Power usage effectiveness of the datacentre (1 where the published figure carries none).",
    )
    pue_status: str = pa.Field(nullable=True, isin=STATUSES, description="Status of pue.")
    pue_citation: str = pa.Field(nullable=True, description="Source of pue.")
    grid_gco2e_per_kwh: float = pa.Field(
        nullable=True,
        ge=0,
        le=2000,
        description="Carbon intensity of the electricity the publication used, gCO2e/kWh.",
    )
    grid_status: str = pa.Field(
        nullable=True, isin=STATUSES, description="Status of grid_gco2e_per_kwh."
    )
    grid_citation: str = pa.Field(nullable=True, description="Source of grid_gco2e_per_kwh.")
    params: float = pa.Field(
        nullable=True,
        gt=0,
        description="Parameters active per token (all parameters for a dense model).",
    )
    params_status: str = pa.Field(nullable=True, isin=STATUSES, description="Status of params.")
    params_citation: str = pa.Field(nullable=True, description="Source of params.")
    tokens: float = pa.Field(
        nullable=True,
        gt=0,
        description="Training tokens (for an encoder-decoder, the input tokens its encoder reads).",
    )
    tokens_status: str = pa.Field(nullable=True, isin=STATUSES, description="Status of tokens.")
    tokens_citation: str = pa.Field(nullable=True, description="Source of tokens.")
    architecture: str = pa.Field(
        nullable=True,
        isin=ARCHITECTURES,
        description="decoder_only (every token through all N parameters: 6 x N x D) | encoder_decoder "
        "(encoder and decoder of N/2 each: 6 x N/2 x D + 6 x N/2 x D x target_tokens_per_input_token); "
        "empty: counted as 6 x N x D, the way the N and D were published (notes).",
    )
    architecture_status: str = pa.Field(
        nullable=True, isin=STATUSES, description="Status of architecture."
    )
    architecture_citation: str = pa.Field(nullable=True, description="Source of architecture.")
    target_tokens_per_input_token: float = pa.Field(
        nullable=True,
        gt=0,
        description="An encoder-decoder's decoder (target) tokens per encoder input token in pre-training, "
        "e.g. 114 / 512 for T5's span corruption.",
    )
    targets_status: str = pa.Field(
        nullable=True, isin=STATUSES, description="Status of target_tokens_per_input_token."
    )
    targets_citation: str = pa.Field(
        nullable=True, description="Source of target_tokens_per_input_token."
    )
    peak_tflops: float = pa.Field(
        nullable=True,
        gt=0,
        description="Peak of the accelerator at the training precision, dense, TFLOPS.",
    )
    peak_status: str = pa.Field(nullable=True, isin=STATUSES, description="Status of peak_tflops.")
    peak_citation: str = pa.Field(nullable=True, description="Source of peak_tflops.")
    mfu: float = pa.Field(
        nullable=True,
        gt=0,
        le=1,
        description="Model FLOPs utilisation over the run: achieved / peak throughput (a fraction).",
    )
    mfu_status: str = pa.Field(nullable=True, isin=STATUSES, description="Status of mfu.")
    mfu_citation: str = pa.Field(nullable=True, description="Source of mfu.")
    llmcarbon_operational_kgco2e: float = pa.Field(
        nullable=True,
        gt=0,
        description="LLMCarbon's prediction of the run's operational carbon, where it covers the case, kgCO2e.",
    )
    llmcarbon_citation: str = pa.Field(
        nullable=True, description="Source of llmcarbon_operational_kgco2e."
    )
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
            | (pl.col(f"{group}_status").is_not_null() & pl.col(f"{group}_citation").is_not_null())
            for group, value in INPUT_GROUPS.items()
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
                pl.col(f"{group}_status").is_in(["derived", "assumed"]).fill_null(False)
                for group in INPUT_GROUPS
            ]
        )
        return data.lazyframe.select(~weak | pl.col("notes").is_not_null())

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


class Validation(pa.DataFrameModel):
    """marts.validation: published training footprints against our computation. Grain: validation case x mode x metric.

    accounting recomputes a publication's footprint from its own accelerator-hours, power, PUE and
    grid intensity (job_kwh, job_kgco2e); predictive starts from training FLOPs (training_flops: 6 x N x D,
    or for an encoder-decoder 6 x N/2 x D for the encoder's input tokens plus 6 x N/2 x D x r for the
    decoder's targets) and the accelerator's peak x MFU (accelerator_hours), then the same power, PUE and grid.
    One row per metric the publication gives and the mode can compute.
    """

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
        gt=0, description="Our value from the case's inputs and the model's macros."
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

    class Config:
        strict = True

    @pa.dataframe_check(
        name="one_row_per_case_mode_metric",
        description="case_id, mode and metric are unique together",
    )
    @classmethod
    def one_row_per_case_mode_metric(cls, data: pa.PolarsData) -> pl.LazyFrame:
        return data.lazyframe.select(pl.struct("case_id", "mode", "metric").is_unique())
