"""DuckDB's threads and memory limit, pinned where the build and the bench open a connection.

Left to itself DuckDB starts a thread per core it detects and lets its buffer pool grow to
80% of the machine's memory. Neither is a fixed figure: on a machine that reports more cores
than the process may use, or when a statement reads a large table through the buffer pool,
the peak memory follows the machine and the data rather than the work. Every connection the
build opens for the warehouse, its scratch databases and the Monte Carlo is therefore set to
:func:`cpu_budget` threads and :data:`BUILD_MEMORY_LIMIT` (the streamed power-log ingest sets
its own, smaller limit: :func:`pipelines.ingest.streaming.memory_limit_for`). Beyond its limit
DuckDB spills to its temporary directory.
"""

from __future__ import annotations

import os
from pathlib import Path

import duckdb

from pipelines.identifiers import checked_size

#: DuckDB's buffer pool for the build's connections (the whole process peaks below 2 GiB).
BUILD_MEMORY_LIMIT = "1GB"
#: Most threads DuckDB is given, whatever the machine reports.
MAX_THREADS = 8


def cpu_budget() -> int:
    """The CPUs this process may use: its affinity mask, capped by a cgroup v2 CPU quota and :data:`MAX_THREADS`."""
    try:
        cpus = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        cpus = os.cpu_count() or 1
    try:
        quota, period = Path("/sys/fs/cgroup/cpu.max").read_text(encoding="ascii").split()[:2]
        if quota != "max":
            cpus = min(cpus, max(1, int(int(quota) / int(period) + 0.5)))
    except (OSError, ValueError):
        pass
    return max(1, min(cpus, MAX_THREADS))


def pin(con: duckdb.DuckDBPyConnection, *, memory_limit: str = BUILD_MEMORY_LIMIT, threads: int | None = None) -> duckdb.DuckDBPyConnection:
    """Set ``con``'s threads (default :func:`cpu_budget`) and memory limit; return ``con``."""
    con.execute(f"set threads = {int(threads or cpu_budget())}")
    con.execute(f"set memory_limit = '{checked_size(memory_limit)}'")
    return con
