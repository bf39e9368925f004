"""The three sides of the ingest figure, each run by ``python -m bench worker IMPL PATH`` in a fresh process.

* ``project``: what a power-log partition does with an nvidia-smi log larger than one block
  (``pipelines.warehouse.power_logs.ingest_logs``): verify the file's digest, stream it
  through a scratch DuckDB database (parse in blocks, the plausibility and duplicate checks,
  the pandera row checks, the trapezoid per channel), copy the staged rows to the partition's
  Parquet file, and write the run and rejects for the commit.
* ``duckdb``: the floor. DuckDB's own ``read_csv`` of the same file into a table of a
  database file, nothing checked (its power column stays text).
* ``pandas``: :mod:`bench.pandas_baseline`, parse and integrate in memory, nothing checked
  or written.

Each worker first ingests a 2,000-sample log the same way, so that what the ingest imports on
first use (pandera's backends) and its thread pools count as imports, then reads its RSS: the
peak reported is the process's peak above that, so it is what the log itself costs.
"""

from __future__ import annotations

import datetime as dt
import os
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from bench.memory import cpu_seconds, current_rss_bytes, peak_rss_bytes
from pipelines.paths import WAREHOUSE_ENV

IMPLS = ("project", "duckdb", "pandas")
#: Samples of the log each worker ingests before it reads its baseline.
WARM_UP_SAMPLES = 2_000


Energies = Callable[[], dict[str, float]]


def project_ingest(path: Path, scratch: Path) -> Energies:
    """Ingest ``path`` as a power-log partition into a lake under ``scratch``; what reads ``{channel: energy_j}`` back."""
    import polars as pl

    from pipelines.ingest.digests import sha256_of
    from pipelines.ingest.manifest import SourceEntry
    from pipelines.warehouse.power_log_lake import ingest_logs
    from pipelines.warehouse.power_logs import SAMPLES_TABLE

    entry = SourceEntry(id="bench_log", path=path.name, title="bench log", url="https://example.invalid/bench", license="CC0-1.0",
                        retrieved_on=dt.date(2026, 1, 1), sha256=sha256_of(path), kind="nvidia_smi",
                        table=SAMPLES_TABLE, status="primary", options={"timezone": "UTC", "run_id": "bench"}, root=path.parent)
    published = scratch / "warehouse" / "edge_carbon.duckdb"
    (ingested,) = ingest_logs([entry], published=published, run_id=f"bench-{time.time_ns()}", scratch=scratch / "scratch")
    written = published.parent / "lake" / ingested.samples.file

    def energies() -> dict[str, float]:
        # the partition's run holds the total; the per-GPU energies are integrated from its file
        from pipelines.ingest.energy.integration import integrate

        result = integrate(pl.read_parquet(written), per_channel=True)
        return {str(row["channel"]): float(row["energy_j"]) for row in result.iter_rows(named=True)}

    return energies


def duckdb_floor(path: Path, scratch: Path) -> Energies:
    """DuckDB's ``read_csv`` of ``path`` into a table of a database file; no energies (it checks and integrates nothing)."""
    import duckdb

    from pipelines.warehouse.duckdb_limits import cpu_budget

    con = duckdb.connect(str(scratch / "floor.duckdb"))
    try:
        con.execute(f"set threads = {cpu_budget()}")
        con.execute("create table samples as select * from read_csv($path, header = true)", {"path": str(path)})
    finally:
        con.close()
    return dict


def pandas_ingest(path: Path, scratch: Path) -> Energies:
    """:func:`bench.pandas_baseline.ingest`; what gives ``{channel: energy_j}``."""
    from bench.pandas_baseline import ingest

    frame = ingest(path, "UTC")
    energies = dict(zip(frame["channel"].astype(str), frame["energy_j"].astype(float), strict=True))
    return lambda: energies


RUNNERS: dict[str, Callable[[Path, Path], Energies]] = {"project": project_ingest, "duckdb": duckdb_floor, "pandas": pandas_ingest}


def measure(impl: str, path: Path) -> dict[str, Any]:
    """Warm up, then ingest ``path`` once with ``impl``: wall and CPU seconds, RSS after the warm-up, peak RSS, energies."""
    from bench.nvidia_smi_log import write_log

    if impl not in RUNNERS:
        raise SystemExit(f"unknown implementation {impl!r}: one of {', '.join(IMPLS)}")
    run = RUNNERS[impl]
    with tempfile.TemporaryDirectory(prefix="edge_carbon_ingest_") as tmp_name:
        tmp = Path(tmp_name)
        # the digest record goes beside this scratch warehouse, not the project's
        os.environ[WAREHOUSE_ENV] = str(tmp / "warehouse" / "edge_carbon.duckdb")
        (tmp / "warm").mkdir()
        run(write_log(tmp / "warm" / "warm.csv", WARM_UP_SAMPLES), tmp / "warm")
        (tmp / "log").mkdir()
        baseline = current_rss_bytes()
        cpu_before = cpu_seconds()
        started = time.perf_counter()
        finish = run(path, tmp / "log")
        seconds = time.perf_counter() - started
        cpu = cpu_seconds() - cpu_before
        peak = max(peak_rss_bytes(), current_rss_bytes())
        energies = finish()  # read after the peak: checking the result is not part of the ingest
    return {"impl": impl, "seconds": seconds, "cpu_seconds": cpu, "rss_after_imports": baseline, "peak_rss": peak,
            "energies_j": energies, "file_bytes": path.stat().st_size}
