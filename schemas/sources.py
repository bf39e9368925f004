"""staging.sources: the manifest, one row per shipped source file."""

from __future__ import annotations

import datetime as dt

import pandera.polars as pa

from schemas.base import Contract
from schemas.statuses import STATUS_TEXT, STATUSES


class Sources(Contract):
    """Grain: one shipped source file. Every staged row's source_id joins this table."""

    #: The warehouse table(s) this model is the contract of (pipelines.warehouse.dictionary finds it so).
    __tables__ = ("staging.sources", "marts.sources")

    source_id: str = pa.Field(unique=True, description="Stable id used by every staged row.")
    title: str = pa.Field(description="What the file is.")
    url: str = pa.Field(str_startswith="http", description="Where it came from (origin URL).")
    license: str = pa.Field(description="Licence of the data (SPDX-style id or name).")
    attribution: str = pa.Field(nullable=True, description="Attribution text the licence asks for.")
    retrieved_on: dt.date = pa.Field(description="Date the file was retrieved.")
    sha256: str = pa.Field(str_matches=r"^[0-9a-f]{64}$", description="sha256 of the file as shipped; verified at every load.")
    bytes: int = pa.Field(ge=0, description="File size in bytes.")
    path: str = pa.Field(description="Path below sources/.")
    kind: str = pa.Field(description="Parser that reads it (format).")
    table_name: str = pa.Field(description="Staging table it feeds.")
    status: str = pa.Field(isin=STATUSES, description=STATUS_TEXT + ".")
    notes: str = pa.Field(nullable=True, description="Caveats, e.g. 'synthesised from the paper's summary'.")
    manifest_file: str = pa.Field(description="Manifest file that registers it.")
