"""Given rows -> expected rows of core.model_evaluation (sql/core/model_evaluation.sql): the waiting devices of a pipeline
(online while their pipeline is incomplete) draw idle power under every resize-power row, and battery wear stops at the
rated cycles, beyond which each replacement battery is charged its own embodied carbon. The typed paper_text scenario
(tests/marts/model_rows.py) with a few parameters changed; every expected number is worked by hand in the comments."""

from __future__ import annotations

import math

import duckdb
import polars as pl
import pytest

from pipelines.model.formula import evaluate
from tests.marts.model_rows import LAPTOP, PHONE, scenario_connection

#: paper_text's phone: 10 W for 8 h a day over 3 years at 367 g/kWh, kg per W of a device's whole window
#: (8 h x 365 d x 3 y = 8,760 h; x 0.367 kg/kWh / 1000 W per kW)
WINDOW_H = 8 * 365 * 3
KG_PER_W = WINDOW_H * 0.367 / 1000


def phone_rows(con: duckdb.DuckDBPyConnection, *, bases: bool = True) -> pl.DataFrame:
    return evaluate(con, all_bases=bases, patterns=("none", "pipeline"), methods="all").filter(pl.col("device_class") == "phone")


def waiting_scenario(idle_power_w: float | None) -> duckdb.DuckDBPyConnection:
    """paper_text with phones online half their window (device_online_fraction 0.5), in the attributional frame (both
    resize-power rows) with a link too wide to resize over (1e6 MB/s), and the phone's idle power."""
    con = scenario_connection({"device_online_fraction": 0.5, "accounting_frame": "attributional",
                               "edge_embodied_policy": "per_use_hour", "edge_bandwidth_mb_per_s": 1e6})
    # the frame charges the receiving radio; the phone's idle power (None: the class has none)
    con.execute("update core.scenarios set wifi_receive_power_w = 0.5, phone_idle_power_w = $idle", {"idle": idle_power_w})
    return con


def test_waiting_phones_draw_idle_power_under_every_resize_power_row() -> None:
    """Availability basis (peak FLOPS with the online share): N = ceil(67 TFLOPS x 24 h / (1.38 x 8 h x 0.5)) =
    ceil(291.3) = 292 phones, 146 online at once. The pipeline's activations (2 x 2,048 x 2 B = 8,192 B a token per
    boundary) outweigh its all-reduce per online device (2 x 1.3e9 x 4 B / (8 x 2,048 tokens) / 146 = 4,348 B), so it
    runs the fewest stages that hold the state: 1.3e9 x 16 B / (8 GB x 0.5) = 5.2 -> S = 6. A 6-stage pipeline is
    complete 0.5^6 = 1/64 of the window, so the fleet grows to 146 x 64 = 9,344 phones, each training 1/64 of its window
    and waiting (online, its pipeline incomplete) 0.5 - 1/64 = 31/64 of it: 9,344 x 31/64 = 4,526 phone-windows, x
    8,760 h = 39,647,760 waiting device-hours. Training: 9,344 / 64 = 146 phone-windows at 10 W, 4,693.78 kg; waiting
    at the 0.5 W idle power, 39,647,760 h x 0.5 W = 19,823.88 kWh x 0.367 = 7,275.36 kg. The grown fleet trains
    exactly the work's 146 phone-windows, so full and online_idle agree: 11,969.15 kg under both."""
    rows = phone_rows(waiting_scenario(0.5)).filter(pl.col("basis") == "availability")
    pipeline = rows.filter(pl.col("pattern") == "pipeline")
    assert set(pipeline.get_column("resize_power")) == {"full", "online_idle"}
    for row in pipeline.iter_rows(named=True):
        assert (row["devices"], row["resized_from"], row["pipeline_stages"]) == (9344, 292, 6)
        assert row["waiting_device_hours"] == pytest.approx(39_647_760, rel=1e-12)
        assert row["waiting_device_hours"] == pytest.approx(9344 * (0.5 - 0.5**6) * WINDOW_H, rel=1e-12)
        training = 146 * 10 * KG_PER_W  # 4,693.78 kg
        waiting = 39_647_760 * 0.5 / 1000 * 0.367  # 7,275.36 kg
        assert training == pytest.approx(4693.7832, rel=1e-12) and waiting == pytest.approx(7275.36396, rel=1e-12)
        assert row["edge_operational_kgco2e"] == pytest.approx(training + waiting, rel=1e-12)  # 11,969.15 kg
    # the pattern that does not split the model trains whenever it is online: no waiting device-hours
    compute_only = rows.filter(pl.col("pattern") == "none").row(0, named=True)
    assert compute_only["waiting_device_hours"] == 0.0
    assert compute_only["edge_operational_kgco2e"] == pytest.approx(146 * 10 * KG_PER_W, rel=1e-12)


