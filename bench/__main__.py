"""``python -m bench``: the figures behind ``make bench``.

1. **nvidia-smi ingest.** A 5,000,000-sample nvidia-smi log (two GPUs, a few ``[N/A]``
   cells) is generated into ``bench/out/`` (in a subprocess: see :func:`generate_log`). Three
   implementations read it (:mod:`bench.ingest_workers`): the project's, as a power-log
   partition does (``pipelines.warehouse.power_log_lake.ingest_logs``: the digest, the streamed
   parse and checks, the pandera row checks, the trapezoid per channel, the rows staged in a
   scratch DuckDB database and written to the partition's Parquet file); the floor, DuckDB's own
   ``read_csv`` of the file into a table; and a plain pandas one (:mod:`bench.pandas_baseline`,
   which checks nothing and writes nothing). Each repeat runs in a fresh subprocess that
   reports the ingest's wall and CPU time and its own peak memory above its imports and a small
   warm-up ingest (``VmHWM``, not ``ru_maxrss``, which Linux hands from parent to child).
   Targets: the project within 2x of the floor's wall time, at most 1.5x the file in memory.
   The project and pandas must agree on every GPU's energy to 1e-6 relative. Then a
   ~37,000,000-sample (~2 GB) log (``--large-samples``; 0 skips it) is ingested by the
   project's implementation only, for its peak memory as a multiple of the file size: target
   <= 1.5x, and flat (the ratio of the two logs' factors is printed: a peak that does not grow
   with the log makes it about the inverse of their size ratio).
2. **Cold build.** ``edge-carbon run`` (``python -m pipelines.cli run``, what ``make run``
   runs) is run in subprocesses, each publishing to a fresh ``EDGE_CARBON_WAREHOUSE``,
   ``EDGE_CARBON_SITE`` and ``DAGSTER_HOME`` in a temporary folder, so nothing is reused; its
   wall time includes interpreter start-up and imports; its CPU seconds and peak memory are
   the process's (``os.wait4``), and its steps' durations are read from its Dagster instance
   (:mod:`bench.run_profile`). Target: median <= 15 s with the dashboards. The last repeat's
   warehouse serves the dashboards and the Monte Carlo.

3. **Dashboards.** Rendering every page from a built warehouse.
4. **Monte Carlo.** 1,000,000 joint draws of the ``realistic_consequential`` scenario's
   distributions (else the first scenario whose headline is measured_throughput) evaluated for
   both device classes and all six communication patterns on the headline basis, then the
   quantiles and mean of R, in a fresh subprocess. The project's path is
   ``pipelines.model.uncertainty.summarize`` (draw, evaluate set-wise in DuckDB, the mart's whole
   summary), run twice: first and second run (target 3 s), and the process's peak memory
   (target 2 GiB). The baseline is the same formula vectorised in numpy
   (:mod:`bench.baseline.numpy_model`: evaluate, ``numpy.quantile``); like for like, both evaluate the
   same drawn inputs and summarise R's quantiles and mean, and the target is SQL no slower
   than numpy (numpy / SQL time >= 1). The two must agree on R for every draw, class and
   pattern of a 2,000-draw subsample, and on the summary of the full run, to 1e-9 relative.

5. **Fleet.** :mod:`bench.fleet`: a synthetic fleet of ``--fleet-logs`` nvidia-smi logs
   (default 2,000) of ``--fleet-samples`` samples each (default 10,000: 20 million samples),
   cached in ``bench/out/``, registered in a temporary sources folder's manifest and driven
   through ``pipelines.run.launch.materialise`` in subprocesses with their own sources folder,
   warehouse and Dagster instance. (a) The full ingest into a fresh warehouse at 1 worker and
   at 2, fresh subprocess each: wall and CPU seconds (the process's and its children's),
   samples/s; targets: 2 workers no slower than 1, CPU within 10%. (c) In one warm subprocess
   (imports once, so one log's time is not interpreter start-up), a warehouse built with 100
   logs and grown to 500 and to all of them: the time to add one log (ingest and publish its
   partition and the staging tables it feeds) at each size; target: largest / smallest median
   <= 1.2. (b) On that full warehouse, re-ingesting every log against adding one (target >=
   50x), and the downstream refresh (the marts) timed on its own. Its time is mostly that of
   3 x ``--repeats`` ingests of the whole fleet (two fresh ones per repeat, one re-ingest),
   so it fits in about 8 minutes on 2 cores only while one takes about 30 s or less; the
   fleet's generation (about 1.1 GB) happens once. ``--fleet-repeats`` sets its repeats alone
   (default ``--repeats``); ``--skip-fleet`` leaves it out. (d) The lake catalog's commit of
   20,000 new files against the same rows inserted one statement each (seconds).

6. **Test suite.** The default suite (``make test``: ``python -m pytest -n 2``, the tests not
   marked slow, in two worker processes) in a subprocess, wall time, median of ``--test-repeats`` runs (default
   ``--repeats``); target 90 s. It takes minutes: ``--skip-tests`` leaves it out.

Medians of ``--repeats`` runs (default 3) are printed, then a table of each figure, its
target and PASS/FAIL. The exit status is 1 if the energies disagree, numpy and the SQL
model disagree, a build or a materialisation fails or a test fails; missing a speed or memory target is
reported, not fatal.

Every figure is printed as soon as it is known. ``--json PATH`` writes them all to a results
file (:mod:`bench.results`); ``python -m bench page`` renders docs/benchmarks.md's tables from
the committed one, ``bench/results.json`` (:mod:`bench.page`). ``--quick`` leaves out the 2 GB
log, the fleet, the test suite and the ``--skip-dashboards`` cold run. The generated logs are
deleted at the end unless ``--keep``.

``python -m bench worker IMPL PATH`` (IMPL is ``project``, ``duckdb`` or ``pandas``), ``python -m
bench mc WAREHOUSE DRAWS CHECK_DRAWS``, ``python -m bench mc-peak WAREHOUSE DRAWS``, ``python -m
bench generate SAMPLES``, ``python -m bench steps DAGSTER_HOME`` and ``python -m bench
fleet-worker JSON`` are the subprocess sides; each prints one JSON object (the fleet worker's
after its progress lines), ``generate`` the log's path.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

from bench.cold_run import bench_cold_run, bench_dashboards, bench_tests, build_warehouse
from bench.fleet import bench_fleet
from bench.fleet_sources import FLEET_LOGS, FLEET_SAMPLES
from bench.ingest import (
    LARGE_SAMPLES,
    SAMPLES,
    bench_ingest,
    bench_ingest_large,
    parser_available,
    worker,
)
from bench.monte_carlo import MC_DRAWS, bench_monte_carlo, mc_peak_worker, mc_worker
from bench.reference import DEFAULT_REFERENCE, bench_reference
from bench.report import Report, print_table
from bench.what_if import bench_what_if
from pipelines.paths import PROJECT_ROOT

OUT_DIR: Path = PROJECT_ROOT / "bench" / "out"


# --- the subprocess side ------------------------------------------------------------------


# --- the driver ---------------------------------------------------------------------------


def warn_if_busy() -> None:
    """Say so when other work competes for the CPUs: wall times are then inflated."""
    try:
        load = os.getloadavg()[0]
    except OSError:
        return
    cpus = os.cpu_count() or 1
    note = "  (busy: other processes compete for the CPUs; wall times will be inflated)" if load > 0.5 * cpus else ""
    print(f"load average (1 min): {load:.2f} on {cpus} CPU(s){note}")


def remove_generated(out_dir: Path = OUT_DIR) -> list[Path]:
    """Delete the logs and fleets the bench generates under ``out_dir``; the paths removed."""
    removed = []
    for item in sorted([*out_dir.glob("nvidia_smi_*.csv*"), *out_dir.glob("fleet_*")]):
        shutil.rmtree(item) if item.is_dir() else item.unlink()
        removed.append(item)
    with contextlib.suppress(OSError):
        out_dir.rmdir()
    return removed


def parse_args(argv: list[str]) -> argparse.Namespace:
    """The driver's options; ``--quick`` leaves out the 2 GB log, the fleet, the test suite and the second cold-run variant."""
    parser = argparse.ArgumentParser(prog="python -m bench", description=__doc__.split("\n\n")[0])
    parser.add_argument("--json", type=Path, default=None, metavar="PATH",
                        help="write every figure, with the machine, load, commit and date, to PATH (bench/results.json is the committed one)")
    parser.add_argument("--quick", action="store_true",
                        help="a few minutes: no 2 GB log (unless --large-samples), no fleet, no test suite, cold runs of `edge-carbon run` only")
    parser.add_argument("--keep", action="store_true", help="keep the generated logs in bench/out/ (deleted at the end otherwise)")
    parser.add_argument("--samples", type=int, default=SAMPLES, help=f"nvidia-smi samples (default {SAMPLES:,})")
    parser.add_argument("--repeats", type=int, default=3, help="repeats per figure (default 3)")
    parser.add_argument("--skip-ingest", action="store_true", help="skip the nvidia-smi ingest figures")
    parser.add_argument("--skip-run", action="store_true", help="skip the cold edge-carbon run figures")
    parser.add_argument("--reference", default=DEFAULT_REFERENCE, metavar="COMMIT",
                        help=f"the commit the cold run is paired with, run by run (default {DEFAULT_REFERENCE}; built once in bench/out/)")
    parser.add_argument("--skip-reference", action="store_true", help="skip the cold run paired with the reference commit")
    parser.add_argument("--skip-what-if", action="store_true", help="skip the what-if figure (edge-carbon run --scenario after an edited row)")
    parser.add_argument("--skip-dashboards", action="store_true", help="skip the dashboard rendering figure")
    parser.add_argument("--skip-monte-carlo", action="store_true", help="skip the Monte Carlo figures")
    parser.add_argument("--large-samples", type=int, default=None,
                        help=f"samples of the large (~2 GB) log, project ingest only (default {LARGE_SAMPLES:,}, with --quick 0; 0 skips it)")
    parser.add_argument("--skip-fleet", action="store_true", help="skip the fleet benchmark (minutes)")
    parser.add_argument("--fleet-logs", type=int, default=FLEET_LOGS, help=f"logs in the fleet (default {FLEET_LOGS:,})")
    parser.add_argument("--fleet-samples", type=int, default=FLEET_SAMPLES,
                        help=f"samples per fleet log, a multiple of 2 (default {FLEET_SAMPLES:,})")
    parser.add_argument("--fleet-repeats", type=int, default=None, help="repeats of each fleet figure (default: --repeats)")
    parser.add_argument("--skip-tests", action="store_true", help="skip the test suite's wall time (minutes per repeat)")
    parser.add_argument("--test-repeats", type=int, default=None, help="runs of the test suite (default: --repeats)")
    args = parser.parse_args(argv)
    if args.large_samples is None:
        args.large_samples = 0 if args.quick else LARGE_SAMPLES
    if args.quick:
        args.skip_fleet, args.skip_tests = True, True
    if not args.skip_fleet and (args.fleet_logs < 1 or args.fleet_samples < 2 or args.fleet_samples % 2):
        parser.error("--fleet-logs must be >= 1 and --fleet-samples a positive multiple of 2 (two GPUs per poll)")
    return args


