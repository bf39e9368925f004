"""Monte Carlo and variance-based sensitivity over the model's one formula.

Every parameter with a range is drawn from its distribution (``core.scenario_parameters``:
uniform, triangular with the value as mode, normal or lognormal with low/high as the 95%
interval around the value); the draws are model inputs like any other and go through
``sql/model/evaluate.sql`` in one set-wise query. Variance shares come from SALib's Sobol
indices, with the same inverse-CDF transform applied to SALib's unit-cube samples.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import duckdb
import numpy as np
import polars as pl
from scipy.special import ndtri

from pipelines.model import model_view, parameter_columns
from pipelines.paths import sql_text
from pipelines.warehouse import query_pl

#: two-sided 95% normal quantile: low/high of a normal or lognormal row are value -/+ this many sd
Z95 = 1.959963984540054
#: unit-cube samples are kept inside (0, 1) so normal tails stay finite
U_EPS = 1e-12
METRICS = ("reduction_factor", "edge_added_kgco2e", "cloud_total_kgco2e")
#: bootstrap resamples behind SALib's confidence intervals of the Sobol indices
SOBOL_RESAMPLES = 50


@dataclass(frozen=True)
class Ranged:
    """One parameter drawn in a scenario."""

    parameter: str
    distribution: str
    value: float
    low: float
    high: float


def ranged_parameters(parameters: pl.DataFrame) -> list[Ranged]:
    """A scenario's parameters that have a distribution other than point and a non-empty range."""
    rows = parameters.filter(
        (pl.col("distribution") != "point") & pl.col("low").is_not_null() & pl.col("high").is_not_null()
        & (pl.col("low") < pl.col("high"))
    ).sort("parameter")
    return [Ranged(r["parameter"], r["distribution"], r["value"], r["low"], r["high"]) for r in rows.iter_rows(named=True)]


def from_unit(u: np.ndarray, p: Ranged) -> np.ndarray:
    """Map uniform (0, 1) samples to the parameter's distribution (inverse CDF)."""
    u = np.clip(u, U_EPS, 1 - U_EPS)
    if p.distribution == "uniform":
        return p.low + u * (p.high - p.low)
    if p.distribution == "triangular":
        a, b, c = p.low, p.high, p.value
        cut = (c - a) / (b - a)
        return np.where(u < cut, a + np.sqrt(u * (b - a) * (c - a)), b - np.sqrt((1 - u) * (b - a) * (b - c)))
    if p.distribution == "normal":
        return p.value + ndtri(u) * (p.high - p.low) / (2 * Z95)
    if p.distribution == "lognormal":
        return p.value * np.exp(ndtri(u) * np.log(p.high / p.low) / (2 * Z95))
    raise ValueError(f"{p.parameter}: unknown distribution {p.distribution!r}")


def inputs_from_unit(base: pl.DataFrame, ranged: list[Ranged], unit: np.ndarray, first_variant: int = 0) -> pl.DataFrame:
    """Model inputs for one scenario: ``base`` (one row) with the ranged columns drawn from ``unit``.

    ``unit`` has one row per draw and one column per ranged parameter, in ``ranged`` order.
    """
    n = unit.shape[0]
    drawn = {p.parameter: from_unit(unit[:, i], p) for i, p in enumerate(ranged)}
    columns = {}
    for name in parameter_columns(base):
        if name in drawn:
            columns[name] = pl.Series(name, drawn[name], dtype=pl.Float64)
        else:
            columns[name] = pl.repeat(base.item(0, name), n, dtype=pl.Float64, eager=True).alias(name)
    return pl.DataFrame(
        [pl.repeat(base.item(0, "scenario_id"), n, dtype=pl.String, eager=True).alias("scenario_id"),
         pl.int_range(first_variant, first_variant + n, eager=True).cast(pl.String).alias("variant_id"),
         *columns.values()]
    )


def draw_inputs(base_inputs: pl.DataFrame, parameters: pl.DataFrame, n_draws: int, seed: int) -> pl.DataFrame:
    """``n_draws`` parameter sets per scenario of ``base_inputs``, one independent stream per scenario."""
    frames = []
    for index, scenario in enumerate(base_inputs.get_column("scenario_id").to_list()):
        base = base_inputs.filter(pl.col("scenario_id") == scenario)
        ranged = ranged_parameters(parameters.filter(pl.col("scenario_id") == scenario))
        rng = np.random.default_rng([seed, index])
        frames.append(inputs_from_unit(base, ranged, rng.random((n_draws, len(ranged)))))
    return pl.concat(frames, how="vertical")


def summarize(con: duckdb.DuckDBPyConnection, inputs: pl.DataFrame) -> pl.DataFrame:
    """sql/model/uncertainty_summary.sql over the model's evaluation of ``inputs`` (headline basis)."""
    with model_view(con, inputs):
        return query_pl(con, sql_text("model/uncertainty_summary.sql"))


