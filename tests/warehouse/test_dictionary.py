"""The data dictionary: a comment on every table and column, its dashboard page, and `edge-carbon sql --format`."""

import csv
import html
import io
import json
import shutil
from collections.abc import Callable
from pathlib import Path

import duckdb
import pytest

from dashboards.dictionary import anchor
from pipelines.cli import main
from pipelines.paths import WAREHOUSE_ENV
from pipelines.warehouse.database import open_readonly
from pipelines.warehouse.dictionary import (
    TABLES,
    column_comment,
    describe_warehouse,
    first_sentence,
    sql_literal,
    table_comment,
    unit_of,
)
from pipelines.warehouse.queries import query_pl
from schemas.marts import Verdict
from schemas.meta import columns

DESCRIBED = {"schemas": ["staging", "core", "marts", "quarantine", "raw"]}


@pytest.fixture(scope="module")
def con(built_warehouse: Path):
    connection = open_readonly(built_warehouse)
    yield connection
    connection.close()


def _undocumented(con, catalog: str, names: str) -> list[tuple]:
    """``names`` of the rows of ``catalog`` (duckdb_tables/duckdb_columns) with no comment."""
    return con.execute(
        f"select {names} from {catalog}() where list_contains($schemas, schema_name) and (comment is null or comment = '')",  # noqa: S608 - test literals
        DESCRIBED,
    ).fetchall()


def test_every_table_has_a_comment(con) -> None:
    tables = con.execute("select schema_name, table_name from duckdb_tables() where list_contains($schemas, schema_name)", DESCRIBED).fetchall()
    assert len(tables) >= 30
    assert _undocumented(con, "duckdb_tables", "schema_name, table_name") == []


def test_every_column_has_a_comment(con) -> None:
    assert _undocumented(con, "duckdb_columns", "schema_name, table_name, column_name") == []


def test_comments_come_from_the_pandera_models(con) -> None:
    comments = dict(con.execute(
        "select column_name, comment from duckdb_columns() where schema_name = 'marts' and table_name = 'verdict'").fetchall())
    model = columns(Verdict)
    assert set(comments) == set(model)
    assert comments["reduction_factor"] == model["reduction_factor"].description
    assert comments["verdict"] == model["verdict"].description
    table = con.execute("select comment from duckdb_tables() where schema_name = 'marts' and table_name = 'verdict'").fetchall()[0][0]
    assert table == table_comment("marts.verdict", Verdict)
    assert "Grain: scenario x basis x edge device class x method row (network method, allocation policy, resize power)" in table
    # a staging table whose docstring starts with the grain is led by what the table is
    sources = con.execute("select comment from duckdb_tables() where schema_name = 'staging' and table_name = 'sources'").fetchall()[0][0]
    assert sources.startswith("The manifest, one row per shipped source file. Grain: one shipped source file.")


def test_scenario_columns_are_described_from_the_parameters(con) -> None:
    comment = con.execute(
        "select comment from duckdb_columns() where schema_name = 'core' and table_name = 'scenarios' "
        "and column_name = 'laptop_train_power_w'").fetchall()[0][0]
    unit = con.execute("select any_value(unit) from core.scenario_parameters where parameter = 'laptop_train_power_w'").fetchall()[0][0]
    assert f"laptop_train_power_w, in {unit}:" in comment
    assert "core.scenario_parameters" in comment


def test_registry_matches_the_assets() -> None:
    """Every asset that declares a pandera model is in the dictionary with that same model."""
    from pipelines.definitions import defs

    graph = defs.resolve_asset_graph()
    declared = {}
    for key in graph.get_all_asset_keys():
        model = graph.get(key).metadata.get("pandera_model")
        if model is not None:
            declared[".".join(key.path)] = model
    assert declared
    for table, model in declared.items():
        assert table in TABLES, f"{table} has a pandera model but no entry in pipelines.warehouse.dictionary.TABLES"
        assert f"{TABLES[table].__module__}.{TABLES[table].__name__}" == model, table


def test_comments_are_rewritten_after_a_table_is_replaced(built_warehouse: Path, tmp_path: Path) -> None:
    path = tmp_path / "copy.duckdb"
    shutil.copyfile(built_warehouse, path)
    with duckdb.connect(str(path)) as con:
        con.execute("create or replace table marts.verdict as select * from marts.verdict")
        assert con.execute("select comment from duckdb_tables() where table_name = 'verdict'").fetchall()[0][0] is None
        assert describe_warehouse(con) == []
        assert con.execute("select comment from duckdb_tables() where table_name = 'verdict'").fetchall()[0][0]
        # a table nothing describes is reported, not guessed at
        con.execute("create table marts.scratch (x integer)")
        assert describe_warehouse(con) == ["marts.scratch"]


