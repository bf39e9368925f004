"""Device benchmark power logs -> staging.power_samples, staging.benchmark_runs, staging.benchmark_series.

Every sampled log (nvidia-smi, powermetrics, Monsoon, Android sysfs, RAPL) is a run whose
samples go to ``staging.power_samples`` and whose integrated energy becomes its row of
``staging.benchmark_runs``; per-run files (CodeCarbon, Zeus) go to ``staging.benchmark_runs``
directly; repeated runs with a ``series_id`` are summarised in ``staging.benchmark_series``.

``staging.power_samples`` is partitioned: each registered log is a partition whose samples are
one Parquet file of the lake (:mod:`pipelines.warehouse.lake`), read through a view.
:func:`~pipelines.warehouse.power_log_lake.ingest_logs` stages each log and writes its file, opening no connection to the
warehouse (so steps run side by side), and :func:`~pipelines.warehouse.power_log_lake.commit_logs` lists the new files in the
catalog with each log's run (meta.power_log_runs) and rejects, in one transaction. A log larger
than one block is streamed (:func:`pipelines.ingest.streaming.stream_nvidia_smi`, bounded
memory); a smaller one is read whole. :func:`stage_runs` then validates every run together (the
logs' and the per-run files') and summarises the series. The assets over these functions, and
the Dagster partitions, are in :mod:`pipelines.defs.assets.power_logs`.

Manifest entries for these tables have ``table = "staging.power_samples"`` (sampled formats)
or ``table = "staging.benchmark_runs"`` (``codecarbon``, ``zeus_power``).
"""

import datetime as dt
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import duckdb
import polars as pl

from pipelines.errors import ManifestError, SourceParseError
from pipelines.ingest.devices import registered_devices
from pipelines.ingest.energy.runs import runs_from_energies, runs_from_samples
from pipelines.ingest.energy.series import (
    REPRODUCES,
    run_id_problem,
    series_problem,
    with_reproduces,
)
from pipelines.ingest.energy.student_t import t_quantile
from pipelines.ingest.manifest import SourceEntry, entries_for
from pipelines.ingest.options import RunOptions, run_options
from pipelines.ingest.parsers import registry
from pipelines.ingest.parsers.nvidia_smi import BLOCK_BYTES
from pipelines.ingest.quarantine import Reject, rejects_frame, split_valid
from pipelines.ingest.staging import Parsed, Parser, Staged, parse_entry, validate_parsed
from pipelines.ingest.streaming import stream_nvidia_smi
from pipelines.paths import sql_text
from pipelines.warehouse.queries import query_pl
from pipelines.warehouse.tables import append_staged, load_frame, start_staged
from schemas.benchmark_runs import BenchmarkRuns
from schemas.benchmark_series import BenchmarkSeries
from schemas.meta import conform, empty_frame
from schemas.power_samples import PowerSamples
from schemas.quarantine import RejectedRows

SAMPLES_TABLE = "staging.power_samples"
RUNS_TABLE = "staging.benchmark_runs"
SERIES_TABLE = "staging.benchmark_series"
DEVICE_SPECS_TABLE = registry.DEVICE_SPECS

SAMPLED_PARSERS: dict[str, Parser] = registry.SAMPLED_PARSERS
#: Sampled formats streamed into the warehouse (bounded memory) when staging has a connection.
STREAMED_KINDS = frozenset({"nvidia_smi"})
#: A log of a streamed format is streamed when larger than one block of the streaming parser;
#: up to that it is read whole (within the same memory budget, and without a scratch table).
STREAM_ABOVE = BLOCK_BYTES
RUN_PARSERS: dict[str, Parser] = registry.RUN_PARSERS


@dataclass
class PowerTables:
    """The three staged tables, ready to be written together."""

    samples: Staged
    runs: Staged
    series: Staged


def _with_source_id(parser: Parser, source_id: str) -> Parser:
    """The parser, told its file's source id (per-run formats build run ids from it)."""

    def parse(path: Path, options: Mapping[str, Any]) -> Parsed:
        return parser(path, {**options, "source_id": source_id})

    return parse


def _parser_for(entry: SourceEntry, parsers: Mapping[str, Parser], table: str) -> Parser:
    parser = parsers.get(entry.kind)
    if parser is None:
        raise ManifestError(entry.manifest_file, f"source {entry.id!r}: kind {entry.kind!r} has no parser for {table} (known: {sorted(parsers)})")
    return _with_source_id(parser, entry.id)


