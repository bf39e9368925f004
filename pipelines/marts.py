"""Building a mart: run its ``.sql`` file (bound parameters) into a table, in one transaction."""

from __future__ import annotations

from typing import Any

import dagster as dg
import duckdb
import pandera.polars as pa
import polars as pl

from pipelines.model import install_macros
from pipelines.paths import sql_text
from pipelines.staging import checked_identifier, preview_md
from pipelines.warehouse import query_pl


def build_table(
    con: duckdb.DuckDBPyConnection,
    table: str,
    sql_file: str,
    params: dict[str, Any] | None = None,
    model: type[pa.DataFrameModel] | None = None,
    relations: dict[str, pl.DataFrame] | None = None,
) -> dg.MaterializeResult:
    """``create or replace table <table> as <sql_file>``; return row count and a preview.

    The table name is a code constant (checked); values reach the SQL only as bound
    parameters. With ``model``, the result is cast to the model's column order first. The
    model's macros (sql/model/macros.sql) are available; ``relations`` are frames the SQL
    reads by name (for example the model's output as ``evaluated``).
    """
    install_macros(con)
    for name, relation in (relations or {}).items():
        con.register(name, relation.to_arrow())
    try:
        frame = query_pl(con, sql_text(sql_file), params or {})
    finally:
        for name in relations or {}:
            con.unregister(name)
    result = write_table(con, table, frame, model)
    return dg.MaterializeResult(metadata={**result.metadata, "sql": dg.MetadataValue.path(f"sql/{sql_file}")})


def write_table(
    con: duckdb.DuckDBPyConnection,
    table: str,
    frame: pl.DataFrame,
    model: type[pa.DataFrameModel] | None = None,
    metadata: dict[str, Any] | None = None,
) -> dg.MaterializeResult:
    """``create or replace table <table>`` from a frame, in one transaction; row count and preview.

    With ``model``, the frame is cast to the model's columns and order first.
    """
    if model is not None:
        from schemas.meta import conform

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
    return dg.MaterializeResult(
        asset_key=dg.AssetKey(table.split(".")),
        metadata={
            "dagster/row_count": frame.height,
            "preview": dg.MetadataValue.md(preview_md(frame, rows=8)),
            **(metadata or {}),
        },
    )
