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
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bench.fleet import FLEET_LOGS, FLEET_SAMPLES, bench_fleet
from bench.memory import current_rss_bytes, peak_rss_bytes, run_measured
from pipelines.paths import PROJECT_ROOT, WAREHOUSE_ENV
from schemas.vocabulary import MEASURED_BASIS

OUT_DIR: Path = PROJECT_ROOT / "bench" / "out"
SAMPLES = 5_000_000
#: The large log of figure 1 (about 2 GB): the project's implementation only.
LARGE_SAMPLES = 37_000_000
RTOL = 1e-6
#: The project's ingest against DuckDB's read_csv of the same file (wall time).
TARGET_FLOOR_X = 2.0
TARGET_MEMORY_X = 1.5
TARGET_RUN_S = 15.0
TARGET_DASHBOARDS_S = 10.0
MC_DRAWS = 1_000_000
MC_CHECK_DRAWS = 2_000
MC_SCENARIO = "realistic_consequential"
MC_SEEDS = (20250701, 20250702)
MC_RTOL = 1e-9
TARGET_MC_S = 3.0
TARGET_MC_BYTES = 2 * 1024**3
TARGET_MC_RATIO = 1.0
TARGET_TESTS_S = 90.0
#: The default test suite, as ``make test`` runs it (pyproject's addopts leave out the slow tests;
#: the Makefile's two pytest-xdist workers).
TEST_COMMAND = (sys.executable, "-m", "pytest", "-n", "2", "-q", "-p", "no:cacheprovider")


# --- the subprocess side ------------------------------------------------------------------


def worker(impl: str, path: Path) -> int:
    """Ingest ``path`` once with ``impl`` (:mod:`bench.ingest_workers`); print time, memory and per-GPU energies as JSON."""
    from bench.ingest_workers import measure

    print(json.dumps(measure(impl, path)))
    return 0


def warm_monte_carlo(con: Any) -> tuple[str, Any, Any]:
    """The Monte Carlo scenario, its inputs and its parameters, after one 100-draw ``summarize`` that compiles the SQL path."""
    import polars as pl

    from pipelines.model.formula import scenario_inputs
    from pipelines.model.uncertainty import draw_inputs, summarize
    from pipelines.warehouse.queries import query_pl

    scenario = monte_carlo_scenario(con)
    base = scenario_inputs(con).filter(pl.col("scenario_id") == scenario)
    parameters = query_pl(con, "select * from core.scenario_parameters where scenario_id = $s", {"s": scenario})
    summarize(con, draw_inputs(base, parameters, 100, seed=1))
    return scenario, base, parameters


def mc_peak_worker(warehouse: Path, draws: int) -> int:
    """The Monte Carlo's memory alone: one ``summarize`` of ``draws`` draws after a 100-draw one; JSON of its peak RSS."""
    from pipelines.model.uncertainty import draw_inputs, summarize
    from pipelines.warehouse.database import open_readonly

    with open_readonly(warehouse) as con:
        scenario, base, parameters = warm_monte_carlo(con)
        baseline = current_rss_bytes()
        started = time.perf_counter()
        summary = summarize(con, draw_inputs(base, parameters, draws, seed=MC_SEEDS[0]))
        seconds = time.perf_counter() - started
        peak = max(peak_rss_bytes(), current_rss_bytes())
    print(json.dumps({"scenario": scenario, "draws": draws, "groups": headline_summary(summary).height, "seconds": seconds,
                      "rss_before": baseline, "peak_rss": peak}))
    return 0


def monte_carlo_scenario(con: Any) -> str:
    """:data:`MC_SCENARIO` if the warehouse has it, else the first scenario whose headline basis is measured_throughput."""
    from pipelines.warehouse.queries import query_pl

    scenarios = query_pl(con, "select scenario_id, headline_basis from core.scenarios order by scenario_id")
    if MC_SCENARIO in scenarios.get_column("scenario_id").to_list():
        return MC_SCENARIO
    measured = scenarios.filter(scenarios.get_column("headline_basis") == MEASURED_BASIS).get_column("scenario_id").to_list()
    if not measured:
        raise SystemExit(f"no scenario {MC_SCENARIO!r} and none with headline_basis = {MEASURED_BASIS}")
    return str(measured[0])


def headline_summary(summary: Any) -> Any:
    """The rows of a ``pipelines.model.uncertainty.summarize`` frame on each scenario's headline basis and network method."""
    import polars as pl

    if "is_headline_method" in summary.columns:
        summary = summary.filter(pl.col("is_headline_method"))
    return summary.filter(pl.col("is_headline")) if "is_headline" in summary.columns else summary


