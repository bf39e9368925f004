"""Scenario files: one CSV per scenario under sources/scenarios/.

Columns: ``parameter, value, unit, low, high, distribution, status, factor_ref, reasoning`` and,
optionally, ``range_ref``.
``value`` may be left empty when ``factor_ref`` names the staged row to read it from, in the
form ``<table>.<key_column>=<key>.<value_column>``, for example
``device_specs.device_id=nvidia-h100-sxm.tdp_w``. Which tables and columns may be referenced
is fixed in :data:`pipelines.scenarios.REFERENCE_TABLES`. ``range_ref`` names a measured mean
with a 95% CI (``benchmark_series.series_id=table1_phone.mean_power_w_mean``); the row's
low/high become its value times the CI's relative ends, so measurement uncertainty enters
sensitivity and Monte Carlo. A parameter that names a method (``accounting_frame,consequential``:
:data:`schemas.parameter_bounds.NAMED`) keeps its ``value`` as text, in ``value_text``; every
other value must read as a number.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import polars as pl

from pipelines.ingest.parsers.common import checked_casts, read_text_csv, require_columns
from pipelines.ingest.staging import Parsed
from schemas.parameter_bounds import NAMED

COLUMNS = ("parameter", "value", "unit", "low", "high", "distribution", "status", "factor_ref", "reasoning", "range_ref")
REQUIRED = ("parameter", "unit", "status")


def parse_scenario(path: Path, options: Mapping[str, Any]) -> Parsed:
    """Read a scenario file; numbers that do not read are quarantined with their line."""
    frame = read_text_csv(path)
    require_columns(path, frame, REQUIRED)
    for name in COLUMNS:
        if name not in frame.columns:
            frame = frame.with_columns(pl.lit(None, dtype=pl.String).alias(name))
    frame = frame.select(["source_row", *COLUMNS])
    named = pl.col("parameter").str.strip_chars().is_in(list(NAMED))
    frame = frame.with_columns(
        pl.when(named & (pl.col("value").str.strip_chars() != "")).then(pl.col("value").str.strip_chars()).alias("value_text"),
        pl.when(~named).then(pl.col("value")).alias("value"),
    )
    typed, rejects = checked_casts(frame, {"value": pl.Float64, "low": pl.Float64, "high": pl.Float64})
    typed = typed.with_columns(
        pl.col("distribution").fill_null("point"),
        pl.col("parameter").str.strip_chars(),
        pl.col("factor_ref").str.strip_chars(),
        pl.col("range_ref").str.strip_chars(),
    )
    return Parsed(frame=typed, rejects=rejects)
