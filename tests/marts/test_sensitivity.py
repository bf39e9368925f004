"""marts.sensitivity, given rows -> expected rows: its SQL (sql/marts/sensitivity.sql) over the family 'tornado' of
the typed paper_text scenario (tests/marts/model_rows.py), as a build runs it, no build."""

from __future__ import annotations

import math

import polars as pl
import pytest

from tests.marts.model_rows import declared_mart, ranged, scenario_connection

# paper_text, laptop class, compute only: R = cloud / edge with
CLOUD_OP = 700 * 1.0 * 24 * 365 * 3 * 1.0 * 367 / 1e6  # kg: 700 W x utilisation 1 x 24 h x 365 x 3 y x PUE 1 at 367 g/kWh
CLOUD = 123.75 + CLOUD_OP  # + the GPU's embodied 123.75 kg: 6875.082
EDGE = 15 * 15 * 8 * 365 * 3 * 367 / 1e6  # 15 stated laptops x 15 W x 8 h x 365 x 3 y at 367 g/kWh: 723.357
R = CLOUD / EDGE  # 9.504411


@pytest.fixture(scope="module")
def laptop() -> dict[str, dict]:
    frame = declared_mart("marts.sensitivity", scenario_connection())
    assert frame.height == 2 * 6 * len(ranged())  # classes x patterns x parameters with low < high
    rows = frame.filter((pl.col("device_class") == "laptop") & (pl.col("pattern") == "none"))
    assert set(rows.get_column("network_method")) == {"radio"}  # the as_published frame's one network method
    return {r["parameter"]: r for r in rows.iter_rows(named=True)}


def test_r_at_the_grid_intensitys_low_and_high(laptop: dict[str, dict]) -> None:
    cloud = laptop["cloud_grid_gco2e_per_kwh"]
    assert (cloud["value"], cloud["value_low"], cloud["value_high"], cloud["unit"]) == (367.0, 250.0, 480.0, "gCO2e/kWh")
    # the cloud's operational carbon is proportional to its grid; the embodied 123.75 kg is not
    assert cloud["reduction_factor_at_low"] == pytest.approx((123.75 + CLOUD_OP * 250 / 367) / EDGE, rel=1e-12)
    assert cloud["reduction_factor_at_high"] == pytest.approx((123.75 + CLOUD_OP * 480 / 367) / EDGE, rel=1e-12)
    assert cloud["baseline_reduction_factor"] == pytest.approx(R, rel=1e-12)
    # the edge's carbon is all operational: R ~ 1 / the edge grid
    edge = laptop["edge_grid_gco2e_per_kwh"]
    assert edge["reduction_factor_at_low"] == pytest.approx(R * 367 / 250, rel=1e-12)
    assert edge["reduction_factor_at_high"] == pytest.approx(R * 367 / 480, rel=1e-12)
    assert edge["swing"] == pytest.approx(R * (367 / 250 - 367 / 480), rel=1e-12)


def test_a_stated_count_rounds_up_when_the_cloud_trains_fewer_hours(laptop: dict[str, dict]) -> None:
    # at 12 cloud hours a day the cloud emits half its operational carbon, and the stated 15 laptops
    # become ceil(15 x 12 / 24) = ceil(7.5) = 8
    hours = laptop["cloud_hours_per_day"]
    assert hours["reduction_factor_at_low"] == pytest.approx((123.75 + CLOUD_OP / 2) / (EDGE * 8 / 15), rel=1e-12)
    assert hours["reduction_factor_at_high"] == pytest.approx(R, rel=1e-12)


def test_rank_order_of_the_largest_swings(laptop: dict[str, dict]) -> None:
    swings = {
        "edge_grid_gco2e_per_kwh": R * (367 / 250 - 367 / 480),  # 6.69
        "cloud_utilisation": CLOUD_OP * (1 - 0.3) / EDGE,  # 6.53
        "cloud_grid_gco2e_per_kwh": CLOUD_OP * (480 - 250) / 367 / EDGE,  # 5.85
        "cloud_pue": CLOUD_OP * (1.6 - 1) / EDGE,  # 5.60
        "cloud_gpu_power_w": CLOUD_OP * (700 - 350) / 700 / EDGE,  # 4.67
        "cloud_gpu_embodied_kgco2e": (575 - 14.65) / EDGE,  # 0.77
    }
    top = sorted(laptop.values(), key=lambda r: r["rank"])[:len(swings)]
    assert [r["parameter"] for r in top] == list(swings)
    for r in top:
        assert r["swing"] == pytest.approx(swings[r["parameter"]], rel=1e-12), r["parameter"]
    assert [r["rank"] for r in top] == [1, 2, 3, 4, 5, 6]


def test_parameters_that_do_not_move_r_rank_last_in_alphabetical_order(laptop: dict[str, dict]) -> None:
    ranks = sorted(laptop.values(), key=lambda r: r["rank"])
    still = [r for r in ranks if r["swing"] == 0]
    # compute only, as published: the batch, the link and every phone parameter leave the laptop's R alone
    assert {"batch_size", "edge_bandwidth_mb_per_s", "phone_train_power_w", "wifi_radio_power_w"} <= {r["parameter"] for r in still}
    assert [r["parameter"] for r in still] == sorted(r["parameter"] for r in still)
    assert [r["rank"] for r in ranks] == list(range(1, len(ranks) + 1))
    assert math.isclose(laptop["batch_size"]["reduction_factor_at_low"], R, rel_tol=1e-12)
