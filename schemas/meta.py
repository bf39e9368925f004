"""Helpers that turn a pandera model into Dagster metadata, casts and row-level verdicts."""

from __future__ import annotations

from typing import Any

import dagster as dg
import pandera.polars as pa
import polars as pl


def columns(model: type[pa.DataFrameModel]) -> dict[str, Any]:
    """The model's columns, in declaration order (base-class columns last)."""
    cols = model.to_schema().columns
    own = [name for name in cols if name not in ("source_id", "source_file", "source_row")]
    tail = [name for name in ("source_id", "source_file", "source_row") if name in cols]
    return {name: cols[name] for name in own + tail}


def polars_schema(model: type[pa.DataFrameModel]) -> dict[str, pl.DataType]:
    """Column name -> polars dtype, in table order."""
    return {name: col.dtype.type for name, col in columns(model).items()}


def empty_frame(model: type[pa.DataFrameModel]) -> pl.DataFrame:
    """A zero-row frame with the model's columns and types."""
    return pl.DataFrame(schema=polars_schema(model))


def conform(model: type[pa.DataFrameModel], frame: pl.DataFrame) -> pl.DataFrame:
    """Select the model's columns in table order and cast them to its types.

    Missing nullable columns are added as nulls, so a parser only fills what its format has.
    """
    schema = polars_schema(model)
    cols = columns(model)
    exprs = []
    for name, dtype in schema.items():
        if name in frame.columns:
            exprs.append(pl.col(name).cast(dtype, strict=True))
        elif cols[name].nullable:
            exprs.append(pl.lit(None, dtype=dtype).alias(name))
        else:
            raise KeyError(f"frame lacks required column {name!r} of {model.__name__}")
    return frame.select(exprs)


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
