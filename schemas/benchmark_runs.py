"""staging.benchmark_runs: one row per measured (or reported) training run."""

from __future__ import annotations

import pandera.polars as pa
import polars as pl
from pandera.engines import polars_engine as pe

from schemas.base import Provenance

ENERGY_METHODS = ["trapezoid", "counter", "reported", "summary"]
LOG_FORMATS = ["nvidia_smi", "powermetrics", "monsoon", "android_sysfs", "rapl", "codecarbon", "zeus_power"]
#: Relative tolerance of the arithmetic identities between columns.
REL_TOL = 1e-9


class BenchmarkRuns(Provenance):
    """Grain: one training run on one device (``run_id`` is unique across all files).

    ``energy_j`` is the energy the run added: the integral of its power samples
    (``trapezoid``), the sum of its energy counters (``counter``, RAPL), the energy the tool
    reported (``reported``, CodeCarbon) or mean power x time of a summary row (``summary``,
    Zeus), minus ``idle_baseline_w`` x ``duration_s`` where a baseline is given.
    ``energy_gross_j`` is the same before that subtraction. Rows from a sampled log have
    ``source_row`` null (the run is derived from the whole file); rows from a per-run file
    (CodeCarbon, Zeus) point at their line.
    """

    #: The warehouse table(s) this model is the contract of (pipelines.warehouse.dictionary finds it so).
    __tables__ = ("staging.benchmark_runs",)

    run_id: str = pa.Field(unique=True, description="Stable id of the run: the log's manifest option run_id, or <source_id>:<line> for per-run files.")
    series_id: str = pa.Field(nullable=True, description="Groups repeated runs of one device and workload (e.g. table1_phone); null if the run is not a repeat.")
    device_id: str = pa.Field(description="Device that ran the training (e.g. nvidia-rtx-a5000, apple-m1).")
    model: str = pa.Field(nullable=True, description="Model trained, if known (e.g. OPT-125M).")
    workload: str = pa.Field(description="What was run (free text: task, model, batch size...).")
    started_at: pe.DateTime(time_zone="UTC") = pa.Field(  # type: ignore[valid-type]
        nullable=True, description="Start of the run (UTC); null when the file gives no time zone or no time."
    )
    duration_s: float = pa.Field(gt=0, description="Wall-clock duration of the run (s): last sample minus first sample.")
    energy_j: float = pa.Field(gt=0, description="Energy of the run (J), net of the idle baseline if one is given.")
    energy_gross_j: float = pa.Field(gt=0, description="Energy of the run (J) before the idle baseline is subtracted.")
    idle_baseline_w: float = pa.Field(nullable=True, ge=0, description="Idle power (W) subtracted over the duration; null if none.")
    mean_power_w: float = pa.Field(gt=0, description="energy_j / duration_s (W).")
    n_samples: int = pa.Field(nullable=True, ge=1, description="Power samples integrated (counted channels only); null for per-run files.")
    energy_method: str = pa.Field(isin=ENERGY_METHODS, description="trapezoid | counter | reported | summary: how energy_j was obtained.")
    log_format: str = pa.Field(isin=LOG_FORMATS, description="Format of the source file (the manifest kind).")
    is_synthetic: bool = pa.Field(description="True if the log was synthesised (not a measurement).")

    @pa.dataframe_check(name="finite_numbers", description="duration, energies and power are finite")
    @classmethod
    def finite_numbers(cls, data: pa.PolarsData) -> pl.LazyFrame:
        """No NaN or infinite values in the numeric columns."""
        cols = ["duration_s", "energy_j", "energy_gross_j", "mean_power_w"]
        return data.lazyframe.select(pl.all_horizontal([pl.col(c).is_finite() for c in cols]))

    @pa.dataframe_check(name="mean_power_is_energy_over_duration", description="mean_power_w = energy_j / duration_s")
    @classmethod
    def mean_power_matches(cls, data: pa.PolarsData) -> pl.LazyFrame:
        """mean_power_w x duration_s equals energy_j (relative tolerance REL_TOL)."""
        gap = (pl.col("mean_power_w") * pl.col("duration_s") - pl.col("energy_j")).abs()
        return data.lazyframe.select(gap <= REL_TOL * pl.col("energy_j").abs())

    @pa.dataframe_check(name="net_is_gross_minus_baseline", description="energy_j = energy_gross_j - idle_baseline_w x duration_s")
    @classmethod
    def net_matches_gross(cls, data: pa.PolarsData) -> pl.LazyFrame:
        """energy_j equals energy_gross_j minus the idle baseline times the duration."""
        expected = pl.col("energy_gross_j") - pl.col("idle_baseline_w").fill_null(0.0) * pl.col("duration_s")
        return data.lazyframe.select((expected - pl.col("energy_j")).abs() <= REL_TOL * pl.col("energy_gross_j").abs())
