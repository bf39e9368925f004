"""One scenario never moves another: with a scenario added (``edge-carbon scenario new``, named to
sort first, so every shipped scenario changes position) or a shipped one removed, every other
scenario's rows of every table of the marts schema are bit-identical to the shipped build's
(``except all`` both ways), and a table without a scenario is identical in full.

Two full builds of temporary copies of ``sources/`` beside the session's ``built_warehouse``
(the same run config), hence ``slow``.
"""

from __future__ import annotations

import shutil
import tomllib
from pathlib import Path

import duckdb
import pytest

from pipelines.cli import main
from pipelines.identifiers import checked_identifier
from pipelines.paths import SOURCES_DIR, SOURCES_ENV
from schemas.marts import RUN_STAMP_COLUMNS
from tests.conftest import build

pytestmark = pytest.mark.slow

#: The added scenario: paper_text with fewer, ranged hours, under an id that sorts before every shipped one.
ADDED = "a_fewer_hours"
#: The removed scenario: the first shipped one in id order, so every later one moves up a place.
REMOVED = "charging_window"
ADDED_ARGV = ["scenario", "new", ADDED, "--extends", "paper_text", "--set", "edge_hours_per_day=6",
              "--range", "edge_hours_per_day=4:10:triangular", "--reason", "Fewer hours on the charger (test scenario)."]


def without_source(manifest: Path, source_id: str) -> str:
    """``manifest``'s text without the ``[[source]]`` entry ``source_id`` (read back to check it)."""
    head, *blocks = manifest.read_text(encoding="utf-8").split("[[source]]")
    kept = [b for b in blocks if f'\nid = "{source_id}"\n' not in b]
    assert len(kept) == len(blocks) - 1, f"{source_id} is not one entry of {manifest}"
    text = "[[source]]".join([head, *kept])
    assert source_id not in {s["id"] for s in tomllib.loads(text)["source"]}
    return text


def built_from(root: Path, edit) -> Path:  # type: ignore[no-untyped-def]
    """A build of a copy of the shipped sources under ``root``, after ``edit(sources)``."""
    sources = root / "sources"
    shutil.copytree(SOURCES_DIR, sources)
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv(SOURCES_ENV, str(sources))
        patch.chdir(root)
        edit(sources)
        path = root / "wh" / "edge_carbon.duckdb"
        result = build(path)
        failures = [e.step_key for e in result.all_events if e.is_step_failure]
        assert result.success, f"pipeline failed in steps {failures}"
    return path


@pytest.fixture(scope="module")
def added(tmp_path_factory: pytest.TempPathFactory) -> Path:
    def add(_: Path) -> None:
        assert main(ADDED_ARGV) == 0

    return built_from(tmp_path_factory.mktemp("scenario_added"), add)


@pytest.fixture(scope="module")
def removed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    def remove(sources: Path) -> None:
        manifest = sources / "manifest" / "scenarios.toml"
        manifest.write_text(without_source(manifest, f"scenario_{REMOVED}"), encoding="utf-8")
        (sources / "scenarios" / f"{REMOVED}.csv").unlink()

    return built_from(tmp_path_factory.mktemp("scenario_removed"), remove)


def differences(shipped: Path, changed: Path, scenario: str) -> tuple[dict[str, tuple[int, int]], dict[str, int]]:
    """Per marts table: (rows only in the shipped build, rows only in the changed one), over every
    scenario but ``scenario`` (all rows of a table without a scenario_id, but the scenario's own
    source entry), leaving out the columns that name the run that computed a row, and the rows compared."""
    con = duckdb.connect()
    con.execute("attach ? as shipped (read_only)", [str(shipped)])
    con.execute("attach ? as changed (read_only)", [str(changed)])
    listing = "select table_name from duckdb_tables() where database_name = ? and schema_name = 'marts' order by 1"
    tables = [t for (t,) in con.execute(listing, ["shipped"]).fetchall()]
    assert len(tables) >= 15 and tables == [t for (t,) in con.execute(listing, ["changed"]).fetchall()]
    found, compared = {}, {}
    for table in tables:
        ident = checked_identifier(f"marts.{table}")
        columns = [c for (c,) in con.execute("select column_name from duckdb_columns() where database_name = 'shipped' "
                                             "and schema_name = 'marts' and table_name = ? order by column_index", [table]).fetchall()]
        # the scenario's own rows: by scenario_id, and its own source entry (marts.sources) by source_id
        keep = ("where scenario_id is distinct from $scenario" if "scenario_id" in columns
                else "where source_id is distinct from 'scenario_' || $scenario" if "source_id" in columns else "")
        params = {"scenario": scenario} if keep else {}
        stamps = [c for c in RUN_STAMP_COLUMNS if c in columns]  # which run computed a row is not a result
        star = f"* exclude ({', '.join(stamps)})" if stamps else "*"
        rows = {}
        for a, b in (("shipped", "changed"), ("changed", "shipped")):
            rows[a] = con.execute(f"select count(*) from (select {star} from {a}.{ident} {keep} "  # noqa: S608 - a checked catalog name
                                  f"except all select {star} from {b}.{ident} {keep})", params).fetchall()[0][0]
        compared[table] = con.execute(f"select count(*) from shipped.{ident} {keep}", params).fetchall()[0][0]  # noqa: S608 - as above
        if rows["shipped"] or rows["changed"]:
            found[table] = (rows["shipped"], rows["changed"])
    return found, compared


def scenario_rows(path: Path, scenario: str) -> int:
    with duckdb.connect(str(path), read_only=True) as con:
        return con.execute("select (select count(*) from marts.verdict where scenario_id = $s) "
                           "+ (select count(*) from marts.uncertainty where scenario_id = $s) "
                           "+ (select count(*) from marts.uncertainty_drivers where scenario_id = $s)", {"s": scenario}).fetchall()[0][0]


@pytest.mark.parametrize(("change", "scenario"), [("added", ADDED), ("removed", REMOVED)])
def test_adding_or_removing_a_scenario_leaves_every_other_scenarios_marts_bit_identical(
        built_warehouse: Path, request: pytest.FixtureRequest, change: str, scenario: str) -> None:
    changed: Path = request.getfixturevalue(change)
    with_it, without_it = (changed, built_warehouse) if change == "added" else (built_warehouse, changed)
    assert scenario_rows(with_it, scenario) > 0 and scenario_rows(without_it, scenario) == 0
    found, compared = differences(built_warehouse, changed, scenario)
    assert found == {}, f"rows of other scenarios that moved (only before, only after): {found}"
    for table in ("verdict", "uncertainty", "uncertainty_distribution", "uncertainty_drivers", "fleet_equivalence", "sensitivity"):
        assert compared[table] > 0, table
