"""Mart checks fail on bad input, and editing one parameter row moves the dependent marts."""

from __future__ import annotations

import math
import shutil
from pathlib import Path

import dagster as dg
import pandera.polars as pa
import polars as pl
import pytest

from pipelines.cli import main as cli
from pipelines.lib.resources import Warehouse
from pipelines.paths import SOURCES_DIR, SOURCES_ENV
from pipelines.warehouse.database import open_readonly
from pipelines.warehouse.queries import query_pl, read_pl
from schemas.marts import FleetEquivalence, LifecycleCarbon, PaperReproduction
from schemas.meta import empty_frame
from tests.conftest import build


def _frame(path: Path, table: str) -> pl.DataFrame:
    with open_readonly(path) as con:
        return query_pl(con, "select * from query_table($t)", {"t": table})


def _failed_checks(model: type[pa.DataFrameModel], frame: pl.DataFrame) -> set[str]:
    try:
        model.validate(frame, lazy=True)
    except pa.errors.SchemaErrors as exc:
        return set(exc.failure_cases.get_column("check").to_list())
    return set()


def test_good_marts_pass(built_warehouse: Path) -> None:
    assert _failed_checks(LifecycleCarbon, _frame(built_warehouse, "marts.lifecycle_carbon")) == set()
    assert _failed_checks(FleetEquivalence, _frame(built_warehouse, "marts.fleet_equivalence")) == set()
    assert _failed_checks(PaperReproduction, _frame(built_warehouse, "marts.paper_reproduction")) == set()


def test_duplicate_keys_fail(built_warehouse: Path) -> None:
    frame = _frame(built_warehouse, "marts.lifecycle_carbon")
    assert "unique" in " ".join(_failed_checks(LifecycleCarbon, pl.concat([frame, frame.head(1)])))


def test_shares_not_summing_to_one_fail(built_warehouse: Path) -> None:
    frame = _frame(built_warehouse, "marts.lifecycle_carbon").with_columns(
        pl.when(pl.int_range(pl.len()) == 0).then(0.5).otherwise(pl.col("embodied_share")).alias("embodied_share")
    )
    assert "shares_sum_to_one" in _failed_checks(LifecycleCarbon, frame)


def test_fractional_or_zero_device_counts_fail(built_warehouse: Path) -> None:
    frame = _frame(built_warehouse, "marts.fleet_equivalence")
    # the formula's count is whole; the count used may carry a fractional device multiplier but must be > 0
    assert "whole_at_least_one" in _failed_checks(FleetEquivalence, frame.with_columns(pl.col("devices_formula") + 0.5))
    assert "whole_at_least_one" in _failed_checks(FleetEquivalence, frame.with_columns(pl.lit(0.0).alias("devices_formula")))
    assert "greater_than(0)" in _failed_checks(FleetEquivalence, frame.with_columns(pl.lit(0.0).alias("devices_per_gpu")))


@pytest.mark.parametrize("bad", [math.inf, -1.0, math.nan])
def test_non_finite_or_negative_reduction_factor_fails(built_warehouse: Path, bad: float) -> None:
    frame = _frame(built_warehouse, "marts.fleet_equivalence").with_columns(pl.lit(bad).alias("reduction_factor"))
    assert "finite_positive" in _failed_checks(FleetEquivalence, frame)


def test_missing_claim_fails_the_check(built_warehouse: Path, tmp_path: Path) -> None:
    import duckdb

    from pipelines.defs.assets.marts import every_claim_present

    class OneConnection:
        """Stands in for the Warehouse resource: the check only calls read() (queries only)."""

        def __init__(self, con: duckdb.DuckDBPyConnection) -> None:
            self.con = con

        def read(self, sql: str, params: dict | None = None) -> pl.DataFrame:
            return read_pl(self.con, sql, params)

    path = tmp_path / "wh.duckdb"
    shutil.copyfile(built_warehouse, path)
    with duckdb.connect(str(path)) as con:
        assert every_claim_present(warehouse=OneConnection(con)).passed
        con.execute("delete from marts.paper_reproduction where claim_id = 'F4_gpu_total'")
        result = every_claim_present(warehouse=OneConnection(con))
    assert not result.passed
    assert result.metadata["missing"].value == "F4_gpu_total"


