"""The fleet benchmark: thousands of small nvidia-smi logs registered, ingested and grown.

A synthetic fleet of ``--fleet-logs`` logs (default 2,000) of ``--fleet-samples`` samples each
(default 10,000, so 20 million samples, about 1.1 GB) is generated once into
``bench/out/fleet_<logs>x<samples>/`` (:func:`ensure_fleet`, the shipped format of
:mod:`bench.nvidia_smi_log`, seed ``1000 + i`` for log ``i``) with an index of each file's
sha256, and reused by later runs. Each run of the benchmark lays out a temporary sources
folder like the shipped one (:func:`make_sources`): every shipped subfolder symlinked, copies of
every shipped manifest file, ``fleet/`` pointing at the cached logs, and
``manifest/fleet.toml`` listing the first K of them as ``nvidia_smi`` entries
(:func:`write_manifest`; the harness grows the fleet by rewriting it).

The pipeline is driven through ``pipelines.run.launch.materialise`` in subprocesses
(``python -m bench fleet-worker JSON``) whose environment names the sources folder
(``EDGE_CARBON_SOURCES``), a fresh warehouse (``EDGE_CARBON_WAREHOUSE``; the Parquet lake goes
beside it) and a fresh Dagster instance (``DAGSTER_HOME``); the bench's own environment is not
changed. Each figure is a median of ``--repeats``:

a. **Full ingest.** ``materialise(scope="ingest")`` of all the logs into a fresh warehouse, in
   a fresh subprocess each time, at 1 worker (Dagster's in-process executor) and at 2 (its
   multiprocess executor): wall seconds of the call (imports excluded) and CPU seconds of the
   process and its children (user + system, ``RUSAGE_SELF`` + ``RUSAGE_CHILDREN``; the step
   processes are children of multiprocessing's fork server, which is stopped and reaped after
   the call so that they count), and samples/s. Targets: 2 workers no slower than 1 (1-worker / 2-worker wall time >= 1) and
   their CPU seconds within 10% of each other.
c. **Marginal time per added log.** One warm subprocess (imports done once, so a one-log
   ingest is not dominated by interpreter start-up) builds a warehouse with the first 100 logs
   (``scope="all"``, dashboards skipped, untimed), then times adding one log (one more entry
   in the manifest, ``materialise(scope="ingest", logs=[its id])``: the ingest and publish of
   its partition and of the staging tables it feeds), once per repeat, each a new log; ingests
   the logs up to 500 (untimed) and times added logs again; then up to all of them. Target: the
   largest of the three medians at most 1.2x the smallest (flat within 20%).
b. **One log against the whole fleet.** In that same process, on the warehouse that now holds
   the whole fleet: the one-log time at full size (c's last median) against re-ingesting every
   registered log (``materialise(scope="ingest")`` on the same warehouse); target >= 50x. The
   downstream refresh (``scope="downstream"``: the marts, no partitions) is timed separately.

d. **Catalog commit.** ``pipelines.warehouse.lake.commit`` of :data:`CATALOG_FILES` new files
   (one per log of a fleet of that size) into an empty catalog, in this process, against the
   same rows inserted one statement each (:func:`commit_row_by_row`, the baseline); fresh
   in-memory DuckDB each repeat, inside a transaction as in the pipeline. No target: it shows
   what the publish step of a 100,000-log ingest pays for its catalog.

Missing a target is reported; a failed materialisation is fatal.
"""

from __future__ import annotations

import contextlib
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from bench.catalog import CATALOG_FILES, catalog_commit
from bench.fleet_sources import (
    ADDED_NAME,
    FLEET_LOGS,
    FLEET_SAMPLES,
    FleetLog,
    cache_dir,
    ensure_fleet,
    load_fleet,
    make_sources,
    write_manifest,
)
from pipelines.paths import PROJECT_ROOT, SOURCES_ENV, WAREHOUSE_ENV

if TYPE_CHECKING:  # the driver's Report; imported lazily to keep this module importable alone
    from bench.report import Report

