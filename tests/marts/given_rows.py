"""Given rows -> expected rows, as dbt's unit tests: a mart's SQL file run over a few rows typed in
the test, in an in-memory DuckDB that holds nothing else (no build, no shipped data)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import duckdb
import pyarrow as pa

from pipelines.identifiers import checked_identifier
from pipelines.model.methods import CLAIM_PARAMS, reference_tables
from pipelines.paths import sql_text
from pipelines.warehouse.tables import install_macros


def run_mart(table: str, given: Mapping[str, Sequence[Mapping[str, Any]]], params: Mapping[str, Any] | None = None, *,
             method_tables: Sequence[str] = ()) -> list[dict[str, Any]]:
    """``sql/<schema>/<table>.sql`` over the ``given`` tables (name -> rows) and, for ``method_tables``
    (``core.patterns``, ...), the shipped method rows; its rows as dicts, in the SQL's own order."""
    con = duckdb.connect()
    con.execute("set TimeZone = 'UTC'")  # as the warehouse's connections
    install_macros(con)
    references = reference_tables()
    tables = {**{name: references[name] for name in method_tables}, **{name: pa.Table.from_pylist(list(rows)) for name, rows in given.items()}}
    for name, rows in tables.items():
        con.execute(f"create schema if not exists {checked_identifier(name).split('.')[0]}")
        con.register("_given", rows)
        con.execute(f"create table {checked_identifier(name)} as select * from _given")  # noqa: S608 - a checked name
        con.unregister("_given")
    cursor = con.execute(sql_text(f"{table.replace('.', '/')}.sql"), dict(params or {}))
    names = [d[0] for d in cursor.description]
    return [dict(zip(names, row, strict=True)) for row in cursor.fetchall()]


#: Xue et al.'s claim as the registry holds it (sources/curated/claims.csv; the columns sql/core/claim.sql reads).
XUE = {"claim_id": "xue2025_reduction_4_8x", "quantity": "reduction_factor", "published_low": 4.0, "published_high": 8.0}


def claim_rows(claims: Sequence[Mapping[str, Any]] = (XUE,)) -> list[dict[str, Any]]:
    """core.claim over the given rows of staging.claims: sql/core/claim.sql with the parameters the pipeline binds."""
    return run_mart("core.claim", {"staging.claims": claims}, CLAIM_PARAMS)
