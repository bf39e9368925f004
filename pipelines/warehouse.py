"""The warehouse resource: one private working database per run, published atomically.

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
from collections.abc import Iterator
from pathlib import Path

import dagster as dg
import duckdb
import polars as pl
from pydantic import PrivateAttr

from pipelines.paths import WAREHOUSE_ENV, warehouse_path

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


class Warehouse(dg.ConfigurableResource):
    """DuckDB warehouse. ``path`` is the published file (env ``EDGE_CARBON_WAREHOUSE``)."""

    path: str = ""

    _con: duckdb.DuckDBPyConnection | None = PrivateAttr(default=None)
    _work: Path | None = PrivateAttr(default=None)

    @property
    def published(self) -> Path:
        return Path(self.path).resolve() if self.path else warehouse_path()

    def _sweep(self) -> None:
        folder = runs_dir(self.published)
        now = time.time()
        for stale in folder.glob("*.duckdb*"):
            with contextlib.suppress(OSError):
                if now - stale.stat().st_mtime > STALE_AFTER_S:
                    stale.unlink()

    @contextlib.contextmanager
    def yield_for_execution(self, context: dg.InitResourceContext) -> Iterator[Warehouse]:
        published = self.published
        folder = runs_dir(published)
        folder.mkdir(parents=True, exist_ok=True)
        self._sweep()
        run_id = context.run_id or f"adhoc-{os.getpid()}-{time.time_ns()}"
        work = folder / f"{run_id}.duckdb"
        if published.exists():
            shutil.copyfile(published, work)
        self._work = work
        self._con = duckdb.connect(str(work))
        self._con.execute("set TimeZone = 'UTC'")
        for schema in SCHEMAS:
            self._con.execute(f"create schema if not exists {schema}")
        try:
            yield self
        finally:
            con, self._con = self._con, None
            ok = not _run_failed(context)
            try:
                if ok:
                    _describe(con, context)
                    con.execute("checkpoint")
            finally:
                con.close()
            if ok:
                os.replace(work, published)
                context.log.info(f"published warehouse {published}")
            else:
                context.log.warning(f"run had failures: previous warehouse at {published} left unchanged")
                with contextlib.suppress(OSError):
                    work.unlink()
            with contextlib.suppress(OSError):
                Path(f"{work}.wal").unlink()

    def connection(self) -> duckdb.DuckDBPyConnection:
        """The run's single read-write connection (to its working copy)."""
        if self._con is None:
            raise RuntimeError(
                "the Warehouse resource is only usable inside a run; set "
                f"{WAREHOUSE_ENV} or pass Warehouse(path=...) and materialise through Dagster"
            )
        return self._con


def _describe(con: duckdb.DuckDBPyConnection, context: dg.InitResourceContext) -> None:
    """Before publishing: comment every table and column (the data dictionary, pipelines/dictionary.py).

    Comments are documentation: a failure to write them is logged and the run still publishes
    its data (the test suite requires every table and column to carry one).
    """
    # imported here: pipelines.dictionary imports the schemas, which import this module
    from pipelines.dictionary import describe_warehouse

    try:
        missing = describe_warehouse(con)
    except (duckdb.Error, ValueError) as exc:
        context.log.error(f"data dictionary not written: {exc}")
        return
    if missing:
        context.log.warning(f"no comment for {len(missing)} table(s)/column(s): {', '.join(missing[:20])}")


def _run_failed(context: dg.InitResourceContext) -> bool:
    """True when any step of the current run has failed so far."""
    instance, run_id = context.instance, context.run_id
    if instance is None or run_id is None:
        return False
    records = instance.get_records_for_run(run_id, of_type=dg.DagsterEventType.STEP_FAILURE, limit=1)
    return bool(records.records)


def query_pl(con: duckdb.DuckDBPyConnection, sql: str, params: dict | list | None = None) -> pl.DataFrame:
    """Run a query with bound parameters and return a polars frame."""
    table = con.sql(sql, params=params).to_arrow_table()
    return pl.from_arrow(table)  # type: ignore[return-value]
