"""macOS powermetrics text logs -> staging.power_samples.

The file is the output of ``sudo powermetrics --samplers cpu_power,gpu_power -i 1000``: a
preamble (machine model, OS version...) and then one block per sample, each opened by::

    *** Sampled system activity (Wed Jan 11 10:00:00 2023 -0800) (1000.52ms elapsed) ***

The block's time carries its UTC offset. Inside a block, the ``**** Processor usage ****``
section has ``CPU Power: 4500 mW``, ``GPU Power: 9000 mW``, ``ANE Power: 0 mW`` and
``Combined Power (CPU + GPU + ANE): 13500 mW``; the ``**** GPU usage ****`` section repeats
``GPU Power``, which is counted once (the block's first readable reading of each channel is
used; a later repeat is ignored).
Values are in mW, or in W on older macOS (``GPU Power: 9.0 W``). Every other line
(frequencies, residencies, per-core lines) is ignored.

Channels: ``cpu``, ``gpu``, ``ane`` (parts of the total, ``counts_to_total`` false) and
``combined`` (the total, ``counts_to_total`` true). A block without a Combined line gets a
derived ``combined`` = the sum of its CPU, GPU and ANE readings (those present), stamped with
the block's header line; if one of those readings is unreadable, no total is derived and the
block is rejected for it.

Rejected, with line and reason: a block whose time cannot be read (its readings are not
loaded), an unreadable power value, a power line outside any block, a block with no power
lines, and a block whose time repeats the previous block's (two totals at one instant).
A file with no sample block at all raises :class:`SourceParseError`.
"""

from __future__ import annotations

import datetime as dt
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import polars as pl

from pipelines.errors import SourceParseError
from pipelines.ingest.cells import EARLIEST, LATEST
from pipelines.ingest.options import run_options
from pipelines.ingest.plausibility import check_samples
from pipelines.ingest.quarantine import Reject
from pipelines.ingest.staging import Parsed

BLOCK_START = re.compile(r"^\*\*\* Sampled system activity \((?P<when>[^()]*)\)(?: \((?P<elapsed>[^()]*)\))? \*\*\*\s*$")
POWER_LINE = re.compile(r"^(?P<name>CPU|GPU|ANE|Combined) Power(?: \([^()]*\))?:\s*(?P<value>.*?)\s*$")
VALUE = re.compile(r"^(?P<number>[^\s]+)\s*(?P<unit>mW|W)$")
TIME_FORMAT = "%a %b %d %H:%M:%S %Y %z"
CHANNELS = {"CPU": "cpu", "GPU": "gpu", "ANE": "ane", "Combined": "combined"}
PARTS = ("cpu", "gpu", "ane")
LABELS = {"cpu": "CPU Power", "gpu": "GPU Power", "ane": "ANE Power", "combined": "Combined Power"}
BLOCK_LABEL = "Sampled system activity"


@dataclass
class _Block:
    """One sample block while it is being read."""

    line: int
    when: str
    readings: dict[str, tuple[int, float | None]] = field(default_factory=dict)


def _watts(text: str) -> float | None:
    """``'4500 mW'`` -> 4.5, ``'9.0 W'`` -> 9.0; None if not a finite power."""
    match = VALUE.match(text)
    if not match:
        return None
    try:
        number = float(match.group("number"))
    except ValueError:
        return None
    if not math.isfinite(number):
        return None
    return number / 1000.0 if match.group("unit") == "mW" else number


def _block_time(text: str) -> dt.datetime | None:
    """The block header's time as an aware UTC datetime, or None if unreadable."""
    try:
        moment = dt.datetime.strptime(text.strip(), TIME_FORMAT).astimezone(dt.UTC)
    except (ValueError, OverflowError):
        return None
    return moment if EARLIEST <= moment < LATEST else None


