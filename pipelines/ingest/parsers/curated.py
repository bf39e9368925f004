"""Hand-curated CSV files (device specs, manufacturer reports, literature values).

The file's header must name the table's columns (minus the provenance columns); each
numeric cell is cast and a cell that does not read rejects its row with the reason.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pandera.polars as pa
import polars as pl

from pipelines.errors import SourceParseError
from pipelines.ingest.parsers.common import checked_casts, read_text_csv, require_columns
from pipelines.ingest.staging import Parsed, Parser
from schemas.meta import columns, polars_schema

_PROVENANCE = ("source_id", "source_file", "source_row")


def curated_parser(model: type[pa.DataFrameModel], *, other_table_prefix: str = "") -> Parser:
    """A parser for a curated CSV whose columns are exactly the model's own columns (and, with
    ``other_table_prefix``, columns so prefixed, another table's: a device's footprint beside its specs)."""
    schema = {name: dtype for name, dtype in polars_schema(model).items() if name not in _PROVENANCE}
    required = [name for name, col in columns(model).items() if name not in _PROVENANCE and not col.nullable]

    def parse(path: Path, options: Mapping[str, Any]) -> Parsed:
        frame = read_text_csv(path)
        if other_table_prefix:
            frame = frame.select([c for c in frame.columns if not c.startswith(other_table_prefix)])
        require_columns(path, frame, required)
        extra = [c for c in frame.columns if c not in schema and c != "source_row"]
        if extra:
            raise SourceParseError(path, 1, f"unknown column(s) {extra}; {model.__name__} has {list(schema)}")
        casts = {name: dtype for name, dtype in schema.items() if name in frame.columns and dtype != pl.String}
        typed, rejects = checked_casts(frame, casts)
        return Parsed(frame=typed, rejects=rejects)

    parse.__doc__ = f"Curated CSV with the columns of {model.__name__}."
    return parse
