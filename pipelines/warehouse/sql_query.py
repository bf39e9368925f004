"""``edge-carbon sql``: one read-only query on the published warehouse, and what it prints.

- A warehouse that is not there, or a folder where its file should be, is refused in one line
  that says what was expected and how to get it (:func:`warehouse_refusal`).
- A query that names a table or view that does not exist is answered with the closest names
  that do, schema-qualified (:func:`catalog_hint`), in place of DuckDB's own guess, which
  ignores the schema that was written (``marts.verdicts`` drew ``core.verdicts``, not
  ``marts.verdict``).
- The default table output shows every character: long text wraps inside its column, and a
  result too wide for a grid at the terminal's width is printed one row per block, a column
  and its value per line (:func:`table_text`). ``csv``, ``json`` and ``markdown`` never cut text.
"""

from __future__ import annotations

import difflib
import json
import re
import shutil
import textwrap
from collections.abc import Iterator
from pathlib import Path

import duckdb
import polars as pl

from pipelines.paths import WAREHOUSE_ENV, sql_text

#: The file name the build gives the warehouse (``warehouse/edge_carbon.duckdb``).
WAREHOUSE_FILE = "edge_carbon.duckdb"
#: Characters per line of the table output when the terminal's width is unknown (output to a pipe or file).
DEFAULT_WIDTH = 200
#: The narrowest a column of long text may wrap to before the grid gives way to one block per row.
NARROWEST_TEXT = 16
#: At most this many names offered for a table or view that does not exist, and how alike they must be (0-1).
SUGGESTIONS = 3
LIKENESS = 0.6
#: How much a schema like the one written counts beside the name's likeness (a name matters more than its schema).
SCHEMA_WEIGHT = 0.2
#: DuckDB's words for a table or view that does not exist: in an existing schema (the bare name) or in one that does not.
_MISSING = re.compile(r'Table with name (?:"(?P<quoted>[^"]+)"|(?P<bare>\S+?))(?: does not exist!| does not exist because)')
#: DuckDB's own guess, a line of its message, replaced by :func:`catalog_hint`.
_GUESS = re.compile(r'\n?Did you mean "[^"]*"\?')
#: What lists every table and view, for a name with none close to it.
LIST_QUERY = "select table_schema, table_name from information_schema.tables order by all"


def warehouse_refusal(path: Path, *, overridden: bool) -> str | None:
    """Why ``path`` cannot be queried, in one line that names the fix; None when it is a file.

    ``overridden``: ``$EDGE_CARBON_WAREHOUSE`` chose the path (then the fix names the variable).
    """
    if path.is_dir():
        if overridden:
            return (f"{WAREHOUSE_ENV}={path} is a folder; it must name the warehouse's DuckDB file, "
                    f"e.g. {WAREHOUSE_ENV}={path / WAREHOUSE_FILE}")
        return (f"{path} is a folder, where the warehouse's DuckDB file {path.name} was expected; "
                "move the folder away, then run `make run`")
    if not path.exists():
        chosen = f" (with {WAREHOUSE_ENV}={path} set, it builds there)" if overridden else ""
        return f"no warehouse at {path}; run `make run` first{chosen}"
    return None


def relations(con: duckdb.DuckDBPyConnection) -> list[str]:
    """Every table and view of the connection's database, schema-qualified, sorted."""
    return [name for (name,) in con.execute(sql_text("publish/relations.sql")).fetchall()]


def _base_tables(node: object) -> Iterator[tuple[str, str]]:
    """(schema as written, name) of every BASE_TABLE node of a parsed statement (``json_serialize_sql``)."""
    if isinstance(node, dict):
        if node.get("type") == "BASE_TABLE" and node.get("table_name"):
            yield str(node.get("schema_name") or ""), str(node["table_name"])
        for value in node.values():
            yield from _base_tables(value)
    elif isinstance(node, list):
        for value in node:
            yield from _base_tables(value)


def referenced(con: duckdb.DuckDBPyConnection, query: str) -> list[tuple[str, str]]:
    """(schema, name) of each table or view ``query`` reads, as written (schema empty when none
    was); empty when DuckDB cannot serialise the query (not a SELECT, or not valid)."""
    try:
        (parsed,) = con.execute(sql_text("publish/query_relations.sql"), {"query": query}).fetchall()[0]
    except duckdb.Error:
        return []
    tree = json.loads(parsed)
    return [] if tree.get("error") else list(dict.fromkeys(_base_tables(tree)))


