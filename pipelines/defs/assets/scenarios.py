"""Scenarios as data -> core.scenario_parameters."""

import datetime as dt

import dagster as dg
import polars as pl

from pipelines.defs.checks import staging_checks, summary_metadata
from pipelines.defs.metadata import column_metadata
from pipelines.defs.progress import BatchedLog
from pipelines.defs.resources import Warehouse
from pipelines.defs.staging import SOURCES_KEY
from pipelines.ingest.manifest import entries_for
from pipelines.ingest.parsers.scenario import parse_scenario
from pipelines.ingest.quarantine import rejects_frame, split_valid
from pipelines.ingest.scenarios import out_of_bounds, resolve
from pipelines.ingest.staging import Staged, parse_entry
from pipelines.warehouse.tables import preview_md, write_staged
from schemas.meta import conform, empty_frame
from schemas.quarantine import RejectedRows
from schemas.scenario_parameters import ScenarioParameters

TABLE = "core.scenario_parameters"
FACTOR_TABLES = [
    ["staging", "device_specs"],
    ["staging", "device_pcf"],
    ["staging", "network_energy"],
    ["staging", "grid_intensity"],
    ["staging", "benchmark_series"],
    ["staging", "model_configs"],
    ["marts", "charging_windows"],
]


@dg.asset(
    key=["core", "scenario_parameters"],
    group_name="scenarios",
    kinds={"duckdb", "polars"},
    deps=[SOURCES_KEY, *FACTOR_TABLES],
    metadata=column_metadata(ScenarioParameters),
)
def scenario_parameters(context: dg.AssetExecutionContext, warehouse: Warehouse) -> dg.MaterializeResult:
    """Every free parameter of the model, per scenario, with its range, status and source.

    Grain: scenario x parameter. Scenarios are files under ``sources/scenarios/`` registered
    in ``sources/manifest/scenarios.toml``; a scenario may extend another. A parameter whose
    ``factor_ref`` names a staged row (a device spec, an embodied factor set, a network
    value, a benchmark series, a curated grid factor) takes that row's value and source_id, so every number traces
    to a shipped file. Rows that cannot be resolved are quarantined with the reason.
    """
    con = warehouse.connection()
    parsed = {}
    reject_frames = []
    run_at = dt.datetime.now(dt.UTC)
    with BatchedLog(context.log.info) as log:
        for entry in entries_for(TABLE):
            result = parse_entry(entry, parse_scenario)
            scenario = str(entry.options.get("scenario_id", entry.id))
            parsed[scenario] = (entry, result.frame)
            reject_frames.append(rejects_frame(result.rejects, table=TABLE, source_id=entry.id, source_file=entry.path,
                                               run_id=context.run_id, at=run_at))
            log(f"scenario {scenario}: {result.frame.height} rows in {entry.path}")
    frame, rejects = resolve(con, parsed)
    for entry, reject in rejects:
        reject_frames.append(rejects_frame([reject], table=TABLE, source_id=entry.id, source_file=entry.path, run_id=context.run_id, at=run_at))
    frame = conform(ScenarioParameters, frame) if frame.height else empty_frame(ScenarioParameters)
    valid, row_rejects = split_valid(ScenarioParameters, frame, file="sources/scenarios")
    if row_rejects:
        by_row = frame.select("source_id", "source_file", "source_row")
        for reject in row_rejects:
            src = by_row.filter(pl.col("source_row") == reject.source_row).row(0)
            reject_frames.append(rejects_frame([reject], table=TABLE, source_id=src[0], source_file=src[1], run_id=context.run_id, at=run_at))
    valid = valid.sort("scenario_id", "parameter")
    staged = Staged(
        table=TABLE,
        frame=valid,
        rejects=pl.concat(reject_frames) if reject_frames else empty_frame(RejectedRows),
        per_source=[],
    )
    write_staged(con, [staged])
    counts = valid.group_by("scenario_id").len().sort("scenario_id")
    return dg.MaterializeResult(
        metadata={
            "dagster/row_count": valid.height,
            "rejected_checks": staged.rejects.height,
            "scenarios": dg.MetadataValue.md(preview_md(counts, rows=50)),
            "preview": dg.MetadataValue.md(preview_md(valid.select("scenario_id", "parameter", "value", "unit", "status"), rows=12)),
        }
    )


scenario_parameters_checks = staging_checks(TABLE, ScenarioParameters)


@dg.asset_check(asset=scenario_parameters, blocking=True,
                description="Every value, and both ends of every range, lies within its parameter's bounds "
                            "(schemas/parameter_bounds.py), before core.scenarios and the model read them.")
def parameters_in_bounds(warehouse: Warehouse) -> dg.AssetCheckResult:
    """One line per value out of bounds: the scenario file and line, the parameter and the allowed range."""
    problems = out_of_bounds(warehouse.read("select * from query_table($t)", {"t": TABLE}))
    return dg.AssetCheckResult(passed=not problems, metadata={"out_of_bounds": len(problems), **summary_metadata(problems)})
