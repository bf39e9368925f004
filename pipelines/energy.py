"""Energy of benchmark runs from their power logs, and the pieces the power-log parsers share.

One power-log file is one training run. Its manifest entry's ``[source.options]`` describe the
run (:class:`RunOptions`). The parsers turn the file into ``staging.power_samples`` rows; this
module turns those samples into one ``staging.benchmark_runs`` row per run:

- **trapezoid** (every sampled format but RAPL): for each channel with ``counts_to_total``,
  the trapezoid integral of ``power_w`` over ``ts`` in seconds; the channels are summed.
  Rejected samples are simply absent, so the trapezoid spans the gap they leave.
- **counter** (RAPL): the log holds cumulative energy counters, so the energy is the sum of
  the counter increments, i.e. the sum of ``power_w x interval_s`` over the counted channels.

The duration is the last minus the first timestamp of the run (for counters, the first
reading, which opens the first interval). An optional idle baseline (W) is subtracted times
the duration: ``energy_j = energy_gross_j - idle_baseline_w x duration_s``.

:func:`t_quantile` gives the Student-t critical value that ``staging.benchmark_series`` binds
into its SQL (DuckDB has no t quantile).
"""

from __future__ import annotations

import datetime as dt
import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl

from pipelines.errors import SourceParseError
from pipelines.quarantine import Reject

#: Formats whose samples are power averaged from energy counters (integrated by summing).
COUNTER_FORMATS = frozenset({"rapl"})
#: Timestamps outside these bounds are rejected by the parsers as implausible for a log.
EARLIEST = dt.datetime(1970, 1, 1, tzinfo=dt.UTC)
LATEST = dt.datetime(2100, 1, 1, tzinfo=dt.UTC)
_EPOCH = dt.datetime(1970, 1, 1, tzinfo=dt.UTC)

_RUN_COLUMNS: dict[str, pl.DataType] = {
    "run_id": pl.String(),
    "started_at": pl.Datetime("us", "UTC"),
    "ended_at": pl.Datetime("us", "UTC"),
    "duration_s": pl.Float64(),
    "energy_gross_j": pl.Float64(),
    "idle_baseline_w": pl.Float64(),
    "energy_j": pl.Float64(),
    "n_samples": pl.Int64(),
}
_CHANNEL_COLUMNS: dict[str, pl.DataType] = {
    "run_id": pl.String(),
    "channel": pl.String(),
    "started_at": pl.Datetime("us", "UTC"),
    "ended_at": pl.Datetime("us", "UTC"),
    "duration_s": pl.Float64(),
    "energy_j": pl.Float64(),
    "n_samples": pl.Int64(),
}


# --- manifest options of a run ------------------------------------------------------------


@dataclass(frozen=True)
class RunOptions:
    """What a power log's manifest options say about its run."""

    run_id: str
    device_id: str | None = None
    model: str | None = None
    workload: str | None = None
    series_id: str | None = None
    idle_baseline_w: float | None = None
    is_synthetic: bool = False


def _text_option(path: Path, options: Mapping[str, Any], key: str) -> str | None:
    value = options.get(key)
    if value is None:
        return None
    if not isinstance(value, str) or not value.strip():
        raise SourceParseError(path, None, f"manifest option {key} must be a non-empty string, got {value!r}")
    return value.strip()


def run_options(path: Path, options: Mapping[str, Any]) -> RunOptions:
    """Read and type-check the run options; ``run_id`` defaults to the file's stem."""
    baseline = options.get("idle_baseline_w")
    if baseline is not None:
        if isinstance(baseline, bool) or not isinstance(baseline, int | float) or not math.isfinite(baseline) or baseline < 0:
            raise SourceParseError(path, None, f"manifest option idle_baseline_w must be a number >= 0 (W), got {baseline!r}")
        baseline = float(baseline)
    synthetic = options.get("is_synthetic", False)
    if not isinstance(synthetic, bool):
        raise SourceParseError(path, None, f"manifest option is_synthetic must be true or false, got {synthetic!r}")
    return RunOptions(
        run_id=_text_option(path, options, "run_id") or path.stem,
        device_id=_text_option(path, options, "device_id"),
        model=_text_option(path, options, "model"),
        workload=_text_option(path, options, "workload"),
        series_id=_text_option(path, options, "series_id"),
        idle_baseline_w=baseline,
        is_synthetic=synthetic,
    )


