"""marts.charging_windows: values recomputed independently, live rows, and the scenario that uses it."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import duckdb
import polars as pl
import pytest

from pipelines.paths import sql_text
from pipelines.warehouse.database import open_readonly
from pipelines.warehouse.queries import query_pl
from schemas.grid_intensity import GridIntensity
from schemas.meta import conform, empty_frame

SQL = sql_text("marts/charging_windows.sql")


def profile_windows(hourly: pl.DataFrame, hours: int) -> tuple[int, float, float, float]:
    """(cleanest start hour, its mean, overnight 00-`hours` mean, daily mean) from hourly values."""
    profile = hourly.group_by(pl.col("hour_start").dt.hour().alias("h")).agg(pl.col("g").mean()).sort("h")
    values = profile.get_column("g").to_list()
    assert len(values) == 24
    means = [sum(values[(s + k) % 24] for k in range(hours)) / hours for s in range(24)]
    best = min(range(24), key=lambda s: (means[s], s))
    return best, means[best], means[0], sum(values) / 24


def test_rows_for_every_zone_with_hourly_data(built_warehouse: Path) -> None:
    con = open_readonly(built_warehouse)
    series = query_pl(con, """
        select zone, emission_scope, count(distinct hour(period_start)) as hours_of_day
        from staging.grid_intensity
        where resolution in ('PT30M', 'PT1H') and signal in ('actual', 'forecast')
        group by all""")
    marts = query_pl(con, "select zone, emission_scope, window_kind from marts.charging_windows")
    expected = {(z, s) for z, s, h in series.iter_rows() if h == 24}
    assert {"GB", "DE", "FR", "US-CAL-CISO", "IN-WE", "US-CAL-CISO-PROD", "US-MIDW-MISO"} <= {z for z, _ in expected}
    assert {(z, s) for z, s, _ in marts.iter_rows()} == expected
    assert marts.height == 3 * len(expected)
    assert set(marts.get_column("window_kind").to_list()) == {"cleanest", "overnight", "all_day"}


def test_de_lifecycle_windows_match_an_independent_computation(built_warehouse: Path) -> None:
    con = open_readonly(built_warehouse)
    raw = query_pl(con, """
        select period_start, gco2e_per_kwh from staging.grid_intensity
        where zone = 'DE' and emission_scope = 'lifecycle' and resolution = 'PT1H' and signal = 'actual'""")
    hourly = raw.rename({"period_start": "hour_start", "gco2e_per_kwh": "g"})
    assert hourly.height == 8760
    start, cleanest, overnight, daily = profile_windows(hourly, 8)
    annual = hourly.get_column("g").mean()
    rows = {r["window_kind"]: r for r in query_pl(con, "select * from marts.charging_windows where zone = 'DE' and emission_scope = 'lifecycle'").iter_rows(named=True)}
    assert rows["cleanest"]["window_start_hour_utc"] == start == 7
    assert rows["cleanest"]["window_end_hour_utc"] == 15
    assert rows["cleanest"]["mean_gco2e_per_kwh"] == pytest.approx(cleanest, rel=1e-12)
    assert rows["overnight"]["mean_gco2e_per_kwh"] == pytest.approx(overnight, rel=1e-12)
    assert rows["all_day"]["mean_gco2e_per_kwh"] == pytest.approx(daily, rel=1e-12)
    assert rows["cleanest"]["annual_average_gco2e_per_kwh"] == pytest.approx(annual, rel=1e-12)
    assert rows["cleanest"]["saving_vs_annual_average"] == pytest.approx(1 - cleanest / annual, rel=1e-9)
    assert rows["overnight"]["saving_vs_annual_average"] < 0  # in Germany the night is dirtier than average
    assert round(rows["cleanest"]["mean_gco2e_per_kwh"], 1) == 340.6 and round(annual, 1) == 395.1
    assert rows["cleanest"]["source_id"] == "electricitymaps_de_2023_hourly"


def test_window_length_is_a_bound_parameter(built_warehouse: Path) -> None:
    con = open_readonly(built_warehouse)
    hourly = query_pl(con, """
        select period_start as hour_start, gco2e_per_kwh as g from staging.grid_intensity
        where zone = 'FR' and emission_scope = 'direct' and resolution = 'PT1H' and signal = 'actual'""")
    start, mean, overnight, _ = profile_windows(hourly, 4)
    out = query_pl(con, SQL, {"window_hours": 4, "overnight_start_hour": 0}).filter(pl.col("window_id").str.starts_with("FR.direct."))
    cleanest = out.filter(pl.col("window_kind") == "cleanest").row(0, named=True)
    assert (cleanest["window_hours"], cleanest["window_start_hour_utc"]) == (4, start)
    assert cleanest["mean_gco2e_per_kwh"] == pytest.approx(mean, rel=1e-12)
    assert out.filter(pl.col("window_kind") == "overnight").get_column("mean_gco2e_per_kwh").item() == pytest.approx(overnight, rel=1e-12)


def test_scenario_takes_the_cleanest_window_and_changes_the_reduction_factor(built_warehouse: Path) -> None:
    con = open_readonly(built_warehouse)
    window = query_pl(con, "select mean_gco2e_per_kwh from marts.charging_windows where window_id = 'DE.lifecycle.cleanest'").item()
    param = query_pl(con, """
        select value, status, source_id from core.scenario_parameters
        where scenario_id = 'charging_window' and parameter = 'edge_grid_gco2e_per_kwh'""").row(0, named=True)
    assert param["value"] == pytest.approx(window, rel=1e-12)
    assert (param["status"], param["source_id"]) == ("derived", "electricitymaps_de_2023_hourly")
    fleet = query_pl(con, """
        select scenario_id, device_class, reduction_factor from marts.fleet_equivalence
        where scenario_id in ('paper_text', 'charging_window') order by device_class, scenario_id""")
    r = {(row["scenario_id"], row["device_class"]): row["reduction_factor"] for row in fleet.iter_rows(named=True)}
    for device in ("laptop", "phone"):
        # everything else is paper_text; edge carbon is linear in the edge grid intensity (no embodied share)
        assert r[("charging_window", device)] / r[("paper_text", device)] == pytest.approx(367 / window, rel=1e-9)
    assert round(r[("charging_window", "laptop")], 2) == round(r[("paper_text", "laptop")] * 367 / window, 2)


def _frame(rows: list[dict]) -> pl.DataFrame:
    base = {"zone_name": "Test", "country_iso3": None, "resolution": "PT1H", "emission_scope": "direct", "is_estimated": None,
            "fetched_at": dt.datetime(2026, 1, 2, tzinfo=dt.UTC), "source_file": "f", "source_row": 1}
    frame = pl.DataFrame([{**base, **r, "period_end": r["period_start"] + dt.timedelta(hours=1)} for r in rows])
    return pl.concat([empty_frame(GridIntensity), conform(GridIntensity, frame)])


def test_live_rows_count_and_actual_beats_forecast() -> None:
    """A zone with only live data gets windows; an actual wins over a forecast, live over snapshot."""
    day = dt.datetime(2026, 1, 1, tzinfo=dt.UTC)
    values = [100.0] * 24
    for h in (3, 4, 5, 6, 7, 8, 9, 10):
        values[h] = 10.0  # the clean window: 03-11 UTC
    live = [{"zone": "XX", "period_start": day + dt.timedelta(hours=h), "gco2e_per_kwh": v, "signal": "actual", "source_id": "feed_x"} for h, v in enumerate(values)]
    live.append({"zone": "XX", "period_start": day + dt.timedelta(hours=20), "gco2e_per_kwh": 1.0, "signal": "forecast", "source_id": "feed_x"})
    snapshot = [{"zone": "XX", "period_start": day + dt.timedelta(hours=3), "gco2e_per_kwh": 500.0, "signal": "actual", "source_id": "snap"}]
    con = duckdb.connect()
    con.execute("set TimeZone = 'UTC'")
    con.execute("create schema staging")
    con.register("_live", _frame(live).to_arrow())
    con.register("_snap", _frame(snapshot).to_arrow())
    con.execute("create table staging.grid_intensity_live as select * from _live")
    con.execute("create table staging.grid_intensity as select * from _snap")
    out = query_pl(con, SQL, {"window_hours": 8, "overnight_start_hour": 0})
    rows = {r["window_kind"]: r for r in out.iter_rows(named=True)}
    assert set(out.get_column("zone").to_list()) == {"XX"}
    assert (rows["cleanest"]["window_start_hour_utc"], rows["cleanest"]["mean_gco2e_per_kwh"]) == (3, 10.0)
    assert rows["all_day"]["mean_gco2e_per_kwh"] == pytest.approx(sum(values) / 24)
    assert rows["overnight"]["mean_gco2e_per_kwh"] == pytest.approx((100 * 3 + 10 * 5) / 8)
    assert rows["cleanest"]["signals"] == "actual"
    assert rows["cleanest"]["source_id"] == "feed_x"  # the snapshot's only value lost to the live one
