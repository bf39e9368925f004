"""``python -m bench``: the figures behind ``make bench``.

1. **nvidia-smi ingest.** A 5,000,000-sample nvidia-smi log (two GPUs, a few ``[N/A]``
   cells) is generated once into ``bench/out/``. Two implementations read and integrate it:
   the project's (``pipelines.ingest.streaming.stream_nvidia_smi``: parse in blocks, the
   plausibility and duplicate checks, the pandera model's row checks, the trapezoid per
   channel, and the staged rows written to a DuckDB table in a database file, DuckDB's memory
   capped at ``pipelines.ingest.streaming.MEMORY_LIMIT`` as in the pipeline) and a plain pandas one (:mod:`bench.pandas_baseline`,
   which checks nothing and writes nothing). Each repeat runs in a fresh subprocess that
   reports the ingest's wall time (imports excluded) and its own peak memory: peak RSS at the
   end minus the RSS right after the imports. The two must agree on every GPU's energy to
   1e-6 relative. Then a ~37,000,000-sample (~2 GB) log (``--large-samples``; 0 skips it), also
   cached in ``bench/out/``, is ingested by the project's implementation only (pandas would need
   over 10 GB), the same worker, for its peak memory as a multiple of the file size: target
   <= 1.5x, and flat (the ratio of the two logs' factors is printed: a peak that does not grow
   with the log makes it about the inverse of their size ratio).
2. **Cold build.** ``edge-carbon run`` (``python -m pipelines.cli run``, what ``make run``
   runs) is run in subprocesses, each publishing to a fresh ``EDGE_CARBON_WAREHOUSE``,
   ``EDGE_CARBON_SITE`` and ``DAGSTER_HOME`` in a temporary folder, so nothing is reused; its
   wall time includes interpreter start-up and imports. Target: median <= 15 s with the dashboards.

3. **Dashboards.** Rendering every page from a built warehouse.
4. **Monte Carlo.** 1,000,000 joint draws of the ``realistic_consequential`` scenario's
   distributions (else the first scenario whose headline is measured_throughput) evaluated for
   both device classes and all six communication patterns on the headline basis, then the
   quantiles and mean of R, in a fresh subprocess. The project's path is
   ``pipelines.model.uncertainty.summarize`` (draw, evaluate set-wise in DuckDB, the mart's whole
   summary), run twice: first and second run (target 3 s), and the process's peak memory
   (target 2 GiB). The baseline is the same formula vectorised in numpy
   (:mod:`bench.numpy_model`: evaluate, ``numpy.quantile``); like for like, both evaluate the
   same drawn inputs and summarise R's quantiles and mean, and the target is SQL no slower
   than numpy (numpy / SQL time >= 1). The two must agree on R for every draw, class and
   pattern of a 2,000-draw subsample, and on the summary of the full run, to 1e-9 relative.

5. **Fleet.** :mod:`bench.fleet`: a synthetic fleet of ``--fleet-logs`` nvidia-smi logs
   (default 2,000) of ``--fleet-samples`` samples each (default 10,000: 20 million samples),
   cached in ``bench/out/``, registered in a temporary sources folder's manifest and driven
   through ``pipelines.defs.launch.materialise`` in subprocesses with their own sources folder,
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

6. **Test suite.** The default suite (``make test``: ``python -m pytest``, the tests not
   marked slow) in a subprocess, wall time, median of ``--test-repeats`` runs (default
   ``--repeats``); target 90 s. It takes minutes: ``--skip-tests`` leaves it out.

Medians of ``--repeats`` runs (default 3) are printed, then a table of each figure, its
target and PASS/FAIL. The exit status is 1 if the energies disagree, numpy and the SQL
model disagree, a build or a materialisation fails or a test fails; missing a speed or memory target is
reported, not fatal.

``python -m bench worker IMPL PATH`` (IMPL is ``polars`` or ``pandas``), ``python -m bench
mc WAREHOUSE DRAWS CHECK_DRAWS`` and ``python -m bench fleet-worker JSON`` are the subprocess
sides; each prints one JSON object (the fleet worker's after its progress lines).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bench.fleet import FLEET_LOGS, FLEET_SAMPLES, bench_fleet
from pipelines.paths import PROJECT_ROOT, WAREHOUSE_ENV

OUT_DIR: Path = PROJECT_ROOT / "bench" / "out"
SAMPLES = 5_000_000
#: The large log of figure 1 (about 2 GB): the project's implementation only.
LARGE_SAMPLES = 37_000_000
RTOL = 1e-6
TARGET_SPEEDUP = 5.0
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
#: The default test suite, as ``make test`` runs it (pyproject's addopts leave out the slow tests).
TEST_COMMAND = (sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider")


# --- the subprocess side ------------------------------------------------------------------


def current_rss_bytes() -> int:
    """Resident set size now (Linux ``/proc``; elsewhere the high-water mark so far)."""
    try:
        pages = int(Path("/proc/self/statm").read_text().split()[1])
        return pages * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return peak_rss_bytes()


def peak_rss_bytes() -> int:
    """Peak resident set size of this process (``ru_maxrss`` is KiB on Linux, bytes on macOS)."""
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak if sys.platform == "darwin" else peak * 1024


def polars_energies(result: Any) -> dict[str, float]:
    """``{channel: energy_j}`` from ``pipelines.ingest.energy.integration.integrate(..., per_channel=True)``."""
    return {str(row["channel"]): float(row["energy_j"]) for row in result.iter_rows(named=True)}


def worker(impl: str, path: Path) -> int:
    """Ingest ``path`` once with ``impl``; print time, memory and per-GPU energies as JSON."""
    if impl == "polars":
        import duckdb

        from pipelines.ingest.streaming import stream_nvidia_smi

        def run() -> dict[str, float]:
            # What the power_logs asset does for an nvidia-smi entry: stream the log into the
            # staged table of a DuckDB database file, with DuckDB's memory limit the one the
            # streamed ingest sets itself (pipelines.ingest.streaming.MEMORY_LIMIT).
            with tempfile.TemporaryDirectory(prefix="edge_carbon_ingest_") as tmp:
                con = duckdb.connect(str(Path(tmp) / "ingest.duckdb"))
                try:
                    result = stream_nvidia_smi(
                        path, {"timezone": "UTC", "run_id": "bench"}, con, "staging.power_samples", source_id="bench", source_file=path.name
                    )
                finally:
                    con.close()
            return polars_energies(result.channels)

    elif impl == "pandas":
        from bench.pandas_baseline import ingest

        def run() -> dict[str, float]:
            frame = ingest(path, "UTC")
            return dict(zip(frame["channel"].astype(str), frame["energy_j"].astype(float), strict=True))

    else:
        raise SystemExit(f"unknown implementation {impl!r}")
    baseline = current_rss_bytes()
    cpu_before = cpu_seconds()
    started = time.perf_counter()
    energies = run()
    seconds = time.perf_counter() - started
    cpu = cpu_seconds() - cpu_before
    peak = max(peak_rss_bytes(), current_rss_bytes())
    result = {"impl": impl, "seconds": seconds, "cpu_seconds": cpu, "rss_after_imports": baseline, "peak_rss": peak, "energies_j": energies}
    print(json.dumps(result))
    return 0


def monte_carlo_scenario(con: Any) -> str:
    """:data:`MC_SCENARIO` if the warehouse has it, else the first scenario whose headline basis is measured_throughput."""
    from pipelines.warehouse.queries import query_pl

    scenarios = query_pl(con, "select scenario_id, headline_basis from core.scenarios order by scenario_id")
    if MC_SCENARIO in scenarios.get_column("scenario_id").to_list():
        return MC_SCENARIO
    measured = scenarios.filter(scenarios.get_column("headline_basis") == 1).get_column("scenario_id").to_list()
    if not measured:
        raise SystemExit(f"no scenario {MC_SCENARIO!r} and none with headline_basis = 1")
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

    from bench import numpy_model
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
    import polars as pl

    from bench import numpy_model
    from pipelines.model.formula import model_view, scenario_inputs
    from pipelines.model.uncertainty import draw_inputs, summarize
    from pipelines.warehouse.database import open_readonly
    from pipelines.warehouse.queries import query_pl

    with open_readonly(warehouse) as con:
        scenario = monte_carlo_scenario(con)
        base = scenario_inputs(con).filter(pl.col("scenario_id") == scenario)
        parameters = query_pl(con, "select * from core.scenario_parameters where scenario_id = $s", {"s": scenario})
        summarize(con, draw_inputs(base, parameters, 100, seed=1))  # compile the SQL path once
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


def cpu_seconds() -> float:
    """User plus system CPU time of this process so far (all threads)."""
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


# --- the driver ---------------------------------------------------------------------------


@dataclass
class Figure:
    """One line of the summary table."""

    name: str
    value: str
    target: str = ""
    passed: bool | None = None


@dataclass
class Report:
    """Everything measured, for the summary table and the exit status."""

    figures: list[Figure] = field(default_factory=list)
    fatal: list[str] = field(default_factory=list)

    def add(self, name: str, value: str, target: str = "", passed: bool | None = None) -> None:
        """Append a figure."""
        self.figures.append(Figure(name, value, target, passed))


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


def parser_available() -> bool:
    """Whether the project's streaming nvidia-smi ingest and energy module can be imported."""
    from importlib.util import find_spec

    return find_spec("pipelines.ingest.streaming") is not None and find_spec("pipelines.ingest.energy.integration") is not None


