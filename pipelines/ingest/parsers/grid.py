"""Helpers shared by the grid parsers (ember, neso, uk_carbon_intensity, electricitymaps,
eia930): timestamp casts, the rows every grid parser emits, and reading a grid CSV."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import polars as pl

from pipelines.errors import SourceParseError
from pipelines.ingest.parsers.common import read_text_csv
from schemas.grid_intensity import ROW_SCHEMA, period_end_expr


def utc_timestamp(formats: Sequence[str], example: str) -> Callable[[pl.Expr], pl.Expr]:
    """A cast for :func:`pipelines.ingest.parsers.common.checked_casts`: text -> UTC datetime.

    Formats with ``%z`` are converted from their offset to UTC; formats without an offset are
    read as UTC wall-clock time. The first format that reads a cell wins.
    """

    def cast(expr: pl.Expr) -> pl.Expr:
        text = expr.str.strip_chars()
        parsed = []
        for fmt in formats:
            value = text.str.to_datetime(fmt, strict=False, time_unit="us")
            has_offset = "%z" in fmt or "%:z" in fmt
            parsed.append(value.dt.convert_time_zone("UTC") if has_offset else value.dt.replace_time_zone("UTC"))
        return pl.coalesce(parsed)

    cast.__doc__ = f"a UTC timestamp like {example!r}"
    return cast


def grid_rows(frame: pl.DataFrame, **constants: Any) -> pl.DataFrame:
    """The parser's output: ``ROW_SCHEMA`` columns from ``frame`` and ``constants``.

    Columns neither in ``frame`` nor in ``constants`` are null; ``period_end`` defaults to
    ``period_start`` plus one ``resolution`` step.
    """
    exprs = []
    for name, dtype in ROW_SCHEMA.items():
        if name in constants:
            exprs.append(pl.lit(constants[name], dtype=dtype).alias(name))
        elif name in frame.columns:
            exprs.append(pl.col(name).cast(dtype).alias(name))
        elif name != "period_end":
            exprs.append(pl.lit(None, dtype=dtype).alias(name))
    out = frame.select(exprs)
    if "period_end" not in out.columns:
        out = out.with_columns(period_end_expr(pl.col("period_start"), pl.col("resolution")).alias("period_end"))
    return out.select(list(ROW_SCHEMA))


def empty_rows() -> pl.DataFrame:
    """A zero-row parser output."""
    return pl.DataFrame(schema=ROW_SCHEMA)


def read_grid_csv(path: Path) -> pl.DataFrame:
    """:func:`pipelines.ingest.parsers.common.read_text_csv`, with every polars failure as SourceParseError.

    (A header that itself names a ``source_row`` column collides with the line-number column
    read_text_csv adds; that is a malformed file, not a crash.)
    """
    try:
        return read_text_csv(path)
    except pl.exceptions.PolarsError as exc:
        raise SourceParseError(path, 1, f"not a readable CSV: {str(exc).splitlines()[0] if str(exc) else type(exc).__name__}") from exc
