"""marts.charging_windows, given rows -> expected rows: per zone and scope with all 24 UTC hours of
the day, the cleanest 8-hour window of the hour-of-day profile, the fixed overnight window from 00:00
UTC and the daily mean, with savings against the annual average and the daily mean; and which value
a period keeps (an actual before a forecast, a live row before a snapshot row, then the newest fetch)."""

from __future__ import annotations

import datetime as dt

import pytest

from pipelines.defs.assets.grid_feeds import ChargingWindowConfig
from tests.marts.given_rows import run_mart

UTC = dt.UTC
CONFIG = ChargingWindowConfig()  # 8 hours from 00:00 UTC, as the pipeline binds them
PARAMS = {"window_hours": CONFIG.window_hours, "overnight_start_hour": CONFIG.overnight_start_hour_utc}
FETCHED = dt.datetime(2024, 2, 1, tzinfo=UTC)


def value(zone: str, hour: int, g: float, *, day: int = 1, minute: int = 0, resolution: str = "PT1H", signal: str = "actual",
          source: str = "ember", fetched: dt.datetime = FETCHED) -> dict:
    start = dt.datetime(2024, 1, day, hour, minute, tzinfo=UTC)
    length = dt.timedelta(minutes=30 if resolution == "PT30M" else 60)
    return {"zone": zone, "emission_scope": "lifecycle", "period_start": start, "period_end": start + length, "signal": signal,
            "resolution": resolution, "gco2e_per_kwh": g, "source_id": source, "source_file": f"{source}.csv", "fetched_at": fetched}


def test_cleanest_overnight_and_all_day_windows_with_their_savings() -> None:
    day1 = [value("DE", h, 40.0 if 10 <= h < 18 else 100.0) for h in range(24) if h != 12]
    day1 += [value("DE", 12, 30.0, resolution="PT30M"), value("DE", 12, 50.0, minute=30, resolution="PT30M")]  # hour 12: 40
    day2 = [value("DE", 0, 160.0, day=2), value("DE", 1, 160.0, day=2)]  # a second day's first two hours
    live = [value("FR", 3, 50.0, source="live")]  # FR has one hour of the day: no rows
    rows = run_mart("marts.charging_windows", {"staging.grid_intensity": day1 + day2, "staging.grid_intensity_live": live}, PARAMS)
    assert [(r["window_id"], r["window_start_hour_utc"], r["window_end_hour_utc"], r["window_hours"]) for r in rows] == [
        ("DE.lifecycle.all_day", 0, 0, 24), ("DE.lifecycle.cleanest", 10, 18, 8), ("DE.lifecycle.overnight", 0, 8, 8)]
    all_day, cleanest, overnight = rows
    # profile: hours 0-1 (100 + 160) / 2 = 130, 2-9 and 18-23 100, 10-17 40
    daily = (2 * 130 + 14 * 100 + 8 * 40) / 24  # 82.5
    annual = (16 * 100 + 8 * 40 + 2 * 160) / 26  # every hour of the data: 2,240 / 26 = 86.15
    assert cleanest["mean_gco2e_per_kwh"] == pytest.approx(40.0, rel=1e-12)
    assert overnight["mean_gco2e_per_kwh"] == pytest.approx((2 * 130 + 6 * 100) / 8, rel=1e-12)  # 107.5
    assert all_day["mean_gco2e_per_kwh"] == all_day["daily_mean_gco2e_per_kwh"] == pytest.approx(daily, rel=1e-12)
    assert cleanest["annual_average_gco2e_per_kwh"] == pytest.approx(annual, rel=1e-12)
    assert cleanest["saving_vs_annual_average"] == pytest.approx(1 - 40 / annual, rel=1e-12)  # 0.5357
    assert cleanest["saving_vs_daily_mean"] == pytest.approx(1 - 40 / 82.5, rel=1e-12)  # 0.5152
    assert overnight["saving_vs_daily_mean"] == pytest.approx(1 - 107.5 / 82.5, rel=1e-12)  # negative: dirtier than the day
    assert (cleanest["n_hours"], cleanest["n_days"]) == (26, 2)
    assert cleanest["first_period_start"] == dt.datetime(2024, 1, 1, tzinfo=UTC)
    assert cleanest["last_period_end"] == dt.datetime(2024, 1, 2, 2, tzinfo=UTC)
    assert (cleanest["signals"], cleanest["source_id"], cleanest["source_file"]) == ("actual", "ember", "ember.csv")


def test_a_period_keeps_an_actual_then_a_live_row_then_the_newest_fetch() -> None:
    later = FETCHED + dt.timedelta(days=1)
    shipped = [value("GB", h, 100.0) for h in range(24) if h != 7]
    shipped += [value("GB", 3, 999.0, signal="forecast"),  # the shipped actual of hour 3 wins
                value("GB", 7, 100.0, signal="forecast"),  # hour 7 has only a forecast: kept
                value("GB", 9, 1.0, resolution="P1D")]  # not hourly: left out
    live = [value("GB", 4, 10.0, source="live"),  # a live actual replaces the shipped one
            value("GB", 5, 5.0, signal="forecast", source="live"),  # a live forecast does not replace a shipped actual
            value("GB", 6, 20.0, source="live"), value("GB", 6, 30.0, source="live", fetched=later)]  # the newest fetch
    partial = [value("PL", h, 700.0) for h in range(23)]  # 23 hours of the day: no rows
    rows = run_mart("marts.charging_windows", {"staging.grid_intensity": shipped + partial, "staging.grid_intensity_live": live}, PARAMS)
    assert [r["window_id"] for r in rows] == ["GB.lifecycle.all_day", "GB.lifecycle.cleanest", "GB.lifecycle.overnight"]
    all_day, cleanest, overnight = rows
    # profile: 100 except hour 4 (10) and hour 6 (30)
    assert all_day["mean_gco2e_per_kwh"] == pytest.approx((22 * 100 + 10 + 30) / 24, rel=1e-12)  # 93.33
    # every window from 23:00 to 04:00 holds hours 4 and 6: (6 x 100 + 10 + 30) / 8 = 80; the earliest start wins
    assert (cleanest["window_start_hour_utc"], cleanest["mean_gco2e_per_kwh"]) == (0, pytest.approx(80.0, rel=1e-12))
    assert overnight["mean_gco2e_per_kwh"] == pytest.approx(80.0, rel=1e-12)
    assert cleanest["signals"] == "actual+forecast" and cleanest["n_hours"] == 24
    assert cleanest["source_id"] == "ember"  # the shipped source with most periods, before the live feed