def run_figures(report: Report, args: argparse.Namespace) -> None:
    """Every figure ``args`` asks for, each printed as soon as it is known."""
    if not args.skip_ingest:
        report.begin(f"ingest of a {args.samples:,}-sample nvidia-smi log (fresh subprocess each repeat)")
        factor = bench_ingest(report, args.samples, args.repeats)
        if args.large_samples > 0 and parser_available():
            report.begin(f"ingest of a {args.large_samples:,}-sample nvidia-smi log")
            bench_ingest_large(report, args.large_samples, args.repeats, factor, args.samples)
    with tempfile.TemporaryDirectory(prefix="edge_carbon_bench_") as tmp:
        warehouse = None
        if not args.skip_run:
            report.begin("cold edge-carbon run (fresh warehouse and Dagster instance each time)")
            if not args.quick:
                bench_cold_run(report, args.repeats, ("--skip-dashboards",))
            # the last repeat's warehouse serves the dashboards and the Monte Carlo
            warehouse = bench_cold_run(report, args.repeats, keep=Path(tmp))
            if not args.skip_reference:
                bench_reference(report, args.repeats, args.reference, OUT_DIR)
        elif not (args.skip_dashboards and args.skip_monte_carlo and args.skip_what_if):
            warehouse = build_warehouse(report, Path(tmp))
        if warehouse is not None and not args.skip_what_if:
            report.begin("what-if: one scenario recomputed after an edited row (a copy of the built warehouse each time)")
            bench_what_if(report, args.repeats, warehouse)
        if warehouse is not None and not args.skip_dashboards:
            report.begin("dashboards (rendered from a freshly built warehouse)")
            bench_dashboards(report, args.repeats, warehouse)
        if warehouse is not None and not args.skip_monte_carlo:
            report.begin(f"Monte Carlo ({MC_DRAWS:,} draws, SQL and numpy, fresh subprocess each repeat)")
            bench_monte_carlo(report, args.repeats, warehouse)
    if not args.skip_fleet:
        report.begin(f"fleet ({args.fleet_logs:,} logs x {args.fleet_samples:,} samples)")
        bench_fleet(report, args.fleet_logs, args.fleet_samples, args.fleet_repeats if args.fleet_repeats is not None else args.repeats)
    if not args.skip_tests:
        report.begin("default test suite (`make test`, the tests not marked slow)")
        bench_tests(report, args.test_repeats if args.test_repeats is not None else args.repeats)


