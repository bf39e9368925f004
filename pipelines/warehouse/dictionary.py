"""The data dictionary: a ``COMMENT ON`` every table and column of the warehouse.

The text comes from the pandera models in ``schemas/`` (the one definition of each table): a
table's comment is its model's docstring (what the table is and its grain), a column's is its
``pa.Field`` description, with the unit named where the column name carries one. The pivot
``core.scenarios`` has no model; its columns are described from ``core.scenario_parameters``
(the parameter's unit and the first sentence of its reasoning).

``describe_warehouse(con)`` comments every table present in the described schemas. It runs on
the run's working copy before the dashboards render and again just before publishing, so every
table carries its comments whenever it is (re)written. Read them back with::

    select table_name, column_name, comment from duckdb_columns() where schema_name = 'marts'
"""

from __future__ import annotations

import inspect
import re
import sys
from typing import NamedTuple

import duckdb
import pandera.polars as pa

from pipelines.identifiers import checked_identifier
from schemas.meta import columns
from schemas.registry import contracts

#: Schemas whose tables are described.
SCHEMAS = ("raw", "staging", "quarantine", "core", "marts", "meta")
#: Schemas whose tables and views the data dictionary page lists and the summary of ``edge-carbon run``
#: counts, so both give one number: every schema described but ``meta``, the build's own bookkeeping
#: (its publishes and lake files), in the order the data flows.
LISTED_SCHEMAS = ("raw", "staging", "quarantine", "core", "marts")

#: Every table with a pandera model -> that model: each contract names its table(s) (``__tables__``) in its module
#: of schemas/, where :func:`schemas.registry.contracts` finds it.
TABLES: dict[str, type[pa.DataFrameModel]] = contracts()

#: What a table is, where its model's docstring gives only the grain and names no table.
LEADS: dict[str, str] = {
    "staging.grid_intensity_live": "Grid carbon intensity from the live feeds (UK Carbon Intensity, Electricity Maps), "
                                   "upserted per UTC day; same columns as staging.grid_intensity.",
    "staging.model_configs": "Model architectures the paper trains (the OPT family).",
    "marts.sources": "Every shipped source file with its licence, link and the table it feeds, as the Sources page lists "
                     "them; same columns as staging.sources.",
    "marts.validation_headlines": "The published training footprints that give no inputs to recompute (kind = headline), "
                                  "as the Validation page lists them; same columns as staging.validation_cases.",
    "staging.validation_cases": "Published training footprints (energy, operational carbon) with the inputs to recompute them, "
                                "each input with its status and citation; marts.validation recomputes them.",
}

SCENARIOS_TABLE = "core.scenarios"
#: Every parameter set the model evaluates, with core.scenarios' columns (and their comments).
VARIANT_INPUTS_TABLE = "core.variant_inputs"
VARIANT_INPUTS_COMMENT = ("One row per parameter set the model evaluates (core.variants), one column per model parameter: its "
                          "scenario's values (core.scenarios) with the variant's overrides (core.variant_parameters) in their place.")
SCENARIOS_COMMENT = (
    "One row per scenario, one column per model parameter: a pivot of core.scenario_parameters (values only; "
    "the unit, range, status, reasoning and source of each value are there). Grain: one scenario."
)
SCENARIO_ID_COMMENT = "Scenario id, e.g. paper_text (joins core.scenario_parameters.scenario_id)."
VARIANT_ID_COMMENT = "The parameter set: 'base', the scenario's own values (core.variants names the sets the model evaluates)."

#: Column-name endings that carry a unit, longest first, and the unit they name.
UNIT_SUFFIXES: tuple[tuple[str, str], ...] = (
    ("gco2e_per_kwh", "gCO2e/kWh"), ("gb_per_s", "GB/s"), ("mb_per_s", "MB/s"), ("kgco2e", "kgCO2e"),
    ("tflops", "TFLOPS"), ("years", "years"), ("kwh", "kWh"), ("wh", "Wh"), ("gb", "GB"), ("j", "J"),
    ("w", "W"), ("s", "s"),
)
_COLUMN = re.compile(r"^[a-z_][a-z0-9_]*$")
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9(\"'])")
_ABBREVIATIONS = ("et al.", "e.g.", "i.e.", "cf.", "approx.", "vs.")


def _paragraph(text: str | None) -> str:
    """The first paragraph of a docstring on one line, without reST literal markers."""
    first = (text or "").strip().split("\n\n")[0]
    return " ".join(first.replace("``", "").split())


def _sentence(text: str) -> str:
    """``text`` ending with a full stop (its casing kept: it may start with a code value)."""
    text = text.strip()
    return text if not text or text.endswith((".", "!", "?")) else text + "."


def first_sentence(text: str | None) -> str:
    """The first sentence of ``text``: up to a full stop followed by a capitalised word, not after an abbreviation."""
    flat = " ".join((text or "").split())
    for match in _SENTENCE_END.finditer(flat):
        if not flat[: match.start()].endswith(_ABBREVIATIONS):
            return flat[: match.start()]
    return flat


def table_comment(table: str, model: type[pa.DataFrameModel]) -> str:
    """What the table is and its grain, from the model's docstring.

    A leading table name is dropped (``marts.verdict: the answer. Grain: ...``). A docstring that
    starts with the grain is led by ``LEADS[table]``, or else by the model module's summary line
    when that line is about this table (``staging.sources: the manifest, ...``).
    """
    body = _paragraph(inspect.getdoc(model))
    lead = LEADS.get(table)
    named = re.match(rf"{re.escape(table)}(?:\s*\(([^)]*)\))?\s*[.:]\s*", body)
    if named:  # "marts.x (paper Table 1). Grain: ..." -> "Paper Table 1. Grain: ..."
        body = " ".join(part for part in (_sentence(_capital(named.group(1) or "")), _capital(body[named.end():])) if part)
    elif lead is None:
        module_doc = _paragraph(getattr(sys.modules.get(model.__module__), "__doc__", None))
        if module_doc.startswith(f"{table}:"):
            lead = _sentence(_capital(module_doc.removeprefix(f"{table}:").strip()))
    return " ".join(part for part in (lead, _sentence(body)) if part)


