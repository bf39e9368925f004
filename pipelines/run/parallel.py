"""build_warehouse on Dagster's multiprocess executor, built once per process.

The executor's forkserver imports this module before it forks the step processes
(:data:`pipelines.run.launch.PRELOAD`), so each step finds the job built instead of loading
the definitions again.
"""

from __future__ import annotations

import dagster as dg

from pipelines.definitions import definitions

JOB = definitions(executor=dg.multiprocess_executor).resolve_job_def("build_warehouse")


def parallel_job() -> dg.JobDefinition:
    """build_warehouse on the multiprocess executor (what ``dg.reconstructable`` rebuilds in a worker)."""
    return JOB
