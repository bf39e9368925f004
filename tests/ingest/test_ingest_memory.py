"""Memory held by the ingest and the Monte Carlo, in fresh subprocesses (memory, not time).

The figures ``make bench`` reports at 273 MB and 2 GB, held here at a size the default suite
affords: a ~100 MB nvidia-smi log ingested as a power-log partition
(``python -m bench worker project``: digest, streamed checks, DuckDB staging, the Parquet file)
peaks at most 1.5x the file above the process's imports, and the Monte Carlo at 200,000 draws
(``python -m bench mc-peak``: draw, evaluate in DuckDB, the mart's summary) at most 600 MB above
them. Peak RSS does not move with machine load, so these are exact enough to assert.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from bench import nvidia_smi_log
from pipelines.paths import PROJECT_ROOT

#: About 100 MB of log (54.6 bytes a line).
SAMPLES = 1_830_000
MAX_FILE_X = 1.5
MC_DRAWS = 200_000
MAX_MC_BYTES = 600_000_000


def bench(*args: str) -> dict:
    """``python -m bench ARGS`` in a fresh process; its JSON line."""
    proc = subprocess.run([sys.executable, "-m", "bench", *args], cwd=PROJECT_ROOT, capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


@pytest.mark.slow  # over 10 s on 2 cores: CI runs it (MARKERS=all)
def test_a_100_mb_log_ingested_as_a_partition_peaks_under_1_5x_the_file(tmp_path: Path) -> None:
    log = nvidia_smi_log.write_log(tmp_path / "power.csv", SAMPLES)
    result = bench("worker", "project", str(log))
    size = log.stat().st_size
    assert result["file_bytes"] == size and 95e6 < size < 105e6
    peak = result["peak_rss"] - result["rss_after_imports"]
    assert peak <= MAX_FILE_X * size, f"peak {peak / 1e6:.0f} MB above imports is {peak / size:.2f}x the {size / 1e6:.0f} MB log"
    # the staged rows are all there: GPU 0 draws about 205 W for (polls - 1) steps of 102.5 ms on average
    polls = SAMPLES // 2
    assert sorted(result["energies_j"]) == ["gpu0", "gpu1"]
    assert result["energies_j"]["gpu0"] == pytest.approx(205.0 * (polls - 1) * 0.1025, rel=0.01)
    assert 24.0 * (polls - 1) * 0.1025 < result["energies_j"]["gpu1"] < result["energies_j"]["gpu0"]


@pytest.mark.slow  # over 10 s on 2 cores: CI runs it (MARKERS=all)
def test_the_monte_carlo_at_200_000_draws_peaks_under_600_mb(built_warehouse: Path) -> None:
    result = bench("mc-peak", str(built_warehouse), str(MC_DRAWS))
    assert result["draws"] == MC_DRAWS and result["groups"] == 12
    peak = result["peak_rss"] - result["rss_before"]
    assert 0 < peak <= MAX_MC_BYTES, f"the Monte Carlo peaked {peak / 1e6:.0f} MB above its imports"


def test_duckdb_memory_while_a_log_streams_follows_the_log_within_bounds() -> None:
    from pipelines.ingest.streaming import memory_limit_for, threads_for

    assert memory_limit_for(100_007_154) == "24MiB"  # the floor: 100 MB less the overhead is below it
    assert memory_limit_for(273_237_786) == "180MiB"  # 273 MB less 80 MiB
    assert memory_limit_for(2_022_000_000) == memory_limit_for(20_000_000_000) == "256MiB"  # the cap: flat beyond
    assert (threads_for(100_007_154, 2), threads_for(273_237_786, 2), threads_for(273_237_786, 8)) == (1, 2, 8)
