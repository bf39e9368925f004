"""staging.benchmark_series: repeated runs of one device and workload, with a 95% CI."""

from __future__ import annotations

import pandera.polars as pa
import polars as pl

from schemas.base import Provenance

#: The paper claims a series can reproduce: the Table 1 energies, each read by
#: marts.paper_reproduction from the one series marked with it (its logs' option ``reproduces``).
TABLE1_CLAIMS = ("T1_cloud_energy", "T1_laptop_energy", "T1_phone_energy")


class BenchmarkSeries(Provenance):
    """Grain: one series (``series_id``) = the repeated runs of one device and workload.

    Any number of series may share a device and workload (each log registered with a
    series_id of its own is one). Derived from staging.benchmark_runs.
    ``energy_j_ci95_low``/``high`` is the Student-t 95% confidence interval of the mean run
    energy: mean +/- t(0.975, n-1) x sd / sqrt(n); null for a single run. The series has no file of its own, so ``source_id`` and ``source_file``
    are those of the series' first run (earliest ``started_at``, then ``run_id``) and
    ``source_row`` is null; every run's own source is in staging.benchmark_runs.
    """

    #: The warehouse table(s) this model is the contract of (pipelines.warehouse.dictionary finds it so).
    __tables__ = ("staging.benchmark_series",)

    series_id: str = pa.Field(unique=True, description="The series (joins staging.benchmark_runs.series_id).")
    device_id: str = pa.Field(description="Device of every run of the series.")
    model: str = pa.Field(nullable=True, description="Model trained, if known.")
    workload: str = pa.Field(description="Workload of every run of the series.")
    n_runs: int = pa.Field(ge=1, description="Runs in the series (valid runs only; quarantined runs are not counted).")
    energy_j_mean: float = pa.Field(gt=0, description="Mean run energy (J).")
    energy_j_sd: float = pa.Field(nullable=True, ge=0, description="Sample standard deviation of run energy (J); null for one run.")
    ci95_t: float = pa.Field(nullable=True, gt=0, description="Student-t quantile t(0.975, n_runs - 1) used for the interval; null for one run.")
    energy_j_ci95_low: float = pa.Field(nullable=True, description="Lower end of the 95% CI of the mean energy (J).")
    energy_j_ci95_high: float = pa.Field(nullable=True, description="Upper end of the 95% CI of the mean energy (J).")
    duration_s_mean: float = pa.Field(gt=0, description="Mean run duration (s).")
    mean_power_w_mean: float = pa.Field(gt=0, description="Mean of the runs' mean power (W).")
    mean_power_w_ci95_low: float = pa.Field(nullable=True, description="Lower end of the 95% CI of the mean power (W); null for one run.")
    mean_power_w_ci95_high: float = pa.Field(nullable=True, description="Upper end of the 95% CI of the mean power (W); null for one run.")
    is_synthetic: bool = pa.Field(description="True if the runs were synthesised (not measured).")
    reproduces: str = pa.Field(
        nullable=True, isin=list(TABLE1_CLAIMS),
        description="The paper claim (staging.paper_claims.claim_id) this series reproduces, from the option reproduces of its "
                    "logs' manifest entries: set on the paper's own Table 1 series only, each claim on one series; null for "
                    "every other series (a user's own logs among them), which marts.paper_reproduction does not read.",
    )

    @pa.dataframe_check(name="ci_brackets_mean", description="ci95_low <= mean <= ci95_high (energy and power)")
    @classmethod
    def ci_brackets_mean(cls, data: pa.PolarsData) -> pl.LazyFrame:
        """Each interval, where there is one, contains its mean."""
        checks = [
            pl.col(f"{name}_ci95_low").is_null()
            | ((pl.col(f"{name}_ci95_low") <= pl.col(f"{name}_mean")) & (pl.col(f"{name}_mean") <= pl.col(f"{name}_ci95_high")))
            for name in ("energy_j", "mean_power_w")
        ]
        return data.lazyframe.select(pl.all_horizontal(checks))
