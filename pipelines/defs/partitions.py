"""The power logs as Dagster dynamic partitions: one partition per registered sampled log.

A partition's key is the log's manifest source id. The manifest is the register: the partitions
of an instance are brought in line with it (:func:`sync_power_logs`) by ``edge-carbon run``,
``edge-carbon register`` and :func:`pipelines.run.launch.materialise`, and, where a daemon
runs (``dagster dev``, the Kubernetes profile), by the :data:`power_log_partitions` sensor;
the UI shows them under the ``power_logs`` partitions of staging/power_samples.

Dagster recommends at most 100,000 partitions per asset; a fleet with more logs than that is
registered as one log per device and day (docs/scale.md).
"""

from __future__ import annotations

import dagster as dg

from pipelines.errors import EdgeCarbonError
from pipelines.ingest.manifest import entries_for

POWER_LOGS = dg.DynamicPartitionsDefinition(name="power_logs")
#: The table whose manifest entries are the partitions.
SAMPLES_TABLE = "staging.power_samples"
#: Dagster's recommended ceiling on the partitions of one asset.
MAX_PARTITIONS = 100_000


def registered_logs() -> list[str]:
    """The source ids of the sampled logs in the manifest, in manifest order."""
    return [entry.id for entry in entries_for(SAMPLES_TABLE)]


def sync_power_logs(instance: dg.DagsterInstance) -> list[str]:
    """Add a partition for every registered log the instance lacks, delete those of logs no
    longer registered; return the partition keys in the instance's order."""
    wanted = registered_logs()
    if len(wanted) > MAX_PARTITIONS:
        raise ValueError(
            f"{len(wanted):,} power logs are registered: Dagster recommends at most {MAX_PARTITIONS:,} partitions per asset; "
            "register a fleet's logs as one file per device and day (docs/scale.md)"
        )
    name = POWER_LOGS.name
    assert name is not None
    for request in partition_requests(instance.get_dynamic_partitions(name), wanted):
        if isinstance(request, dg.AddDynamicPartitionsRequest):
            instance.add_dynamic_partitions(name, list(request.partition_keys))
        else:
            for key in request.partition_keys:
                instance.delete_dynamic_partition(name, key)
    return instance.get_dynamic_partitions(name)


def partition_requests(have: list[str], wanted: list[str]) -> list[dg.AddDynamicPartitionsRequest | dg.DeleteDynamicPartitionsRequest]:
    """The requests that turn the partitions ``have`` into ``wanted`` (added in manifest order)."""
    present, keep = set(have), set(wanted)
    requests: list[dg.AddDynamicPartitionsRequest | dg.DeleteDynamicPartitionsRequest] = []
    gone = [key for key in have if key not in keep]
    if gone:
        requests.append(POWER_LOGS.build_delete_request(gone))
    new = [key for key in wanted if key not in present]
    if new:
        requests.append(POWER_LOGS.build_add_request(new))
    return requests


@dg.sensor(name="power_log_partitions", minimum_interval_seconds=60, default_status=dg.DefaultSensorStatus.RUNNING,
           description="Keeps the power_logs partitions in line with the manifest: a registered log gains its partition.")
def power_log_partitions(context: dg.SensorEvaluationContext) -> dg.SensorResult | dg.SkipReason:
    """A partition for every sampled log registered in the manifest, none for a log taken out."""
    try:
        wanted = registered_logs()
    except EdgeCarbonError as exc:  # a manifest being edited: try again at the next tick
        return dg.SkipReason(f"manifest not readable: {exc}")
    assert POWER_LOGS.name is not None
    requests = partition_requests(context.instance.get_dynamic_partitions(POWER_LOGS.name), wanted[:MAX_PARTITIONS])
    if not requests:
        return dg.SkipReason(f"{len(wanted):,} registered power logs, each with its partition")
    return dg.SensorResult(dynamic_partitions_requests=requests)
