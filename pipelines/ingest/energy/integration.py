"""Energy of a run from its power samples.

- **trapezoid** (every sampled format but RAPL): for each channel with ``counts_to_total``,
  the trapezoid integral of ``power_w`` over ``ts`` in seconds; the channels are summed.
  Rejected samples are simply absent, so the trapezoid spans the gap they leave.
- **counter** (RAPL): the log holds cumulative energy counters, so the energy is the sum of
  the counter increments, i.e. the sum of ``power_w x interval_s`` over the counted channels.

The duration is the last minus the first timestamp of the run (for counters, the first
reading, which opens the first interval). An optional idle baseline (W) is subtracted times
the duration: ``energy_j = energy_gross_j - idle_baseline_w x duration_s``.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import polars as pl

_EPOCH = dt.datetime(1970, 1, 1, tzinfo=dt.UTC)

RUN_COLUMNS: dict[str, pl.DataType] = {
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
    return out.select([pl.col(name).cast(dtype) for name, dtype in RUN_COLUMNS.items()])



class RunningIntegrals:
    """:func:`integrate` of one run whose samples arrive block by block (file order).

    Each block's samples are added per channel to a running trapezoid (:class:`_Running`), so
    no block is kept. Every channel's samples must come in time order across blocks (a
    streamed log's steps back are rejected before they get here); the counted channels only.
    """

    def __init__(self, run_id: str) -> None:
        self.run_id = run_id
        self._running: dict[str, _Running] = {}

    def add(self, channel: pl.Series, ts: pl.Series, power_w: pl.Series) -> None:
        """Add one block: the channel, time and power of its samples, in file order."""
        if channel.len() == 0:
            return
        codes = channel.cast(pl.String).cast(pl.Categorical)
        physical = codes.to_physical().to_numpy()
        micros = ts.dt.epoch("us").to_numpy()
        watts = power_w.to_numpy()
        distinct = codes.unique(maintain_order=True)
        present = list(zip(distinct.to_physical().to_list(), distinct.cast(pl.String).to_list(), strict=True))
        for code, name in present:
            t, w = (micros, watts) if len(present) == 1 else (micros[physical == code], watts[physical == code])
            state = self._running.get(name)
            if state is None:
                state = self._running[name] = _Running(first_us=int(t[0]), last_us=int(t[0]), last_w=float(w[0]))
            state.add(t, w)
            if not state.in_order:
                raise ValueError(f"channel {name} of run {self.run_id}: samples out of time order in a streamed log")

    @property
    def rows(self) -> int:
        """Samples added so far."""
        return sum(state.n for state in self._running.values())

    def per_channel(self) -> pl.DataFrame:
        """What ``integrate(samples, per_channel=True)`` returns for the samples added."""
        rows = [
            {
                "run_id": self.run_id,
                "channel": name,
                "started_at": _EPOCH + dt.timedelta(microseconds=state.first_us),
                "ended_at": _EPOCH + dt.timedelta(microseconds=state.last_us),
                "energy_j": state.energy_j,
                "n_samples": state.n,
            }
            for name, state in self._running.items()
        ]
        channels = pl.DataFrame(rows, schema={k: v for k, v in _CHANNEL_COLUMNS.items() if k != "duration_s"})
        return channels.with_columns(
            ((pl.col("ended_at") - pl.col("started_at")).dt.total_microseconds() / 1e6).alias("duration_s")
        ).select(list(_CHANNEL_COLUMNS))

    def runs(self, idle_baseline_w: float | Mapping[str, float] | None = None) -> pl.DataFrame:
        """What ``integrate(samples, idle_baseline_w=...)`` returns (one row, none without samples)."""
        if not self._running:
            return pl.DataFrame(schema=RUN_COLUMNS)
        first = min(state.first_us for state in self._running.values())
        last = max(state.last_us for state in self._running.values())
        run = pl.DataFrame(
            {
                "run_id": [self.run_id],
                "started_at": [_EPOCH + dt.timedelta(microseconds=first)],
                "ended_at": [_EPOCH + dt.timedelta(microseconds=last)],
                "energy_gross_j": [sum(state.energy_j for state in self._running.values())],
                "n_samples": [sum(state.n for state in self._running.values())],
            },
            schema={"run_id": pl.String, "started_at": pl.Datetime("us", "UTC"), "ended_at": pl.Datetime("us", "UTC"),
                    "energy_gross_j": pl.Float64, "n_samples": pl.Int64},
        )
        return _finish_runs(run, idle_baseline_w)
