"""Checked SQL identifiers (a leaf: every layer that writes SQL may import it).

Identifiers cannot be bound as query parameters, so a table name that goes into SQL text is
first checked to be a plain schema-qualified lower-case name.
"""

from __future__ import annotations

import re

_TABLE = re.compile(r"^[a-z_]+\.[a-z_]+$")


def checked_identifier(table: str) -> str:
    """``table`` if it is a schema-qualified lower-case name (identifiers cannot be bound)."""
    if not _TABLE.match(table):
        raise ValueError(f"not a schema-qualified table name: {table!r}")
    return table
