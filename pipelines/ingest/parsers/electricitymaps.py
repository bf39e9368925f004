"""Electricity Maps: Data Portal hourly CSVs (kind electricitymaps_csv) and API v3 history JSON
(kind electricitymaps_json).

Electricity Maps intensities are consumption-based (flow-traced, imports included). The portal
CSV carries both a direct and a life-cycle column, so each hour gives two rows; the API
response carries one factor type, named in each record's ``emissionFactorType``.
``is_estimated`` is Electricity Maps' own flag (every IN-WE hour of 2023 is estimated).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import polars as pl

from pipelines.errors import SourceParseError
from pipelines.ingest.cells import is_blank, rejects_where
from pipelines.ingest.options import instant_option, optional_text
from pipelines.ingest.parsers.common import checked_casts, is_nan_text
from pipelines.ingest.parsers.grid import empty_rows, grid_rows, read_grid_csv, utc_timestamp
from pipelines.ingest.parsers.uk_carbon_intensity import (
    BadCell,
    json_instant,
    json_number,
    load_json,
    rows_frame,
    show,
)
from pipelines.ingest.quarantine import Reject
from pipelines.ingest.staging import Parsed

#: Scope names of the API's ``emissionFactorType``.
FACTOR_TYPES = {"lifecycle": "lifecycle", "direct": "direct"}

#: Portal CSV header (normalised: lower case, U+2082 read as "2", spaces collapsed) -> our name.
#: Both the 2023/2024 layout ("(LCA)", "Zone Name") and the later one ("(Life cycle)", "Zone name").
CSV_COLUMNS = {
    "datetime (utc)": "datetime",
    "zone id": "zone",
    "zone name": "zone_name",
    "carbon intensity gco2eq/kwh (direct)": "direct",
    "carbon intensity gco2eq/kwh (lca)": "lifecycle",
    "carbon intensity gco2eq/kwh (life cycle)": "lifecycle",
    "data estimated": "estimated",
}
REQUIRED = ("datetime", "zone", "direct", "lifecycle")
TIMESTAMP = utc_timestamp(
    ["%Y-%m-%d %H:%M:%S", "%Y-%m-%dT%H:%M:%S%.fZ", "%Y-%m-%dT%H:%M:%SZ", "%Y-%m-%d %H:%M:%S%z"], "2023-01-01 00:00:00"
)


def normalise_header(name: str) -> str:
    """Header text compared loosely: BOM dropped, subscript two as '2', lower case, single spaces."""
    return " ".join(name.replace("\ufeff", "").replace("\u2082", "2").lower().split())


def _estimated_cast(expr: pl.Expr) -> pl.Expr:
    """true or false"""
    text = expr.str.strip_chars().str.to_lowercase()
    return pl.when(text == "true").then(True).when(text == "false").then(False).otherwise(None)


def parse_electricitymaps_csv(path: Path, options: Mapping[str, Any]) -> Parsed:
    """Hourly portal CSV: a direct and a life-cycle row per hour; see the module docstring."""
    fetched_at = instant_option(path, options, "fetched_at")
    country_iso3 = optional_text(options, "country_iso3", path)
    frame = read_grid_csv(path)
    names: dict[str, str] = {}
    labels: dict[str, str] = {}
    for column in frame.columns:
        ours = CSV_COLUMNS.get(normalise_header(column))
        if ours is None:
            continue
        if ours in labels:
            raise SourceParseError(path, 1, f"columns {labels[ours]!r} and {column!r} both read as {ours}")
        names[column], labels[ours] = ours, column
    missing = [name for name in REQUIRED if name not in labels]
    if missing:
        raise SourceParseError(path, 1, f"header lacks the Electricity Maps column(s) for {missing}; found {frame.columns}")
    frame = frame.select([pl.col(c).alias(n) for c, n in names.items()] + [pl.col("source_row")])
    for optional in ("zone_name", "estimated"):
        if optional not in frame.columns:
            frame = frame.with_columns(pl.lit(None, dtype=pl.String).alias(optional))
    rejects: list[Reject] = []
    for column in ("datetime", "zone", "direct", "lifecycle"):
        kept = "the hour's other row is kept" if column in ("direct", "lifecycle") else "no row for this hour"
        rejects += rejects_where(
            frame, is_blank(column), column=labels[column], check="missing_value", value=None,
            reason=lambda row, c=labels[column], k=kept: f"{c} is blank: {k}",
        )
    for column in ("direct", "lifecycle"):
        # NaN is a missing value of this cell only, as a blank is: the other column's row stays.
        rejects += rejects_where(
            frame, is_nan_text(column), column=labels[column], check="missing_value", value=column,
            reason=lambda row, c=labels[column]: f"{c} is NaN (no value): the hour's other row is kept",
        )
        frame = frame.with_columns(pl.when(is_nan_text(column)).then(None).otherwise(pl.col(column)).alias(column))
    frame = frame.filter(~(is_blank("datetime") | is_blank("zone")))
    typed, cast_rejects = checked_casts(
        frame,
        {"datetime": TIMESTAMP, "direct": pl.Float64, "lifecycle": pl.Float64, "estimated": _estimated_cast},
        labels=labels,
    )
    rejects += cast_rejects
    typed = typed.with_columns(
        pl.col("zone").str.strip_chars(),
        pl.coalesce(pl.col("zone_name").str.strip_chars(), pl.col("zone").str.strip_chars()).alias("zone_name"),
        pl.col("datetime").alias("period_start"),
        pl.col("estimated").alias("is_estimated"),
    )
    constants = {"country_iso3": country_iso3, "resolution": "PT1H", "signal": "actual", "fetched_at": fetched_at}
    parts = [
        grid_rows(
            typed.filter(pl.col(scope).is_not_null()).with_columns(pl.col(scope).alias("gco2e_per_kwh")),
            emission_scope=scope,
            **constants,
        )
        for scope in ("direct", "lifecycle")
    ]
    rows = pl.concat(parts, how="vertical")
    return Parsed(frame=rows if rows.height else empty_rows(), rejects=rejects)


def _history_row(record: Any, number: int, top_zone: Any, base: Mapping[str, Any], default_scope: str | None) -> dict[str, Any] | Reject:
    """One history record as a row dict, or the Reject that explains why it is not one."""
    if not isinstance(record, dict):
        return Reject(number, None, "parse", show(record), f"record {number} is not a JSON object")
    try:
        start = json_instant(record, "datetime", "datetime")
        value = json_number(record, "carbonIntensity", "carbonIntensity")
        zone = record.get("zone", top_zone)
        if zone is None:
            zone = base["zone"]
        if not isinstance(zone, str):
            raise BadCell("zone", show(zone), f"zone: {show(zone)!s} is not a zone id")
        estimated = record.get("isEstimated")
        if estimated is not None and not isinstance(estimated, bool):
            raise BadCell("isEstimated", show(estimated), f"isEstimated: {show(estimated)!s} is not true/false")
        factor = record.get("emissionFactorType", default_scope)
        if factor is None:
            factor = "unspecified"
        elif not isinstance(factor, str) or factor not in FACTOR_TYPES:
            raise BadCell("emissionFactorType", show(factor), f"emissionFactorType: {show(factor)!s} is not 'lifecycle' or 'direct'")
        else:
            factor = FACTOR_TYPES[factor]
    except BadCell as bad:
        return Reject(number, bad.column, "parse", bad.value, bad.reason)
    if zone == "":
        return Reject(number, "zone", "missing_value", None, "zone is empty: the record names no zone")
    if value is None:
        return Reject(number, "carbonIntensity", "missing_value", None, "carbonIntensity is null: Electricity Maps has no value for this hour")
    return {
        **base,
        "zone": zone,
        "zone_name": base["zone_name"] or zone,
        "period_start": start,
        "period_end": start + dt.timedelta(hours=1),
        "gco2e_per_kwh": value,
        "emission_scope": factor,
        "is_estimated": estimated,
        "source_row": number,
    }


def parse_electricitymaps_payload(obj: Any, label: str, options: Mapping[str, Any]) -> Parsed:
    """Rows from a decoded ``/v3/carbon-intensity/history`` response (hourly, signal ``actual``).

    ``options``: ``fetched_at`` (capture time, required); ``zone_name``, ``country_iso3``
    (optional); ``emission_factor_type`` (the request's parameter, used when a record does
    not name its own; without either the scope is ``unspecified``).
    """
    fetched_at = instant_option(label, options, "fetched_at")
    if not isinstance(obj, dict) or not isinstance(obj.get("history"), list):
        found = type(obj.get("history")).__name__ if isinstance(obj, dict) else type(obj).__name__
        raise SourceParseError(label, None, f'expected a JSON object with a "history" list (Electricity Maps API); found {found}')
    base = {
        "zone": optional_text(options, "zone", label) or "",
        "zone_name": optional_text(options, "zone_name", label),
        "country_iso3": optional_text(options, "country_iso3", label),
        "resolution": "PT1H",
        "signal": "actual",
        "fetched_at": fetched_at,
    }
    default_scope = optional_text(options, "emission_factor_type", label)
    rows: list[dict[str, Any]] = []
    rejects: list[Reject] = []
    for number, record in enumerate(obj["history"], start=1):
        result = _history_row(record, number, obj.get("zone"), base, default_scope)
        if isinstance(result, Reject):
            rejects.append(result)
        else:
            rows.append(result)
    return Parsed(frame=rows_frame(rows), rejects=rejects)


def parse_electricitymaps_json(path: Path, options: Mapping[str, Any]) -> Parsed:
    """A recorded Electricity Maps history response (kind electricitymaps_json)."""
    return parse_electricitymaps_payload(load_json(path), str(path), options)
