"""The cold build, its profile, the dashboards and the default test suite, each timed as a user runs them."""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from bench.memory import run_measured
from bench.report import Report
from pipelines.paths import PROJECT_ROOT, WAREHOUSE_ENV

TARGET_RUN_S = 15.0
TARGET_DASHBOARDS_S = 10.0
TARGET_TESTS_S = 90.0
#: The default test suite, as ``make test`` runs it (pyproject's addopts leave out the slow tests;
#: the Makefile's two pytest-xdist workers).
TEST_COMMAND = (sys.executable, "-m", "pytest", "-n", "2", "-q", "-p", "no:cacheprovider")


def bench_cold_run(report: Report, repeats: int, extra: tuple[str, ...] = (), keep: Path | None = None) -> Path | None:
    """Figure 2: wall and CPU time and peak memory of ``edge-carbon run [extra]`` into a fresh warehouse, median of repeats.

    Without ``extra`` this is what ``make run`` does, and the figure is reported as cold ``make run``
    (its median under the results file's ``cold_run_s``). With ``keep`` (a folder) the last
    repeat builds into it, and its warehouse is returned for the figures that read one.
    """
    label = " ".join(("edge-carbon run", *extra)) if extra else "make run"
    times: list[float] = []
    cpus: list[float] = []
    peaks: list[int] = []
    profiles: list[dict[str, Any]] = []
    warehouse = None
    for repeat in range(1, repeats + 1):
        with tempfile.TemporaryDirectory(prefix="edge_carbon_bench_") as tmp_name:
            tmp = keep if keep is not None and repeat == repeats else Path(tmp_name)
            warehouse = tmp / "edge_carbon.duckdb"
            env = {**os.environ, WAREHOUSE_ENV: str(warehouse), "EDGE_CARBON_SITE": str(tmp / "site"), "DAGSTER_HOME": str(tmp / "dagster_home")}
            proc = run_measured([sys.executable, "-m", "pipelines.cli", "run", *extra], cwd=PROJECT_ROOT, env=env)
            if proc.returncode == 0:
                profiles.append(run_profile(tmp / "dagster_home"))
        if proc.returncode != 0:
            report.fatal.append(f"edge-carbon run failed (exit {proc.returncode}): {proc.stderr.strip()[-2000:]}")
            report.add(f"cold `{label}` (median)", "failed", f"<= {TARGET_RUN_S:g} s", False)
            return None
        times.append(proc.seconds)
        cpus.append(proc.cpu_seconds)
        peaks.append(proc.peak_rss)
        print(f"  repeat {repeat} {label}: {proc.seconds:.1f} s wall, {proc.cpu_seconds:.1f} s CPU, peak {proc.peak_rss / 1e9:.2f} GB",
              flush=True)
    # the figures are shown from the values the results file keeps (2 decimals), so page and file agree
    median, cpu, peak = round(statistics.median(times), 2), round(statistics.median(cpus), 2), statistics.median(peaks)
    key = "cold_run_skip_dashboards" if extra else "cold_run"
    report.add(f"cold `{label}` (median of {len(times)}; spread {min(times):.1f}-{max(times):.1f} s)", f"{median:.1f} s",
               f"<= {TARGET_RUN_S:g} s", median <= TARGET_RUN_S, **{f"{key}_s": round(median, 2), f"{key}_runs_s": [round(t, 2) for t in times]})
    report.add(f"cold `{label}`: CPU seconds and peak memory of the process (medians)", f"{cpu:.1f} CPU s, {peak / 1e9:.2f} GB",
               **{f"{key}_cpu_s": round(cpu, 2), f"{key}_peak_gb": round(peak / 1e9, 3)})
    if profiles and all(p["steps"] for p in profiles):
        steps_s = statistics.median(p["steps_s"] for p in profiles)
        run_s = statistics.median(p["run_s"] for p in profiles)
        slowest: dict[str, list[float]] = {}
        for profile in profiles:
            for step, seconds in profile["steps"]:
                slowest.setdefault(step, []).append(seconds)
        top = sorted(((statistics.median(v), k) for k, v in slowest.items()), reverse=True)[:4]
        report.add(f"cold `{label}`: where the seconds go (medians): the run's events, its steps, the slowest steps",
                   f"{run_s:.1f} s of events (the rest: interpreter, imports, publish), {steps_s:.1f} s in steps; "
                   + ", ".join(f"{k} {v:.1f} s" for v, k in top),
                   **{f"{key}_events_s": round(run_s, 2), f"{key}_steps_s": round(steps_s, 2),
                      f"{key}_slowest_steps_s": {k: round(v, 2) for v, k in top}})
    return warehouse if keep is not None else None


