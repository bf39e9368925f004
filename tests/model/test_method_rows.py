"""Allocation policies and the power of a grown fleet's extra devices are method rows, as network methods are.

Each accounting frame admits its rows in core.frame_embodied_policies and core.frame_resize_powers; the model
computes each term once per fleet (sql/core/model_evaluation.sql `terms`) and weighs it by the rows of core.embodied_policies
and core.resize_powers, never by a name. Hand-worked on the realistic attributional scenario's own rows.
"""

from __future__ import annotations

import re
from pathlib import Path

import polars as pl
import pytest

from pipelines.model.formula import evaluate, scenario_inputs
from pipelines.model.methods import frame_policy_rows, frame_resize_power_rows, resize_power_rows
from pipelines.warehouse.database import open_readonly
from pipelines.warehouse.queries import query_pl
from schemas.vocabulary import COMPUTE_ONLY, FRAMES, POLICIES, RESIZE_POWERS

ROOT = Path(__file__).resolve().parents[2]
SCENARIO = "realistic_attributional"


def test_each_frame_admits_its_rows_its_headline_first() -> None:
    policies = pl.from_arrow(frame_policy_rows())
    attributional = policies.filter(pl.col("accounting_frame") == "attributional")
    assert attributional.rows() == [("attributional", "per_use_hour", True), ("attributional", "calendar_time", False)]
    assert policies.filter(pl.col("accounting_frame") == "consequential").rows() == [("consequential", "battery_wear", True)]
    # the paper's frame requires no policy: a scenario in it is evaluated under its own alone
    paper = policies.filter(pl.col("accounting_frame") == "as_published")
    assert set(paper.get_column("policy")) == set(POLICIES) and paper.get_column("is_frame_headline").null_count() == paper.height
    powers = pl.from_arrow(frame_resize_power_rows())
    assert {frame: powers.filter(pl.col("accounting_frame") == frame).get_column("resize_power").to_list() for frame in FRAMES} == {
        "as_published": ["full"], "attributional": ["full", "online_idle"], "consequential": ["full", "online_idle"]}
    weights = {r["resize_power"]: (r["fleet_training"], r["work_training"], r["extra_idle"])
               for r in pl.from_arrow(resize_power_rows()).iter_rows(named=True)}
    assert weights == {"full": (1.0, 0.0, 0.0), "online_idle": (0.0, 1.0, 1.0)}


def test_the_model_names_no_method() -> None:
    """No quoted policy or resize-power name in the model's SQL or the verdict's: a method is a row of weights (comments
    aside; network methods: tests/architecture/test_layers.py)."""
    names = set(POLICIES) | set(RESIZE_POWERS)
    for path in (*sorted((ROOT / "sql" / "model").glob("*.sql")), ROOT / "sql" / "marts" / "verdict.sql"):
        code = re.sub(r"--[^\n]*", "", path.read_text())
        assert not [n for n in names if f"'{n}'" in code], path


def test_the_method_rows_are_warehouse_tables(built_warehouse: Path) -> None:
    with open_readonly(built_warehouse) as con:
        rows = dict(query_pl(con, "select table_name, estimated_size from duckdb_tables() where schema_name = 'core' and "
                                  "table_name in ('frame_embodied_policies', 'resize_powers', 'frame_resize_powers', "
                                  "'embodied_policies')").rows())
        comment = con.execute("select comment from duckdb_columns() where schema_name = 'core' and table_name = 'resize_powers' "
                              "and column_name = 'extra_idle'").fetchone()[0]
    assert rows == {"frame_embodied_policies": 7, "resize_powers": 2, "frame_resize_powers": 5, "embodied_policies": 4}
    assert "idle power" in comment


@pytest.fixture(scope="module")
def rows(built_warehouse: Path) -> tuple[pl.DataFrame, dict]:
    with open_readonly(built_warehouse) as con:
        base = scenario_inputs(con).filter(pl.col("scenario_id") == SCENARIO)
        comm = base.item(0, "comm_pattern")
        evaluated = evaluate(con, base, patterns=(COMPUTE_ONLY, comm), methods="all")
    return evaluated, base.row(0, named=True)


