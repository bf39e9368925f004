"""The code location on Kubernetes: the same assets, jobs, schedules and resources as
:mod:`pipelines.defs.definitions`, with every step of a run in its own pod (``dagster-k8s``).

The code server of the profile in ``pipelines/deploy/k8s/`` loads this module
(``dagster api grpc -m pipelines.defs.k8s``); it needs the ``k8s`` extra. How it scales, and
what does not yet: docs/scale.md.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from dagster_k8s import k8s_job_executor

from pipelines.defs.definitions import definitions

#: Step pods of one run at a time. Every step writes the warehouse through the Warehouse
#: resource, one DuckDB file with one writer, so two steps must never write at once. Raised when
#: the warehouse writes Parquet per partition (docs/scale.md).
MAX_CONCURRENT_STEPS = 1


def one_writer(config: Mapping[str, Any]) -> dict[str, Any]:
    """The executor's run config with ``max_concurrent`` at most :data:`MAX_CONCURRENT_STEPS`
    (its default); a higher value is refused before any pod starts."""
    asked = config.get("max_concurrent", MAX_CONCURRENT_STEPS)
    if not 1 <= asked <= MAX_CONCURRENT_STEPS:
        raise ValueError(
            f"execution.config.max_concurrent is {asked}: 1 to {MAX_CONCURRENT_STEPS} step pod(s) "
            "may run at once while every step writes the one DuckDB warehouse (docs/scale.md)"
        )
    return {**config, "max_concurrent": asked}


#: ``k8s_job_executor`` (same run config, same name), one writer at a time even when a run is
#: launched without run config (a schedule, the UI's Materialize button).
step_pods = k8s_job_executor.configured(one_writer, name="k8s", config_schema=k8s_job_executor.config_schema)

defs = definitions(executor=step_pods)
