"""nvidia-smi power logs -> staging.power_samples.

The file is the output of::

    nvidia-smi --query-gpu=timestamp,index,name,power.draw --format=csv -lms 100

A header line ``timestamp, index, name, power.draw [W]`` (fields separated by ``", "``), then
one line per GPU per poll, e.g. ``2023/05/01 12:00:00.123, 0, NVIDIA RTX A5000, 220.15 W``
(``--format=csv,nounits`` drops the `` W``). Several GPUs are interleaved: each ``index`` is a
channel ``gpu<index>`` and counts towards the run's total. ``power.draw.average [W]`` or
``power.draw.instant [W]`` are accepted in place of ``power.draw [W]``; other query columns
are ignored.

Timestamps are local time with no zone, so the manifest option ``timezone`` (IANA name) is
required. A local time that does not exist (skipped by a daylight-saving change) rejects its
row. A local time of the repeated hour of a fall-back is placed by the log's order: summer
time on the first pass, standard time once the log has stepped back
(:func:`pipelines.ingest.cells.resolve_repeated_hour`); if the log is not in time order across that
hour, its ambiguous lines are rejected, never shifted. Implausible readings (power above the
device's bound, future or out-of-span times, steps back in time) are rejected by
:func:`pipelines.ingest.plausibility.check_samples`.

Row problems are rejected with the file's column name: ``[N/A]`` / ``[Not Supported]`` power
(nvidia-smi could not read the sensor), unreadable numbers or times, empty cells. Blank lines
are skipped. A file without the required header columns, or not text, raises
:class:`SourceParseError`.

The file is read in blocks of about 4 MiB, each parsed column-wise by polars, so memory stays
near the size of the typed result (not of the text) and multi-million-line logs load in
seconds. Timestamps in nvidia-smi's fixed layout take a fast path; any other layout that the
general format still reads is parsed for the lines concerned only. :func:`parse_nvidia_smi`
returns the whole log as one frame; :func:`pipelines.ingest.streaming.stream_nvidia_smi`
takes the same blocks (:func:`typed_blocks`) into DuckDB one by one, for logs whose samples
should not all be held in memory.
"""

from __future__ import annotations

import datetime as dt
from collections import deque
from collections.abc import Iterator, Mapping
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl

from pipelines.errors import SourceParseError
from pipelines.ingest.cells import EARLIEST, LATEST, resolve_repeated_hour
from pipelines.ingest.options import run_options, timezone_option
from pipelines.ingest.plausibility import check_samples
from pipelines.ingest.quarantine import Reject
from pipelines.ingest.staging import Parsed

#: Accepted power columns, in order of preference.
POWER_COLUMNS = ("power.draw [W]", "power.draw.average [W]", "power.draw.instant [W]", "power.draw")
TIME_FORMAT = "%Y/%m/%d %H:%M:%S%.f"
#: Bytes read per block.
BLOCK_BYTES = 4 << 20
MAX_GPU_INDEX = 255
#: Channel names as an enum (one byte per sample instead of a string).
CHANNELS = pl.Enum([f"gpu{i}" for i in range(MAX_GPU_INDEX + 1)])
_INDEXES = list(range(MAX_GPU_INDEX + 1))
_CHANNEL_NAMES = [f"gpu{i}" for i in _INDEXES]

_T, _I, _P = "timestamp", "index", "power"


def _header(path: Path) -> tuple[list[str], int, bool]:
    """The header's column names, its length in bytes (with the line break), and whether it ends in CRLF."""
    try:
        with path.open("rb") as handle:
            raw = handle.readline(1 << 20)
    except OSError as exc:
        raise SourceParseError(path, None, f"cannot read the file: {exc}") from exc
    if not raw.strip():
        raise SourceParseError(path, 1, "empty file: expected the header 'timestamp, index, name, power.draw [W]'")
    if not raw.endswith(b"\n") and len(raw) >= 1 << 20:
        raise SourceParseError(path, 1, "the first line is longer than 1 MiB: not an nvidia-smi CSV log")
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise SourceParseError(path, 1, "the header is not UTF-8 text: not an nvidia-smi CSV log") from exc
    names = [name.strip() for name in text.rstrip("\r\n").split(",")]
    return names, len(raw), raw.endswith(b"\r\n")


