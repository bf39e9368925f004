"""The checks of the warehouse's tables, evaluated in the step that writes each table.

A table's checks are declared once, beside its asset, which lists their specs in its
``check_specs``: :func:`staging_checks` (the pandera model holds, every source_id joins
staging.sources) and :func:`table_check` (a rule of the table's own). The writers of
:mod:`pipelines.lib.tables` and :mod:`pipelines.lib.staging` evaluate every check declared for
the table they wrote (:func:`check_results`) and return the results with its materialisation;
the schema check validates the frame just written, reading the table back only where no frame
is at hand. A check so costs no step of its own: the Dagster UI still shows each check with its
asset, and a failed blocking check fails the asset's step (``DagsterAssetCheckFailedError``)
once the table is written, so nothing downstream runs and the run is not published.

Checks only read: their SQL goes through a :class:`Reader` (``Warehouse.read``: queries only). A
failed check puts a short summary in its metadata (:data:`SUMMARY_KEY`): the table, the column,
the rule and a few failing rows with the scenario or source that fed them, which
``edge-carbon run`` prints as the last lines of a failed build
(:func:`pipelines.run.launch.check_failures`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from functools import partial
from typing import Any, Protocol

import dagster as dg
import duckdb
import pandera.polars as pa
import polars as pl

from pipelines.ingest.quarantine import check_descriptions, explain_check, unique_keys
from pipelines.lib.keys import SOURCES_KEY, key_of
from pipelines.paths import sql_text
from pipelines.warehouse.queries import read_pl, table_exists

#: Metadata key of a failed check's summary: the lines a failed build ends with.
SUMMARY_KEY = "summary"
#: Rules, and failing rows, that a failed pandera check's summary shows.
SUMMARY_RULES = 5
SUMMARY_ROWS = 5
#: Columns that say which scenario or source fed a row; shown with each failing row that has them.
ORIGIN_COLUMNS = ("scenario_id", "source_id")


class Reader(Protocol):
    """What a check reads the warehouse through: the Warehouse resource, or :class:`ConnectionReader`."""

    def read(self, sql: str, params: dict | list | None = None) -> pl.DataFrame: ...

    def has_table(self, table: str) -> bool: ...


@dataclass(frozen=True)
class ConnectionReader:
    """A connection as a check sees it (queries only): the writers' view of the run's warehouse."""

    con: duckdb.DuckDBPyConnection

    def read(self, sql: str, params: dict | list | None = None) -> pl.DataFrame:
        """:func:`pipelines.warehouse.queries.read_pl` on the connection."""
        return read_pl(self.con, sql, params)

    def has_table(self, table: str) -> bool:
        """Whether ``schema.table`` exists."""
        return table_exists(self.con, table)


@dataclass(frozen=True)
class TableCheck:
    """One declared check: its spec (which the asset lists) and its evaluation, on the rows just
    written (a frame) or, given none, on the table as stored."""

    spec: dg.AssetCheckSpec
    evaluate: Callable[[Reader, pl.DataFrame | None], dg.AssetCheckResult]

    def __call__(self, warehouse: Reader, frame: pl.DataFrame | None = None) -> dg.AssetCheckResult:
        """The check's result, named by its asset and its name."""
        return self.evaluate(warehouse, frame)._replace(asset_key=self.spec.asset_key, check_name=self.spec.name)


#: Every declared check, by asset key and check name (declared as the modules under defs/ load).
DECLARED: dict[dg.AssetKey, dict[str, TableCheck]] = {}


def declare(spec: dg.AssetCheckSpec, evaluate: Callable[[Reader, pl.DataFrame | None], dg.AssetCheckResult]) -> TableCheck:
    """Declare a check of ``spec.asset_key``: the writer of that table evaluates it."""
    check = TableCheck(spec, evaluate)
    DECLARED.setdefault(spec.asset_key, {})[spec.name] = check
    return check


def check_results(warehouse: Reader, table: str, frame: pl.DataFrame | None = None) -> list[dg.AssetCheckResult]:
    """Every check declared for ``table``, on ``frame`` (the rows just written) or on the table as stored."""
    return [check(warehouse, frame) for check in DECLARED.get(key_of(table), {}).values()]


def sql_problems(warehouse: Reader, sql_file: str, keys: int = 1) -> dg.AssetCheckResult:
    """A check from ``sql/<sql_file>``, whose rows are its problems: it passes with none, and its metadata lists each
    as ``<its first keys columns>: <its last column>`` (e.g. ``paper_text: fleet shares sum to 0.9, not 1``)."""
    broken = warehouse.read(sql_text(sql_file))
    lines = [f"{' '.join(str(v) for v in row[:keys])}: {row[-1]}" for row in broken.iter_rows()]
    return dg.AssetCheckResult(passed=broken.height == 0, metadata={"problems": "; ".join(lines) or "none"})


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


def pandera_result(table: str, model: type[pa.DataFrameModel], warehouse: Reader, frame: pl.DataFrame | None) -> dg.AssetCheckResult:
    """``model`` on ``frame`` (else on ``table`` as stored): passed with the rows checked, or the
    failure cases (count, a sample) and their summary."""
    if frame is None:
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


def source_ids_result(table: str, warehouse: Reader, *, lake: bool = False) -> dg.AssetCheckResult:
    """Whether every source_id of ``table`` joins staging.sources, in SQL (a lake table: its
    catalog's partition keys, so the check reads no history)."""
    query = "checks/orphan_lake_partitions.sql" if lake else "checks/orphan_source_ids.sql"
    orphans = warehouse.read(sql_text(query), {"table": table}).rows()
    return dg.AssetCheckResult(
        passed=not orphans,
        metadata={"orphan_source_ids": ", ".join(f"{sid} ({n} rows)" for sid, n in orphans) or "none"},
    )


def source_ids_description(table: str) -> str:
    """The source_ids_join check's description."""
    return f"Every source_id in {table} joins staging.sources."


def staging_checks(table: str, model: type[pa.DataFrameModel], *, joins_sources: bool = True) -> list[dg.AssetCheckSpec]:
    """Declare the blocking checks of ``table``: its pandera model holds, and (``joins_sources``)
    every source_id joins staging.sources; the specs, for the asset's ``check_specs``."""
    key = key_of(table)
    schema = dg.AssetCheckSpec("pandera_schema", asset=key, blocking=True,
                               description=f"Every row of {table} satisfies {model.__name__} (types, nulls, ranges).")
    checks = [declare(schema, partial(pandera_result, table, model))]
    if joins_sources:
        joins = dg.AssetCheckSpec("source_ids_join", asset=key, blocking=True, additional_deps=[SOURCES_KEY],
                                  description=source_ids_description(table))
        checks.append(declare(joins, lambda warehouse, _frame: source_ids_result(table, warehouse)))
    return [check.spec for check in checks]


def table_check(
    table: str, *, description: str, name: str | None = None, blocking: bool = True, additional_deps: Iterable[dg.AssetKey] = ()
) -> Callable[[Callable[[Reader], dg.AssetCheckResult]], TableCheck]:
    """Declare the decorated function (``warehouse -> AssetCheckResult``, reading the written table)
    as a check of ``table``, named ``name`` or after the function; the check (callable as the
    function) carries its spec."""

    def declared(function: Callable[[Reader], dg.AssetCheckResult]) -> TableCheck:
        spec = dg.AssetCheckSpec(name or function.__name__, asset=key_of(table), description=description, blocking=blocking,
                                 additional_deps=list(additional_deps))
        return declare(spec, lambda warehouse, _frame: function(warehouse))

    return declared
