"""Device benchmark power logs -> staging.power_samples, staging.benchmark_runs, staging.benchmark_series.

The assets over :mod:`pipelines.warehouse.power_logs`, which stages, integrates and commits the
logs. ``staging.power_samples`` is partitioned: each registered log is a dynamic partition
(:mod:`pipelines.defs.partitions`) whose samples are one Parquet file of the lake, read through
a view. The asset is a graph: **plan** splits the run's logs into chunks, **ingest** (mapped
over them, side by side on a multiprocess or Kubernetes executor) stages each log and writes its
file, opening no connection to the warehouse, and **commit** lists the new files in the catalog
with each log's run (meta.power_log_runs) and rejects, in one transaction. ``power_runs`` then
validates every run together (the logs' and the per-run files') and summarises the series.
"""

from collections.abc import Iterator
from typing import Any

import dagster as dg
import pandera.polars as pa

from pipelines.defs.partitions import POWER_LOGS, registered_logs
from pipelines.ingest.manifest import entries_for
from pipelines.lib.checks import source_ids_description, source_ids_result, staging_checks
from pipelines.lib.keys import SOURCES_KEY, key_of
from pipelines.lib.metadata import column_metadata
from pipelines.lib.progress import BatchedLog
from pipelines.lib.resources import Warehouse
from pipelines.lib.staging import result_metadata, staged_result
from pipelines.warehouse import lake, verify
from pipelines.warehouse.power_log_lake import (
    CHUNK_LOGS,
    IngestedLog,
    commit_logs,
    commit_table,
    committed_file_problems,
    current_totals,
    ingest_logs,
    ingested_log_runs,
    logs_to_repair,
)
from pipelines.warehouse.power_logs import (
    RUNS_TABLE,
    SAMPLES_TABLE,
    SERIES_TABLE,
    check_declared_run_ids,
    series_markdown,
    stage_runs,
)
from pipelines.warehouse.tables import write_staged
from schemas.benchmark_runs import BenchmarkRuns
from schemas.benchmark_series import BenchmarkSeries
from schemas.power_samples import PowerSamples

GROUP = "power_logs"


def _spec(table: str, model: type[pa.DataFrameModel], description: str, *upstream: str) -> dg.AssetSpec:
    """The spec of one table the asset writes; it depends on staging.sources and the ``upstream`` tables."""
    return dg.AssetSpec(key=key_of(table), description=description, group_name=GROUP, kinds={"duckdb", "polars"},
                        deps=[SOURCES_KEY, *(key_of(t) for t in upstream)], metadata=column_metadata(model))


class PowerLogsConfig(dg.Config):
    """How a run over many logs fans out: ``chunk_logs`` logs per ingest step."""

    chunk_logs: int = CHUNK_LOGS


@dg.op(ins={"start_after": dg.In(dg.Nothing)}, out=dg.DynamicOut(list),
       description="Split the run's power-log partitions into ingest steps of chunk_logs logs.")
def plan_power_logs(context: dg.OpExecutionContext, config: PowerLogsConfig) -> Iterator[dg.DynamicOutput[list[str]]]:
    """The run's partition keys, in steps of ``chunk_logs``; every registered log's run id is
    checked to be unique first (two logs declaring one run id would merge)."""
    check_declared_run_ids(entries_for(SAMPLES_TABLE))
    keys = list(context.partition_keys)
    size = max(1, config.chunk_logs)
    context.log.info(f"{len(keys):,} power log(s) in {max(1, -(-len(keys) // size))} ingest step(s) of up to {size}")
    for start in range(0, len(keys), size):
        yield dg.DynamicOutput(keys[start:start + size], mapping_key=f"logs_{start // size:05d}")


@dg.op(description="Ingest a chunk of power logs: each log's samples to a new Parquet file of its partition.")
def ingest_power_logs(context: dg.OpExecutionContext, warehouse: Warehouse, keys: list[str]) -> list[IngestedLog]:
    """Parse, check and integrate each log of ``keys`` (nvidia-smi logs streamed); write its
    samples as a new Parquet file of its lake partition. Opens no connection to the warehouse,
    so steps run side by side on a multiprocess executor."""
    by_id = {entry.id: entry for entry in entries_for(SAMPLES_TABLE)}
    gone = [key for key in keys if key not in by_id]
    if gone:
        context.log.warning(f"partition(s) of logs no longer registered, not ingested (their files are retired): {', '.join(gone[:20])}")
    entries = [by_id[key] for key in keys if key in by_id]
    with BatchedLog(context.log.info) as log:
        return ingest_logs(entries, published=warehouse.published, run_id=context.run_id, scratch=warehouse.scratch(context.run_id), log=log)


