"""One formula: the marts call the model's macros (sql/model/macros.sql) instead of restating them, and the model
is one door: its SQL reads tables passed to it, never a session variable or a redefined macro."""

from __future__ import annotations

import re
from pathlib import Path

import duckdb
import pytest

from pipelines.paths import MACRO_FILES, SOURCES_DIR, sql_text

MARTS = sorted((Path(__file__).resolve().parents[2] / "sql" / "marts").glob("*.sql"))
#: Bare model constants a mart must not restate: J per kWh, days a year, rounding a device count.
BARE = {"3.6e6 (J per kWh: kwh_of_joules)": r"3\.6e6", "365 (days a year: the carbon macros)": r"\b365\b",
        "ceil( (a device count: whole_devices)": r"\bceil\s*\("}


def code_of(sql: str) -> str:
    """The SQL without its comments and string literals."""
    sql = re.sub(r"'(?:[^']|'')*'", "''", sql)
    return re.sub(r"--[^\n]*", "", sql)


def test_strip_leaves_code_only() -> None:
    assert code_of("select 365 -- 365 days\n, 'ceil(x) x 365' as t") == "select 365 \n, '' as t"


@pytest.mark.parametrize("path", MARTS, ids=[p.name for p in MARTS])
def test_marts_restate_no_model_constant(path: Path) -> None:
    code = code_of(path.read_text())
    found = [name for name, pattern in BARE.items() if re.search(pattern, code)]
    assert not found, f"{path.name} restates {found}; call the macro instead"


def test_a_restated_constant_is_caught(tmp_path: Path) -> None:
    leak = "select devices * power_w * hours * 365 * years as kwh from x"
    assert re.search(BARE["365 (days a year: the carbon macros)"], code_of(leak))


def test_the_model_names_no_device_class() -> None:
    """Devices are rows: the model reads one row per edge device class (its table ``device_table``), so
    no class (laptop, phone, ...) appears in it, and a class's fields never shadow a parameter."""
    from schemas.vocabulary import DEVICE_FIELDS, EDGE_DEVICE_CLASSES

    code = code_of(sql_text("model/model_rows.sql") + sql_text("core/model_evaluation.sql"))
    for device_class in EDGE_DEVICE_CLASSES:
        assert not re.search(rf"\b{device_class}\w*", code), device_class
    parameters = {line.split(",", 1)[0] for line in (SOURCES_DIR / "scenarios" / "paper_base.csv").read_text("utf-8").splitlines()}
    assert not set(DEVICE_FIELDS.values()) & parameters


def test_the_model_sql_runs_on_the_published_warehouse_alone(built_warehouse: Path) -> None:
    """sql/core/model_evaluation.sql, after the model's macro files (sql/model/macros.sql, model_rows.sql), in a
    plain read-only DuckDB session on the published file (no code of ours: the files' text only) returns the rows
    of core.model_evaluation: its inputs are core.scenarios, core.scenario_devices and core.variants (the macro
    model_rows' default tables), and its method tables core.*."""
    sql = Path(__file__).resolve().parents[2] / "sql"
    with duckdb.connect(str(built_warehouse), read_only=True) as con:
        for relative in MACRO_FILES:
            con.execute((sql / relative).read_text(encoding="utf-8"))
        evaluate_sql = (sql / "core" / "model_evaluation.sql").read_text(encoding="utf-8")
        columns = [r[0] for r in con.execute("select column_name from duckdb_columns() where schema_name = 'core' "
                                              "and table_name = 'model_evaluation' order by column_index").fetchall()]
        select = ", ".join(f'"{c}"' for c in columns)
        con.execute(f"create temp view plain as select {select} from ({evaluate_sql})")  # noqa: S608 - the project's own files
        con.execute(f"create temp view stored as select {select} from core.model_evaluation")  # noqa: S608 - its own columns
        counts = con.execute("select (select count(*) from plain), (select count(*) from stored)").fetchone()
        only_plain = con.execute("select count(*) from (from plain except all from stored)").fetchone()[0]
        only_stored = con.execute("select count(*) from (from stored except all from plain)").fetchone()[0]
    assert counts[0] == counts[1] > 0 and only_plain == only_stored == 0, (counts, only_plain, only_stored)


def test_an_evaluation_leaves_the_connection_as_it_found_it(built_warehouse: Path) -> None:
    """A caller's evaluation writes temporary tables of its own (its sets' device and variant rows); afterwards,
    even when its set-up failed, the declared SQL on the same connection returns core.model_evaluation's rows
    again (the step that builds the table may follow it in one process), and none of those tables is left."""
    import polars as pl

    from pipelines.model.formula import evaluate, model_view, scenario_inputs
    from pipelines.warehouse.database import open_readonly
    from pipelines.warehouse.tables import install_macros

    count = f"select count(*) from ({sql_text('core/model_evaluation.sql')})"  # noqa: S608 - the project's own file
    with open_readonly(built_warehouse) as con:
        install_macros(con)
        stored = con.execute("select count(*) from core.model_evaluation").fetchall()[0][0]
        before = con.execute(count).fetchall()[0][0]
        one = scenario_inputs(con).filter(pl.col("scenario_id") == "paper_text")
        narrow = evaluate(con, one, patterns=("none",))
        assert set(narrow.get_column("scenario_id")) == {"paper_text"} and narrow.height < stored
        with pytest.raises(ValueError, match="unknown basis filter"), model_view(con, one, basis_filter="no such filter"):
            pass
        after = con.execute(count).fetchall()[0][0]
        left = con.execute("select table_name from duckdb_tables() where temporary").fetchall()
    assert before == after == stored > 0
    assert left == []


