"""Live grid-intensity feed clients (Dagster resources), each with a recorded twin.

- :mod:`pipelines.feeds.uk_carbon_intensity`: UK Carbon Intensity API (no key).
- :mod:`pipelines.feeds.electricitymaps`: Electricity Maps v3 (token from ELECTRICITYMAPS_TOKEN).
- :mod:`pipelines.feeds.http`: the shared session (retries, timeouts, User-Agent).
- :mod:`pipelines.feeds.landing`: the on-disk spool that keeps every payload of a failed run.
"""

from __future__ import annotations

import os

from pipelines.feeds.electricitymaps import (
    ElectricityMapsApi,
    ElectricityMapsFeed,
    RecordedElectricityMaps,
)
from pipelines.feeds.uk_carbon_intensity import (
    RecordedUkCarbonIntensity,
    UkCarbonIntensityApi,
    UkCarbonIntensityFeed,
)

#: ``live`` (default) or ``recorded``: which clients the code location binds.
FEEDS_ENV = "EDGE_CARBON_FEEDS"

__all__ = [
    "FEEDS_ENV",
    "ElectricityMapsApi",
    "ElectricityMapsFeed",
    "RecordedElectricityMaps",
    "RecordedUkCarbonIntensity",
    "UkCarbonIntensityApi",
    "UkCarbonIntensityFeed",
    "feed_resources",
]


def feed_resources(mode: str | None = None) -> dict[str, UkCarbonIntensityFeed | ElectricityMapsFeed]:
    """Resources ``uk_carbon_intensity`` and ``electricitymaps``: live, or the recorded replays.

    ``mode`` defaults to ``$EDGE_CARBON_FEEDS`` or ``live``. Live Electricity Maps has no zones
    until configured (so no token is needed by default).
    """
    chosen = (mode or os.environ.get(FEEDS_ENV) or "live").strip().lower()
    if chosen == "recorded":
        return {"uk_carbon_intensity": RecordedUkCarbonIntensity(), "electricitymaps": RecordedElectricityMaps()}
    if chosen != "live":
        raise ValueError(f"{FEEDS_ENV} must be 'live' or 'recorded', not {chosen!r}")
    return {"uk_carbon_intensity": UkCarbonIntensityApi(), "electricitymaps": ElectricityMapsApi()}
