"""Staging inside Dagster: parse each manifest file with progress in the run log, then
validate (pipelines/ingest/staging.py) and write (pipelines/warehouse/tables.py), and check the
rows written (pipelines/lib/checks.py)."""


import inspect
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import dagster as dg
import pandera.polars as pa
import polars as pl

from pipelines.errors import ManifestError
from pipelines.ingest.manifest import SourceEntry, entries_for
from pipelines.ingest.parsers.registry import ALSO_STAGES
from pipelines.ingest.staging import Parsed, Parser, Staged, parse_entry, validate_parsed
from pipelines.lib.checks import Reader, check_results, staging_checks
from pipelines.lib.keys import SOURCES_KEY, key_of
from pipelines.lib.metadata import column_metadata
from pipelines.lib.progress import BatchedLog
from pipelines.lib.resources import Warehouse
from pipelines.lib.tables import with_metadata
from pipelines.warehouse.tables import preview_md, write_staged


def result_metadata(staged: Staged) -> dict[str, Any]:
    """Row count, rejects, per-source counts and a preview: readable in the Dagster UI."""
    sources = "\n".join(
        ["| source_id | rows | rejected rows |", "|---|---|---|"]
        + [f"| {s['source_id']} | {s['rows']} | {s['rejected']} |" for s in staged.per_source]
    )
    return {
        "dagster/row_count": staged.row_count,
        "rejected_checks": staged.rejects.height,
        "sources": dg.MetadataValue.md(sources),
        "preview": dg.MetadataValue.md(preview_md(staged.frame)),
    }


def staged_result(warehouse: Reader, staged: Staged, metadata: dict[str, Any], *, keyed: bool = False) -> dg.MaterializeResult:
    """The materialisation of a table :func:`~pipelines.warehouse.tables.write_staged` wrote:
    ``metadata`` and the table's checks on the rows written (``keyed``: naming the table's asset,
    for multi-assets). Rows staged as they were read are checked in the table."""
    return dg.MaterializeResult(
        asset_key=key_of(staged.table) if keyed else None, metadata=metadata,
        check_results=check_results(warehouse, staged.table, staged.frame if staged.in_table is None else None),
    )


def staged_entries(table: str, parsers: Mapping[str, Parser]) -> list[SourceEntry]:
    """The manifest entries ``table`` stages: its own, then those of each table it also stages whose kind
    ``parsers`` reads (staging.device_pcf: the device specs files' footprint columns)."""
    return [*entries_for(table), *(entry for other in ALSO_STAGES.get(table, ()) for entry in entries_for(other)
                                   if entry.kind in parsers)]


def parse_all(
    context: dg.AssetExecutionContext, table: str, parsers: Mapping[str, Parser]
) -> list[tuple[SourceEntry, Parsed]]:
    """Parse every manifest entry feeding ``table`` (and the entries of the tables it also stages:
    :data:`~pipelines.ingest.parsers.registry.ALSO_STAGES`), logging progress file by file."""
    entries = staged_entries(table, parsers)
    out: list[tuple[SourceEntry, Parsed]] = []
    with BatchedLog(context.log.info) as log:
        for i, entry in enumerate(entries, start=1):
            out.append((entry, _parse_logged(entry, parsers, table, f"[{i}/{len(entries)}]", log)))
    return out


def _parse_logged(entry: SourceEntry, parsers: Mapping[str, Parser], table: str, position: str, log: Callable[[str], None]) -> Parsed:
    """One manifest entry parsed with its parser for ``table``, and a progress line."""
    parser = parsers.get(entry.kind)
    if parser is None:
        raise ManifestError(
            entry.manifest_file, f"source {entry.id!r}: kind {entry.kind!r} has no parser for {table} (known: {sorted(parsers)})"
        )
    started = time.perf_counter()
    result = parse_entry(entry, parser)
    log(f"{position} {entry.path}: {result.frame.height} rows, {len(result.rejects)} unreadable cells, "
        f"{time.perf_counter() - started:.2f}s")
    return result


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
    The result carries the table's checks, evaluated on the rows written.
    """
    staged = validate_parsed(table, model, parse_all(context, table, parsers), run_id=context.run_id)
    if finish is not None:
        staged.frame = finish(staged.frame)
    write_staged(warehouse.connection(), [staged])
    return staged_result(warehouse, staged, result_metadata(staged))


@dataclass(frozen=True)
class StagingTable:
    """One staging table staged from its manifest files: the asset and its blocking checks.

    Made by :func:`staging_table`, which declares the table once: its pandera model (column
    metadata and the checks), its parsers (one per manifest ``kind``), its group and its
    description. ``checks`` are the specs of the checks the asset evaluates as it writes the table.
    """

    table: str
    model: type[pa.DataFrameModel]
    parsers: Mapping[str, Parser]
    asset: dg.AssetsDefinition
    checks: list[dg.AssetCheckSpec]


def staging_table(
    table: str,
    model: type[pa.DataFrameModel],
    parsers: Mapping[str, Parser],
    *,
    group: str,
    description: str,
    finish: Callable[[pl.DataFrame], pl.DataFrame] | None = None,
    summarize: Callable[[pl.DataFrame], Mapping[str, Any]] | None = None,
) -> StagingTable:
    """A staging asset (deps: ``staging.sources``) that stages ``table`` with ``parsers``.

    ``finish`` runs on the combined valid rows before writing (e.g. a stable sort);
    ``summarize`` adds materialisation metadata from the written rows. The table's blocking
    checks (:func:`~pipelines.lib.checks.staging_checks`) run in the asset's step.
    """
    checks = staging_checks(table, model)

    @dg.asset(
        key=key_of(table),
        group_name=group,
        kinds={"duckdb", "polars"},
        deps=[SOURCES_KEY],
        metadata=column_metadata(model),
        description=inspect.cleandoc(description),
        check_specs=checks,
    )
    def _stage(context: dg.AssetExecutionContext, warehouse: Warehouse) -> dg.MaterializeResult:
        written: list[pl.DataFrame] = []

        def keep(frame: pl.DataFrame) -> pl.DataFrame:
            out = finish(frame) if finish is not None else frame
            written.append(out)
            return out

        result = stage_from_manifest(context, warehouse, table, model, parsers, finish=keep)
        if summarize is None:
            return result
        return with_metadata(result, dict(summarize(written[0])))

    return StagingTable(table, model, parsers, _stage, checks)
