"""The live grid feeds' payloads as rows: each payload parsed by its feed's parser, its rows
validated (bad records to quarantine rows) and its raw-table row with the parse outcome.

A payload is one HTTP response kept in the landing spool (:mod:`pipelines.ingest.feeds.landing`);
the asset ``staging/grid_intensity_live`` (``pipelines/defs/assets/grid_feeds.py``) lands the
ones the warehouse does not hold yet, and :mod:`pipelines.warehouse.live_feed` writes them.
"""

import datetime as dt
import json
from typing import Any

import polars as pl

from pipelines.errors import EdgeCarbonError, SourceParseError
from pipelines.ingest.feeds.http import Payload
from pipelines.ingest.parsers.electricitymaps import parse_electricitymaps_payload
from pipelines.ingest.parsers.uk_carbon_intensity import parse_uk_ci_payload
from pipelines.ingest.quarantine import Reject, rejects_frame, split_valid
from schemas.grid_intensity import GridIntensity
from schemas.meta import conform, empty_frame
from schemas.quarantine import RejectedRows
from schemas.raw_payloads import CarbonIntensityPayloads

LIVE_TABLE = "staging.grid_intensity_live"
RAW_TABLE = "raw.carbon_intensity_payloads"
#: The source_id of each feed's rows (a row of staging.sources names the feed).
SOURCE_IDS = {"uk_carbon_intensity": "feed_uk_carbon_intensity", "electricitymaps": "feed_electricitymaps"}
FEEDS = tuple(SOURCE_IDS)


def _uk_zone_options(payload: Payload, obj: Any) -> tuple[Any, dict[str, Any]]:
    """Regional responses nest the records one level down; return (payload for the parser, options)."""
    options: dict[str, Any] = {"fetched_at": payload.fetched_at, "zone": payload.zone}
    if payload.zone == "GB":
        return obj, options
    inner = obj.get("data") if isinstance(obj, dict) else None
    if isinstance(inner, list) and len(inner) == 1 and isinstance(inner[0], dict):
        inner = inner[0]
    if not isinstance(inner, dict) or not isinstance(inner.get("data"), list):
        return obj, options
    region = inner.get("shortname") or f"NESO region {inner.get('regionid')}"
    options.update(zone_name=f"{region} (NESO region)", country_iso3="GBR")
    return {"data": inner["data"]}, options


def parse_payload(payload: Payload) -> tuple[pl.DataFrame, list[Reject]]:
    """Rows (GridIntensity columns) and record-level rejects of one 200 payload.

    Raises SourceParseError naming the URL when the body is not the expected JSON.
    """
    try:
        obj = json.loads(payload.body)
    except (ValueError, RecursionError) as exc:
        raise SourceParseError(payload.url, None, f"not valid JSON ({len(payload.body)} bytes, truncated?): {str(exc).splitlines()[0]}") from None
    if payload.source == "uk_carbon_intensity":
        obj, options = _uk_zone_options(payload, obj)
        parsed = parse_uk_ci_payload(obj, payload.url, options)
    elif payload.source == "electricitymaps":
        if isinstance(obj, dict) and "history" not in obj and "carbonIntensity" in obj:
            obj = {"zone": obj.get("zone"), "history": [obj]}  # a /latest response: one record
        parsed = parse_electricitymaps_payload(obj, payload.url, {"fetched_at": payload.fetched_at, "zone": payload.zone})
    else:
        raise SourceParseError(payload.url, None, f"unknown feed {payload.source!r}")
    frame = parsed.frame.with_columns(
        pl.lit(SOURCE_IDS[payload.source]).alias("source_id"),
        pl.lit(f"{RAW_TABLE}/{payload.payload_id}").alias("source_file"),
    )
    return frame, list(parsed.rejects)


def land_payloads(pending: list[tuple[Payload, str]], run_id: str) -> tuple[pl.DataFrame, pl.DataFrame, pl.DataFrame, list[str]]:
    """Parse each pending payload: (raw rows, staged rows, quarantine rows, errors of this run)."""
    now = dt.datetime.now(dt.UTC)
    raw_rows: list[dict[str, Any]] = []
    frames: list[pl.DataFrame] = []
    rejects: list[pl.DataFrame] = []
    errors: list[str] = []
    for payload, received_by in pending:
        source_id, source_file = SOURCE_IDS[payload.source], f"{RAW_TABLE}/{payload.payload_id}"
        status, error, rows = "ok", None, 0
        if payload.status != 200:
            status, error = "http_error", f"HTTP {payload.status} after retries: {payload.body[:200]!r}"
        else:
            try:
                frame, row_rejects = parse_payload(payload)
                frame = conform(GridIntensity, frame)
                valid, check_rejects = split_valid(GridIntensity, frame, file=payload.url)
                rows = valid.height
                frames.append(valid)
                rejects.append(rejects_frame(row_rejects + check_rejects, table=LIVE_TABLE, source_id=source_id,
                                             source_file=source_file, run_id=run_id, at=now))
            except EdgeCarbonError as exc:
                status, error = "unparseable", str(exc)
                rejects.append(rejects_frame([Reject(None, None, "payload_parse", None, str(exc))], table=LIVE_TABLE,
                                             source_id=source_id, source_file=source_file, run_id=run_id, at=now))
        if error is not None and received_by == run_id:
            errors.append(f"grid feed {payload.source}: {payload.url}: {error}" if status == "http_error" else error)
        raw_rows.append({**payload_row(payload), "parse_status": status, "error": error, "rows_parsed": rows, "run_id": received_by or run_id})
    raw = conform(CarbonIntensityPayloads, pl.DataFrame(raw_rows, schema=dict(_raw_schema()))) if raw_rows else empty_frame(CarbonIntensityPayloads)
    staged = pl.concat(frames, how="vertical") if frames else empty_frame(GridIntensity)
    quarantined = pl.concat(rejects, how="vertical") if rejects else empty_frame(RejectedRows)
    return raw, staged, quarantined, errors


def payload_row(payload: Payload) -> dict[str, Any]:
    """Raw-table columns of a payload (before its parse outcome)."""
    return payload.as_row()


def _raw_schema() -> dict[str, pl.DataType]:
    from schemas.meta import polars_schema

    return polars_schema(CarbonIntensityPayloads)
