"""Marginal emission factors from published studies: a curated CSV, one annual value per row.

Each row is one study's marginal factor for a zone and year: ``factor_id``, ``zone``,
``zone_name``, ``country_iso3``, ``year``, ``data_first_year`` / ``data_last_year`` (the years
the study's data cover, or the years a long-run projection covers), ``gco2e_per_kwh`` with its
``low_gco2e_per_kwh`` / ``high_gco2e_per_kwh`` range, ``marginal_kind`` (``short_run_operating``
or ``long_run``), ``emission_scope``, ``status``, ``citation``, ``citation_url`` and ``notes``. A
row becomes a ``staging.grid_intensity`` row with ``signal = 'marginal'`` and resolution ``P1Y``
(the calendar year in ``year``); the model's checks reject a row with no citation, no range or
no data years, a value outside its range or a derived value without its arithmetic. A value
that does not read rejects its row.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import polars as pl

from pipelines.ingest.options import instant_option
from pipelines.ingest.parsers.common import checked_casts, require_columns
from pipelines.ingest.parsers.grid import read_grid_csv
from pipelines.ingest.staging import Parsed

#: Columns of the file, as they land in staging.grid_intensity (``year`` becomes the period).
COLUMNS = [
    "factor_id", "zone", "zone_name", "country_iso3", "year", "data_first_year", "data_last_year", "gco2e_per_kwh",
    "low_gco2e_per_kwh", "high_gco2e_per_kwh", "marginal_kind", "emission_scope", "status", "citation", "citation_url",
    "notes",
]  # fmt: skip
REQUIRED = [c for c in COLUMNS if c not in ("country_iso3", "low_gco2e_per_kwh", "high_gco2e_per_kwh", "notes")]
#: Whole years: the period's year and the years the data cover.
YEARS = ("year", "data_first_year", "data_last_year")
NUMBERS = {"gco2e_per_kwh": pl.Float64, "low_gco2e_per_kwh": pl.Float64, "high_gco2e_per_kwh": pl.Float64}


def _year(expr: pl.Expr) -> pl.Expr:
    """a whole year like '2021'"""
    return expr.str.strip_chars().cast(pl.Int64, strict=False)


def parse_marginal_factors(path: Path, options: Mapping[str, Any]) -> Parsed:
    """``marginal`` P1Y rows of staging.grid_intensity, one per study value; see the module docstring."""
    fetched_at = instant_option(path, options, "fetched_at")
    frame = read_grid_csv(path)
    require_columns(path, frame, REQUIRED)
    typed, rejects = checked_casts(frame, {**NUMBERS, **dict.fromkeys(YEARS, _year)})
    text = [c for c in COLUMNS if c not in NUMBERS and c not in YEARS]
    rows = typed.select(
        *[(pl.col(c).str.strip_chars() if c in typed.columns else pl.lit(None, dtype=pl.String)).alias(c) for c in text],
        *[pl.col(c) for c in NUMBERS],
        pl.col("data_first_year"),
        pl.col("data_last_year"),
        pl.datetime(pl.col("year"), 1, 1, time_zone="UTC").alias("period_start"),
        pl.datetime(pl.col("year") + 1, 1, 1, time_zone="UTC").alias("period_end"),
        pl.lit("P1Y").alias("resolution"),
        pl.lit("marginal").alias("signal"),
        pl.lit(None, dtype=pl.Boolean).alias("is_estimated"),
        pl.lit(fetched_at.astimezone(dt.UTC)).dt.cast_time_unit("us").alias("fetched_at"),
        pl.col("source_row"),
    )
    return Parsed(frame=rows, rejects=rejects)
