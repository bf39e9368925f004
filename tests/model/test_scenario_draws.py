"""Each scenario's Monte Carlo draws and Sobol samples are its own: they depend on the global seed,
the scenario's id and its parameters, never on its position or on the scenarios drawn beside it.

The marts themselves are compared, with one scenario added and one removed, by
tests/model/test_scenario_isolation.py (full builds, ``slow``).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import duckdb
import numpy as np
import polars as pl
import pytest

from pipelines.model.formula import scenario_inputs
from pipelines.model.uncertainty import (
    draw_inputs,
    draw_stream,
    independent,
    ranged_parameters,
    sobol_rows,
)
from pipelines.paths import PROJECT_ROOT
from pipelines.warehouse.database import open_readonly
from pipelines.warehouse.queries import query_pl

DRAWS = 500


@pytest.fixture(scope="module")
def inputs(built_warehouse: Path) -> tuple[pl.DataFrame, pl.DataFrame]:
    """(scenario inputs, core.scenario_parameters) of the shipped scenarios."""
    with open_readonly(built_warehouse) as con:
        return scenario_inputs(con), query_pl(con, "select * from core.scenario_parameters")


def drawn(base: pl.DataFrame, parameters: pl.DataFrame, scenario: str, seed: int = 20250701) -> pl.DataFrame:
    """``scenario``'s drawn columns (its own ranged parameters) when ``base`` is drawn at ``seed``."""
    own = sorted(p.parameter for p in ranged_parameters(parameters.filter(pl.col("scenario_id") == scenario)))
    frame = pl.from_arrow(draw_inputs(base, parameters, DRAWS, seed).drawn)
    assert isinstance(frame, pl.DataFrame)
    return frame.filter(pl.col("scenario_id") == scenario).select("variant_id", *own)


def renamed(frame: pl.DataFrame, old: str, new: str) -> pl.DataFrame:
    return frame.with_columns(pl.when(pl.col("scenario_id") == old).then(pl.lit(new)).otherwise(pl.col("scenario_id")).alias("scenario_id"))


def test_a_scenarios_draws_do_not_depend_on_the_others(inputs: tuple[pl.DataFrame, pl.DataFrame]) -> None:
    base, parameters = inputs
    scenarios = base.get_column("scenario_id").to_list()
    assert len(scenarios) >= 5
    # a copy of realistic_consequential under a name that sorts first shifts every other scenario's position
    added = pl.concat([renamed(base.filter(pl.col("scenario_id") == "realistic_consequential"), "realistic_consequential", "a_copy"), base])
    added_parameters = pl.concat([renamed(parameters.filter(pl.col("scenario_id") == "realistic_consequential"),
                                          "realistic_consequential", "a_copy"), parameters])
    for scenario in scenarios:
        alone = drawn(base.filter(pl.col("scenario_id") == scenario), parameters, scenario)
        assert alone.width > 1, scenario  # every shipped scenario draws something
        assert drawn(base, parameters, scenario).equals(alone), scenario
        assert drawn(base.reverse(), parameters, scenario).equals(alone), scenario
        assert drawn(added, added_parameters, scenario).equals(alone), scenario
        if scenario != scenarios[0]:  # the removal of the first scenario moves every other one up a place
            assert drawn(base.filter(pl.col("scenario_id") != scenarios[0]), parameters, scenario).equals(alone), scenario
    # the same inputs under another id are another scenario, with draws of their own
    copy, original = drawn(added, added_parameters, "a_copy"), drawn(base, parameters, "realistic_consequential")
    assert copy.columns == original.columns and not copy.equals(original)
    # and another seed gives other draws
    assert not drawn(base, parameters, "paper_text", seed=1).equals(drawn(base, parameters, "paper_text"))


def test_editing_one_parameter_moves_only_its_own_draws(inputs: tuple[pl.DataFrame, pl.DataFrame]) -> None:
    base, parameters = inputs
    scenario = "realistic_attributional"
    base, parameters = base.filter(pl.col("scenario_id") == scenario), parameters.filter(pl.col("scenario_id") == scenario)
    before = drawn(base, parameters, scenario)
    edited = "laptop_train_power_w"
    assert edited in before.columns
    widened = parameters.with_columns(pl.when(pl.col("parameter") == edited).then(pl.col("high") * 1.5).otherwise(pl.col("high")).alias("high"))
    after = drawn(base, widened, scenario)
    assert after.columns == before.columns
    moved = [c for c in before.columns if not before.get_column(c).equals(after.get_column(c))]
    assert moved == [edited]