def main(argv: list[str] | None = None) -> int:
    """Parse arguments; run the benchmark (or one of its subprocess sides)."""
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["worker"]:
        if len(argv) != 3:
            raise SystemExit("usage: python -m bench worker {project,duckdb,pandas} PATH")
        return worker(argv[1], Path(argv[2]))
    if argv[:1] == ["mc"]:
        if len(argv) != 4:
            raise SystemExit("usage: python -m bench mc WAREHOUSE DRAWS CHECK_DRAWS")
        return mc_worker(Path(argv[1]), int(argv[2]), int(argv[3]))
    if argv[:1] == ["mc-peak"]:
        if len(argv) != 3:
            raise SystemExit("usage: python -m bench mc-peak WAREHOUSE DRAWS")
        return mc_peak_worker(Path(argv[1]), int(argv[2]))
    if argv[:1] == ["fleet-worker"]:
        if len(argv) != 2:
            raise SystemExit("usage: python -m bench fleet-worker JSON")
        from bench.fleet import worker as fleet_worker

        return fleet_worker(argv[1])
    if argv[:1] == ["generate"]:
        if len(argv) != 2:
            raise SystemExit("usage: python -m bench generate SAMPLES")
        from bench.nvidia_smi_log import cached_log

        print(cached_log(OUT_DIR, int(argv[1])))
        return 0
    if argv[:1] == ["steps"]:
        from bench.run_profile import main as steps_main

        return steps_main(argv[1:])
    if argv[:1] == ["page"]:
        from bench.page import main as page_main

        return page_main(argv[1:])
    args = parse_args(argv)
    from bench import results

    head = results.header(argv)
    started = time.perf_counter()
    report = Report()
    print(f"edge-carbon bench on {os.cpu_count()} CPU(s), python {sys.version.split()[0]}, commit {head['commit']}"
          f"{' (modified)' if head['dirty'] else ''}")
    warn_if_busy()
    try:
        run_figures(report, args)
    finally:
        if not args.keep:
            removed = remove_generated()
            if removed:
                print(f"removed {len(removed)} generated log(s) from {OUT_DIR.relative_to(PROJECT_ROOT)} (--keep keeps them)")
    print_table(report)
    if args.json is not None:
        figures = [{"section": f.section, "name": f.name, "value": f.value, "target": f.target, "passed": f.passed} for f in report.figures]
        written = results.write(args.json, {**head, "quick": args.quick}, figures, report.values, time.perf_counter() - started)
        print(f"results written to {written}")
    for problem in report.fatal:
        print(f"ERROR: {problem}", file=sys.stderr)
    return 1 if report.fatal else 0


if __name__ == "__main__":
    raise SystemExit(main())
