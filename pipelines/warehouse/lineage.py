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
_PARAMETER = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)\s*(?::=\s*'([^']*)')?")
_QUALIFIED = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*\.[A-Za-z_][A-Za-z0-9_]*$")
#: A table named as a macro's argument: ``device_rows('core.variant_inputs')``.
_ARGUMENT_TABLE = re.compile(r"\b[A-Za-z_][A-Za-z0-9_]*\s*\(\s*'([A-Za-z_][A-Za-z0-9_]*\.[A-Za-z_][A-Za-z0-9_]*)'\s*[,)]")


def _named_tables(sql: str) -> set[str]:
    """The ``from``/``join`` ``schema.table`` names of ``sql`` (comments and strings removed)."""
    return {f"{s.lower()}.{t.lower()}" for s, t in _READ.findall(strip_comments_and_strings(sql))}


@functools.cache
def _table_macros() -> dict[str, tuple[tuple[tuple[str, str | None], ...], str]]:
    """Each table macro of the model's macro files -> its parameters (name, the table its default names, if any)
    and its body (comments removed)."""
    text = re.sub(r"--[^\n]*", " ", macro_text())
    macros = {}
    for name, arguments, body in _TABLE_MACRO.findall(text):
        parameters = tuple((m.group(1).lower(), m.group(2) if m.group(2) and _QUALIFIED.match(m.group(2)) else None)
                           for m in (_PARAMETER.match(a.strip()) for a in arguments.split(",") if a.strip()) if m)
        macros[name.lower()] = (parameters, body)
    return macros


def _call_reads(sql: str, seen: frozenset[str] = frozenset()) -> set[str]:
    """The tables the table-macro calls of ``sql`` read: each called macro's body (its own calls in turn), the
    ``schema.table`` names passed to it, and the defaults of the parameters a call leaves out. A call whose
    arguments cannot be read (nested parentheses) counts every default."""
    found: set[str] = set()
    code = strip_comments_and_strings(sql)
    for name, (parameters, body) in _table_macros().items():
        if name in seen:
            continue
        calls = list(re.finditer(rf"\b{name}\s*\(([^()]*)\)", sql, re.IGNORECASE))
        if not calls and not re.search(rf"\b{name}\s*\(", code, re.IGNORECASE):
            continue
        found |= _named_tables(body) | _call_reads(body, seen | {name})
        if not calls:  # a call with nested parentheses: every default
            found |= {default for _, default in parameters if default}
        for call in calls:
            passed = [a.strip() for a in call.group(1).split(",") if a.strip()]
            named = {a.split(":=")[0].strip().lower() for a in passed if ":=" in a}
            positional = [a for a in passed if ":=" not in a]
            values = [a.split(":=")[-1].strip() for a in passed]  # each argument's value, named or not
            found |= {v.strip("'") for v in values if v.startswith("'") and _QUALIFIED.match(v.strip("'"))}
            found |= {default for i, (parameter, default) in enumerate(parameters)
                      if default and i >= len(positional) and parameter not in named}
    return {table.lower() for table in found}


@functools.cache
def table_macro_reads() -> dict[str, frozenset[str]]:
    """Each table macro of the model's macro files -> the tables a call of it with no argument reads (its body's,
    its arguments' defaults and those of the table macros it calls)."""
    return {name: frozenset(_call_reads(f"{name}()")) for name in _table_macros()}


def tables_read(sql: str) -> list[str]:
    """The ``schema.table`` names ``sql`` reads (sorted, unique), in the warehouse's schemas, those of the
    table macros it calls included."""
    uncommented = re.sub(r"--[^\n]*", " ", sql)
    found = _named_tables(sql) | {name.lower() for name in _ARGUMENT_TABLE.findall(uncommented)} | _call_reads(uncommented)
    return sorted(name for name in found if name.split(".")[0] in SCHEMAS)


def tables_read_by(*sql_files: str) -> list[str]:
    """:func:`tables_read` over files below ``sql/`` (e.g. ``"marts/verdict.sql"``)."""
    return sorted({table for relative in sql_files for table in tables_read(sql_text(relative))})
