"""EIA-930 hourly generation mix with an average carbon intensity (SustainDC format; kind eia930_csv).

Columns ``timestamp`` (UTC, ``YYYY-MM-DD HH:MM:SS+00:00``), one net-generation column per fuel
(``WND, SUN, WAT, OIL, NG, COL, NUC, OTH``, MWh) and ``avg_CI`` (gCO2e/kWh, the
generation-weighted mean with life-cycle factors per fuel). The intensity is production-based:
the balancing authority's own generation, no imports.

Options (from the manifest):

- ``zone``, ``zone_name`` (required; the file names no zone), ``country_iso3`` (optional);
- ``timestamp_marks``: ``hour_end`` (EIA-930's native convention: the row labelled 01:00
  covers 00:00-01:00) or ``hour_start``;
- ``emission_scope`` (default ``lifecycle``), ``fetched_at`` (required).

A line whose values are all blank is rejected with that reason (check ``missing_value``), as
is a line with a blank ``avg_CI``; nothing is interpolated.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import polars as pl

from pipelines.errors import ManifestError
from pipelines.ingest.cells import is_blank, rejects_where
from pipelines.ingest.options import instant_option, option_text, optional_text
from pipelines.ingest.parsers.common import checked_casts, require_columns
from pipelines.ingest.parsers.grid import empty_rows, grid_rows, read_grid_csv, utc_timestamp
from pipelines.ingest.staging import Parsed
from schemas.grid_intensity import EMISSION_SCOPES

INTENSITY = "avg_CI"
TIMESTAMP = utc_timestamp(["%Y-%m-%d %H:%M:%S%z", "%Y-%m-%dT%H:%M:%S%z", "%Y-%m-%dT%H:%M:%SZ"], "2022-01-01 00:00:00+00:00")
MARKS = ("hour_end", "hour_start")


def parse_eia930_csv(path: Path, options: Mapping[str, Any]) -> Parsed:
    """Hourly ``actual`` rows from ``avg_CI``; see the module docstring."""
    fetched_at = instant_option(path, options, "fetched_at")
    zone = option_text(options, "zone", path)
    zone_name = option_text(options, "zone_name", path)
    country_iso3 = optional_text(options, "country_iso3", path)
    marks = option_text(options, "timestamp_marks", path)
    scope = option_text(options, "emission_scope", path, "lifecycle")
    if marks not in MARKS:
        raise ManifestError(path, f"options.timestamp_marks must be one of {MARKS}, got {marks!r}")
    if scope not in EMISSION_SCOPES:
        raise ManifestError(path, f"options.emission_scope must be one of {EMISSION_SCOPES}, got {scope!r}")
    frame = read_grid_csv(path)
    require_columns(path, frame, ["timestamp", INTENSITY])
    values = [c for c in frame.columns if c not in ("timestamp", "source_row")]
    all_blank = pl.all_horizontal([is_blank(c) for c in values])
    rejects = rejects_where(
        frame, all_blank, column=INTENSITY, check="missing_value", value=None,
        reason=lambda row: f"every value of the hour {row['timestamp']} is blank: the file has no data for it",
    )
    rejects += rejects_where(
        frame, is_blank(INTENSITY) & ~all_blank, column=INTENSITY, check="missing_value", value=None,
        reason=lambda row: f"{INTENSITY} is blank for the hour {row['timestamp']} although the generation mix is given",
    )
    rejects += rejects_where(
        frame, is_blank("timestamp") & ~is_blank(INTENSITY), column="timestamp", check="missing_value", value=None,
        reason=lambda row: "timestamp is blank: the value has no hour",
    )
    frame = frame.filter(~(is_blank(INTENSITY) | is_blank("timestamp")))
    typed, cast_rejects = checked_casts(frame, {"timestamp": TIMESTAMP, INTENSITY: pl.Float64})
    hour = pl.duration(hours=1)
    start = pl.col("timestamp") - hour if marks == "hour_end" else pl.col("timestamp")
    typed = typed.with_columns(start.alias("period_start"), (start + hour).alias("period_end"), pl.col(INTENSITY).alias("gco2e_per_kwh"))
    rows = grid_rows(
        typed,
        zone=zone, zone_name=zone_name, country_iso3=country_iso3, resolution="PT1H", signal="actual",
        emission_scope=scope, fetched_at=fetched_at,
    )
    return Parsed(frame=rows if rows.height else empty_rows(), rejects=rejects + cast_rejects)
