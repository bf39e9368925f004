"""Blocking asset checks for staging tables, driven by the same pandera models as ingest.

Checks only read: their SQL goes through ``Warehouse.read`` (queries only). A failed check
puts a short summary in its metadata (:data:`SUMMARY_KEY`): the table, the column, the rule and
a few failing rows with the scenario or source that fed them, which ``edge-carbon run`` prints
as the last lines of a failed build (:func:`pipelines.run.launch.check_failures`).
"""

from collections.abc import Iterable
from typing import Any

import dagster as dg
import pandera.polars as pa
import polars as pl

from pipelines.defs.keys import key_of
from pipelines.defs.resources import Warehouse
from pipelines.ingest.quarantine import check_descriptions, explain_check, unique_keys
from pipelines.paths import sql_text

#: Metadata key of a failed check's summary: the lines a failed build ends with.
SUMMARY_KEY = "summary"
#: Rules, and failing rows, that a failed pandera check's summary shows.
SUMMARY_RULES = 5
SUMMARY_ROWS = 5
#: Columns that say which scenario or source fed a row; shown with each failing row that has them.
ORIGIN_COLUMNS = ("scenario_id", "source_id")


def summary_metadata(lines: Iterable[str]) -> dict[str, Any]:
    """``lines`` as a failed check's summary (metadata under :data:`SUMMARY_KEY`)."""
    return {SUMMARY_KEY: dg.MetadataValue.text("\n".join(lines))}


def _cell(value: object) -> str:
    return f"{value:.6g}" if isinstance(value, float) else str(value)


def pandera_summary(table: str, model: type[pa.DataFrameModel], frame: pl.DataFrame, cases: pl.DataFrame) -> list[str]:
    """The failures of ``model`` on ``frame`` (pandera's ``failure_cases``) in a few lines: each
    rule that fails (column and check, at most :data:`SUMMARY_RULES`) with its number of rows,
    then up to :data:`SUMMARY_ROWS` failing rows, each by the scenario or source that fed it,
    the table's key and the values of its failing columns."""
    described = check_descriptions(model)
    keys = dict(unique_keys(model))
    rules: dict[tuple[str, str], set[int]] = {}
    whole: dict[tuple[str, str], str] = {}  # rules broken by the table as a whole (a missing column, a type)
    failing_columns: dict[int, list[str]] = {}
    for case in cases.iter_rows(named=True):
        column = str(case["column"]) if case["schema_context"] == "Column" else ""
        rule = (column, str(case["check"]))
        rows = rules.setdefault(rule, set())
        if case["index"] is None:
            whole.setdefault(rule, str(case["failure_case"]))
            continue
        rows.add(case["index"])
        named = failing_columns.setdefault(case["index"], [])
        named += [c for c in ([column] if column else keys.get(rule[1], [])) if c not in named]
    failing = sorted(failing_columns)
    lines = [f"{table}: {len(rules)} rule(s) of {model.__name__} fail on {len(failing)} row(s)"]
    for (column, check), rows in list(rules.items())[:SUMMARY_RULES]:
        why = explain_check(check, None, described)
        rule = check if why == f"failed check {check}" else f"{check} ({why})"
        named = column or ", ".join(keys.get(check, []))
        if not rows:
            lines.append(f"  the table, rule {rule}: {whole[(column, check)]}")
        else:
            lines.append(f"  {f'column {named}' if named else 'the whole row'}, rule {rule}: {len(rows)} row(s)")
    if len(rules) > SUMMARY_RULES:
        lines.append(f"  ... and {len(rules) - SUMMARY_RULES} more rule(s), in the check's metadata (sample)")
    if failing:
        lines.append(f"  failing rows of {table} ({min(len(failing), SUMMARY_ROWS)} of {len(failing)}):")
    key_columns = [name for names in keys.values() for name in names]
    for index in failing[:SUMMARY_ROWS]:
        shown = dict.fromkeys(c for c in (*ORIGIN_COLUMNS, *key_columns, *failing_columns[index]) if c in frame.columns)
        row = frame.row(index, named=True)
        lines.append("    " + ", ".join(f"{name}={_cell(row[name])}" for name in shown))
    return lines


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
                metadata={"failures": cases.height, "sample": dg.MetadataValue.md(str(cases.head(10))),
                          **summary_metadata(pandera_summary(table, model, frame, cases))},
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
