"""Every mart that reads the model is its SQL file: run by hand in a plain read-only DuckDB session on the published
file, after the model's macro files (sql/model/macros.sql, model_rows.sql) and with the bound values its asset
passes, it returns the stored table's rows (``except all`` empty both ways, on values rounded to 9 significant
digits). The marts found so are those whose SQL reads core.model_evaluation (pipelines.warehouse.lineage) or calls
the model's table macro itself (marts.siting, over its pairs: the temporary tables of sql/siting/, made in the same
read-only session), so a new one is covered by its file alone."""

from __future__ import annotations

import re
from pathlib import Path

import duckdb
import pytest

from pipelines.paths import MACRO_FILES, SQL_DIR, sql_text
from pipelines.warehouse.lineage import tables_read_by

MODEL_TABLE = "core.model_evaluation"
#: The marts whose SQL reads the model's table or calls its macro.
MODEL_MARTS = sorted(f"marts.{entry.name.removesuffix('.sql')}" for entry in SQL_DIR.joinpath("marts").iterdir()
                     if entry.name.endswith(".sql") and (MODEL_TABLE in tables_read_by(f"marts/{entry.name}")
                                                         or re.search(r"\bmodel_(class_)?rows\(", entry.read_text())))


def bound_values(table: str) -> dict[str, object]:
    """The values the table's asset binds into its SQL (marts.verdict's vocabulary), else none."""
    if table == "marts.verdict":
        from pipelines.defs.assets.verdict import VERDICT_PARAMS

        return VERDICT_PARAMS
    return {}


def prepare(con: duckdb.DuckDBPyConnection, table: str) -> None:
    """The temporary tables the table's SQL reads besides the warehouse's, made as its asset makes them."""
    if table == "marts.siting":
        from pipelines.defs.assets.siting import prepare_siting

        prepare_siting(con)


def rounded(column: str, data_type: str) -> str:
    """``column`` as compared: a double rounded to 9 significant digits, anything else as stored."""
    if data_type in ("DOUBLE", "FLOAT"):
        return (f'case when "{column}" = 0 or not isfinite("{column}") then "{column}" '
                f'else round("{column}", 8 - cast(floor(log10(abs("{column}"))) as integer)) end as "{column}"')
    return f'"{column}"'


def test_the_marts_that_read_the_model_are_found() -> None:
    assert {"marts.verdict", "marts.fleet_sizing", "marts.communication", "marts.embodied_allocation",
            "marts.lifecycle_carbon", "marts.fleet_equivalence", "marts.siting"} <= set(MODEL_MARTS)


@pytest.mark.parametrize("table", MODEL_MARTS)
def test_a_mart_that_reads_the_model_runs_by_hand(built_warehouse: Path, table: str) -> None:
    schema, name = table.split(".")
    with duckdb.connect(str(built_warehouse), read_only=True) as con:
        for relative in MACRO_FILES:
            con.execute(sql_text(relative))
        prepare(con, table)
        con.execute(f"create temp table plain as {sql_text(f'{schema}/{name}.sql')}", bound_values(table))
        stored = con.execute("select column_name, data_type from duckdb_columns() where schema_name = $s and table_name = $t "
                             "and database_name = current_database() order by column_index", {"s": schema, "t": name}).fetchall()
        plain = {c for (c,) in con.execute("select column_name from duckdb_columns() where table_name = 'plain' and database_name = 'temp'").fetchall()}
        columns = ", ".join(rounded(c, t) for c, t in stored if c in plain and not c.endswith("run_id"))
        counts = con.execute(f"select (select count(*) from plain), (select count(*) from {table})").fetchone()  # noqa: S608 - a table of the project's
        only_plain = con.execute(f"select count(*) from (select {columns} from plain except all select {columns} from {table})").fetchone()[0]  # noqa: S608
        only_stored = con.execute(f"select count(*) from (select {columns} from {table} except all select {columns} from plain)").fetchone()[0]  # noqa: S608
    assert counts[0] == counts[1] > 0 and only_plain == only_stored == 0, (counts, only_plain, only_stored)
    assert len([c for c, _ in stored if c in plain]) >= len(stored) - 1  # every stored column but a run stamp is the SQL's


def test_siting_needs_no_macros_installed_before(built_warehouse: Path) -> None:
    """A step of a multiprocess run opens a connection of its own: marts.siting's set-up installs the model's macros
    itself, so its SQL runs on a connection that has none."""
    from pipelines.defs.assets.siting import prepare_siting

    with duckdb.connect(str(built_warehouse), read_only=True) as con:
        prepare_siting(con)
        counts = con.execute(f"select (select count(*) from ({sql_text('marts/siting.sql')})), "  # noqa: S608 - the project's file
                             "(select count(*) from marts.siting)").fetchone()
    assert counts[0] == counts[1] > 0