def _positions(path: Path, names: list[str]) -> tuple[int, int, int, str]:
    """Positions of timestamp, index and power in the header, and the power column's name."""
    duplicated = sorted({name for name in names if names.count(name) > 1 and name})
    if duplicated:
        raise SourceParseError(path, 1, f"header repeats column(s) {duplicated}")
    power = next((name for name in POWER_COLUMNS if name in names), None)
    missing = [name for name in (_T, _I) if name not in names] + ([] if power else [POWER_COLUMNS[0]])
    if missing or power is None:
        raise SourceParseError(
            path, 1, f"header lacks column(s) {missing}; found {names[:12]} (expected e.g. 'timestamp, index, name, power.draw [W]')"
        )
    return names.index(_T), names.index(_I), names.index(power), power


def _blocks(path: Path, start: int, block_bytes: int = BLOCK_BYTES) -> Iterator[tuple[int, np.ndarray, bytes]]:
    """(line number of the block's first line, offsets of its line ends, block of whole lines).

    The last line of the file may lack its line break; its end is then the block's length.
    """
    line = 2
    with path.open("rb", buffering=0) as handle:
        handle.seek(start)
        while True:
            data = handle.read(block_bytes)
            if not data:
                return
            cut = data.rfind(b"\n")
            if cut < 0:
                # A line longer than a block: read on to its end.
                data += handle.readline()
            elif cut + 1 < len(data):
                # Give back the partial last line; the next block starts with it.
                handle.seek(cut + 1 - len(data), 1)
                data = data[: cut + 1]
            ends = np.flatnonzero(np.frombuffer(data, dtype=np.uint8) == 10)
            if not data.endswith(b"\n"):
                ends = np.append(ends, len(data))
            yield line, ends, data
            line += len(ends)


def _naive_times(raw: pl.Expr) -> pl.Expr:
    """Fast path for nvidia-smi's fixed ``YYYY/MM/DD HH:MM:SS.fff`` layout (null otherwise)."""
    whole_seconds = raw.str.slice(0, 20).str.to_datetime("%Y/%m/%d %H:%M:%S.", time_unit="ms", strict=False)
    epoch_ms = whole_seconds.dt.epoch("ms") + raw.str.slice(20, 3).cast(pl.UInt16, strict=False)
    return pl.when(raw.str.len_bytes() == 23).then(epoch_ms).cast(pl.Datetime("ms"))


def _general_times(raw: pl.Expr) -> pl.Expr:
    """Any layout the general format reads (fraction of any length, or none)."""
    return raw.str.strip_chars().str.to_datetime(TIME_FORMAT, time_unit="ms", strict=False)


def _to_utc(naive: pl.Expr, zone: str, ambiguous: str = "earliest") -> pl.Expr:
    if zone == "UTC":
        return naive.dt.replace_time_zone("UTC")
    local = naive.dt.replace_time_zone(zone, ambiguous=ambiguous, non_existent="null")
    return local.dt.convert_time_zone("UTC")


def _may_change_offset(zone: str, first: Any, last: Any) -> bool:
    """Whether local times between ``first`` and ``last`` (naive) may cross a UTC-offset change."""
    if zone == "UTC" or first is None:
        return False
    import datetime as dt
    from zoneinfo import ZoneInfo

    tz = ZoneInfo(zone)
    if last - first > dt.timedelta(days=60):
        return True
    day = dt.timedelta(days=1)
    return (first - day).replace(tzinfo=tz).utcoffset() != (last + day).replace(tzinfo=tz).utcoffset()


@dataclass(frozen=True)
class _Layout:
    """Where the needed columns are, and how a block is read."""

    names: list[str]
    power_name: str
    take: list[int]
    zone: str
    #: Power is the last column: its unit can be cut off the line ends and the number read by
    #: the CSV reader itself (index too), without a string column.
    fast: bool
    crlf: bool

    def schema(self, typed: bool) -> dict[str, pl.DataType]:
        kinds: dict[int, tuple[str, pl.DataType]] = {
            self.take[0]: ("c_t", pl.String()),
            self.take[1]: ("c_i", pl.UInt8() if typed else pl.String()),
            self.take[2]: ("c_p", pl.Float64() if typed else pl.String()),
        }
        return {kinds[i][0] if i in kinds else f"c{i}": kinds[i][1] if i in kinds else pl.String() for i in range(len(self.names))}


#: First bytes by which Polars' CSV reader takes its input for gzip, zlib or zstd data; a block
#: of text lines may start with them (``x^...`` is a zlib header).
_COMPRESSED_MAGIC = (b"\x1f\x8b", b"\x78\x01", b"\x78\x5e", b"\x78\x9c", b"\x78\xda", b"\x28\xb5\x2f\xfd")


