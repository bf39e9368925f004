"""Shared machinery of the staging layer: parse each manifest file, validate, write, quarantine.

Every staging asset follows the same path (the Dagster part in pipelines/defs/staging.py):

1. pick the manifest entries whose ``table`` is the asset's table;
2. verify each file's sha256, then parse it with the parser registered for its ``kind``;
3. conform the rows to the table's pandera model and split valid rows from rejects;
4. in one transaction, replace the table with the valid rows and replace the table's
   quarantine rows with the rejects (so re-running gives the same warehouse).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandera.polars as pa
import polars as pl

from pipelines.errors import SourceParseError
from pipelines.ingest.manifest import SourceEntry
from pipelines.ingest.quarantine import Reject, rejects_frame, split_valid
from schemas.meta import conform, empty_frame
from schemas.quarantine import RejectedRows


@dataclass
class Parsed:
    """What a parser returns: typed rows (with ``source_row``) and the rows it could not read."""

    frame: pl.DataFrame
    rejects: list[Reject] = field(default_factory=list)


Parser = Callable[[Path, Mapping[str, Any]], Parsed]


def parse_entry(entry: SourceEntry, parser: Parser) -> Parsed:
    """Verify the file's hash, parse it, and stamp every row with its source."""
    path = entry.verified_file()
    parsed = parser(path, entry.options)
    frame = parsed.frame.with_columns(
        pl.lit(entry.id).alias("source_id"), pl.lit(entry.path).alias("source_file")
    )
    return Parsed(frame=frame, rejects=parsed.rejects)


@dataclass
class Staged:
    """The outcome of staging one table: valid rows and stamped rejects.

    Rows staged while they were read (a streamed log) are already in ``table``: then
    ``in_table`` is their count and ``frame`` only the first few of them (a preview);
    the writer leaves the table as it is and writes the rejects.
    """

    table: str
    frame: pl.DataFrame
    rejects: pl.DataFrame
    per_source: list[dict[str, Any]]
    in_table: int | None = None

    @property
    def row_count(self) -> int:
        """Valid rows staged: in the table, else in ``frame``."""
        return self.frame.height if self.in_table is None else self.in_table


def validate_parsed(
    table: str,
    model: type[pa.DataFrameModel],
    parsed: Sequence[tuple[SourceEntry, Parsed]],
    *,
    run_id: str,
) -> Staged:
    """Conform and validate every parsed file; collect valid rows and rejects."""
    now = dt.datetime.now(dt.UTC)
    frames: list[pl.DataFrame] = []
    rejects: list[pl.DataFrame] = []
    per_source: list[dict[str, Any]] = []
    for entry, result in parsed:
        try:
            frame = conform(model, result.frame)
        except (pl.exceptions.PolarsError, KeyError) as exc:
            raise SourceParseError(entry.file, None, f"rows do not fit {table}: {exc}") from exc
        valid, row_rejects = split_valid(model, frame, file=str(entry.file))
        all_rejects = list(result.rejects) + row_rejects
        frames.append(valid)
        rejects.append(
            rejects_frame(all_rejects, table=table, source_id=entry.id, source_file=entry.path, run_id=run_id, at=now)
        )
        per_source.append({"source_id": entry.id, "rows": valid.height, "rejected": len({(r.source_row, r.column_name) for r in all_rejects})})
    frame = pl.concat(frames, how="vertical") if frames else empty_frame(model)
    reject_frame = pl.concat(rejects, how="vertical") if rejects else empty_frame(RejectedRows)
    return Staged(table=table, frame=frame, rejects=reject_frame, per_source=per_source)
