"""The code location on Kubernetes: the same assets, jobs, schedules and resources as
:mod:`pipelines.definitions`, with every step of a run in its own pod (``dagster-k8s``).

The code server of the profile in ``pipelines/deploy/k8s/`` loads this module
(``dagster api grpc -m pipelines.run.k8s``); it needs the ``k8s`` extra. How it scales:
docs/scale.md.

Step pods share the run's working copy of the warehouse on the shared volume (the Warehouse
resource's ``launcher`` mode): the power-log ingest steps write Parquet side by side and open
no connection; every other step opens the copy in turn under a file lock. The run is published
by the :data:`publish_succeeded` run-status sensor once it has succeeded (under the publish
lock on the shared volume, and only over the published file its copy was made from: a run
whose warehouse moved on meanwhile is launched again), and its copy discarded by
:data:`discard_failed` when it fails.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

import dagster as dg
from dagster_k8s import k8s_job_executor

from pipelines.definitions import build_warehouse, definitions
from pipelines.defs.schedules import grid_feeds_job
from pipelines.errors import EdgeCarbonError, StalePublish
from pipelines.lib.resources import Warehouse
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


#: Run tag naming the run whose publish was refused and that this one redoes on the newer warehouse.
REBASE_TAG = "edge_carbon/rebase_of"
#: Dagster's own run tags that a run launched again keeps: the partition range it covers.
KEPT_TAGS = ("dagster/asset_partition_range_start", "dagster/asset_partition_range_end", "dagster/partition")


def relaunch(run: dg.DagsterRun) -> dg.RunRequest:
    """The same run again (job, assets, checks, partitions, config), for a run whose publish was
    refused because the warehouse moved on after it copied it: its work redone on the newer state."""
    tags = {key: value for key, value in run.tags.items() if not key.startswith("dagster/") or key in KEPT_TAGS}
    return dg.RunRequest(
        run_key=f"rebase:{run.run_id}", job_name=run.job_name, run_config=dict(run.run_config or {}),
        tags={**tags, REBASE_TAG: run.run_id},
        asset_selection=sorted(run.asset_selection, key=lambda k: k.to_user_string()) if run.asset_selection else None,
        asset_check_keys=sorted(run.asset_check_selection, key=str) if run.asset_check_selection else None,
    )


def _settle(run: dg.DagsterRun, *, ok: bool) -> dg.RunRequest | dg.SkipReason | None:
    """Publish (``ok``) or discard the run's shared copy, under the publish lock. A publish refused
    because the published file is newer than the run's copy is launched again
    (:func:`relaunch`); one refused for a broken lake file is logged. Either way the copy is
    deleted and the published warehouse left as it was."""
    log = logging.getLogger("edge_carbon.k8s")
    try:
        if publish_run(SHARED_WAREHOUSE.published, run.run_id, ok=ok, log=log) or not ok:
            return None
    except StalePublish as exc:
        log.warning(f"run {run.run_id} not published, launched again on the newer warehouse: {exc}")
        return relaunch(run)
    except EdgeCarbonError as exc:
        log.error(f"run {run.run_id} not published: {exc}")
        return dg.SkipReason(f"run {run.run_id} not published: {exc}")
    return dg.SkipReason(f"run {run.run_id} left no working copy to publish")


@dg.run_status_sensor(run_status=dg.DagsterRunStatus.SUCCESS, name="publish_succeeded", minimum_interval_seconds=10,
                      request_jobs=[build_warehouse, grid_feeds_job],
                      description="Publishes the working copy of every run of this location that succeeded (under the "
                                  "publish lock); a run whose warehouse moved on meanwhile is launched again.")
def publish_succeeded(context: dg.RunStatusSensorContext) -> dg.RunRequest | dg.SkipReason | None:
    """A succeeded run's shared working copy replaces the published warehouse."""
    if context.dagster_run.job_name not in JOBS:
        return dg.SkipReason(f"run {context.dagster_run.run_id} is not of {', '.join(JOBS)}")
    return _settle(context.dagster_run, ok=True)


@dg.run_failure_sensor(name="discard_failed", minimum_interval_seconds=10,
                       description="Deletes the working copy of every run of this location that failed.")
def discard_failed(context: dg.RunFailureSensorContext) -> None:
    """A failed run's shared working copy is deleted; the published warehouse stays as it was."""
    if context.dagster_run.job_name in JOBS:
        _settle(context.dagster_run, ok=False)


defs = definitions(executor=step_pods, warehouse=SHARED_WAREHOUSE, sensors=[publish_succeeded, discard_failed])
