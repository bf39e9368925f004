"""marts.break_even, given rows -> expected rows: :func:`pipelines.model.sensitivity.break_even`
over the typed paper_text scenario (tests/marts/model_rows.py), as the asset calls it, no build."""

from __future__ import annotations

import pytest

from pipelines.model.formula import scenario_inputs
from pipelines.model.sensitivity import break_even
from pipelines.warehouse.queries import query_pl
from tests.marts.model_rows import build_model, scenario_connection

CLOUD_PER_G = 700 * 24 * 365 * 3 / 1e6  # the GPU's operational kg per g/kWh of its grid: 700 W x 24 h x 365 x 3 y
CLOUD = 123.75 + CLOUD_PER_G * 367  # + its embodied 123.75 kg: 6875.082
LAPTOP = 15 * 15 * 8 * 365 * 3 * 367 / 1e6  # 15 stated laptops x 15 W x 8 h x 365 x 3 y at 367 g/kWh: 723.357
PHONE = 69 * 10 * 8 * 365 * 3 * 367 / 1e6  # 69 stated phones x 10 W: 2218.2948
RADIO = 15 * 8 * 3600 * 365 * 3 * 0.5 / 3.6e6 * 0.367  # the laptops' 0.5 W radios for their windows: 24.1119 kg


@pytest.fixture(scope="module")
def rows() -> dict[tuple[str, str, str], dict]:
    con = scenario_connection()
    build_model(con)  # the baselines are core.model_evaluation's base rows, as in a build
    frame = break_even(con, scenario_inputs(con), query_pl(con, "select * from core.scenario_parameters"))
    assert set(frame.get_column("pattern")) == {"none", "radio_window"}  # compute only and the paper's communication
    return {(r["device_class"], r["pattern"], r["parameter"]): r for r in frame.iter_rows(named=True)}


def test_the_multiplier_at_r_1_is_r_itself(rows: dict[tuple[str, str, str], dict]) -> None:
    # m x the stated count: R(m) = R / m, so R = 1 at m = R and R = 4 at m = R / 4
    for device_class, pattern, r in (("laptop", "none", CLOUD / LAPTOP), ("laptop", "radio_window", CLOUD / (LAPTOP + RADIO)),
                                     ("phone", "none", CLOUD / PHONE)):
        row = rows[(device_class, pattern, "device_multiplier")]
        assert row["baseline_reduction_factor"] == pytest.approx(r, rel=1e-12)
        assert row["value_r1"] == pytest.approx(r, rel=1e-6)
        assert row["value_r4"] == pytest.approx(r / 4, rel=1e-6)
        assert row["reduction_factor_at_r1"] == pytest.approx(1.0, rel=1e-6)
        assert row["reduction_factor_at_r4"] == pytest.approx(4.0, rel=1e-6)
        # no range for the multiplier (a lever, not an uncertainty); searched over [1 / 1000, 1000]
        assert (row["value_r1_in_range"], row["search_low"], row["search_high"]) == (False, 0.001, 1000.0)
    assert rows[("laptop", "none", "device_multiplier")]["value_r1"] == pytest.approx(9.504411, rel=1e-6)


def test_the_cloud_grid_at_r_1_and_r_4_by_hand(rows: dict[tuple[str, str, str], dict]) -> None:
    # R(g) = (123.75 + CLOUD_PER_G x g) / edge, solved for R = 1 and R = 4
    laptop = rows[("laptop", "none", "cloud_grid_gco2e_per_kwh")]
    assert laptop["value_r1"] == pytest.approx((LAPTOP - 123.75) / CLOUD_PER_G, rel=1e-6)  # 32.6 g/kWh
    assert laptop["value_r4"] == pytest.approx((4 * LAPTOP - 123.75) / CLOUD_PER_G, rel=1e-6)  # 150.6 g/kWh
    assert (laptop["value_r1_in_range"], laptop["value_r4_in_range"]) == (False, False)  # below the 250-480 range
    phone = rows[("phone", "none", "cloud_grid_gco2e_per_kwh")]
    assert phone["value_r4"] == pytest.approx((4 * PHONE - 123.75) / CLOUD_PER_G, rel=1e-6)  # 475.6: inside 250-480
    assert phone["value_r4_in_range"] is True
    # searched over [367 / 1000, 367 x 1000]
    assert (laptop["search_low"], laptop["search_high"]) == pytest.approx((0.367, 367000.0), rel=1e-12)


def test_only_parameters_that_move_r_have_rows_and_hours_are_capped(rows: dict[tuple[str, str, str], dict]) -> None:
    laptop = {parameter for (c, p, parameter) in rows if (c, p) == ("laptop", "none")}
    assert {"batch_size", "phone_train_power_w", "edge_bandwidth_mb_per_s"}.isdisjoint(laptop)
    assert {"laptop_train_power_w", "edge_grid_gco2e_per_kwh", "cloud_pue", "horizon_years"} <= laptop
    # an hours-per-day parameter is searched at most to 24 h, a fraction to 1
    assert rows[("laptop", "none", "edge_hours_per_day")]["search_high"] == 24.0
    assert rows[("laptop", "none", "cloud_utilisation")]["search_high"] == 1.0
    # the laptop's power where R = 1: its training electricity equals the cloud's total
    power = rows[("laptop", "none", "laptop_train_power_w")]
    assert power["value_r1"] == pytest.approx(15 * CLOUD / LAPTOP, rel=1e-6)