def test_calendar_time_charges_training_hours_over_the_day(rows: tuple[pl.DataFrame, dict]) -> None:
    """Compute only, per device: per use hour charges h a / (h a + owner hours), per calendar hour h a / 24 of the same
    re-amortised embodied carbon, so their ratio is (h a + owner hours) / 24 (ACT's time share against the use share)."""
    frame, p = rows
    # compute only: every policy under the frame's headline network method and resize power
    only = frame.filter((pl.col("pattern") == COMPUTE_ONLY) & pl.col("is_headline_resize_power")
                        & (pl.col("network_method") == FRAMES[p["accounting_frame"]].network_methods[0]))
    for device in ("laptop", "phone"):
        by = {r["embodied_policy"]: r for r in only.filter(pl.col("device_class") == device).iter_rows(named=True)}
        assert set(by) == {"per_use_hour", "calendar_time"}
        hours = p["edge_hours_per_day"] * p["device_online_fraction"]
        ratio = by["calendar_time"]["edge_embodied_kgco2e"] / by["per_use_hour"]["edge_embodied_kgco2e"]
        assert ratio == pytest.approx((hours + p[f"{device}_owner_hours_per_day"]) / 24, rel=1e-12)
        per_device = by["calendar_time"]["edge_embodied_kgco2e"] / by["calendar_time"]["devices"]
        assert per_device == pytest.approx(by["calendar_time"]["device_embodied_kgco2e"] * hours / 24, rel=1e-12)
        # the policy moves embodied carbon only
        assert by["calendar_time"]["edge_operational_kgco2e"] == by["per_use_hour"]["edge_operational_kgco2e"]
        assert by["calendar_time"]["is_headline_method"] is False and by["per_use_hour"]["is_headline_method"] is True


def test_online_idle_charges_the_extra_device_hours_at_idle_power(rows: tuple[pl.DataFrame, dict]) -> None:
    """The pipeline's fleet grew from its compute-equivalent N to N' devices in S stages. full: N' a^S device-windows
    at training power; online_idle: N a at training power and the rest, N' a^S - N a, at the class's idle power. Under
    both, the waiting device-windows, N' (a - a^S), online while their pipeline is incomplete, at the idle power."""
    frame, p = rows
    grown = frame.filter((pl.col("pattern") == p["comm_pattern"]) & pl.col("is_headline_policy") & (pl.col("network_method") == "time"))
    for device in ("laptop", "phone"):
        by = {r["resize_power"]: r for r in grown.filter(pl.col("device_class") == device).iter_rows(named=True)}
        full, idle = by["full"], by["online_idle"]
        assert full["resized_from"] is not None and full["devices"] > full["resized_from"]
        a, stages, n, n_grown = p["device_online_fraction"], full["pipeline_stages"], full["resized_from"], full["devices"]
        window_kwh = p["edge_hours_per_day"] * 365 * full["job_years"] * full["wall_factor"] / 1000 * p["edge_grid_gco2e_per_kwh"] / 1000
        train, rest = p[f"{device}_train_power_w"], p[f"{device}_idle_power_w"]
        waiting = n_grown * (a - a**stages) * rest * window_kwh
        assert full["waiting_device_hours"] == idle["waiting_device_hours"] == pytest.approx(
            n_grown * (a - a**stages) * p["edge_hours_per_day"] * 365 * full["job_years"], rel=1e-12)
        assert full["edge_operational_kgco2e"] == pytest.approx(n_grown * a**stages * train * window_kwh + waiting, rel=1e-9)
        assert idle["edge_operational_kgco2e"] == pytest.approx(
            (n * a * train + (n_grown * a**stages - n * a) * rest) * window_kwh + waiting, rel=1e-9)
        assert idle["edge_operational_kgco2e"] < full["edge_operational_kgco2e"]
        # everything else is the same fleet: its bytes, its embodied carbon, its links
        for column in ("devices", "comm_kwh", "edge_embodied_kgco2e", "link_feasible", "cloud_total_kgco2e"):
            assert idle[column] == full[column], column