def _read(path: Path, first_line: int, block: bytes, layout: _Layout, typed: bool) -> pl.DataFrame:
    """The block's lines as a frame (one row per line, blank lines all-null).

    A block that starts like compressed data is read after a blank line, whose row is dropped,
    so the reader parses its lines as text instead of decompressing them.
    """
    guarded = block.startswith(_COMPRESSED_MAGIC)
    try:
        frame = pl.read_csv(
            b"\n" + block if guarded else block,
            has_header=False,
            schema=layout.schema(typed),
            columns=sorted(layout.take),
            quote_char=None,
            truncate_ragged_lines=True,
            missing_columns="insert",
            extra_columns="ignore",
            ignore_errors=typed,
            encoding="utf8-lossy",
            raise_if_empty=False,
        )
    except pl.exceptions.PolarsError as exc:
        message = str(exc).splitlines()[0] if str(exc) else repr(exc)
        raise SourceParseError(path, first_line, f"cannot read the lines from here on as CSV: {message}") from exc
    return (frame.slice(1) if guarded else frame).rename({"c_t": _T, "c_i": _I, "c_p": _P})


def _from_text(frame: pl.DataFrame) -> pl.DataFrame:
    """Index and power read from their text (the general path; keeps the text for rejects)."""
    index = pl.col(_I).str.strip_chars().cast(pl.UInt8, strict=False)
    watts = pl.col(_P).str.strip_chars().str.strip_suffix(" W").str.strip_chars().cast(pl.Float64, strict=False)
    return frame.with_columns(
        index.replace_strict(_INDEXES, _CHANNEL_NAMES, return_dtype=CHANNELS).alias("channel"),
        pl.when(watts.is_finite()).then(watts).alias("power_w"),
    )


def _cut_units(block: bytes, ends: np.ndarray) -> bytes:
    """The block with each line-final `` W`` turned into ``,,`` (two empty extra fields).

    Lines keep their length, so only the bytes before each line end are looked at; the power
    number is then the last field, readable as a float by the CSV reader.
    """
    text = np.frombuffer(block, dtype=np.uint8).copy()
    starts = np.concatenate(([0], ends[:-1] + 1))
    stop = ends - (text[np.maximum(ends - 1, 0)] == 13)  # before the CR of a CRLF
    stop = stop[stop - starts >= 3]
    unit = (text[stop - 1] == ord("W")) & (text[stop - 2] == ord(" "))
    text[stop[unit] - 1] = ord(",")
    text[stop[unit] - 2] = ord(",")
    return text.tobytes()


def _lines(block: bytes, ends: np.ndarray, offsets: list[int]) -> bytes:
    """The block's lines at 0-based ``offsets``, as a new block."""
    starts = np.concatenate(([0], ends[:-1] + 1))
    return b"".join(block[starts[i] : ends[i]] + b"\n" for i in offsets)


