"""The cold build paired with a reference commit's, run by run.

The reference commit's tree is extracted once (``git archive``) into ``bench/out/reference-<commit>/``
and built from there with this checkout's interpreter and packages (its own ``pipelines`` first on
``PYTHONPATH``, its own ``sources/``). Each repeat runs the reference's cold ``edge-carbon run``,
then this checkout's, each into a fresh warehouse and Dagster instance, so a busy spell of the
machine weighs on both of a pair alike; the figure is the median of the pairs' CPU ratios.
"""

from __future__ import annotations

import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from bench.memory import Measured, run_measured
from bench.report import Report
from pipelines.paths import PROJECT_ROOT, WAREHOUSE_ENV

#: The commit the cold build is compared with (the main of three issues before the one that set the target).
DEFAULT_REFERENCE = "8a630d1"
#: This checkout's cold-run CPU seconds over the reference's, at most.
TARGET_CPU_RATIO = 0.7
#: Marks a completely extracted tree.
EXTRACTED = ".extracted"


def resolve(commit: str, repo: Path = PROJECT_ROOT) -> str:
    """The full hash of ``commit`` (a hash, a prefix or a ref) in ``repo``; ValueError when git does not know it."""
    done = subprocess.run(["git", "rev-parse", "--verify", "--quiet", f"{commit}^{{commit}}"], cwd=repo,
                          capture_output=True, text=True, check=False)
    if done.returncode != 0 or not done.stdout.strip():
        raise ValueError(f"reference commit {commit!r} is not in this repository's history (git rev-parse)")
    return done.stdout.strip()


def extract(commit: str, out_dir: Path, repo: Path = PROJECT_ROOT) -> Path:
    """The tree of ``commit`` (a full hash) in ``out_dir/reference-<12 hex>/``, extracted once and kept."""
    dest = out_dir / f"reference-{commit[:12]}"
    if (dest / EXTRACTED).is_file():
        return dest
    shutil.rmtree(dest, ignore_errors=True)
    dest.mkdir(parents=True)
    archive = subprocess.Popen(["git", "archive", "--format=tar", commit], cwd=repo, stdout=subprocess.PIPE)
    untar = subprocess.run(["tar", "-x", "-C", str(dest)], stdin=archive.stdout, capture_output=True, check=False)
    if archive.wait() != 0 or untar.returncode != 0:
        shutil.rmtree(dest, ignore_errors=True)
        raise RuntimeError(f"could not extract {commit[:12]}: {untar.stderr.decode(errors='replace')[-500:]}")
    (dest / EXTRACTED).write_text(commit + "\n", encoding="utf-8")
    return dest


def cold_run(root: Path, tmp: Path) -> Measured:
    """``edge-carbon run`` of the tree at ``root`` into a fresh warehouse and Dagster instance below ``tmp``."""
    env = {**os.environ, WAREHOUSE_ENV: str(tmp / "edge_carbon.duckdb"), "EDGE_CARBON_SITE": str(tmp / "site"),
           "DAGSTER_HOME": str(tmp / "dagster_home"), "PYTHONPATH": str(root)}
    env.pop("EDGE_CARBON_SOURCES", None)  # each tree builds from its own sources/
    return run_measured([sys.executable, "-m", "pipelines.cli", "run"], cwd=root, env=env)


def paired_ratio(pairs: list[tuple[float, float]]) -> float:
    """The median over pairs of (ours / the reference's)."""
    return statistics.median(ours / reference for reference, ours in pairs)


def bench_reference(report: Report, repeats: int, commit: str, out_dir: Path) -> None:
    """Figure 2b: this checkout's cold-run CPU seconds over the reference commit's, paired run by run."""
    try:
        full = resolve(commit)
        root = extract(full, out_dir)
    except (ValueError, RuntimeError) as exc:
        report.fatal.append(str(exc))
        report.add(f"cold run CPU against {commit}", "failed", f"<= {TARGET_CPU_RATIO:g}x", False)
        return
    cpu: list[tuple[float, float]] = []
    wall: list[tuple[float, float]] = []
    for repeat in range(1, repeats + 1):
        measured = []
        for label, tree in (("reference", root), ("ours", PROJECT_ROOT)):
            with tempfile.TemporaryDirectory(prefix="edge_carbon_bench_") as tmp:
                proc = cold_run(tree, Path(tmp))
            if proc.returncode != 0:
                report.fatal.append(f"the {label} cold run failed (exit {proc.returncode}): {proc.stderr.strip()[-2000:]}")
                report.add(f"cold run CPU against {full[:7]}", "failed", f"<= {TARGET_CPU_RATIO:g}x", False)
                return
            measured.append(proc)
        reference, ours = measured
        cpu.append((reference.cpu_seconds, ours.cpu_seconds))
        wall.append((reference.seconds, ours.seconds))
        print(f"  pair {repeat}: reference {reference.cpu_seconds:.1f} CPU s ({reference.seconds:.1f} s wall), "
              f"ours {ours.cpu_seconds:.1f} CPU s ({ours.seconds:.1f} s wall)", flush=True)
    ratio, wall_ratio = round(paired_ratio(cpu), 3), round(paired_ratio(wall), 3)
    report.add(f"cold `edge-carbon run` CPU seconds against {full[:7]} (median of {len(cpu)} paired ratios; wall {wall_ratio:.2f}x)",
               f"{ratio:.2f}x", f"<= {TARGET_CPU_RATIO:g}x", ratio <= TARGET_CPU_RATIO,
               reference_commit=full, cold_run_cpu_ratio=ratio, cold_run_wall_ratio=wall_ratio,
               reference_pairs_cpu_s=[[round(r, 2), round(o, 2)] for r, o in cpu])