def check_declared_run_ids(entries: Sequence[SourceEntry]) -> None:
    """Two sampled logs must not declare the same run_id (their samples would merge)."""
    seen: dict[str, SourceEntry] = {}
    for entry in entries:
        run_id = run_options(entry.file, entry.options).run_id
        other = seen.get(run_id)
        if other is not None:
            raise SourceParseError(
                entry.file, None, f"run_id {run_id!r} is also declared by {other.file} (source {other.id}); run ids must be unique across files"
            )
        seen[run_id] = entry


def _check_unique_runs(runs: pl.DataFrame, entries: Mapping[str, SourceEntry]) -> None:
    """A run_id loaded from two files is an error naming both files."""
    clash = run_id_problem(runs, {source_id: str(entry.file) for source_id, entry in entries.items()})
    if clash is not None:
        _, second, message = clash
        raise SourceParseError(entries[second].file, None, message)


def _merge(table: str, model: Any, parts: Sequence[Staged]) -> Staged:
    frames = [part.frame for part in parts]
    rejects = [part.rejects for part in parts if part.rejects.height]
    return Staged(
        table=table,
        frame=pl.concat(frames, how="vertical") if frames else empty_frame(model),
        rejects=pl.concat(rejects, how="vertical") if rejects else empty_frame(RejectedRows),
        per_source=[row for part in parts for row in part.per_source],
    )


def series_from_runs(runs: pl.DataFrame, reproduces: Mapping[str, str | None] | None = None) -> pl.DataFrame:
    """staging.benchmark_series rows from valid benchmark_runs rows (sql/staging/benchmark_series.sql).

    ``reproduces`` maps a source id to the paper claim its runs reproduce (the manifest option
    ``reproduces``; :mod:`pipelines.ingest.energy.series`). The Student-t critical values for the
    degrees of freedom present are computed here and bound into the query. A series whose runs
    disagree on device, model, workload, synthetic flag or claim, and a claim reproduced by two
    series, are manifest errors.
    """
    runs = with_reproduces(runs, reproduces or {})
    problem = series_problem(runs)
    if problem is not None:
        raise ManifestError("sources/manifest", problem)
    in_series = runs.filter(pl.col("series_id").is_not_null())
    sizes = sorted({n for n in in_series.group_by("series_id").len().get_column("len").to_list() if n >= 2})
    con = duckdb.connect()
    try:
        load_frame(con, "temp.benchmark_runs", runs)
        table = con.sql(
            sql_text("staging/benchmark_series.sql"),
            params={"t_df": [n - 1 for n in sizes], "t_975": [t_quantile(n - 1) for n in sizes]},
        ).to_arrow_table()
    finally:
        con.close()
    return conform(BenchmarkSeries, pl.from_arrow(table))  # type: ignore[arg-type]


def _stage_series(runs: pl.DataFrame, reproduces: Mapping[str, str | None]) -> Staged:
    frame = series_from_runs(runs, reproduces)
    valid, rejects = split_valid(BenchmarkSeries, frame, file="staging.benchmark_runs")
    if rejects:
        first = rejects[0]
        raise SourceParseError("staging.benchmark_runs", None, f"derived series fail {first.check_name} on {first.column_name}: {first.reason}")
    per_source = [{"source_id": sid, "rows": n, "rejected": 0} for sid, n in valid.group_by("source_id").len().sort("source_id").iter_rows()]
    return Staged(table=SERIES_TABLE, frame=valid, rejects=empty_frame(RejectedRows), per_source=per_source)


def _stream_entry(entry: SourceEntry, options: RunOptions, con: duckdb.DuckDBPyConnection, run_id: str,
                  parquet: Path | None = None) -> tuple[Staged, pl.DataFrame]:
    """Stream one log into ``staging.power_samples`` (begun by ``start_staged``), or with
    ``parquet`` into that Parquet file: what ``parse_entry``, ``validate_parsed`` and
    ``runs_from_samples`` give for it, its rows in the table or the file."""
    path = entry.verified_file()
    streamed = stream_nvidia_smi(path, {**entry.options, "source_id": entry.id}, con, SAMPLES_TABLE, source_id=entry.id, source_file=entry.path,
                                 parquet=parquet)
    rejects = rejects_frame(streamed.rejects, table=SAMPLES_TABLE, source_id=entry.id, source_file=entry.path, run_id=run_id,
                            at=dt.datetime.now(dt.UTC))
    per_source = {"source_id": entry.id, "rows": streamed.rows, "rejected": len({(r.source_row, r.column_name) for r in streamed.rejects})}
    staged = Staged(table=SAMPLES_TABLE, frame=empty_frame(PowerSamples), rejects=rejects, per_source=[per_source], in_table=streamed.rows)
    runs = runs_from_energies(streamed.runs, options, log_format=entry.kind)
    return staged, runs


