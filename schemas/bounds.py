"""Physical bounds that the contracts check and the parsers' plausibility checks share."""

from __future__ import annotations

import datetime as dt

#: Physical bounds of grid carbon intensity (gCO2e/kWh). Zero is an all-renewable or nuclear
#: hour under direct accounting; the dirtiest fuel, lignite, emits about 1,100-1,300
#: g/kWh life-cycle, so no grid mix exceeds about 1,300. 2,000 leaves room for odd plants
#: and still rejects unit errors (kg or lb per MWh read as g per kWh) and sentinels.
GRID_MIN_G_PER_KWH = 0
GRID_MAX_G_PER_KWH = 2000


def now_utc() -> dt.datetime:
    """The build time (a function so that a test can pin it)."""
    return dt.datetime.now(dt.UTC)


