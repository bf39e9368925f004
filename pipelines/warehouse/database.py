"""The DuckDB warehouse: one private working database per run, published atomically.

Readers query ``warehouse/edge_carbon.duckdb`` (the *published* file). A run never opens
that file with DuckDB. Instead:

0. A run that writes the warehouse takes the publish lock (``edge_carbon.duckdb.lock``,
   :func:`publish_lock`) and holds it until it has published or deleted its copy, so runs
   take turns and none loses another's update; a second run waits and says for which run.
1. At run start the published file is copied to ``warehouse/.runs/<run_id>.duckdb``, and the
   identity of the file copied recorded beside it (:mod:`pipelines.warehouse.generation`); a new
   file, and a copy of a file of a newer storage version, is written at a storage version every
   DuckDB client since 1.4 reads (:mod:`pipelines.warehouse.compat`). The file
   holds the small tables, the lake's catalog and its views (pipelines/warehouse/lake.py); the
   power logs' samples are Parquet in ``warehouse/lake/``, never copied.
2. Every asset of the run writes through a connection to that copy (Parquet partitions are
   written as new files and listed in the copy's catalog).
3. When the run ends with no failed step, the copy's lake views are pointed at the current
   files, the lake is swept (:func:`pipelines.warehouse.lake.sweep`), every file the views
   name is verified (:mod:`pipelines.warehouse.verify`), the publish is numbered in
   ``meta.generations``, the copy is checkpointed, closed and, if the published file is still
   the one it copied, moved over it with an atomic ``os.replace``. A run that fails or is
   refused deletes its copy at once.

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
import logging
import os
import shutil
import time
from collections.abc import Callable, Iterator
from logging import Logger
from pathlib import Path

import duckdb
import polars as pl

from pipelines import locks
from pipelines.errors import DamagedWarehouse
from pipelines.paths import warehouse_path
from pipelines.warehouse import compat, lake, verify
from pipelines.warehouse.duckdb_limits import pin
from pipelines.warehouse.dictionary import describe_warehouse
from pipelines.warehouse.generation import base_path, check_base, copy_published, forget_base, read_base, record_base, record_generation
from schemas.grid_intensity import GridIntensity
from schemas.power_samples import PowerSamples
from schemas.raw_payloads import CarbonIntensityPayloads

SCHEMAS = ("staging", "quarantine", "core", "marts", "meta")
#: Where the lake's repairs are logged when the caller gives no logger.
LOG = logging.getLogger("edge_carbon.warehouse")
#: Working copies older than this, from runs that were killed, are swept at the next run start.
STALE_AFTER_S = 6 * 3600
#: The warehouse tables stored in the lake: each view's model, partition column and key.
LAKE_TABLES: dict[str, lake.LakeSpec] = {
    "staging.power_samples": lake.LakeSpec(PowerSamples, "source_id", pl.col("source_id")),
    # by name: the curated-factor columns (factor_id ... notes) came after live files were first written
    "staging.grid_intensity_live": lake.LakeSpec(GridIntensity, "day", pl.col("period_start").dt.strftime("%Y-%m-%d"), union_by_name=True),
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


def lock_path(published: Path) -> Path:
    """The publish lock of ``published``: a file beside it (:mod:`pipelines.locks`)."""
    return published.with_name(published.name + ".lock")


@contextlib.contextmanager
def publish_lock(published: Path, holder: str, *, waiting: Callable[[str], object] = lambda _: None) -> Iterator[None]:
    """Hold the publish lock of ``published`` as ``holder`` (a run id, a command): one writing
    run at a time, from the copy of the published file to its publish. ``waiting`` is told
    when another holds it, and which."""
    with locks.held(lock_path(published), holder, what=f"the publish lock of {published}", waiting=waiting):
        yield


def _discard(work: Path) -> None:
    """Delete a run's working copy (if still there), its WAL and the record of its base."""
    for leftover in (work, Path(f"{work}.wal")):
        with contextlib.suppress(OSError):
            leftover.unlink()
    forget_base(work)


REBUILD_HINT = "edge-carbon run --rebuild starts again from an empty warehouse and lake and keeps this file and the old lake aside"


def _connect(work: Path, published: Path) -> duckdb.DuckDBPyConnection:
    """A read-write connection to ``work``; a copy that cannot be opened is deleted and
    reported as the published file's damage (:class:`DamagedWarehouse`)."""
    con = None
    try:
        con = pin(compat.connect(work))
        con.execute("set TimeZone = 'UTC'")
        for schema in SCHEMAS:
            con.execute(f"create schema if not exists {schema}")
    except duckdb.Error as exc:
        if con is not None:
            con.close()
        _discard(work)
        raise DamagedWarehouse(published, f"the published warehouse cannot be opened ({str(exc).splitlines()[0]}); {REBUILD_HINT}") from exc
    return con


def _start(published: Path, work: Path) -> None:
    """The runs folder, swept; ``work`` copied from ``published`` unless it exists already, with
    the identity of the file it copied recorded beside it (:mod:`pipelines.warehouse.generation`)."""
    work.parent.mkdir(parents=True, exist_ok=True)
    sweep(published)
    if work.exists() or base_path(work).exists():
        return
    partial = work.with_name(work.name + ".partial")
    try:
        identity = copy_published(published, partial)
        if identity is not None:
            with contextlib.suppress(duckdb.Error):  # a file that does not open is named as damaged by _connect
                compat.rewrite_if_newer(partial)  # published at a storage version older clients cannot read
            os.replace(partial, work)
    finally:
        with contextlib.suppress(OSError):
            partial.unlink()
    record_base(work, identity)


