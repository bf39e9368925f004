"""The power logs as Dagster dynamic partitions: one partition per registered sampled log.

A partition's key is the log's manifest source id. The manifest is the register: the partitions
of an instance are brought in line with it (:func:`sync_power_logs`) by ``edge-carbon run``,
``edge-carbon register`` and :func:`pipelines.defs.launch.materialise`; ``dagster dev`` shows
them under the ``power_logs`` partitions of staging/power_samples.

Dagster recommends at most 100,000 partitions per asset; a fleet with more logs than that is
registered as one log per device and day (docs/scale.md).
"""

from __future__ import annotations

import dagster as dg

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
    have = instance.get_dynamic_partitions(name)
    keep = set(wanted)
    for key in [k for k in have if k not in keep]:
        instance.delete_dynamic_partition(name, key)
    present = set(have)
    missing = [k for k in wanted if k not in present]
    if missing:
        instance.add_dynamic_partitions(name, missing)
    return instance.get_dynamic_partitions(name)
