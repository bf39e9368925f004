"""Scenarios as data: core.scenario_parameters, its pivot core.scenarios and the edge devices as rows, core.scenario_devices;
and every parameter set the model evaluates in the warehouse, core.variants (one file per family) and its pivot
core.variant_inputs."""

import dagster as dg

from pipelines.ingest.manifest import entries_for
from pipelines.ingest.scenarios import TABLE, out_of_bounds, stage_scenarios
from pipelines.lib.checks import Reader, sql_problems, staging_checks, summary_metadata, table_check
from pipelines.lib.keys import SOURCES_KEY, key_of
from pipelines.lib.metadata import column_metadata
from pipelines.lib.progress import BatchedLog
from pipelines.lib.resources import Warehouse
from pipelines.lib.staging import staged_result
from pipelines.lib.tables import sql_table, write_table
from pipelines.model.formula import scenario_devices
from pipelines.model.variants import family_files, variant_rows
from pipelines.paths import sql_text
from pipelines.warehouse.lineage import tables_read_by
from pipelines.warehouse.tables import preview_md, write_staged
from schemas.model_evaluation import Variants
from schemas.scenario_parameters import ScenarioDevices, ScenarioParameters

SCENARIOS = sql_table("core.scenarios")
VARIANT_INPUTS = sql_table("core.variant_inputs")

FACTOR_TABLES = [
    ["staging", "device_specs"],
    ["staging", "device_pcf"],
    ["staging", "network_energy"],
    ["staging", "grid_intensity"],
    ["staging", "benchmark_series"],
    ["staging", "model_configs"],
    ["staging", "training_throughput"],
    ["marts", "charging_windows"],
]



class ScenarioScope(dg.Config):
    """Which scenarios a run computes: every registered one (empty, the default), or a what-if over
    a few (``edge-carbon run --scenario ID``): every scenario's parameters are staged (their table is
    the same either way), core.scenarios keeps these alone, so everything downstream computes their
    rows only, and every other scenario keeps its published rows."""

    scenarios: list[str] = []


@table_check(TABLE, description="Every value, and both ends of every range, lies within its parameter's bounds "
                                "(schemas/parameter_bounds.py), before core.scenarios and the model read them.")
def parameters_in_bounds(warehouse: Reader) -> dg.AssetCheckResult:
    """One line per value out of bounds: the scenario file and line, the parameter and the allowed range."""
    problems = out_of_bounds(warehouse.read("select * from query_table($t)", {"t": TABLE}))
    return dg.AssetCheckResult(passed=not problems, metadata={"out_of_bounds": len(problems), **summary_metadata(problems)})


#: The parameter that names the claim a scenario tests, a claim of this table.
CLAIM_PARAMETER, CLAIMS_TABLE = "claim_id", "staging.claims"


@table_check(TABLE, additional_deps=[key_of(CLAIMS_TABLE)],
             description=f"Every scenario names the claim it tests ({CLAIM_PARAMETER}), a claim of {CLAIMS_TABLE} "
                         "(sources/curated/claims.csv; sql/checks/scenario_claims.sql): marts.verdict judges it against that "
                         "claim's row of core.claim.")
def claims_known(warehouse: Reader) -> dg.AssetCheckResult:
    """One line per scenario that names no claim, or one the registry does not have: the file and line, and the scenario."""
    problems = []
    for scenario, claim, defined_in in warehouse.read(sql_text("checks/scenario_claims.sql"), {"parameter": CLAIM_PARAMETER}).iter_rows():
        if claim is None:
            problems.append(f"scenario {scenario} names no claim: give it a {CLAIM_PARAMETER} row, the id of a claim of {CLAIMS_TABLE}")
            continue
        path, _, line = str(defined_in).rpartition(":")
        problems.append(f"sources/{path}, line {line}: {CLAIM_PARAMETER} = {claim!r} is no claim of {CLAIMS_TABLE} "
                        f"(sources/curated/claims.csv; edge-carbon claim new adds one) (scenario {scenario})")
    return dg.AssetCheckResult(passed=not problems, metadata={"unknown_claims": len(problems), **summary_metadata(problems)})


