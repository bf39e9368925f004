"""The code location's resources: the warehouse (a run's working copy of the DuckDB file,
pipelines/warehouse/database.py) and the grid-feed clients (pipelines/ingest/feeds/)."""

from __future__ import annotations

import contextlib
import os
import shutil
import time
from collections.abc import Iterator, Sequence
from pathlib import Path

import dagster as dg
import duckdb
import polars as pl
from pydantic import PrivateAttr

from pipelines.ingest.feeds.electricitymaps import (
    ElectricityMapsApi,
    ElectricityMapsFeed,
    RecordedElectricityMaps,
)
from pipelines.ingest.feeds.uk_carbon_intensity import (
    RecordedUkCarbonIntensity,
    UkCarbonIntensityApi,
    UkCarbonIntensityFeed,
)
from pipelines.paths import WAREHOUSE_ENV, warehouse_path
from pipelines.warehouse.database import scratch_dir, shared_copy, working_copy
from pipelines.warehouse.queries import read_pl, table_exists
from pipelines.warehouse.scenario_scope import restore_other_scenarios

#: Who publishes a run's working copy (:class:`Warehouse`).
PUBLISH_MODES = ("run", "launcher")
#: ``live`` (default) or ``recorded``: which clients the code location binds.
FEEDS_ENV = "EDGE_CARBON_FEEDS"


class Warehouse(dg.ConfigurableResource):
    """DuckDB warehouse. ``path`` is the published file (env ``EDGE_CARBON_WAREHOUSE``).

    ``publish`` says who publishes the run's working copy: ``run`` (default, the in-process
    executor: the resource opens the copy when the run starts and publishes it when the run
    ends) or ``launcher`` (an executor with a process per step: each step opens the run's shared
    copy when it first asks for the connection, under a lock, and the launcher publishes the
    run once it has succeeded: :func:`pipelines.run.launch.materialise`, or the Kubernetes
    profile's run-status sensor).
    """

    path: str = ""
    publish: str = "run"

    _con: duckdb.DuckDBPyConnection | None = PrivateAttr(default=None)
    _shared: contextlib.ExitStack | None = PrivateAttr(default=None)
    _run_id: str = PrivateAttr(default="")
    _scope: tuple[str, ...] = PrivateAttr(default=())

    @property
    def published(self) -> Path:
        return Path(self.path).resolve() if self.path else warehouse_path()

    def scratch(self, run_id: str) -> Path:
        """A folder for the run's scratch files (beside its working copy; removed with it)."""
        return scratch_dir(self.published, run_id)

    @contextlib.contextmanager
    def yield_for_execution(self, context: dg.InitResourceContext) -> Iterator[Warehouse]:
        if self.publish not in PUBLISH_MODES:
            raise ValueError(f"Warehouse.publish must be one of {PUBLISH_MODES}, not {self.publish!r}")
        run_id = context.run_id or f"adhoc-{os.getpid()}-{time.time_ns()}"
        if self.publish == "launcher":
            self._run_id = run_id
            try:
                yield self
            finally:
                if self._shared is not None:
                    self._shared.close()
                self._shared = self._con = None
            return
        try:
            with working_copy(self.published, run_id, failed=lambda: _run_failed(context), log=context.log) as con:
                self._con = con
                try:
                    yield self
                    if self._scope and not _run_failed(context):
                        restored = restore_other_scenarios(con, self.published, self._scope)
                        context.log.info(f"what-if over {', '.join(self._scope)}: every other scenario's rows kept as published "
                                         f"({sum(restored.values()):,} rows in {len(restored)} tables)")
                finally:
                    self._con = None
                    self._scope = ()
        finally:
            shutil.rmtree(self.scratch(run_id), ignore_errors=True)

    @property
    def scope(self) -> tuple[str, ...]:
        """The scenarios this run computes alone (a what-if), or () for every one."""
        return self._scope

    def limit_to_scenarios(self, scenarios: Sequence[str]) -> None:
        """Make this run a what-if over ``scenarios``: they are the only scenarios its steps compute,
        and every other scenario keeps its published rows (:mod:`pipelines.warehouse.scenario_scope`).
        Only a run that publishes its own copy (``publish="run"``, the in-process executor) can."""
        if self.publish != "run":
            raise ValueError("a what-if over some scenarios runs on the in-process executor (edge-carbon run --scenario ID)")
        self._scope = tuple(scenarios)

    def read(self, sql: str, params: dict | list | None = None) -> pl.DataFrame:
        """Run a query (SELECT only, :func:`pipelines.warehouse.queries.read_pl`) on the run's
        connection: what asset checks use, so a check never changes the warehouse."""
        return read_pl(self.connection(), sql, params)

    def has_table(self, table: str) -> bool:
        """Whether ``schema.table`` exists in the run's warehouse."""
        return table_exists(self.connection(), table)

    def connection(self) -> duckdb.DuckDBPyConnection:
        """The run's read-write connection to its working copy (``launcher``: this step's, opened
        on first use and held, with the copy's lock, until the step ends)."""
        if self._con is None and self.publish == "launcher" and self._run_id:
            self._shared = contextlib.ExitStack()
            self._con = self._shared.enter_context(shared_copy(self.published, self._run_id))
        if self._con is None:
            raise RuntimeError(
                "the Warehouse resource is only usable inside a run; set "
                f"{WAREHOUSE_ENV} or pass Warehouse(path=...) and materialise through Dagster"
            )
        return self._con


def _run_failed(context: dg.InitResourceContext) -> bool:
    """True when any step of the current run has failed so far."""
    instance, run_id = context.instance, context.run_id
    if instance is None or run_id is None:
        return False
    records = instance.get_records_for_run(run_id, of_type=dg.DagsterEventType.STEP_FAILURE, limit=1)
    return bool(records.records)


def feed_resources(mode: str | None = None) -> dict[str, UkCarbonIntensityFeed | ElectricityMapsFeed]:
    """Resources ``uk_carbon_intensity`` and ``electricitymaps`` (the clients themselves, taken by
    the assets as ``dg.ResourceParam``): live, or the recorded replays.

    ``mode`` defaults to ``$EDGE_CARBON_FEEDS`` or ``live``. Live Electricity Maps has no zones
    until configured (so no token is needed by default).
    """
    chosen = (mode or os.environ.get(FEEDS_ENV) or "live").strip().lower()
    if chosen == "recorded":
        return {"uk_carbon_intensity": RecordedUkCarbonIntensity(), "electricitymaps": RecordedElectricityMaps()}
    if chosen != "live":
        raise ValueError(f"{FEEDS_ENV} must be 'live' or 'recorded', not {chosen!r}")
    return {"uk_carbon_intensity": UkCarbonIntensityApi(), "electricitymaps": ElectricityMapsApi()}