def require_option(path: Path, options: Mapping[str, Any], key: str, meaning: str) -> str:
    """A required text option, or :class:`SourceParseError` saying what it is for."""
    value = _text_option(path, options, key)
    if value is None:
        raise SourceParseError(path, None, f"manifest option {key} is required for this format: {meaning}")
    return value


def timezone_option(path: Path, options: Mapping[str, Any], *, required: bool) -> str | None:
    """The IANA time zone named by option ``timezone`` (checked), or None if absent and optional."""
    from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

    zone = _text_option(path, options, "timezone")
    if zone is None:
        if required:
            raise SourceParseError(
                path, None, "manifest option timezone is required: the log's timestamps are local time with no zone (e.g. 'Europe/London')"
            )
        return None
    try:
        ZoneInfo(zone)
    except (ZoneInfoNotFoundError, ValueError) as exc:
        raise SourceParseError(path, None, f"manifest option timezone {zone!r} is not an IANA time zone") from exc
    return zone


def instant_option(path: Path, options: Mapping[str, Any], key: str) -> dt.datetime:
    """A required ISO-8601 instant option, as an aware UTC datetime (no offset means UTC)."""
    raw = options.get(key)
    if isinstance(raw, dt.datetime):
        value = raw
    elif isinstance(raw, str):
        try:
            value = dt.datetime.fromisoformat(raw.strip())
        except ValueError as exc:
            raise SourceParseError(path, None, f"manifest option {key} {raw!r} is not an ISO-8601 date-time") from exc
    else:
        raise SourceParseError(path, None, f"manifest option {key} is required: the ISO-8601 UTC time the capture started")
    value = value.replace(tzinfo=dt.UTC) if value.tzinfo is None else value.astimezone(dt.UTC)
    return value


# --- checked cells (shared by the CSV power-log parsers) -----------------------------------


def finite_number(expr: pl.Expr) -> pl.Expr:
    """a finite number"""
    value = expr.str.strip_chars().cast(pl.Float64, strict=False)
    return pl.when(value.is_finite()).then(value)


def whole_number(expr: pl.Expr) -> pl.Expr:
    """an integer"""
    return expr.str.strip_chars().cast(pl.Int64, strict=False)


def require_cells(frame: pl.DataFrame, columns: Iterable[str]) -> tuple[pl.DataFrame, list[Reject]]:
    """Reject (and remove) the rows whose text cell in any of ``columns`` is empty."""
    rejects: list[Reject] = []
    empty_any = pl.lit(False)
    for name in columns:
        empty = pl.col(name).is_null() | (pl.col(name).str.strip_chars() == "")
        empty_any = empty_any | empty
        for (row,) in frame.filter(empty).select("source_row").iter_rows():
            rejects.append(Reject(row, name, "not_nullable", None, f"{name}: a value is required but the cell is empty"))
    return frame.filter(~empty_any), rejects


def rejects_where(
    frame: pl.DataFrame, mask: pl.Expr, *, column: str | None, check: str, value: str | None, reason: str
) -> tuple[pl.DataFrame, list[Reject]]:
    """Reject (and remove) the rows where ``mask`` holds.

    ``value`` names a column whose text becomes the reject's value; ``reason`` is a format
    string over the row's columns (e.g. ``"current_now {current_now} has the charging sign"``).
    """
    hits = frame.filter(mask)
    rejects = [
        Reject(row["source_row"], column, check, None if value is None or row[value] is None else str(row[value]), reason.format(**row))
        for row in hits.iter_rows(named=True)
    ]
    return (frame.filter(~mask) if hits.height else frame), rejects


# --- local clock times ----------------------------------------------------------------------