def bench_ingest(report: Report, samples: int, repeats: int) -> float | None:
    """Figures 1: file size, medians, speed ratio, peak memory, energy agreement.

    Returns the project ingest's peak memory as a multiple of the file size (None if it did not run).
    """
    from bench.nvidia_smi_log import cached_log

    started = time.perf_counter()
    path = cached_log(OUT_DIR, samples)
    made = time.perf_counter() - started
    size = path.stat().st_size
    print(f"nvidia-smi log: {path.relative_to(PROJECT_ROOT)}, {samples:,} samples, {size / 1e6:.1f} MB (ready in {made:.1f}s)")
    report.add("nvidia-smi log size", f"{size / 1e6:.1f} MB ({samples:,} samples)")
    impls = ["polars", "pandas"] if parser_available() else ["pandas"]
    if "polars" not in impls:
        print("pipelines.ingest.parsers.nvidia_smi or pipelines.ingest.energy is missing: only the pandas baseline runs")
        report.add("project ingest", "not available (parser missing)", f">= {TARGET_SPEEDUP:g}x pandas", False)
    results: dict[str, list[dict[str, Any]]] = {impl: [] for impl in impls}
    for repeat in range(1, repeats + 1):
        for impl in impls:
            result = run_worker(impl, path)
            results[impl].append(result)
            print(
                f"  repeat {repeat} {impl:6}: {result['seconds']:7.2f} s wall, {result['cpu_seconds']:7.2f} s CPU, "
                f"peak {(result['peak_rss'] - result['rss_after_imports']) / 1e6:8.1f} MB above imports"
            )
    med = {impl: statistics.median(r["seconds"] for r in runs) for impl, runs in results.items()}
    mem = {impl: statistics.median(r["peak_rss"] - r["rss_after_imports"] for r in runs) for impl, runs in results.items()}
    report.add("pandas ingest (median)", f"{med['pandas']:.2f} s", "", None)
    report.add("pandas ingest peak memory (median)", f"{mem['pandas'] / 1e6:.0f} MB ({mem['pandas'] / size:.2f}x file)")
    if "polars" not in results:
        return None
    ratio = med["pandas"] / med["polars"]
    report.add("project ingest, streamed: parse, checks, energy, DuckDB write (median)", f"{med['polars']:.2f} s")
    report.add("speed ratio pandas / project", f"{ratio:.1f}x", f">= {TARGET_SPEEDUP:g}x", ratio >= TARGET_SPEEDUP)
    factor = mem["polars"] / size
    report.add("project ingest peak memory (median)", f"{mem['polars'] / 1e6:.0f} MB ({factor:.2f}x file)", f"<= {TARGET_MEMORY_X:g}x file", factor <= TARGET_MEMORY_X)
    reference = results["pandas"][0]["energies_j"]
    worst = 0.0
    for impl, runs in results.items():
        for run in runs:
            if sorted(run["energies_j"]) != sorted(reference):
                report.fatal.append(f"{impl} reports channels {sorted(run['energies_j'])}, pandas {sorted(reference)}")
                continue
            for channel, energy in run["energies_j"].items():
                worst = max(worst, abs(energy - reference[channel]) / abs(reference[channel]))
    agree = worst <= RTOL and not report.fatal
    for channel in sorted(reference):
        print(f"  {channel}: project {results['polars'][0]['energies_j'].get(channel, float('nan')):,.3f} J, pandas {reference[channel]:,.3f} J")
    report.add("energy agreement, every GPU", f"max rel diff {worst:.1e}", f"<= {RTOL:g}", agree)
    if not agree:
        report.fatal.append(f"project and pandas energies differ by {worst:.2e} relative (> {RTOL:g})")
    return factor


