"""NESO national carbon intensity as a CSV export of the Carbon Intensity API (kind neso_csv).

Columns ``from,to,forecast,actual,index`` (times ``YYYY-MM-DD HH:MM:SS+00:00``, as pandas
writes them). One input line gives a ``forecast`` row and, where NESO published one, an
``actual`` row, zone GB, emission scope ``direct`` (see :class:`schemas.grid_intensity.GridIntensity`).

- A blank ``actual`` gives no actual row; the blank is listed as a reject (check
  ``missing_value``) so the missing value is visible, and the forecast row is kept.
- ``actual`` = 0 is an API glitch (SOURCE.md): rejected (check ``zero_actual``), forecast kept.
- Gaps in the series are facts of the data: no rows are invented for them.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import polars as pl

from pipelines.ingest.cells import is_blank, rejects_where
from pipelines.ingest.options import instant_option
from pipelines.ingest.parsers.common import checked_casts, is_nan_text, require_columns
from pipelines.ingest.parsers.grid import empty_rows, grid_rows, read_grid_csv, utc_timestamp
from pipelines.ingest.parsers.uk_carbon_intensity import gb_zone, zero_actual_reason
from pipelines.ingest.staging import Parsed

TIMESTAMP = utc_timestamp(["%Y-%m-%d %H:%M:%S%z", "%Y-%m-%dT%H:%M%z", "%Y-%m-%dT%H:%MZ"], "2023-01-01 00:00:00+00:00")


def parse_neso_csv(path: Path, options: Mapping[str, Any]) -> Parsed:
    """Half-hourly forecast and actual rows from the NESO CSV export; see the module docstring."""
    fetched_at = instant_option(path, options, "fetched_at")
    zone = gb_zone(options, path)
    frame = read_grid_csv(path)
    require_columns(path, frame, ["from", "to", "forecast", "actual"])
    if "index" not in frame.columns:
        frame = frame.with_columns(pl.lit(None, dtype=pl.String).alias("index"))
    rejects = []
    for column in ("from", "to"):
        rejects += rejects_where(
            frame, is_blank(column), column=column, check="missing_value", value=None,
            reason=lambda row, c=column: f"{c} is blank: the half-hour has no time",
        )
    frame = frame.filter(~(is_blank("from") | is_blank("to"))).with_columns(
        pl.col("forecast").alias("__forecast_text"), pl.col("actual").alias("__actual_text")
    )
    for column in ("forecast", "actual"):
        # NaN is a missing value of this cell only, as a blank is: the other signal's row stays.
        rejects += rejects_where(
            frame, is_nan_text(column), column=column, check="missing_value", value=column,
            reason=lambda row, c=column: f"{c} is NaN (no value): the half-hour's other row is kept",
        )
        frame = frame.with_columns(pl.when(is_nan_text(column)).then(None).otherwise(pl.col(column)).alias(column))
    typed, cast_rejects = checked_casts(
        frame, {"from": TIMESTAMP, "to": TIMESTAMP, "forecast": pl.Float64, "actual": pl.Float64}
    )
    rejects += cast_rejects
    rejects += rejects_where(
        typed, pl.col("forecast").is_null() & ~is_nan_text("__forecast_text"), column="forecast", check="missing_value", value=None,
        reason=lambda row: "forecast is blank: no forecast row for this half-hour",
    )
    rejects += rejects_where(
        typed, pl.col("actual").is_null() & ~is_nan_text("__actual_text"), column="actual", check="missing_value", value=None,
        reason=lambda row: "actual is blank: NESO published no outturn for this half-hour; the forecast row is kept",
    )
    rejects += rejects_where(
        typed, pl.col("actual") == 0, column="actual", check="zero_actual", value="__actual_text",
        reason=lambda row: zero_actual_reason(row["__forecast_text"], row["index"]),
    )
    base = typed.rename({"from": "period_start", "to": "period_end"})
    constants = {**zone, "resolution": "PT30M", "emission_scope": "direct", "fetched_at": fetched_at}
    forecast = grid_rows(
        base.filter(pl.col("forecast").is_not_null()).rename({"forecast": "gco2e_per_kwh"}), signal="forecast", **constants
    )
    actual = grid_rows(
        base.filter(pl.col("actual").is_not_null() & (pl.col("actual") != 0)).rename({"actual": "gco2e_per_kwh"}),
        signal="actual",
        **constants,
    )
    rows = pl.concat([forecast, actual], how="vertical")
    return Parsed(frame=rows if rows.height else empty_rows(), rejects=rejects)