def _capital(text: str) -> str:
    return text[:1].upper() + text[1:]


def unit_of(column: str) -> str | None:
    """The unit a column's name carries (``energy_j`` -> ``J``), or None."""
    for suffix, unit in UNIT_SUFFIXES:
        if column == suffix or column.endswith(f"_{suffix}"):
            return unit
    return None


def column_comment(name: str, description: str | None) -> str:
    """The field's description, with ``Unit: <unit>.`` added when the name carries a unit the text does not name."""
    text = _sentence(description or "") or f"{name}."
    unit = unit_of(name)
    if unit is not None:
        spelled = text.replace(" per ", "/")
        if not re.search(rf"(?<!\w){re.escape(unit)}(?!\w)", spelled):
            text = f"{text} Unit: {unit}."
    return text


def model_comments(table: str, model: type[pa.DataFrameModel]) -> tuple[str, dict[str, str]]:
    """(table comment, {column: comment}) of a table with a pandera model."""
    return table_comment(table, model), {name: column_comment(name, col.description) for name, col in columns(model).items()}


def scenario_comments(con: duckdb.DuckDBPyConnection) -> tuple[str, dict[str, str]]:
    """(table comment, {column: comment}) of core.scenarios, from core.scenario_parameters.

    Each parameter column gets its unit and the first sentence of the reasoning most scenarios
    give for it (ties: the alphabetically first).
    """
    rows = con.execute(
        "select parameter, unit, reasoning, count(*) as n from core.scenario_parameters "
        "group by all order by parameter, n desc, unit, reasoning"
    ).fetchall()
    out = {"scenario_id": SCENARIO_ID_COMMENT, "variant_id": VARIANT_ID_COMMENT}
    for parameter, unit, reasoning, _ in rows:
        if parameter in out:
            continue
        text = f"Model parameter {parameter}, in {unit}: the value each scenario uses (core.scenario_parameters)."
        why = first_sentence(reasoning)
        out[parameter] = f"{text} {_sentence(why)}" if why else text
    return SCENARIOS_COMMENT, out


def sql_literal(text: str) -> str:
    """``text`` as a DuckDB string literal (COMMENT ON takes no bound parameters)."""
    return "'" + text.replace("\x00", "").replace("'", "''") + "'"


def _column_identifier(column: str) -> str:
    if not _COLUMN.match(column):
        raise ValueError(f"not a plain column name: {column!r}")
    return f'"{column}"'


class Present(NamedTuple):
    """A table or view of the warehouse as it stands: its kind (``table`` or ``view``), its comment and its columns'
    comments, in column order."""

    kind: str
    comment: str | None
    columns: dict[str, str | None]


def present_comments(con: duckdb.DuckDBPyConnection) -> dict[str, Present]:
    """``schema.table`` -> :class:`Present`, for every table and view of the described schemas in this database: what
    :func:`describe_warehouse` leaves alone where it already reads so."""
    rows = con.execute(
        "select t.schema_name || '.' || t.table_name, t.kind, t.comment, c.column_name, c.comment from "
        "(select database_name, schema_name, table_name, 'table' as kind, comment from duckdb_tables() union all "
        " select database_name, schema_name, view_name, 'view', comment from duckdb_views() where not internal) as t "
        "left join duckdb_columns() as c using (database_name, schema_name, table_name) "
        "where t.database_name = current_database() and t.schema_name in (select unnest($schemas)) "
        "order by 1, c.column_index",
        {"schemas": list(SCHEMAS)},
    ).fetchall()
    out: dict[str, Present] = {}
    for table, kind, table_comment, column, column_comment in rows:
        out.setdefault(table, Present(kind, table_comment, {}))
        if column is not None:
            out[table].columns[column] = column_comment
    return out


def comments_for(con: duckdb.DuckDBPyConnection, table: str) -> tuple[str, dict[str, str]] | None:
    """(table comment, {column: comment}) of ``table``, or None when nothing describes it."""
    if table in TABLES:
        return model_comments(table, TABLES[table])
    if table in (SCENARIOS_TABLE, VARIANT_INPUTS_TABLE):
        comment, columns = scenario_comments(con)
        return (comment if table == SCENARIOS_TABLE else VARIANT_INPUTS_COMMENT), columns
    return None


def describe_warehouse(con: duckdb.DuckDBPyConnection) -> list[str]:
    """Comment every table and column of the described schemas, in one transaction; a comment that already reads
    so is left as it is (a run that rewrote a few tables writes theirs only).

    Returns what is left without a comment (``schema.table`` or ``schema.table.column``):
    a table with no model, or a column its model does not declare.
    """
    tables = present_comments(con)
    missing: list[str] = []
    con.execute("begin transaction")
    try:
        for table, present in tables.items():
            found = comments_for(con, table)
            if found is None:
                missing.append(table)
                continue
            text, column_text = found
            ident = checked_identifier(table)
            if present.comment != text:
                con.execute(f"comment on {present.kind} {ident} is {sql_literal(text)}")
            for column, column_present in present.columns.items():
                if column not in column_text:
                    missing.append(f"{table}.{column}")
                    continue
                if column_present != column_text[column]:
                    con.execute(f"comment on column {ident}.{_column_identifier(column)} is {sql_literal(column_text[column])}")
        con.execute("commit")
    except BaseException:
        con.execute("rollback")
        raise
    return missing
