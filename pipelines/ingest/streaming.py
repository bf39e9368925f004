"""Streaming ingest of a sampled power log: memory bounded by a block budget, not by the log.

:func:`stream_nvidia_smi` reads an nvidia-smi log block by block and leaves its staged rows
in a DuckDB table, never holding the whole log in memory. It applies the same rules, with
the same rejects, as the whole-frame path (``parse_nvidia_smi``, then ``validate_parsed``
against :class:`schemas.power_samples.PowerSamples`, then ``integrate``):

1. **Read.** Each block of about ``block_bytes`` is parsed (``typed_blocks``); the repeated
   hour of a fall-back is placed by the log's order with the last time of the block before
   carried over (:func:`pipelines.ingest.cells.resolve_repeated_hour`). The typed rows
   (line, UTC microseconds, channel code, power, and for an ambiguous local time its
   summer-time reading) are appended to a scratch table in DuckDB.
2. **Log-wide checks in SQL**, out of core: if some ambiguous time fits neither reading, every
   ambiguous line is rejected; readings above the device bound; future times; the log's own
   span (the largest cluster of times with no gap over ``MAX_LOG_GAP``, found from one
   min/max/count row per hour: an hour holds no such gap, so the clusters are runs of hours).
3. **In order again**, the scratch table is read back in file order, block by block: steps
   back in time (each channel's latest time carried over), exact duplicates and repeated keys
   (after steps back are removed a channel's times never decrease, so the copies of a key are
   consecutive in the channel: only the current key's first line and powers are kept), the
   pandera model's row checks, and each channel's running trapezoid
   (:class:`pipelines.ingest.energy.integration.RunningIntegrals`). The lines dropped here
   are few; at the end the staged rows are written set-wise: the scratch rows kept, less those.

Memory is a few blocks plus DuckDB's ``memory_limit`` while the log streams (by default
:func:`memory_limit_for` the log's size, capped), whatever the log's length; the price is that
the rows are written twice (a temporary scratch table of this stream, then the staged table or,
with ``parquet``, the partition's Parquet file) and checked by pandera block by block. The peak
does not grow with the log: it is about 1.3x the size of a 100 MB log and a fraction of larger
ones (``tests/ingest/test_ingest_memory.py`` holds it under 1.5x at 100 MB; ``bench/results.json`` and
docs/benchmarks.md have the figures at 273 MB and 2 GB). The power-log partitions stream every
nvidia-smi log larger than one block this way, through a scratch database of their step whose
connection keeps that limit, straight to the partition's Parquet file
(pipelines/warehouse/power_logs.py).
"""

from __future__ import annotations

import datetime as dt
import uuid
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import duckdb
import numpy as np
import polars as pl

from pipelines.identifiers import checked_identifier, checked_size
from pipelines.ingest.energy.integration import RunningIntegrals
from pipelines.ingest.options import run_options
from pipelines.ingest.parsers.nvidia_smi import CHANNELS, layout_of, typed_blocks
from pipelines.ingest.plausibility import (
    FUTURE_TOLERANCE,
    MAX_LOG_GAP,
    future_reject,
    now_utc,
    outside_span_reject,
    power_bound,
    power_reject,
    step_back_reject,
)
from pipelines.ingest.quarantine import Reject, split_checked
from schemas.meta import conform, empty_frame
from schemas.power_samples import PowerSamples

#: Rows read back per block in the ordered pass.
READ_ROWS = 1 << 17
#: Bytes of text parsed per block while a log streams (half the whole-frame parser's block).
STREAM_BLOCK_BYTES = 2 << 20
#: Blocks parsed at a time while a log streams (threads of its parser).
IN_FLIGHT = 3
#: DuckDB's ``memory_limit`` while a log streams is the log's size less :data:`MEMORY_OVERHEAD`
#: (what the parse, the ordered pass and DuckDB itself hold besides), within these bounds; beyond
#: it DuckDB spills to its temp directory. So the scratch rows stay in memory while the process's
#: peak can afford them (at 100 MB the limit is the floor and the peak about 1.3x the log), the
#: peak does not grow past the cap, and a log that spills costs more CPU than one that does not.
#: The connection's own setting is restored afterwards.
MEMORY_LIMIT_MIN = 24 << 20
MEMORY_LIMIT_MAX = 256 << 20
MEMORY_OVERHEAD = 80 << 20
#: Below this limit DuckDB works on one thread while a log streams: an ordered write on two
#: buffers batches waiting for their turn, which a limit near the floor cannot hold.
ONE_THREAD_BELOW = 64 << 20
#: ``memory_limit=MEMORY_LIMIT`` sizes the limit from the log (:func:`memory_limit_for`).
MEMORY_LIMIT = "auto"
_EPOCH = dt.datetime(1970, 1, 1, tzinfo=dt.UTC)
_HOUR_US = 3_600_000_000
_CHANNEL_NAMES = CHANNELS.categories.to_list()
_CHANNEL_CODES = list(range(len(_CHANNEL_NAMES)))