def resolve_repeated_hour(
    frame: pl.DataFrame, zone: str, *, label: str = "timestamp"
) -> tuple[pl.DataFrame, list[Reject]]:
    """Place the local times of a daylight-saving fall-back by the log's order.

    ``frame`` (in file order) has ``ts`` (UTC, read with the earlier, summer-time offset) and
    ``ts_late`` (UTC with the later, standard-time offset where the local time is ambiguous,
    else null). A local time in the repeated hour is read in summer time on the first pass
    and in standard time once the log has stepped back, i.e. when summer time would put it
    before the reading on the line above it. If some ambiguous time fits neither reading
    (the log is not in time order across the repeated hour), which pass each ambiguous line
    belongs to is unknown: all of them are rejected (check ``ambiguous_local_time``) rather
    than shifted. Returns the frame without ``ts_late``, and the rejects.
    """
    late_col = frame.get_column("ts_late")
    if late_col.null_count() == frame.height:
        return frame.drop("ts_late"), []
    early = frame.get_column("ts").dt.epoch("us").to_numpy().copy()
    late = late_col.dt.epoch("us").fill_null(0).to_numpy()
    ambiguous = np.flatnonzero(late_col.is_not_null().to_numpy())
    unordered = []
    for i in ambiguous:
        if i == 0 or early[i] >= early[i - 1]:
            continue
        if late[i] >= early[i - 1]:
            early[i] = late[i]
        else:
            unordered.append(int(i))
    if unordered:
        local = frame[ambiguous].select(
            "source_row", pl.col("ts").dt.convert_time_zone(zone).dt.strftime("%Y-%m-%d %H:%M:%S%.f").alias("local")
        )
        rejects = [
            Reject(
                row, label, "ambiguous_local_time", text,
                f"{label}: {text} occurs twice in {zone} (the clocks went back) and the log is not in time order "
                "across the repeated hour, so which pass this line belongs to cannot be told",
            )
            for row, text in local.iter_rows()
        ]
        keep = np.ones(frame.height, dtype=bool)
        keep[ambiguous] = False
        return frame.filter(pl.Series(keep)).drop("ts_late"), rejects
    dtype = frame.schema["ts"]
    resolved = pl.Series("ts", early).cast(pl.Datetime("us")).dt.replace_time_zone("UTC").cast(dtype)
    return frame.with_columns(resolved).drop("ts_late"), []


# --- integration ---------------------------------------------------------------------------


def _trapezoid(rows: pl.DataFrame) -> float:
    """Trapezoid integral of ``power_w`` (W) over ``ts`` (s) of one channel, sorted by time first."""
    if rows.height < 2:
        return 0.0
    if not rows.get_column("ts").is_sorted():
        rows = rows.sort("ts", maintain_order=True)
    micros = rows.get_column("ts").dt.epoch("us").to_numpy()
    watts = rows.get_column("power_w").to_numpy()
    return float(np.dot(watts[1:] + watts[:-1], np.diff(micros).astype(np.float64)) / 2e6)


@dataclass
class _Running:
    """A channel's integral so far, while its samples are read slice by slice."""

    first_us: int
    last_us: int
    last_w: float
    n: int = 0
    energy_j: float = 0.0
    in_order: bool = True

    def add(self, micros: np.ndarray, watts: np.ndarray) -> None:
        """Extend the integral with the next samples (in file order)."""
        steps = np.diff(micros)
        gap = int(micros[0]) - self.last_us
        if gap < 0 or (len(steps) and steps.min() < 0):
            self.in_order = False
        if self.n:
            self.energy_j += (float(watts[0]) + self.last_w) * gap / 2e6
        if len(steps):
            self.energy_j += float(np.dot(watts[1:] + watts[:-1], steps.astype(np.float64))) / 2e6
        self.n += len(micros)
        self.last_us, self.last_w = int(micros[-1]), float(watts[-1])


#: Rows per slice when integrating: bounds the temporary arrays to a few MB.
SLICE_ROWS = 1 << 19
#: Up to this many runs are cut out of a frame by filtering; more are partitioned.
_FILTER_RUNS = 8


def _runs(samples: pl.DataFrame) -> list[tuple[Any, pl.DataFrame]]:
    """(run_id, rows without run_id) per run, in order of first appearance."""
    run_ids = samples.select(pl.col("run_id").unique(maintain_order=True)).to_series().to_list()
    if len(run_ids) == 1:
        return [(run_ids[0], samples.drop("run_id"))]
    if len(run_ids) <= _FILTER_RUNS:
        return [(run_id, samples.filter(pl.col("run_id") == run_id).drop("run_id")) for run_id in run_ids]
    parts = samples.partition_by("run_id", maintain_order=True, include_key=False, as_dict=True)
    return [(key[0], rows) for key, rows in parts.items()]


