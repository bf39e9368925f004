"""Live grid-intensity feeds (daily partitions) -> raw.carbon_intensity_payloads and
staging.grid_intensity_live; and the marts.charging_windows mart built on every hourly series.

A feed run: fetch each request of the partition range (UK requests split into 14-day spans),
write every response to the landing spool the moment it arrives, then, in one transaction,
land every spooled payload that raw does not hold yet, parse it, quarantine its bad records
and upsert its rows. A transport failure after retries, an HTTP error status or a payload
that is not the expected JSON fails the run with a message naming the feed and URL; the run
is then not published, the previous warehouse stays as it was, and the spooled payloads are
landed by the next run that succeeds.

Freshness: a Dagster ``FreshnessPolicy`` on staging/grid_intensity_live (WARN 3 hours, FAIL
1 day after the last materialisation), evaluated by the daemon whether or not the schedule is
running; the ``grid_intensity_live_fresh`` check also looks at the age of the newest period.
"""

import datetime as dt
import json
from logging import Logger
from pathlib import Path
from typing import Any

import dagster as dg
import duckdb
import polars as pl

from pipelines.defs.checks import Reader, check_results, staging_checks, table_check
from pipelines.defs.metadata import column_metadata
from pipelines.defs.resources import Warehouse
from pipelines.defs.tables import build_table
from pipelines.errors import EdgeCarbonError, SourceParseError
from pipelines.ingest.feeds import landing
from pipelines.ingest.feeds.electricitymaps import ElectricityMapsFeed
from pipelines.ingest.feeds.http import FeedError, Payload
from pipelines.ingest.feeds.uk_carbon_intensity import UkCarbonIntensityFeed
from pipelines.ingest.parsers.electricitymaps import parse_electricitymaps_payload
from pipelines.ingest.parsers.uk_carbon_intensity import parse_uk_ci_payload
from pipelines.ingest.quarantine import Reject, rejects_frame, split_valid
from pipelines.paths import sql_text
from pipelines.warehouse import lake
from pipelines.warehouse.database import LAKE_TABLES, lake_views
from pipelines.warehouse.queries import query_pl
from pipelines.warehouse.tables import ensure_table, preview_md
from schemas.charging_windows import ChargingWindows
from schemas.grid_intensity import GridIntensity
from schemas.meta import conform, empty_frame
from schemas.quarantine import RejectedRows
from schemas.raw_payloads import CarbonIntensityPayloads

LIVE_TABLE = "staging.grid_intensity_live"
RAW_TABLE = "raw.carbon_intensity_payloads"
LIVE_KEY = dg.AssetKey(["staging", "grid_intensity_live"])
#: One partition per UTC day; end_offset=1 makes today a partition too.
DAILY = dg.DailyPartitionsDefinition(start_date="2023-01-01", end_offset=1)
#: The freshness check warns when the newest live period ended longer ago than this.
FRESHNESS_LIMIT = dt.timedelta(days=2)
#: Time since the last materialisation: WARN after three missed hourly refreshes, FAIL after a
#: day (by then yesterday has left the schedule's yesterday-and-today range; backfill it).
FRESHNESS_POLICY = dg.FreshnessPolicy.time_window(fail_window=dt.timedelta(days=1), warn_window=dt.timedelta(hours=3))
SOURCE_IDS = {"uk_carbon_intensity": "feed_uk_carbon_intensity", "electricitymaps": "feed_electricitymaps"}
FEEDS = tuple(SOURCE_IDS)


def ensure_tables(con: duckdb.DuckDBPyConnection, published: Path, log: Logger | None = None) -> None:
    """raw.carbon_intensity_payloads and staging.grid_intensity_live as views over their lake
    files (empty with none), and the quarantine table; ``log`` hears of a lake row dropped for
    repair (:func:`pipelines.warehouse.database.lake_views`)."""
    ensure_table(con, "quarantine.rejected_rows", RejectedRows)
    lake_views(con, published, log=log)


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


def land_payloads(
    con: duckdb.DuckDBPyConnection, pending: list[tuple[Payload, str]], run_id: str
) -> tuple[pl.DataFrame, pl.DataFrame, pl.DataFrame, list[str]]:
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


def sql_statements(relative: str) -> list[str]:
    """The statements of a multi-statement ``.sql`` file (split on ``;``, comment lines dropped)."""
    out = []
    for chunk in sql_text(relative).split(";"):
        body = "\n".join(line for line in chunk.splitlines() if not line.strip().startswith("--")).strip()
        if body:
            out.append(body)
    return out


