"""marts.grid_profiles, given rows -> expected rows: each zone's mean, lowest and highest intensity per UTC hour of
the day, in the scope marts.grid_daily chose for it."""

from __future__ import annotations

from tests.marts.given_rows import run_mart
from tests.marts.test_grid_daily import reading


def test_the_profile_reads_each_zones_chosen_scope_by_hour_of_the_day() -> None:
    """marts.grid_profiles: mean, lowest and highest per UTC hour, in the scope marts.grid_daily chose."""
    given = [reading("GB", 0, 100.0), reading("GB", 0, 300.0, day=2), reading("GB", 12, 200.0),
             reading("GB", 0, 50.0, scope="direct"),  # not the zone's chosen scope: left out
             reading("GB", 13, 999.0, signal="forecast")]  # a forecast: left out
    rows = run_mart("marts.grid_profiles", {"staging.grid_intensity": given,
                                            "marts.grid_daily": [{"zone": "GB", "emission_scope": "lifecycle"}]})
    assert rows == [
        {"zone": "GB", "emission_scope": "lifecycle", "hour_utc": 0, "mean_gco2e_per_kwh": 200.0, "min_gco2e_per_kwh": 100.0,
         "max_gco2e_per_kwh": 300.0, "periods": 2},
        {"zone": "GB", "emission_scope": "lifecycle", "hour_utc": 12, "mean_gco2e_per_kwh": 200.0, "min_gco2e_per_kwh": 200.0,
         "max_gco2e_per_kwh": 200.0, "periods": 1},
    ]
