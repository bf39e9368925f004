"""Device benchmark power logs -> staging.power_samples, staging.benchmark_runs, staging.benchmark_series.

One multi-asset stages the three tables in one transaction, because they are one derivation:
every sampled log (nvidia-smi, powermetrics, Monsoon, Android sysfs, RAPL) is a run whose
samples go to ``staging.power_samples`` and whose integrated energy becomes its row of
``staging.benchmark_runs``; per-run files (CodeCarbon, Zeus) go to ``staging.benchmark_runs``
directly; repeated runs with a ``series_id`` are summarised in ``staging.benchmark_series``.

An nvidia-smi log (the format of the longest logs) is streamed into the run's working copy of
the warehouse (:func:`pipelines.ingest.streaming.stream_nvidia_smi`): its memory is bounded by
a block budget and DuckDB's limit, not by the log. The other formats' samples are appended to
the same table in manifest order as each file is staged, so no table of samples is held whole;
the runs, series and every quarantine row are then written in one transaction. The samples
are written before it, into the working copy, which is discarded when the run fails.

Manifest entries for this asset have ``table = "staging.power_samples"`` (sampled formats)
or ``table = "staging.benchmark_runs"`` (``codecarbon``, ``zeus_power``).
"""

import datetime as dt
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import dagster as dg
import duckdb
import pandera.polars as pa
import polars as pl

from pipelines.defs.checks import staging_checks
from pipelines.defs.metadata import column_metadata
from pipelines.defs.progress import BatchedLog
from pipelines.defs.resources import Warehouse
from pipelines.defs.staging import SOURCES_KEY, key_of, result_metadata
from pipelines.errors import ManifestError, SourceParseError
from pipelines.ingest.energy.runs import runs_from_energies, runs_from_samples
from pipelines.ingest.energy.student_t import t_quantile
from pipelines.ingest.manifest import SourceEntry, entries_for
from pipelines.ingest.options import RunOptions, run_options
from pipelines.ingest.parsers import registry
from pipelines.ingest.quarantine import Reject, rejects_frame, split_valid
from pipelines.ingest.staging import Parsed, Parser, Staged, parse_entry, validate_parsed
from pipelines.ingest.streaming import stream_nvidia_smi
from pipelines.paths import sql_text
from pipelines.warehouse.queries import query_pl
from pipelines.warehouse.tables import append_staged, start_staged, write_staged
from schemas.benchmark_runs import BenchmarkRuns
from schemas.benchmark_series import BenchmarkSeries
from schemas.meta import conform, empty_frame
from schemas.power_samples import PowerSamples
from schemas.quarantine import RejectedRows

SAMPLES_TABLE = "staging.power_samples"
RUNS_TABLE = "staging.benchmark_runs"
SERIES_TABLE = "staging.benchmark_series"
GROUP = "power_logs"

SAMPLED_PARSERS: dict[str, Parser] = registry.SAMPLED_PARSERS
#: Sampled formats streamed into the warehouse (bounded memory) when staging has a connection.
STREAMED_KINDS = frozenset({"nvidia_smi"})
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


def _check_declared_run_ids(entries: Sequence[SourceEntry]) -> None:
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
    clashes = runs.group_by("run_id").agg(pl.col("source_id").unique(maintain_order=True)).filter(pl.col("source_id").list.len() > 1)
    if clashes.height:
        run_id, sources = clashes.sort("run_id").row(0)
        first, second = entries[sources[0]], entries[sources[1]]
        raise SourceParseError(second.file, None, f"run_id {run_id!r} is also a run of {first.file} (source {first.id}); run ids must be unique across files")


def _merge(table: str, model: Any, parts: Sequence[Staged]) -> Staged:
    frames = [part.frame for part in parts]
    rejects = [part.rejects for part in parts if part.rejects.height]
    return Staged(
        table=table,
        frame=pl.concat(frames, how="vertical") if frames else empty_frame(model),
        rejects=pl.concat(rejects, how="vertical") if rejects else empty_frame(RejectedRows),
        per_source=[row for part in parts for row in part.per_source],
    )