#: Fleet sizes at which the marginal time per added log is measured (then the whole fleet).
STEPS = (100, 500)
TARGET_WORKERS_RATIO = 1.0
TARGET_CPU_TOLERANCE = 0.10
TARGET_ONE_LOG_RATIO = 50.0
TARGET_FLAT = 1.2


# --- the fleet: logs, sources folder, manifest ---------------------------------------------


def plural(workers: int) -> str:
    """``1 worker``, ``2 workers``."""
    return f"{workers} worker" + ("" if workers == 1 else "s")


def steps_for(logs: int) -> list[int]:
    """The fleet sizes of figure (c): those of :data:`STEPS` below ``logs``, then ``logs``."""
    return [step for step in STEPS if step < logs] + [logs]


# --- the subprocess side ------------------------------------------------------------------


def cpu_with_children() -> float:
    """User plus system CPU seconds of this process and its waited-for children so far."""
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def stop_forkserver() -> None:
    """Stop multiprocessing's fork server if this process started one (the multiprocess
    executor's ``forkserver`` start method), and wait for it.

    The step processes are the fork server's children, not this process's: only once it has
    reaped them and been reaped itself does their CPU time count in ``RUSAGE_CHILDREN``.
    """
    from multiprocessing import forkserver

    stop = getattr(getattr(forkserver, "_forkserver", None), "_stop", None)
    if callable(stop):
        with contextlib.suppress(OSError):
            stop()


class MaterialiseFailed(Exception):
    """A materialisation the benchmark needs did not succeed."""

    def __init__(self, stage: str, run_id: str, failures: Sequence[str]) -> None:
        super().__init__(f"{stage}: run {run_id} failed: {'; '.join(failures) or 'no failure reported'}")
        self.stage, self.run_id, self.failures = stage, run_id, list(failures)


@contextlib.contextmanager
def protocol_stream() -> Iterator[IO[str]]:
    """This process's original stdout, for progress lines and the one JSON result; anything
    else written to stdout (the pipeline's, its step subprocesses') goes to stderr instead."""
    sys.stdout.flush()
    out = os.fdopen(os.dup(1), "w", buffering=1, encoding="utf-8")
    os.dup2(2, 1)
    try:
        yield out
    finally:
        out.close()


def count_fleet_rows(warehouse: Path) -> int | None:
    """Rows of the fleet's logs in the published ``staging.power_samples``; None if unreadable."""
    try:
        from pipelines.warehouse.database import open_readonly

        with open_readonly(warehouse) as con:
            row = con.execute("select count(*) from staging.power_samples where starts_with(source_id, 'fleet_')").fetchone()
    except Exception:  # a figure's sanity line only, never fatal
        return None
    return int(row[0]) if row else None


def worker(raw: str) -> int:
    """``python -m bench fleet-worker JSON``: run one fleet measurement; print one JSON object.

    ``{"mode": "ingest", "workers": W}``: figure (a), one full ingest. ``{"mode": "grow",
    "fleet": DIR, "steps": [...], "repeats": R}``: figures (c) then (b) in this one process.
    The sources folder, warehouse and Dagster instance come from the environment. Lines before
    the JSON object are progress.
    """
    args = json.loads(raw)
    with protocol_stream() as out:

        def progress(line: str) -> None:
            print(line, file=out, flush=True)

        from pipelines.cli import dagster_home

        dagster_home()
        from pipelines.run.launch import materialise

        def timed(stage: str, **kwargs: Any) -> tuple[float, float]:
            cpu, started = cpu_with_children(), time.perf_counter()
            outcome = materialise(**kwargs)
            seconds = time.perf_counter() - started
            stop_forkserver()  # counts the step processes' CPU time (after the wall time: not part of it)
            if not outcome.success:
                raise MaterialiseFailed(stage, str(outcome.run_id), [str(f) for f in outcome.failures])
            return seconds, cpu_with_children() - cpu

        try:
            if args["mode"] == "ingest":
                seconds, cpu = timed(f"full ingest, {plural(int(args['workers']))}", scope="ingest", workers=int(args["workers"]))
                from pipelines.paths import warehouse_path

                result = {"ok": True, "seconds": seconds, "cpu_seconds": cpu, "rows": count_fleet_rows(warehouse_path())}
            elif args["mode"] == "grow":
                result = grow(args, timed, progress)
            else:
                raise SystemExit(f"unknown fleet-worker mode {args['mode']!r}")
        except MaterialiseFailed as failed:
            print(json.dumps({"ok": False, "stage": failed.stage, "run_id": failed.run_id, "failures": failed.failures}), file=out)
            return 1
        print(json.dumps(result), file=out)
    return 0


