"""marts.training_energy, given rows -> expected rows: one row per benchmark series (paper Table 1)
with its device class, its energy and the Student-t 95% CI of staging.benchmark_series, and the
energy ratio and slowdown against the reference GPU's series of the same workload (the series that
reproduces the paper where there is one, so a user's own series of that GPU moves no ratio)."""

from __future__ import annotations

import datetime as dt
import math

import duckdb
import pyarrow as pa
import pytest

from pipelines.defs.assets.marts import TrainingEnergyConfig
from pipelines.ingest.energy.student_t import t_quantile
from pipelines.paths import sql_text
from tests.marts.given_rows import run_mart

REFERENCE = TrainingEnergyConfig().reference_device  # nvidia-rtx-a5000, as the pipeline binds it
TABLE1 = "OPT-125M training, paper Table 1"
SPECS = [{"base_device_id": REFERENCE, "device_id": REFERENCE, "device_class": "workstation_gpu"},
         {"base_device_id": "apple-m2-pro", "device_id": "apple-m2-pro", "device_class": "laptop"},
         {"base_device_id": "apple-m2-pro", "device_id": "apple-m2-pro-32gb", "device_class": "laptop"},  # a variant: one row still
         {"base_device_id": "qualcomm-sd888", "device_id": "qualcomm-sd888", "device_class": "phone"}]


def series(series_id: str, device: str, energy_j: float, duration_s: float, *, workload: str = TABLE1,
           reproduces: str | None = None) -> dict:
    return {"series_id": series_id, "device_id": device, "model": "OPT-125M", "workload": workload, "n_runs": 3,
            "energy_j_mean": energy_j, "energy_j_ci95_low": energy_j - 10.0, "energy_j_ci95_high": energy_j + 10.0,
            "duration_s_mean": duration_s, "mean_power_w_mean": energy_j / duration_s, "is_synthetic": True,
            "reproduces": reproduces, "source_id": series_id}


def test_ratios_against_the_reference_series_that_reproduces_the_paper() -> None:
    rows = run_mart("marts.training_energy", {"staging.device_specs": SPECS, "staging.benchmark_series": [
        series("a5000_paper", REFERENCE, 36_000.0, 120.0, reproduces="T1_cloud_energy"),
        series("a5000_a_user_log", REFERENCE, 50_000.0, 150.0),  # first by series_id, but reproduces nothing: not the reference
        series("m2_paper", "apple-m2-pro", 4_800.0, 600.0, reproduces="T1_laptop_energy"),
        series("sd888_paper", "qualcomm-sd888", 24_000.0, 2_400.0, reproduces="T1_phone_energy"),
        series("m2_other", "apple-m2-pro", 9_000.0, 900.0, workload="OPT-350M training"),  # no reference series of its workload
    ]}, {"reference_device": REFERENCE})
    # ordered by workload, then energy
    assert [(r["series_id"], r["device_class"]) for r in rows] == [
        ("m2_paper", "laptop"), ("sd888_paper", "phone"), ("a5000_paper", "workstation_gpu"),
        ("a5000_a_user_log", "workstation_gpu"), ("m2_other", "laptop")]
    laptop, phone, reference, user, other = rows
    assert laptop["energy_ratio_vs_cloud_gpu"] == pytest.approx(7.5, rel=1e-12)  # 36,000 J / 4,800 J
    assert laptop["slowdown_vs_cloud_gpu"] == pytest.approx(5.0, rel=1e-12)  # 600 s / 120 s
    assert phone["energy_ratio_vs_cloud_gpu"] == pytest.approx(1.5, rel=1e-12)  # 36,000 / 24,000
    assert phone["slowdown_vs_cloud_gpu"] == pytest.approx(20.0, rel=1e-12)  # 2,400 / 120
    assert (reference["energy_ratio_vs_cloud_gpu"], reference["slowdown_vs_cloud_gpu"]) == (1.0, 1.0)
    assert user["energy_ratio_vs_cloud_gpu"] == pytest.approx(0.72, rel=1e-12)  # 36,000 / 50,000
    assert user["slowdown_vs_cloud_gpu"] == pytest.approx(1.25, rel=1e-12)  # 150 / 120
    assert {r["reference_series_id"] for r in rows[:4]} == {"a5000_paper"}
    assert {r["reference_device_id"] for r in rows} == {REFERENCE}
    assert other["energy_ratio_vs_cloud_gpu"] is None and other["reference_series_id"] is None


