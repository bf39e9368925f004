"""Small SQL helpers of the warehouse layer: bound-parameter queries (checked identifiers are in
:mod:`pipelines.identifiers`)."""

from __future__ import annotations

import duckdb
import polars as pl

from pipelines.identifiers import checked_identifier


def query_pl(con: duckdb.DuckDBPyConnection, sql: str, params: dict | list | None = None) -> pl.DataFrame:
    """Run a query with bound parameters and return a polars frame."""
    table = con.sql(sql, params=params).to_arrow_table()
    return pl.from_arrow(table)  # type: ignore[return-value]


def select_only(sql: str) -> str:
    """``sql`` if every statement in it is a query (SELECT); a ValueError otherwise.

    Asset checks run their SQL through this: a check reads the warehouse and never changes it.
    """
    kinds = [statement.type for statement in duckdb.extract_statements(sql)]
    writes = [kind.name for kind in kinds if kind != duckdb.StatementType.SELECT]
    if not kinds or writes:
        raise ValueError(f"only a query (SELECT) may run here, not {', '.join(writes) or 'an empty statement'}: {sql.strip()[:80]!r}")
    return sql


def read_pl(con: duckdb.DuckDBPyConnection, sql: str, params: dict | list | None = None) -> pl.DataFrame:
    """:func:`query_pl` for a query only (:func:`select_only`)."""
    return query_pl(con, select_only(sql), params)


def table_exists(con: duckdb.DuckDBPyConnection, table: str) -> bool:
    """Whether ``schema.table`` exists in the connection's database."""
    schema, name = checked_identifier(table).split(".")
    found = con.execute(
        "select count(*) from information_schema.tables where table_schema = ? and table_name = ?", [schema, name]
    ).fetchall()
    return bool(found[0][0])
