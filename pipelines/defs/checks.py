"""Blocking asset checks for staging tables, driven by the same pandera models as ingest.

Checks only read: their SQL goes through ``Warehouse.read`` (queries only).
"""


import dagster as dg
import pandera.polars as pa

from pipelines.defs.resources import Warehouse
from pipelines.defs.staging import key_of
from pipelines.paths import sql_text


def staging_checks(table: str, model: type[pa.DataFrameModel], *, joins_sources: bool = True, lake: bool = False) -> list[dg.AssetChecksDefinition]:
    """Two blocking checks per staging table: the pandera model holds, and every source_id joins.

    A lake table (``lake``: stored as Parquet partitions keyed by source_id) has a schema check
    of its own, on the partitions a run writes, and its join is checked on its catalog's
    partition keys, so neither reads the whole history."""
    key = key_of(table)
    name = key.path[-1]

    @dg.asset_check(
        asset=key,
        name="pandera_schema",
        blocking=True,
        description=f"Every row of {table} satisfies {model.__name__} (types, nulls, ranges).",
    )
    def _schema(warehouse: Warehouse) -> dg.AssetCheckResult:
        frame = warehouse.read("select * from query_table($t)", {"t": table})
        try:
            model.validate(frame, lazy=True)
        except pa.errors.SchemaErrors as exc:
            cases = exc.failure_cases
            return dg.AssetCheckResult(
                passed=False,
                metadata={"failures": cases.height, "sample": dg.MetadataValue.md(str(cases.head(10)))},
            )
        return dg.AssetCheckResult(passed=True, metadata={"rows_checked": frame.height})

    _schema.__name__ = f"{name}_pandera_schema"
    checks = [] if lake else [_schema]

    if joins_sources:

        @dg.asset_check(
            asset=key,
            name="source_ids_join",
            blocking=True,
            additional_deps=[dg.AssetKey(["staging", "sources"])],
            description=f"Every source_id in {table} joins staging.sources.",
        )
        def _joins(warehouse: Warehouse) -> dg.AssetCheckResult:
            query = "checks/orphan_lake_partitions.sql" if lake else "checks/orphan_source_ids.sql"
            orphans = warehouse.read(sql_text(query), {"table": table}).rows()
            return dg.AssetCheckResult(
                passed=not orphans,
                metadata={"orphan_source_ids": ", ".join(f"{sid} ({n} rows)" for sid, n in orphans) or "none"},
            )

        _joins.__name__ = f"{name}_source_ids_join"
        checks.append(_joins)
    return checks
