"""A pipeline trains only while all its stages are online: its completeness a^S
(sql/model/macros.sql pipeline_completeness, training_share), the devices that takes
(sql/model/model_rows.sql), and the resize that searches the stage count by it
(pipeline_fleet_for_link), with no cap on the fleet. Hand-worked cases, and the numpy baseline
held to the same macros."""

from __future__ import annotations

import math
from pathlib import Path

import duckdb
import polars as pl
import pytest

from bench.baseline import numpy_model
from pipelines.warehouse.tables import install_macros
from schemas import vocabulary


@pytest.fixture(scope="module")
def con() -> duckdb.DuckDBPyConnection:
    connection = duckdb.connect()
    install_macros(connection)
    return connection


def scalar(con: duckdb.DuckDBPyConnection, sql: str, params: list | None = None) -> object:
    return con.execute(sql, params or []).fetchone()[0]


def test_three_stages_at_70_percent_are_complete_0_343_of_the_time(con: duckdb.DuckDBPyConnection) -> None:
    assert scalar(con, "select pipeline_completeness(0.7, 3)") == pytest.approx(0.343, rel=1e-12)
    assert scalar(con, "select pipeline_completeness(0.7, 6)") == pytest.approx(0.117649, rel=1e-12)
    # a device of a split pattern trains the share its whole pipeline is online; any other its online share
    assert scalar(con, "select training_share(0.7, true, 3)") == pytest.approx(0.343, rel=1e-12)
    assert scalar(con, "select training_share(0.7, false, 3)") == 0.7
    assert scalar(con, "select training_share(0.7, false, null)") == 0.7
    # where availability is not counted (a = 1: the paper's frame) the factor is exactly 1
    assert scalar(con, "select training_share(1.0, true, 24)") == 1.0
    assert numpy_model.pipeline_completeness(0.7, 3) == scalar(con, "select pipeline_completeness(0.7, 3)")


def test_the_device_count_of_a_three_stage_pipeline(con: duckdb.DuckDBPyConnection) -> None:
    """A compute-equivalent fleet of 10 devices at 70% online: 7 train at once. In 3-stage pipelines
    each trains 0.343 of its window, so 7 / 0.343 = 20.4 -> 21 devices; a pattern that does not
    split the model keeps its 10 (core/model_evaluation.sql devices_complete)."""
    sql = ("select case when $splits then whole_devices($devices * $online / training_share($online, $splits, $stages)) "
           "else $devices end")
    assert scalar(con, sql, {"devices": 10.0, "online": 0.7, "splits": True, "stages": 3}) == 21  # type: ignore[arg-type]
    assert scalar(con, sql, {"devices": 10.0, "online": 0.7, "splits": False, "stages": None}) == 10  # type: ignore[arg-type]
    assert scalar(con, sql, {"devices": 10.0, "online": 1.0, "splits": True, "stages": 3}) == 10  # type: ignore[arg-type]
    assert math.ceil(10 * 0.7 / 0.7**3) == 21


def test_the_resize_searches_stages_by_the_devices_they_take(con: duckdb.DuckDBPyConnection) -> None:
    """a = 100 B of activations per stage boundary, kp = 100, a link of L W = 34 B, stages 3-6:
    n(s) = max((100 (s - 1) - 100) / (34 - 100 / s), s) training at once = 150, 22.2, 21.4, 23.1.
    Always online, 5 stages carry it on the fewest (21.4); at 70%, 4 stages take the fewest devices,
    22.2 / 0.7^4 = 92.6, against 21.4 / 0.7^5 = 127.5 at 5."""
    sql = "select pipeline_fleet_for_link(100.0, 100.0, 3, 6, 34.0, $online, $splits, 0)"
    always = scalar(con, sql, {"online": 1.0, "splits": True})  # type: ignore[arg-type]
    assert always["s"] == 5 and always["n"] == pytest.approx(300 / 14, rel=1e-12) == always["devices"]
    at_70 = scalar(con, sql, {"online": 0.7, "splits": True})  # type: ignore[arg-type]
    assert at_70["s"] == 4 and at_70["n"] == pytest.approx(200 / 9, rel=1e-12)
    assert at_70["devices"] == pytest.approx(200 / 9 / 0.7**4, rel=1e-12) == pytest.approx(92.55, abs=0.01)
    # a pattern that does not split the model trains its online share whatever its stages: the fewest n
    flat = scalar(con, sql, {"online": 0.7, "splits": False})  # type: ignore[arg-type]
    assert flat["s"] == 5 and flat["devices"] == pytest.approx(300 / 14 / 0.7, rel=1e-12)
    # the numpy baseline takes the same stage count and count
    devices, stages = numpy_model.pipeline_fleet_for_link(100.0, 100.0, 3.0, 6.0, 34.0, 0.7, True)
    assert (devices[0], stages[0]) == (pytest.approx(at_70["devices"], rel=1e-15), 4)


