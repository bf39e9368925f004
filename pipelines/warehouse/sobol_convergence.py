"""How the Sobol indices of the build converge on the full study's: per base sample size, how far the headline
rows' indices lie from the full study's (``edge-carbon sobol``, docs/results/sobol_full.csv) and how often each
row's top driver is the full study's. ``edge-carbon sobol --convergence 64,128,...`` writes the rows to
:data:`CONVERGENCE_RESULTS`, and ``edge-carbon docs`` renders them into docs/findings.md: the evidence for the
build's base sample size (pipelines.defs.assets.uncertainty ``sobol_base_samples``).

The headline rows are those docs/findings.md quotes: compute only, and R with each scenario's own communication
pattern (the R the verdict reads), the full study's top :data:`TOP` drivers of each.
"""

from __future__ import annotations

from pathlib import Path

import polars as pl

from schemas.vocabulary import COMPUTE_ONLY

#: The Sobol base samples of the build (``edge-carbon run``): the smallest size at which every headline row's top driver
#: is the full study's (the table :func:`convergence_table` renders); no size below the full study's holds every
#: headline index to the second decimal.
BUILD_BASE_SAMPLES = 256
#: The convergence rows, relative to the project root.
CONVERGENCE_RESULTS = Path("docs") / "results" / "sobol_convergence.csv"
#: The drivers per row compared: the full study's top three, as docs/findings.md quotes them.
TOP = 3
#: "Stable to the second decimal": every headline index within half a unit of the second decimal of the full study's.
SECOND_DECIMAL = 0.005
KEYS = ["scenario_id", "device_class", "pattern"]


def convergence_rows(studies: pl.DataFrame, full: pl.DataFrame, patterns: pl.DataFrame) -> pl.DataFrame:
    """Per base sample size of ``studies`` (sobol_rows' rows with ``base_samples``), against ``full`` (the full
    study's): the headline indices compared, their largest and median distance from the full study's (S1, ST), whether
    every one is within :data:`SECOND_DECIMAL`, and the share of headline rows whose top driver is the full study's.
    ``patterns``: each scenario's own communication pattern (scenario_id, comm_pattern)."""
    headline = full.join(patterns, on="scenario_id").filter(
        ((pl.col("pattern") == COMPUTE_ONLY) | (pl.col("pattern") == pl.col("comm_pattern"))) & (pl.col("rank") <= TOP))
    paired = headline.select(*KEYS, "parameter", pl.col("s1").alias("s1_full"), pl.col("st").alias("st_full")).join(
        studies.select(*KEYS, "parameter", "base_samples", "s1", "st"), on=[*KEYS, "parameter"])
    distances = paired.group_by("base_samples").agg(
        pl.len().alias("indices_compared"),
        (pl.col("s1") - pl.col("s1_full")).abs().max().alias("max_s1_distance"),
        (pl.col("st") - pl.col("st_full")).abs().max().alias("max_st_distance"),
        (pl.col("st") - pl.col("st_full")).abs().median().alias("median_st_distance"),
    )
    tops = headline.filter(pl.col("rank") == 1).select(*KEYS, pl.col("parameter").alias("full_top")).join(
        studies.filter(pl.col("rank") == 1).select(*KEYS, "base_samples", "parameter"), on=KEYS)
    agree = tops.group_by("base_samples").agg((pl.col("parameter") == pl.col("full_top")).mean().alias("top_driver_agrees"))
    return distances.join(agree, on="base_samples").with_columns(
        ((pl.col("max_s1_distance") < SECOND_DECIMAL) & (pl.col("max_st_distance") < SECOND_DECIMAL)).alias("second_decimal_stable")
    ).sort("base_samples")


def convergence_table(path: Path, build_samples: int) -> str:
    """The convergence rows of ``path`` as Markdown, the build's base sample size marked."""
    frame = pl.read_csv(path)
    lines = ["| base samples | headline indices | largest S1 distance | largest ST distance | median ST distance "
             "| to the 2nd decimal | top driver as the full study's |",
             "|---:|---:|---:|---:|---:|---|---:|"]
    for r in frame.iter_rows(named=True):
        mark = " (the build's)" if r["base_samples"] == build_samples else ""
        lines.append(f"| {r['base_samples']}{mark} | {r['indices_compared']} | {r['max_s1_distance']:.3f} | {r['max_st_distance']:.3f} "
                     f"| {r['median_st_distance']:.4f} | {'yes' if r['second_decimal_stable'] else 'no'} "
                     f"| {r['top_driver_agrees']:.0%} |")
    return "\n".join(lines)
