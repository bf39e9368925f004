"""Power logs as partitions: each registered log's samples one Parquet file of the lake.

:func:`ingest_logs` stages each log (:func:`pipelines.warehouse.power_logs.stage_log`) and writes
its file, opening no connection to the warehouse (so steps run side by side); :func:`commit_logs`
lists the new files in the catalog with each log's run (meta.power_log_runs) and rejects, in one
transaction; :func:`logs_to_repair` finds the logs whose committed file is missing or changed.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import duckdb

from pipelines.ingest import digests
from pipelines.ingest.manifest import SourceEntry, entries_for
from pipelines.ingest.options import run_options
from pipelines.ingest.quarantine import Reject
from pipelines.ingest.staging import Parsed
from pipelines.ingest.streaming import memory_limit_for, threads_for
from pipelines.warehouse import lake, verify
from pipelines.warehouse.duckdb_limits import cpu_budget, pin
from pipelines.warehouse.power_logs import (
    SAMPLES_TABLE,
    STREAM_ABOVE,
    STREAMED_KINDS,
    log_summary,
    stage_log,
)
from pipelines.warehouse.queries import query_pl, table_exists
from pipelines.warehouse.tables import ensure_table, start_staged
from schemas.lake import PowerLogRuns
from schemas.meta import conform, empty_frame
from schemas.power_samples import PowerSamples
from schemas.quarantine import RejectedRows

#: Logs ingested by one step; a run over more logs fans out into steps of this many, which the
#: multiprocess (or Kubernetes) executor runs side by side.
CHUNK_LOGS = 250
#: Files read back at a time by :func:`committed_file_problems`.
CHECK_FILES = 64
#: Each ingested log's integrated run, replaced when the log is ingested again.
LOG_RUNS_TABLE = "meta.power_log_runs"
#: The lake's partition column for power logs.
PARTITION_COLUMN = "source_id"


@dataclass(frozen=True)
class IngestedLog:
    """What one log's ingest wrote: its samples' Parquet file, and scratch Parquet of its run and
    its samples' rejects (a run's own rejects are staging.benchmark_runs', :func:`ingested_log_runs`)."""

    key: str
    samples: lake.LakeFile
    runs_file: str
    rejects_file: str | None
    rejected: int
    line: str


def ingest_logs(entries: Sequence[SourceEntry], *, published: Path, run_id: str, scratch: Path,
                log: Callable[[str], Any] = lambda _: None) -> list[IngestedLog]:
    """Stage each log and write its samples as a new Parquet file of its lake partition; its run
    and rejects go to scratch Parquet for the commit. A log larger than one block
    (:data:`STREAM_ABOVE`) is streamed through a scratch DuckDB file of the step (bounded
    memory) and copied out; a smaller one is read whole, which the block budget allows, and
    written straight from its frame. Nothing is visible to readers until :func:`commit_logs`
    and the run's publish."""
    root = lake.lake_root(published)
    scratch.mkdir(parents=True, exist_ok=True)
    out: list[IngestedLog] = []
    db = scratch / f"stage-{os.getpid()}-{time.time_ns()}.duckdb"
    con: duckdb.DuckDBPyConnection | None = None
    try:
        for i, entry in enumerate(entries, start=1):
            started = time.perf_counter()
            target = lake.new_file(root, SAMPLES_TABLE, PARTITION_COLUMN, entry.id, run_id)
            streamed = entry.kind in STREAMED_KINDS and entry.file.stat().st_size > STREAM_ABOVE
            if streamed:
                if con is None:
                    con = pin(duckdb.connect(str(db)))
                    con.execute("set TimeZone = 'UTC'")
                # the stream and its copy to Parquet under the streamed ingest's limit (at DuckDB's
                # default a copy reads the whole staged table into the buffer pool)
                size = entry.file.stat().st_size
                pin(con, memory_limit=memory_limit_for(size), threads=threads_for(size, cpu_budget()))
                start_staged(con, SAMPLES_TABLE, PowerSamples)
                # the staged rows are written once, straight from the stream's scratch table to the file
                staged, runs = stage_log(entry, run_id=run_id, con=con, parquet=target)
                written = lake.LakeFile(SAMPLES_TABLE, PARTITION_COLUMN, entry.id, target.relative_to(root).as_posix(),
                                        staged.in_table, target.stat().st_size, run_id)
            else:
                staged, runs = stage_log(entry, run_id=run_id)
                staged.frame.write_parquet(target, compression="zstd")
                written = lake.LakeFile(SAMPLES_TABLE, PARTITION_COLUMN, entry.id, target.relative_to(root).as_posix(),
                                        staged.frame.height, target.stat().st_size, run_id)
            runs_file = scratch / f"{entry.id}.runs.parquet"
            conform(PowerLogRuns, runs.frame).write_parquet(runs_file)
            rejects_file = None
            if staged.rejects.height:
                rejects_file = scratch / f"{entry.id}.rejects.parquet"
                staged.rejects.write_parquet(rejects_file)
            line = log_summary(entry, staged, runs.frame, streamed=streamed)
            out.append(IngestedLog(entry.id, written, str(runs_file), None if rejects_file is None else str(rejects_file),
                                   staged.rejects.height, line))
            log(f"[{i}/{len(entries)}] {line}; {time.perf_counter() - started:.2f}s")
    finally:
        if con is not None:
            con.close()
        for leftover in (db, Path(f"{db}.wal")):
            leftover.unlink(missing_ok=True)
        digests.flush()
    return out


