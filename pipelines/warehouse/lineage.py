"""Which warehouse tables a SQL text reads: ``from``/``join`` of a schema-qualified name.

Comments and string literals are removed first, so a table named in a comment or a string is
not a dependency; CTEs and table functions (``query_table($t)``) have no schema and are not
tables of the warehouse.
"""

from __future__ import annotations

import re

from pipelines.paths import sql_text
from pipelines.warehouse.database import SCHEMAS as _CREATED

#: The warehouse's schemas: those every run creates, and ``raw`` (the live feeds' payloads).
SCHEMAS = (*_CREATED, "raw")

_COMMENT_OR_STRING = re.compile(r"--[^\n]*|/\*.*?\*/|'(?:[^']|'')*'", re.DOTALL)
_READ = re.compile(r"\b(?:from|join)\s+([A-Za-z_][A-Za-z0-9_]*)\.([A-Za-z_][A-Za-z0-9_]*)\b", re.IGNORECASE)


def strip_comments_and_strings(sql: str) -> str:
    """``sql`` with comments removed and every string literal replaced by ``''``."""
    return _COMMENT_OR_STRING.sub(lambda m: "''" if m.group(0).startswith("'") else " ", sql)


def tables_read(sql: str) -> list[str]:
    """The ``schema.table`` names ``sql`` reads (sorted, unique), in the warehouse's schemas."""
    found = {f"{s.lower()}.{t.lower()}" for s, t in _READ.findall(strip_comments_and_strings(sql))}
    return sorted(name for name in found if name.split(".")[0] in SCHEMAS)


def tables_read_by(*sql_files: str) -> list[str]:
    """:func:`tables_read` over files below ``sql/`` (e.g. ``"marts/verdict.sql"``)."""
    return sorted({table for relative in sql_files for table in tables_read(sql_text(relative))})
