"""The edge device classes a page shows: whatever the marts hold, the paper's two first."""

from __future__ import annotations

import polars as pl


def device_classes(frame: pl.DataFrame) -> list[str]:
    """The edge device classes a frame holds: the paper's first, then the rest by name."""
    present = set(frame.get_column("device_class").unique().to_list())
    return [c for c in ("laptop", "phone") if c in present] + sorted(present - {"laptop", "phone"})
