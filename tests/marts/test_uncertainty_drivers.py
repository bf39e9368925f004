"""marts.uncertainty_drivers, given rows -> expected rows: the Sobol indices of log R
(:func:`pipelines.model.uncertainty.sobol_rows`, as the asset calls it) over the typed paper_text
scenario (tests/marts/model_rows.py) with two drawn inputs, no build."""

from __future__ import annotations

import polars as pl
import pytest

from pipelines.model.formula import scenario_inputs
from pipelines.model.uncertainty import sobol_rows
from pipelines.warehouse.queries import query_pl
from tests.marts.model_rows import ranged, scenario_connection

SEED = 3
BASE_SAMPLES = 64


def drivers(drawn: set[str]) -> pl.DataFrame:
    con = scenario_connection(ranges={p: None for p in ranged() if p not in drawn})
    return sobol_rows(con, scenario_inputs(con), query_pl(con, "select * from core.scenario_parameters"), BASE_SAMPLES, SEED)


def test_the_input_that_moves_r_has_the_larger_total_order_index() -> None:
    # each class's R moves with its own training power (normal, the measured 95% CI) and never with
    # the other class's: log R = log cloud - log(devices x power x ...)
    frame = drivers({"laptop_train_power_w", "phone_train_power_w"})
    assert frame.height == 2 * 6 * 2  # classes x patterns x inputs
    # Saltelli without second order: N x (D + 2) = 64 x 4 model runs
    assert set(frame.select("model_runs", "base_samples").rows()) == {(256, BASE_SAMPLES)}
    for device_class, own, other in (("laptop", "laptop_train_power_w", "phone_train_power_w"),
                                     ("phone", "phone_train_power_w", "laptop_train_power_w")):
        for pattern in ("none", "radio_window"):
            rows = {r["parameter"]: r for r in frame.filter((pl.col("device_class") == device_class)
                                                            & (pl.col("pattern") == pattern)).iter_rows(named=True)}
            # the other class's power changes no model run: its indices are exactly 0
            assert (rows[other]["s1"], rows[other]["st"], rows[other]["st_share_of_sum"], rows[other]["rank"]) == (0.0, 0.0, 0.0, 2)
            # the one input that moves R explains all of its variance (estimated from 256 runs)
            assert rows[own]["rank"] == 1
            assert rows[own]["st"] > rows[other]["st"]
            assert rows[own]["st"] == pytest.approx(1.0, abs=0.2)
            assert rows[own]["s1"] == pytest.approx(1.0, abs=0.2)
            assert rows[own]["st_share_of_sum"] == 1.0


def test_fewer_than_two_drawn_inputs_have_no_indices() -> None:
    frame = drivers({"laptop_train_power_w"})
    assert frame.height == 0
    assert frame.columns == ["scenario_id", "device_class", "pattern", "parameter", "s1", "s1_ci95", "st", "st_ci95",
                             "st_share_of_sum", "model_runs", "base_samples", "rank"]