#: Where the model lives: its SQL and the Python that evaluates it beyond the stored table.
MODEL_SQL = ("core/model_evaluation.sql", *MACRO_FILES)
#: What the model may not use: a session variable, or a macro redefined over a caller's tables.
SESSION_STATE = {"getvariable": r"\bgetvariable\s*\(", "set variable": r"\bset\s+variable\b",
                 "a temporary macro": r"\bcreate\s+(or\s+replace\s+)?temp(orary)?\s+macro\b"}


def session_state(text: str, allowed: tuple[str, ...] = ()) -> list[str]:
    """The kinds of session state ``text`` uses (:data:`SESSION_STATE`), less ``allowed``."""
    return [name for name, pattern in SESSION_STATE.items() if name not in allowed and re.search(pattern, text, re.IGNORECASE)]


@pytest.mark.parametrize("relative", MODEL_SQL)
def test_the_model_sql_reads_no_session_variable(relative: str) -> None:
    """The model's SQL reads the tables it is given: no getvariable() or set variable (its macro files create macros,
    the only session state they make)."""
    assert session_state(code_of(sql_text(relative)), allowed=("a temporary macro",)) == []


def test_the_model_python_sets_no_session_state() -> None:
    """pipelines/model/ evaluates the model by passing it tables: no session variable set or read, no macro
    redefined (``set variable`` in any case, ``create temp macro``)."""
    root = Path(__file__).resolve().parents[2] / "pipelines" / "model"
    found = {path.name: kinds for path in sorted(root.glob("*.py")) if (kinds := session_state(path.read_text("utf-8")))}
    assert found == {}


#: The only evaluations beyond the declared tables: the Monte Carlo's draws and break-even's bisection, both evaluated
#: through pipelines.model.formula (every what-if mart is SQL over core.model_evaluation, and marts.siting calls the
#: model's table macro over its pairs in its own SQL).
FORMULA_CALLERS = {"pipelines/model/uncertainty.py", "pipelines/model/sensitivity.py"}


def test_only_the_draws_and_the_bisection_evaluate_through_python() -> None:
    """The modules of pipelines/ that import the formula module's evaluations (``model_view``, ``evaluate``,
    ``substitute``) are the Monte Carlo's and break-even's, and nothing else."""
    root = Path(__file__).resolve().parents[2]
    callers = {path.relative_to(root).as_posix() for path in sorted((root / "pipelines").rglob("*.py"))
               if re.search(r"from pipelines\.model\.formula import [^\n]*\b(model_view|evaluate|substitute)\b",
                            path.read_text("utf-8"))}
    assert callers == FORMULA_CALLERS


def test_session_state_is_caught() -> None:
    assert session_state("con.execute(\"set variable model_patterns = $p\")") == ["set variable"]
    assert session_state("where getvariable('x') is null") == ["getvariable"]
    assert session_state("create or replace temp macro model_inputs() as table select 1") == ["a temporary macro"]
    assert session_state("select variable_value from t") == []


#: The table writers: the only code that hands a frame to DuckDB, each to insert it into a table
#: (the writer and loader of pipelines/warehouse/tables.py, the lake's file list, the feed's and the
#: power-log stream's quarantine and blocks).
WRITERS = {"pipelines/warehouse/tables.py", "pipelines/warehouse/lake.py", "pipelines/warehouse/live_feed.py",
           "pipelines/ingest/streaming.py"}


def registrations(root: Path) -> list[str]:
    """``path:line`` of every ``<connection>.register(...)`` call under ``root``'s pipelines/, outside the writers."""
    import ast

    found = []
    for path in sorted((root / "pipelines").rglob("*.py")):
        relative = path.relative_to(root).as_posix()
        if relative in WRITERS:
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "register"
                    and not (isinstance(node.func.value, ast.Name) and node.func.value.id == "atexit")):
                found.append(f"{relative}:{node.lineno}")
    return found


def test_no_asset_hands_sql_a_python_relation() -> None:
    """The model and every asset read tables: the formula's inputs are tables or views of the
    warehouse (core.scenarios, a substitution's sets, siting's pairs (sql/siting/), the draws loaded as
    tables by pipelines.model.draw_tables), never a frame registered as a relation for a query."""
    root = Path(__file__).resolve().parents[2]
    assert registrations(root) == []


def test_a_registered_relation_is_caught(tmp_path: Path) -> None:
    (tmp_path / "pipelines").mkdir()
    (tmp_path / "pipelines" / "leak.py").write_text("def f(con, frame):\n    con.register('x', frame)\n")
    assert registrations(tmp_path) == ["pipelines/leak.py:2"]


def test_the_device_unpivot_reads_exactly_the_device_fields() -> None:
    """One device-field list: sql/model/macros.sql device_rows() unpivots the ``<class>_<field>`` columns whose field is
    one of schemas.vocabulary.DEVICE_FIELDS (its column pattern) and pivots each field to the model's column name
    (its ``filter (where field = ...) as ...`` list), both in DEVICE_FIELDS' order."""
    from schemas.vocabulary import DEVICE_FIELDS

    sql = sql_text("model/macros.sql")
    body = sql[sql.index("create or replace temp macro device_rows("):]
    body = body[:body.index("group by scenario_id, variant_id, device_class;")]
    (pattern,) = re.findall(r"columns\('\^\[a-z\]\[a-z0-9_\]\*_\(([a-z0-9_|]+)\)\$'\)", body)
    assert pattern.split("|") == list(DEVICE_FIELDS)
    pivoted = re.findall(r"max\(value\) filter \(where field = '([a-z0-9_]+)'\) as ([a-z0-9_]+)", body)
    assert pivoted == list(DEVICE_FIELDS.items())