def bench_ingest_large(report: Report, samples: int, repeats: int, small_factor: float | None, small_samples: int = SAMPLES) -> None:
    """Figure 1, the ~2 GB log: the project's ingest only, peak memory as a multiple of the file, median of repeats."""
    from bench.nvidia_smi_log import cached_log

    started = time.perf_counter()
    path = cached_log(OUT_DIR, samples)
    made = time.perf_counter() - started
    size = path.stat().st_size
    print(f"large nvidia-smi log: {path.relative_to(PROJECT_ROOT)}, {samples:,} samples, {size / 1e6:,.0f} MB "
          f"(ready in {made:.1f}s); the project's ingest only")
    results = []
    for repeat in range(1, repeats + 1):
        result = run_worker("polars", path)
        results.append(result)
        print(f"  repeat {repeat} polars: {result['seconds']:7.2f} s wall, {result['cpu_seconds']:7.2f} s CPU, "
              f"peak {(result['peak_rss'] - result['rss_after_imports']) / 1e6:8.1f} MB above imports")
    seconds = statistics.median(r["seconds"] for r in results)
    peak = statistics.median(r["peak_rss"] - r["rss_after_imports"] for r in results)
    factor = peak / size
    label = f"{size / 1e9:.0f} GB" if size >= 1e9 else f"{size / 1e6:,.0f} MB"
    report.add(f"project ingest, {label} log ({samples:,} samples) (median)", f"{seconds:.1f} s")
    relative = ""
    if small_factor:
        print(f"  peak memory as a multiple of the file: {factor:.2f}x here, {small_factor:.2f}x on the "
              f"{small_samples:,}-sample log; ratio {factor / small_factor:.2f}")
        relative = f"; {factor / small_factor:.2f}x the small log's factor"
    report.add(f"project ingest peak memory, {label} log", f"{peak / 1e6:.0f} MB ({factor:.2f}x file{relative})",
               f"<= {TARGET_MEMORY_X:g}x file, flat", factor <= TARGET_MEMORY_X)


