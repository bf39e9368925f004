"""The DuckDB warehouse: one private working database per run, published atomically.

Readers query ``warehouse/edge_carbon.duckdb`` (the *published* file). A run never opens
that file with DuckDB. Instead:

1. At run start the published file is copied to ``warehouse/.runs/<run_id>.duckdb``. The file
   holds the small tables, the lake's catalog and its views (pipelines/warehouse/lake.py); the
   power logs' samples are Parquet in ``warehouse/lake/``, never copied.
2. Every asset of the run writes through a connection to that copy (Parquet partitions are
   written as new files and listed in the copy's catalog).
3. When the run ends with no failed step, the copy's lake views are pointed at the current
   files, the lake is swept (:func:`pipelines.warehouse.lake.sweep`), the copy is checkpointed,
   closed and moved over the published file with an atomic ``os.replace``.

So a reader's open session never blocks a run (the run never locks the published file),
a run never breaks a reader (a reader keeps the inode it opened, and its files stay for the
lake's retention), and a run that fails or is killed part-way leaves the previous published
warehouse complete and unchanged.

On the in-process executor the run has one connection, opened and published by the
``Warehouse`` resource (:func:`working_copy`). On an executor with a process per step
(multiprocess, Kubernetes) each step opens the run's copy in turn under a file lock
(:func:`shared_copy`), and whoever launched the run publishes it when it has succeeded
(:func:`publish_run`).
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import shutil
import time
from collections.abc import Callable, Iterator
from logging import Logger
from pathlib import Path

import duckdb
import polars as pl

from pipelines.paths import warehouse_path
from pipelines.warehouse import lake
from pipelines.warehouse.duckdb_limits import pin
from pipelines.warehouse.dictionary import describe_warehouse
from schemas.grid_intensity import GridIntensity
from schemas.power_samples import PowerSamples
from schemas.raw_payloads import CarbonIntensityPayloads

SCHEMAS = ("staging", "quarantine", "core", "marts", "meta")
#: Working copies older than this, from runs that were killed, are swept at the next run start.
STALE_AFTER_S = 6 * 3600
#: The warehouse tables stored in the lake: each view's model, partition column and key.
LAKE_TABLES: dict[str, lake.LakeSpec] = {
    "staging.power_samples": lake.LakeSpec(PowerSamples, "source_id", pl.col("source_id")),
    "staging.grid_intensity_live": lake.LakeSpec(GridIntensity, "day", pl.col("period_start").dt.strftime("%Y-%m-%d")),
    "raw.carbon_intensity_payloads": lake.LakeSpec(CarbonIntensityPayloads, "fetched_day", pl.col("fetched_at").dt.strftime("%Y-%m-%d")),
}


def runs_dir(published: Path) -> Path:
    """Folder for the per-run working databases, beside the published file."""
    return published.parent / ".runs"


def work_path(published: Path, run_id: str) -> Path:
    """The working copy of run ``run_id``."""
    return runs_dir(published) / f"{lake.safe_name(run_id, 'run id')}.duckdb"


def scratch_dir(published: Path, run_id: str) -> Path:
    """Run ``run_id``'s scratch folder (files its steps hand to one another), beside its copy."""
    return runs_dir(published) / f"{lake.safe_name(run_id, 'run id')}.scratch"


def open_readonly(path: Path | str | None = None) -> duckdb.DuckDBPyConnection:
    """A read-only connection to the published warehouse (what analysts and dashboards use).

    The session time zone is UTC, so timestamps come back as UTC whatever the machine's zone.
    """
    con = pin(duckdb.connect(str(path or warehouse_path()), read_only=True))
    con.execute("set TimeZone = 'UTC'")
    return con


def sweep(published: Path) -> None:
    """Delete working copies older than :data:`STALE_AFTER_S` (left by runs that were killed)."""
    now = time.time()
    for stale in runs_dir(published).glob("*"):
        with contextlib.suppress(OSError):
            if now - stale.stat().st_mtime > STALE_AFTER_S:
                shutil.rmtree(stale) if stale.is_dir() else stale.unlink()


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


