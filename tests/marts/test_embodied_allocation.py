"""marts.embodied_allocation, given rows -> expected rows: the asset's body over the typed
paper_text scenario (tests/marts/model_rows.py), no build."""

from __future__ import annotations

import polars as pl
import pytest

from tests.marts.model_rows import declared_mart, scenario_connection

POLICIES = ["none", "battery_wear", "per_use_hour", "calendar_time"]  # their vocabulary's order
CLOUD = 123.75 + 700 * 24 * 365 * 3 * 367 / 1e6  # kg: the GPU's embodied + 700 W x 24 h x 365 x 3 y at 367 g/kWh
LAPTOP_KWH = 15 * 8 * 365 * 3 / 1000  # one laptop: 15 W x 8 h x 365 x 3 y = 131.4 kWh
PHONE_KWH = 10 * 8 * 365 * 3 / 1000  # one phone: 10 W, 87.6 kWh


def mart(overrides: dict[str, float | str | None] | None = None) -> pl.DataFrame:
    con = scenario_connection(overrides)
    return declared_mart("marts.embodied_allocation", con)


def by_policy(rows: pl.DataFrame, device_class: str) -> dict[str, dict]:
    return {r["policy"]: r for r in rows.filter(pl.col("device_class") == device_class).iter_rows(named=True)}


def test_one_row_per_class_and_policy_with_the_scenarios_own_marked() -> None:
    rows = mart()
    assert rows.select("device_class", "policy").rows() == [(c, p) for c in ("laptop", "phone") for p in POLICIES]
    assert rows.filter(pl.col("is_scenario_policy")).get_column("policy").to_list() == ["none", "none"]
    assert set(rows.get_column("devices")) == {15.0, 69.0}  # the paper's stated counts


def test_no_embodied_carbon_under_the_papers_policy() -> None:
    laptop = by_policy(mart(), "laptop")["none"]
    assert (laptop["edge_embodied_kgco2e"], laptop["embodied_per_device_kgco2e"]) == (0.0, 0.0)
    assert laptop["edge_added_kgco2e"] == pytest.approx(15 * LAPTOP_KWH * 0.367, rel=1e-12)  # 723.357
    assert laptop["reduction_factor"] == pytest.approx(CLOUD / (15 * LAPTOP_KWH * 0.367), rel=1e-12)


def test_each_policys_embodied_carbon_by_hand() -> None:
    rows = mart()
    laptop, phone = by_policy(rows, "laptop"), by_policy(rows, "phone")
    # the non-use-phase embodied carbon re-amortised to the 3-year horizon: 300 kg x 0.75 x min(3 / 4, 1)
    horizon = 300 * 0.75 * min(3 / 4, 1)  # 168.75 kg
    # per use hour: x training hours / (training + owner hours) = 8 / (8 + 4)
    assert laptop["per_use_hour"]["embodied_per_device_kgco2e"] == pytest.approx(horizon * 8 / (8 + 4), rel=1e-12)  # 112.5
    assert laptop["per_use_hour"]["edge_embodied_kgco2e"] == pytest.approx(15 * 112.5, rel=1e-12)
    assert laptop["per_use_hour"]["reduction_factor"] == pytest.approx(CLOUD / (15 * LAPTOP_KWH * 0.367 + 15 * 112.5), rel=1e-12)
    # per calendar hour: x training hours / 24
    assert laptop["calendar_time"]["embodied_per_device_kgco2e"] == pytest.approx(horizon * 8 / 24, rel=1e-12)  # 56.25
    # battery wear: training cycles = 15 W x 8 h x 365 x 3 y / 100 Wh = 1314 (no owner replaces the laptop: share 0);
    # the own battery, 225 kg non-use x 5% battery share = 11.25 kg, is worn out at its 1000 rated cycles, and the other
    # 314 take ceil(1314 / 1000) - 1 = 1 replacement battery of 100 Wh x 120 kgCO2e/kWh = 12 kg: 23.25 kg
    cycles = 15 * 8 * 365 * 3 / 100
    assert cycles == 1314
    assert laptop["battery_wear"]["embodied_per_device_kgco2e"] == pytest.approx(300 * 0.75 * 0.05 + 1 * 12.0, rel=1e-12)
    # phone: 66 kg x 0.8 x min(3 / 3, 1) = 52.8 kg over the horizon, x 8 / (8 + 4) per use hour
    assert phone["per_use_hour"]["embodied_per_device_kgco2e"] == pytest.approx(66 * 0.8 * 8 / 12, rel=1e-12)  # 35.2
    assert phone["per_use_hour"]["edge_added_kgco2e"] == pytest.approx(69 * (PHONE_KWH * 0.367 + 35.2), rel=1e-12)
    # phone battery wear: 10 W x 8 h x 365 x 3 / 15 Wh = 5840 cycles on 1000 rated: the own battery (66 kg x 0.8 x 5% =
    # 2.64 kg) in full and ceil(5840 / 1000) - 1 = 5 replacement batteries of 15 Wh x 120 kgCO2e/kWh = 1.8 kg: 11.64 kg
    assert phone["battery_wear"]["embodied_per_device_kgco2e"] == pytest.approx(66 * 0.8 * 0.05 + 5 * 1.8, rel=1e-12)


def test_the_scenarios_policy_is_the_one_it_names() -> None:
    rows = mart({"edge_embodied_policy": "per_use_hour"})
    assert rows.filter(pl.col("is_scenario_policy")).select("device_class", "policy").rows() == [
        ("laptop", "per_use_hour"), ("phone", "per_use_hour")]
    # the policy's row is the same whichever policy the scenario names
    assert by_policy(rows, "laptop")["per_use_hour"]["edge_embodied_kgco2e"] == pytest.approx(1687.5, rel=1e-12)
    assert by_policy(rows, "laptop")["none"]["edge_embodied_kgco2e"] == 0.0
