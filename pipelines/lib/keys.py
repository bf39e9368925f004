"""Asset keys from table names, shared by the assets, their checks and the staging helpers."""

import dagster as dg

from pipelines.ingest.feeds.live import LIVE_TABLE

SOURCES_KEY = dg.AssetKey(["staging", "sources"])
#: The live grid feeds' table: a daily-partitioned asset the offline build leaves out.
LIVE_KEY = dg.AssetKey(LIVE_TABLE.split("."))


def key_of(table: str) -> dg.AssetKey:
    """``staging.device_pcf`` -> AssetKey(["staging", "device_pcf"])."""
    return dg.AssetKey(table.split("."))
