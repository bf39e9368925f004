"""Monsoon Power Monitor (PowerTool) CSV exports -> staging.power_samples.

The export has the header ``Time(ms),Main(mA),Main Voltage(V),`` and every line ends with a
trailing comma (an empty last column, ignored). ``Time(ms)`` counts milliseconds from the
start of the capture, so the manifest option ``started_at`` (ISO-8601, UTC if no offset)
anchors it. Power is ``Main(mA) x Main Voltage(V) / 1000`` W on channel ``main`` (the whole
device, ``counts_to_total``). Other columns (USB, Aux) are ignored.

Rejected with the file's column name: empty or unreadable cells (including NaN/infinite);
a negative power (negative current or voltage) is rejected by the table's check.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import polars as pl

from pipelines.ingest.cells import EARLIEST, LATEST, drop_where, finite_number, require_cells
from pipelines.ingest.options import instant_option, run_options
from pipelines.ingest.parsers.common import checked_casts, read_text_csv, require_columns
from pipelines.ingest.plausibility import check_samples
from pipelines.ingest.staging import Parsed

TIME, CURRENT, VOLTAGE = "Time(ms)", "Main(mA)", "Main Voltage(V)"


def parse_monsoon(path: Path, options: Mapping[str, Any]) -> Parsed:
    """Parse a Monsoon PowerTool CSV export into power_samples rows (one run)."""
    run = run_options(path, options)
    started = instant_option(path, options, "started_at", naive="utc")
    frame = read_text_csv(path)
    require_columns(path, frame, [TIME, CURRENT, VOLTAGE])
    frame, rejects = require_cells(frame.select("source_row", TIME, CURRENT, VOLTAGE), [TIME, CURRENT, VOLTAGE])
    frame = frame.with_columns(pl.col(TIME).str.strip_chars().alias("raw_time"))
    typed, bad = checked_casts(frame, {TIME: finite_number, CURRENT: finite_number, VOLTAGE: finite_number})
    rejects += bad
    ts = pl.lit(started) + pl.duration(microseconds=(pl.col(TIME) * 1000).round(0).cast(pl.Int64, strict=False))
    typed = typed.with_columns(ts.alias("ts"))
    typed, bad = drop_where(
        typed,
        pl.col("ts").is_null() | (pl.col("ts") < EARLIEST) | (pl.col("ts") >= LATEST),
        column=TIME,
        check="in_range",
        value="raw_time",
        reason=f"{TIME}: {{raw_time}} ms after started_at {started.isoformat()} is outside {EARLIEST.year}-{LATEST.year - 1}",
    )
    rejects += bad
    out = typed.select(
        pl.lit(run.run_id).alias("run_id"),
        pl.col("ts").cast(pl.Datetime("us", "UTC")),
        pl.lit("main").alias("channel"),
        (pl.col(CURRENT) * pl.col(VOLTAGE) / 1000.0).alias("power_w"),
        pl.lit(True).alias("counts_to_total"),
        "source_row",
    )
    out, bad = check_samples(out, kind="monsoon", options=options, labels={"ts": TIME, "power_w": CURRENT})
    rejects += bad
    return Parsed(frame=out, rejects=sorted(rejects, key=lambda r: (r.source_row or 0, r.column_name or "")))