def run_profile(dagster_home: Path) -> dict[str, Any]:
    """:func:`bench.run_profile.step_seconds` of the newest run at ``dagster_home``, in a subprocess (no steps if it fails)."""
    proc = subprocess.run([sys.executable, "-m", "bench", "steps", str(dagster_home)], cwd=PROJECT_ROOT, capture_output=True,
                          text=True, check=False, env={**os.environ, "DAGSTER_HOME": str(dagster_home)})
    if proc.returncode != 0 or not proc.stdout.strip():
        return {"steps": [], "steps_s": 0.0, "run_s": 0.0}
    return json.loads(proc.stdout.strip().splitlines()[-1])


def build_warehouse(report: Report, tmp: Path) -> Path | None:
    """A warehouse (and site) built into ``tmp`` by ``edge-carbon run``; None if the build fails."""
    warehouse = tmp / "edge_carbon.duckdb"
    env = {**os.environ, WAREHOUSE_ENV: str(warehouse), "EDGE_CARBON_SITE": str(tmp / "site0"), "DAGSTER_HOME": str(tmp / "dagster_home")}
    proc = subprocess.run(
        [sys.executable, "-m", "pipelines.cli", "run"], cwd=PROJECT_ROOT, env=env, capture_output=True, text=True, check=False
    )
    if proc.returncode != 0:
        report.fatal.append(f"edge-carbon run failed (exit {proc.returncode}): {proc.stderr.strip()[-2000:]}")
        return None
    return warehouse


def bench_dashboards(report: Report, repeats: int, warehouse: Path) -> None:
    """Figure 3: rendering every dashboard page from a built warehouse, median of repeats."""
    from dashboards import render_all

    with tempfile.TemporaryDirectory(prefix="edge_carbon_bench_") as tmp_name:
        tmp = Path(tmp_name)
        times: list[float] = []
        for repeat in range(1, repeats + 1):
            started = time.perf_counter()
            result = render_all(warehouse, Path(tmp) / f"site{repeat}")
            elapsed = time.perf_counter() - started
            times.append(elapsed)
            largest = max(page["bytes"] for page in result["pages"].values()) if result.get("pages") else 0
            print(f"  repeat {repeat} render all dashboards: {elapsed:.1f} s ({len(result['pages'])} pages, largest {largest / 1e6:.2f} MB)")
    median = statistics.median(times)
    report.add("render all dashboards (median)", f"{median:.1f} s", f"<= {TARGET_DASHBOARDS_S:g} s", median <= TARGET_DASHBOARDS_S,
               dashboards_s=round(median, 2))


def bench_tests(report: Report, repeats: int, command: tuple[str, ...] = TEST_COMMAND) -> None:
    """Figure 6: wall time of the default test suite (``command``) in a subprocess, median of repeats."""
    times: list[float] = []
    for repeat in range(1, repeats + 1):
        started = time.perf_counter()
        proc = subprocess.run(list(command), cwd=PROJECT_ROOT, capture_output=True, text=True, check=False)
        elapsed = time.perf_counter() - started
        lines = proc.stdout.strip().splitlines()
        summary = lines[-1] if lines else ""
        if proc.returncode != 0:  # 5 (no tests collected) too
            report.fatal.append(f"the test suite failed (exit {proc.returncode}): {proc.stdout.strip()[-2000:]}{proc.stderr.strip()[-1000:]}")
            report.add("default test suite `make test` (median)", "failed", f"<= {TARGET_TESTS_S:g} s", False)
            return
        times.append(elapsed)
        print(f"  repeat {repeat} default test suite: {elapsed:.1f} s ({summary.strip('= ')})")
    median = statistics.median(times)
    report.add(f"default test suite `make test` (median of {len(times)})", f"{median:.1f} s", f"<= {TARGET_TESTS_S:g} s",
               median <= TARGET_TESTS_S, suite_s=round(median, 1))
