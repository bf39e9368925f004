"""marts.grid_annual, given rows -> expected rows: the lifecycle annual averages per zone and year."""

from __future__ import annotations

import datetime as dt

import pytest

from tests.marts.given_rows import run_mart

UTC = dt.UTC


def grid(zone: str, year: int, value: float, *, signal: str = "annual_average", scope: str = "lifecycle",
         source: str = "ember", name: str | None = None) -> dict:
    return {"zone": zone, "zone_name": name, "period_start": dt.datetime(year, 1, 1, tzinfo=UTC), "signal": signal,
            "emission_scope": scope, "gco2e_per_kwh": value, "source_id": source}


def test_one_row_per_zone_and_year_from_the_lifecycle_annual_averages() -> None:
    rows = run_mart("marts.grid_annual", {"staging.grid_intensity": [
        grid("FR", 2023, 56.0, name="France"), grid("FR", 2023, 60.0, name="France", source="other"),
        grid("FR", 2024, 40.0, name="France"), grid("DE", 2023, 380.0),
        grid("DE", 2023, 350.0, scope="direct"),  # another scope: left out
        grid("DE", 2023, 999.0, signal="actual"),  # not an annual average: left out
    ]})
    assert rows == [
        {"zone": "DE", "zone_name": "DE", "year": 2023, "gco2e_per_kwh": 380.0, "source_id": "ember"},
        {"zone": "FR", "zone_name": "France", "year": 2023, "gco2e_per_kwh": pytest.approx(58.0), "source_id": "ember"},
        {"zone": "FR", "zone_name": "France", "year": 2024, "gco2e_per_kwh": 40.0, "source_id": "ember"},
    ]