def _typed_block(path: Path, block: bytes, first_line: int, ends: np.ndarray, layout: _Layout) -> pl.DataFrame:
    """One block of lines -> source_row, raw timestamp text, ts, channel, power_w (null where unreadable).

    Index and power come from the CSV reader's own number parsing where the layout allows; the
    few lines it cannot read ([N/A], odd spacing, garbage) are read again as text, so that their
    rejects quote the text and nothing readable is lost.
    """
    if layout.fast:
        frame = _read(path, first_line, _cut_units(block, ends), layout, typed=True)
    else:
        frame = _read(path, first_line, block, layout, typed=False)
    if frame.height != len(ends):
        # source_row must be the line number: refuse rather than misnumber.
        raise SourceParseError(path, first_line, f"read {frame.height} records from {len(ends)} lines: cannot number the rows by line")
    frame = frame.with_row_index("source_row", offset=first_line)
    frame = frame.filter(pl.any_horizontal(pl.col(_T, _I, _P).is_not_null()))
    if layout.fast:
        frame = frame.with_columns(
            pl.col(_I).replace_strict(_INDEXES, _CHANNEL_NAMES, default=None, return_dtype=CHANNELS).alias("channel"),
            pl.when(pl.col(_P).is_finite()).then(pl.col(_P)).alias("power_w"),
            pl.lit(None, dtype=pl.String).alias(_I),
            pl.lit(None, dtype=pl.String).alias(_P),
        )
        redo = pl.col("channel").is_null() | pl.col("power_w").is_null()
        again = frame.filter(redo).get_column("source_row")
        if again.len():
            text = _from_text(_read(path, first_line, _lines(block, ends, (again - first_line).to_list()), layout, typed=False))
            text = text.with_columns(again.alias("source_row")).select(frame.columns)
            frame = pl.concat([frame.filter(~redo), text]).sort("source_row")
    else:
        frame = _from_text(frame)
    naive = _naive_times(pl.col(_T)).alias("naive")
    frame = frame.with_columns(naive)
    if frame.select((pl.col("naive").is_null() & pl.col(_T).is_not_null()).any()).item():
        frame = frame.with_columns(pl.coalesce("naive", _general_times(pl.col(_T))).alias("naive"))
    # Local times far outside [EARLIEST, LATEST) are unreadable times (null) before any zone
    # arithmetic: a mutated year such as -12023 has no Python datetime.
    lo, hi = (EARLIEST - dt.timedelta(days=1)).replace(tzinfo=None), (LATEST + dt.timedelta(days=1)).replace(tzinfo=None)
    frame = frame.with_columns(pl.when(pl.col("naive").is_between(pl.lit(lo), pl.lit(hi))).then(pl.col("naive")).alias("naive"))
    frame = frame.with_columns(_to_utc(pl.col("naive"), layout.zone).alias("ts"))
    span = frame.select(pl.col("naive").min().alias("first"), pl.col("naive").max().alias("last")).row(0)
    if _may_change_offset(layout.zone, *span):
        # Around a fall-back the repeated hour reads two ways; keep the standard-time reading
        # of those lines for resolve_repeated_hour (null elsewhere).
        late = _to_utc(pl.col("naive"), layout.zone, "latest")
        frame = frame.with_columns(pl.when(late != pl.col("ts")).then(late).alias("ts_late"))
    else:
        frame = frame.with_columns(pl.lit(None, dtype=frame.schema["ts"]).alias("ts_late"))
    first, last = frame.select(pl.col("ts").min().alias("first"), pl.col("ts").max().alias("last")).row(0)
    if first is not None and (first < EARLIEST or last >= LATEST):
        frame = frame.with_columns(pl.when(pl.col("ts").is_between(pl.lit(EARLIEST), pl.lit(LATEST), closed="left")).then(pl.col("ts")).alias("ts"))
    return frame


def _parse_block(path: Path, block: bytes, first_line: int, ends: np.ndarray, layout: _Layout) -> tuple[pl.DataFrame, list[Reject]]:
    """One block -> (valid rows: source_row, ts, channel, power_w; rejects of the others)."""
    frame = _typed_block(path, block, first_line, ends, layout)
    failed = pl.col("ts").is_null() | pl.col("channel").is_null() | pl.col("power_w").is_null()
    rejects: list[Reject] = []
    if frame.select(failed.any()).item():
        # Turn the failed rows into Python objects at once: their raw strings would
        # otherwise keep this block's whole text buffer alive.
        rejects = _rejects(frame.filter(failed), layout.power_name, layout.zone)
        frame = frame.filter(~failed)
    return frame.select("source_row", "ts", "ts_late", "channel", "power_w"), rejects


def _rejects(bad: pl.DataFrame, power_name: str, zone: str) -> list[Reject]:
    """One Reject per unreadable cell of the (few) failed rows."""
    out: list[Reject] = []
    for row in bad.iter_rows(named=True):
        line = row["source_row"]
        stamp = row[_T]
        if stamp is None or not stamp.strip():
            out.append(Reject(line, _T, "not_nullable", None, "timestamp: a value is required but the cell is empty"))
        elif row["naive"] is None:
            out.append(Reject(line, _T, "parse", stamp.strip(), f"timestamp: cannot read {stamp.strip()!r} as a local time YYYY/MM/DD HH:MM:SS.fff"))
        elif row["ts"] is None:
            naive = row["naive"]
            if naive.year < EARLIEST.year or naive.year >= LATEST.year:
                out.append(Reject(line, _T, "in_range", stamp.strip(), f"timestamp: {stamp.strip()} is outside {EARLIEST.year}-{LATEST.year - 1}"))
            else:
                out.append(
                    Reject(
                        line,
                        _T,
                        "nonexistent_local_time",
                        stamp.strip(),
                        f"timestamp: {stamp.strip()} does not exist in {zone} (the clocks skipped it at a daylight-saving change)",
                    )
                )
        text = row[_I]
        if row["channel"] is None and (text is None or not text.strip()):
            out.append(Reject(line, _I, "not_nullable", None, "index: a value is required but the cell is empty"))
        elif row["channel"] is None:
            out.append(Reject(line, _I, "parse", text.strip(), f"index: cannot read {text.strip()!r} as a GPU index 0-{MAX_GPU_INDEX}"))
        power = row[_P]
        if row["power_w"] is None and (power is None or not power.strip()):
            out.append(Reject(line, power_name, "not_nullable", None, f"{power_name}: a value is required but the cell is empty"))
        elif row["power_w"] is None:
            value = power.strip()
            if value.startswith("[") and value.endswith("]"):
                reason = f"{power_name}: nvidia-smi reported {value}, i.e. N/A: the sensor gave no reading for this sample"
            else:
                reason = f"{power_name}: cannot read {value!r} as a finite power in W"
            out.append(Reject(line, power_name, "parse", value, reason))
    return out


