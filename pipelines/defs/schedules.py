"""The grid-feed job and its schedule (registered in pipelines/defs/definitions.py).

``grid_feeds`` materialises staging.grid_intensity_live for a range of UTC days (one run per
range: the asset splits requests within each API's limits). ``grid_feeds_hourly`` runs it
every hour at :20 for yesterday and today, so late actuals replace the forecasts.
"""

from __future__ import annotations

import datetime as dt

import dagster as dg

from pipelines.defs.assets.grid_feeds import DAILY, LIVE_KEY

#: Dagster's run tags for a partition range (one run over several days).
RANGE_START_TAG = "dagster/asset_partition_range_start"
RANGE_END_TAG = "dagster/asset_partition_range_end"

grid_feeds_job = dg.define_asset_job(
    "grid_feeds",
    selection=dg.AssetSelection.assets(LIVE_KEY),
    partitions_def=DAILY,
    description="Fetch the live grid-intensity feeds for a range of UTC days, land the payloads and upsert staging.grid_intensity_live.",
)


def refresh_range(scheduled_for: dt.datetime) -> tuple[str, str]:
    """Partition keys (YYYY-MM-DD) of yesterday and today, UTC, at ``scheduled_for``."""
    today = scheduled_for.astimezone(dt.UTC).date()
    return (today - dt.timedelta(days=1)).isoformat(), today.isoformat()


def refresh_request(scheduled_for: dt.datetime) -> dg.RunRequest:
    """One run over yesterday and today (a partition range)."""
    first, last = refresh_range(scheduled_for)
    return dg.RunRequest(
        run_key=f"grid_feeds:{first}..{last}@{scheduled_for.astimezone(dt.UTC):%Y-%m-%dT%H:%MZ}",
        tags={RANGE_START_TAG: first, RANGE_END_TAG: last},
    )


@dg.schedule(
    name="grid_feeds_hourly",
    job=grid_feeds_job,
    cron_schedule="20 * * * *",
    execution_timezone="UTC",
    default_status=dg.DefaultScheduleStatus.RUNNING,
    description="Every hour at :20 UTC: refresh yesterday and today from the live grid feeds.",
)
def grid_feeds_hourly(context: dg.ScheduleEvaluationContext) -> dg.RunRequest:
    """Refresh yesterday and today (UTC)."""
    scheduled = context.scheduled_execution_time or dt.datetime.now(dt.UTC)
    return refresh_request(scheduled)


jobs = [grid_feeds_job]
schedules = [grid_feeds_hourly]
