"""``edge-carbon run --scenario ID``: a what-if recomputes one scenario's rows of every table downstream
of its parameters and keeps every other scenario's as published; its tables equal a full build's
over the same edited sources."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import dagster as dg
import duckdb
import pytest

from pipelines.cli import main
from pipelines.ingest.manifest import load_manifest
from pipelines.ingest.manifest_writing import LOCAL_MANIFEST
from pipelines.paths import SOURCES_DIR, SOURCES_ENV, WAREHOUSE_ENV
from pipelines.run import console
from pipelines.warehouse.database import open_readonly
from pipelines.warehouse.scenario_scope import scenario_tables
from tests.conftest import SITE_ENV, TEST_DRAWS, TEST_SOBOL_BASE_SAMPLES, build, run_config_for

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
    command = console.command()
    assert capsys.readouterr().err.splitlines()[-1] == (f"fix: run a full build first: make run (or {command} run), "
                                                        f"then {command} run --scenario {SCENARIO}")
    assert main(["run", "--scenario", SCENARIO, "--workers", "2"]) == 2
    assert "leave out --logs, --only, --rebuild and --workers" in capsys.readouterr().err


@pytest.fixture
def sources(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A private copy of the shipped sources (without a local.toml of the checkout's), in use."""
    copied = tmp_path / "sources"
    shutil.copytree(SOURCES_DIR, copied, ignore=shutil.ignore_patterns(LOCAL_MANIFEST))
    monkeypatch.setenv(SOURCES_ENV, str(copied))
    return copied


