"""The verdict: R per scenario, frame, basis, device class and network method, with its Monte Carlo range."""

import dagster as dg
import polars as pl

from pipelines.lib.checks import Reader, table_check
from pipelines.lib.resources import Warehouse
from pipelines.lib.tables import SqlTable, with_metadata
from pipelines.warehouse.queries import query_pl
from pipelines.warehouse.tables import preview_md
from schemas.bounds import training_utilisation_ceiling
from schemas.marts import Verdict
from schemas.statuses import UNSOURCED_STATUSES
from schemas.vocabulary import (
    BASIS_RULES,
    PAPER_FRAME,
    VERDICT_BELOW,
    VERDICT_EDGE_MORE,
    VERDICT_HOLDS,
    VERDICT_INFEASIBLE,
    VERDICT_UNCERTAIN,
)

#: The scenario parameter whose factor_ref names the measured row of the cloud GPU's training rate.
GPU_RATE_PARAMETER = "cloud_gpu_measured_tflops"
#: The suffix of an edge class's parameter (``<class>_measured_tflops``) whose factor_ref names the measured row of its rate.
EDGE_RATE_SUFFIX = "_measured_tflops"
VERDICT = SqlTable("marts.verdict", "marts/verdict.sql", Verdict)
#: The verdict's bound parameters: the status that names an assumption and the categories' wording (the claim's bounds and
#: the feasibility threshold are core.claim's).
VERDICT_PARAMS = {
    "unsourced_statuses": UNSOURCED_STATUSES, "verdict_holds": VERDICT_HOLDS,
    "verdict_below": VERDICT_BELOW, "verdict_uncertain": VERDICT_UNCERTAIN, "verdict_edge_more": VERDICT_EDGE_MORE,
    "verdict_infeasible": VERDICT_INFEASIBLE, "gpu_rate_parameter": GPU_RATE_PARAMETER, "paper_frame": PAPER_FRAME,
    "edge_rate_suffix": EDGE_RATE_SUFFIX,
}
#: The bases that weigh measured training rates: where a headline's cloud GPU rate must name a measured row.
MEASURED_RATE_BASES = [basis for basis, rule in BASIS_RULES.items() if rule.measured_rate > 0]
#: Slack of the measured-ceiling comparison (implied_device_utilisation is rounded to 12 decimals).
CEILING_TOLERANCE = 1e-9


def rows_above_measured_ceiling(frame: pl.DataFrame) -> pl.DataFrame:
    """The realistic headline rows (frames other than the paper's) whose implied device utilisation exceeds the
    device's measured ceiling (its device_measured_share) or its class's training-utilisation ceiling
    (schemas/bounds.py, 0.6), or whose cloud GPU's rate names no measured row (gpu_rate_id null on a basis that
    weighs measured rates; on another basis, e.g. measured_throughput's measured job times, it is null by
    definition), each with why.

    ``frame``: marts.verdict's scenario_id, accounting_frame, is_headline, basis, device_class,
    implied_device_utilisation and gpu_rate_id, with core.variant_devices' device_measured_share (each scenario's base set).
    """
    rows = frame.filter(pl.col("is_headline") & (pl.col("accounting_frame") != PAPER_FRAME))
    ceiling = pl.Series([training_utilisation_ceiling(c) for c in rows.get_column("device_class").to_list()], dtype=pl.Float64)
    utilisation = pl.col("implied_device_utilisation")
    return rows.with_columns(ceiling.alias("class_ceiling")).with_columns(
        pl.when(pl.col("gpu_rate_id").is_null() & pl.col("basis").is_in(MEASURED_RATE_BASES))
        .then(pl.lit("the GPU's rate names no measured row"))
        .when(utilisation > pl.col("class_ceiling") + CEILING_TOLERANCE).then(pl.lit("above the class's training ceiling"))
        .when(utilisation > pl.col("device_measured_share") + CEILING_TOLERANCE).then(pl.lit("above the device's measured rate"))
        .alias("reason"),
    ).filter(pl.col("reason").is_not_null())


