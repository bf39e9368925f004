"""marts.scaling_energy, given rows -> expected rows: Table 1 energy scaled with parameters, and the
paper's idealized communication (every parameter sent once per step) for the edge classes only."""

from __future__ import annotations

import pytest

from schemas.vocabulary import PAPER_FRAME
from tests.marts.given_rows import run_mart

SCENARIO = {"scenario_id": "s", "accounting_frame": PAPER_FRAME, "cloud_table1_energy_j": 36_000.0, "workload_steps": 1000.0,
            "bytes_per_param": 4.0, "edge_bandwidth_mb_per_s": 10.0, "wifi_radio_power_w": 0.5, "network_kwh_per_gb": 0.01,
            "router_kwh_per_gb": 0.02, "network_marginal_w_per_mbps": None, "router_marginal_w_per_mbps": None}
MODELS = [{"model_id": "OPT-125M", "params": 125e6}, {"model_id": "OPT-1.3B", "params": 1.3e9}]


def test_energy_scales_with_parameters_and_only_the_edge_communicates() -> None:
    rows = run_mart("marts.scaling_energy", {
        "core.scenarios": [SCENARIO], "staging.model_configs": MODELS,
        "core.scenario_devices": [{"scenario_id": "s", "device_class": "laptop", "table1_energy_j": 72_000.0},
                                  {"scenario_id": "s", "device_class": "phone", "table1_energy_j": None}],  # no Table 1 energy: no rows
    }, method_tables=["core.frames"])
    assert [(r["device_class"], r["model_id"]) for r in rows] == [
        ("cloud_gpu", "OPT-125M"), ("cloud_gpu", "OPT-1.3B"), ("laptop", "OPT-125M"), ("laptop", "OPT-1.3B")]
    cloud_small, cloud_big, laptop_small, laptop_big = rows
    assert cloud_small["compute_kwh"] == pytest.approx(0.01) and cloud_big["compute_kwh"] == pytest.approx(0.01 * 1.3e9 / 125e6)
    assert cloud_big["comm_gb"] == cloud_big["comm_kwh"] == 0 and cloud_big["total_kwh"] == pytest.approx(cloud_big["compute_kwh"])
    gb = 1000 * 1.3e9 * 4 / 1e9  # 1,000 steps x 1.3 B parameters x 4 B
    seconds = gb * 1e9 / 10e6  # at 10 MB/s
    kwh = seconds * 0.5 / 3.6e6 + gb * (0.01 + 0.02)  # radio at 0.5 W, and the average network rule (network + router kWh/GB)
    assert laptop_big["comm_gb"] == pytest.approx(gb) and laptop_big["comm_time_s"] == pytest.approx(seconds)
    assert laptop_big["comm_kwh"] == pytest.approx(kwh, rel=1e-12)
    assert laptop_big["total_kwh"] == pytest.approx(0.02 * 1.3e9 / 125e6 + kwh, rel=1e-12)
    assert laptop_small["compute_kwh"] == pytest.approx(0.02)
