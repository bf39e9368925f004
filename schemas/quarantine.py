"""quarantine.rejected_rows: every input row that failed a check, with the reason."""

from __future__ import annotations

import datetime as dt

import pandera.polars as pa
from pandera.engines import polars_engine as pe

from schemas.base import Contract


class RejectedRows(Contract):
    """Grain: one failed check of one input row (a row failing two checks appears twice)."""

    #: The warehouse table(s) this model is the contract of (pipelines.warehouse.dictionary finds it so).
    __tables__ = ("quarantine.rejected_rows",)

    run_id: str = pa.Field(description="Dagster run that rejected the row.")
    table_name: str = pa.Field(description="Staging table the row was meant for, e.g. staging.device_pcf.")
    source_id: str = pa.Field(description="Joins staging.sources.")
    source_file: str = pa.Field(description="File the row came from, relative to sources/.")
    source_row: int = pa.Field(nullable=True, description="1-based line or record number in that file.")
    column_name: str = pa.Field(nullable=True, description="Column that failed; null when the whole row failed.")
    check_name: str = pa.Field(description="The check that failed (parse, not_nullable, in_range, ...).")
    value: str = pa.Field(nullable=True, description="The offending value as text, as read.")
    reason: str = pa.Field(description="Why the row was rejected, in words.")
    rejected_at: pe.DateTime(time_zone="UTC") = pa.Field(description="When (UTC).")  # type: ignore[valid-type]


REJECT_COLUMNS: tuple[str, ...] = tuple(RejectedRows.to_schema().columns)
_ = dt  # keep the datetime import for readers of the annotation
