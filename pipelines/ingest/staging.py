"""Shared machinery of the staging layer: parse each manifest file, validate, write, quarantine.

Every staging asset follows the same path (the Dagster part in pipelines/lib/staging.py):

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
    return stamped(parser(path, entry.options), entry.id, entry.path)


def stamped(parsed: Parsed, source_id: str, source_file: str) -> Parsed:
    """``parsed`` with every row stamped with its source (``source_file``: the path below sources/)."""
    frame = parsed.frame.with_columns(pl.lit(source_id).alias("source_id"), pl.lit(source_file).alias("source_file"))
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


def checked_rows(table: str, model: type[pa.DataFrameModel], result: Parsed, *, file: Path | str) -> tuple[pl.DataFrame, list[Reject]]:
    """One parsed file's rows conformed to ``model`` and validated: the valid rows, and every
    reject (the parser's, then the model's). The build stages each file with it, and
    ``register`` checks a new file with it (:mod:`pipelines.ingest.precheck`) before writing."""
    try:
        frame = conform(model, result.frame)
    except (pl.exceptions.PolarsError, KeyError) as exc:
        raise SourceParseError(file, None, f"rows do not fit {table}: {exc}") from exc
    valid, row_rejects = split_valid(model, frame, file=str(file))
    return valid, list(result.rejects) + row_rejects


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
        valid, all_rejects = checked_rows(table, model, result, file=entry.file)
        frames.append(valid)
        rejects.append(
            rejects_frame(all_rejects, table=table, source_id=entry.id, source_file=entry.path, run_id=run_id, at=now)
        )
        per_source.append({"source_id": entry.id, "rows": valid.height, "rejected": len({(r.source_row, r.column_name) for r in all_rejects})})
    frame = pl.concat(frames, how="vertical") if frames else empty_frame(model)
    reject_frame = pl.concat(rejects, how="vertical") if rejects else empty_frame(RejectedRows)
    return Staged(table=table, frame=frame, rejects=reject_frame, per_source=per_source)
