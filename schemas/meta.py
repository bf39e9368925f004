"""Helpers that read a pandera model: its columns, polars types, empty frames and casts."""

from __future__ import annotations

from typing import Any

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