def relative_difference(values: Any, reference: Any) -> float:
    """max |values / reference - 1| over two equally long arrays; inf where one is missing or not finite
    (both missing, as a summary over no feasible draw is on both sides, agree)."""
    import numpy as np

    values, reference = np.asarray(values, dtype=np.float64), np.asarray(reference, dtype=np.float64)
    if values.shape != reference.shape:
        return float("inf")
    if values.size == 0:
        return 0.0
    with np.errstate(divide="ignore", invalid="ignore"):
        diff = np.abs(values / reference - 1)
    both_missing = np.isnan(values) & np.isnan(reference)
    agree = np.isfinite(diff) | (values == reference) | both_missing
    return float(np.max(np.where(agree, np.where(both_missing, 0.0, np.nan_to_num(diff)), np.inf)))


def per_draw_difference(con: Any, draws: Any) -> float:
    """Largest relative difference between numpy's R and the SQL model's R (headline basis) over every draw x class x pattern."""
    import polars as pl

    from bench.baseline import numpy_model
    from pipelines.model.formula import model_view
    from pipelines.warehouse.queries import query_pl

    keys = ["scenario_id", "variant_id", "device_class", "pattern"]
    with model_view(con, draws.drawn, constants=draws.constants):
        sql = query_pl(con, "select scenario_id, cast(variant_id as bigint) as variant_id, device_class, pattern, "
                            "reduction_factor from model_evaluation")
    ours = numpy_model.evaluate(draws).with_columns(pl.col("variant_id").cast(pl.Int64))
    if ours.height != sql.height:
        return float("inf")
    joined = ours.join(sql, on=keys, how="inner", suffix="_sql")
    if joined.height != sql.height:
        return float("inf")
    return relative_difference(joined.get_column("reduction_factor"), joined.get_column("reduction_factor_sql"))


def summary_difference(sql_summary: Any, numpy_summary: Any) -> float:
    """Largest relative difference of p05, p50, p95 and mean of R between the SQL's summary and numpy's."""
    import polars as pl

    q = pl.col("reduction_factor_quantiles")
    sql = headline_summary(sql_summary).select(
        "scenario_id", "device_class", "pattern", q.list.get(0).alias("p05"), q.list.get(1).alias("p50"),
        q.list.get(2).alias("p95"), pl.col("reduction_factor_mean").alias("mean"))
    joined = numpy_summary.join(sql, on=["scenario_id", "device_class", "pattern"], how="inner", suffix="_sql")
    if joined.height != sql.height or joined.height != numpy_summary.height:
        return float("inf")
    return max(relative_difference(joined.get_column(c), joined.get_column(f"{c}_sql")) for c in ("p05", "p50", "p95", "mean"))


#: What numpy_model.summarize computes, in SQL over the model's evaluation: R's quantiles and mean.
R_SUMMARY_SQL = """
select scenario_id, device_class, pattern, count(*) as n_draws,
       quantile_cont(reduction_factor, [0.05, 0.5, 0.95]) as quantiles, avg(reduction_factor) as mean
from model_evaluation
group by all
"""


def mc_worker(warehouse: Path, draws: int, check_draws: int) -> int:
    """Monte Carlo of ``draws`` parameter sets, the SQL path then the numpy one; agreement on ``check_draws``; JSON.

    Each path runs once per seed of :data:`MC_SEEDS` in this fresh process: the first run pays
    the process's one-time memory growth, the second does not. Peak memory is read after the
    SQL runs, before numpy's.
    """
    from bench.baseline import numpy_model
    from pipelines.model.formula import model_view
    from pipelines.model.uncertainty import draw_inputs, summarize
    from pipelines.warehouse.database import open_readonly

    with open_readonly(warehouse) as con:
        scenario, base, parameters = warm_monte_carlo(con)
        baseline = current_rss_bytes()
        sql_runs, numpy_runs = [], []
        for seed in MC_SEEDS:
            started = time.perf_counter()
            sql_summary = summarize(con, draw_inputs(base, parameters, draws, seed=seed))
            sql_runs.append(time.perf_counter() - started)
        peak = max(peak_rss_bytes(), current_rss_bytes())
        for seed in MC_SEEDS:
            started = time.perf_counter()
            numpy_summary = numpy_model.summarize(draw_inputs(base, parameters, draws, seed=seed))
            numpy_runs.append(time.perf_counter() - started)
        # like for like: the same drawn inputs, evaluated and summarised (R's quantiles and mean) by each
        same = draw_inputs(base, parameters, draws, seed=MC_SEEDS[0])
        sql_eval_runs, numpy_eval_runs = [], []
        for _ in MC_SEEDS:
            started = time.perf_counter()
            with model_view(con, same.drawn, constants=same.constants):
                con.execute(R_SUMMARY_SQL).fetchall()
            sql_eval_runs.append(time.perf_counter() - started)
            started = time.perf_counter()
            numpy_model.summarize(same)
            numpy_eval_runs.append(time.perf_counter() - started)
        del same
        per_draw = per_draw_difference(con, draw_inputs(base, parameters, check_draws, seed=3))
    print(json.dumps({"scenario": scenario, "draws": draws, "groups": headline_summary(sql_summary).height,
                      "sql_eval_seconds": sql_eval_runs, "numpy_eval_seconds": numpy_eval_runs,
                      "numpy_groups": numpy_summary.height, "sql_seconds": sql_runs, "numpy_seconds": numpy_runs,
                      "peak_rss": peak, "rss_before": baseline, "check_draws": check_draws, "max_rel_diff": per_draw,
                      "summary_max_rel_diff": summary_difference(sql_summary, numpy_summary)}))
    return 0