def upsert_days(current: pl.DataFrame, incoming: pl.DataFrame) -> pl.DataFrame:
    """The rows of the days ``incoming`` touches after the upsert (sql/feeds/upsert_live.sql),
    run on a scratch connection over ``current``, those days' stored rows: every key of the
    upsert (zone, period, signal...) lies within one UTC day, so a day is upserted alone."""
    scratch = duckdb.connect()
    try:
        scratch.execute("set TimeZone = 'UTC'")
        scratch.execute("create schema staging")
        scratch.register("_current", conform(GridIntensity, current).to_arrow())
        scratch.execute(f"create table {LIVE_TABLE} as select * from _current")  # noqa: S608 - module constant
        scratch.register("_incoming", conform(GridIntensity, incoming).to_arrow())
        for statement in sql_statements("feeds/upsert_live.sql"):
            scratch.execute(statement)
        return conform(GridIntensity, query_pl(scratch, f"select * from {LIVE_TABLE}"))  # noqa: S608 - module constant
    finally:
        scratch.close()


def write_feed_batch(con: duckdb.DuckDBPyConnection, published: Path, run_id: str, raw: pl.DataFrame, staged: pl.DataFrame,
                     quarantined: pl.DataFrame) -> dict[str, int]:
    """The batch into the lake and the run's working copy, in one transaction: the raw payloads
    as a new file of each fetch day (append-only; days before today compacted to one file), the
    live rows of each day they touch upserted into a new file of that day (the day's previous
    file superseded), the quarantine rows appended. No file of a day the batch does not touch is
    written, and the DuckDB file holds none of these rows."""
    root = lake.lake_root(published)
    raw_spec, live_spec = LAKE_TABLES[RAW_TABLE], LAKE_TABLES[LIVE_TABLE]
    raw_files = lake.write_partitions(raw, RAW_TABLE, raw_spec, root, run_id)
    days = sorted(set(staged.select(live_spec.key).to_series().to_list())) if staged.height else []
    live_files: list[lake.LakeFile] = []
    if days:
        merged = upsert_days(lake.read_partitions(con, LIVE_TABLE, live_spec, root, days), staged)
        live_files = lake.write_partitions(merged, LIVE_TABLE, live_spec, root, run_id)
    con.execute("begin transaction")
    try:
        lake.commit(con, RAW_TABLE, raw_files, replaces=[])
        lake.commit(con, LIVE_TABLE, live_files, replaces=days)
        if quarantined.height:
            con.register("_rejects", quarantined.to_arrow())
            con.execute("insert into quarantine.rejected_rows by name select * from _rejects")
            con.unregister("_rejects")
        compacted = lake.compact(con, RAW_TABLE, raw_spec, root, run_id, before=dt.datetime.now(dt.UTC).date().isoformat())
        con.execute("commit")
    except BaseException:
        con.execute("rollback")
        raise
    for table, spec in ((RAW_TABLE, raw_spec), (LIVE_TABLE, live_spec)):
        lake.refresh_view(con, table, spec.model, root, union_by_name=spec.union_by_name)
    return {"days_written": len(days), "raw_files": len(raw_files), "raw_days_compacted": len(compacted)}


class GridFeedsConfig(dg.Config):
    """Which feeds a run fetches (``uk_carbon_intensity``, ``electricitymaps``); the schedule
    leaves out a feed whose probe failed (no network, no token) and says why in the run's tags."""

    feeds: list[str] = list(FEEDS)


def fetch_all(
    context: dg.AssetExecutionContext, spool: Any, uk: UkCarbonIntensityFeed, em: ElectricityMapsFeed, start: dt.date, end: dt.date,
    chosen: tuple[str, ...] = FEEDS,
) -> list[str]:
    """Fetch the chosen feeds' payloads into the spool; return transport errors (other feeds still run)."""
    unknown = sorted(set(chosen) - set(FEEDS))
    if unknown:
        raise dg.Failure(f"unknown grid feed(s) {', '.join(unknown)}: choose from {', '.join(FEEDS)}")
    errors: list[str] = []
    feeds = (("uk_carbon_intensity", lambda: uk.payloads(start, end)), ("electricitymaps", em.history_payloads))
    for name, produce in feeds:
        if name not in chosen:
            context.log.info(f"{name}: left out of this run")
            continue
        count = 0
        try:
            for payload in produce():
                landing.write(spool, payload, context.run_id)
                count += 1
                context.log.info(f"{name}: HTTP {payload.status}, {len(payload.body)} bytes from {payload.url}")
        except FeedError as exc:
            errors.append(str(exc))
            context.log.error(str(exc))
        context.log.info(f"{name}: {count} payload(s) received")
    return errors