def test_a_class_without_an_idle_power_waits_at_its_training_power() -> None:
    """Without phone_idle_power_w the class has no online_idle row, and its waiting device-hours are charged at its
    training power, an upper bound: 39,647,760 h x 10 W = 396,477.6 kWh x 0.367 = 145,507.28 kg on top of the 4,693.78."""
    pipeline = phone_rows(waiting_scenario(None)).filter((pl.col("basis") == "availability") & (pl.col("pattern") == "pipeline"))
    assert set(pipeline.get_column("resize_power")) == {"full"}
    for row in pipeline.iter_rows(named=True):
        assert row["edge_operational_kgco2e"] == pytest.approx(4693.7832 + 145_507.2792, rel=1e-12)


def test_always_online_devices_never_wait() -> None:
    """The paper's own scenario (online fraction 1, so a^S = 1): no waiting device-hours on any row, and its operational
    carbon is the paper's, 15 laptops x 15 W and 69 phones x 10 W for the 8,760 h (723.357 and 2,218.2948 kg)."""
    rows = evaluate(scenario_connection(), all_bases=True, patterns=("none", "pipeline", "ring_allreduce"), methods="all")
    assert rows.height > 0 and (rows.get_column("waiting_device_hours") == 0.0).all()
    stated = rows.filter((pl.col("basis") == "peak_flops") & (pl.col("pattern") == "none"))
    by_class = {r["device_class"]: r["edge_operational_kgco2e"] for r in stated.iter_rows(named=True)}
    assert by_class == {"laptop": pytest.approx(LAPTOP, rel=1e-12), "phone": pytest.approx(PHONE, rel=1e-12)}


def battery_rows(overrides: dict[str, float | str] | None = None) -> dict[str, dict]:
    """paper_text under the battery-wear policy: the stated 15 laptops and 69 phones (peak_flops), compute only."""
    con = scenario_connection({"edge_embodied_policy": "battery_wear", **(overrides or {})})
    rows = evaluate(con, patterns=("none",)).filter(pl.col("basis") == "peak_flops")
    return {r["device_class"]: r for r in rows.iter_rows(named=True)}


def test_battery_wear_stops_at_the_rated_cycles() -> None:
    """Phone: 10 W x 8 h x 365 x 3 y through a 15 Wh battery = 5,840 extra cycles on 1,000 rated. Its own battery is worn
    out at 1,000 (5% of the 66 kg x 0.8 non-use embodied carbon: 2.64 kg, in full), and the other 4,840 cycles take
    ceil(5,840 / 1,000) - 1 = 5 replacement batteries of 15 Wh x 120 kgCO2e/kWh = 1.8 kg: 2.64 + 9.0 = 11.64 kg a phone,
    x 69 = 803.16 kg (uncapped, 2.64 x 5.84 = 15.42 kg a phone). Laptop: 15 W x 8,760 h / 100 Wh = 1,314 cycles: its own
    battery (300 kg x 0.75 x 5% = 11.25 kg) and ceil(1.314) - 1 = 1 replacement of 100 Wh x 120 = 12 kg: 23.25 kg, x 15
    = 348.75 kg."""
    rows = battery_rows()
    phone, laptop = rows["phone"], rows["laptop"]
    assert (phone["battery_extra_cycles"], phone["battery_rated_cycles"], phone["battery_replacements"]) == (
        pytest.approx(5840, rel=1e-12), 1000, 5)
    assert phone["edge_battery_wear_kgco2e"] == pytest.approx(69 * (66 * 0.8 * 0.05 + 5 * 15 / 1000 * 120), rel=1e-12)
    assert phone["edge_battery_wear_kgco2e"] == pytest.approx(803.16, rel=1e-12)
    assert (laptop["battery_extra_cycles"], laptop["battery_replacements"]) == (pytest.approx(1314, rel=1e-12), 1)
    assert laptop["edge_battery_wear_kgco2e"] == pytest.approx(15 * (300 * 0.75 * 0.05 + 1 * 100 / 1000 * 120), rel=1e-12)
    assert laptop["edge_battery_wear_kgco2e"] == pytest.approx(348.75, rel=1e-12)
    # the battery wear is all of the policy's embodied carbon, and R counts it: cloud / (operational + wear)
    for row in rows.values():
        assert row["edge_embodied_kgco2e"] == row["edge_battery_wear_kgco2e"]
        assert row["reduction_factor"] == pytest.approx(
            row["cloud_total_kgco2e"] / (row["edge_operational_kgco2e"] + row["edge_battery_wear_kgco2e"]), rel=1e-12)


