"""The what-if figure: ``edge-carbon run --scenario realistic_consequential`` after a change to one of its
parameter rows (edited in a copy of sources/, then ``register --refresh``), on a copy of a built warehouse.

Each repeat starts from the same built warehouse (its folder copied, lake included) and a fresh Dagster
instance, so it times what a user waits for after editing a scenario: the definitions' load, the run of
every table downstream of the scenario's parameters for that scenario alone, and the publish.
"""

from __future__ import annotations

import os
import shutil
import statistics
import sys
import tempfile
from pathlib import Path

from bench.memory import run_measured
from bench.report import Report
from pipelines.paths import PROJECT_ROOT, SOURCES_DIR, SOURCES_ENV, WAREHOUSE_ENV

SCENARIO = "realistic_consequential"
#: The edited row: early replacement of the devices (0 -> 0.3 of owners), one of the scenario's own rows.
EDIT = ("\ndevice_replacement_share,0,fraction,", "\ndevice_replacement_share,0.3,fraction,")
TARGET_WHAT_IF_S = 8.0


def bench_what_if(report: Report, repeats: int, warehouse: Path) -> None:
    """Wall and CPU seconds of the what-if (median of ``repeats``), each on a fresh copy of ``warehouse``'s folder."""
    times, cpus = [], []
    for repeat in range(1, repeats + 1):
        with tempfile.TemporaryDirectory(prefix="edge_carbon_what_if_") as tmp_name:
            tmp = Path(tmp_name)
            sources = tmp / "sources"
            shutil.copytree(SOURCES_DIR, sources)
            scenario = sources / "scenarios" / f"{SCENARIO}.csv"
            text = scenario.read_text(encoding="utf-8")
            if EDIT[0] not in text:
                report.fatal.append(f"what-if: {scenario.name} no longer has the row the figure edits ({EDIT[0].strip()})")
                return
            scenario.write_text(text.replace(*EDIT), encoding="utf-8")
            copy = tmp / "warehouse" / warehouse.name
            shutil.copytree(warehouse.parent, copy.parent, ignore=shutil.ignore_patterns(".runs", "*.lock", "site"))
            env = {**os.environ, SOURCES_ENV: str(sources), WAREHOUSE_ENV: str(copy), "EDGE_CARBON_SITE": str(tmp / "site"),
                   "DAGSTER_HOME": str(tmp / "dagster_home")}
            refresh = run_measured([sys.executable, "-m", "pipelines.cli", "register", "--refresh", f"scenario_{SCENARIO}"],
                                   cwd=PROJECT_ROOT, env=env)
            proc = run_measured([sys.executable, "-m", "pipelines.cli", "run", "--scenario", SCENARIO], cwd=PROJECT_ROOT, env=env)
        if refresh.returncode != 0 or proc.returncode != 0:
            failed = refresh if refresh.returncode != 0 else proc
            report.fatal.append(f"what-if failed (exit {failed.returncode}): {failed.stderr.strip()[-2000:]}")
            report.add("what-if `edge-carbon run --scenario` (median)", "failed", f"<= {TARGET_WHAT_IF_S:g} s", False)
            return
        times.append(proc.seconds)
        cpus.append(proc.cpu_seconds)
        print(f"  repeat {repeat} what-if: {proc.seconds:.1f} s wall, {proc.cpu_seconds:.1f} s CPU", flush=True)
    median = round(statistics.median(times), 2)
    report.add(f"what-if `edge-carbon run --scenario {SCENARIO}` after one edited row (median of {len(times)}; spread "
               f"{min(times):.1f}-{max(times):.1f} s)", f"{median:.1f} s wall, {statistics.median(cpus):.1f} CPU s",
               f"<= {TARGET_WHAT_IF_S:g} s", median <= TARGET_WHAT_IF_S,
               what_if_s=median, what_if_runs_s=[round(t, 2) for t in times], what_if_cpu_s=round(statistics.median(cpus), 2))