def closest(schema: str, name: str, existing: list[str]) -> list[str]:
    """The names in ``existing`` (schema-qualified) closest to ``schema.name``, best first: those
    whose own name is at least :data:`LIKENESS` alike, ranked by that likeness and, where a schema
    was written, by how alike theirs is (``marts.verdicts``: ``marts.verdict`` before ``core.verdicts``)."""
    def likeness(a: str, b: str) -> float:
        return difflib.SequenceMatcher(None, a.lower(), b.lower()).ratio()

    scored = []
    for relation in existing:
        their_schema, _, their_name = relation.partition(".")
        alike = likeness(name, their_name)
        if alike >= LIKENESS:
            scored.append((alike + (SCHEMA_WEIGHT * likeness(schema, their_schema) if schema else 0.0), relation))
    return [relation for _, relation in sorted(scored, key=lambda pair: (-pair[0], pair[1]))[:SUGGESTIONS]]


def missing_relation(message: str) -> tuple[str, str] | None:
    """(schema, name) of the table or view a DuckDB catalog error says does not exist (the schema
    only when the message gives it), or None for another error."""
    found = _MISSING.search(message)
    if found is None:
        return None
    written = found.group("quoted") or found.group("bare")
    schema, _, name = written.rpartition(".")
    return schema, name


def catalog_hint(con: duckdb.DuckDBPyConnection, query: str, message: str) -> str:
    """``message`` (a DuckDB error) with DuckDB's guess for a missing table or view replaced by the
    closest existing names, schema-qualified; any other message unchanged."""
    missing = missing_relation(message)
    if missing is None:
        return message
    schema, name = missing
    written = [(s, n) for s, n in referenced(con, query) if n.lower() == name.lower() and (not schema or s.lower() == schema.lower())]
    existing = relations(con)
    offered = list(dict.fromkeys(r for s, n in (written or [missing]) for r in closest(s, n, existing)))[:SUGGESTIONS]
    text = _GUESS.sub("", message).rstrip()
    if not offered:
        return f'{text} No table or view has a name close to it; every one: edge-carbon sql "{LIST_QUERY}"'
    also = f" (also close: {', '.join(offered[1:])})" if len(offered) > 1 else ""
    return f"{text} Did you mean {offered[0]}?{also}"


def terminal_width() -> int:
    """Characters per line: ``$COLUMNS``, else the terminal's, else :data:`DEFAULT_WIDTH`."""
    return shutil.get_terminal_size((DEFAULT_WIDTH, 24)).columns


def _cell(value: object) -> str:
    """A value as the table shows it (null as ``null``)."""
    return "null" if value is None else str(value)


def _longest_line(text: str) -> int:
    return max((len(line) for line in text.splitlines()), default=0)


def fits(frame: pl.DataFrame, width: int) -> bool:
    """Whether ``frame`` reads as a grid ``width`` characters wide: every column at least as wide as
    its name and its type, and its text (wrapped) at least :data:`NARROWEST_TEXT` wide, or as wide as
    its longest value where that is narrower."""
    needed = 1
    for name, dtype in frame.schema.items():
        longest = max((_longest_line(_cell(v)) for v in frame.get_column(name).to_list()), default=0)
        needed += max(len(name), len(str(dtype)), min(longest, NARROWEST_TEXT)) + 3
    return needed <= width


def records_text(frame: pl.DataFrame, width: int) -> str:
    """One block per row, ``column  value`` a line, each value in full (wrapped to ``width``)."""
    label = max((len(name) for name in frame.columns), default=0)
    room = max(width - label - 2, NARROWEST_TEXT)
    blocks = []
    for number, row in enumerate(frame.iter_rows(), start=1):
        lines = [f"-[ row {number} ]".ljust(min(width, label + 2 + room), "-")]
        for name, value in zip(frame.columns, row, strict=True):
            wrapped = [part for line in (_cell(value).splitlines() or [""])
                       for part in (textwrap.wrap(line, room, break_on_hyphens=False) or [""])]
            lines += [f"{(name if i == 0 else '').ljust(label)}  {part}".rstrip() for i, part in enumerate(wrapped)]
        blocks.append("\n".join(lines))
    return "\n".join(blocks)


def table_text(frame: pl.DataFrame, rows: int | None, width: int) -> str:
    """The default output: ``frame`` as a grid (polars') with every character of every cell, long
    text wrapped in its column, at most ``rows`` rows (the first and last halves, as polars shows
    them); when the grid would squeeze a column narrower than it reads (:func:`fits`), the first
    ``rows`` rows one block each (:func:`records_text`) under the same ``shape:`` line."""
    shown = frame if rows is None or frame.height <= rows else pl.concat([frame.head(rows), frame.tail(rows)])
    if not fits(shown, width):
        first = frame if rows is None else frame.head(rows)
        return f"shape: {frame.shape}; one block per row (too wide for a table of {width} characters)\n" + records_text(first, width)
    longest = max((_longest_line(_cell(v)) for name in frame.columns for v in shown.get_column(name).to_list()), default=1)
    with pl.Config(tbl_rows=-1 if rows is None else rows, tbl_cols=-1, fmt_str_lengths=max(longest, 1) + 1,
                   fmt_table_cell_list_len=-1, tbl_width_chars=width):
        return str(frame)