@dg.asset(
    key=["core", "scenario_parameters"],
    group_name="scenarios",
    kinds={"duckdb", "polars"},
    deps=[SOURCES_KEY, *FACTOR_TABLES, key_of(CLAIMS_TABLE)],  # the registry its claims_known check reads
    metadata=column_metadata(ScenarioParameters),
    check_specs=[*staging_checks(TABLE, ScenarioParameters), parameters_in_bounds.spec, claims_known.spec],
)
def scenario_parameters(context: dg.AssetExecutionContext, config: ScenarioScope, warehouse: Warehouse) -> dg.MaterializeResult:
    """Every free parameter of the model, per scenario, with its range, status and source.

    Grain: scenario x parameter. Scenarios are files under ``sources/scenarios/`` registered
    in ``sources/manifest/scenarios.toml``; a scenario may extend another. A parameter whose
    ``factor_ref`` names a staged row (a device spec, an embodied factor set, a network
    value, a benchmark series, a curated grid factor) takes that row's value and source_id, so every number traces
    to a shipped file. A row that cannot be resolved (a reference that finds no row) fails the
    step, naming the scenario, the parameter and the row it looked for; unreadable rows are quarantined.
    """
    con = warehouse.connection()
    with BatchedLog(context.log.info) as log:
        staged = stage_scenarios(con, entries_for(TABLE), run_id=context.run_id, log=log)
    if config.scenarios:  # a what-if: these scenarios alone, every other one kept as published
        unknown = sorted(set(config.scenarios) - set(staged.frame.get_column("scenario_id").unique().to_list()))
        if unknown:
            raise ValueError(f"not registered scenarios: {', '.join(unknown)} (sources/manifest/scenarios.toml lists the shipped "
                             "ones, sources/manifest/local.toml yours; an abstract one is only a parent)")
        warehouse.limit_to_scenarios(config.scenarios)  # core.scenarios keeps them alone: every other scenario stays published
    valid = staged.frame
    write_staged(con, [staged])
    counts = valid.group_by("scenario_id").len().sort("scenario_id")
    return staged_result(warehouse, staged, {
        "dagster/row_count": valid.height,
        "rejected_checks": staged.rejects.height,
        "scenarios": dg.MetadataValue.md(preview_md(counts, rows=50)),
        "preview": dg.MetadataValue.md(preview_md(valid.select("scenario_id", "parameter", "value", "unit", "status"), rows=12)),
    })


@table_check(SCENARIOS.table, additional_deps=[dg.AssetKey(["core", "frames"]), dg.AssetKey(["core", "workload_kinds"])],
             description="Every scenario's terms follow its accounting frame (its row of core.frames) and its workload "
                         "(its row of core.workload_kinds; sql/checks/frame_consistency.sql).")
def frames_consistent(warehouse: Reader) -> dg.AssetCheckResult:
    """One problem per scenario whose terms break its frame's or its workload's rules."""
    return sql_problems(warehouse, "checks/frame_consistency.sql")


@table_check("core.scenario_devices", description="A mixed fleet's shares (<class>_fleet_share) sum to 1 (sql/checks/fleet_shares.sql).")
def fleet_shares_sum_to_one(warehouse: Reader) -> dg.AssetCheckResult:
    """One problem per scenario whose fleet shares do not sum to 1."""
    return sql_problems(warehouse, "checks/fleet_shares.sql")


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


@dg.asset(key=["core", "variants"], group_name="scenarios", kinds={"duckdb", "sql"},
          deps=[dg.AssetKey(t.split(".")) for t in tables_read_by(*family_files())], metadata=column_metadata(Variants),
          check_specs=staging_checks("core.variants", Variants, joins_sources=False))
def variants(warehouse: Warehouse) -> dg.MaterializeResult:
    """Every parameter set the model evaluates in the warehouse, one row per scenario and variant: each family's file
    (sql/variants/<family>.sql: 'base', each scenario as it stands; the what-ifs' model sizes, policies, ...) gives its
    variants, the rows each is evaluated on and the parameters it overrides. A family is added by a file.
    """
    con = warehouse.connection()
    return write_table(con, "core.variants", variant_rows(con), Variants)


@table_check(VARIANT_INPUTS.table, additional_deps=[dg.AssetKey(["core", "variants"])],
             description="Every parameter set of core.variants has exactly one row (sql/checks/variant_inputs.sql).")
def one_row_per_variant(warehouse: Reader) -> dg.AssetCheckResult:
    """One problem per parameter set without its row, or with more than one."""
    return sql_problems(warehouse, "checks/variant_inputs.sql", keys=2)


@VARIANT_INPUTS.asset(group="scenarios", check_specs=[one_row_per_variant.spec])
def variant_inputs(warehouse: Warehouse) -> dg.MaterializeResult:
    """One row per parameter set of core.variants, one column per model parameter: its scenario's parameters with the
    variant's overrides (core.variant_parameters) in their place, pivoted once. Grain: scenario x variant."""
    return VARIANT_INPUTS.build(warehouse.connection())
