"""staging.sources: the manifest of shipped sources, every file's sha256 verified."""


import dagster as dg
import polars as pl

from pipelines.ingest import digests
from pipelines.ingest.manifest import load_manifest, verify
from pipelines.ingest.staging import Staged
from pipelines.lib.checks import staging_checks
from pipelines.lib.metadata import column_metadata
from pipelines.lib.progress import BatchedLog
from pipelines.lib.resources import Warehouse
from pipelines.lib.staging import SOURCES_KEY, result_metadata, staged_result
from pipelines.paths import sql_text
from pipelines.warehouse.tables import write_staged
from schemas.meta import conform, empty_frame
from schemas.quarantine import RejectedRows
from schemas.sources import Sources


class SourcesScope(dg.Config):
    """Which files a run stages: every registered one (``add`` empty, the default), or, in a what-if
    (``edge-carbon run --scenario``), only the files of the source ids ``add`` names (scenario files
    registered since the last full build, whose parameters the what-if stages): their rows are added
    to the table as published, and every other row is kept as it is."""

    add: list[str] = []


@dg.asset(
    key=SOURCES_KEY,
    group_name="sources",
    kinds={"duckdb", "polars"},
    metadata=column_metadata(Sources),
    description=None,
    check_specs=staging_checks("staging.sources", Sources, joins_sources=False),
)
def sources(context: dg.AssetExecutionContext, config: SourcesScope, warehouse: Warehouse) -> dg.MaterializeResult:
    """Every shipped source file, from ``sources/manifest/*.toml``.

    Grain: one source file. Columns: title, origin URL, licence, attribution, retrieval date,
    sha256 and the staging table it feeds. Each file's sha256 is verified here (and again by
    every parser that reads it); a mismatch fails the run with a message naming the file.
    A what-if adds the rows of a few files to the published rows instead (:class:`SourcesScope`).
    """
    entries = load_manifest()
    kept = empty_frame(Sources)
    if config.add:
        unknown = sorted(set(config.add) - {entry.id for entry in entries})
        if unknown:
            raise ValueError(f"not registered sources: {', '.join(unknown)} (the manifests under sources/manifest/ list them)")
        entries = [entry for entry in entries if entry.id in config.add]
        kept = conform(Sources, warehouse.read(sql_text("staging/sources_kept.sql"), {"ids": list(config.add)}))
        context.log.info(f"adding {', '.join(config.add)} to staging.sources; its other {kept.height} rows kept as published")
    rows = []
    progress = BatchedLog(context.log.info)
    for i, entry in enumerate(entries, start=1):
        verify(entry)
        rows.append(
            {
                "source_id": entry.id,
                "title": entry.title,
                "url": entry.url,
                "license": entry.license,
                "attribution": entry.attribution or None,
                "retrieved_on": entry.retrieved_on,
                "sha256": entry.sha256,
                "bytes": entry.file.stat().st_size,
                "path": entry.path,
                "kind": entry.kind,
                "table_name": entry.table,
                "status": entry.status,
                "notes": entry.notes or None,
                "manifest_file": entry.manifest_file,
            }
        )
        if i % 10 == 0 or i == len(entries):
            progress(f"verified {i}/{len(entries)} source files")
    progress.flush()
    digests.flush()
    frame = conform(Sources, pl.DataFrame(rows, infer_schema_length=None)) if rows else empty_frame(Sources)
    if config.add:
        frame = pl.concat([kept, frame]).sort("source_id")
    staged = Staged(table="staging.sources", frame=frame, rejects=empty_frame(RejectedRows), per_source=[])
    write_staged(warehouse.connection(), [staged])
    meta = result_metadata(staged)
    meta["licences"] = dg.MetadataValue.md(
        "\n".join(["| licence | files |", "|---|---|"] + [f"| {lic} | {n} |" for lic, n in frame.group_by("license").len().sort("license").iter_rows()])
    )
    return staged_result(warehouse, staged, meta)