def commit_logs(con: duckdb.DuckDBPyConnection, ingested: Sequence[IngestedLog], *, published: Path, registered: Sequence[str]) -> list[str]:
    """In one transaction: the new files become their partitions' current files (the previous
    ones superseded), partitions of logs no longer ``registered`` are retired, and the logs'
    runs (meta.power_log_runs) and quarantine rows replaced; then the view is refreshed, once
    every file it would name is there with its recorded size (LakeFileError otherwise, naming
    the file and its catalog row). Returns the retired keys."""
    keys = [item.key for item in ingested]
    known = set(registered)
    retired = [key for key in lake.current_keys(con, SAMPLES_TABLE) if key not in known]
    touched = sorted({*keys, *retired})
    runs_files = [item.runs_file for item in ingested]
    reject_files = [item.rejects_file for item in ingested if item.rejects_file]
    ensure_table(con, LOG_RUNS_TABLE, PowerLogRuns)
    ensure_table(con, "quarantine.rejected_rows", RejectedRows)
    con.execute("begin transaction")
    try:
        lake.commit(con, SAMPLES_TABLE, [item.samples for item in ingested], replaces=keys, retire=retired)
        con.execute(f"delete from {LOG_RUNS_TABLE} where list_contains($keys, source_id)", {"keys": touched})  # noqa: S608 - constant
        if runs_files:
            con.execute(f"insert into {LOG_RUNS_TABLE} by name select * from read_parquet($files)", {"files": runs_files})  # noqa: S608
        con.execute(
            "delete from quarantine.rejected_rows where table_name = $table and list_contains($keys, source_id)",
            {"table": SAMPLES_TABLE, "keys": touched},
        )
        if reject_files:
            con.execute("insert into quarantine.rejected_rows by name select * from read_parquet($files)", {"files": reject_files})
        con.execute("commit")
    except BaseException:
        con.execute("rollback")
        raise
    root = lake.lake_root(published)
    broken = verify.broken_files(con, root, table=SAMPLES_TABLE)
    if broken:  # a view over a missing file would fail every reader
        raise verify.refuse(published, broken)
    lake.refresh_view(con, SAMPLES_TABLE, PowerSamples, root)
    return retired


def ingested_log_runs(con: duckdb.DuckDBPyConnection, sampled: Sequence[SourceEntry]) -> list[tuple[SourceEntry, Parsed]]:
    """The runs of every registered log whose partition is in the lake (meta.power_log_runs),
    with a ``no_samples`` reject for an ingested log that had nothing to integrate."""
    ingested = set(lake.current_keys(con, SAMPLES_TABLE))
    rows = (query_pl(con, f"select * from {LOG_RUNS_TABLE}") if table_exists(con, LOG_RUNS_TABLE)  # noqa: S608 - constant
            else empty_frame(PowerLogRuns))
    by_source = {key: frame for (key,), frame in rows.partition_by("source_id", as_dict=True).items()} if rows.height else {}
    none = empty_frame(PowerLogRuns)
    out = []
    for entry in sampled:
        if entry.id not in ingested:
            continue
        runs = by_source.get(entry.id)
        runs = none if runs is None else runs
        rejects = [] if runs.height else [Reject(
            None, None, "no_samples", None,
            f"no valid power samples in {entry.path} (counted channels): run {run_options(entry.file, entry.options).run_id} cannot be integrated",
        )]
        out.append((entry, Parsed(frame=runs, rejects=rejects)))
    return out


