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
from typing import Any

import dagster as dg
import polars as pl

from pipelines.ingest.feeds import landing
from pipelines.ingest.feeds.electricitymaps import ElectricityMapsFeed
from pipelines.ingest.feeds.http import FeedError
from pipelines.ingest.feeds.live import FEEDS, LIVE_TABLE, RAW_TABLE, land_payloads
from pipelines.ingest.feeds.uk_carbon_intensity import UkCarbonIntensityFeed
from pipelines.lib.checks import Reader, check_results, staging_checks, table_check
from pipelines.lib.keys import LIVE_KEY
from pipelines.lib.metadata import column_metadata
from pipelines.lib.resources import Warehouse
from pipelines.lib.tables import build_table
from pipelines.paths import sql_text
from pipelines.warehouse.live_feed import ensure_tables, write_feed_batch
from pipelines.warehouse.queries import query_pl
from pipelines.warehouse.tables import preview_md
from schemas.charging_windows import ChargingWindows
from schemas.grid_intensity import GridIntensity

#: One partition per UTC day; end_offset=1 makes today a partition too.
DAILY = dg.DailyPartitionsDefinition(start_date="2023-01-01", end_offset=1)
#: The freshness check warns when the newest live period ended longer ago than this.
FRESHNESS_LIMIT = dt.timedelta(days=2)
#: Time since the last materialisation: WARN after three missed hourly refreshes, FAIL after a
#: day (by then yesterday has left the schedule's yesterday-and-today range; backfill it).
FRESHNESS_POLICY = dg.FreshnessPolicy.time_window(fail_window=dt.timedelta(days=1), warn_window=dt.timedelta(hours=3))


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
    new_ids = set(query_pl(con, sql_text("feeds/new_payload_ids.sql"), {"spooled": list(spooled_ids)})
                  .get_column("payload_id").to_list())
    compacted = landing.compact(spool, set(spooled_ids) - new_ids, dt.datetime.now(dt.UTC))
    spooled = landing.read(spool, new_ids)
    seen: set[str] = set()
    pending = []
    for payload, run_id in sorted(spooled, key=lambda item: (item[0].fetched_at, item[0].payload_id)):
        if payload.payload_id in new_ids and payload.payload_id not in seen:
            seen.add(payload.payload_id)
            pending.append((payload, run_id))
    raw, staged, quarantined, parse_errors = land_payloads(pending, context.run_id)
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