def _channel_energies(samples: pl.DataFrame) -> list[dict[str, Any]]:
    """Trapezoid energy, time span and sample count of every (run_id, channel).

    Each run is read in slices of :data:`SLICE_ROWS` rows, each channel's integral carried
    from slice to slice, so no full-length copy is made however many channels interleave.
    A channel whose samples are not in time order is integrated again from a sorted copy.
    """
    out = []
    for run_id, rows in _runs(samples):
        if not isinstance(rows.schema["channel"], pl.Categorical | pl.Enum):
            rows = rows.with_columns(pl.col("channel").cast(pl.String).cast(pl.Categorical))
        names: dict[int, str] = {}
        running: dict[int, _Running] = {}
        for offset in range(0, rows.height, SLICE_ROWS):
            piece = rows.slice(offset, SLICE_ROWS)
            channel = piece.get_column("channel")
            codes = channel.to_physical().to_numpy()
            micros = piece.get_column("ts").dt.epoch("us").to_numpy()
            watts = piece.get_column("power_w").to_numpy()
            distinct = channel.unique(maintain_order=True)
            present = list(zip(distinct.to_physical().to_list(), distinct.cast(pl.String).to_list(), strict=True))
            for code, name in present:
                names.setdefault(code, name)
                mask = codes == code
                t, w = (micros, watts) if len(present) == 1 else (micros[mask], watts[mask])
                state = running.get(code)
                if state is None:
                    state = running[code] = _Running(first_us=int(t[0]), last_us=int(t[0]), last_w=float(w[0]))
                state.add(t, w)
        for code, state in running.items():
            if state.in_order:
                first, last, energy = state.first_us, state.last_us, state.energy_j
            else:
                part = rows.filter(pl.col("channel").to_physical() == code).select("ts", "power_w")
                micros_all = part.get_column("ts").dt.epoch("us")
                first, last, energy = int(micros_all.min()), int(micros_all.max()), _trapezoid(part)  # type: ignore[arg-type]
            out.append(
                {
                    "run_id": run_id,
                    "channel": names[code],
                    "started_at": _EPOCH + dt.timedelta(microseconds=first),
                    "ended_at": _EPOCH + dt.timedelta(microseconds=last),
                    "energy_j": energy,
                    "n_samples": state.n,
                }
            )
    return out


def _baseline_of(run_id: str, idle_baseline_w: float | Mapping[str, float] | None) -> float | None:
    if idle_baseline_w is None or isinstance(idle_baseline_w, int | float):
        return None if idle_baseline_w is None else float(idle_baseline_w)
    value = idle_baseline_w.get(run_id)
    return None if value is None else float(value)


def integrate(
    samples: pl.DataFrame,
    *,
    idle_baseline_w: float | Mapping[str, float] | None = None,
    per_channel: bool = False,
) -> pl.DataFrame:
    """Trapezoid energy of each run in a ``power_samples`` frame.

    Returns one row per ``run_id``: ``started_at``, ``ended_at``, ``duration_s`` (last minus
    first timestamp of the run, all channels), ``energy_gross_j`` (the counted channels'
    integrals summed), ``idle_baseline_w``, ``energy_j`` (gross minus baseline x duration)
    and ``n_samples`` (readings of the counted channels). ``idle_baseline_w`` is one value
    for every run or a ``{run_id: W}`` mapping.

    With ``per_channel=True`` it returns one row per (``run_id``, counted ``channel``)
    instead, each with its own time span, ``energy_j`` and ``n_samples``, and no baseline.
    """
    counted = samples.select("run_id", "channel", "ts", "power_w", "counts_to_total")
    if any(counted.get_column(name).null_count() for name in ("ts", "power_w", "counts_to_total")):
        counted = counted.drop_nulls(["ts", "power_w", "counts_to_total"])
    if not counted.get_column("counts_to_total").all():
        counted = counted.filter(pl.col("counts_to_total"))
    per = _channel_energies(counted.drop("counts_to_total"))
    channels = pl.DataFrame(per, schema={k: v for k, v in _CHANNEL_COLUMNS.items() if k != "duration_s"})
    channels = channels.with_columns(
        ((pl.col("ended_at") - pl.col("started_at")).dt.total_microseconds() / 1e6).alias("duration_s")
    ).select(list(_CHANNEL_COLUMNS))
    if per_channel:
        return channels
    spans = samples.group_by("run_id", maintain_order=True).agg(
        pl.col("ts").min().alias("started_at"), pl.col("ts").max().alias("ended_at")
    )
    totals = channels.group_by("run_id", maintain_order=True).agg(
        pl.col("energy_j").sum().alias("energy_gross_j"), pl.col("n_samples").sum()
    )
    return _finish_runs(spans.join(totals, on="run_id", how="inner", maintain_order="left"), idle_baseline_w)