def uncertainty_rows(summary: pl.DataFrame, seed: int) -> pl.DataFrame:
    """marts.uncertainty: p05/p50/p95/mean per scenario x class x pattern x metric."""
    parts = []
    for metric in METRICS:
        q = pl.col(f"{metric}_quantiles")
        is_r = metric == "reduction_factor"
        parts.append(summary.select(
            "scenario_id", "device_class", "pattern", pl.lit(metric).alias("metric"),
            q.list.get(0).alias("p05"), q.list.get(1).alias("p50"), q.list.get(2).alias("p95"),
            pl.col(f"{metric}_mean").alias("mean"), pl.col("n_draws").cast(pl.Int64),
            *[(pl.col(c) if is_r else pl.lit(None, dtype=pl.Float64)).alias(c)
              for c in ("share_r_below_1", "share_r_below_4", "share_link_feasible", "share_memory_feasible")],
            pl.lit(seed, dtype=pl.Int64).alias("seed"),
        ))
    return pl.concat(parts).sort("scenario_id", "device_class", "pattern", "metric")


def distribution_rows(summary: pl.DataFrame) -> pl.DataFrame:
    """marts.uncertainty_distribution: percentiles 1..99 of R per scenario x class x pattern."""
    return (
        summary.select("scenario_id", "device_class", "pattern", "reduction_factor_percentiles")
        .with_columns(pl.int_ranges(1, 100).alias("percentile"))
        .explode("reduction_factor_percentiles", "percentile")
        .rename({"reduction_factor_percentiles": "reduction_factor"})
        .select("scenario_id", "device_class", "pattern", pl.col("percentile").cast(pl.Int64), "reduction_factor")
    )


def sobol_rows(
    con: duckdb.DuckDBPyConnection,
    base_inputs: pl.DataFrame,
    parameters: pl.DataFrame,
    base_samples: int,
    seed: int,
    log: Callable[[str], None] = lambda _: None,
) -> pl.DataFrame:
    """marts.uncertainty_drivers: Sobol first-order and total indices of R per parameter.

    SALib's Sobol sequence (Saltelli's scheme without second-order terms, N x (D + 2) model
    runs per scenario) is mapped through each parameter's inverse CDF and evaluated by the
    same SQL as every other mart; SALib then estimates S1 and ST with bootstrap 95% CIs.
    """
    from SALib.analyze import sobol as sobol_analyze
    from SALib.sample import sobol as sobol_sample

    rows: list[dict] = []
    for index, scenario in enumerate(base_inputs.get_column("scenario_id").to_list()):
        ranged = ranged_parameters(parameters.filter(pl.col("scenario_id") == scenario))
        if len(ranged) < 2:
            continue
        problem = {"num_vars": len(ranged), "names": [p.parameter for p in ranged], "bounds": [[0.0, 1.0]] * len(ranged)}
        unit = sobol_sample.sample(problem, base_samples, calc_second_order=False, scramble=True, seed=seed + index)
        inputs = inputs_from_unit(base_inputs.filter(pl.col("scenario_id") == scenario), ranged, unit)
        with model_view(con, inputs):
            evaluated = query_pl(con, "select cast(variant_id as bigint) as draw, device_class, pattern, reduction_factor "
                                      "from model_evaluation")
        log(f"{scenario}: Sobol indices of R over {len(ranged)} parameters from {unit.shape[0]:,} model runs")
        for (device_class, pattern), group in evaluated.sort("draw").group_by(["device_class", "pattern"], maintain_order=True):
            y = group.get_column("reduction_factor").to_numpy()
            if not np.all(np.isfinite(y)) or np.var(y) == 0:
                continue
            result = sobol_analyze.analyze(problem, y, calc_second_order=False, num_resamples=SOBOL_RESAMPLES, conf_level=0.95,
                                           seed=seed + index)
            total = float(np.clip(result["ST"], 0, None).sum())
            for i, p in enumerate(ranged):
                rows.append({
                    "scenario_id": scenario, "device_class": device_class, "pattern": pattern, "parameter": p.parameter,
                    "s1": float(result["S1"][i]), "s1_ci95": float(result["S1_conf"][i]),
                    "st": float(result["ST"][i]), "st_ci95": float(result["ST_conf"][i]),
                    "variance_share": max(float(result["ST"][i]), 0.0) / total if total > 0 else 0.0,
                    "model_runs": int(unit.shape[0]),
                })
    frame = pl.DataFrame(rows, schema={"scenario_id": pl.String, "device_class": pl.String, "pattern": pl.String,
                                       "parameter": pl.String, "s1": pl.Float64, "s1_ci95": pl.Float64, "st": pl.Float64,
                                       "st_ci95": pl.Float64, "variance_share": pl.Float64, "model_runs": pl.Int64})
    return frame.with_columns(
        pl.col("st").rank("ordinal", descending=True).over("scenario_id", "device_class", "pattern").cast(pl.Int64).alias("rank")
    ).sort("scenario_id", "device_class", "pattern", "rank")

