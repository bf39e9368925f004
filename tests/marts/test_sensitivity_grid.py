"""marts.sensitivity_grid, given rows -> expected rows: its SQL (sql/marts/sensitivity_grid.sql) over the family
'grid' of the typed paper_text scenario (tests/marts/model_rows.py), whose file states the multipliers and hours,
no build."""

from __future__ import annotations

import math

import polars as pl
import pytest

from tests.marts.model_rows import declared_mart, scenario_connection

CLOUD = 123.75 + 700 * 24 * 365 * 3 * 367 / 1e6  # kg: the GPU's embodied + 700 W x 24 h x 365 x 3 y at 367 g/kWh
LAPTOP_KG = 15 * 365 * 3 * 367 / 1e6  # one laptop-hour a day over the horizon: 15 W x 365 x 3 y at 367 g/kWh
RADIO_KG = 0.5 * 365 * 3 * 3600 / 3.6e6 * 0.367  # one laptop's 0.5 W radio, one hour a day over the horizon
#: The grid's axes as sql/variants/grid.sql states them: multipliers 0.25 to 3 in steps of 0.25, hours 1 to 24.
MULTIPLIERS = [0.25 * i for i in range(1, 13)]
HOURS = [float(h) for h in range(1, 25)]


@pytest.fixture(scope="module")
def frame() -> pl.DataFrame:
    return declared_mart("marts.sensitivity_grid", scenario_connection())


def r(frame: pl.DataFrame, pattern: str, multiplier: float, hours: float, device_class: str = "laptop") -> dict:
    picked = frame.filter((pl.col("device_class") == device_class) & (pl.col("pattern") == pattern)
                          & (pl.col("device_multiplier") == multiplier) & (pl.col("hours_per_day") == hours))
    assert picked.height == 1
    return picked.row(0, named=True)


def test_one_row_per_point_and_one_scenario_point(frame: pl.DataFrame) -> None:
    assert frame.height == 2 * 6 * 12 * 24  # classes x patterns x multipliers 0.25-3 x hours 1-24
    assert sorted(frame.get_column("device_multiplier").unique()) == MULTIPLIERS
    assert sorted(frame.get_column("hours_per_day").unique()) == HOURS
    points = frame.filter(pl.col("is_scenario_point"))
    assert points.height == 2 * 6
    assert set(points.select("device_multiplier", "hours_per_day").rows()) == {(1.0, 8.0)}  # paper_text trains 8 h a day


def test_r_is_inversely_proportional_to_the_multiplier(frame: pl.DataFrame) -> None:
    base = r(frame, "none", 1.0, 8.0)
    assert base["devices"] == 15.0
    assert base["reduction_factor"] == pytest.approx(CLOUD / (15 * 8 * LAPTOP_KG), rel=1e-12)  # 9.504411
    for m in MULTIPLIERS:  # m x 15 laptops: R / m, on compute only and on the paper's radio window
        assert r(frame, "none", m, 8.0)["reduction_factor"] == pytest.approx(base["reduction_factor"] / m, rel=1e-12)
        radio = r(frame, "radio_window", m, 8.0)["reduction_factor"]
        assert radio == pytest.approx(CLOUD / (m * 15 * 8 * (LAPTOP_KG + RADIO_KG)), rel=1e-12)
    assert r(frame, "none", 2.0, 8.0)["reduction_factor"] == pytest.approx(4.752205, rel=1e-6)


def test_the_bytes_of_a_job_do_not_scale_with_the_multiplier(frame: pl.DataFrame) -> None:
    # the idealized pattern's bytes are the job's (tokens x params), sent by however many devices:
    # doubling the fleet doubles the training electricity only
    one, two = r(frame, "idealized", 1.0, 8.0), r(frame, "idealized", 2.0, 8.0)
    comm = one["edge_added_kgco2e"] - 15 * 8 * LAPTOP_KG
    assert two["edge_added_kgco2e"] == pytest.approx(2 * 15 * 8 * LAPTOP_KG + comm, rel=1e-12)
    assert two["reduction_factor"] > one["reduction_factor"] / 2


def test_fewer_hours_need_more_devices_rounded_up(frame: pl.DataFrame) -> None:
    # the stated 15 laptops at 8 h a day: at 7 h, ceil(15 x 8 / 7) = ceil(17.14) = 18 laptops,
    # 126 laptop-hours a day for the same work instead of 120
    seven = r(frame, "none", 1.0, 7.0)
    assert seven["devices"] == math.ceil(15 * 8 / 7) == 18
    assert seven["reduction_factor"] == pytest.approx(CLOUD / (18 * 7 * LAPTOP_KG), rel=1e-12)  # 9.05182
    # at 4 h exactly 30 laptops: the same laptop-hours, the same R
    assert r(frame, "none", 1.0, 4.0)["devices"] == 30.0
    assert r(frame, "none", 1.0, 4.0)["reduction_factor"] == pytest.approx(r(frame, "none", 1.0, 8.0)["reduction_factor"], rel=1e-12)
    assert set(frame.get_column("cloud_total_kgco2e").round(6)) == {round(CLOUD, 6)}
