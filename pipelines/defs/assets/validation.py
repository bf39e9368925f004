"""Validation: published training footprints (staging.validation_cases) recomputed by the model's formulas (marts.validation).

A case is a CSV row with a citation per input (``sources/curated/validation_cases.csv``);
adding one takes no code: add the row, ``edge-carbon register --refresh curated_validation_cases``,
then ``make run`` (docs/validation.md).
"""

import dagster as dg
import polars as pl

from pipelines.ingest.parsers import registry
from pipelines.lib.checks import Reader, table_check
from pipelines.lib.resources import Warehouse
from pipelines.lib.staging import staging_table
from pipelines.lib.tables import sql_table, with_metadata
from pipelines.warehouse.queries import query_pl
from schemas.validation import ValidationCases

VALIDATION_CASES = staging_table(
    "staging.validation_cases",
    ValidationCases,
    registry.VALIDATION_CASES_PARSERS,
    group="validation",
    finish=lambda f: f.sort("case_id"),
    description="""Published training footprints with the inputs to recompute them, each input with its status and citation.

    Grain: one published training run (``kind = case``: its energy and operational carbon, and
    accelerator-hours, power per accelerator, PUE, grid intensity, active parameters, tokens,
    architecture (and an encoder-decoder's target tokens per input token), peak, MFU and goodput
    (the share of elapsed accelerator time that trains; MFU and goodput with their ranges), each
    value column X with its X_status and X_citation) or one published headline without the
    inputs to recompute it (``kind = headline``, with why). Patterson et al. 2021 Table 4 (T5,
    Meena, GShard-600B, Switch Transformer, GPT-3), BLOOM's final run (Luccioni et al.), OPT-175B
    (Zhang et al.; predictive inputs only), and LLMCarbon's prediction where it covers a case. No
    input is solved from a published result.
    """,
)

VALIDATION = sql_table("marts.validation", joins_sources=True)


def summary(frame: pl.DataFrame) -> dict:
    """The largest |relative error| per mode, and over the predictive rows of LLMCarbon's cases."""

    def worst(rows: pl.DataFrame) -> float | None:
        return (
            None
            if rows.is_empty()
            else round(float(rows.get_column("relative_error").abs().max()), 4)
        )

    predictive = frame.filter(pl.col("mode") == "predictive")
    return {
        "max_abs_error_accounting": worst(frame.filter(pl.col("mode") == "accounting")),
        "max_abs_error_predictive": worst(predictive),
        "max_abs_error_predictive_llmcarbon_cases": worst(
            predictive.filter(pl.col("llmcarbon_case") & (pl.col("metric") == "operational_tco2e"))
        ),
    }


@table_check(VALIDATION.table, additional_deps=[dg.AssetKey(["staging", "validation_cases"])],
             description="Every case with the inputs of a mode has that mode's rows (a case is never dropped silently).")
def every_case_present(warehouse: Reader) -> dg.AssetCheckResult:
    """The cases with accounting inputs that have no accounting row."""
    missing = warehouse.read("""
        select case_id from staging.validation_cases
        where kind = 'case' and accelerator_hours is not null and power_w is not null
            and (pue is not null or power_w_includes_pue)
        except
        select case_id from marts.validation where mode = 'accounting'
    """)
    return dg.AssetCheckResult(
        passed=missing.height == 0,
        metadata={"missing": ", ".join(missing.get_column("case_id").to_list()) or "none"},
    )


@VALIDATION.asset(group="validation", check_specs=[every_case_present.spec])
def validation(warehouse: Warehouse) -> dg.MaterializeResult:
    """Published training footprints against our computation, in two modes.

    Grain: validation case x mode x metric. accounting recomputes a publication's energy and
    operational carbon from its own accelerator-hours, power, PUE and grid intensity (job_kwh,
    job_kgco2e); predictive starts from training FLOPs (training_flops: 6 x N x D, or for a case
    declared an encoder-decoder 6 x N/2 x D input tokens + 6 x N/2 x D x r target tokens) at the
    accelerator's peak x a sourced MFU x goodput (accelerator_hours: elapsed hours, lost time
    included), then the same power, PUE and grid. The predictive point takes the case's central
    MFU and goodput; predicted_low .. predicted_high span their ranges, and
    published_within_interval says whether the published value lies inside. Relative error =
    (computed - published) / published; LLMCarbon's prediction and error sit beside ours where it
    covers the case.
    """
    result = VALIDATION.build(warehouse.connection())
    frame = query_pl(warehouse.connection(), "select * from marts.validation")
    lines = [
        "| case | mode | metric | published | ours | error | ours: low-high | LLMCarbon error |",
        "|---|---|---|---:|---:|---:|---|---:|",
    ]
    for r in frame.iter_rows(named=True):
        llm = (
            "" if r["llmcarbon_relative_error"] is None else f"{r['llmcarbon_relative_error']:+.1%}"
        )
        interval = (
            ""
            if r["predicted_low"] is None
            else f"{r['predicted_low']:,.4g}-{r['predicted_high']:,.4g}"
        )
        lines.append(
            f"| {r['case_id']} | {r['mode']} | {r['metric']} | {r['published_value']:,.4g} | {r['computed_value']:,.4g} "
            f"| {r['relative_error']:+.1%} | {interval} | {llm} |"
        )
    return with_metadata(result, {
        **{k: v for k, v in summary(frame).items() if v is not None},
        "errors": dg.MetadataValue.md("\n".join(lines)),
    })


assets = [VALIDATION_CASES.asset]
