"""The grid-feed job and its schedule (registered in pipelines/definitions.py).

``grid_feeds`` materialises staging.grid_intensity_live for a range of UTC days (one run per
range: the asset splits requests within each API's limits), then everything downstream of it
(marts.charging_windows, the scenarios that read it through ``factor_ref``, the marts built on
the scenarios and the dashboards), in the same run, so new live rows reach the marts without a
full rebuild and are published together with them. ``grid_feeds_hourly`` runs it every hour at
:20 for yesterday and today, so late actuals replace the forecasts.

Before each tick the schedule probes every feed it would call (one short TCP connect to the
API host, and for Electricity Maps the token): a feed that fails its probe is left out of the
run, and when no feed is left the tick is skipped with the reasons (feed and URL) instead of
launching a run that can only fail. The recorded clients (``EDGE_CARBON_FEEDS=recorded``)
always pass.
"""

from __future__ import annotations

import datetime as dt

import dagster as dg

from pipelines.defs.assets.grid_feeds import GridFeedsConfig
from pipelines.ingest.feeds.electricitymaps import ElectricityMapsFeed
from pipelines.ingest.feeds.live import FEEDS
from pipelines.ingest.feeds.uk_carbon_intensity import UkCarbonIntensityFeed
from pipelines.lib.keys import LIVE_KEY

#: Dagster's run tags for a partition range (one run over several days).
RANGE_START_TAG = "dagster/asset_partition_range_start"
RANGE_END_TAG = "dagster/asset_partition_range_end"
#: Run tag naming the feeds a scheduled run left out because their probe failed.
SKIPPED_FEEDS_TAG = "edge_carbon/skipped_feeds"
#: The live asset's op, whose run config chooses the feeds.
LIVE_OP = LIVE_KEY.to_python_identifier()

grid_feeds_job = dg.define_asset_job(
    "grid_feeds",
    selection=dg.AssetSelection.assets(LIVE_KEY).downstream(),
    description="Fetch the live grid-intensity feeds for a range of UTC days, land the payloads, upsert "
    "staging.grid_intensity_live and rebuild what reads it (marts.charging_windows, the scenarios, their marts).",
)


def refresh_range(scheduled_for: dt.datetime) -> tuple[str, str]:
    """Partition keys (YYYY-MM-DD) of yesterday and today, UTC, at ``scheduled_for``."""
    today = scheduled_for.astimezone(dt.UTC).date()
    return (today - dt.timedelta(days=1)).isoformat(), today.isoformat()


def refresh_request(scheduled_for: dt.datetime, feeds: tuple[str, ...] = FEEDS, skipped: dict[str, str] | None = None) -> dg.RunRequest:
    """One run over yesterday and today (a partition range) fetching ``feeds``."""
    first, last = refresh_range(scheduled_for)
    tags = {RANGE_START_TAG: first, RANGE_END_TAG: last}
    if skipped:
        tags[SKIPPED_FEEDS_TAG] = ",".join(sorted(skipped))
    return dg.RunRequest(
        run_key=f"grid_feeds:{first}..{last}@{scheduled_for.astimezone(dt.UTC):%Y-%m-%dT%H:%MZ}",
        run_config=dg.RunConfig(ops={LIVE_OP: GridFeedsConfig(feeds=list(feeds))}),
        tags=tags,
    )


def probe_feeds(uk: UkCarbonIntensityFeed, em: ElectricityMapsFeed) -> tuple[tuple[str, ...], dict[str, str]]:
    """(feeds a run can call now, {feed: why not} for the others).

    Electricity Maps is asked only when zones are configured; without zones it has nothing to
    fetch and is neither run nor reported.
    """
    clients = {"uk_carbon_intensity": uk, **({"electricitymaps": em} if em.zones else {})}
    reasons = {name: client.probe() for name, client in clients.items()}
    ready = tuple(name for name in FEEDS if name in reasons and reasons[name] is None)
    return ready, {name: reason for name, reason in reasons.items() if reason is not None}


@dg.schedule(
    name="grid_feeds_hourly",
    job=grid_feeds_job,
    cron_schedule="20 * * * *",
    execution_timezone="UTC",
    default_status=dg.DefaultScheduleStatus.RUNNING,
    description="Every hour at :20 UTC: refresh yesterday and today from the live grid feeds and rebuild "
    "what reads them; skipped with the reason when no feed is reachable.",
)
def grid_feeds_hourly(
    context: dg.ScheduleEvaluationContext,
    uk_carbon_intensity: dg.ResourceParam[UkCarbonIntensityFeed],
    electricitymaps: dg.ResourceParam[ElectricityMapsFeed],
) -> dg.RunRequest | dg.SkipReason:
    """Refresh yesterday and today (UTC) from every feed that passes its probe."""
    scheduled = context.scheduled_execution_time or dt.datetime.now(dt.UTC)
    ready, skipped = probe_feeds(uk_carbon_intensity, electricitymaps)
    for reason in skipped.values():
        context.log.warning(f"left out of this tick: {reason}")
    if not ready:
        return dg.SkipReason("no grid feed can be reached, so no run was launched:\n- " + "\n- ".join(skipped.values()))
    return refresh_request(scheduled, ready, skipped)


jobs = [grid_feeds_job]
schedules = [grid_feeds_hourly]
