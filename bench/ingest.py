"""Figure group 1: ingesting one large nvidia-smi log, each implementation in a fresh subprocess
(:mod:`bench.ingest_workers`), against DuckDB's read_csv floor and the pandas baseline."""

from __future__ import annotations

import json
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from bench.report import Report
from pipelines.paths import PROJECT_ROOT

SAMPLES = 5_000_000
#: The large log of figure 1 (about 2 GB): the project's implementation only.
LARGE_SAMPLES = 37_000_000
RTOL = 1e-6
#: The project's ingest against DuckDB's read_csv of the same file (wall time).
TARGET_FLOOR_X = 2.0
TARGET_MEMORY_X = 1.5


def worker(impl: str, path: Path) -> int:
    """Ingest ``path`` once with ``impl`` (:mod:`bench.ingest_workers`); print time, memory and per-GPU energies as JSON."""
    from bench.ingest_workers import measure

    print(json.dumps(measure(impl, path)))
    return 0


def run_worker(impl: str, path: Path) -> dict[str, Any]:
    """One fresh-subprocess ingest; its JSON result."""
    proc = subprocess.run(
        [sys.executable, "-m", "bench", "worker", impl, str(path)],
        cwd=PROJECT_ROOT,
        capture_output=True,
        text=True,
        check=False,
    )
    if proc.returncode != 0:
        raise RuntimeError(f"{impl} ingest failed (exit {proc.returncode}):\n{proc.stderr[-3000:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def generate_log(samples: int) -> Path:
    """The cached log of ``samples`` samples (:func:`bench.nvidia_smi_log.cached_log`), generated in a subprocess.

    Generating takes about 3.5x the log's size in memory. Done in this process, that peak would
    stay in it, and Linux reports a process's peak to its later subprocesses (``ru_maxrss``)
    as theirs: the cold run's figure would carry it.
    """
    proc = subprocess.run([sys.executable, "-m", "bench", "generate", str(samples)], cwd=PROJECT_ROOT, capture_output=True, text=True,
                          check=False)
    if proc.returncode != 0:
        raise RuntimeError(f"generating a {samples:,}-sample log failed (exit {proc.returncode}):\n{proc.stderr[-3000:]}")
    return Path(proc.stdout.strip().splitlines()[-1])


def parser_available() -> bool:
    """Whether the project's streaming nvidia-smi ingest and energy module can be imported."""
    from importlib.util import find_spec

    return find_spec("pipelines.ingest.streaming") is not None and find_spec("pipelines.ingest.energy.integration") is not None


def bench_ingest(report: Report, samples: int, repeats: int) -> float | None:
    """Figures 1: file size; the project's ingest against DuckDB's read_csv floor and pandas, medians; memory; energies.

    Returns the project ingest's peak memory as a multiple of the file size (None if it did not run).
    """
    started = time.perf_counter()
    path = generate_log(samples)
    made = time.perf_counter() - started
    size = path.stat().st_size
    print(f"nvidia-smi log: {path.relative_to(PROJECT_ROOT)}, {samples:,} samples, {size / 1e6:.1f} MB (ready in {made:.1f}s)")
    report.add("nvidia-smi log size", f"{size / 1e6:.1f} MB ({samples:,} samples)", ingest_file_mb=round(size / 1e6, 1))
    if not parser_available():
        report.add("project ingest", "not available (parser missing)", f"<= {TARGET_FLOOR_X:g}x the floor", False)
        return None
    impls = ["project", "duckdb", "pandas"]
    results: dict[str, list[dict[str, Any]]] = {impl: [] for impl in impls}
    for repeat in range(1, repeats + 1):
        for impl in impls:
            result = run_worker(impl, path)
            results[impl].append(result)
            print(
                f"  repeat {repeat} {impl:7}: {result['seconds']:7.2f} s wall, {result['cpu_seconds']:7.2f} s CPU, "
                f"peak {(result['peak_rss'] - result['rss_after_imports']) / 1e6:8.1f} MB above imports", flush=True
            )
    med = {impl: statistics.median(r["seconds"] for r in runs) for impl, runs in results.items()}
    mem = {impl: statistics.median(r["peak_rss"] - r["rss_after_imports"] for r in runs) for impl, runs in results.items()}
    cpu = {impl: statistics.median(r["cpu_seconds"] for r in runs) for impl, runs in results.items()}
    factor = mem["project"] / size
    floor_ratio = med["project"] / med["duckdb"]
    report.add("project ingest as a power-log partition: digest, parse, checks, energy, staged in DuckDB, Parquet (median)",
               f"{med['project']:.2f} s ({cpu['project']:.2f} CPU s)", ingest_s=round(med["project"], 3), ingest_cpu_s=round(cpu["project"], 3))
    report.add("floor: DuckDB read_csv of the same file into a table, nothing checked (median)",
               f"{med['duckdb']:.2f} s ({cpu['duckdb']:.2f} CPU s), peak {mem['duckdb'] / 1e6:.0f} MB ({mem['duckdb'] / size:.2f}x file)",
               ingest_floor_s=round(med["duckdb"], 3), ingest_floor_cpu_s=round(cpu["duckdb"], 3), ingest_floor_peak_memory_file_ratio=round(mem["duckdb"] / size, 3))
    report.add("project ingest / floor, wall time (CPU seconds)", f"{floor_ratio:.2f}x ({cpu['project'] / cpu['duckdb']:.2f}x)",
               f"<= {TARGET_FLOOR_X:g}x", floor_ratio <= TARGET_FLOOR_X,
               ingest_floor_ratio=round(floor_ratio, 3), ingest_floor_cpu_ratio=round(cpu["project"] / cpu["duckdb"], 3))
    report.add("pandas ingest, parse and integrate in memory, nothing checked or written (median)",
               f"{med['pandas']:.2f} s ({cpu['pandas']:.2f} CPU s), peak {mem['pandas'] / 1e6:.0f} MB ({mem['pandas'] / size:.2f}x file)",
               ingest_pandas_s=round(med["pandas"], 3), ingest_pandas_cpu_s=round(cpu["pandas"], 3), ingest_pandas_peak_memory_file_ratio=round(mem["pandas"] / size, 3))
    report.add("pandas / project ingest, wall time", f"{med['pandas'] / med['project']:.2f}x",
               ingest_pandas_ratio=round(med["pandas"] / med["project"], 3))
    report.add("project ingest peak memory above imports (median)", f"{mem['project'] / 1e6:.0f} MB ({factor:.2f}x file)",
               f"<= {TARGET_MEMORY_X:g}x file", factor <= TARGET_MEMORY_X,
               ingest_peak_memory_mb=round(mem["project"] / 1e6, 1), ingest_peak_memory_file_ratio=round(factor, 3))
    reference = results["pandas"][0]["energies_j"]
    worst = 0.0
    for impl in ("project", "pandas"):
        for run in results[impl]:
            if sorted(run["energies_j"]) != sorted(reference):
                report.fatal.append(f"{impl} reports channels {sorted(run['energies_j'])}, pandas {sorted(reference)}")
                continue
            for channel, energy in run["energies_j"].items():
                worst = max(worst, abs(energy - reference[channel]) / abs(reference[channel]))
    agree = worst <= RTOL and not report.fatal
    for channel in sorted(reference):
        print(f"  {channel}: project {results['project'][0]['energies_j'].get(channel, float('nan')):,.3f} J, pandas {reference[channel]:,.3f} J")
    report.add("energy agreement with pandas, every GPU", f"max rel diff {worst:.1e}", f"<= {RTOL:g}", agree, ingest_energy_max_rel_diff=worst)
    if not agree:
        report.fatal.append(f"project and pandas energies differ by {worst:.2e} relative (> {RTOL:g})")
    return factor


def bench_ingest_large(report: Report, samples: int, repeats: int, small_factor: float | None, small_samples: int = SAMPLES) -> None:
    """Figure 1, the ~2 GB log: the project's ingest only, peak memory as a multiple of the file, median of repeats."""
    started = time.perf_counter()
    path = generate_log(samples)
    made = time.perf_counter() - started
    size = path.stat().st_size
    print(f"large nvidia-smi log: {path.relative_to(PROJECT_ROOT)}, {samples:,} samples, {size / 1e6:,.0f} MB "
          f"(ready in {made:.1f}s); the project's ingest only")
    results = []
    for repeat in range(1, repeats + 1):
        result = run_worker("project", path)
        results.append(result)
        print(f"  repeat {repeat} project: {result['seconds']:7.2f} s wall, {result['cpu_seconds']:7.2f} s CPU, "
              f"peak {(result['peak_rss'] - result['rss_after_imports']) / 1e6:8.1f} MB above imports", flush=True)
    seconds = statistics.median(r["seconds"] for r in results)
    peak = statistics.median(r["peak_rss"] - r["rss_after_imports"] for r in results)
    factor = peak / size
    label = f"{size / 1e9:.1f} GB" if size >= 1e9 else f"{size / 1e6:,.0f} MB"
    report.add(f"project ingest, {label} log ({samples:,} samples) (median)", f"{seconds:.1f} s",
               large_ingest_file_mb=round(size / 1e6, 1), large_ingest_s=round(seconds, 3))
    relative = ""
    if small_factor:
        print(f"  peak memory as a multiple of the file: {factor:.2f}x here, {small_factor:.2f}x on the "
              f"{small_samples:,}-sample log; ratio {factor / small_factor:.2f}")
        relative = f"; {factor / small_factor:.2f}x the small log's factor"
    report.add(f"project ingest peak memory, {label} log", f"{peak / 1e6:.0f} MB ({factor:.2f}x file{relative})",
               f"<= {TARGET_MEMORY_X:g}x file, flat", factor <= TARGET_MEMORY_X,
               large_ingest_peak_memory_mb=round(peak / 1e6, 1), large_ingest_peak_memory_file_ratio=round(factor, 3))
