"""The model, set-wise over every scenario: core.scenarios and the paper's tables and figures."""

import dagster as dg

from pipelines.lib.checks import Reader, staging_checks, summary_metadata, table_check
from pipelines.lib.keys import SOURCES_KEY
from pipelines.lib.metadata import column_metadata
from pipelines.lib.resources import Warehouse
from pipelines.lib.tables import sql_table, with_metadata, write_table
from pipelines.model.formula import (
    evaluate,
    publish_model_inputs,
    scenario_devices,
)
from pipelines.paths import sql_text
from pipelines.warehouse.lineage import tables_read_by
from pipelines.warehouse.queries import query_pl
from pipelines.warehouse.reach import unreached
from schemas.model_evaluation import ModelEvaluation
from schemas.scenario_parameters import ScenarioDevices

SCENARIOS = sql_table("core.scenarios")
TRAINING_ENERGY = sql_table("marts.training_energy")
#: What the model reads: its default inputs' tables and its method tables, from its SQL (never listed by hand).
MODEL_READS = tables_read_by("model/evaluate.sql", "model/inputs_base.sql", "model/devices_base.sql")
PAPER_REPRODUCTION = sql_table("marts.paper_reproduction", joins_sources=True)

class TrainingEnergyConfig(dg.Config):
    """Which device's series is the reference for the energy ratios."""

    reference_device: str = "nvidia-rtx-a5000"


class ReproductionConfig(dg.Config):
    """The scenario under which the paper's own numbers are checked, and its Table 1 workload."""

    scenario: str = "paper_text"
    table1_workload: str = "OPT-125M training, paper Table 1"


@table_check(SCENARIOS.table, additional_deps=[dg.AssetKey(["core", "frames"]), dg.AssetKey(["core", "workload_kinds"])],
             description="Every scenario's terms follow its accounting frame (its row of core.frames) and its workload "
                         "(its row of core.workload_kinds; sql/checks/frame_consistency.sql).")
def frames_consistent(warehouse: Reader) -> dg.AssetCheckResult:
    """One problem per scenario whose terms break its frame's or its workload's rules."""
    broken = warehouse.read(sql_text("checks/frame_consistency.sql"))
    lines = [f"{s}: {p}" for s, _, p in broken.iter_rows()]
    return dg.AssetCheckResult(passed=broken.height == 0, metadata={"problems": "; ".join(lines) or "none"})


@table_check("core.scenario_devices", description="A mixed fleet's shares (<class>_fleet_share) sum to 1 (sql/checks/fleet_shares.sql).")
def fleet_shares_sum_to_one(warehouse: Reader) -> dg.AssetCheckResult:
    """One problem per scenario whose fleet shares do not sum to 1."""
    broken = warehouse.read(sql_text("checks/fleet_shares.sql"))
    lines = [f"{s}: {p}" for s, _, p in broken.iter_rows()]
    return dg.AssetCheckResult(passed=broken.height == 0, metadata={"problems": "; ".join(lines) or "none"})


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


@SCENARIOS.asset(group="scenarios", check_specs=[frames_consistent.spec])
def scenarios(warehouse: Warehouse) -> dg.MaterializeResult:
    """One row per scenario with one column per model parameter (pivot of core.scenario_parameters).

    Grain: scenario. A parameter the scenario does not set is null. Every mart joins this
    table, so one formula serves every scenario at once.
    """
    con = warehouse.connection()
    con.execute("set variable scenario_scope = $scope::varchar[]", {"scope": list(warehouse.scope)})  # a what-if's, or every one
    try:
        return SCENARIOS.build(con)
    finally:
        con.execute("reset variable scenario_scope")


@dg.asset(key=["core", "scenario_devices"], group_name="scenarios", kinds={"duckdb", "polars"},
          deps=[["core", "scenarios"], ["core", "scenario_parameters"]], metadata=column_metadata(ScenarioDevices),
          check_specs=[fleet_shares_sum_to_one.spec])
def scenario_devices_table(warehouse: Warehouse) -> dg.MaterializeResult:
    """The edge devices as rows: one per scenario and edge device class.

    Grain: scenario x edge device class. A class is any ``<class>`` a scenario gives a
    ``<class>_train_power_w`` row, so a third class is a few parameter rows, not code; its
    other ``<class>_<field>`` rows fill the columns (null where unset) and ``device_ids`` names
    the devices those rows were read from. The model reads the same rows for every parameter set.
    """
    con = warehouse.connection()
    return write_table(con, "core.scenario_devices", scenario_devices(con), ScenarioDevices)


@dg.asset(key=["core", "model_evaluation"], group_name="scenarios", kinds={"duckdb", "sql"},
          deps=[table.split(".") for table in MODEL_READS],
          metadata=column_metadata(ModelEvaluation),
          check_specs=staging_checks("core.model_evaluation", ModelEvaluation, joins_sources=False))
def model_evaluation(warehouse: Warehouse) -> dg.MaterializeResult:
    """The model's one formula (sql/model/evaluate.sql) evaluated once over core.scenarios.

    Grain: scenario x edge device class x basis x communication pattern x method row: every basis,
    every pattern, and the method rows the marts read (the frame's headline row everywhere, every
    row on the scenario's own pattern, every allocation policy on the pattern that moves no bytes).
    marts.lifecycle_carbon, marts.fleet_equivalence and marts.verdict read their rows from here. The
    warehouse keeps the formula's default inputs as the views ``model_inputs`` and ``model_devices``
    (core.scenarios and core.scenario_devices as variant 'base'), so sql/model/evaluate.sql, after
    sql/model/macros.sql, returns these rows in any read-only DuckDB session on the published file.
    """
    con = warehouse.connection()
    publish_model_inputs(con)
    # each scenario's own named pattern too (a pattern not evaluated for every scenario, e.g. diloco_allreduce)
    evaluated = evaluate(con, all_bases=True, own_pattern=True, basis_filter="all", methods="all")
    return write_table(con, "core.model_evaluation", evaluated, ModelEvaluation)


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
    tolerance), differs (with the reason) or not reproducible (with what is missing). The
    device-count rows search every published H100 and device FLOPS figure and name the
    inputs that give the paper's counts.
    """
    result = PAPER_REPRODUCTION.build(warehouse.connection(), {"scenario": config.scenario, "table1_workload": config.table1_workload})
    frame = query_pl(warehouse.connection(), "select claim_id, status, reproduced_value_text from marts.paper_reproduction")
    lines = ["| claim | status | ours |", "|---|---|---|"] + [f"| {c} | {s} | {v} |" for c, s, v in frame.iter_rows()]
    return with_metadata(result, {"verdicts": dg.MetadataValue.md("\n".join(lines))})
