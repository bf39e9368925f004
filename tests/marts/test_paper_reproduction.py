"""marts.paper_reproduction, given rows -> expected rows: each published claim (staging.paper_claims)
recomputed from the marts it rests on and judged: reproduced within the claim's tolerance, differs,
or not reproducible; Table 1 energies from the series that reproduce them, the energy ratio range
by its worse end, the device counts by the published FLOPS figures that give them, and the
compute-only reduction by the ends of the claim its scenario tests (core.claim)."""

from __future__ import annotations

from typing import Any

import pytest

from pipelines.defs.assets.marts import ReproductionConfig
from schemas.statuses import CALIBRATED
from tests.marts.given_rows import XUE, claim_rows, run_mart

CONFIG = ReproductionConfig()  # paper_text and the Table 1 workload, as the pipeline binds them
PARAMS = {"scenario": CONFIG.scenario, "table1_workload": CONFIG.table1_workload, "calibrated_status": CALIBRATED}
FLOPS = ("fp64_tflops", "fp32_tflops", "fp16_tflops", "tf32_tensor_tflops", "bf16_tensor_tflops", "fp16_tensor_tflops")


def claim(claim_id: str, paper_value: float | None, tolerance: float | None) -> dict:
    return {"claim_id": claim_id, "claim": f"the paper's {claim_id}", "paper_value": paper_value, "paper_value_text": str(paper_value),
            "unit": "kJ", "tolerance": tolerance, "location": "Table 1", "source_id": "paper"}


def series(claim_id: str | None, energy_j: float, *, workload: str = CONFIG.table1_workload) -> dict:
    return {"reproduces": claim_id, "workload": workload, "energy_j_mean": energy_j, "energy_j_ci95_low": energy_j - 500.0,
            "energy_j_ci95_high": energy_j + 500.0, "n_runs": 3, "mean_power_w_mean": 220.0, "duration_s_mean": energy_j / 220.0,
            "is_synthetic": False}


def fleet(scenario: str, device_class: str, r: float, devices_per_gpu: float, basis: str = "peak_flops") -> dict:
    return {"scenario_id": scenario, "basis": basis, "device_class": device_class, "reduction_factor": r,
            "reduction_factor_with_comm": r * 0.75, "devices_per_gpu": devices_per_gpu, "train_power_w_for_r4": 9.0,
            "comm_kgco2e": 1.0, "edge_added_kgco2e": 100.0}


def specs(device_id: str, base: str, **tflops: float) -> dict:
    return {"device_id": device_id, "base_device_id": base, **{c: tflops.get(c) for c in FLOPS}}


def reproduce(claims: list[dict], **tables: list[dict]) -> dict[str, dict[str, Any]]:
    """The mart over the claims and the given tables; every other table a row of another scenario or device."""
    given = {"staging.paper_claims": claims,
             "marts.training_energy": [series(None, 1.0, workload="another workload")],
             "marts.fleet_equivalence": [fleet("another", "phone", 1.0, 1.0)],
             "marts.lifecycle_carbon": [{"scenario_id": "another", "device_class": "cloud_gpu", "total_kgco2e": 1.0,
                                         "operational_kgco2e": 1.0, "embodied_kgco2e": 0.0, "horizon_years": 3.0}],
             "staging.device_specs": [specs("nvidia-rtx-a5000", "nvidia-rtx-a5000", fp32_tflops=27.8)],
             "marts.distributed_training_energy": [{"scenario_id": "another", "energy_ratio_vs_cloud_gpu": 1.0}],
             "marts.scaling_energy": [{"scenario_id": "another", "device_class": "laptop", "model_id": "OPT-66B", "total_kwh": 1.0,
                                       "comm_kwh": 0.0}],
             "core.scenarios": [{"scenario_id": CONFIG.scenario, "claim_id": XUE["claim_id"]}],
             "core.claim": claim_rows(),
             "core.scenario_parameters": [{"scenario_id": "another", "parameter": "cloud_grid_gco2e_per_kwh", "status": CALIBRATED}],
             **{name.replace("__", "."): rows for name, rows in tables.items()}}
    rows = run_mart("marts.paper_reproduction", given, PARAMS)
    assert [r["claim_id"] for r in rows] == sorted(c["claim_id"] for c in claims)  # one row per claim
    return {r["claim_id"]: r for r in rows}


def test_a_table1_claim_within_its_tolerance_is_reproduced_and_one_outside_differs() -> None:
    rows = reproduce([claim("T1_cloud_energy", 55.0, 0.02), claim("T1_phone_energy", 35.1, 0.02),
                      claim("T1_laptop_energy", 7.2, 0.02), claim("T2_distributed", None, None)],
                     marts__training_energy=[series("T1_cloud_energy", 55_400.0), series("T1_phone_energy", 36_000.0),
                                             series(None, 1_000.0),  # a user's own series reproduces nothing
                                             series("T1_laptop_energy", 7_200.0, workload="another workload")])
    cloud, phone, laptop = rows["T1_cloud_energy"], rows["T1_phone_energy"], rows["T1_laptop_energy"]
    assert (cloud["status"], cloud["reproduced_value"]) == ("reproduced", pytest.approx(55.4, rel=1e-12))
    assert cloud["relative_error"] == pytest.approx(55.4 / 55.0 - 1, rel=1e-9)  # 0.73% <= 2%
    assert cloud["reproduced_value_text"] == "55.40 kJ (95% CI 54.90-55.90, 3 runs, mean power 220.00 W, 252 s)"
    assert cloud["explanation"] == "Measured logs." and cloud["scenario_id"] == "paper_text"
    assert (phone["status"], phone["relative_error"]) == ("differs", pytest.approx(36.0 / 35.1 - 1, rel=1e-9))  # 2.56% > 2%
    # its series is of another workload: nothing recomputes it
    assert (laptop["status"], laptop["reproduced_value_text"], laptop["reproduced_value"]) == ("not reproducible", "not recomputed", None)
    assert rows["T2_distributed"]["status"] == "not reproducible"  # the paper publishes no cells