def repair_logs(context: dg.OpExecutionContext, warehouse: Warehouse, done: set[str]) -> list[IngestedLog]:
    """The registered logs whose current file a refused publish put on the repair list, and
    that is still missing or of another size, ingested again (those not in ``done``); a log no
    longer registered is retired by the commit instead (:func:`pipelines.warehouse.power_log_lake.logs_to_repair`)."""
    again, lines = logs_to_repair(warehouse.connection(), warehouse.published, done=done)
    for line in lines:
        context.log.warning(line)
    if not again:
        return []
    with BatchedLog(context.log.info) as log:
        return ingest_logs(again, published=warehouse.published, run_id=context.run_id, scratch=warehouse.scratch(context.run_id), log=log)


@dg.op(out=dg.Out(dg.Nothing), description="Commit the run's power-log files to the warehouse's lake catalog.")
def commit_power_logs(context: dg.OpExecutionContext, warehouse: Warehouse, chunks: list[list[IngestedLog]]) -> None:
    """Make the written files their partitions' current files in the run's working copy (one
    transaction), with the logs' runs and rejects; the samples view lists the current files."""
    ingested = [item for chunk in chunks for item in chunk]
    ingested += repair_logs(context, warehouse, done={item.key for item in ingested})
    retired = commit_logs(warehouse.connection(), ingested, published=warehouse.published, registered=registered_logs())
    samples, files = current_totals(warehouse.connection())
    context.add_output_metadata({
        "dagster/row_count": samples,
        "samples_written": sum(item.samples.row_count for item in ingested),
        "logs_written": len(ingested),
        "partitions_current": files,
        "partitions_retired": len(retired),
        "rejected_samples": sum(item.rejected for item in ingested),
        "logs": dg.MetadataValue.md(commit_table(ingested)),
    })


@dg.graph_asset(
    key=key_of(SAMPLES_TABLE),
    description=(
        "Power readings of every benchmark run's log (nvidia-smi, powermetrics, Monsoon, Android sysfs, RAPL), one "
        "dynamic partition per registered log, stored as Parquet under warehouse/lake/power_samples/source_id=<log>/ "
        "and read through the view staging.power_samples. Grain: one reading of one channel of one run at one instant "
        "(UTC); counts_to_total marks the channels whose sum is the run's power."
    ),
    group_name=GROUP,
    kinds={"duckdb", "parquet", "polars"},
    partitions_def=POWER_LOGS,
    backfill_policy=dg.BackfillPolicy.single_run(),
    ins={"sources": dg.AssetIn(key=SOURCES_KEY, dagster_type=dg.Nothing)},
    metadata=column_metadata(PowerSamples),
)
def power_samples(sources: Any) -> Any:
    """Plan the run's logs into steps, ingest each step's logs to Parquet, commit the files."""
    return commit_power_logs(plan_power_logs(start_after=sources).map(ingest_power_logs).collect())


def power_runs_specs() -> list[dg.AssetSpec]:
    """The specs of the two tables ``power_runs`` writes (made when asked, so that the defs folder's
    loading finds only the asset that holds them)."""
    return [
        _spec(RUNS_TABLE, BenchmarkRuns, (
            "One row per training run: device, model, workload, duration, energy (J) and mean power. Sampled logs are "
            "integrated (trapezoid over the counted channels; RAPL counters summed), minus an optional idle baseline; "
            "CodeCarbon rows carry their reported energy and Zeus rows mean power x epoch time. Grain: one run."
        ), SAMPLES_TABLE),
        _spec(SERIES_TABLE, BenchmarkSeries, (
            "Repeated runs of one device and workload (series_id): number of runs, mean energy with its Student-t "
            "95% confidence interval, mean duration and power. Grain: one series. source_id is the first run's."
        ), RUNS_TABLE),
    ]


