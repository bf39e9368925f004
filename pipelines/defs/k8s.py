"""The code location on Kubernetes: the same assets, jobs, schedules and resources as
:mod:`pipelines.defs.definitions`, with every step of a run in its own pod (``dagster-k8s``).

The code server of the profile in ``pipelines/deploy/k8s/`` loads this module
(``dagster api grpc -m pipelines.defs.k8s``); it needs the ``k8s`` extra. How it scales:
docs/scale.md.

Step pods share the run's working copy of the warehouse on the shared volume (the Warehouse
resource's ``launcher`` mode): the power-log ingest steps write Parquet side by side and open
no connection; every other step opens the copy in turn under a file lock. The run is published
by the :data:`publish_succeeded` run-status sensor once it has succeeded, and its copy
discarded by :data:`discard_failed` when it fails.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

import dagster as dg
from dagster_k8s import k8s_job_executor

from pipelines.defs.definitions import definitions
from pipelines.defs.resources import Warehouse
from pipelines.warehouse.database import publish_run

#: Step pods of one run at a time (the executor's ``max_concurrent``), by default and at most.
#: The ingest steps run side by side; the other steps take the working copy's lock in turn.
DEFAULT_CONCURRENT_STEPS = 4
MAX_CONCURRENT_STEPS = 16
#: The jobs whose runs the sensors publish (every job of the location writes the warehouse).
JOBS = ("build_warehouse", "grid_feeds")


def bounded_steps(config: Mapping[str, Any]) -> dict[str, Any]:
    """The executor's run config with ``max_concurrent`` between 1 and :data:`MAX_CONCURRENT_STEPS`
    (default :data:`DEFAULT_CONCURRENT_STEPS`); another value is refused before any pod starts."""
    asked = config.get("max_concurrent", DEFAULT_CONCURRENT_STEPS)
    if not 1 <= asked <= MAX_CONCURRENT_STEPS:
        raise ValueError(
            f"execution.config.max_concurrent is {asked}: 1 to {MAX_CONCURRENT_STEPS} step pods may run at once "
            "(docs/scale.md)"
        )
    return {**config, "max_concurrent": asked}


#: ``k8s_job_executor`` (same run config, same name), bounded even when a run is launched
#: without run config (a schedule, the UI's Materialize button).
step_pods = k8s_job_executor.configured(bounded_steps, name="k8s", config_schema=k8s_job_executor.config_schema)
#: The warehouse as step pods use it: the run's shared copy, published by the sensors below.
SHARED_WAREHOUSE = Warehouse(publish="launcher")


def _settle(run: dg.DagsterRun, *, ok: bool) -> bool:
    return publish_run(SHARED_WAREHOUSE.published, run.run_id, ok=ok, log=logging.getLogger("edge_carbon.k8s"))


@dg.run_status_sensor(run_status=dg.DagsterRunStatus.SUCCESS, name="publish_succeeded", minimum_interval_seconds=10,
                      description="Publishes the working copy of every run of this location that succeeded.")
def publish_succeeded(context: dg.RunStatusSensorContext) -> dg.SkipReason | None:
    """A succeeded run's shared working copy replaces the published warehouse."""
    if context.dagster_run.job_name in JOBS and _settle(context.dagster_run, ok=True):
        return None
    return dg.SkipReason(f"run {context.dagster_run.run_id} left no working copy to publish")


@dg.run_failure_sensor(name="discard_failed", minimum_interval_seconds=10,
                       description="Deletes the working copy of every run of this location that failed.")
def discard_failed(context: dg.RunFailureSensorContext) -> None:
    """A failed run's shared working copy is deleted; the published warehouse stays as it was."""
    if context.dagster_run.job_name in JOBS:
        _settle(context.dagster_run, ok=False)


defs = definitions(executor=step_pods, warehouse=SHARED_WAREHOUSE, sensors=[publish_succeeded, discard_failed])