def series_from_runs(runs: pl.DataFrame) -> pl.DataFrame:
    """staging.benchmark_series rows from valid benchmark_runs rows (sql/staging/benchmark_series.sql).

    The Student-t critical values for the degrees of freedom present are computed here and
    bound into the query. A series whose runs disagree on device, model, workload or
    is_synthetic is a manifest error.
    """
    in_series = runs.filter(pl.col("series_id").is_not_null())
    mixed = in_series.group_by("series_id").agg(
        pl.col("device_id", "model", "workload", "is_synthetic").n_unique(), pl.col("source_id").unique().sort()
    )
    mixed = mixed.filter(pl.max_horizontal("device_id", "model", "workload", "is_synthetic") > 1)
    if mixed.height:
        series_id, *_, sources = mixed.sort("series_id").row(0)
        raise ManifestError(
            "sources/manifest", f"series {series_id!r} mixes devices, models, workloads or synthetic and measured runs (sources {sources})"
        )
    sizes = sorted({n for n in in_series.group_by("series_id").len().get_column("len").to_list() if n >= 2})
    con = duckdb.connect()
    try:
        con.register("benchmark_runs", runs.to_arrow())
        table = con.sql(
            sql_text("staging/benchmark_series.sql"),
            params={"t_df": [n - 1 for n in sizes], "t_975": [t_quantile(n - 1) for n in sizes]},
        ).to_arrow_table()
    finally:
        con.close()
    return conform(BenchmarkSeries, pl.from_arrow(table))  # type: ignore[arg-type]


def _stage_series(runs: pl.DataFrame) -> Staged:
    frame = series_from_runs(runs)
    valid, rejects = split_valid(BenchmarkSeries, frame, file="staging.benchmark_runs")
    if rejects:
        first = rejects[0]
        raise SourceParseError("staging.benchmark_runs", None, f"derived series fail {first.check_name} on {first.column_name}: {first.reason}")
    per_source = [{"source_id": sid, "rows": n, "rejected": 0} for sid, n in valid.group_by("source_id").len().sort("source_id").iter_rows()]
    return Staged(table=SERIES_TABLE, frame=valid, rejects=empty_frame(RejectedRows), per_source=per_source)


def _stream_entry(entry: SourceEntry, options: RunOptions, con: duckdb.DuckDBPyConnection, run_id: str) -> tuple[Staged, pl.DataFrame]:
    """Stream one log into ``staging.power_samples`` (begun by ``start_staged``): what
    ``parse_entry``, ``validate_parsed`` and ``runs_from_samples`` give for it, its rows in the table."""
    path = entry.verified_file()
    streamed = stream_nvidia_smi(path, {**entry.options, "source_id": entry.id}, con, SAMPLES_TABLE, source_id=entry.id, source_file=entry.path)
    rejects = rejects_frame(streamed.rejects, table=SAMPLES_TABLE, source_id=entry.id, source_file=entry.path, run_id=run_id,
                            at=dt.datetime.now(dt.UTC))
    per_source = {"source_id": entry.id, "rows": streamed.rows, "rejected": len({(r.source_row, r.column_name) for r in streamed.rejects})}
    staged = Staged(table=SAMPLES_TABLE, frame=empty_frame(PowerSamples), rejects=rejects, per_source=[per_source], in_table=streamed.rows)
    runs = runs_from_energies(streamed.runs, options, log_format=entry.kind)
    return staged, runs


