"""The paper's tables and figures: marts.training_energy and marts.paper_reproduction."""

import dagster as dg

from pipelines.lib.checks import Reader, summary_metadata, table_check
from pipelines.lib.keys import SOURCES_KEY
from pipelines.lib.resources import Warehouse
from pipelines.lib.tables import sql_table, with_metadata
from pipelines.warehouse.queries import query_pl
from pipelines.warehouse.reach import unreached
from schemas.statuses import CALIBRATED

TRAINING_ENERGY = sql_table("marts.training_energy")
PAPER_REPRODUCTION = sql_table("marts.paper_reproduction", joins_sources=True)

class TrainingEnergyConfig(dg.Config):
    """Which device's series is the reference for the energy ratios."""

    reference_device: str = "nvidia-rtx-a5000"


class ReproductionConfig(dg.Config):
    """The scenario under which the paper's own numbers are checked, and its Table 1 workload."""

    scenario: str = "paper_text"
    table1_workload: str = "OPT-125M training, paper Table 1"


@table_check(TRAINING_ENERGY.table, blocking=False, additional_deps=[dg.AssetKey(["staging", "benchmark_runs"]), SOURCES_KEY],
             description="Every registered power log reaches a mart: its run is one of a series (a warning naming each log "
                         "that does not, and why; sql/checks/logs_reaching_no_mart.sql). edge-carbon run prints the same lines.")
def every_log_reaches_a_mart(warehouse: Reader) -> dg.AssetCheckResult:
    """One line per registered log whose run reaches no mart (:mod:`pipelines.warehouse.reach`)."""
    lines = unreached(warehouse.read, warehouse.has_table)
    return dg.AssetCheckResult(passed=not lines, severity=dg.AssetCheckSeverity.WARN,
                               metadata={"logs_reaching_no_mart": len(lines), **summary_metadata(lines)})


@table_check(PAPER_REPRODUCTION.table, additional_deps=[dg.AssetKey(["staging", "paper_claims"])],
             description="Every claim id in staging.paper_claims has a row.")
def every_claim_present(warehouse: Reader) -> dg.AssetCheckResult:
    """The claims of staging.paper_claims without a row in marts.paper_reproduction."""
    missing = warehouse.read("select claim_id from staging.paper_claims anti join marts.paper_reproduction using (claim_id)")
    return dg.AssetCheckResult(passed=missing.height == 0, metadata={"missing": ", ".join(missing.get_column("claim_id").to_list()) or "none"})


@TRAINING_ENERGY.asset(group="marts", check_specs=[every_log_reaches_a_mart.spec])
def training_energy(config: TrainingEnergyConfig, warehouse: Warehouse) -> dg.MaterializeResult:
    """Energy per training run with its 95% CI, per device and workload (paper Table 1).

    Grain: one benchmark series (device x workload). Columns: mean energy (J) with the
    Student-t 95% CI over repeated runs, mean duration and power, and the energy ratio and
    slowdown against the reference cloud GPU's series of the same workload.
    """
    return TRAINING_ENERGY.build(warehouse.connection(), {"reference_device": config.reference_device})


@PAPER_REPRODUCTION.asset(group="marts", check_specs=[every_claim_present.spec])
def paper_reproduction(config: ReproductionConfig, warehouse: Warehouse) -> dg.MaterializeResult:
    """Every number the paper publishes, recomputed from the staged inputs, with a verdict.

    Grain: one claim (staging.paper_claims). Status is reproduced (within the claim's
    tolerance), differs (with the reason), not reproducible (with what is missing) or consistent
    by construction (an input it reads is calibrated to it). The
    device-count rows search every published H100 and device FLOPS figure and name the
    inputs that give the paper's counts.
    """
    result = PAPER_REPRODUCTION.build(warehouse.connection(), {"scenario": config.scenario, "table1_workload": config.table1_workload,
                                                                  "calibrated_status": CALIBRATED})
    frame = query_pl(warehouse.connection(), "select claim_id, status, reproduced_value_text from marts.paper_reproduction")
    lines = ["| claim | status | ours |", "|---|---|---|"] + [f"| {c} | {s} | {v} |" for c, s, v in frame.iter_rows()]
    return with_metadata(result, {"verdicts": dg.MetadataValue.md("\n".join(lines))})