@table_check(VERDICT.table, additional_deps=[dg.AssetKey(["core", "variant_devices"])],
             description="Blocks where a realistic headline row (a frame other than the paper's) asks its devices above "
                         "their measured rate (core.variant_devices device_measured_share, each scenario's base set: the "
                         "devices the model read) or above their class's "
                         "training-utilisation ceiling (schemas/bounds.py), or where its cloud GPU's rate names no "
                         "measured row (gpu_rate_id null on a basis that weighs measured rates).")
def measured_rates_within_ceiling(warehouse: Reader) -> dg.AssetCheckResult:
    """The realistic headline rows above a ceiling or without a measured GPU row."""
    frame = warehouse.read(
        "select v.scenario_id, v.accounting_frame, v.is_headline, v.basis, v.device_class, v.implied_device_utilisation, "
        "v.gpu_rate_id, d.device_measured_share from marts.verdict as v "
        "left join core.variant_devices as d on d.scenario_id = v.scenario_id and d.variant_id = 'base' "
        "and d.device_class = v.device_class "
        "order by v.scenario_id, v.device_class, v.network_method")
    failing = rows_above_measured_ceiling(frame)
    return dg.AssetCheckResult(
        passed=failing.height == 0,
        metadata={"rows_failing": failing.height, "rows": dg.MetadataValue.md(preview_md(failing, rows=40))},
    )


@table_check(VERDICT.table, blocking=False,
             description="Warns where a fleet's implied device utilisation (achieved FLOPS over peak) exceeds its class's "
                         "plausible training ceiling (schemas/bounds.py: above the best reported training utilisations).")
def implied_utilisation_plausible(warehouse: Reader) -> dg.AssetCheckResult:
    """Rows whose devices would have to run above the best reported training utilisation to do the GPU's work."""
    frame = warehouse.read("select distinct scenario_id, basis, device_class, implied_device_utilisation from marts.verdict "
                           "order by scenario_id, basis, device_class")
    ceilings = [training_utilisation_ceiling(c) for c in frame.get_column("device_class").to_list()]
    above = frame.filter(frame.get_column("implied_device_utilisation") > pl.Series(ceilings))
    return dg.AssetCheckResult(
        passed=above.height == 0,
        severity=dg.AssetCheckSeverity.WARN,
        metadata={"rows_above_ceiling": above.height, "rows": dg.MetadataValue.md(preview_md(above, rows=40))},
    )


@VERDICT.asset(group="marts", check_specs=[implied_utilisation_plausible.spec, measured_rates_within_ceiling.spec])
def verdict(warehouse: Warehouse) -> dg.MaterializeResult:
    """The answer to the claim: R per scenario x basis x edge device class x network method.

    Grain: scenario x basis (the headline, and measured_throughput beside it) x device class x
    every network method the scenario's accounting frame admits (volume and time for
    attributional, marginal for consequential, the paper's radio for as_published). The model
    is evaluated on core.scenarios (deterministic R compute only, and with the scenario's named
    communication pattern, the fleet resized to carry its traffic outside the paper's frame)
    beside the Monte Carlo p05/p50/p95 of the same basis, pattern and method from
    marts.uncertainty. `verdict` reads the frame's range over its methods against the claim's
    4-8x, or says the fleet is infeasible at its link (`verdict_if_feasible` keeps the reading).
    README.md's answer and headline table and docs/findings.md's verdict table are rendered from this table.
    """
    con = warehouse.connection()
    result = VERDICT.build(con, VERDICT_PARAMS)
    headline = query_pl(con, "select scenario_id, accounting_frame, device_class, network_method, round(reduction_factor, 2) as r, "
                             "round(reduction_factor_with_comm, 2) as r_comm, round(p05_with_comm, 2) as p05_comm, "
                             "round(p95_with_comm, 2) as p95_comm, verdict "
                             "from marts.verdict where is_headline order by scenario_id, device_class, network_method")
    return with_metadata(result, {"headline": dg.MetadataValue.md(preview_md(headline, rows=40))})