@table_check(LIVE_TABLE, blocking=False, description="Warns when the newest live period ended more than 2 days ago.")
def grid_intensity_live_fresh(warehouse: Reader) -> dg.AssetCheckResult:
    """Freshness of the live feeds (severity WARN): newest period_end within 2 days of now."""
    summary = warehouse.read(sql_text("feeds/freshness.sql")) if warehouse.has_table(LIVE_TABLE) else pl.DataFrame()
    now = dt.datetime.now(dt.UTC)
    newest = summary.get_column("newest_period_end").max() if summary.height else None
    passed = newest is not None and now - newest <= FRESHNESS_LIMIT  # type: ignore[operator]
    return dg.AssetCheckResult(
        passed=passed,
        severity=dg.AssetCheckSeverity.WARN,
        metadata={
            "newest_period_end": str(newest) if newest is not None else "no live rows",
            "limit": "2 days",
            "by_zone": dg.MetadataValue.md(preview_md(summary, rows=50)) if summary.height else "no live rows",
        },
    )


@table_check(LIVE_TABLE, name="source_ids_join", additional_deps=[dg.AssetKey(["staging", "sources"])],
             description="Every row's source_id joins staging.sources, or names a live feed and its source_file a payload in "
                         "raw.carbon_intensity_payloads.")
def grid_intensity_live_source_ids_join(warehouse: Reader) -> dg.AssetCheckResult:
    """Provenance of every live row resolves to a shipped source or a kept raw payload."""
    if not warehouse.has_table(LIVE_TABLE) or not warehouse.has_table(RAW_TABLE):
        return dg.AssetCheckResult(passed=False, metadata={"orphan_source_ids": f"{LIVE_TABLE} or {RAW_TABLE} does not exist"})
    sql = sql_text("feeds/live_provenance.sql")
    if not warehouse.has_table("staging.sources"):  # not built yet: only the kept payloads resolve rows
        sql = sql.replace("staging.sources", "(select null::varchar as source_id)")
    orphans = warehouse.read(sql).rows()
    return dg.AssetCheckResult(
        passed=not orphans,
        metadata={"orphan_source_ids": ", ".join(f"{sid} ({n} rows)" for sid, n in orphans) or "none"},
    )


