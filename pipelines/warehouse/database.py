"""The DuckDB warehouse: one private working database per run, published atomically.

Readers query ``warehouse/edge_carbon.duckdb`` (the *published* file). A run never opens
that file with DuckDB. Instead:

1. At run start the published file is copied to ``warehouse/.runs/<run_id>.duckdb``.
2. Every asset of the run writes through the run's single connection to that copy.
3. When the run ends with no failed step, the copy is checkpointed, closed and moved over
   the published file with an atomic ``os.replace``.

So a reader's open session never blocks a run (the run never locks the published file),
a run never breaks a reader (a reader keeps the inode it opened), and a run that fails or
is killed part-way leaves the previous published warehouse complete and unchanged.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import time
from collections.abc import Callable, Iterator
from logging import Logger
from pathlib import Path

import duckdb

from pipelines.paths import warehouse_path
from pipelines.warehouse.dictionary import describe_warehouse

SCHEMAS = ("staging", "quarantine", "core", "marts", "meta")
#: Working copies older than this, from runs that were killed, are swept at the next run start.
STALE_AFTER_S = 6 * 3600


def runs_dir(published: Path) -> Path:
    """Folder for the per-run working databases, beside the published file."""
    return published.parent / ".runs"


def open_readonly(path: Path | str | None = None) -> duckdb.DuckDBPyConnection:
    """A read-only connection to the published warehouse (what analysts and dashboards use).

    The session time zone is UTC, so timestamps come back as UTC whatever the machine's zone.
    """
    con = duckdb.connect(str(path or warehouse_path()), read_only=True)
    con.execute("set TimeZone = 'UTC'")
    return con


def sweep(published: Path) -> None:
    """Delete working copies older than :data:`STALE_AFTER_S` (left by runs that were killed)."""
    now = time.time()
    for stale in runs_dir(published).glob("*.duckdb*"):
        with contextlib.suppress(OSError):
            if now - stale.stat().st_mtime > STALE_AFTER_S:
                stale.unlink()


def describe(con: duckdb.DuckDBPyConnection, log: Logger) -> None:
    """Before publishing: comment every table and column (the data dictionary, pipelines/warehouse/dictionary.py).

    Comments are documentation: a failure to write them is logged and the run still publishes
    its data (the test suite requires every table and column to carry one).
    """
    try:
        missing = describe_warehouse(con)
    except (duckdb.Error, ValueError) as exc:
        log.error(f"data dictionary not written: {exc}")
        return
    if missing:
        log.warning(f"no comment for {len(missing)} table(s)/column(s): {', '.join(missing[:20])}")


@contextlib.contextmanager
def working_copy(
    published: Path, run_id: str, *, failed: Callable[[], bool], log: Logger
) -> Iterator[duckdb.DuckDBPyConnection]:
    """The run's read-write connection to its private copy of ``published``; published at the end.

    On exit the copy is described, checkpointed and moved over ``published`` unless
    ``failed()`` says a step of the run failed, in which case it is deleted and the previous
    published file stays as it was.
    """
    folder = runs_dir(published)
    folder.mkdir(parents=True, exist_ok=True)
    sweep(published)
    work = folder / f"{run_id}.duckdb"
    if published.exists():
        shutil.copyfile(published, work)
    con = duckdb.connect(str(work))
    con.execute("set TimeZone = 'UTC'")
    for schema in SCHEMAS:
        con.execute(f"create schema if not exists {schema}")
    try:
        yield con
    finally:
        ok = not failed()
        try:
            if ok:
                describe(con, log)
                con.execute("checkpoint")
        finally:
            con.close()
        if ok:
            os.replace(work, published)
            log.info(f"published warehouse {published}")
        else:
            log.warning(f"run had failures: previous warehouse at {published} left unchanged")
            with contextlib.suppress(OSError):
                work.unlink()
        with contextlib.suppress(OSError):
            Path(f"{work}.wal").unlink()