def counter_energy(
    samples: pl.DataFrame, *, idle_baseline_w: float | Mapping[str, float] | None = None
) -> pl.DataFrame:
    """Energy of counter-derived samples (RAPL): sum of ``power_w x interval_s``, counted channels.

    Same output as :func:`integrate`. The run starts at its earliest ``ts - interval_s`` (the
    first counter reading) and ends at its last ``ts``.
    """
    if samples.get_column("interval_s").null_count():
        raise ValueError("counter_energy needs interval_s on every sample (counter-derived power)")
    start = pl.col("ts") - pl.duration(microseconds=(pl.col("interval_s") * 1e6).round(0).cast(pl.Int64))
    counted = pl.col("counts_to_total")
    runs = samples.group_by("run_id", maintain_order=True).agg(
        start.min().alias("started_at"),
        pl.col("ts").max().alias("ended_at"),
        (pl.col("power_w") * pl.col("interval_s")).filter(counted).sum().alias("energy_gross_j"),
        counted.sum().cast(pl.Int64).alias("n_samples"),
    )
    return _finish_runs(runs.filter(pl.col("n_samples") > 0), idle_baseline_w)


def _finish_runs(runs: pl.DataFrame, idle_baseline_w: float | Mapping[str, float] | None) -> pl.DataFrame:
    baselines = [_baseline_of(run_id, idle_baseline_w) for run_id in runs.get_column("run_id").to_list()]
    out = runs.with_columns(
        pl.col("started_at").cast(pl.Datetime("us", "UTC")),
        pl.col("ended_at").cast(pl.Datetime("us", "UTC")),
        pl.Series("idle_baseline_w", baselines, dtype=pl.Float64),
    ).with_columns(((pl.col("ended_at") - pl.col("started_at")).dt.total_microseconds() / 1e6).alias("duration_s"))
    out = out.with_columns(
        (pl.col("energy_gross_j") - pl.col("idle_baseline_w").fill_null(0.0) * pl.col("duration_s")).alias("energy_j"),
        pl.col("n_samples").cast(pl.Int64),
    )
    return out.select([pl.col(name).cast(dtype) for name, dtype in _RUN_COLUMNS.items()])


def runs_from_samples(samples: pl.DataFrame, options: RunOptions, *, log_format: str) -> pl.DataFrame:
    """``staging.benchmark_runs`` rows (without provenance) for the runs in a samples frame.

    ``log_format`` (the manifest kind) picks the method: counters for RAPL, trapezoid
    otherwise. Device, model, workload, series and synthetic flag come from ``options``.
    """
    method = "counter" if log_format in COUNTER_FORMATS else "trapezoid"
    if samples.height == 0:
        energies = pl.DataFrame(schema=_RUN_COLUMNS)
    elif method == "counter":
        energies = counter_energy(samples, idle_baseline_w=options.idle_baseline_w)
    else:
        energies = integrate(samples, idle_baseline_w=options.idle_baseline_w)
    return energies.select(
        "run_id",
        pl.lit(options.series_id, dtype=pl.String).alias("series_id"),
        pl.lit(options.device_id, dtype=pl.String).alias("device_id"),
        pl.lit(options.model, dtype=pl.String).alias("model"),
        pl.lit(options.workload, dtype=pl.String).alias("workload"),
        "started_at",
        "duration_s",
        "energy_j",
        "energy_gross_j",
        "idle_baseline_w",
        (pl.col("energy_j") / pl.col("duration_s")).alias("mean_power_w"),
        "n_samples",
        pl.lit(method).alias("energy_method"),
        pl.lit(log_format).alias("log_format"),
        pl.lit(options.is_synthetic).alias("is_synthetic"),
    )


# --- Student t ------------------------------------------------------------------------------