def grow(args: dict[str, Any], timed: Callable[..., tuple[float, float]], progress: Callable[[str], None]) -> dict[str, Any]:
    """Figures (c) and (b) in this process: build at the first step, add logs, grow, re-ingest."""
    logs = load_fleet(Path(args["fleet"]))
    steps, repeats = [int(s) for s in args["steps"]], int(args["repeats"])
    sources = Path(os.environ[SOURCES_ENV])
    if len(logs) < steps[-1] + repeats:
        raise SystemExit(f"the fleet has {len(logs)} logs; {steps[-1] + repeats} are needed")
    count = steps[0]
    write_manifest(sources, logs, count)
    progress(f"building a warehouse with {count} logs (scope=all, no dashboards; untimed) ...")
    build_s, _ = timed(f"build with {count} logs", scope="all", skip_dashboards=True)
    progress(f"built in {build_s:.1f} s")
    marginal: list[dict[str, Any]] = []
    catch_up: list[dict[str, Any]] = []
    base = count  # logs 1..base are in fleet.toml; added ones go to a small file of their own, as
    # `edge-carbon register --manifest` would put them, so adding one re-reads that file only
    for step in steps:
        if step > count:
            new = [log.id for log in logs[count:step]]
            write_manifest(sources, logs, step)
            write_manifest(sources, logs, step, start=step, name=ADDED_NAME)
            base = step
            progress(f"ingesting logs {count + 1}-{step} (untimed) ...")
            seconds, _ = timed(f"ingest of logs {count + 1}-{step}", scope="ingest", logs=new)
            catch_up.append({"from": count, "to": step, "seconds": seconds})
            progress(f"{len(new)} logs in {seconds:.1f} s")
            count = step
        times = []
        for _ in range(repeats):
            added = logs[count]
            write_manifest(sources, logs, count + 1, start=base, name=ADDED_NAME)
            seconds, _ = timed(f"adding {added.id} to {count} logs", scope="ingest", logs=[added.id])
            count += 1
            times.append(seconds)
            progress(f"added {added.id} to a warehouse of {count - 1} logs: {seconds:.2f} s")
        marginal.append({"logs": step, "seconds": times})
    full = []
    for repeat in range(1, repeats + 1):
        seconds, cpu = timed(f"re-ingest of all {count} logs", scope="ingest")
        full.append(seconds)
        progress(f"re-ingest of all {count} logs, same warehouse, repeat {repeat}: {seconds:.1f} s wall, {cpu:.1f} s CPU")
    downstream = []
    for repeat in range(1, repeats + 1):
        seconds, _ = timed("downstream refresh", scope="downstream")
        downstream.append(seconds)
        progress(f"downstream refresh (marts), repeat {repeat}: {seconds:.1f} s")
    return {"ok": True, "build_seconds": build_s, "marginal": marginal, "catch_up": catch_up,
            "full_logs": count, "full_seconds": full, "downstream_seconds": downstream}


# --- the driver ---------------------------------------------------------------------------