@pytest.fixture
def what_if_warehouse(built_warehouse: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A copy of the shared build (its lake and site beside it), published at $EDGE_CARBON_WAREHOUSE,
    its site at $EDGE_CARBON_SITE."""
    path = tmp_path / "what_if" / built_warehouse.name
    shutil.copytree(built_warehouse.parent, path.parent, ignore=shutil.ignore_patterns(".runs", "*.lock", "built"))
    monkeypatch.setenv(WAREHOUSE_ENV, str(path))
    monkeypatch.setenv(SITE_ENV, str(path.parent / "site"))
    return path


def small_draws(monkeypatch: pytest.MonkeyPatch) -> None:
    """``edge-carbon run`` with the test builds' Monte Carlo (fewer draws than its default), all else as typed."""
    from pipelines.run import launch

    real = launch.materialise

    def materialise(**kwargs: Any) -> launch.Outcome:
        config = kwargs.get("run_config") or {}
        ops = {**config.get("ops", {}), "monte_carlo": {"config": {"n_draws": TEST_DRAWS, "sobol_base_samples": TEST_SOBOL_BASE_SAMPLES}}}
        return real(**{**kwargs, "run_config": {**config, "ops": ops}})

    monkeypatch.setattr(launch, "materialise", materialise)


#: Each file of staging.sources, by source id: what identifies it, and the manifest that registers it.
SOURCES_ROWS = "select source_id, sha256, path, table_name, manifest_file from staging.sources order by source_id"


def site_files(site: Path) -> dict[str, tuple[int, int]]:
    """Every file of the site with its size and modification time."""
    return {str(p.relative_to(site)): (p.stat().st_size, p.stat().st_mtime_ns) for p in site.rglob("*") if p.is_file()}


@pytest.mark.slow  # over 10 s on 2 cores: CI runs it (MARKERS=all)
def test_a_new_scenario_builds_in_a_what_if(sources: Path, what_if_warehouse: Path, monkeypatch: pytest.MonkeyPatch,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    """``scenario new`` then ``run --scenario`` on a freshly built warehouse: the new file joins
    staging.sources, the scenario's rows are computed, every other row is kept; the output says so, and
    names the dashboard pages it left as published."""
    small_draws(monkeypatch)
    site = (what_if_warehouse.parent / "site").resolve()
    pages = site_files(site)
    assert "index.html" in pages and "verdict.html" in pages
    with open_readonly(what_if_warehouse) as con:
        before_sources = con.execute(SOURCES_ROWS).fetchall()
        before_verdict = con.execute("select * from marts.verdict order by all").fetchall()
    assert main(["scenario", "new", "replaced", "--extends", "realistic_attributional", "--set", "device_replacement_share=0.3"]) == 0
    capsys.readouterr()

    assert main(["run", "--scenario", "replaced"]) == 0
    out = capsys.readouterr().out.splitlines()
    command = console.command()
    assert out[1].startswith("what-if over replaced: its rows of every table downstream of its parameters recomputed and published in ")
    assert out[2] == ("registered since the last full build, added to staging.sources by this what-if: scenario_replaced "
                      "(marts.sources lists it after make run)")
    assert out[3] == (f"dashboards not re-rendered (a what-if renders none): index.html, "
                      f"{', '.join(sorted(p for p in pages if p.endswith('.html') and p != 'index.html'))} in {site} are left as published, "
                      f"without this what-if's rows; make run (or {command} run) re-renders them")
    assert not [line for line in out if line.startswith("dashboards: ")]
    assert site_files(site) == pages  # not one page re-rendered

    with open_readonly(what_if_warehouse) as con:
        after_sources = con.execute(SOURCES_ROWS).fetchall()
        scenarios = dict(con.execute("select scenario_id, count(*) from marts.verdict group by all").fetchall())
        others = con.execute("select * from marts.verdict where scenario_id <> 'replaced' order by all").fetchall()
    entry = next(e for e in load_manifest() if e.id == "scenario_replaced")
    added = ("scenario_replaced", entry.sha256, "scenarios/replaced.csv", "core.scenario_parameters", "manifest/local.toml")
    assert after_sources == sorted([*before_sources, added])  # its row added, every other row kept
    assert scenarios["replaced"] == scenarios["realistic_attributional"] > 0
    assert others == before_verdict


@pytest.mark.slow
def test_a_new_scenarios_what_if_equals_a_full_build(sources: Path, built_warehouse: Path, tmp_path: Path) -> None:
    """A scenario registered since the last full build: its what-if (its file added to staging.sources)
    gives the tables and staging.sources that a full build over the same sources gives."""
    from pipelines.run.launch import materialise

    assert main(["scenario", "new", "replaced", "--extends", "realistic_attributional", "--set", "device_replacement_share=0.3"]) == 0
    what_if = tmp_path / "what_if" / built_warehouse.name
    shutil.copytree(built_warehouse.parent, what_if.parent, ignore=shutil.ignore_patterns(".runs", "*.lock", "built"))
    outcome = materialise(scenario="replaced", run_config=run_config_for(what_if), instance=dg.DagsterInstance.ephemeral(),
                          warehouse=what_if)
    assert outcome.success, outcome.failures
    assert outcome.added_sources == ["scenario_replaced"]
    full = tmp_path / "full" / "edge_carbon.duckdb"
    full.parent.mkdir()
    assert build(full).success

    con = duckdb.connect()
    for name, path in (("what_if", what_if), ("full_build", full)):
        con.execute(f"attach '{path}' as {name} (read_only)")
    tables = [*scenario_tables(con, "full_build"), "staging.sources"]
    assert {table: differing(con, "what_if", "full_build", table) for table in tables} == dict.fromkeys(tables, 0)
    assert con.execute("select count(*) from what_if.marts.verdict where scenario_id = 'replaced'").fetchall()[0][0] > 0


@pytest.mark.parametrize(("typed", "first", "fix"), [
    ("replace", "no scenario replace is registered ({shipped}, {yours}); did you mean replaced ({s}/scenarios/replaced.csv, in "
                "{s}/manifest/local.toml)?",
     "fix: {c} run --scenario replaced; or make replace first: {c} scenario new replace --extends PARENT --set PARAM=VALUE "
     "(writes {s}/scenarios/replace.csv, registered in {s}/manifest/local.toml)"),
    ("realistic_atributional", "no scenario realistic_atributional is registered ({shipped}, {yours}); did you mean "
                               "realistic_attributional ({s}/scenarios/realistic_attributional.csv, in {s}/manifest/scenarios.toml) or "
                               "realistic_consequential ({s}/scenarios/realistic_consequential.csv, in {s}/manifest/scenarios.toml)?",
     "fix: {c} run --scenario realistic_attributional; or make realistic_atributional first: {c} scenario new realistic_atributional "
     "--extends PARENT --set PARAM=VALUE (writes {s}/scenarios/realistic_atributional.csv, registered in {s}/manifest/local.toml)"),
    ("scenario_replaced", "scenario_replaced is the source id of scenario replaced ({s}/scenarios/replaced.csv, in {s}/manifest/local.toml); "
                          "--scenario takes a scenario id",
     "fix: {c} run --scenario replaced"),
    ("realistic_base", "realistic_base is an abstract scenario ({s}/scenarios/realistic_base.csv, in {s}/manifest/scenarios.toml): a parent "
                       "whose own rows are never computed, so a what-if runs over a scenario that extends it: realistic_attributional, "
                       "realistic_consequential, replaced",
     "fix: name one of them: {c} run --scenario realistic_attributional"),
])
def test_an_unknown_scenario_gets_the_closest_ids_and_their_files(typed: str, first: str, fix: str, sources: Path, tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch,
                                                                 capsys: pytest.CaptureFixture[str]) -> None:
    """Refused before any run (exit 2): the first line says why, with the closest registered ids, each with
    its file and the manifest that registers it (the shipped ones', or yours); the last line is the fix."""
    monkeypatch.setenv(WAREHOUSE_ENV, str(tmp_path / "none" / "edge_carbon.duckdb"))
    assert main(["scenario", "new", "replaced", "--extends", "realistic_attributional", "--set", "device_replacement_share=0.3"]) == 0
    capsys.readouterr()
    assert main(["run", "--scenario", typed]) == 2
    names = {"s": str(sources.resolve()), "c": console.command(), "shipped": f"the shipped ones in {sources.resolve()}/manifest/scenarios.toml",
             "yours": f"yours in {sources.resolve()}/manifest/local.toml"}
    assert capsys.readouterr().err.splitlines() == [f"edge-carbon run: {first.format(**names)}", fix.format(**names)]


def test_a_claim_added_since_the_last_build_ends_the_what_if_with_make_run(sources: Path, what_if_warehouse: Path,
                                                                          capsys: pytest.CaptureFixture[str]) -> None:
    """A scenario that tests a claim added since the last full build: the what-if stages no claim, so its
    check stops it, and the last line says the full build comes first."""
    assert main(["scenario", "new", "doe_case", "--extends", "realistic_attributional", "--set", "claim_id=doe2026_reduction_2x"]) == 0
    assert main(["claim", "new", "doe2026_reduction_2x", "--paper", "Doe et al. 2026", "--title", "A paper", "--quantity",
                 "reduction_factor", "--value", "2", "--unit", "x", "--quote", "Edge training emits half.", "--url",
                 "https://example.org/doe", "--case", "doe_case"]) == 0
    capsys.readouterr()
    assert main(["run", "--scenario", "doe_case"]) == 1
    err = capsys.readouterr().err.splitlines()
    assert "FAILED core/scenario_parameters: claims_known" in err
    assert err[-1] == ("fix: claim doe2026_reduction_2x is registered but not in the published staging.claims, which only a full "
                       f"build writes (a what-if stages scenarios alone): make run (or {console.command()} run)")