def stage_log(entry: SourceEntry, *, run_id: str, con: duckdb.DuckDBPyConnection | None = None,
              parquet: Path | None = None) -> tuple[Staged, Parsed]:
    """One sampled log: its staged samples and its run (a Parsed of benchmark_runs rows, with a
    ``no_samples`` reject when nothing could be integrated).

    With ``con``, the samples are appended to ``staging.power_samples`` there (begun by
    ``start_staged``; nvidia-smi logs streamed, :data:`STREAMED_KINDS`) and the staged frame is
    empty (``in_table`` is the count); without it the log is read whole into the frame. With
    ``con`` and ``parquet``, a streamed log's rows go to that Parquet file instead of the table.
    """
    options = run_options(entry.file, entry.options)
    if con is not None and entry.kind in STREAMED_KINDS:
        staged, runs = _stream_entry(entry, options, con, run_id, parquet)
    else:
        parsed = parse_entry(entry, _parser_for(entry, SAMPLED_PARSERS, SAMPLES_TABLE))
        staged = validate_parsed(SAMPLES_TABLE, PowerSamples, [(entry, parsed)], run_id=run_id)
        del parsed
        runs = runs_from_samples(staged.frame, options, log_format=entry.kind)
        if con is not None:
            append_staged(con, SAMPLES_TABLE, staged.frame)
            staged.in_table, staged.frame = staged.frame.height, staged.frame.clear()
    runs = runs.with_columns(pl.lit(entry.id).alias("source_id"), pl.lit(entry.path).alias("source_file"))
    run_rejects = []
    if runs.height == 0:
        run_rejects.append(
            Reject(None, None, "no_samples", None, f"no valid power samples in {entry.path} (counted channels): run {options.run_id} cannot be integrated")
        )
    return staged, Parsed(frame=runs, rejects=run_rejects)


def log_summary(entry: SourceEntry, staged: Staged, runs: pl.DataFrame, *, streamed: bool) -> str:
    """One progress line for a staged log (without its position or time)."""
    run_id = run_options(entry.file, entry.options).run_id
    summary = (
        f"run {run_id}: {runs.item(0, 'energy_j'):,.0f} J over {runs.item(0, 'duration_s'):,.1f} s"
        if runs.height
        else f"run {run_id}: no valid samples"
    )
    return (f"{entry.path} ({entry.kind}): {staged.row_count:,} samples{' (streamed)' if streamed else ''}, "
            f"{staged.rejects.height:,} rejected; {summary}")


def _validated_together(log_runs: Sequence[tuple[SourceEntry, Parsed]], *, run_id: str) -> Staged | None:
    """The runs of many logs validated as one frame (one pandera pass, not one per log), or None
    when a row fails: then they are validated file by file, for rejects that name their file."""
    if not log_runs:
        return None
    frame = conform(BenchmarkRuns, pl.concat([parsed.frame for _, parsed in log_runs], how="diagonal_relaxed"))
    valid, rejects = split_valid(BenchmarkRuns, frame, file="the logs' runs")
    if rejects:
        return None
    per_source = [{"source_id": entry.id, "rows": parsed.frame.height, "rejected": 0} for entry, parsed in log_runs]
    return Staged(table=RUNS_TABLE, frame=valid, rejects=empty_frame(RejectedRows), per_source=per_source)