def test_exactly_the_rated_cycles_take_no_replacement() -> None:
    """A 87.6 Wh phone battery makes 87,600 Wh / 87.6 Wh = 1,000 cycles, its rated count: its own battery in full
    (2.64 kg a phone) and no replacement (ceil(1,000 / 1,000) - 1 = 0, the ceil's tolerance taking 1,000.0000001 as
    1,000). A 87.5 Wh battery, just past it (87,600 / 87.5 = 1,001.14 cycles), takes one replacement of 87.5 Wh x
    120 kgCO2e/kWh = 10.5 kg on top of its own battery."""
    at = battery_rows({"phone_battery_wh": 87.6})["phone"]
    assert at["battery_extra_cycles"] == pytest.approx(1000, rel=1e-12) and at["battery_replacements"] == 0
    assert at["edge_battery_wear_kgco2e"] == pytest.approx(69 * 66 * 0.8 * 0.05, rel=1e-12)
    past = battery_rows({"phone_battery_wh": 87.5})["phone"]
    assert past["battery_extra_cycles"] == pytest.approx(87_600 / 87.5, rel=1e-12)
    assert past["battery_extra_cycles"] > past["battery_rated_cycles"] == 1000
    assert past["battery_replacements"] == 1
    assert past["edge_battery_wear_kgco2e"] == pytest.approx(69 * (66 * 0.8 * 0.05 + 87.5 / 1000 * 120), rel=1e-12)


def test_no_row_wears_past_its_rated_cycles_without_a_replacement() -> None:
    """Over every basis, pattern and method row of the battery-wear scenario and of a pipeline scenario whose devices
    are online half their window: a row over its rated cycles always has a replacement, and its count is
    ceil(cycles / rated) - 1."""
    frames = [evaluate(scenario_connection({"edge_embodied_policy": "battery_wear"}), all_bases=True, methods="all"),
              evaluate(waiting_scenario(0.5), all_bases=True, methods="all")]
    rows = pl.concat(frames, how="diagonal_relaxed").filter(pl.col("battery_extra_cycles").is_not_null())
    assert rows.height > 0
    over = rows.filter(pl.col("battery_extra_cycles") > pl.col("battery_rated_cycles"))
    assert over.height > 0 and (over.get_column("battery_replacements") > 0).all()
    for row in rows.iter_rows(named=True):
        expected = max(math.ceil(row["battery_extra_cycles"] / row["battery_rated_cycles"] - 1e-9) - 1, 0)
        assert row["battery_replacements"] == expected
    # a pipeline whose devices are online half the window: every split row waits
    split = rows.filter((pl.col("pipeline_stages") > 1) & (pl.col("online_fraction") < 1))
    assert split.height > 0 and (split.get_column("waiting_device_hours") > 0).all()


def test_the_numpy_baseline_counts_replacements_as_the_sql() -> None:
    """bench/baseline/numpy_model.py's copy of battery_replacements: 0 up to the rated cycles (999.9999999999 and
    1,000.0000000001 both count as 1,000), then one per started rated count beyond the first."""
    import numpy as np

    from bench.baseline import numpy_model
    from pipelines.warehouse.tables import install_macros

    con = duckdb.connect()
    install_macros(con)
    cycles = [0.0, 400.0, 999.9999999999, 1000.0000000001, 1001.0, 2044.0, 5840.0]
    sql = [con.execute("select battery_replacements($c, 1000.0)", {"c": c}).fetchone()[0] for c in cycles]
    assert sql == [0, 0, 0, 0, 1, 2, 5]
    assert list(numpy_model.battery_replacements(np.array(cycles), 1000.0)) == sql
