"""Dagster metadata from a pandera model: the column schema the UI's Columns tab shows."""

from __future__ import annotations

from typing import Any

import dagster as dg
import pandera.polars as pa

from schemas.meta import columns


def _constraint_text(column: Any) -> str:
    checks = [str(check.name if hasattr(check, "name") else check) for check in column.checks]
    stats = [f"{c.name}={c.statistics}" if getattr(c, "statistics", None) else str(c.name) for c in column.checks]
    parts = ([] if column.nullable else ["not null"]) + (stats or checks)
    if column.unique:
        parts.append("unique")
    return ", ".join(parts)


def table_schema(model: type[pa.DataFrameModel]) -> dg.TableSchema:
    """Dagster column schema (shown in the UI's Columns tab) from the pandera model."""
    out = []
    for name, column in columns(model).items():
        out.append(
            dg.TableColumn(
                name=name,
                type=str(column.dtype),
                description=column.description or "",
                constraints=dg.TableColumnConstraints(nullable=column.nullable, unique=column.unique, other=[_constraint_text(column)] if column.checks else []),
            )
        )
    return dg.TableSchema(columns=out)


def column_metadata(model: type[pa.DataFrameModel]) -> dict[str, Any]:
    """Definition-time asset metadata: column schema plus the model's docstring."""
    return {"dagster/column_schema": table_schema(model), "pandera_model": f"{model.__module__}.{model.__name__}"}