class _RowChecks(PowerSamples):
    """PowerSamples' row checks without its key (the ordered pass removes repeats itself)."""

    class Config:
        strict = True
        unique = None


@dataclass
class StreamedLog:
    """What streaming one log leaves: its staged rows are in ``table``; the rest is small."""

    table: str
    rows: int
    rejects: list[Reject] = field(default_factory=list)
    #: ``integrate(samples, per_channel=True)`` of the staged rows.
    channels: pl.DataFrame = field(default_factory=pl.DataFrame)
    #: ``integrate(samples, idle_baseline_w=...)`` of the staged rows (one row, or none).
    runs: pl.DataFrame = field(default_factory=pl.DataFrame)
    #: Most rows held in one block (typed or read back): the block budget in rows.
    largest_block: int = 0


def _literal(path: Path) -> str:
    """``path`` as the body of a SQL string literal (a COPY target cannot be bound)."""
    return str(path).replace("'", "''")


def memory_limit_bytes(size_bytes: int) -> int:
    """DuckDB's ``memory_limit`` while a log of ``size_bytes`` streams: the log's size less
    :data:`MEMORY_OVERHEAD`, within [:data:`MEMORY_LIMIT_MIN`, :data:`MEMORY_LIMIT_MAX`]."""
    return max(MEMORY_LIMIT_MIN, min(MEMORY_LIMIT_MAX, size_bytes - MEMORY_OVERHEAD))


def memory_limit_for(size_bytes: int) -> str:
    """:func:`memory_limit_bytes` as a DuckDB setting, in MiB."""
    return f"{memory_limit_bytes(size_bytes) >> 20}MiB"


def threads_for(size_bytes: int, cpus: int) -> int:
    """DuckDB's threads while a log of ``size_bytes`` streams: one below :data:`ONE_THREAD_BELOW`, else ``cpus``."""
    return 1 if memory_limit_bytes(size_bytes) < ONE_THREAD_BELOW else cpus


def _instant(micros: int) -> dt.datetime:
    return _EPOCH + dt.timedelta(microseconds=int(micros))


def _resolve(frame: pl.DataFrame, before: int | None) -> tuple[pl.DataFrame, bool]:
    """One block's repeated hour placed by the log's order, after ``before`` (the last time so far).

    The rule of :func:`pipelines.ingest.cells.resolve_repeated_hour`, carried across blocks.
    Returns the scratch rows (line, ts (us), channel code, power, amb_early: the summer-time
    reading of an ambiguous local time, else null) and whether some ambiguous time fit
    neither reading (then every ambiguous line of the log is rejected).
    """
    early = frame.get_column("ts").dt.epoch("us").to_numpy().copy()
    late_col = frame.get_column("ts_late")
    ambiguous = late_col.is_not_null()
    unordered = False
    if late_col.null_count() < frame.height:
        late = late_col.dt.epoch("us").fill_null(0).to_numpy()
        for i in np.flatnonzero(ambiguous.to_numpy()):
            prev = int(early[i - 1]) if i else before
            if prev is None or early[i] >= prev:
                continue
            if late[i] >= prev:
                early[i] = late[i]
            else:
                unordered = True
    out = pl.DataFrame(
        {
            "source_row": frame.get_column("source_row").cast(pl.Int64),
            "ts": pl.Series(early, dtype=pl.Int64),
            "channel": frame.get_column("channel").to_physical().cast(pl.UInt8),
            "power_w": frame.get_column("power_w"),
            "amb_early": frame.get_column("ts").dt.epoch("us"),
        }
    ).with_columns(pl.when(ambiguous).then(pl.col("amb_early")).alias("amb_early"))
    return out, unordered


def _local_text(micros: list[int], zone: str) -> list[str]:
    series = pl.Series(micros, dtype=pl.Int64).cast(pl.Datetime("us")).dt.replace_time_zone("UTC").cast(pl.Datetime("ms", "UTC"))
    return series.dt.convert_time_zone(zone).dt.strftime("%Y-%m-%d %H:%M:%S%.f").to_list()