# --- the driver ---------------------------------------------------------------------------


@dataclass
class Figure:
    """One line of the summary table."""

    name: str
    value: str
    target: str = ""
    passed: bool | None = None
    #: The figure's group in the rendered page (docs/benchmarks.md).
    section: str = ""


@dataclass
class Report:
    """Everything measured, for the summary table and the exit status."""

    figures: list[Figure] = field(default_factory=list)
    fatal: list[str] = field(default_factory=list)
    #: Named numbers for the results file (``--json``): ``ingest_peak_memory_file_ratio`` and the like.
    values: dict[str, Any] = field(default_factory=dict)
    #: The section the next figures belong to.
    section: str = ""

    def add(self, name: str, value: str, target: str = "", passed: bool | None = None, **values: Any) -> None:
        """Append a figure, print it at once, and record ``values`` under their names."""
        figure = Figure(name, value, target, passed, self.section)
        self.figures.append(figure)
        self.values.update(values)
        verdict = "" if passed is None else (" PASS" if passed else " FAIL")
        against = f" (target {target})" if target else ""
        print(f"  => {name}: {value}{against}{verdict}", flush=True)

    def begin(self, section: str) -> None:
        """Start a section of figures (a table of the rendered page) and say so."""
        self.section = section
        print(f"{section}:", flush=True)


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


