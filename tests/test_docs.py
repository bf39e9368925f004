"""The verdict in README.md and docs/findings.md is the warehouse's: rendered again from a fresh build and compared."""

from __future__ import annotations

from pathlib import Path

import pytest

from pipelines.warehouse.database import open_readonly
from pipelines.warehouse.docs import (
    BEGIN,
    DRIVERS_BEGIN,
    DRIVERS_END,
    DRIVERS_FULL_BEGIN,
    DRIVERS_FULL_END,
    END,
    ENDS_BEGIN,
    ENDS_END,
    FULL_STUDY_BASE_SAMPLES,
    FULL_STUDY_RESULTS,
    REPRODUCTION_BEGIN,
    REPRODUCTION_END,
    VALIDATION_BEGIN,
    VALIDATION_END,
    between,
    drivers_table,
    ends_table,
    full_drivers_table,
    read_full_study,
    replace_between,
    reproduction_table,
    validation_table,
    verdict_table,
)
from pipelines.warehouse.queries import query_pl

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.slow  # the docs quote a default `make run` (50,000 draws per scenario): a second, full build
def test_every_generated_block_is_the_warehouse(default_warehouse: Path) -> None:
    """Every block `edge-carbon docs` renders from a build, rendered again from a fresh default build: every number equal."""
    with open_readonly(default_warehouse) as con:
        table = verdict_table(con)
        reproduction = reproduction_table(con)
        drivers = drivers_table(con)
        validation = validation_table(con)
    assert "realistic_consequential" in table and "| **measured_throughput** |" in table
    readme = (ROOT / "README.md").read_text()
    findings = (ROOT / "docs" / "findings.md").read_text()
    assert between(readme, BEGIN, END) == table, "README.md's verdict is stale: run `make run` then `edge-carbon docs`"
    assert between(findings, BEGIN, END) == table, "docs/findings.md's verdict is stale: run `edge-carbon docs`"
    assert between(findings, REPRODUCTION_BEGIN, REPRODUCTION_END) == reproduction
    assert between(findings, DRIVERS_BEGIN, DRIVERS_END) == drivers, "docs/findings.md's drivers are stale: run `edge-carbon docs`"
    assert between((ROOT / "docs" / "validation.md").read_text(), VALIDATION_BEGIN, VALIDATION_END) == validation


#: Columns of the verdict table that depend on the Monte Carlo (p05-p95 twice, the feasible share, the verdict).
MONTE_CARLO_COLUMNS = ("p05-p95", "feasible share", "verdict (set by)")


def test_readme_verdict_point_values_are_the_warehouse(built_warehouse: Path) -> None:
    """The columns that hold at any run config (all but the Monte Carlo's) against the small test
    build; the whole table is checked by the slow test above."""

    def points(table: str) -> list[list[str]]:
        header = [c.strip() for c in table.splitlines()[0].split("|")]
        return [[c for i, c in enumerate(line.split("|")) if header[i] not in MONTE_CARLO_COLUMNS] for line in table.splitlines()]

    with open_readonly(built_warehouse) as con:
        table = verdict_table(con)
    readme = (ROOT / "README.md").read_text()
    assert len(points(table)[2]) == len(table.splitlines()[2].split("|")) - 4
    assert points(between(readme, BEGIN, END)) == points(table), "README.md's verdict is stale: run `make run` then `edge-carbon docs`"


def test_findings_pattern_ends_are_the_vocabulary() -> None:
    assert between((ROOT / "docs" / "findings.md").read_text(), ENDS_BEGIN, ENDS_END) == ends_table()


def test_findings_quote_the_build_and_the_full_sobol_study(built_warehouse: Path) -> None:
    findings = (ROOT / "docs" / "findings.md").read_text()
    # the build's study states its own sample count (the default build's 256)
    assert between(findings, DRIVERS_BEGIN, DRIVERS_END).startswith("Sobol base samples: 256 (")
    # the full study's block is its results file, rendered
    full = ROOT / FULL_STUDY_RESULTS
    assert between(findings, DRIVERS_FULL_BEGIN, DRIVERS_FULL_END) == full_drivers_table(full)
    study = read_full_study(full)
    assert set(study.get_column("base_samples")) == {FULL_STUDY_BASE_SAMPLES}
    top = study.filter((study.get_column("pattern") == "none") & (study.get_column("rank") == 1))
    assert top.height > 0
    # the top driver's first-order index is known to better than +-0.05 in every scenario and class
    assert (2 * top.get_column("s1_ci95") < 0.1).all(), top
    # it studied the model's inputs as they are: every scenario's drawn parameters, no more, no fewer
    with open_readonly(built_warehouse) as con:
        drawn = query_pl(con, "select distinct scenario_id, parameter from marts.uncertainty_drivers")
    assert sorted(drawn.rows()) == sorted(study.select("scenario_id", "parameter").unique().rows())


def test_replace_between_keeps_the_rest() -> None:
    text = f"intro\n{BEGIN}\nold\n{END}\noutro\n"
    assert replace_between(text, BEGIN, END, "new") == f"intro\n{BEGIN}\nnew\n{END}\noutro\n"