def bench_cold_run(report: Report, repeats: int, extra: tuple[str, ...] = ()) -> None:
    """Figure 2: wall time of ``edge-carbon run [extra]`` into a fresh warehouse, median of repeats.

    Without ``extra`` this is what ``make run`` does, and the figure is reported as cold ``make run``.
    """
    label = " ".join(("edge-carbon run", *extra)) if extra else "make run"
    times: list[float] = []
    for repeat in range(1, repeats + 1):
        with tempfile.TemporaryDirectory(prefix="edge_carbon_bench_") as tmp:
            env = {**os.environ, WAREHOUSE_ENV: str(Path(tmp) / "edge_carbon.duckdb"), "EDGE_CARBON_SITE": str(Path(tmp) / "site"),
                   "DAGSTER_HOME": str(Path(tmp) / "dagster_home")}
            started = time.perf_counter()
            proc = subprocess.run(
                [sys.executable, "-m", "pipelines.cli", "run", *extra], cwd=PROJECT_ROOT, env=env, capture_output=True, text=True, check=False
            )
            elapsed = time.perf_counter() - started
        if proc.returncode != 0:
            report.fatal.append(f"edge-carbon run failed (exit {proc.returncode}): {proc.stderr.strip()[-2000:]}")
            report.add(f"cold `{label}` (median)", "failed", f"<= {TARGET_RUN_S:g} s", False)
            return
        times.append(elapsed)
        print(f"  repeat {repeat} {label}: {elapsed:.1f} s")
    median = statistics.median(times)
    report.add(f"cold `{label}` (median)", f"{median:.1f} s", f"<= {TARGET_RUN_S:g} s", median <= TARGET_RUN_S)


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
               sql_first <= TARGET_MC_S)
    report.add(f"{label}, SQL second run (median)", f"{sql_second:.2f} s", f"<= {TARGET_MC_S:g} s", sql_second <= TARGET_MC_S)
    report.add("Monte Carlo SQL peak memory, whole process (median)", f"{peak / 1024**3:.2f} GiB", "<= 2 GiB",
               peak <= TARGET_MC_BYTES)
    report.add(f"{label}, numpy first run / second run (median)", f"{np_first:.2f} s / {np_second:.2f} s")
    # the mart's whole summary (three quantile sets, shares, a histogram) against numpy's R-only one: context, no target
    report.add("Monte Carlo numpy (R summary) / SQL (the mart's whole summary), with the draws, second runs",
               f"{np_second / sql_second:.2f}x")
    sql_eval = statistics.median(min(r["sql_eval_seconds"]) for r in results)
    np_eval = statistics.median(min(r["numpy_eval_seconds"]) for r in results)
    report.add("Monte Carlo evaluation on the same draws, SQL / numpy (R's quantiles and mean, best of 2, median)",
               f"{sql_eval:.2f} s / {np_eval:.2f} s")
    report.add("Monte Carlo evaluation numpy / SQL time (like for like; >= 1: SQL no slower)", f"{np_eval / sql_eval:.2f}x",
               f">= {TARGET_MC_RATIO:g}x", np_eval / sql_eval >= TARGET_MC_RATIO)
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
    report.add("render all dashboards (median)", f"{median:.1f} s", f"<= {TARGET_DASHBOARDS_S:g} s", median <= TARGET_DASHBOARDS_S)


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
               median <= TARGET_TESTS_S)


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


