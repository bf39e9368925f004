"""Asset keys from table names, shared by the assets, their checks and the staging helpers."""

import dagster as dg

SOURCES_KEY = dg.AssetKey(["staging", "sources"])


def key_of(table: str) -> dg.AssetKey:
    """``staging.device_pcf`` -> AssetKey(["staging", "device_pcf"])."""
    return dg.AssetKey(table.split("."))