@dg.multi_asset(specs=power_runs_specs(), name="power_runs",
                 check_specs=[*staging_checks(RUNS_TABLE, BenchmarkRuns), *staging_checks(SERIES_TABLE, BenchmarkSeries)])
def power_runs(context: dg.AssetExecutionContext, warehouse: Warehouse) -> Iterator[dg.MaterializeResult]:
    """Benchmark runs and repeated-run series, from every ingested log's run and the per-run files.

    The sampled logs' runs were integrated when their partitions were ingested
    (meta.power_log_runs); the per-run files (CodeCarbon, Zeus) are parsed here. Every run is
    validated together (run ids unique across files), then summarised into series; both tables
    and their quarantine rows are written in one transaction, then checked.
    """
    con = warehouse.connection()
    sampled = entries_for(SAMPLES_TABLE)
    log_runs = ingested_log_runs(con, sampled)
    with BatchedLog(context.log.info) as log:
        log(f"{len(log_runs):,} ingested log(s) of {len(sampled):,} registered")
        runs, series = stage_runs(log_runs, entries_for(RUNS_TABLE), run_id=context.run_id, log=log)
    write_staged(con, [runs, series])
    yield staged_result(warehouse, runs, result_metadata(runs), keyed=True)
    series_meta = result_metadata(series)
    series_meta["series"] = dg.MetadataValue.md(series_markdown(series.frame))
    yield staged_result(warehouse, series, series_meta, keyed=True)


@dg.asset_check(asset=key_of(SAMPLES_TABLE), name="pandera_schema", blocking=True,
                description="The power-log files this run wrote have PowerSamples' columns and types, and the rows the catalog says.")
def power_samples_pandera_schema(context: dg.AssetCheckExecutionContext, warehouse: Warehouse) -> dg.AssetCheckResult:
    """The files this run committed, from their Parquet footers: the pandera model's columns
    and types, in order, and the row counts of the catalog. Every row was validated against the
    model as its log was staged (split_valid, or the streamed block checks); this check reads
    no rows, so its cost grows with the files a run writes, not with the lake."""
    listed, problems = committed_file_problems(warehouse.connection(), warehouse.published, context.run.run_id)
    return dg.AssetCheckResult(
        passed=not problems,
        metadata={"files_checked": len(listed), "rows_checked": sum(n for _, n in listed),
                  "problems": dg.MetadataValue.md("\n".join(f"- {p}" for p in problems[:20]) or "none")},
    )


@dg.asset_check(asset=key_of(SAMPLES_TABLE), name="lake_files", blocking=True,
                description="Every file the lake's catalog lists as current exists with its recorded size, and the files "
                            "this run wrote read the rows the catalog says; a broken file blocks the publish, naming it.")
def power_samples_lake_files(context: dg.AssetCheckExecutionContext, warehouse: Warehouse) -> dg.AssetCheckResult:
    """Before the run publishes the view it refreshed: every current file of the lake checked
    cheaply (a stat), the samples view bound and the files this run wrote counted once. A broken file raises
    :class:`pipelines.errors.LakeFileError` naming the file and its catalog row, and goes on the
    repair list for the next run (:mod:`pipelines.warehouse.verify`)."""
    con = warehouse.connection()
    root = lake.lake_root(warehouse.published)
    broken = verify.problems(con, root, context.run.run_id, [SAMPLES_TABLE])
    if broken:
        raise verify.refuse(warehouse.published, broken)
    files, rows = verify.totals(con, SAMPLES_TABLE)
    return dg.AssetCheckResult(passed=True, metadata={"files_checked": int(files), "rows_in_view": int(rows)})


@dg.asset_check(asset=key_of(SAMPLES_TABLE), name="source_ids_join", blocking=True, additional_deps=[SOURCES_KEY],
                description=source_ids_description(SAMPLES_TABLE))
def power_samples_source_ids_join(warehouse: Warehouse) -> dg.AssetCheckResult:
    """Every current partition's key (the source_id of its rows) joins staging.sources, read from
    the lake's catalog, so the check reads no history."""
    return source_ids_result(SAMPLES_TABLE, warehouse, lake=True)


#: The samples' checks run as steps of their own, after the graph's commit (a graph-backed
#: asset's ops cannot report its checks); the other tables' checks run in their assets' steps.
power_samples_checks = [power_samples_pandera_schema, power_samples_lake_files, power_samples_source_ids_join]