def main(argv: list[str] | None = None) -> int:
    """Parse arguments; run the benchmark (or, as ``worker``, one ingest)."""
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["worker"]:
        if len(argv) != 3:
            raise SystemExit("usage: python -m bench worker {polars,pandas} PATH")
        return worker(argv[1], Path(argv[2]))
    if argv[:1] == ["mc"]:
        if len(argv) != 4:
            raise SystemExit("usage: python -m bench mc WAREHOUSE DRAWS CHECK_DRAWS")
        return mc_worker(Path(argv[1]), int(argv[2]), int(argv[3]))
    if argv[:1] == ["fleet-worker"]:
        if len(argv) != 2:
            raise SystemExit("usage: python -m bench fleet-worker JSON")
        from bench.fleet import worker as fleet_worker

        return fleet_worker(argv[1])
    parser = argparse.ArgumentParser(prog="python -m bench", description=__doc__.split("\n\n")[0])
    parser.add_argument("--samples", type=int, default=SAMPLES, help=f"nvidia-smi samples (default {SAMPLES:,})")
    parser.add_argument("--repeats", type=int, default=3, help="repeats per figure (default 3)")
    parser.add_argument("--skip-ingest", action="store_true", help="skip the nvidia-smi ingest figures")
    parser.add_argument("--skip-run", action="store_true", help="skip the cold edge-carbon run figure")
    parser.add_argument("--skip-dashboards", action="store_true", help="skip the dashboard rendering figure")
    parser.add_argument("--skip-monte-carlo", action="store_true", help="skip the Monte Carlo figures")
    parser.add_argument("--large-samples", type=int, default=LARGE_SAMPLES,
                        help=f"samples of the large (~2 GB) log, project ingest only (default {LARGE_SAMPLES:,}; 0 skips it)")
    parser.add_argument("--skip-fleet", action="store_true", help="skip the fleet benchmark (minutes)")
    parser.add_argument("--fleet-logs", type=int, default=FLEET_LOGS, help=f"logs in the fleet (default {FLEET_LOGS:,})")
    parser.add_argument("--fleet-samples", type=int, default=FLEET_SAMPLES,
                        help=f"samples per fleet log, a multiple of 2 (default {FLEET_SAMPLES:,})")
    parser.add_argument("--fleet-repeats", type=int, default=None, help="repeats of each fleet figure (default: --repeats)")
    parser.add_argument("--skip-tests", action="store_true", help="skip the test suite's wall time (minutes per repeat)")
    parser.add_argument("--test-repeats", type=int, default=None, help="runs of the test suite (default: --repeats)")
    args = parser.parse_args(argv)
    if not args.skip_fleet and (args.fleet_logs < 1 or args.fleet_samples < 2 or args.fleet_samples % 2):
        parser.error("--fleet-logs must be >= 1 and --fleet-samples a positive multiple of 2 (two GPUs per poll)")
    report = Report()
    print(f"edge-carbon bench on {os.cpu_count()} CPU(s), python {sys.version.split()[0]}")
    warn_if_busy()
    if not args.skip_ingest:
        factor = bench_ingest(report, args.samples, args.repeats)
        if args.large_samples > 0 and parser_available():
            bench_ingest_large(report, args.large_samples, args.repeats, factor, args.samples)
    if not args.skip_run:
        print("cold edge-carbon run (fresh warehouse each time):")
        bench_cold_run(report, args.repeats, ("--skip-dashboards",))
        bench_cold_run(report, args.repeats)
    if not (args.skip_dashboards and args.skip_monte_carlo):
        with tempfile.TemporaryDirectory(prefix="edge_carbon_bench_") as tmp:
            warehouse = build_warehouse(report, Path(tmp))
            if warehouse is not None and not args.skip_dashboards:
                print("dashboards (rendered from a freshly built warehouse):")
                bench_dashboards(report, args.repeats, warehouse)
            if warehouse is not None and not args.skip_monte_carlo:
                print(f"Monte Carlo ({MC_DRAWS:,} draws, SQL and numpy, fresh subprocess each repeat):")
                bench_monte_carlo(report, args.repeats, warehouse)
    if not args.skip_fleet:
        print(f"fleet benchmark ({args.fleet_logs:,} logs x {args.fleet_samples:,} samples):")
        bench_fleet(report, args.fleet_logs, args.fleet_samples, args.fleet_repeats if args.fleet_repeats is not None else args.repeats)
    if not args.skip_tests:
        print("default test suite (`make test`, the tests not marked slow):")
        bench_tests(report, args.test_repeats if args.test_repeats is not None else args.repeats)
    print_table(report)
    for problem in report.fatal:
        print(f"ERROR: {problem}", file=sys.stderr)
    return 1 if report.fatal else 0


if __name__ == "__main__":
    raise SystemExit(main())
