"""marts.distributed_training_energy, given rows -> expected rows: OPT-1.3B trained by a fleet of
`table2_devices` edge devices (paper Table 2, our estimate): Table 1 energy scaled to 1.3B
parameters, plus each byte-moving pattern's traffic (idealized, parameter server, ring all-reduce,
pipeline) at the radio power and the network energy per GB of the scenario's accounting frame."""

from __future__ import annotations

import pytest

from schemas.vocabulary import PAPER_FRAME
from tests.marts.given_rows import run_mart

MODELS = [{"model_id": "OPT-125M", "params": 125e6, "hidden_size": 768, "n_layers": 12},
          {"model_id": "OPT-1.3B", "params": 1.3e9, "hidden_size": 2048, "n_layers": 24}]
P, B = 1.3e9, 4.0  # parameters, bytes per parameter


def scenario(scenario_id: str, frame: str) -> dict:
    return {"scenario_id": scenario_id, "accounting_frame": frame, "table2_devices": 8.0, "cloud_table1_energy_j": 36_000.0,
            "workload_steps": 16.0, "batch_size": 512.0, "sequence_length": 512.0, "local_steps_per_sync": 1.0,
            "bytes_per_param": B, "activation_bytes": 2.0, "comm_compression": 1.0, "training_bytes_per_param": 16.0,
            "edge_usable_memory_fraction": 0.5, "edge_bandwidth_mb_per_s": 10.0, "wifi_radio_power_w": 0.5,
            "wifi_receive_power_w": 0.4, "network_kwh_per_gb": 0.01, "router_kwh_per_gb": 0.02,
            "network_marginal_w_per_mbps": 0.9, "router_marginal_w_per_mbps": 0.45}


def device(scenario_id: str, device_class: str, energy_j: float | None) -> dict:
    return {"scenario_id": scenario_id, "device_class": device_class, "table1_energy_j": energy_j, "device_memory_gb": 16.0}


def given(*scenarios: dict, devices: list[dict]) -> list[dict]:
    return run_mart("marts.distributed_training_energy", {
        "core.scenarios": list(scenarios), "staging.model_configs": MODELS, "core.scenario_devices": devices,
    }, method_tables=["core.frames", "core.patterns"])


def test_each_pattern_moves_its_bytes_over_the_radio_and_the_network() -> None:
    rows = given(scenario("s", PAPER_FRAME), devices=[device("s", "laptop", 72_000.0),
                                                      device("s", "phone", None)])  # no Table 1 energy: no rows
    assert [(r["device_class"], r["pattern"], r["model_id"], r["devices"]) for r in rows] == [
        ("laptop", p, "OPT-1.3B", 8.0) for p in ("idealized", "parameter_server", "pipeline", "ring_allreduce")]
    by_pattern = {r["pattern"]: r for r in rows}
    # 16 steps x 512 x 512 tokens; 8 devices each take a 262,144-token batch per step: 16 / 8 = 2 syncs
    tokens, per_step = 16 * 512 * 512, 512 * 512
    syncs = tokens / (8 * per_step)
    # pipeline: activations a = 2 x 2,048 hidden x 2 B = 8,192 B per token per boundary beat the all-reduce's
    # d / N = (2 x 1.3e9 x 4 B / 262,144 tokens) / 8 = 4,959 B, so the fewest stages that hold the training
    # state: ceil(1.3e9 x 16 B / (16 GB x 0.5)) = ceil(2.6) = 3; the 8 / 3 replicas all-reduce (1 - 3 / 8) of it
    pipeline_bytes = tokens * 2 * (3 - 1) * 2048 * 2 + tokens * 2 * P * B / per_step * (1 - 3 / 8)
    expected_gb = {"idealized": syncs * 8 * P * B / 1e9,  # N p b per sync: 83.2 GB
                   "parameter_server": syncs * 2 * 8 * P * B / 1e9,  # 2 N p b: 166.4 GB
                   "ring_allreduce": syncs * 2 * (8 - 1) * P * B / 1e9,  # 2 (N - 1) p b: 145.6 GB
                   "pipeline": pipeline_bytes / 1e9}  # 68.72 + 104 = 172.72 GB
    assert expected_gb["pipeline"] == pytest.approx(172.719476736, rel=1e-12)
    compute = 72_000 * 1.3e9 / 125e6 / 3.6e6  # Table 1 energy scaled by 1.3B / 125M parameters: 0.208 kWh
    cloud = 36_000 * 1.3e9 / 125e6 / 3.6e6  # 0.104 kWh
    for pattern, gb in expected_gb.items():
        row = by_pattern[pattern]
        # the sender's radio at 0.5 W for GB / 10 MB/s, and the average rule: (network + router) kWh per GB
        comm = gb * 1e9 / 10e6 * 0.5 / 3.6e6 + gb * (0.01 + 0.02)
        assert row["comm_gb"] == pytest.approx(gb, rel=1e-12)
        assert row["compute_kwh"] == pytest.approx(compute, rel=1e-12) and row["cloud_kwh"] == pytest.approx(cloud, rel=1e-12)
        assert row["comm_kwh"] == pytest.approx(comm, rel=1e-12)
        assert row["total_kwh"] == pytest.approx(compute + comm, rel=1e-12)
        assert row["energy_ratio_vs_cloud_gpu"] == pytest.approx(cloud / (compute + comm), rel=1e-12)
    assert by_pattern["idealized"]["comm_kwh"] == pytest.approx(8320 * 0.5 / 3.6e6 + 83.2 * 0.03, rel=1e-12)  # 8,320 s on air


def test_the_frame_sets_the_network_rule_and_the_receiving_radio() -> None:
    rows = given(scenario("paper", PAPER_FRAME), scenario("cons", "consequential"),
                 devices=[device("paper", "laptop", 72_000.0), device("cons", "laptop", 72_000.0)])
    ring = {r["scenario_id"]: r for r in rows if r["pattern"] == "ring_allreduce"}
    ideal = {r["scenario_id"]: r for r in rows if r["pattern"] == "idealized"}
    assert len(rows) == 8 and ring["paper"]["comm_gb"] == ring["cons"]["comm_gb"] == pytest.approx(145.6, rel=1e-12)
    seconds = 145.6e9 / 10e6  # 14,560 s at 10 MB/s
    # as published: the sender's radio (0.5 W) and (0.01 + 0.02) kWh/GB
    assert ring["paper"]["comm_kwh"] == pytest.approx(seconds * 0.5 / 3.6e6 + 145.6 * 0.03, rel=1e-12)
    # consequential: the marginal rule, (0.9 + 0.45) W per Mbit/s x 8,000 Mbit per GB / 3.6e6 J per kWh = 0.003 kWh/GB, and a
    # ring's byte lands on a second home device whose radio receives it at 0.4 W for the same time
    assert ring["cons"]["comm_kwh"] == pytest.approx(seconds * (0.5 + 0.4) / 3.6e6 + 145.6 * 0.003, rel=1e-12)
    # an idealized byte goes to a server: no receiving device radio
    assert ideal["cons"]["comm_kwh"] == pytest.approx(83.2e9 / 10e6 * 0.5 / 3.6e6 + 83.2 * 0.003, rel=1e-12)
