"""Figure group 4: the Monte Carlo of one scenario (1,000,000 draws), timed, its peak memory measured in a fresh
process, and its draws checked against the numpy baseline (bench/baseline/)."""

from __future__ import annotations

import json
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from bench.memory import current_rss_bytes, peak_rss_bytes
from bench.report import Report
from pipelines.paths import PROJECT_ROOT
from schemas.vocabulary import MEASURED_BASIS

MC_DRAWS = 1_000_000
MC_CHECK_DRAWS = 2_000
MC_SCENARIO = "realistic_consequential"
MC_SEEDS = (20250701, 20250702)
MC_RTOL = 1e-9
TARGET_MC_S = 3.0
TARGET_MC_BYTES = 2 * 1024**3
TARGET_MC_RATIO = 1.0


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
    """The rows of a ``pipelines.model.uncertainty.summarize`` frame on each scenario's headline basis and network method,
    of the patterns every scenario is evaluated on (the edge designs beyond them are drawn on a share of the draws)."""
    import polars as pl

    from schemas.vocabulary import PATTERNS

    if "best_design" in summary.columns:
        summary = summary.filter(~pl.col("best_design") & pl.col("pattern").is_in(PATTERNS))
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
    from pipelines.model.draw_tables import draw_tables
    from pipelines.model.formula import model_view
    from pipelines.warehouse.queries import query_pl

    keys = ["scenario_id", "variant_id", "device_class", "pattern"]
    with draw_tables(con, draws.drawn, draws.constants) as (inputs, devices), model_view(con, inputs, devices=devices):
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
    from pipelines.model.draw_tables import draw_tables
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
            with draw_tables(con, same.drawn, same.constants) as (inputs, devices), model_view(con, inputs, devices=devices):
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
