"""The verdict in README.md and docs/findings.md is the warehouse's: rendered again from a fresh build and compared."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from pipelines.warehouse.database import open_readonly
from pipelines.warehouse.docs import (
    BEGIN,
    DRIVERS_BEGIN,
    DRIVERS_END,
    END,
    FULL_STUDY_BASE_SAMPLES,
    REPRODUCTION_BEGIN,
    REPRODUCTION_END,
    between,
    replace_between,
    reproduction_table,
    verdict_table,
)

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.slow  # the docs quote a default `make run` (50,000 draws per scenario): a second, full build
def test_readme_and_findings_verdict_tables_are_the_warehouse(default_warehouse: Path) -> None:
    with open_readonly(default_warehouse) as con:
        table = verdict_table(con)
        reproduction = reproduction_table(con)
    assert "realistic_consequential" in table and "| **measured_throughput** |" in table
    readme = (ROOT / "README.md").read_text()
    findings = (ROOT / "docs" / "findings.md").read_text()
    assert between(readme, BEGIN, END) == table, "README.md's verdict is stale: run `make run` then `edge-carbon docs`"
    assert between(findings, BEGIN, END) == table, "docs/findings.md's verdict is stale: run `edge-carbon docs`"
    assert between(findings, REPRODUCTION_BEGIN, REPRODUCTION_END) == reproduction


def test_readme_verdict_point_values_are_the_warehouse(built_warehouse: Path) -> None:
    """The columns that hold at any run config (all but the Monte Carlo's p05-p95 and the verdict
    drawn from them) against the small test build; the whole table is checked by the slow test above."""

    def points(table: str) -> list[list[str]]:
        return [[c for i, c in enumerate(line.split("|")) if i not in (7, 9, 11)] for line in table.splitlines()]

    with open_readonly(built_warehouse) as con:
        table = verdict_table(con)
    readme = (ROOT / "README.md").read_text()
    assert points(between(readme, BEGIN, END)) == points(table), "README.md's verdict is stale: run `make run` then `edge-carbon docs`"


def test_findings_quote_the_full_sobol_study() -> None:
    drivers = between((ROOT / "docs" / "findings.md").read_text(), DRIVERS_BEGIN, DRIVERS_END)
    assert drivers.startswith(f"Sobol base samples: {FULL_STUDY_BASE_SAMPLES}.")
    rows = [line.split("|")[1:-1] for line in drivers.splitlines() if re.match(r"^\| \w+ \| (laptop|phone) \| 1 \|", line)]
    assert rows, "no rank-1 driver rows"
    # the top driver's first-order index is known to better than +-0.05 in every scenario and class
    assert all(float(r[5]) < 0.1 for r in rows), rows


def test_replace_between_keeps_the_rest() -> None:
    text = f"intro\n{BEGIN}\nold\n{END}\noutro\n"
    assert replace_between(text, BEGIN, END, "new") == f"intro\n{BEGIN}\nnew\n{END}\noutro\n"