@pytest.mark.slow  # over 10 s on 2 cores: CI runs it (MARKERS=all)
def test_changing_hours_per_day_moves_the_marts(built_warehouse: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    sources = tmp_path / "sources"
    shutil.copytree(SOURCES_DIR, sources)
    base = sources / "scenarios" / "paper_base.csv"
    text = base.read_text(encoding="utf-8")
    assert "\nedge_hours_per_day,8," in text
    base.write_text(text.replace("\nedge_hours_per_day,8,", "\nedge_hours_per_day,4,"), encoding="utf-8")
    monkeypatch.setenv(SOURCES_ENV, str(sources))
    assert cli(["register", "--refresh", "scenario_paper_base"]) == 0
    changed = tmp_path / "changed.duckdb"
    assert build(changed, only=["marts/fleet_equivalence", "marts/lifecycle_carbon"]).success

    def fleet(path: Path) -> dict[tuple[str, str], tuple[float, float, float]]:
        frame = _frame(path, "marts.fleet_equivalence").filter(pl.col("is_headline"))
        return {(r[0], r[1]): r[2:] for r in frame.select("scenario_id", "device_class", "devices_per_gpu", "edge_added_kgco2e", "reduction_factor").rows()}

    before, after = fleet(built_warehouse), fleet(changed)
    # vendor basis: N = ceil(67 x 24 / (6.8 x 4)) = 60 laptops, twice the 30 at 8 h/day
    assert before[("vendor_fp32", "laptop")][0] == 30 and after[("vendor_fp32", "laptop")][0] == math.ceil(67 * 24 / (6.8 * 4)) == 60
    # paper_text states 15 laptops at 8 h/day: at 4 h/day the same work needs 15 x 8 / 4 = 30 laptops,
    # so the fleet's training electricity and the reduction factor stay the same
    assert (before[("paper_text", "laptop")][0], after[("paper_text", "laptop")][0]) == (15, 30)
    assert after[("paper_text", "laptop")][1] == pytest.approx(before[("paper_text", "laptop")][1])
    assert after[("paper_text", "laptop")][2] == pytest.approx(before[("paper_text", "laptop")][2])
    # one laptop's training electricity (marts.lifecycle_carbon, per device) halves; the cloud GPU is unchanged
    lc_before = dict(_frame(built_warehouse, "marts.lifecycle_carbon").filter(pl.col("scenario_id") == "paper_text").select("device_class", "operational_kgco2e").rows())
    lc_after = dict(_frame(changed, "marts.lifecycle_carbon").filter(pl.col("scenario_id") == "paper_text").select("device_class", "operational_kgco2e").rows())
    assert lc_after["laptop"] == pytest.approx(lc_before["laptop"] / 2)
    assert lc_after["cloud_gpu"] == pytest.approx(lc_before["cloud_gpu"])


def test_monte_carlo_quantiles_out_of_order_fail(built_warehouse: Path) -> None:
    from schemas.reviewers import Uncertainty

    frame = _frame(built_warehouse, "marts.uncertainty")
    assert _failed_checks(Uncertainty, frame) == set()
    swapped = frame.with_columns(pl.col("p95").alias("p05"), pl.col("p05").alias("p95"))
    assert "ordered" in _failed_checks(Uncertainty, swapped.filter(pl.col("p05") > pl.col("p95")))


def test_a_failed_check_fails_the_step_that_wrote_the_table_and_blocks_downstream(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A table's blocking checks run in the step that writes it, on the rows written: a failed one
    fails that step once the table is written, nothing downstream runs, the run publishes nothing,
    and the failure names the table, the column, the rule and the row."""
    from pipelines.lib import checks
    from pipelines.lib.tables import write_table
    from pipelines.run.launch import check_failures

    monkeypatch.setattr(checks, "DECLARED", dict(checks.DECLARED))  # the test's table is declared for this test only
    table = "marts.lifecycle_carbon_test"
    row = {"scenario_id": "zero_grid", "device_class": "laptop", "horizon_years": 3.0, "embodied_kgco2e": 0.0,
           "operational_kgco2e": 0.0, "total_kgco2e": 0.0, "embodied_share": 0.0, "operational_share": 1.0, "embodied_rule": "x"}
    ran: list[str] = []

    @dg.asset(key=table.split("."), check_specs=checks.staging_checks(table, LifecycleCarbon, joins_sources=False))
    def written(warehouse: Warehouse) -> dg.MaterializeResult:
        ran.append("written")
        return write_table(warehouse.connection(), table, pl.DataFrame([row], schema=empty_frame(LifecycleCarbon).schema), LifecycleCarbon)

    @dg.asset(deps=[written])
    def downstream() -> None:
        ran.append("downstream")

    published = tmp_path / "wh.duckdb"
    result = dg.materialize([written, downstream], resources={"warehouse": Warehouse(path=str(published))}, raise_on_error=False)
    assert not result.success and ran == ["written"]
    failed = {e.step_key for e in result.all_events if e.is_step_failure}
    assert failed == {"marts__lifecycle_carbon_test"}
    [evaluation] = result.get_asset_check_evaluations()
    assert (evaluation.asset_key, evaluation.check_name, evaluation.passed) == (dg.AssetKey(table.split(".")), "pandera_schema", False)
    assert check_failures(result.all_events, failed) == ["\n".join([
        "marts/lifecycle_carbon_test: pandera_schema",
        "  marts.lifecycle_carbon_test: 1 rule(s) of LifecycleCarbon fail on 1 row(s)",
        "    column total_kgco2e, rule greater_than(0) (must be > 0): 1 row(s)",
        "    failing rows of marts.lifecycle_carbon_test (1 of 1):",
        "      scenario_id=zero_grid, device_class=laptop, total_kgco2e=0",
    ])]
    assert not published.exists()