def t_two_sided_mass(t: float, df: int) -> float:
    """P(|T| <= t) for Student's t with ``df`` (integer >= 1) degrees of freedom.

    The closed forms for integer degrees of freedom (Abramowitz & Stegun 26.7.3-4): with
    theta = atan(t / sqrt(df)), a finite series in cos(theta)^2.
    """
    if df < 1:
        raise ValueError("degrees of freedom must be >= 1")
    theta = math.atan(t / math.sqrt(df))
    c2 = math.cos(theta) ** 2
    if df % 2 == 1:
        if df == 1:
            return 2 * theta / math.pi
        term, total = 1.0, 1.0
        for k in range(1, (df - 1) // 2):
            term *= c2 * (2 * k) / (2 * k + 1)
            total += term
        return 2 / math.pi * (theta + math.sin(theta) * math.cos(theta) * total)
    term, total = 1.0, 1.0
    for k in range(1, df // 2):
        term *= c2 * (2 * k - 1) / (2 * k)
        total += term
    return math.sin(theta) * total


def t_quantile(df: int, confidence: float = 0.95) -> float:
    """Two-sided Student-t critical value: the t with P(|T| <= t) = ``confidence``.

    For the 95% CI of a mean of n runs use ``t_quantile(n - 1)`` (= t(0.975, n - 1)).
    Solved by bisection on :func:`t_two_sided_mass` to ~1e-12; for df > 20000 the
    Cornish-Fisher expansion about the normal quantile z (terms to df^-3, Abramowitz &
    Stegun 26.7.5) is used, accurate there to ~1e-15.
    """
    if df < 1:
        raise ValueError("degrees of freedom must be >= 1")
    if not 0 < confidence < 1:
        raise ValueError("confidence must lie in (0, 1)")
    if df > 20000:
        z = _normal_quantile((1 + confidence) / 2)
        return (
            z
            + (z**3 + z) / (4 * df)
            + (5 * z**5 + 16 * z**3 + 3 * z) / (96 * df**2)
            + (3 * z**7 + 19 * z**5 + 17 * z**3 - 15 * z) / (384 * df**3)
        )
    low, high = 0.0, 1.0
    while t_two_sided_mass(high, df) < confidence:
        high *= 2
    for _ in range(200):
        mid = (low + high) / 2
        if t_two_sided_mass(mid, df) < confidence:
            low = mid
        else:
            high = mid
        if high - low < 1e-13 * max(1.0, high):
            break
    return (low + high) / 2


def _normal_quantile(p: float) -> float:
    """Standard normal quantile by bisection on the error function."""
    low, high = -40.0, 40.0
    for _ in range(200):
        mid = (low + high) / 2
        if 0.5 * math.erfc(-mid / math.sqrt(2)) < p:
            low = mid
        else:
            high = mid
    return (low + high) / 2


def reported_runs(
    frame: pl.DataFrame,
    run: RunOptions,
    *,
    run_id: pl.Expr,
    device_id: pl.Expr,
    model: pl.Expr,
    workload: pl.Expr,
    started_at: pl.Expr,
    duration_s: pl.Expr,
    energy_j: pl.Expr,
    energy_method: str,
    log_format: str,
) -> pl.DataFrame:
    """benchmark_runs rows for formats that report one energy per run (no power samples).

    The columns that vary by format are passed as expressions; the rest (series, no idle
    baseline, no sample count, gross = net energy) are the same for every such format.
    """
    return frame.select(
        run_id.alias("run_id"),
        pl.lit(run.series_id, dtype=pl.String).alias("series_id"),
        device_id.alias("device_id"),
        model.alias("model"),
        workload.alias("workload"),
        started_at.cast(pl.Datetime("us", "UTC")).alias("started_at"),
        duration_s.alias("duration_s"),
        energy_j.alias("energy_j"),
        energy_j.alias("energy_gross_j"),
        pl.lit(None, dtype=pl.Float64).alias("idle_baseline_w"),
        (energy_j / duration_s).alias("mean_power_w"),
        pl.lit(None, dtype=pl.Int64).alias("n_samples"),
        pl.lit(energy_method).alias("energy_method"),
        pl.lit(log_format).alias("log_format"),
        pl.lit(run.is_synthetic).alias("is_synthetic"),
        "source_row",
    )
