"""marts.fleet_equivalence, given rows -> expected rows: one row per basis from the model's rows
(core.model_evaluation) under the frame's headline method row, R compute only beside R with the
scenario's own pattern, and the training power at which R falls to the claim's low end."""

from __future__ import annotations

import pytest

from schemas.vocabulary import COMPUTE_ONLY
from tests.marts.given_rows import XUE, claim_rows, run_mart

OWN = "radio_window"


def model_row(basis: str, pattern: str, r: float, *, method: bool = True, devices: float = 20.0) -> dict:
    return {"scenario_id": "s", "family": "base", "device_class": "laptop", "basis": basis, "is_headline": basis == "binding", "pattern": pattern,
            "is_headline_method": method, "cloud_gpu_capacity": 60.0, "device_capacity": 6.0, "capacity_unit": "TFLOPS",
            "online_fraction": 0.5, "devices_exact": 19.2, "devices_formula": 20.0, "devices": devices, "cloud_gpu_count": 2.0,
            "fleet_share": None, "job_years": 3.0, "devices_from": "formula", "devices_memory_floor": 4.0,
            "edge_added_kgco2e": 100.0, "edge_operational_kgco2e": 90.0, "edge_embodied_kgco2e": 10.0, "comm_gb": 0.0 if pattern == COMPUTE_ONLY else 5.0,
            "comm_kgco2e": 0.0 if pattern == COMPUTE_ONLY else 1.0, "link_time_share": 0.0 if pattern == COMPUTE_ONLY else 0.25,
            "cloud_total_kgco2e": 500.0, "reduction_factor": r, "hours_per_day": 8.0, "wall_factor": 1.25}


def test_one_row_per_basis_with_and_without_the_scenarios_own_pattern() -> None:
    rows = run_mart("marts.fleet_equivalence", {
        "core.scenarios": [{"scenario_id": "s", "comm_pattern": OWN, "claim_id": XUE["claim_id"], "edge_grid_gco2e_per_kwh": 400.0}],
        "core.claim": claim_rows(),
        "core.scenario_devices": [{"scenario_id": "s", "device_class": "laptop", "class_grid_gco2e_per_kwh": None}],
        "core.model_evaluation": [
            model_row("binding", COMPUTE_ONLY, 5.0), model_row("binding", OWN, 4.5), model_row("binding", "pipeline", 1.0),
            model_row("peak_flops", COMPUTE_ONLY, 6.0), model_row("peak_flops", OWN, 5.5),
            model_row("binding", OWN, 0.1, method=False),  # another method row: left out
        ],
    }, method_tables=["core.patterns"])
    assert [(r["basis"], r["reduction_factor"], r["reduction_factor_with_comm"], r["comm_pattern"]) for r in rows] == [
        ("binding", 5.0, 4.5, OWN), ("peak_flops", 6.0, 5.5, OWN)]
    binding = rows[0]
    assert binding["devices_per_gpu"] == 10.0  # 20 devices for the job's 2 GPUs
    assert (binding["comm_gb"], binding["link_time_share"]) == (5.0, 0.25)
    # R = 4 where the edge emits 500 / 4 = 125 kg: 115 kg of training electricity beside the 10 kg embodied, from
    # 20 devices x 0.5 online x 8 h x 365 x 3 years at 400 g/kWh, at the device (wall power / 1.25)
    kwh_per_watt = 20 * 0.5 * 8 * 365 * 3 / 1000
    assert binding["train_power_w_for_r4"] == pytest.approx(115 / (kwh_per_watt * 0.4) / 1.25, rel=1e-12)


def test_a_class_with_its_own_grid_sets_its_power_at_the_claims_low_end() -> None:
    """A class with <class>_grid_gco2e_per_kwh (core.scenario_devices) is charged at it, not the scenario's edge grid:
    the same 115 kg of training electricity at 200 g/kWh allows twice the power it would at 400."""
    rows = run_mart("marts.fleet_equivalence", {
        "core.scenarios": [{"scenario_id": "s", "comm_pattern": OWN, "claim_id": XUE["claim_id"], "edge_grid_gco2e_per_kwh": 400.0}],
        "core.claim": claim_rows(),
        "core.scenario_devices": [{"scenario_id": "s", "device_class": "laptop", "class_grid_gco2e_per_kwh": 200.0}],
        "core.model_evaluation": [model_row("binding", COMPUTE_ONLY, 5.0), model_row("binding", OWN, 4.5)],
    }, method_tables=["core.patterns"])
    kwh_per_watt = 20 * 0.5 * 8 * 365 * 3 / 1000
    assert rows[0]["train_power_w_for_r4"] == pytest.approx(115 / (kwh_per_watt * 0.2) / 1.25, rel=1e-12)