def run_fleet_worker(args: dict[str, Any], env: dict[str, str]) -> tuple[dict[str, Any] | None, str]:
    """Run ``python -m bench fleet-worker`` with ``env``, echoing its progress lines; its JSON
    result (None if it printed none) and the tail of its stderr."""
    with tempfile.TemporaryFile("w+", encoding="utf-8", errors="replace") as errors:
        proc = subprocess.Popen([sys.executable, "-m", "bench", "fleet-worker", json.dumps(args)], cwd=PROJECT_ROOT, env=env,
                                stdout=subprocess.PIPE, stderr=errors, text=True)
        result: dict[str, Any] | None = None
        assert proc.stdout is not None
        for line in proc.stdout:
            line = line.rstrip("\n")
            if line.startswith("{"):
                with contextlib.suppress(ValueError):
                    result = json.loads(line)
                    continue
            print(f"  {line}", flush=True)
        code = proc.wait()
        errors.seek(0, os.SEEK_END)
        errors.seek(max(0, errors.tell() - 3000))
        tail = errors.read().strip()
    if code != 0 and (result is None or result.get("ok", True)):
        return None, f"exit {code}: {tail}"
    return result, tail


def worker_env(sources: Path, folder: Path) -> dict[str, str]:
    """The worker's environment: the bench's, with the sources folder, and a warehouse, site and
    Dagster instance in ``folder``."""
    return {**os.environ, SOURCES_ENV: str(sources), WAREHOUSE_ENV: str(folder / "warehouse" / "edge_carbon.duckdb"),
            "EDGE_CARBON_SITE": str(folder / "site"), "DAGSTER_HOME": str(folder / "dagster_home")}


def _failed(report: Report, what: str, result: dict[str, Any] | None, detail: str) -> None:
    if result is not None:
        detail = f"{result.get('stage')} (run {result.get('run_id')}): {'; '.join(result.get('failures') or []) or detail}"
    report.fatal.append(f"fleet benchmark, {what}: materialisation failed: {detail[-2000:]}")


def bench_fleet(report: Report, logs: int = FLEET_LOGS, samples: int = FLEET_SAMPLES, repeats: int = 3) -> None:
    """Figures 5 (a), (b), (c): see the module docstring."""
    total_samples = logs * samples
    directory = cache_dir(logs, samples)
    started = time.perf_counter()
    fleet = ensure_fleet(directory, logs + repeats, samples, progress=lambda line: print(f"  {line}", flush=True))
    size = sum(log.bytes for log in fleet[:logs])
    print(f"fleet: {logs:,} logs x {samples:,} samples ({total_samples:,} samples, {size / 1e6:,.0f} MB) in "
          f"{directory.relative_to(PROJECT_ROOT)} (+{repeats} to add; ready in {time.perf_counter() - started:.1f} s)")
    report.add("fleet size", f"{logs:,} nvidia-smi logs x {samples:,} samples ({size / 1e6:,.0f} MB)")
    with tempfile.TemporaryDirectory(prefix="edge_carbon_fleet_") as tmp_name:
        tmp = Path(tmp_name)
        sources = make_sources(tmp, directory)
        if fleet_ingest(report, tmp, sources, fleet, logs, repeats):
            fleet_growth(report, tmp, sources, directory, logs, repeats)
    catalog_commit(report, CATALOG_FILES, repeats)


