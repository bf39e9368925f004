"""Columns shared by every staging table: where each row came from."""

from __future__ import annotations

import pandera.polars as pa


class Provenance(pa.DataFrameModel):
    """Mixin for staging tables: the source id, file and line of every row."""

    source_id: str = pa.Field(description="Joins staging.sources.source_id: the shipped file this row came from.")
    source_file: str = pa.Field(description="Path of that file, relative to sources/.")
    source_row: int = pa.Field(
        nullable=True,
        ge=1,
        description="1-based line (CSV/text) or record number (JSON) in the file; null for derived rows.",
    )