def test_coupled_parameters_share_one_draw(inputs: tuple[pl.DataFrame, pl.DataFrame]) -> None:
    base, parameters = inputs
    scenario = "realistic_consequential"
    base, parameters = base.filter(pl.col("scenario_id") == scenario), parameters.filter(pl.col("scenario_id") == scenario)
    # both grids ranged, with different ranges: one uniform sample through each side's own distribution
    grids = pl.col("parameter").is_in(["cloud_grid_gco2e_per_kwh", "edge_grid_gco2e_per_kwh"])
    ranged = parameters.with_columns(
        pl.when(grids).then(pl.lit("uniform")).otherwise(pl.col("distribution")).alias("distribution"),
        pl.when(grids).then(pl.lit(100.0)).otherwise(pl.col("low")).alias("low"),
        pl.when(pl.col("parameter") == "cloud_grid_gco2e_per_kwh").then(pl.lit(500.0))
        .when(pl.col("parameter") == "edge_grid_gco2e_per_kwh").then(pl.lit(900.0)).otherwise(pl.col("high")).alias("high"),
    )

    def grid_units(grid_shared: float) -> tuple[np.ndarray, np.ndarray]:
        switched = ranged.with_columns(pl.when(pl.col("parameter") == "grid_shared").then(grid_shared).otherwise(pl.col("value"))
                                       .alias("value"))
        frame = drawn(base.with_columns(pl.lit(grid_shared).alias("grid_shared")), switched, scenario)
        return ((frame.get_column("cloud_grid_gco2e_per_kwh").to_numpy() - 100) / 400,
                (frame.get_column("edge_grid_gco2e_per_kwh").to_numpy() - 100) / 800)

    cloud, edge = grid_units(1.0)
    np.testing.assert_allclose(cloud, edge, rtol=0, atol=1e-12)
    assert cloud.std() > 0.2  # a real uniform draw
    # the shared draw is the coupling's, not either parameter's: keyed by (scenario, grid_shared)
    np.testing.assert_allclose(cloud, draw_stream(20250701, scenario, "grid_shared").random(DRAWS), rtol=0, atol=1e-12)
    cloud, edge = grid_units(0.0)
    assert abs(np.corrcoef(cloud, edge)[0, 1]) < 0.2  # independent draws without the switch
    np.testing.assert_allclose(edge, draw_stream(20250701, scenario, "edge_grid_gco2e_per_kwh").random(DRAWS), rtol=0, atol=1e-12)


def test_streams_are_stable_across_processes() -> None:
    """The stream of (scenario, parameter) is a stable hash, not Python's per-process ``hash()``."""
    code = ("from pipelines.model.uncertainty import draw_stream; "
            "print(repr(draw_stream(20250701, 'paper_text', 'laptop_train_power_w').random()))")
    other = "1" if os.environ.get("PYTHONHASHSEED") != "1" else "2"
    out = subprocess.run([sys.executable, "-c", code], cwd=PROJECT_ROOT, env={**os.environ, "PYTHONHASHSEED": other},
                         capture_output=True, text=True, check=True).stdout.strip()
    assert float(out) == draw_stream(20250701, "paper_text", "laptop_train_power_w").random()
    assert draw_stream(20250701, "paper_text", "laptop_train_power_w").random() != draw_stream(20250701, "paper_figure", "laptop_train_power_w").random()
    with pytest.raises(ValueError, match="non-negative"):
        draw_stream(-1, "paper_text", "laptop_train_power_w")


@pytest.mark.parametrize("seed", [0, 20250701])
def test_sobol_indices_of_a_scenario_do_not_depend_on_the_others(inputs: tuple[pl.DataFrame, pl.DataFrame], seed: int) -> None:
    """A scenario's Sobol design and bootstrap are its own, also at seed 0 (where SALib would use the
    global random state if it were given the seed as a number)."""
    base, parameters = inputs
    two = base.filter(pl.col("scenario_id").is_in(["paper_text", "realistic_attributional"]))
    assert all(len(independent(ranged_parameters(parameters.filter(pl.col("scenario_id") == s)))) >= 2
               for s in two.get_column("scenario_id"))
    together = sobol_rows(duckdb.connect(), two.reverse(), parameters, 8, seed)
    np.random.seed(1)  # the global state must not matter
    alone = sobol_rows(duckdb.connect(), two.filter(pl.col("scenario_id") == "realistic_attributional"), parameters, 8, seed)
    np.random.seed(2)
    again = sobol_rows(duckdb.connect(), two.filter(pl.col("scenario_id") == "realistic_attributional"), parameters, 8, seed)
    assert alone.height > 0 and alone.get_column("s1_ci95").is_not_null().all()
    assert together.filter(pl.col("scenario_id") == "realistic_attributional").equals(alone)
    assert again.equals(alone)


def test_sobol_indices_in_batches_are_the_one_querys(inputs: tuple[pl.DataFrame, pl.DataFrame], monkeypatch: pytest.MonkeyPatch) -> None:
    """The scenarios' design points are evaluated together up to SOBOL_BATCH_SETS a query: one query a scenario gives
    the same indices as one for all (paper_text's null parameters stay null beside a scenario that draws them)."""
    import pipelines.model.uncertainty as uncertainty

    base, parameters = inputs
    two = base.filter(pl.col("scenario_id").is_in(["paper_text", "realistic_attributional"]))
    together = sobol_rows(duckdb.connect(), two, parameters, 8, 5)
    queries: list[int] = []
    original = uncertainty.inputs_from_unit
    monkeypatch.setattr(uncertainty, "inputs_from_unit", lambda base, samples: queries.append(len(samples)) or original(base, samples))
    monkeypatch.setattr(uncertainty, "SOBOL_BATCH_SETS", 1)
    apart = sobol_rows(duckdb.connect(), two, parameters, 8, 5)
    assert queries == [1, 1]
    assert together.height > 0 and apart.equals(together)