def test_a_resized_fleet_keeps_the_devices_its_work_needs(con: duckdb.DuckDBPyConnection) -> None:
    """The same link with a job that needs 40 devices training at once: the link alone would take 22.2 at 4 stages,
    but the fleet must still do the work, so n is at least 40 at every s: n(s) = 150, 40, 40, 40 for s = 3-6, and at 70%
    the fewest devices are at 4 stages, 40 / 0.7^4 = 166.6 (not 22.2 / 0.7^4 = 92.6, a fleet too small for its job;
    150 / 0.7^3 = 437.3 at 3). At a need below the link's, nothing moves."""
    sql = "select pipeline_fleet_for_link(100.0, 100.0, 3, 6, 34.0, 0.7, true, $work)"
    needed = scalar(con, sql, {"work": 40.0})  # type: ignore[arg-type]
    assert needed["s"] == 4 and needed["n"] == 40.0
    four = scalar(con, "select pipeline_training_for_link(100.0, 100.0, 4, 34.0, 40.0)")
    assert four == 40.0
    assert needed["devices"] == pytest.approx(40 / 0.7**4, rel=1e-12) == pytest.approx(166.6, abs=0.1)
    light = scalar(con, sql, {"work": 1.0})  # type: ignore[arg-type]
    assert light["s"] == 4 and light["n"] == pytest.approx(200 / 9, rel=1e-12)
    devices, stages = numpy_model.pipeline_fleet_for_link(100.0, 100.0, 3.0, 6.0, 34.0, 0.7, True, 40.0)
    assert (devices[0], stages[0]) == (pytest.approx(needed["devices"], rel=1e-15), needed["s"])


def test_no_stage_count_that_carries_it_leaves_the_fleet_over_its_link(con: duckdb.DuckDBPyConnection) -> None:
    """Each device's share of the all-reduce alone, kp / s >= L W for every s: no fleet carries it (null),
    whatever the fleet's size; the model keeps it as counted, infeasible. There is no other bound."""
    assert scalar(con, "select pipeline_fleet_for_link(100.0, 1000.0, 3, 6, 34.0, 0.7, true, 0)") is None
    assert not hasattr(vocabulary, "RESIZE_CAP")
    model = Path("sql/model/model_rows.sql").read_text()
    assert "resize_cap" not in model and "pipeline_fleet_for_link" in model


def test_the_model_grows_only_the_patterns_that_split_it(built_warehouse: Path) -> None:
    """On the realistic scenario's own rows, with a link wide enough that nothing is resized: the
    pipeline's laptops are the compute-only count's online devices over 0.7^S; at an online share
    of 1 (as in the paper's frame) they are the compute-only count."""
    from pipelines.model.formula import evaluate, substitute
    from pipelines.warehouse.database import open_readonly

    overrides = pl.DataFrame({
        "scenario_id": ["realistic_consequential"] * 4,
        "variant_id": ["wide_link", "wide_link", "always_online", "always_online"],
        "parameter": ["edge_bandwidth_mb_per_s", "device_online_fraction", "edge_bandwidth_mb_per_s", "device_online_fraction"],
        "value": [1e4, 0.7, 1e4, 1.0],
    })
    with open_readonly(built_warehouse) as wh:  # the model reads its method rows (core.patterns, ...) from the warehouse
        rows = evaluate(wh, substitute(wh, overrides), patterns=("none", "pipeline", "ring_allreduce"))
    laptops = {(r["variant_id"], r["pattern"]): r for r in rows.filter(pl.col("device_class") == "laptop").iter_rows(named=True)}
    none, pipeline = laptops[("wide_link", "none")], laptops[("wide_link", "pipeline")]
    stages = pipeline["pipeline_stages"]
    # the headline (measured_rates): the H100's measured 358.9 TFLOPS x 24 h over the laptop's measured 0.4242 x 6.8
    # TFLOPS x 8 h x 0.7 online / 1.25 slowdown = 666.5 -> 667
    count = math.ceil(358.8992 * 24 / (0.4242 * 6.8 * 8 * 0.7 / 1.25))
    assert none["devices"] == count == 667 and laptops[("wide_link", "ring_allreduce")]["devices"] == count
    assert pipeline["devices"] == math.ceil(count * 0.7 / 0.7**stages - 1e-9) > count
    assert pipeline["resized_from"] == count and pipeline["link_feasible"]
    assert laptops[("always_online", "pipeline")]["devices"] == laptops[("always_online", "none")]["devices"]
