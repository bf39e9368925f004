"""The edge device classes a page shows: whatever the marts hold, in name order."""

from __future__ import annotations

import polars as pl


def device_classes(frame: pl.DataFrame) -> list[str]:
    """The device classes a frame holds, by name: the rows of the mart decide which, so a class
    added to a scenario's device rows (core.scenario_devices) appears without editing a page."""
    return sorted(set(frame.get_column("device_class").unique().to_list()))