class _Recording:
    """A connection that records the ``comment on`` statements it runs."""

    def __init__(self, con: duckdb.DuckDBPyConnection) -> None:
        self.con, self.comments = con, []

    def execute(self, sql: str, *args: object) -> duckdb.DuckDBPyConnection:
        if sql.startswith("comment on"):
            self.comments.append(sql)
        return self.con.execute(sql, *args)


def test_only_comments_that_differ_are_written(built_warehouse: Path, tmp_path: Path) -> None:
    path = tmp_path / "copy.duckdb"
    shutil.copyfile(built_warehouse, path)
    with duckdb.connect(str(path)) as con:
        recording = _Recording(con)
        assert describe_warehouse(recording) == [] and recording.comments == []  # the build left every comment in place
        columns = con.execute("select count(*) from duckdb_columns() where schema_name = 'marts' and table_name = 'verdict'").fetchall()[0][0]
        wanted = con.execute("select comment from duckdb_columns() where schema_name = 'marts' and table_name = 'lifecycle_carbon' "
                             "and column_name = 'scenario_id'").fetchall()[0][0]
        con.execute("create or replace table marts.verdict as select * from marts.verdict")
        con.execute("comment on column marts.lifecycle_carbon.scenario_id is 'stale'")
        assert describe_warehouse(recording) == []
        # the replaced table's comment and every column's, and the one stale column comment: nothing else
        assert len(recording.comments) == 1 + columns + 1
        assert sum("marts.verdict" in sql for sql in recording.comments) == 1 + columns
        assert con.execute("select comment from duckdb_columns() where schema_name = 'marts' and table_name = 'lifecycle_carbon' "
                           "and column_name = 'scenario_id'").fetchall()[0][0] == wanted


def test_quoting_and_units() -> None:
    assert sql_literal("the paper's value") == "'the paper''s value'"
    with duckdb.connect() as con:
        hostile = "it's '; drop table x; --"
        assert con.execute("select " + sql_literal(hostile)).fetchall()[0][0] == hostile
    assert unit_of("energy_j") == "J" and unit_of("mean_gco2e_per_kwh") == "gCO2e/kWh" and unit_of("status") is None
    assert column_comment("tdp_w", "Board power") == "Board power. Unit: W."
    assert column_comment("tdp_w", "Board power, W.") == "Board power, W."
    assert column_comment("gco2e_per_kwh", "Carbon intensity, gCO2e per kWh.") == "Carbon intensity, gCO2e per kWh."
    assert first_sentence("OPT's context length (Zhang et al. 2022). Second.") == "OPT's context length (Zhang et al. 2022)."


def test_dictionary_page_lists_every_mart_with_its_comment(built_warehouse: Path, con, rendered_site: Callable[..., dict]) -> None:
    text = rendered_site(built_warehouse)["pages"]["dictionary"]["html"].read_text(encoding="utf-8")
    marts = con.execute("select table_name, comment from duckdb_tables() where schema_name = 'marts'").fetchall()
    assert len(marts) >= 15
    for table, comment in marts:
        assert f"<h2><code>marts.{table}</code></h2>" in text, table
        assert html.escape(comment) in text, table
    column = con.execute("select comment from duckdb_columns() where schema_name = 'marts' and table_name = 'verdict' "
                         "and column_name = 'p05_with_comm'").fetchall()[0][0]
    assert html.escape(column) in text



def test_dictionary_page_lists_the_views_too(built_warehouse: Path, con, rendered_site: Callable[..., dict]) -> None:
    text = rendered_site(built_warehouse)["pages"]["dictionary"]["html"].read_text(encoding="utf-8")
    views = con.execute("select schema_name || '.' || view_name, comment from duckdb_views() where not internal "
                        "and schema_name in ('marts', 'core', 'staging', 'quarantine', 'raw') order by 1").fetchall()
    assert "staging.power_samples" in {view for view, _ in views}
    for view, comment in views:
        assert comment, view
        assert f'<h2><code>{view}</code> <span class="kind">(view)</span></h2>' in text, view
        assert html.escape(comment) in text, view
    # with its columns: the lake's power samples have their watts
    section = text.split(f'<section id="{anchor("staging.power_samples")}">', 1)[1].split("</section>", 1)[0]
    assert "<code>power_w</code>" in section
    tables = con.execute("select count(*) from duckdb_tables() where schema_name in ('marts', 'core', 'staging', 'quarantine', 'raw')").fetchall()[0][0]
    assert f"Every table ({tables}), view ({len(views)}) and column" in text


