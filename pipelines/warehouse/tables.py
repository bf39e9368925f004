"""Writing tables: a mart from its ``.sql`` file (bound parameters), a frame, or staged rows
with their quarantine rows, each in one transaction. Each writer returns plain metadata (row
count, preview) that the Dagster layer turns into a materialisation.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from typing import Any, Protocol

import duckdb
import pandera.polars as pa
import polars as pl
import pyarrow

from pipelines.paths import macro_text, sql_text
from pipelines.identifiers import checked_identifier
from pipelines.warehouse.queries import query_pl, table_exists
from schemas.meta import conform, empty_frame
from schemas.quarantine import RejectedRows



class StagedTable(Protocol):
    """One staged table: valid rows and their stamped rejects (pipelines.ingest.staging.Staged).

    ``in_table`` is None when ``frame`` holds the rows, else the count of rows already
    written into ``table`` (:func:`start_staged`, :func:`append_staged`).
    """

    table: str
    frame: pl.DataFrame
    rejects: pl.DataFrame
    in_table: int | None


def install_macros(con: duckdb.DuckDBPyConnection) -> None:
    """Create the model's SQL macros (sql/model/macros.sql and model_rows.sql; temporary, per connection), once
    per connection and version of the files (a session variable holds their hash)."""
    text = macro_text()
    digest = hashlib.sha256(text.encode("utf-8")).hexdigest()
    if con.execute("select getvariable('edge_carbon_macros')").fetchall()[0][0] == digest:
        return
    con.execute(text)
    con.execute("set variable edge_carbon_macros = $digest", {"digest": digest})


def preview_md(frame: pl.DataFrame, rows: int = 5) -> str:
    """A small markdown table (for the Dagster UI)."""
    head = frame.head(rows)
    cols = [c for c in head.columns if c not in ("source_file",)]
    lines = ["| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]
    for row in head.select(cols).iter_rows():
        lines.append("| " + " | ".join("" if v is None else str(v) for v in row) + " |")
    return "\n".join(lines)


def build_table(
    con: duckdb.DuckDBPyConnection,
    table: str,
    sql_file: str,
    params: dict[str, Any] | None = None,
    model: type[pa.DataFrameModel] | None = None,
) -> dict[str, Any]:
    """``create or replace table <table> as <sql_file>``; return what :func:`write_table` does, and the SQL file.

    The table name is a code constant (checked); values reach the SQL only as bound
    parameters, and the SQL reads only tables. With ``model``, the result is cast to the model's
    column order first. The model's macros (sql/model/macros.sql) are available.
    """
    install_macros(con)
    frame = query_pl(con, sql_text(sql_file), params or {})
    return write_table(con, table, frame, model, {"sql_file": f"sql/{sql_file}"})


def write_table(
    con: duckdb.DuckDBPyConnection,
    table: str,
    frame: pl.DataFrame,
    model: type[pa.DataFrameModel] | None = None,
    metadata: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """``create or replace table <table>`` from a frame, in one transaction.

    With ``model``, the frame is cast to the model's columns and order first. Returns
    ``table``, ``row_count``, ``preview`` (markdown), ``frame`` (the rows written, which the
    table's checks validate) and ``metadata``'s entries.
    """
    if model is not None:
        frame = conform(model, frame)
    con.execute("begin transaction")
    try:
        con.execute(f"create schema if not exists {checked_identifier(table).split('.')[0]}")
        con.register("_mart", frame.to_arrow())
        con.execute(f"create or replace table {checked_identifier(table)} as select * from _mart")  # noqa: S608 - checked identifier
        con.unregister("_mart")
        con.execute("commit")
    except BaseException:
        con.execute("rollback")
        raise
    return {"table": table, "row_count": frame.height, "preview": preview_md(frame, rows=8), "frame": frame, **(metadata or {})}


def load_frame(con: duckdb.DuckDBPyConnection, table: str, frame: pl.DataFrame | pyarrow.Table) -> str:
    """``frame`` as the temporary table ``table`` (``temp.<name>``), replacing it; returns ``table``.

    How values computed in Python (Monte Carlo draws, a test's given rows) enter the database: as a
    table the SQL reads by name, never as a relation handed to a query.
    """
    rows = frame.to_arrow() if isinstance(frame, pl.DataFrame) else frame
    con.register("_load_frame", rows)
    try:
        con.execute(f"create or replace temp table {checked_identifier(table).split('.', 1)[1]} as select * from _load_frame")  # noqa: S608
    finally:
        con.unregister("_load_frame")
    return table


def build_table_in_place(
    con: duckdb.DuckDBPyConnection,
    table: str,
    sql_file: str,
    model: type[pa.DataFrameModel],
    params: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """:func:`build_table` for a large mart, without its rows passing through Python: ``table`` is
    replaced, in one transaction, by one with ``model``'s columns and types, and the SQL's rows
    are inserted into it by name. Where the table exists the rows are first computed into a
    temporary table, so the SQL may read the table it replaces. Returns what :func:`build_table`
    does, but no frame (the rows stay in DuckDB)."""
    ident = checked_identifier(table)
    install_macros(con)
    rows_from = sql_text(sql_file)
    if table_exists(con, table):
        con.execute("create or replace temp table _built_in_place as " + rows_from, params or {})
        rows_from, params = "select * from _built_in_place", None
    con.execute("begin transaction")
    try:
        con.execute(f"drop table if exists {ident}")
        ensure_table(con, table, model)
        con.execute(f"insert into {ident} by name " + rows_from, params or {})
        con.execute("commit")
    except BaseException:
        con.execute("rollback")
        raise
    finally:
        con.execute("drop table if exists _built_in_place")
    [(rows,)] = con.execute(f"select count(*) from {ident}").fetchall()  # noqa: S608 - checked identifier
    head = query_pl(con, f"select * from {ident} limit 8")  # noqa: S608 - checked identifier
    return {"table": table, "row_count": rows, "preview": preview_md(head, rows=8), "sql_file": f"sql/{sql_file}"}


def ensure_table(con: duckdb.DuckDBPyConnection, table: str, model: type[pa.DataFrameModel]) -> None:
    """Create ``table`` (and its schema) with ``model``'s columns and no rows, unless it exists."""
    ident = checked_identifier(table)
    con.execute(f"create schema if not exists {ident.split('.')[0]}")
    con.register("_ensure_empty", empty_frame(model).to_arrow())
    try:
        con.execute(f"create table if not exists {ident} as select * from _ensure_empty")  # noqa: S608 - checked identifier
    finally:
        con.unregister("_ensure_empty")


def start_staged(con: duckdb.DuckDBPyConnection, table: str, model: type[pa.DataFrameModel]) -> None:
    """Replace ``table`` by an empty one with ``model``'s columns, for rows staged as they are read.

    Rows written before :func:`write_staged` are not in its transaction: this is for the run's
    working copy of the warehouse, which is discarded when the run fails.
    """
    ident = checked_identifier(table)
    con.execute(f"create schema if not exists {ident.split('.')[0]}")
    con.register("_empty_staged", empty_frame(model).to_arrow())
    con.execute(f"create or replace table {ident} as select * from _empty_staged")  # noqa: S608 - checked identifier
    con.unregister("_empty_staged")


def append_staged(con: duckdb.DuckDBPyConnection, table: str, frame: pl.DataFrame) -> None:
    """Append ``frame``'s rows (by column name) to a table begun by :func:`start_staged`."""
    if frame.height == 0:
        return
    con.register("_append_staged", frame.to_arrow())
    try:
        con.execute(f"insert into {checked_identifier(table)} by name select * from _append_staged")  # noqa: S608 - checked identifier
    finally:
        con.unregister("_append_staged")


def write_staged(con: duckdb.DuckDBPyConnection, staged: Sequence[StagedTable]) -> None:
    """Replace each table and its quarantine rows, all in one transaction.

    A table whose rows are already written (``in_table`` set) is left as it is; its quarantine
    rows are replaced all the same.
    """
    ensure_table(con, "quarantine.rejected_rows", RejectedRows)
    con.execute("begin transaction")
    try:
        for item in staged:
            table = checked_identifier(item.table)
            if item.in_table is None:
                con.execute(f"create schema if not exists {table.split('.')[0]}")
                con.register("_staged", item.frame.to_arrow())
                # The identifier is a code constant checked by checked_identifier(); identifiers cannot be bound.
                con.execute(f"create or replace table {table} as select * from _staged")  # noqa: S608
                con.unregister("_staged")
            con.execute("delete from quarantine.rejected_rows where table_name = ?", [item.table])
            if item.rejects.height:
                con.register("_rejects", item.rejects.to_arrow())
                con.execute("insert into quarantine.rejected_rows by name select * from _rejects")
                con.unregister("_rejects")
        con.execute("commit")
    except BaseException:
        con.execute("rollback")
        raise