def _connect(work: Path) -> duckdb.DuckDBPyConnection:
    con = pin(duckdb.connect(str(work)))
    con.execute("set TimeZone = 'UTC'")
    for schema in SCHEMAS:
        con.execute(f"create schema if not exists {schema}")
    return con


def _start(published: Path, work: Path) -> None:
    """The runs folder, swept; ``work`` copied from ``published`` unless it exists already."""
    work.parent.mkdir(parents=True, exist_ok=True)
    sweep(published)
    if published.exists() and not work.exists():
        partial = work.with_name(work.name + ".partial")
        shutil.copyfile(published, partial)
        os.replace(partial, work)


def lake_views(con: duckdb.DuckDBPyConnection, published: Path, run_id: str = "adopted") -> None:
    """Every lake table as its view over the current files under ``published``'s lake (a table
    of a warehouse written before the lake is moved into it first)."""
    root = lake.lake_root(published)
    lake.ensure_catalog(con)
    for table, spec in LAKE_TABLES.items():
        if table != "staging.power_samples":  # the logs' samples are ingested again from their files
            lake.adopt(con, table, spec, root, run_id)
        lake.refresh_view(con, table, spec.model, root)


def prepare_lake(con: duckdb.DuckDBPyConnection, published: Path, log: Logger) -> None:
    """Point every lake view at the current files under ``published``'s lake, then sweep it."""
    root = lake.lake_root(published)
    lake_views(con, published)
    swept = lake.sweep(con, root, orphans=lake.orphan_scan_due(root))
    if any(swept.values()):
        log.info(f"lake swept: {swept['expired']} superseded file(s) past retention, {swept['orphans']} unlisted file(s)")


def _finish(con: duckdb.DuckDBPyConnection, work: Path, published: Path, ok: bool, log: Logger) -> None:
    """Publish ``work`` over ``published`` (``ok``) or delete it; ``con`` is closed either way."""
    try:
        if ok:
            prepare_lake(con, published, log)
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


@contextlib.contextmanager
def working_copy(
    published: Path, run_id: str, *, failed: Callable[[], bool], log: Logger
) -> Iterator[duckdb.DuckDBPyConnection]:
    """The run's read-write connection to its private copy of ``published``; published at the end.

    On exit the copy is described, checkpointed and moved over ``published`` unless
    ``failed()`` says a step of the run failed, in which case it is deleted and the previous
    published file stays as it was.
    """
    work = work_path(published, run_id)
    _start(published, work)
    con = _connect(work)
    try:
        yield con
    finally:
        _finish(con, work, published, not failed(), log)


@contextlib.contextmanager
def _locked(published: Path, run_id: str) -> Iterator[Path]:
    """An exclusive lock on run ``run_id``'s working copy (between the processes of its steps)."""
    work = work_path(published, run_id)
    work.parent.mkdir(parents=True, exist_ok=True)
    with open(work.with_name(work.name + ".lock"), "a+") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield work
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


@contextlib.contextmanager
def shared_copy(published: Path, run_id: str) -> Iterator[duckdb.DuckDBPyConnection]:
    """A step's connection to run ``run_id``'s working copy, shared with the run's other steps.

    The copy is made by the first step that asks; each step holds the lock while connected,
    so the steps of one run write one after another (their Parquet is written before).
    """
    with _locked(published, run_id) as work:
        _start(published, work)
        con = _connect(work)
        try:
            yield con
        finally:
            con.close()


def publish_run(published: Path, run_id: str, *, ok: bool, log: Logger) -> bool:
    """After a run whose steps used :func:`shared_copy`: publish its working copy (``ok``) or
    delete it. Returns whether a copy was published (a run that wrote nothing has none)."""
    with _locked(published, run_id) as work:
        if not work.exists():
            return False
        _finish(_connect(work), work, published, ok, log)
        shutil.rmtree(scratch_dir(published, run_id), ignore_errors=True)
        with contextlib.suppress(OSError):
            work.with_name(work.name + ".lock").unlink()
        return ok
