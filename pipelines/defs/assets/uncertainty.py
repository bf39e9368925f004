"""Monte Carlo over every scenario's parameter distributions, and the variance ranking."""

import time
from concurrent.futures import ThreadPoolExecutor

import dagster as dg
import duckdb
import polars as pl

from pipelines.lib.checks import staging_checks
from pipelines.lib.metadata import column_metadata
from pipelines.lib.resources import Warehouse
from pipelines.lib.tables import write_table
from pipelines.model.formula import scenario_inputs
from pipelines.model.uncertainty import (
    DEFAULT_SEED,
    distribution_rows,
    draw_inputs,
    sobol_rows,
    summarize,
    uncertainty_rows,
)
from pipelines.warehouse.duckdb_limits import pin
from pipelines.warehouse.queries import query_pl
from pipelines.warehouse.sobol_convergence import BUILD_BASE_SAMPLES
from pipelines.warehouse.tables import preview_md
from schemas.reviewers import Uncertainty, UncertaintyDistribution, UncertaintyDrivers
from schemas.vocabulary import COMPUTE_ONLY, PAPER_PATTERN

KINDS = {"duckdb", "polars"}
TABLES = {
    "uncertainty": (Uncertainty, "p05, p50, p95 and mean of R, edge and cloud carbon per scenario, device class, basis (the headline and measured_throughput) and pattern."),
    "uncertainty_distribution": (UncertaintyDistribution, "Percentiles 1-99 of R per scenario, device class and pattern."),
    "uncertainty_drivers": (UncertaintyDrivers, "Sobol first-order and total indices of log R per drawn input (SALib), headline basis."),
}


class MonteCarloConfig(dg.Config):
    """Draws per scenario (50,000: the Monte Carlo standard error of a p05 or p95 is about 0.1
    percentage point, below the two decimals the verdict shows; more for a study), seed, Sobol
    base sample size (a power of 2; the build's 256, the smallest at which every headline row's top driver is the full
    study's: docs/findings.md's convergence table, ``edge-carbon sobol --convergence``; the full study of
    docs/findings.md uses 8192, which narrows the top driver's S1 95% CI below 0.1) and
    scenarios (empty: all)."""

    n_draws: int = 50_000
    seed: int = DEFAULT_SEED
    sobol_base_samples: int = BUILD_BASE_SAMPLES
    scenarios: list[str] = []


@dg.multi_asset(
    specs=[
        dg.AssetSpec(["marts", name], group_name="reviewers", kinds=KINDS, description=text,
                     deps=[["core", "scenarios"], ["core", "scenario_parameters"]], metadata=column_metadata(model))
        for name, (model, text) in TABLES.items()
    ],
    check_specs=[spec for name, (model, _) in TABLES.items() for spec in staging_checks(f"marts.{name}", model, joins_sources=False)],
    can_subset=False,
)
def monte_carlo(context: dg.AssetExecutionContext, config: MonteCarloConfig, warehouse: Warehouse):  # type: ignore[no-untyped-def]
    """Monte Carlo: every ranged parameter drawn from its distribution, the model evaluated set-wise.

    Uniform, triangular (mode = value), split triangular (mode and median = value), normal and
    lognormal (low/high = the 95% interval)
    draws, including the measured 95% CIs of the Table 1 powers; the draws go through the same
    SQL as every mart (sql/core/model_evaluation.sql) in one query. A scenario's draws describe that
    scenario: ranges that leave it are `point` rows (marts.sensitivity only). Draws respect the
    couplings: one grid draw for both sides (grid_shared), one GPU variant per draw, and
    utilisation moving power and throughput together. Drivers: SALib Sobol indices of log R on
    the same formula. Every draw comes from a stream keyed by the seed and (scenario id,
    parameter or coupling), never by a scenario's position, so one scenario never moves another.
    """
    con = warehouse.connection()
    base = scenario_inputs(con)
    if config.scenarios:
        unknown = sorted(set(config.scenarios) - set(base.get_column("scenario_id").to_list()))
        if unknown:
            raise dg.Failure(f"unknown scenarios in config: {unknown}")
        base = base.filter(pl.col("scenario_id").is_in(config.scenarios))
    parameters = query_pl(con, "select * from core.scenario_parameters")
    started = time.perf_counter()
    # the Sobol runs need no warehouse table: they go on a connection of their own, beside the
    # draws (DuckDB releases the GIL, so the two share the cores)
    sobol_log: list[str] = []
    with ThreadPoolExecutor(max_workers=1) as pool:
        sobol = pool.submit(sobol_rows, pin(duckdb.connect()), base, parameters, config.sobol_base_samples, config.seed, sobol_log.append)
        inputs = draw_inputs(base, parameters, config.n_draws, config.seed)
        context.log.info(f"drew {inputs.rows:,} parameter sets ({config.n_draws:,} per scenario x {base.height} scenarios)")
        summary = summarize(con, inputs)
        del inputs
        mc_seconds = time.perf_counter() - started
        context.log.info(f"evaluated the draws in {mc_seconds:.1f} s")
        drivers = sobol.result()
    context.log.info("Sobol indices of log R: " + "; ".join(sobol_log))
    rows = uncertainty_rows(summary, config.seed)
    headline = rows.filter((pl.col("metric") == "reduction_factor") & pl.col("is_headline") & pl.col("is_headline_method")
                           & pl.col("pattern").is_in([COMPUTE_ONLY, PAPER_PATTERN])).select(
        "scenario_id", "device_class", "pattern", "p05", "p50", "p95", "share_r_below_1")
    yield write_table(con, "marts.uncertainty", rows, Uncertainty, {
        "n_draws_per_scenario": config.n_draws, "seed": config.seed, "seconds": round(mc_seconds, 2),
        "reduction_factor": dg.MetadataValue.md(preview_md(headline, rows=40))})
    yield write_table(con, "marts.uncertainty_distribution", distribution_rows(summary), UncertaintyDistribution)
    top = drivers.filter((pl.col("pattern") == COMPUTE_ONLY) & (pl.col("rank") <= 3)).select(
        "scenario_id", "device_class", "parameter", "st", "st_share_of_sum")
    yield write_table(con, "marts.uncertainty_drivers", drivers, UncertaintyDrivers, {
        "sobol_base_samples": config.sobol_base_samples, "top_drivers": dg.MetadataValue.md(preview_md(top, rows=40))})
