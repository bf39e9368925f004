"""``edge-carbon run --scenario ID``: a what-if recomputes one scenario's rows of every table downstream
of its parameters and keeps every other scenario's as published; its tables equal a full build's
over the same edited sources."""

from __future__ import annotations

import shutil
from pathlib import Path

import dagster as dg
import duckdb
import pytest

from pipelines.cli import main
from pipelines.paths import SOURCES_DIR, SOURCES_ENV
from pipelines.warehouse.scenario_scope import scenario_tables
from tests.conftest import build, run_config_for

SCENARIO = "realistic_consequential"
#: The run-stamp column of marts.siting (the run that computed a row), not a value of the model.
RUN_STAMPS = {"computed_run_id"}


def differing(con: duckdb.DuckDBPyConnection, left: str, right: str, table: str) -> int:
    """Rows of ``table`` in one attached database and not the other (``except all`` both ways)."""
    columns = [c for (c,) in con.execute("select column_name from duckdb_columns() where database_name = $db and "
                                         "schema_name || '.' || table_name = $table order by column_index",
                                         {"db": left, "table": table}).fetchall() if c not in RUN_STAMPS]
    select = ", ".join(f'"{c}"' for c in columns)
    return sum(con.execute(f"select count(*) from (select {select} from {a}.{table} except all select {select} from {b}.{table})"  # noqa: S608
                           ).fetchall()[0][0] for a, b in ((left, right), (right, left)))


@pytest.mark.slow
def test_a_what_if_equals_a_full_build(built_warehouse: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from pipelines.run.launch import materialise

    sources = tmp_path / "sources"
    shutil.copytree(SOURCES_DIR, sources)
    monkeypatch.setenv(SOURCES_ENV, str(sources))
    scenario_file = sources / "scenarios" / f"{SCENARIO}.csv"
    text = scenario_file.read_text(encoding="utf-8")
    assert "\ndevice_replacement_share,0,fraction," in text
    scenario_file.write_text(text.replace("\ndevice_replacement_share,0,fraction,", "\ndevice_replacement_share,0.3,fraction,"),
                             encoding="utf-8")
    assert main(["register", "--refresh", f"scenario_{SCENARIO}"]) == 0

    what_if = tmp_path / "what_if" / built_warehouse.name  # the file and its lake beside it
    shutil.copytree(built_warehouse.parent, what_if.parent, ignore=shutil.ignore_patterns(".runs", "*.lock", "built"))
    outcome = materialise(scenario=SCENARIO, run_config=run_config_for(what_if), instance=dg.DagsterInstance.ephemeral(),
                          warehouse=what_if)
    assert outcome.success, outcome.failures
    full = tmp_path / "full" / "edge_carbon.duckdb"
    full.parent.mkdir()
    assert build(full).success

    con = duckdb.connect()
    for name, path in (("what_if", what_if), ("full_build", full), ("before", built_warehouse)):
        con.execute(f"attach '{path}' as {name} (read_only)")
    tables = scenario_tables(con, "full_build")
    assert "core.model_evaluation" in tables and "marts.verdict" in tables and len(tables) >= 20
    assert {table: differing(con, "what_if", "full_build", table) for table in tables} == dict.fromkeys(tables, 0)
    # it did recompute: the scenario's R moved (early replacement changes the battery-wear embodied term), the others' did not
    query = ("select scenario_id, device_class, reduction_factor_with_comm from {db}.marts.verdict where is_headline "
             "order by all")
    before, after = (dict(((s, d), r) for s, d, r in con.execute(query.format(db=db)).fetchall()) for db in ("before", "what_if"))
    assert before.keys() == after.keys()
    moved = {key for key in before if before[key] != after[key]}
    assert moved and {scenario for scenario, _ in moved} == {SCENARIO}


def test_a_what_if_needs_a_built_warehouse(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("EDGE_CARBON_WAREHOUSE", str(tmp_path / "none" / "edge_carbon.duckdb"))
    assert main(["run", "--scenario", SCENARIO]) == 2
    assert "run a full build first" in capsys.readouterr().err
    assert main(["run", "--scenario", SCENARIO, "--workers", "2"]) == 2
    assert "leave out --logs, --only, --rebuild and --workers" in capsys.readouterr().err
