"""The published warehouse's storage format: one that DuckDB clients older than the build's can read.

A DuckDB file's storage version is fixed when the file is created. The build's duckdb (2.0.x)
writes storage version 69 by default, which DuckDB 1.x clients (the newest ``duckdb`` CLI on the
package index, ``duckdb-cli`` 1.5.6, reads versions 64-68) refuse to open. Every warehouse file
the build creates is therefore created at :data:`STORAGE_COMPATIBILITY` (DuckDB's
``storage_compatibility_version`` setting), and a run whose copy of the published file is of a
newer version rewrites that copy once at this version before it writes to it
(:func:`rewrite_if_newer`), so the next publish leaves a file every DuckDB >= 1.4 opens. The lake's
Parquet files do not depend on it.
"""

from __future__ import annotations

import contextlib
import os
import struct
from pathlib import Path

import duckdb

#: The storage version the warehouse is written at: DuckDB 1.4.0 and every later client read it.
STORAGE_COMPATIBILITY = "v1.4.0"
#: The storage versions (the number in a file's header) that DuckDB 1.4 and 1.5 clients read.
OLDER_CLIENTS_READ = range(64, 69)
#: The name the file being rewritten is attached under (not one DuckDB gives a file of ours).
SOURCE_ALIAS = "edge_carbon_rewrite_source"
#: Where a DuckDB file's header keeps its magic bytes and its storage version number.
MAGIC, MAGIC_AT, VERSION_AT = b"DUCK", 8, 12


def connect(path: Path | str) -> duckdb.DuckDBPyConnection:
    """A read-write connection to ``path``; a file created by it is at :data:`STORAGE_COMPATIBILITY`."""
    return duckdb.connect(str(path), config={"storage_compatibility_version": STORAGE_COMPATIBILITY})


def storage_version(path: Path | str) -> int | None:
    """The storage version number in the header of the DuckDB file ``path`` (None: not a DuckDB file)."""
    with open(path, "rb") as handle:
        header = handle.read(VERSION_AT + 8)
    if len(header) < VERSION_AT + 8 or header[MAGIC_AT:MAGIC_AT + len(MAGIC)] != MAGIC:
        return None
    return int(struct.unpack("<Q", header[VERSION_AT:VERSION_AT + 8])[0])


def older_clients_read(path: Path | str) -> bool:
    """Whether DuckDB 1.4-1.5 clients open ``path`` (a file that is not DuckDB's counts as readable: nothing to rewrite)."""
    version = storage_version(path)
    return version is None or version in OLDER_CLIENTS_READ


def rewrite_if_newer(path: Path) -> bool:
    """Rewrite the DuckDB file ``path`` at :data:`STORAGE_COMPATIBILITY` when its storage version
    is newer than older clients read (every schema, table, view and comment copied); returns
    whether it was rewritten. ``path`` is replaced only once the rewrite is complete."""
    if older_clients_read(path):
        return False
    target = path.with_name(path.name + ".compat")
    with contextlib.suppress(FileNotFoundError):
        target.unlink()
    try:
        with connect(target) as con:
            con.execute(f"attach $path as {SOURCE_ALIAS} (read_only)", {"path": str(path)})
            con.execute(f"copy from database {SOURCE_ALIAS} to {_catalog(con)}")
            con.execute(f"detach {SOURCE_ALIAS}")
        os.replace(target, path)
    finally:
        with contextlib.suppress(FileNotFoundError):
            target.unlink()
    return True


def _catalog(con: duckdb.DuckDBPyConnection) -> str:
    """The name of ``con``'s own database (DuckDB names it after the file), quoted."""
    name = con.execute("select current_database()").fetchone()[0]
    return '"' + str(name).replace('"', '""') + '"'