def committed_file_problems(con: duckdb.DuckDBPyConnection, published: Path, run_id: str) -> tuple[list[tuple[str, int]], list[str]]:
    """The files run ``run_id`` committed (file, catalog row count), and each problem found in
    them from their Parquet footers alone: columns and types other than the pandera model's, in
    order, or a row count other than the catalog's. Reads no rows, so its cost grows with the
    files a run writes, not with the lake."""
    root = lake.lake_root(published)
    listed = con.execute(
        f"select file, row_count from {lake.CATALOG} where table_name = $t and run_id = $run and superseded_at is null order by file",  # noqa: S608
        {"t": SAMPLES_TABLE, "run": run_id}).fetchall()
    expected = lake.model_columns(con, PowerSamples)
    problems: list[str] = []
    for start in range(0, len(listed), CHECK_FILES):
        block = listed[start:start + CHECK_FILES]
        paths = [str(root / file) for file, _ in block]
        for path in paths:
            found = [tuple(r) for r in con.execute(
                "select column_name, column_type from (describe select * from read_parquet($f, hive_partitioning = false))", {"f": path}).fetchall()]
            if found != expected:
                problems.append(f"{path}: columns {found} are not the model's {expected}")
        rows = dict(con.execute("select file_name, num_rows from parquet_file_metadata($files)", {"files": paths}).fetchall())
        problems += [f"{root / file}: {rows.get(str(root / file))} rows, the catalog says {n}" for file, n in block
                     if rows.get(str(root / file)) != n]
    return listed, problems


def logs_to_repair(con: duckdb.DuckDBPyConnection, published: Path, *, done: set[str]) -> tuple[list[SourceEntry], list[str]]:
    """The registered logs whose current file a refused publish put on the repair list, and that
    is still missing or of another size (those not in ``done``), to ingest again; and a line per
    broken file saying what becomes of it (a log no longer registered is retired by the commit)."""
    due = {item["file"] for item in verify.due_repairs(published, SAMPLES_TABLE)}
    if not due:
        return [], []
    root = lake.lake_root(published)
    broken = [b for b in verify.broken_files(con, root, table=SAMPLES_TABLE) if b.file in due and b.partition_key not in done]
    by_id = {entry.id: entry for entry in entries_for(SAMPLES_TABLE)}
    lines = [f"ingesting log {item.partition_key} again: {item.line(root)}" if item.partition_key in by_id
             else f"retiring a log no longer registered: {item.line(root)}" for item in broken]
    return [by_id[item.partition_key] for item in broken if item.partition_key in by_id], lines


def commit_table(ingested: Sequence[IngestedLog], shown: int = 50) -> str:
    """A markdown table of the logs a commit wrote: samples, rejects and file (the first ``shown``)."""
    lines = ["| log | samples | rejected | file |", "|---|---|---|---|"]
    lines += [f"| {item.key} | {item.samples.row_count:,} | {item.rejected:,} | {item.samples.file} |" for item in ingested[:shown]]
    if len(ingested) > shown:
        lines.append(f"| ... {len(ingested) - shown:,} more | | | |")
    return "\n".join(lines)


def current_totals(con: duckdb.DuckDBPyConnection) -> tuple[int, int]:
    """(samples, files) of the samples' current lake files."""
    total = con.execute(f"select coalesce(sum(row_count), 0), count(*) from {lake.CATALOG} "  # noqa: S608 - constant
                        "where table_name = $t and superseded_at is null", {"t": SAMPLES_TABLE}).fetchall()[0]
    return int(total[0]), int(total[1])
