"""Checked SQL identifiers and setting values (a leaf: every layer that writes SQL may import it).

Identifiers and the values of ``set`` statements cannot be bound as query parameters, so a
table name that goes into SQL text is first checked to be a plain schema-qualified lower-case
name, and a memory size to read as one.
"""

from __future__ import annotations

import re

_TABLE = re.compile(r"^[a-z_]+\.[a-z_]+$")


def checked_identifier(table: str) -> str:
    """``table`` if it is a schema-qualified lower-case name (identifiers cannot be bound)."""
    if not _TABLE.match(table):
        raise ValueError(f"not a schema-qualified table name: {table!r}")
    return table


def checked_size(size: str) -> str:
    """``size`` if it reads as a DuckDB memory size (``128MB``, ``1.5 GiB``; settings cannot be bound)."""
    if not re.fullmatch(r"\s*[0-9]+(\.[0-9]+)?\s*[A-Za-z]*\s*", size):
        raise ValueError(f"not a memory size: {size!r}")
    return size.strip()