def _span(buckets: list[tuple[int, int, int]]) -> tuple[int, int] | None:
    """(first, last) of the log's main cluster from (min, max, count) per hour; None if one cluster."""
    if sum(n for *_, n in buckets) < 2:
        return None
    gap_us = MAX_LOG_GAP // dt.timedelta(microseconds=1)
    parts: list[list[int]] = []  # [first, last, count]
    for low, high, n in buckets:
        if parts and low - parts[-1][1] <= gap_us:
            parts[-1][1] = max(parts[-1][1], high)
            parts[-1][2] += n
        else:
            parts.append([low, high, n])
    if len(parts) == 1:
        return None
    best = max(range(len(parts)), key=lambda i: (parts[i][2], -i))
    return parts[best][0], parts[best][1]


@dataclass
class _Channel:
    """What the ordered pass carries per channel from block to block."""

    latest: int | None = None  # latest time so far (steps back)
    key_ts: int | None = None  # time of the last staged key
    key_line: int = 0  # first line of that key
    key_powers: set[float] = field(default_factory=set)


def stream_nvidia_smi(
    path: Path,
    options: Mapping[str, Any],
    con: duckdb.DuckDBPyConnection,
    table: str,
    *,
    source_id: str,
    source_file: str,
    block_bytes: int = STREAM_BLOCK_BYTES,
    read_rows: int = READ_ROWS,
    specs: Path | None = None,
    memory_limit: str | None = MEMORY_LIMIT,
    parquet: Path | None = None,
) -> StreamedLog:
    """Stream one nvidia-smi log into ``table`` (created if missing, else appended to).

    ``options`` are the manifest entry's; ``source_id`` and ``source_file`` stamp the rows.
    ``block_bytes`` bounds the text read at a time, ``read_rows`` the rows read back at a time.
    The staged rows are appended in file order by one statement at the end (nothing is
    staged if an error comes first). The scratch rows live in a temporary table of this
    stream alone, dropped either way. ``memory_limit`` (DuckDB's; the default,
    :data:`MEMORY_LIMIT`, sizes it from the log by :func:`memory_limit_for`; None leaves the
    connection's) holds while the log streams, and the connection's own setting is restored afterwards.
    With ``parquet``, the staged rows are written to that Parquet file (zstd), in ``table``'s
    column order and types, instead of appended to ``table`` (which is still created, empty).
    """
    run = run_options(path, options)
    layout = layout_of(path, options)
    target = checked_identifier(table)
    # a temporary table of this stream alone: never part of the database file, gone with the connection
    scratch = f"stream_samples_{uuid.uuid4().hex}"
    labels = {"ts": "timestamp", "power_w": layout.power_name}
    ts_label, power_label = labels["ts"], labels["power_w"]
    largest = 0
    previous_limit = None
    if memory_limit is not None:
        previous_limit = con.execute("select current_setting('memory_limit')").fetchall()[0][0]
        limit = memory_limit_for(path.stat().st_size) if memory_limit == MEMORY_LIMIT else memory_limit
        con.execute(f"set memory_limit = '{checked_size(limit)}'")
    try:
        con.execute(f"create schema if not exists {target.split('.')[0]}")
        con.register("_empty_samples", empty_frame(PowerSamples).to_arrow())
        con.execute(f"create table if not exists {target} as select * from _empty_samples")  # noqa: S608 - checked identifiers, numbers
        con.unregister("_empty_samples")
        con.execute(f"create temp table {scratch} (source_row bigint, ts bigint, channel utinyint, power_w double, amb_early bigint)")
        # 1. read: typed blocks, repeated hour, into the scratch table
        parse_rejects: list[Reject] = []
        before: int | None = None
        unordered = False
        for frame, bad in typed_blocks(path, layout, block_bytes, IN_FLIGHT):
            parse_rejects.extend(bad)
            if frame.height == 0:
                continue
            largest = max(largest, frame.height)
            rows, block_unordered = _resolve(frame, before)
            unordered = unordered or block_unordered
            before = int(rows.get_column("ts")[-1])
            con.register("_block", rows.to_arrow())
            con.execute(f"insert into {scratch} select * from _block")  # noqa: S608 - checked identifiers, numbers
            con.unregister("_block")
            del frame, rows
        # 2. log-wide checks in SQL
        checked: list[Reject] = []
        keep = "true"
        if unordered:
            hits = con.execute(f"select source_row, amb_early from {scratch} where amb_early is not null order by source_row").fetchall()  # noqa: S608 - checked identifiers, numbers
            texts = _local_text([early for _, early in hits], layout.zone)
            checked += [
                Reject(
                    line, ts_label, "ambiguous_local_time", text,
                    f"{ts_label}: {text} occurs twice in {layout.zone} (the clocks went back) and the log is not in time order "
                    "across the repeated hour, so which pass this line belongs to cannot be told",
                )
                for (line, _), text in zip(hits, texts, strict=True)
            ]
            keep = "amb_early is null"
        device_id = options.get("device_id") if isinstance(options.get("device_id"), str) else None
        bound = power_bound("nvidia_smi", device_id, specs)
        for line, watts in con.execute(f"select source_row, power_w from {scratch} where {keep} and power_w > ?", [bound.max_w]).fetchall():  # noqa: S608 - checked identifiers, numbers
            checked.append(power_reject(line, power_label, watts, bound))
        keep += f" and not (power_w > {float(bound.max_w)!r})"
        latest = (now_utc() + FUTURE_TOLERANCE - _EPOCH) // dt.timedelta(microseconds=1)
        for line, micros in con.execute(f"select source_row, ts from {scratch} where {keep} and ts > ?", [latest]).fetchall():  # noqa: S608 - checked identifiers, numbers
            checked.append(future_reject(line, ts_label, _instant(micros)))
        keep += f" and not (ts > {int(latest)})"
        buckets = con.execute(
            f"select min(ts), max(ts), count(*) from {scratch} where {keep} group by floor(ts / {_HOUR_US}) order by 1"  # noqa: S608 - checked identifiers, numbers
        ).fetchall()
        span = _span([(int(lo), int(hi), int(n)) for lo, hi, n in buckets])
        if span is not None:
            first, last = span
            shown = f"{_instant(first).isoformat()} .. {_instant(last).isoformat()}"
            away = f"(ts < {first} or ts > {last})"
            for line, micros in con.execute(f"select source_row, ts from {scratch} where {keep} and {away}").fetchall():  # noqa: S608 - checked identifiers, numbers
                checked.append(outside_span_reject(line, ts_label, _instant(micros), shown))
            keep += f" and not {away}"
        # 3. in file order again: steps back, repeats, row checks, the integral; then stage
        channels: dict[int, _Channel] = {}
        integrals = RunningIntegrals(run.run_id)
        later: list[Reject] = []
        dropped: list[np.ndarray] = []
        query = f"select source_row, ts, channel, power_w from {scratch} where {keep}"  # noqa: S608 - checked identifiers, numbers
        last_line = 0
        for batch in con.sql(query).to_arrow_reader(read_rows):
            block = pl.from_arrow(batch)
            assert isinstance(block, pl.DataFrame)
            if block.height == 0:
                continue
            largest = max(largest, block.height)
            lines = block.get_column("source_row").to_numpy()
            if lines[0] <= last_line or (len(lines) > 1 and np.diff(lines).min() <= 0):
                raise RuntimeError("DuckDB returned the scratch rows out of file order")
            last_line = int(lines[-1])
            drop = _ordered_checks(block, channels, checked, later, ts_label, run.run_id)
            if drop is not None:
                dropped.append(lines[drop])
                block = block.filter(~pl.Series(drop))
            rows = conform(
                PowerSamples,
                block.select(
                    pl.lit(run.run_id).alias("run_id"),
                    pl.col("ts").cast(pl.Datetime("us")).dt.replace_time_zone("UTC").alias("ts"),
                    pl.col("channel").replace_strict(_CHANNEL_CODES, _CHANNEL_NAMES, return_dtype=pl.String).alias("channel"),
                    "power_w",
                    pl.lit(True).alias("counts_to_total"),
                    pl.lit(source_id).alias("source_id"),
                    pl.lit(source_file).alias("source_file"),
                    "source_row",
                ),
            )
            # the model's row checks; its key is unique already (the repeats are out)
            valid, row_rejects = split_checked(_RowChecks, rows, file=str(path))
            if row_rejects:
                later += row_rejects
                failed = {r.source_row for r in row_rejects}
                dropped.append(np.array(sorted(failed), dtype=np.int64))
            integrals.add(valid.get_column("channel"), valid.get_column("ts"), valid.get_column("power_w"))
            del block, rows, valid
        # the staged rows, set-wise: the scratch rows kept, less the few dropped in order
        drops = pl.DataFrame({"source_row": np.concatenate(dropped) if dropped else np.zeros(0, dtype=np.int64)})
        con.register("_dropped", drops.to_arrow())
        values = {
            "run_id": "$run_id", "ts": "make_timestamp(ts) at time zone 'UTC'", "channel": "'gpu' || channel", "power_w": "power_w",
            "counts_to_total": "true", "interval_s": "null::double", "source_id": "$source_id", "source_file": "$source_file",
            "source_row": "source_row",
        }
        rows_kept = f"from {scratch} where {keep} and source_row not in (select source_row from _dropped)"  # noqa: S608 - checked identifiers, numbers
        bound = {"run_id": run.run_id, "source_id": source_id, "source_file": source_file}
        if parquet is None:
            select = ", ".join(f"{expr} as {name}" for name, expr in values.items())
            con.execute(f"insert into {target} by name select {select} {rows_kept}", bound)
            staged_rows = integrals.rows
        else:
            # straight to the Parquet file, in the table's column order and types: the rows are written once
            columns = con.execute("select column_name, data_type from duckdb_columns() where schema_name || '.' || table_name = $t "
                                  "order by column_index", {"t": target}).fetchall()
            select = ", ".join(f"cast({values[name]} as {kind}) as {name}" for name, kind in columns)
            staged_rows = int(con.execute(
                f"copy (select {select} {rows_kept}) to '{_literal(parquet)}' (format parquet, compression zstd)", bound
            ).fetchall()[0][0])
        con.unregister("_dropped")
        if staged_rows != integrals.rows:
            raise RuntimeError(f"staged {staged_rows:,} rows of {path} but integrated {integrals.rows:,}")
    finally:
        con.execute(f"drop table if exists temp.{scratch}")
        if previous_limit is not None:
            # the default exactly when it was the default (the setting reads back rounded)
            con.execute("reset memory_limit")
            if con.execute("select current_setting('memory_limit')").fetchall()[0][0] != previous_limit:
                con.execute(f"set memory_limit = '{checked_size(previous_limit)}'")
    checked.sort(key=lambda r: (r.source_row or 0, r.column_name or ""))
    later.sort(key=lambda r: (r.source_row or 0, r.column_name or ""))
    return StreamedLog(
        table=table,
        rows=staged_rows,
        rejects=parse_rejects + checked + later,
        channels=integrals.per_channel(),
        runs=integrals.runs(run.idle_baseline_w),
        largest_block=largest,
    )


