"""Which warehouse tables a SQL text reads: ``from``/``join`` of a schema-qualified name.

Comments and string literals are removed first, so a table named in a comment or a string is
not a dependency; CTEs and table functions (``query_table($t)``) have no schema and are not
tables of the warehouse. A call of a table macro of the model (sql/model/macros.sql, model_rows.sql) reads
what the macro reads: its ``from``/``join`` tables, the tables its arguments default to (``model_rows(inputs
:= 'core.scenarios', ...)``) and what the macros it calls read, so the model's default inputs are
dependencies of the SQL that calls them.
"""

from __future__ import annotations

import functools
import re

from pipelines.paths import macro_text, sql_text
from pipelines.warehouse.database import SCHEMAS as _CREATED

#: The warehouse's schemas: those every run creates, and ``raw`` (the live feeds' payloads).
SCHEMAS = (*_CREATED, "raw")

_COMMENT_OR_STRING = re.compile(r"--[^\n]*|/\*.*?\*/|'(?:[^']|'')*'", re.DOTALL)
_READ = re.compile(r"\b(?:from|join)\s+([A-Za-z_][A-Za-z0-9_]*)\.([A-Za-z_][A-Za-z0-9_]*)\b", re.IGNORECASE)


def strip_comments_and_strings(sql: str) -> str:
    """``sql`` with comments removed and every string literal replaced by ``''``."""
    return _COMMENT_OR_STRING.sub(lambda m: "''" if m.group(0).startswith("'") else " ", sql)


_TABLE_MACRO = re.compile(r"\bmacro\s+([A-Za-z_][A-Za-z0-9_]*)\s*\(([^)]*)\)\s+as\s+table\b(.*?)(?:;|$)", re.IGNORECASE | re.DOTALL)
_DEFAULT_TABLE = re.compile(r":=\s*'([A-Za-z_][A-Za-z0-9_]*\.[A-Za-z_][A-Za-z0-9_]*)'")
#: A table named as a macro's argument: ``device_rows('core.variant_inputs')``.
_ARGUMENT_TABLE = re.compile(r"\b[A-Za-z_][A-Za-z0-9_]*\s*\(\s*'([A-Za-z_][A-Za-z0-9_]*\.[A-Za-z_][A-Za-z0-9_]*)'\s*[,)]")


def _named_tables(sql: str) -> set[str]:
    """The ``from``/``join`` ``schema.table`` names of ``sql`` (comments and strings removed)."""
    return {f"{s.lower()}.{t.lower()}" for s, t in _READ.findall(strip_comments_and_strings(sql))}


@functools.cache
def table_macro_reads() -> dict[str, frozenset[str]]:
    """Each table macro of the model's macro files -> the tables it reads (its body's, its arguments' defaults and
    those of the table macros it calls)."""
    text = re.sub(r"--[^\n]*", " ", macro_text())
    found = _TABLE_MACRO.findall(text)
    reads = {name.lower(): set(_named_tables(body)) | set(_DEFAULT_TABLE.findall(arguments)) for name, arguments, body in found}
    calls = {name.lower(): {other for other in reads if other != name.lower()
                            and re.search(rf"\b{other}\s*\(", strip_comments_and_strings(body), re.IGNORECASE)}
             for name, _, body in found}
    changed = True
    while changed:  # what a macro's macros read, to a fixed point
        changed = False
        for name, called in calls.items():
            for other in called:
                if not reads[other] <= reads[name]:
                    reads[name] |= reads[other]
                    changed = True
    return {name: frozenset(tables) for name, tables in reads.items()}


def tables_read(sql: str) -> list[str]:
    """The ``schema.table`` names ``sql`` reads (sorted, unique), in the warehouse's schemas, those of the
    table macros it calls included."""
    code = strip_comments_and_strings(sql)
    found = _named_tables(sql) | {name.lower() for name in _ARGUMENT_TABLE.findall(re.sub(r"--[^\n]*", " ", sql))}
    for name, reads in table_macro_reads().items():
        if reads and re.search(rf"\b{name}\s*\(", code, re.IGNORECASE):
            found |= {t.lower() for t in reads}
    return sorted(name for name in found if name.split(".")[0] in SCHEMAS)


def tables_read_by(*sql_files: str) -> list[str]:
    """:func:`tables_read` over files below ``sql/`` (e.g. ``"marts/verdict.sql"``)."""
    return sorted({table for relative in sql_files for table in tables_read(sql_text(relative))})