def stage_runs(
    log_runs: Sequence[tuple[SourceEntry, Parsed]],
    per_run: Sequence[SourceEntry],
    *,
    run_id: str,
    log: Callable[[str], Any] = lambda _: None,
    first: int = 1,
) -> tuple[Staged, Staged]:
    """staging.benchmark_runs and staging.benchmark_series from the sampled logs' runs and the
    per-run files (parsed here, numbered from ``first`` in the progress lines).

    A run whose device resolves to no device class (:mod:`pipelines.ingest.devices`) is
    quarantined with the reason; the runs' series keys are checked before they are summarised
    (:mod:`pipelines.ingest.energy.series`)."""
    devices = registered_devices(entries_for(DEVICE_SPECS_TABLE))
    log_runs = [(entry, devices.screen(parsed)) for entry, parsed in log_runs]
    run_inputs = list(log_runs)
    total = first - 1 + len(per_run)
    for i, entry in enumerate(per_run, start=first):
        started = time.perf_counter()
        parsed = devices.screen(parse_entry(entry, _parser_for(entry, RUN_PARSERS, RUNS_TABLE)))
        run_inputs.append((entry, parsed))
        log(f"[{i}/{total}] {entry.path} ({entry.kind}): {parsed.frame.height:,} runs, {len(parsed.rejects):,} rejected; {time.perf_counter() - started:.2f}s")
    clean = [item for item in log_runs if not item[1].rejects]
    batch = _validated_together(clean, run_id=run_id)
    if batch is None:
        runs_staged = validate_parsed(RUNS_TABLE, BenchmarkRuns, run_inputs, run_id=run_id)
    else:  # the clean logs' runs in one validation; the rest file by file
        together = {id(item) for item in clean}
        rest = validate_parsed(RUNS_TABLE, BenchmarkRuns, [item for item in run_inputs if id(item) not in together], run_id=run_id)
        runs_staged = _merge(RUNS_TABLE, BenchmarkRuns, [batch, rest])
    _check_unique_runs(runs_staged.frame, {entry.id: entry for entry, _ in run_inputs})
    runs_staged.frame = runs_staged.frame.sort("run_id")
    reproduces = {entry.id: entry.options.get(REPRODUCES) for entry, _ in run_inputs}
    return runs_staged, _stage_series(runs_staged.frame, reproduces)


def stage_power_logs(
    sampled: Sequence[SourceEntry],
    per_run: Sequence[SourceEntry],
    *,
    run_id: str,
    log: Callable[[str], Any] = lambda _: None,
    con: duckdb.DuckDBPyConnection | None = None,
) -> PowerTables:
    """Parse, validate and integrate every power-log file in one go; return the three tables
    (the asset does the same per partition, :func:`~pipelines.warehouse.power_log_lake.ingest_logs`, and :func:`stage_runs`).

    ``sampled`` are the manifest entries of staging.power_samples, ``per_run`` those of
    staging.benchmark_runs. ``run_id`` is the Dagster run (stamped on rejects).

    With ``con``, the samples are written into staging.power_samples there as each file is
    staged, nvidia-smi logs streamed (:data:`STREAMED_KINDS`), and the returned samples table
    holds only a preview (``in_table`` is the count); without it, every log is read whole and
    the samples are returned in memory.
    """
    check_declared_run_ids(sampled)
    total = len(sampled) + len(per_run)
    sample_parts: list[Staged] = []
    log_runs: list[tuple[SourceEntry, Parsed]] = []
    if con is not None:
        start_staged(con, SAMPLES_TABLE, PowerSamples)
    for i, entry in enumerate(sampled, start=1):
        started = time.perf_counter()
        staged, runs = stage_log(entry, run_id=run_id, con=con)
        sample_parts.append(staged)
        log_runs.append((entry, runs))
        streamed = con is not None and entry.kind in STREAMED_KINDS
        log(f"[{i}/{total}] {log_summary(entry, staged, runs.frame, streamed=streamed)}; {time.perf_counter() - started:.2f}s")
    runs_staged, series = stage_runs(log_runs, per_run, run_id=run_id, log=log, first=len(sampled) + 1)
    samples = _merge(SAMPLES_TABLE, PowerSamples, sample_parts)
    if con is not None:
        samples.in_table = sum(part.row_count for part in sample_parts)
        samples.frame = conform(PowerSamples, query_pl(con, f"select * from {SAMPLES_TABLE} limit 5"))  # noqa: S608 - a code constant
    return PowerTables(samples=samples, runs=runs_staged, series=series)


def series_markdown(series: pl.DataFrame) -> str:
    """A markdown table of the series: runs, mean energy and its 95% CI."""
    lines = ["| series | device | runs | energy mean (J) | 95% CI (J) | mean power (W) | synthetic |", "|---|---|---|---|---|---|---|"]
    for row in series.iter_rows(named=True):
        ci = "-" if row["energy_j_ci95_low"] is None else f"{row['energy_j_ci95_low']:,.0f} - {row['energy_j_ci95_high']:,.0f}"
        lines.append(
            f"| {row['series_id']} | {row['device_id']} | {row['n_runs']} | {row['energy_j_mean']:,.0f} | {ci} | "
            f"{row['mean_power_w_mean']:,.2f} | {'yes' if row['is_synthetic'] else 'no'} |"
        )
    return "\n".join(lines)