def stage_power_logs(
    sampled: Sequence[SourceEntry],
    per_run: Sequence[SourceEntry],
    *,
    run_id: str,
    log: Callable[[str], Any] = lambda _: None,
    con: duckdb.DuckDBPyConnection | None = None,
) -> PowerTables:
    """Parse, validate and integrate every power-log file; return the three tables.

    ``sampled`` are the manifest entries of staging.power_samples, ``per_run`` those of
    staging.benchmark_runs. ``run_id`` is the Dagster run (stamped on rejects).

    With ``con`` (the run's working copy), the samples are written into staging.power_samples
    there as each file is staged, nvidia-smi logs streamed (:data:`STREAMED_KINDS`), and the
    returned samples table holds only a preview (``in_table`` is the count); without it, every
    log is read whole and the samples are returned in memory.
    """
    _check_declared_run_ids(sampled)
    total = len(sampled) + len(per_run)
    sample_parts: list[Staged] = []
    run_inputs: list[tuple[SourceEntry, Parsed]] = []
    if con is not None:
        start_staged(con, SAMPLES_TABLE, PowerSamples)
    for i, entry in enumerate(sampled, start=1):
        started = time.perf_counter()
        options = run_options(entry.file, entry.options)
        if con is not None and entry.kind in STREAMED_KINDS:
            staged, runs = _stream_entry(entry, options, con, run_id)
        else:
            parsed = parse_entry(entry, _parser_for(entry, SAMPLED_PARSERS, SAMPLES_TABLE))
            staged = validate_parsed(SAMPLES_TABLE, PowerSamples, [(entry, parsed)], run_id=run_id)
            del parsed
            runs = runs_from_samples(staged.frame, options, log_format=entry.kind)
            if con is not None:
                append_staged(con, SAMPLES_TABLE, staged.frame)
                staged.in_table, staged.frame = staged.frame.height, staged.frame.clear()
        sample_parts.append(staged)
        runs = runs.with_columns(pl.lit(entry.id).alias("source_id"), pl.lit(entry.path).alias("source_file"))
        run_rejects = []
        if runs.height == 0:
            run_rejects.append(
                Reject(None, None, "no_samples", None, f"no valid power samples in {entry.path} (counted channels): run {options.run_id} cannot be integrated")
            )
        run_inputs.append((entry, Parsed(frame=runs, rejects=run_rejects)))
        summary = (
            f"run {options.run_id}: {runs.item(0, 'energy_j'):,.0f} J over {runs.item(0, 'duration_s'):,.1f} s"
            if runs.height
            else f"run {options.run_id}: no valid samples"
        )
        log(
            f"[{i}/{total}] {entry.path} ({entry.kind}): {staged.row_count:,} samples"
            f"{' (streamed)' if con is not None and entry.kind in STREAMED_KINDS else ''}, "
            f"{staged.rejects.height:,} rejected; {summary}; {time.perf_counter() - started:.2f}s"
        )
    for i, entry in enumerate(per_run, start=len(sampled) + 1):
        started = time.perf_counter()
        parsed = parse_entry(entry, _parser_for(entry, RUN_PARSERS, RUNS_TABLE))
        run_inputs.append((entry, parsed))
        log(f"[{i}/{total}] {entry.path} ({entry.kind}): {parsed.frame.height:,} runs, {len(parsed.rejects):,} rejected; {time.perf_counter() - started:.2f}s")
    runs_staged = validate_parsed(RUNS_TABLE, BenchmarkRuns, run_inputs, run_id=run_id)
    _check_unique_runs(runs_staged.frame, {entry.id: entry for entry in [*sampled, *per_run]})
    runs_staged.frame = runs_staged.frame.sort("run_id")
    samples = _merge(SAMPLES_TABLE, PowerSamples, sample_parts)
    if con is not None:
        samples.in_table = sum(part.row_count for part in sample_parts)
        samples.frame = conform(PowerSamples, query_pl(con, f"select * from {SAMPLES_TABLE} limit 5"))  # noqa: S608 - a code constant
    return PowerTables(samples=samples, runs=runs_staged, series=_stage_series(runs_staged.frame))


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


def _spec(table: str, model: type[pa.DataFrameModel], description: str, *upstream: str) -> dg.AssetSpec:
    """The spec of one table the asset writes; it depends on staging.sources and the ``upstream`` tables."""
    return dg.AssetSpec(key=key_of(table), description=description, group_name=GROUP, kinds={"duckdb", "polars"},
                        deps=[SOURCES_KEY, *(key_of(t) for t in upstream)], metadata=column_metadata(model))


SPECS = [
    _spec(SAMPLES_TABLE, PowerSamples, (
        "Power readings of every benchmark run's log (nvidia-smi, powermetrics, Monsoon, Android sysfs, RAPL). "
        "Grain: one reading of one channel of one run at one instant (UTC); counts_to_total marks the channels "
        "whose sum is the run's power."
    )),
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


@dg.multi_asset(specs=SPECS, name="power_logs")
def power_logs(context: dg.AssetExecutionContext, warehouse: Warehouse) -> Iterator[dg.MaterializeResult]:
    """Device benchmark power logs -> power samples, integrated runs and repeated-run series.

    Every sampled log in the manifest (table staging.power_samples) is parsed, its samples
    validated, and its run integrated; per-run files (table staging.benchmark_runs) are parsed
    into runs directly. The samples are written into the run's working copy as each file is
    staged (nvidia-smi logs streamed); the runs, series and every quarantined row are then
    written in one transaction. A failure fails the run, whose working copy is not published.
    """
    con = warehouse.connection()
    with BatchedLog(context.log.info) as log:
        tables = stage_power_logs(entries_for(SAMPLES_TABLE), entries_for(RUNS_TABLE), run_id=context.run_id, log=log, con=con)
    write_staged(con, [tables.samples, tables.runs, tables.series])
    yield dg.MaterializeResult(asset_key=key_of(SAMPLES_TABLE), metadata=result_metadata(tables.samples))
    yield dg.MaterializeResult(asset_key=key_of(RUNS_TABLE), metadata=result_metadata(tables.runs))
    series_meta = result_metadata(tables.series)
    series_meta["series"] = dg.MetadataValue.md(series_markdown(tables.series.frame))
    yield dg.MaterializeResult(asset_key=key_of(SERIES_TABLE), metadata=series_meta)


power_samples_checks = staging_checks(SAMPLES_TABLE, PowerSamples)
benchmark_runs_checks = staging_checks(RUNS_TABLE, BenchmarkRuns)
benchmark_series_checks = staging_checks(SERIES_TABLE, BenchmarkSeries)