def test_the_ratio_range_is_judged_by_its_worse_end() -> None:
    def ratio_range(laptop_j: float) -> dict:
        return reproduce([claim("T1_ratio_range", None, 0.05)], marts__training_energy=[
            series("T1_cloud_energy", 55_000.0), series("T1_phone_energy", 36_000.0), series("T1_laptop_energy", laptop_j)])[
            "T1_ratio_range"]
    # phone 55 / 36 = 1.528 (1.85% over 1.5); laptop 55 / 7 = 7.857 (4.76% over 7.5): within 5%
    within = ratio_range(7_000.0)
    assert within["relative_error"] == pytest.approx(55 / 7 / 7.5 - 1, rel=1e-12)
    assert (within["status"], within["reproduced_value"]) == ("reproduced", None)
    assert within["reproduced_value_text"] == "1.53x (phone), 7.86x (laptop)"
    # laptop 55 / 6.8 = 8.088: 7.84% over 7.5
    beyond = ratio_range(6_800.0)
    assert (beyond["status"], beyond["relative_error"]) == ("differs", pytest.approx(55 / 6.8 / 7.5 - 1, rel=1e-12))


def test_a_device_count_is_reproduced_only_by_a_published_flops_figure() -> None:
    rows = reproduce([claim("F5_laptop_count", 15.0, 0.0), claim("F5_phone_count", 69.0, 0.0)],
                     staging__device_specs=[specs("nvidia-h100-sxm", "nvidia-h100-sxm", fp64_tflops=34.0, fp32_tflops=67.0),
                                            specs("apple-m2-pro", "apple-m2-pro", fp32_tflops=6.8),
                                            specs("qualcomm-sd888", "qualcomm-sd888", fp32_tflops=1.7)],
                     marts__fleet_equivalence=[fleet("vendor_fp32", "laptop", 8.0, 15.0), fleet("vendor_fp32", "phone", 4.0, 40.0),
                                               fleet("vendor_fp32", "laptop", 8.0, 99.0, basis="binding")])  # another basis
    laptop, phone = rows["F5_laptop_count"], rows["F5_phone_count"]
    # 34 TFLOPS FP64 x 24 h / 8 h = 102 = 15 x 6.8: ceil(15) = 15 laptops, as the vendor-FP32 formula's 15
    assert (laptop["status"], laptop["reproduced_value"]) == ("reproduced", 15.0)
    assert laptop["explanation"] == "15 laptops: reproduced by nvidia-h100-sxm fp64 34.0 TFLOPS x 24h/8h / apple-m2-pro 6.8"
    assert laptop["reproduced_value_text"] == "laptop: vendor-FP32 formula gives 15"
    # 69 phones need F_gpu x duty in (68 x 1.7, 69 x 1.7] = (115.6, 117.3]: 34, 67, 102 or 201 TFLOPS is not
    assert (phone["status"], phone["reproduced_value"]) == ("not reproducible", 40.0)
    assert phone["explanation"].endswith("it needs F_gpu x duty in (115.6, 117.3] with qualcomm-sd888 at 1.7 TFLOPS")


def test_the_compute_only_reduction_is_judged_against_the_claims_ends() -> None:
    rows = reproduce([claim("F5_reduction", None, 0.1)],
                     marts__fleet_equivalence=[fleet("paper_text", "phone", 3.7, 69.0), fleet("paper_text", "laptop", 8.4, 15.0)])
    reduction = rows["F5_reduction"]
    # core.claim's ends 4x (phones) and 8x (laptops): |3.7 / 4 - 1| = 7.5%, |8.4 / 8 - 1| = 5%: the worse is 7.5% <= 10%
    assert (reduction["status"], reduction["relative_error"]) == ("reproduced", pytest.approx(0.075, rel=1e-12))
    assert reduction["reproduced_value_text"] == "3.70x (phones, N=69), 8.40x (laptops, N=15)"


@pytest.mark.parametrize(("status", "expected"), [("calibrated", "consistent by construction"), ("assumed", "reproduced")])
def test_an_output_met_by_a_calibrated_input_is_consistent_by_construction_never_reproduced(status: str, expected: str) -> None:
    """7.0 t recomputed against a published 7.0 t: reproduced where its grid intensity is assumed, consistent by
    construction where it is calibrated (chosen to meet this very total), the explanation saying which input."""
    gpu = {"scenario_id": CONFIG.scenario, "device_class": "cloud_gpu", "total_kgco2e": 7000.0, "operational_kgco2e": 6750.0,
           "embodied_kgco2e": 250.0, "horizon_years": 3.0}
    row = reproduce([{**claim("F4_gpu_total", 7.0, 0.05), "unit": "tCO2e", "location": "Figure 4"}], marts__lifecycle_carbon=[gpu],
                    core__scenario_parameters=[{"scenario_id": CONFIG.scenario, "parameter": "cloud_grid_gco2e_per_kwh", "status": status},
                                               {"scenario_id": "another", "parameter": "cloud_grid_gco2e_per_kwh", "status": CALIBRATED}])[
        "F4_gpu_total"]
    assert (row["status"], row["reproduced_value"], row["relative_error"]) == (expected, pytest.approx(7.0), pytest.approx(0.0))
    assert row["explanation"].startswith("Consistent by construction: cloud_grid_gco2e_per_kwh is calibrated to this output.") == (
        status == CALIBRATED)
