"""marts.grid_daily, given rows -> expected rows: UTC-day means of the sub-daily actual series, one scope per zone."""

from __future__ import annotations

import datetime as dt

from tests.marts.given_rows import run_mart

UTC = dt.UTC


def reading(zone: str, hour: int, value: float, *, day: int = 1, scope: str = "lifecycle", resolution: str = "PT1H",
            signal: str = "actual") -> dict:
    return {"zone": zone, "period_start": dt.datetime(2024, 3, day, hour, tzinfo=UTC), "signal": signal,
            "resolution": resolution, "emission_scope": scope, "gco2e_per_kwh": value}


def test_a_zone_reads_its_lifecycle_series_else_its_first_other_scope() -> None:
    rows = run_mart("marts.grid_daily", {"staging.grid_intensity": [
        reading("GB", 0, 100.0), reading("GB", 12, 200.0), reading("GB", 23, 300.0),
        reading("GB", 1, 50.0, scope="direct"),  # GB has lifecycle: its direct series is left out
        reading("GB", 0, 120.0, day=2, resolution="PT30M"),
        reading("GB", 0, 999.0, day=3, signal="forecast"),  # a forecast: left out
        reading("DE", 6, 400.0, scope="direct"), reading("DE", 7, 500.0, scope="operational"),  # no lifecycle: 'direct' first
        reading("DE", 8, 900.0, resolution="P1D", scope="direct"),  # not sub-daily: left out
    ]})
    assert rows == [
        {"zone": "DE", "emission_scope": "direct", "day": dt.date(2024, 3, 1), "gco2e_per_kwh": 400.0, "periods": 1},
        {"zone": "GB", "emission_scope": "lifecycle", "day": dt.date(2024, 3, 1), "gco2e_per_kwh": 200.0, "periods": 3},
        {"zone": "GB", "emission_scope": "lifecycle", "day": dt.date(2024, 3, 2), "gco2e_per_kwh": 120.0, "periods": 1},
    ]