#: The typed rows of a block before the log-wide checks (see :func:`typed_blocks`).
TYPED_SCHEMA: dict[str, pl.DataType] = {
    "source_row": pl.UInt32(),
    "ts": pl.Datetime("ms", "UTC"),
    "ts_late": pl.Datetime("ms", "UTC"),
    "channel": CHANNELS,
    "power_w": pl.Float64(),
}


def layout_of(path: Path, options: Mapping[str, Any]) -> _Layout:
    """The file's header, read and checked (raises SourceParseError), and how its blocks are read."""
    zone = timezone_option(path, options, required=True) or "UTC"
    names, _, crlf = _header(path)
    t_pos, i_pos, p_pos, power_name = _positions(path, names)
    return _Layout(names=names, power_name=power_name, take=[t_pos, i_pos, p_pos], zone=zone, fast=p_pos == len(names) - 1, crlf=crlf)


def typed_blocks(path: Path, layout: _Layout, block_bytes: int = BLOCK_BYTES, in_flight: int | None = None) -> Iterator[tuple[pl.DataFrame, list[Reject]]]:
    """(typed rows, rejects) of each block of about ``block_bytes``, in file order.

    The rows have :data:`TYPED_SCHEMA` (``ts`` read with the earlier offset of a repeated
    hour, ``ts_late`` the later one where the local time is ambiguous); the log-wide checks
    (repeated hour, plausibility) are not applied yet. Blocks are parsed two (or more) at a
    time while the next is read; at most ``in_flight`` blocks (default: the thread pool's
    size plus two, at least four) are in flight, so memory does not grow with the file.
    """
    _, header_bytes, _ = _header(path)
    workers = in_flight or max(4, pl.thread_pool_size() + 2)  # threads and blocks in flight
    with ThreadPoolExecutor(max_workers=workers) as pool:
        pending: deque[Future[tuple[pl.DataFrame, list[Reject]]]] = deque()
        for first_line, ends, block in _blocks(path, header_bytes, block_bytes):
            pending.append(pool.submit(_parse_block, path, block, first_line, ends, layout))
            while len(pending) > workers:
                yield pending.popleft().result()
        while pending:
            yield pending.popleft().result()


def parse_nvidia_smi(path: Path, options: Mapping[str, Any]) -> Parsed:
    """Parse an nvidia-smi CSV power log into power_samples rows (one run)."""
    run = run_options(path, options)
    layout = layout_of(path, options)
    zone = layout.zone
    parts: list[pl.DataFrame] = []
    rejects: list[Reject] = []
    for frame, bad in typed_blocks(path, layout):
        parts.append(frame)
        rejects.extend(bad)
    if parts:
        typed = pl.concat(parts, how="vertical", rechunk=False)
    else:
        typed = pl.DataFrame(schema=TYPED_SCHEMA)
    typed, bad = resolve_repeated_hour(typed, zone, label=_T)
    rejects.extend(bad)
    frame = typed.select(
        pl.lit(run.run_id).alias("run_id"),
        "ts",
        "channel",
        "power_w",
        pl.lit(True).alias("counts_to_total"),
        "source_row",
    )
    frame, bad = check_samples(frame, kind="nvidia_smi", options=options, labels={"ts": _T, "power_w": layout.power_name})
    rejects.extend(bad)
    return Parsed(frame=frame, rejects=rejects)
