"""Scenarios as data -> core.scenario_parameters."""

import dagster as dg

from pipelines.ingest.manifest import entries_for
from pipelines.ingest.scenarios import TABLE, out_of_bounds, stage_scenarios
from pipelines.lib.checks import Reader, staging_checks, summary_metadata, table_check
from pipelines.lib.keys import SOURCES_KEY, key_of
from pipelines.lib.metadata import column_metadata
from pipelines.lib.progress import BatchedLog
from pipelines.lib.resources import Warehouse
from pipelines.lib.staging import staged_result
from pipelines.paths import sql_text
from pipelines.warehouse.tables import preview_md, write_staged
from schemas.scenario_parameters import ScenarioParameters

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
            raise ValueError(f"not registered scenarios: {', '.join(unknown)} (sources/manifest/scenarios.toml lists them)")
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
