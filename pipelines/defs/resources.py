"""The code location's resources: the warehouse (a run's working copy of the DuckDB file,
pipelines/warehouse/database.py) and the grid-feed clients (pipelines/ingest/feeds/)."""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Iterator
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
from pipelines.warehouse.database import working_copy
from pipelines.warehouse.queries import read_pl, table_exists

#: ``live`` (default) or ``recorded``: which clients the code location binds.
FEEDS_ENV = "EDGE_CARBON_FEEDS"


class Warehouse(dg.ConfigurableResource):
    """DuckDB warehouse. ``path`` is the published file (env ``EDGE_CARBON_WAREHOUSE``)."""

    path: str = ""

    _con: duckdb.DuckDBPyConnection | None = PrivateAttr(default=None)

    @property
    def published(self) -> Path:
        return Path(self.path).resolve() if self.path else warehouse_path()

    @contextlib.contextmanager
    def yield_for_execution(self, context: dg.InitResourceContext) -> Iterator[Warehouse]:
        run_id = context.run_id or f"adhoc-{os.getpid()}-{time.time_ns()}"
        with working_copy(self.published, run_id, failed=lambda: _run_failed(context), log=context.log) as con:
            self._con = con
            try:
                yield self
            finally:
                self._con = None

    def read(self, sql: str, params: dict | list | None = None) -> pl.DataFrame:
        """Run a query (SELECT only, :func:`pipelines.warehouse.queries.read_pl`) on the run's
        connection: what asset checks use, so a check never changes the warehouse."""
        return read_pl(self.connection(), sql, params)

    def has_table(self, table: str) -> bool:
        """Whether ``schema.table`` exists in the run's warehouse."""
        return table_exists(self.connection(), table)

    def connection(self) -> duckdb.DuckDBPyConnection:
        """The run's single read-write connection (to its working copy)."""
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
