"""``staging.benchmark_runs`` rows: one per training run, from its samples or as reported.

One power-log file is one training run. Its manifest entry's ``[source.options]`` describe the
run (:class:`pipelines.ingest.options.RunOptions`); ``log_format`` (the manifest kind) picks
the integration method (:mod:`pipelines.ingest.energy.integration`).
"""

from __future__ import annotations

import polars as pl

from pipelines.ingest.energy.integration import RUN_COLUMNS, counter_energy, integrate
from pipelines.ingest.options import RunOptions

#: Formats whose samples are power averaged from energy counters (integrated by summing).
COUNTER_FORMATS = frozenset({"rapl"})


def runs_from_samples(samples: pl.DataFrame, options: RunOptions, *, log_format: str) -> pl.DataFrame:
    """``staging.benchmark_runs`` rows (without provenance) for the runs in a samples frame.

    ``log_format`` (the manifest kind) picks the method: counters for RAPL, trapezoid
    otherwise. Device, model, workload, series and synthetic flag come from ``options``.
    """
    method = "counter" if log_format in COUNTER_FORMATS else "trapezoid"
    if samples.height == 0:
        energies = pl.DataFrame(schema=RUN_COLUMNS)
    elif method == "counter":
        energies = counter_energy(samples, idle_baseline_w=options.idle_baseline_w)
    else:
        energies = integrate(samples, idle_baseline_w=options.idle_baseline_w)
    return runs_from_energies(energies, options, log_format=log_format)


def runs_from_energies(energies: pl.DataFrame, options: RunOptions, *, log_format: str) -> pl.DataFrame:
    """``staging.benchmark_runs`` rows (without provenance) from integrated runs (``RUN_COLUMNS``).

    What :func:`runs_from_samples` returns once the samples are integrated; a streamed log
    integrates its samples as they are read (``RunningIntegrals.runs``) and comes in here.
    """
    method = "counter" if log_format in COUNTER_FORMATS else "trapezoid"
    return energies.select(
        "run_id",
        pl.lit(options.series_id, dtype=pl.String).alias("series_id"),
        pl.lit(options.device_id, dtype=pl.String).alias("device_id"),
        pl.lit(options.model, dtype=pl.String).alias("model"),
        pl.lit(options.workload, dtype=pl.String).alias("workload"),
        "started_at",
        "duration_s",
        "energy_j",
        "energy_gross_j",
        "idle_baseline_w",
        (pl.col("energy_j") / pl.col("duration_s")).alias("mean_power_w"),
        "n_samples",
        pl.lit(method).alias("energy_method"),
        pl.lit(log_format).alias("log_format"),
        pl.lit(options.is_synthetic).alias("is_synthetic"),
    )



def reported_runs(
    frame: pl.DataFrame,
    run: RunOptions,
    *,
    run_id: pl.Expr,
    device_id: pl.Expr,
    model: pl.Expr,
    workload: pl.Expr,
    started_at: pl.Expr,
    duration_s: pl.Expr,
    energy_j: pl.Expr,
    energy_method: str,
    log_format: str,
) -> pl.DataFrame:
    """benchmark_runs rows for formats that report one energy per run (no power samples).

    The columns that vary by format are passed as expressions; the rest (series, no idle
    baseline, no sample count, gross = net energy) are the same for every such format.
    """
    return frame.select(
        run_id.alias("run_id"),
        pl.lit(run.series_id, dtype=pl.String).alias("series_id"),
        device_id.alias("device_id"),
        model.alias("model"),
        workload.alias("workload"),
        started_at.cast(pl.Datetime("us", "UTC")).alias("started_at"),
        duration_s.alias("duration_s"),
        energy_j.alias("energy_j"),
        energy_j.alias("energy_gross_j"),
        pl.lit(None, dtype=pl.Float64).alias("idle_baseline_w"),
        (energy_j / duration_s).alias("mean_power_w"),
        pl.lit(None, dtype=pl.Int64).alias("n_samples"),
        pl.lit(energy_method).alias("energy_method"),
        pl.lit(log_format).alias("log_format"),
        pl.lit(run.is_synthetic).alias("is_synthetic"),
        "source_row",
    )