def _ordered_checks(
    block: pl.DataFrame, channels: dict[int, _Channel], checked: list[Reject], later: list[Reject], ts_label: str, run_id: str
) -> np.ndarray | None:
    """Steps back (into ``checked``) and repeated keys (into ``later``) of one block read back in file order.

    Returns a mask of the rows to drop, or None if none.
    """
    codes = block.get_column("channel").to_numpy()
    micros = block.get_column("ts").to_numpy()
    watts = block.get_column("power_w").to_numpy()
    lines = block.get_column("source_row").to_numpy()
    drop = np.zeros(block.height, dtype=bool)
    for code in np.unique(codes):
        where = np.flatnonzero(codes == code)
        t = micros[where]
        state = channels.setdefault(int(code), _Channel())
        # steps back: earlier than the latest time before, in this channel
        prior = np.maximum.accumulate(t)
        before = np.empty_like(t)
        before[1:] = prior[:-1]
        before[0] = t[0] if state.latest is None else state.latest
        if state.latest is not None:
            before = np.maximum(before, state.latest)
        back = t < before
        name = _CHANNEL_NAMES[int(code)]
        for i in np.flatnonzero(back):
            checked.append(step_back_reject(int(lines[where[i]]), ts_label, _instant(t[i]), _instant(before[i]), name))
        state.latest = int(prior[-1]) if state.latest is None else max(state.latest, int(prior[-1]))
        drop[where[back]] = True
        kept = where[~back]
        if len(kept) == 0:
            continue
        # repeated keys: consecutive in the channel once its times never decrease
        t = micros[kept]
        repeats = np.flatnonzero(np.diff(t) == 0) + 1
        if state.key_ts is not None and t[0] == state.key_ts:
            repeats = np.concatenate(([0], repeats))
        if len(repeats) == 0:
            state.key_ts, state.key_line, state.key_powers = int(t[-1]), int(lines[kept[-1]]), {float(watts[kept[-1]])}
            continue
        for j, at in enumerate(kept):
            if j and t[j] != t[j - 1] or (j == 0 and t[0] != state.key_ts):
                state.key_ts, state.key_line, state.key_powers = int(t[j]), int(lines[at]), {float(watts[at])}
                continue
            power = float(watts[at])
            shown = f"run_id = {run_id}, channel = {name}, ts = {_instant(t[j])}"
            what = (
                f"an exact duplicate of line {state.key_line}"
                if power in state.key_powers
                else f"repeats the key ({shown}) of line {state.key_line} with different values"
            )
            later.append(Reject(int(lines[at]), None, "multiple_fields_uniqueness", shown, f"{what}; the first is kept"))
            state.key_powers.add(power)
            drop[at] = True
    return drop if drop.any() else None