def _finish(block: _Block, previous: dt.datetime | None, rows: list[dict[str, Any]], rejects: list[Reject]) -> dt.datetime | None:
    """Emit a block's samples (or its rejects); return its time if it was loaded."""
    moment = _block_time(block.when)
    if moment is None:
        rejects.append(
            Reject(
                block.line,
                BLOCK_LABEL,
                "parse",
                block.when,
                f"{BLOCK_LABEL}: cannot read {block.when!r} as a time like 'Wed Jan 11 10:00:00 2023 -0800' "
                f"({EARLIEST.year}-{LATEST.year - 1}); the block's {len(block.readings)} power reading(s) are not loaded",
            )
        )
        return previous
    if not block.readings:
        rejects.append(Reject(block.line, None, "no_power", block.when, "the block has no CPU, GPU, ANE or Combined Power line"))
        return previous
    if previous is not None and moment == previous:
        rejects.append(
            Reject(
                block.line,
                BLOCK_LABEL,
                "duplicate_time",
                block.when,
                f"{BLOCK_LABEL}: {block.when} repeats the previous block's time; the block is not loaded",
            )
        )
        return previous
    for channel, (line, watts) in block.readings.items():
        if watts is not None:
            rows.append({"ts": moment, "channel": channel, "power_w": watts, "counts_to_total": channel == "combined", "source_row": line})
    if "combined" not in block.readings:
        parts = {name: block.readings[name] for name in PARTS if name in block.readings}
        unreadable = [LABELS[name] for name, (_, watts) in parts.items() if watts is None]
        if unreadable:
            rejects.append(
                Reject(
                    block.line,
                    LABELS["combined"],
                    "derive",
                    None,
                    f"the block has no Combined Power line and its {', '.join(unreadable)} could not be read: no total for this block",
                )
            )
        else:
            total = sum(watts for _, watts in parts.values() if watts is not None)
            rows.append({"ts": moment, "channel": "combined", "power_w": total, "counts_to_total": True, "source_row": block.line})
    return moment


def parse_powermetrics(path: Path, options: Mapping[str, Any]) -> Parsed:
    """Parse a powermetrics text log into power_samples rows (one run)."""
    run = run_options(path, options)
    try:
        text = path.read_bytes().decode("utf-8", errors="replace")
    except OSError as exc:
        raise SourceParseError(path, None, f"cannot read the file: {exc}") from exc
    rows: list[dict[str, Any]] = []
    rejects: list[Reject] = []
    block: _Block | None = None
    previous: dt.datetime | None = None
    blocks = 0
    for number, raw in enumerate(text.split("\n"), start=1):
        line = raw.rstrip("\r")
        start = BLOCK_START.match(line)
        if start:
            if block is not None:
                previous = _finish(block, previous, rows, rejects)
            block = _Block(line=number, when=start.group("when"))
            blocks += 1
            continue
        power = POWER_LINE.match(line)
        if not power:
            continue
        channel = CHANNELS[power.group("name")]
        value = power.group("value")
        watts = _watts(value)
        label = LABELS[channel]
        if block is None:
            rejects.append(Reject(number, label, "no_block", value, f"{label}: power line before the first '*** {BLOCK_LABEL} ***' header, so it has no time"))
            continue
        if watts is None:
            rejects.append(Reject(number, label, "parse", value, f"{label}: cannot read {value!r} as a finite power in mW or W"))
        if channel not in block.readings or (block.readings[channel][1] is None and watts is not None):
            block.readings[channel] = (number, watts)
    if block is not None:
        _finish(block, previous, rows, rejects)
    if blocks == 0:
        raise SourceParseError(path, None, f"no '*** {BLOCK_LABEL} (...) ***' block: not a powermetrics log")
    frame = pl.DataFrame(
        rows,
        schema={"ts": pl.Datetime("us", "UTC"), "channel": pl.String, "power_w": pl.Float64, "counts_to_total": pl.Boolean, "source_row": pl.Int64},
    )
    frame = frame.select(pl.lit(run.run_id).alias("run_id"), pl.all())
    frame, bad = check_samples(frame, kind="powermetrics", options=options, labels={"ts": BLOCK_LABEL}, channel_labels=LABELS)
    return Parsed(frame=frame, rejects=sorted(rejects + bad, key=lambda r: r.source_row or 0))