def lake_views(con: duckdb.DuckDBPyConnection, published: Path, run_id: str = "adopted", log: Logger | None = None) -> None:
    """Every lake table as its view over the current files under ``published``'s lake (a table
    of a warehouse written before the lake is moved into it first).

    The views name only files that are there: the rows on the repair list whose files are still
    broken are dropped first, with a warning (:func:`repair_lake`), and any other current file
    that is missing or of another size refuses (:class:`pipelines.errors.LakeFileError`, naming
    the file and its catalog row) before a view is made to name it."""
    root = lake.lake_root(published)
    lake.ensure_catalog(con)
    for table, spec in LAKE_TABLES.items():
        if table != "staging.power_samples":  # the logs' samples are ingested again from their files
            lake.adopt(con, table, spec, root, run_id)
    repair_lake(con, published, log or LOG)
    broken = verify.broken_files(con, root)
    if broken:
        raise verify.refuse(published, broken)
    for table, spec in LAKE_TABLES.items():
        lake.refresh_view(con, table, spec.model, root, union_by_name=spec.union_by_name)


def prepare_lake(con: duckdb.DuckDBPyConnection, published: Path, log: Logger) -> None:
    """Point every lake view at the current files under ``published``'s lake, then sweep it."""
    root = lake.lake_root(published)
    lake_views(con, published, log=log)
    swept = lake.sweep(con, root, orphans=lake.orphan_scan_due(root))
    if any(swept.values()):
        log.info(f"lake swept: {swept['expired']} superseded file(s) past retention, {swept['orphans']} unlisted file(s)")


def repair_lake(con: duckdb.DuckDBPyConnection, published: Path, log: Logger) -> None:
    """Drop, with a warning, the catalog rows on the repair list whose files are still broken
    (a power log's partition that the run's commit ingested again is no longer broken)."""
    due = {(item["table_name"], item["file"]) for item in verify.due_repairs(published)}
    if not due:
        return
    root = lake.lake_root(published)
    for item in verify.drop_rows(con, [b for b in verify.broken_files(con, root) if (b.table_name, b.file) in due]):
        again = f"; edge-carbon run --logs {item.partition_key} ingests it again" if item.table_name == "staging.power_samples" else ""
        log.warning(f"dropped from the lake's catalog: {item.line(root)}{again}")


def _prepare(con: duckdb.DuckDBPyConnection, work: Path, published: Path, run_id: str, log: Logger) -> int:
    """Before publishing ``work``: the lake views refreshed over files that are there (the repair
    list applied) and swept; the views the run changed verified (:mod:`pipelines.warehouse.verify`,
    LakeFileError when a file is broken); the generation recorded, the tables described and
    the copy checkpointed. Returns the generation."""
    prepare_lake(con, published, log)
    since = base.copied_at if (base := read_base(work)) else None
    tables = verify.changed_tables(con, run_id, since) if since else list(LAKE_TABLES)
    broken = verify.problems(con, lake.lake_root(published), run_id, tables, since, stat=False)
    if broken:
        raise verify.refuse(published, broken)
    generation = record_generation(con, run_id)
    describe(con, log)
    con.execute("checkpoint")
    return generation


def _finish(con: duckdb.DuckDBPyConnection, work: Path, published: Path, *, ok: bool, run_id: str, log: Logger) -> None:
    """Publish ``work`` over ``published`` (``ok``) or delete it; ``con`` is closed either way,
    and the working copy is gone afterwards whatever happened (published, refused or failed).

    The caller holds the publish lock. Before the replace, the published file must still be
    the one the run copied (:func:`pipelines.warehouse.generation.check_base`)."""
    try:
        try:
            generation = _prepare(con, work, published, run_id, log) if ok else 0
        finally:
            con.close()
        if ok:
            check_base(published, work)
            os.replace(work, published)
            verify.clear_repairs(published)
            log.info(f"published warehouse {published} (generation {generation})")
        else:
            log.info(f"run had failures: previous warehouse at {published} left unchanged")
    finally:
        _discard(work)


@contextlib.contextmanager
def working_copy(
    published: Path, run_id: str, *, failed: Callable[[], bool], log: Logger
) -> Iterator[duckdb.DuckDBPyConnection]:
    """The run's read-write connection to its private copy of ``published``; published at the end.

    The run holds the publish lock from before its copy to after its publish, so runs that
    write the warehouse take turns (a second run waits, and says for which run). On exit the
    copy is verified, described, checkpointed and moved over ``published`` unless ``failed()``
    says a step of the run failed (or the run raised), in which case it is deleted and the
    previous published file stays as it was.
    """
    with publish_lock(published, f"run {run_id}", waiting=log.warning):
        work = work_path(published, run_id)
        _start(published, work)
        con = _connect(work, published)
        ok = False
        try:
            yield con
            ok = True
        finally:
            _finish(con, work, published, ok=ok and not failed(), run_id=run_id, log=log)


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
        con = _connect(work, published)
        try:
            yield con
        finally:
            con.close()


def publish_run(published: Path, run_id: str, *, ok: bool, log: Logger, lock: bool = True) -> bool:
    """After a run whose steps used :func:`shared_copy`: publish its working copy (``ok``) or
    delete it. Returns whether a copy was published (a run that wrote nothing has none).

    ``lock``: take the publish lock for it (a run-status sensor); the launcher of a local run
    holds it already, from before the run's first step."""
    held = publish_lock(published, f"run {run_id}", waiting=log.warning) if lock else contextlib.nullcontext()
    with held, _locked(published, run_id) as work:
        try:
            if not work.exists():
                _discard(work)
                return False
            _finish(_connect(work, published), work, published, ok=ok, run_id=run_id, log=log)
            return ok
        finally:
            shutil.rmtree(scratch_dir(published, run_id), ignore_errors=True)
            with contextlib.suppress(OSError):
                work.with_name(work.name + ".lock").unlink()