def fleet_ingest(report: Report, tmp: Path, sources: Path, fleet: Sequence[FleetLog], logs: int, repeats: int) -> bool:
    """Figure (a): full ingest at 1 and 2 workers, fresh subprocess and warehouse each; False on failure."""
    write_manifest(sources, fleet, logs)
    from bench.nvidia_smi_log import na_rows

    expected_rows = sum(log.samples - len(set(na_rows(log.samples).tolist())) for log in fleet[:logs])
    print(f"fleet (a): ingest of all {logs:,} logs into a fresh warehouse, fresh subprocess each, 1 and 2 workers:")
    runs: dict[int, list[dict[str, Any]]] = {1: [], 2: []}
    for repeat in range(1, repeats + 1):
        for workers in runs:
            folder = tmp / f"ingest_{workers}w_{repeat}"
            result, tail = run_fleet_worker({"mode": "ingest", "workers": workers}, worker_env(sources, folder))
            shutil.rmtree(folder, ignore_errors=True)
            if result is None or not result.get("ok"):
                _failed(report, f"full ingest at {plural(workers)}", result, tail)
                report.add(f"fleet ingest, {logs:,} logs, {plural(workers)} (median)", "failed")
                return False
            runs[workers].append(result)
            rows = result.get("rows")
            check = "" if rows is None or expected_rows is None else (
                f", {rows:,} rows staged" + ("" if rows == expected_rows else f" (EXPECTED {expected_rows:,})"))
            print(f"  repeat {repeat} {plural(workers)}: {result['seconds']:.1f} s wall, {result['cpu_seconds']:.1f} s CPU, "
                  f"{logs * fleet[0].samples / result['seconds'] / 1e6:.2f} M samples/s{check}", flush=True)
    wall = {w: statistics.median(r["seconds"] for r in rs) for w, rs in runs.items()}
    cpu = {w: statistics.median(r["cpu_seconds"] for r in rs) for w, rs in runs.items()}
    total = logs * fleet[0].samples
    for workers in runs:
        report.add(f"fleet ingest, {logs:,} logs, fresh warehouse, {plural(workers)} (median)",
                   f"{wall[workers]:.1f} s wall, {cpu[workers]:.1f} s CPU, {total / wall[workers] / 1e6:.2f} M samples/s")
    speedup = wall[1] / wall[2]
    report.add("fleet ingest wall time, 1 worker / 2 workers", f"{speedup:.2f}x", f">= {TARGET_WORKERS_RATIO:g}x",
               speedup >= TARGET_WORKERS_RATIO)
    cpu_ratio = cpu[2] / cpu[1]
    report.add("fleet ingest CPU seconds, 2 workers / 1 worker", f"{cpu_ratio:.2f}x", f"within {TARGET_CPU_TOLERANCE:.0%}",
               abs(cpu_ratio - 1) <= TARGET_CPU_TOLERANCE)
    return True


def fleet_growth(report: Report, tmp: Path, sources: Path, directory: Path, logs: int, repeats: int) -> None:
    """Figures (c) and (b): one warm subprocess grows one warehouse through the steps."""
    steps = steps_for(logs)
    print(f"fleet (c), (b): one warm subprocess, one warehouse grown through {' -> '.join(f'{s:,}' for s in steps)} logs, "
          f"{repeats} added log(s) timed at each size; then every log re-ingested and the marts refreshed:")
    args = {"mode": "grow", "fleet": str(directory), "steps": steps, "repeats": repeats}
    result, tail = run_fleet_worker(args, worker_env(sources, tmp / "grow"))
    if result is None or not result.get("ok"):
        _failed(report, "growing the fleet", result, tail)
        report.add("fleet marginal time per added log", "failed")
        return
    medians = {int(m["logs"]): statistics.median(m["seconds"]) for m in result["marginal"]}
    report.add(f"fleet: add one log (ingest + publish) at {' / '.join(f'{s:,}' for s in medians)} logs (medians)",
               " / ".join(f"{v:.2f} s" for v in medians.values()))
    flat = max(medians.values()) / min(medians.values())
    report.add("fleet marginal time per added log, largest / smallest median", f"{flat:.2f}x", f"<= {TARGET_FLAT:g}x",
               flat <= TARGET_FLAT)
    one = medians[steps[-1]]
    full = statistics.median(result["full_seconds"])
    ratio = full / one
    report.add(f"fleet: re-ingest all {result['full_logs']:,} logs, same warehouse (median)", f"{full:.1f} s")
    report.add(f"fleet: re-ingest all / add one log at {steps[-1]:,} logs", f"{ratio:.0f}x", f">= {TARGET_ONE_LOG_RATIO:g}x",
               ratio >= TARGET_ONE_LOG_RATIO)
    downstream = statistics.median(result["downstream_seconds"])
    print(f"  one log {one:.2f} s against all {result['full_logs']:,} logs {full:.1f} s: {ratio:.0f}x; "
          f"downstream refresh {downstream:.1f} s (median)")
    report.add("fleet: downstream refresh (marts, scope=downstream) (median)", f"{downstream:.1f} s")


# --- figure (d): the catalog's commit ------------------------------------------------------