def runs(series_id: str, device: str, energies_j: list[float], duration_s: float, claim: str) -> list[dict]:
    start = dt.datetime(2024, 5, 1, tzinfo=dt.UTC)
    return [{"run_id": f"{series_id}_{i}", "series_id": series_id, "device_id": device, "model": "OPT-125M", "workload": TABLE1,
             "energy_j": e, "duration_s": duration_s, "mean_power_w": e / duration_s, "is_synthetic": False, "reproduces": claim,
             "source_id": series_id, "source_file": f"{series_id}.csv", "started_at": start + dt.timedelta(hours=i)}
            for i, e in enumerate(energies_j)]


def benchmark_series(given_runs: list[dict]) -> list[dict]:
    """sql/staging/benchmark_series.sql over the runs, with the t table bound as the pipeline binds it."""
    sizes = sorted({sum(r["series_id"] == s for r in given_runs) for s in {r["series_id"] for r in given_runs}})
    con = duckdb.connect()
    con.register("benchmark_runs", pa.Table.from_pylist(given_runs))
    cursor = con.execute(sql_text("staging/benchmark_series.sql"),
                         {"t_df": [n - 1 for n in sizes], "t_975": [t_quantile(n - 1) for n in sizes]})
    names = [d[0] for d in cursor.description]
    return [dict(zip(names, row, strict=True)) for row in cursor.fetchall()]


def test_the_student_t_95_ci_over_repeated_runs_reaches_the_mart() -> None:
    given_runs = (runs("a5000", REFERENCE, [35_000.0, 37_000.0], 120.0, "T1_cloud_energy")
                  + runs("m2", "apple-m2-pro", [4_700.0, 4_800.0, 4_900.0], 600.0, "T1_laptop_energy"))
    rows = run_mart("marts.training_energy", {"staging.device_specs": SPECS, "staging.benchmark_series": benchmark_series(given_runs)},
                    {"reference_device": REFERENCE})
    assert [(r["series_id"], r["n_runs"]) for r in rows] == [("m2", 3), ("a5000", 2)]
    laptop, gpu = rows
    # laptop: mean 4,800 J, sample sd 100 J, t(0.975, 2 df) = 4.3027: 4,800 -/+ 4.3027 x 100 / sqrt(3) = 4,800 -/+ 248.41
    half = 4.302652729911275 * 100.0 / math.sqrt(3)
    assert laptop["energy_j_mean"] == pytest.approx(4_800.0, rel=1e-12)
    assert (laptop["energy_j_ci95_low"], laptop["energy_j_ci95_high"]) == (
        pytest.approx(4_800.0 - half, rel=1e-9), pytest.approx(4_800.0 + half, rel=1e-9))
    assert laptop["energy_j_ci95_low"] == pytest.approx(4_551.59, abs=0.01)
    # GPU: mean 36,000 J, sd 1,414.21 J (= 1,000 sqrt 2), t(0.975, 1 df) = 12.706: 36,000 -/+ 12.706 x 1,000 sqrt 2 / sqrt 2
    assert (gpu["energy_j_ci95_low"], gpu["energy_j_ci95_high"]) == (
        pytest.approx(36_000.0 - 12_706.204736174698, rel=1e-9), pytest.approx(36_000.0 + 12_706.204736174698, rel=1e-9))
    assert laptop["energy_ratio_vs_cloud_gpu"] == pytest.approx(7.5, rel=1e-12)  # 36,000 J / 4,800 J
    assert laptop["mean_power_w_mean"] == pytest.approx(8.0, rel=1e-12)  # 4,800 J / 600 s
    assert laptop["is_synthetic"] is False and laptop["reproduces"] == "T1_laptop_energy"