def bench_monte_carlo(report: Report, repeats: int, warehouse: Path) -> None:
    """Figure 4: 1,000,000 Monte Carlo draws, SQL vs numpy in the same fresh subprocess, medians of repeats."""
    results = []
    for repeat in range(1, repeats + 1):
        proc = subprocess.run([sys.executable, "-m", "bench", "mc", str(warehouse), str(MC_DRAWS), str(MC_CHECK_DRAWS)],
                              cwd=PROJECT_ROOT, capture_output=True, text=True, check=False)
        if proc.returncode != 0:
            report.fatal.append(f"Monte Carlo worker failed (exit {proc.returncode}): {proc.stderr.strip()[-2000:]}")
            return
        result = json.loads(proc.stdout.strip().splitlines()[-1])
        results.append(result)
        (sql_first, sql_second), (np_first, np_second) = result["sql_seconds"], result["numpy_seconds"]
        print(f"  repeat {repeat}: {result['draws']:,} draws of {result['scenario']} x {result['groups']} (class x pattern): "
              f"SQL {sql_first:.2f} s first, {sql_second:.2f} s second, peak RSS {result['peak_rss'] / 1024**3:.2f} GiB; "
              f"numpy {np_first:.2f} s first, {np_second:.2f} s second; numpy / SQL {np_first / sql_first:.2f}x first, "
              f"{np_second / sql_second:.2f}x second; same draws, R summary: SQL {min(result['sql_eval_seconds']):.2f} s, "
              f"numpy {min(result['numpy_eval_seconds']):.2f} s; max rel diff {result['max_rel_diff']:.1e} per draw, "
              f"{result['summary_max_rel_diff']:.1e} summary")
    sql_first = statistics.median(r["sql_seconds"][0] for r in results)
    sql_second = statistics.median(r["sql_seconds"][1] for r in results)
    np_first = statistics.median(r["numpy_seconds"][0] for r in results)
    np_second = statistics.median(r["numpy_seconds"][1] for r in results)
    peak = statistics.median(r["peak_rss"] for r in results)
    worst = max(r["max_rel_diff"] for r in results)
    worst_summary = max(r["summary_max_rel_diff"] for r in results)
    groups_ok = all(r["groups"] == r["numpy_groups"] == 12 for r in results)
    label = f"Monte Carlo {MC_DRAWS:,} draws ({results[0]['scenario']}, 2 classes x 6 patterns)"
    report.add(f"{label}, SQL first run in a fresh process (median)", f"{sql_first:.2f} s", f"<= {TARGET_MC_S:g} s",
               sql_first <= TARGET_MC_S, monte_carlo_first_s=round(sql_first, 3))
    report.add(f"{label}, SQL second run (median)", f"{sql_second:.2f} s", f"<= {TARGET_MC_S:g} s", sql_second <= TARGET_MC_S,
               monte_carlo_second_s=round(sql_second, 3))
    highest = max(r["peak_rss"] for r in results)
    report.add(f"Monte Carlo SQL peak memory, whole process (median; highest of {len(results)})",
               f"{peak / 1024**3:.2f} GiB; {highest / 1024**3:.2f} GiB", "<= 2 GiB every run", highest <= TARGET_MC_BYTES,
               monte_carlo_peak_gib=round(peak / 1024**3, 3), monte_carlo_peak_max_gib=round(highest / 1024**3, 3))
    report.add(f"{label}, numpy first run / second run (median)", f"{np_first:.2f} s / {np_second:.2f} s")
    # the mart's whole summary (three quantile sets, shares, a histogram) against numpy's R-only one: context, no target
    report.add("Monte Carlo numpy (R summary) / SQL (the mart's whole summary), with the draws, second runs",
               f"{np_second / sql_second:.2f}x")
    sql_eval = statistics.median(min(r["sql_eval_seconds"]) for r in results)
    np_eval = statistics.median(min(r["numpy_eval_seconds"]) for r in results)
    report.add("Monte Carlo evaluation on the same draws, SQL / numpy (R's quantiles and mean, best of 2, median)",
               f"{sql_eval:.2f} s / {np_eval:.2f} s", monte_carlo_eval_sql_s=round(sql_eval, 3), monte_carlo_eval_numpy_s=round(np_eval, 3))
    report.add("Monte Carlo evaluation numpy / SQL time (like for like; >= 1: SQL no slower)", f"{np_eval / sql_eval:.2f}x",
               f">= {TARGET_MC_RATIO:g}x", np_eval / sql_eval >= TARGET_MC_RATIO, monte_carlo_numpy_sql_ratio=round(np_eval / sql_eval, 3))
    report.add(f"Monte Carlo numpy vs SQL R, every draw x class x pattern ({MC_CHECK_DRAWS:,} draws)",
               f"max rel diff {worst:.1e}", f"<= {MC_RTOL:g}", worst <= MC_RTOL and groups_ok)
    report.add(f"Monte Carlo numpy vs SQL p05/p50/p95/mean of R ({MC_DRAWS:,} draws)", f"max rel diff {worst_summary:.1e}",
               f"<= {MC_RTOL:g}", worst_summary <= MC_RTOL)
    if worst > MC_RTOL or worst_summary > MC_RTOL or not groups_ok:
        report.fatal.append(f"numpy and the SQL model differ by {worst:.2e} relative per draw, {worst_summary:.2e} in the summary"
                            f"{'' if groups_ok else ', or not every class x pattern was evaluated'}")


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
               median <= TARGET_TESTS_S, tests_s=round(median, 1))


def warn_if_busy() -> None:
    """Say so when other work competes for the CPUs: wall times are then inflated."""
    try:
        load = os.getloadavg()[0]
    except OSError:
        return
    cpus = os.cpu_count() or 1
    note = "  (busy: other processes compete for the CPUs; wall times will be inflated)" if load > 0.5 * cpus else ""
    print(f"load average (1 min): {load:.2f} on {cpus} CPU(s){note}")


def print_table(report: Report) -> None:
    """The compact summary."""
    rows = [("figure", "value", "target", "result")] + [
        (f.name, f.value, f.target or "-", "" if f.passed is None else ("PASS" if f.passed else "FAIL")) for f in report.figures
    ]
    widths = [max(len(row[i]) for row in rows) for i in range(4)]
    print()
    for i, row in enumerate(rows):
        print("  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True)).rstrip())
        if i == 0:
            print("  ".join("-" * width for width in widths))


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
    parser.add_argument("--skip-run", action="store_true", help="skip the cold edge-carbon run figure")
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
        elif not (args.skip_dashboards and args.skip_monte_carlo):
            warehouse = build_warehouse(report, Path(tmp))
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
