"""What ``edge-carbon unregister`` does beyond the manifest for a power log: its lake files retired.

The manifest entry goes first (:mod:`pipelines.ingest.unregister`) and the log's Dagster
partition with it (:func:`pipelines.defs.partitions.sync_power_logs`); then the published
warehouse's lake stops naming the log's files, as the next build's commit would do it.
"""

from __future__ import annotations

import logging
import uuid
from pathlib import Path

from pipelines.defs.partitions import registered_logs
from pipelines.warehouse import verify
from pipelines.warehouse.database import open_readonly, working_copy
from pipelines.warehouse.power_log_lake import commit_logs
from pipelines.warehouse.power_logs import SAMPLES_TABLE

LOG = logging.getLogger("edge_carbon.unregister")


def retire_logs(published: Path) -> list[str]:
    """In the published warehouse, retire the lake partitions of power logs no longer registered,
    with :func:`pipelines.warehouse.power_log_lake.commit_logs` (what a build's commit does): their
    catalog rows superseded, so the samples view stops naming their files (the lake's sweep
    deletes them after its retention), and their runs and rejected rows dropped. It goes
    through a working copy, published as a run's is. Nothing happens when no published lake
    names such a log. Returns the retired keys."""
    if not published.is_file():
        return []
    registered = registered_logs()
    with open_readonly(published) as con:
        current = {row[1] for row in verify.current_rows(con, SAMPLES_TABLE)}
    if not current - set(registered):
        return []
    with working_copy(published, f"unregister-{uuid.uuid4().hex[:12]}", failed=lambda: False, log=LOG) as con:
        return commit_logs(con, [], published=published, registered=registered)
