"""Columns shared by every staging table: where each row came from."""

from __future__ import annotations

import pandera.polars as pa
import polars as pl

from schemas.statuses import EXPLAINED_STATUSES


class Contract(pa.DataFrameModel):
    """A warehouse table's contract: strict, so a column it does not name fails validation."""

    class Config:
        strict = True


class Provenance(Contract):
    """Mixin for staging tables: the source id, file and line of every row."""

    source_id: str = pa.Field(description="Joins staging.sources.source_id: the shipped file this row came from.")
    source_file: str = pa.Field(description="Path of that file, relative to sources/.")
    source_row: int = pa.Field(
        nullable=True,
        ge=1,
        description="1-based line (CSV/text) or record number (JSON) in the file; null for derived rows.",
    )


def floats_are_finite(data: pa.PolarsData) -> pl.LazyFrame:
    """Row check: every Float64 column of the row is null or finite (no NaN, no infinity)."""
    floats = [name for name, dtype in data.lazyframe.collect_schema().items() if dtype == pl.Float64]
    return data.lazyframe.select(pl.all_horizontal([pl.col(c).is_finite().fill_null(True) for c in floats]).alias("numbers_are_finite"))


class FiniteProvenance(Provenance):
    """Mixin for strict staging tables whose numbers are all finite (:func:`floats_are_finite`)."""

    @pa.dataframe_check(name="numbers_are_finite", description="no number is NaN or infinite")
    @classmethod
    def numbers_are_finite(cls, data: pa.PolarsData) -> pl.LazyFrame:
        return floats_are_finite(data)


def range_contains_value(data: pa.PolarsData, value: str, low: str, high: str) -> pl.LazyFrame:
    """``low <= value <= high`` wherever a bound is given."""
    low_ok = pl.col(low).is_null() | (pl.col(low) <= pl.col(value))
    high_ok = pl.col(high).is_null() | (pl.col(value) <= pl.col(high))
    return data.lazyframe.select(low_ok & high_ok)


def weak_rows_explained(data: pa.PolarsData) -> pl.LazyFrame:
    """A row whose status is derived, calibrated or assumed has notes (the arithmetic, the target or the assumption)."""
    weak = pl.col("status").is_in(EXPLAINED_STATUSES).fill_null(False)
    return data.lazyframe.select(~weak | pl.col("notes").is_not_null())