@dg.asset(
    key=LIVE_KEY,
    group_name="grid",
    kinds={"duckdb", "polars", "api"},
    partitions_def=DAILY,
    backfill_policy=dg.BackfillPolicy.single_run(),
    metadata=column_metadata(GridIntensity),
    freshness_policy=FRESHNESS_POLICY,
    check_specs=[*staging_checks(LIVE_TABLE, GridIntensity, joins_sources=False), grid_intensity_live_fresh.spec,
                 grid_intensity_live_source_ids_join.spec],
)
def grid_intensity_live(
    context: dg.AssetExecutionContext,
    config: GridFeedsConfig,
    warehouse: Warehouse,
    uk_carbon_intensity: dg.ResourceParam[UkCarbonIntensityFeed],
    electricitymaps: dg.ResourceParam[ElectricityMapsFeed],
) -> dg.MaterializeResult:
    """Grid carbon intensity from the live feeds, upserted per UTC day (same columns as staging.grid_intensity).

    Grain: zone x period x signal x emission scope x feed. UK Carbon Intensity API: GB national
    half-hourly forecast and actual (and NESO regional forecasts, zones ``GB-R<id>``);
    Electricity Maps v3: the last 24 hours of each configured zone. Key: zone, period_start,
    resolution, signal, emission_scope, source_id (``feed_uk_carbon_intensity`` or
    ``feed_electricitymaps``). A stored row changes only when a newer fetch brings a different
    value; an actual removes the forecast of the same period (both stay in
    raw.carbon_intensity_payloads). ``source_file`` names the raw payload that delivered the row.
    """
    window = context.partition_time_window
    start, end = window.start.astimezone(dt.UTC).date(), window.end.astimezone(dt.UTC).date()
    con = warehouse.connection()
    ensure_tables(con, warehouse.published, context.log)
    spool = landing.spool_dir(warehouse.published)
    errors = fetch_all(context, spool, uk_carbon_intensity, electricitymaps, start, end, tuple(config.feeds))
    # only the payloads the warehouse does not hold yet are read; the landed ones are compacted
    spooled_ids = landing.spooled_ids(spool)
    ids = pl.DataFrame({"payload_id": spooled_ids}, schema={"payload_id": pl.String})
    con.register("_spool_ids", ids.to_arrow())
    new_ids = set(query_pl(con, sql_text("feeds/new_payload_ids.sql")).get_column("payload_id").to_list())
    con.unregister("_spool_ids")
    compacted = landing.compact(spool, set(spooled_ids) - new_ids, dt.datetime.now(dt.UTC))
    spooled = landing.read(spool, new_ids)
    seen: set[str] = set()
    pending = []
    for payload, run_id in sorted(spooled, key=lambda item: (item[0].fetched_at, item[0].payload_id)):
        if payload.payload_id in new_ids and payload.payload_id not in seen:
            seen.add(payload.payload_id)
            pending.append((payload, run_id))
    raw, staged, quarantined, parse_errors = land_payloads(con, pending, context.run_id)
    written = write_feed_batch(con, warehouse.published, context.run_id, raw, staged, quarantined)
    errors += parse_errors
    summary = query_pl(con, sql_text("feeds/freshness.sql"))
    total = con.execute(f"select count(*) from {LIVE_TABLE}").fetchall()[0][0]  # noqa: S608 - module constant
    metadata = {
        "dagster/row_count": total,
        "days": f"{start.isoformat()} .. {(end - dt.timedelta(days=1)).isoformat()}",
        "feeds": ", ".join(name for name in FEEDS if name in config.feeds),
        "payloads_landed": raw.height,
        "spool_compacted": compacted["compacted"],
        "spool_days_pruned": compacted["days_pruned"],
        "rows_in_new_payloads": staged.height,
        "days_rewritten": written["days_written"],
        "raw_days_compacted": written["raw_days_compacted"],
        "rejected_records": quarantined.height,
        "newest_by_zone": dg.MetadataValue.md(preview_md(summary, rows=50)),
    }
    if errors:
        raise dg.Failure(
            description="grid feed run failed; nothing was published, and every payload received is kept in the "
            "landing spool for the next run:\n- " + "\n- ".join(errors),
            metadata={"errors": len(errors), "payloads_landed": raw.height},
        )
    # the rows are the lake's (the live view): the checks read them back
    return dg.MaterializeResult(metadata=metadata, check_results=check_results(warehouse, LIVE_TABLE))


class ChargingWindowConfig(dg.Config):
    """Window length in hours and the start of the fixed overnight window (UTC hour)."""

    window_hours: int = 8
    overnight_start_hour_utc: int = 0


@dg.asset(
    key=["marts", "charging_windows"],
    group_name="marts",
    kinds={"duckdb", "sql"},
    deps=[["staging", "grid_intensity"], LIVE_KEY],
    metadata=column_metadata(ChargingWindows),
    check_specs=staging_checks("marts.charging_windows", ChargingWindows, joins_sources=False),
)
def charging_windows(config: ChargingWindowConfig, warehouse: Warehouse) -> dg.MaterializeResult:
    """The cleanest charging window, the fixed overnight window and the daily mean, per zone.

    Grain: zone x emission scope x window kind. From every half-hourly and hourly series
    (staging.grid_intensity and the live feeds; an actual before a forecast), averaged to an
    hour-of-day profile in UTC. ``cleanest``: the contiguous window of ``window_hours`` (8)
    with the lowest mean; ``overnight``: the same length from ``overnight_start_hour_utc``
    (00:00 UTC); ``all_day``: the daily mean. Savings are against the zone's annual average
    and its daily mean. Scenarios reference a row by ``window_id`` with factor_ref.
    """
    if not 1 <= config.window_hours <= 24 or not 0 <= config.overnight_start_hour_utc <= 23:
        raise ValueError("window_hours must be 1..24 and overnight_start_hour_utc 0..23")
    con = warehouse.connection()
    ensure_tables(con, warehouse.published)
    return build_table(
        con, "marts.charging_windows", "marts/charging_windows.sql",
        {"window_hours": config.window_hours, "overnight_start_hour": config.overnight_start_hour_utc}, ChargingWindows,
    )
