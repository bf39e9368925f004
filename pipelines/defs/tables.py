"""The warehouse's table writers (pipelines/warehouse/tables.py) as Dagster materialisations."""

from __future__ import annotations

from typing import Any

import dagster as dg
import duckdb
import pandera.polars as pa
import polars as pl

from pipelines.warehouse import tables

_OWN = ("table", "row_count", "preview", "sql_file")


def as_metadata(written: dict[str, Any]) -> dict[str, Any]:
    """Row count and preview (and the SQL file, for a mart built from one) as Dagster metadata."""
    metadata = {
        "dagster/row_count": written["row_count"],
        "preview": dg.MetadataValue.md(written["preview"]),
        **{k: v for k, v in written.items() if k not in _OWN},
    }
    if "sql_file" in written:
        metadata["sql"] = dg.MetadataValue.path(written["sql_file"])
    return metadata


def build_table(
    con: duckdb.DuckDBPyConnection,
    table: str,
    sql_file: str,
    params: dict[str, Any] | None = None,
    model: type[pa.DataFrameModel] | None = None,
    relations: dict[str, pl.DataFrame] | None = None,
) -> dg.MaterializeResult:
    """:func:`pipelines.warehouse.tables.build_table`, as the asset's materialisation."""
    written = tables.build_table(con, table, sql_file, params, model, relations)
    return dg.MaterializeResult(metadata=as_metadata(written))


def write_table(
    con: duckdb.DuckDBPyConnection,
    table: str,
    frame: pl.DataFrame,
    model: type[pa.DataFrameModel] | None = None,
    metadata: dict[str, Any] | None = None,
) -> dg.MaterializeResult:
    """:func:`pipelines.warehouse.tables.write_table`, as the materialisation of ``table``'s asset."""
    written = tables.write_table(con, table, frame, model, metadata)
    return dg.MaterializeResult(asset_key=dg.AssetKey(table.split(".")), metadata=as_metadata(written))