# -- edge-carbon sql --format ---------------------------------------------------------------


@pytest.fixture
def published(built_warehouse: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv(WAREHOUSE_ENV, str(built_warehouse))
    return built_warehouse


LONG_TEXT = "select reasoning from core.scenario_parameters order by length(reasoning) desc, parameter"


def test_sql_csv_keeps_every_row_and_character(published: Path, con, capsys) -> None:
    expected = query_pl(con, LONG_TEXT).get_column("reasoning").to_list()
    assert len(expected) > 40 and len(expected[0]) > 200
    assert main(["sql", LONG_TEXT, "--format", "csv"]) == 0
    rows = list(csv.reader(io.StringIO(capsys.readouterr().out)))
    assert rows[0] == ["reasoning"]
    assert [r[0] for r in rows[1:]] == expected
    # text with commas, quotes and a line break survives too
    assert main(["sql", "select 'a, \"b\"' || chr(10) || 'c' as t, 1 as n", "--format", "csv"]) == 0
    assert list(csv.reader(io.StringIO(capsys.readouterr().out))) == [["t", "n"], ['a, "b"\nc', "1"]]
    assert main(["sql", LONG_TEXT, "--format", "csv", "--limit", "3"]) == 0
    assert len(list(csv.reader(io.StringIO(capsys.readouterr().out)))) == 4


def test_sql_json_parses(published: Path, con, capsys) -> None:
    query = "select table_name, column_name, comment from duckdb_columns() where schema_name = 'marts' order by all"
    assert main(["sql", query, "--format", "json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert rows == query_pl(con, query).to_dicts()
    assert len(rows) > 40


def test_sql_markdown_and_table_keep_the_row_limit(published: Path, capsys) -> None:
    query = "select parameter, unit from core.scenario_parameters order by scenario_id, parameter"
    assert main(["sql", query, "--format", "markdown"]) == 0
    captured = capsys.readouterr()
    lines = captured.out.strip().splitlines()
    assert lines[0] == "| parameter | unit |" and lines[1] == "|---|---|"
    assert len(lines) == 2 + 40
    assert "40 of" in captured.err
    assert main(["sql", "select 'a|b' as x", "--format", "markdown"]) == 0
    assert capsys.readouterr().out.splitlines()[2] == "| a\\|b |"
    assert main(["sql", query]) == 0
    assert "shape:" in capsys.readouterr().out


def test_dictionary_page_fits_a_laptop_window(built_warehouse: Path, rendered_site: Callable[..., dict]) -> None:
    """At 1,366 px wide the page has no horizontal scroll bar: long names and comments wrap."""
    webdriver = pytest.importorskip("selenium.webdriver")
    from selenium.webdriver.chrome.service import Service

    from tests.dashboards.test_dashboards_browser import CHROMEDRIVER, CHROMIUM, MISSING, load

    if MISSING is not None:
        pytest.skip(MISSING)
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for flag in ("--headless=new", "--no-sandbox", "--disable-gpu", "--window-size=1366,900",
                 "--host-resolver-rules=MAP * ~NOTFOUND", "--proxy-server=127.0.0.1:9"):
        options.add_argument(flag)
    driver = webdriver.Chrome(options=options, service=Service(CHROMEDRIVER))
    driver.set_script_timeout(30)
    try:
        assert load(driver, rendered_site(built_warehouse)["pages"]["dictionary"]["html"]) == "true"
        widths = driver.execute_script(
            "return [document.documentElement.scrollWidth, document.documentElement.clientWidth,"
            " Math.max(...Array.from(document.querySelectorAll('#dictionary table')).map((t) => t.getBoundingClientRect().right))]")
    finally:
        driver.quit()
    scroll, client, right = widths
    assert client <= 1366
    assert scroll <= client, f"page is {scroll} px wide in a {client} px window"
    assert right <= client
