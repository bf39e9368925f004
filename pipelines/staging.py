"""Shared machinery of the staging layer: parse each manifest file, validate, write, quarantine.

Every staging asset follows the same path:

1. pick the manifest entries whose ``table`` is the asset's table;
2. verify each file's sha256, then parse it with the parser registered for its ``kind``;
3. conform the rows to the table's pandera model and split valid rows from rejects;
4. in one transaction, replace the table with the valid rows and replace the table's
   quarantine rows with the rejects (so re-running gives the same warehouse).
"""

from __future__ import annotations

import datetime as dt
import re
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import dagster as dg
import duckdb
import pandera.polars as pa
import polars as pl

from pipelines.errors import ManifestError, SourceParseError
from pipelines.manifest import SourceEntry, entries_for
from pipelines.quarantine import Reject, rejects_frame, split_valid
from pipelines.warehouse import Warehouse
from schemas.meta import conform, empty_frame
from schemas.quarantine import RejectedRows

_TABLE = re.compile(r"^[a-z_]+\.[a-z_]+$")
SOURCES_KEY = dg.AssetKey(["staging", "sources"])


@dataclass
class Parsed:
    """What a parser returns: typed rows (with ``source_row``) and the rows it could not read."""

    frame: pl.DataFrame
    rejects: list[Reject] = field(default_factory=list)


Parser = Callable[[Path, Mapping[str, Any]], Parsed]


def key_of(table: str) -> dg.AssetKey:
    """``staging.device_pcf`` -> AssetKey(["staging", "device_pcf"])."""
    return dg.AssetKey(table.split("."))


def checked_identifier(table: str) -> str:
    if not _TABLE.match(table):
        raise ValueError(f"not a schema-qualified table name: {table!r}")
    return table


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
    """The outcome of staging one table: valid rows and stamped rejects."""

    table: str
    frame: pl.DataFrame
    rejects: pl.DataFrame
    per_source: list[dict[str, Any]]


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


def write_staged(con: duckdb.DuckDBPyConnection, staged: Sequence[Staged]) -> None:
    """Replace each table and its quarantine rows, all in one transaction."""
    con.execute("create schema if not exists quarantine")
    con.register("_empty_rejects", empty_frame(RejectedRows).to_arrow())
    con.execute("create table if not exists quarantine.rejected_rows as select * from _empty_rejects")
    con.unregister("_empty_rejects")
    con.execute("begin transaction")
    try:
        for item in staged:
            table = checked_identifier(item.table)
            con.execute(f"create schema if not exists {table.split('.')[0]}")
            con.register("_staged", item.frame.to_arrow())
            # The identifier is a code constant checked by checked_identifier(); identifiers cannot be bound.
            con.execute(f"create or replace table {table} as select * from _staged")  # noqa: S608
            con.unregister("_staged")
            con.execute("delete from quarantine.rejected_rows where table_name = ?", [item.table])
            if item.rejects.height:
                con.register("_rejects", item.rejects.to_arrow())
                con.execute("insert into quarantine.rejected_rows by name select * from _rejects")
                con.unregister("_rejects")
        con.execute("commit")
    except BaseException:
        con.execute("rollback")
        raise


def preview_md(frame: pl.DataFrame, rows: int = 5) -> str:
    """A small markdown table for the Dagster UI."""
    head = frame.head(rows)
    cols = [c for c in head.columns if c not in ("source_file",)]
    lines = ["| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]
    for row in head.select(cols).iter_rows():
        lines.append("| " + " | ".join("" if v is None else str(v) for v in row) + " |")
    return "\n".join(lines)


def result_metadata(staged: Staged) -> dict[str, Any]:
    """Row count, rejects, per-source counts and a preview: readable in the Dagster UI."""
    sources = "\n".join(
        ["| source_id | rows | rejected rows |", "|---|---|---|"]
        + [f"| {s['source_id']} | {s['rows']} | {s['rejected']} |" for s in staged.per_source]
    )
    return {
        "dagster/row_count": staged.frame.height,
        "rejected_checks": staged.rejects.height,
        "sources": dg.MetadataValue.md(sources),
        "preview": dg.MetadataValue.md(preview_md(staged.frame)),
    }


def parse_all(
    context: dg.AssetExecutionContext, table: str, parsers: Mapping[str, Parser]
) -> list[tuple[SourceEntry, Parsed]]:
    """Parse every manifest entry feeding ``table``, logging progress file by file."""
    entries = entries_for(table)
    out: list[tuple[SourceEntry, Parsed]] = []
    for i, entry in enumerate(entries, start=1):
        parser = parsers.get(entry.kind)
        if parser is None:
            raise ManifestError(
                entry.manifest_file, f"source {entry.id!r}: kind {entry.kind!r} has no parser for {table} (known: {sorted(parsers)})"
            )
        started = time.perf_counter()
        result = parse_entry(entry, parser)
        context.log.info(
            f"[{i}/{len(entries)}] {entry.path}: {result.frame.height} rows, "
            f"{len(result.rejects)} unreadable cells, {time.perf_counter() - started:.2f}s"
        )
        out.append((entry, result))
    return out


def stage_from_manifest(
    context: dg.AssetExecutionContext,
    warehouse: Warehouse,
    table: str,
    model: type[pa.DataFrameModel],
    parsers: Mapping[str, Parser],
    finish: Callable[[pl.DataFrame], pl.DataFrame] | None = None,
) -> dg.MaterializeResult:
    """Stage one table from all its manifest files; the body of most staging assets.

    ``finish`` runs on the combined valid rows before writing (e.g. to sort or de-duplicate).
    """
    staged = validate_parsed(table, model, parse_all(context, table, parsers), run_id=context.run_id)
    if finish is not None:
        staged.frame = finish(staged.frame)
    write_staged(warehouse.connection(), [staged])
    return dg.MaterializeResult(metadata=result_metadata(staged))
