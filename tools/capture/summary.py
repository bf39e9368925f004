"""What a written log holds, read with the standard library only: its samples, span and energy.

The capture records this for every phase in the run manifest while it runs, without the
warehouse's parsers (those are not installed where the GPU is). It integrates as the warehouse
does: the trapezoid over ``nvidia_smi`` power readings (at their millisecond timestamps), the
counter's increase for ``rapl`` (with its wrap). Other formats (``powermetrics``,
``android_sysfs``) record their sample count here and are read back by ``register``, which
parses every log with the warehouse's own parser before it registers anything.
"""

from __future__ import annotations

import csv
import datetime as dt
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo


def _nvidia_smi(path: Path, timezone: str) -> list[tuple[float, float]]:
    """(seconds since the first reading, watts) of each reading: times from whole-millisecond stamps, exactly."""
    zone = ZoneInfo(timezone)
    out = []
    first = None
    with path.open(encoding="utf-8", newline="") as handle:
        rows = csv.reader(handle, skipinitialspace=True)
        next(rows, None)
        for row in rows:
            moment = dt.datetime.strptime(row[0], "%Y/%m/%d %H:%M:%S.%f").replace(tzinfo=zone)
            first = first or moment
            out.append(((moment - first).total_seconds(), float(row[3].removesuffix("W").strip())))
    return out


def _rapl(path: Path) -> tuple[int, float, float]:
    """(samples, span in s, energy in J) of a RAPL counter log, summed over its domains."""
    by_domain: dict[str, list[tuple[int, int, int]]] = {}
    with path.open(encoding="utf-8", newline="") as handle:
        for row in csv.DictReader(handle):
            by_domain.setdefault(row["domain"], []).append((int(row["timestamp_ns"]), int(row["energy_uj"]), int(row["max_energy_range_uj"])))
    energy_uj = 0
    stamps: list[int] = []
    for readings in by_domain.values():
        stamps += [r[0] for r in readings]
        for (_, before, _), (_, after, wrap) in zip(readings, readings[1:], strict=False):
            energy_uj += after - before if after >= before else after + wrap - before
    samples = max((len(r) for r in by_domain.values()), default=0)
    span = (max(stamps) - min(stamps)) / 1e9 if stamps else 0.0
    return samples, span, energy_uj / 1e6


def log_summary(path: Path, kind: str, options: dict[str, Any]) -> dict[str, Any]:
    """``samples``, ``duration_s``, ``energy_j`` and ``mean_power_w`` of a log (the last three where
    the format is integrated here), with ``read_by`` naming how."""
    if kind == "nvidia_smi":
        readings = _nvidia_smi(path, str(options.get("timezone") or "UTC"))
        energy = sum((p0 + p1) / 2 * (t1 - t0) for (t0, p0), (t1, p1) in zip(readings, readings[1:], strict=False))
        span = readings[-1][0] - readings[0][0] if readings else 0.0
    elif kind == "rapl":
        samples, span, energy = _rapl(path)
        return _summary(samples, span, energy, "rapl counter increase")
    else:
        lines = path.read_text(encoding="utf-8").splitlines()
        return {"samples": max(len(lines) - 1, 0), "read_by": f"{kind}: integrated by `register`, which parses the log"}
    return _summary(len(readings), span, energy, "trapezoid over power readings")


def _summary(samples: int, span: float, energy: float, how: str) -> dict[str, Any]:
    return {
        "samples": samples,
        "duration_s": span,
        "energy_j": energy,
        "mean_power_w": energy / span if span > 0 else None,
        "read_by": f"{how} (standard library; `register` reads it again with the warehouse's parser)",
    }
