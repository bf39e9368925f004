"""marts.communication, given rows -> expected rows: the asset's body over the typed paper_text
scenario (tests/marts/model_rows.py) and the OPT sizes of staging.model_configs, no build."""

from __future__ import annotations

import polars as pl
import pytest

from tests.marts.model_rows import MODEL_CONFIGS, declared_mart, scenario_connection

PATTERNS = ["idealized", "none", "parameter_server", "pipeline", "radio_window", "ring_allreduce"]  # sorted by name

# paper_text, laptop class, trained as OPT-1.3B: the stated 15 laptops per H100 at their 6.8 TFLOPS peak
# for 8 of the GPU's 24 h deliver 15 x 6.8 x 8 / 24 = 34 TFLOPS of the GPU's work over 3 years
SECONDS = 3600 * 24 * 365 * 3  # the GPU's hours over the horizon
WINDOW_S = 8 * 3600 * 365 * 3  # one laptop's training window: 31,536,000 s
PARAMS, BYTES_PER_PARAM = 1.3e9, 4
TOKENS = 15 * 6.8 * 8 / 24 * 1e12 * SECONDS / (6 * PARAMS)  # 34 TFLOPS x 94,608,000 s / 6 N FLOP per token
SYNCS = TOKENS / (15 * 8 * 2048)  # each of the 15 online laptops steps on 8 x 2048 tokens, syncing every step
CLOUD = 123.75 + 700 * 24 * 365 * 3 * 367 / 1e6  # kg: the GPU's embodied + 700 W x 24 h x 365 x 3 y at 367 g/kWh
EDGE = 15 * 15 * 8 * 365 * 3 * 367 / 1e6  # kg: 15 laptops x 15 W x 8 h x 365 x 3 y at 367 g/kWh (723.357)


@pytest.fixture(scope="module")
def rows() -> pl.DataFrame:
    con = scenario_connection()
    return declared_mart("marts.communication", con)


def row(rows: pl.DataFrame, pattern: str, model_id: str = "OPT-1.3B", device_class: str = "laptop") -> dict:
    picked = rows.filter((pl.col("device_class") == device_class) & (pl.col("model_id") == model_id) & (pl.col("pattern") == pattern))
    assert picked.height == 1
    return picked.row(0, named=True)


def test_one_row_per_class_model_size_and_pattern(rows: pl.DataFrame) -> None:
    assert rows.height == 2 * len(MODEL_CONFIGS) * len(PATTERNS)
    laptop = rows.filter((pl.col("device_class") == "laptop") & (pl.col("model_id") == "OPT-1.3B"))
    assert laptop.get_column("pattern").to_list() == PATTERNS
    assert set(laptop.get_column("devices")) == {15.0}  # the paper's stated count on its headline basis


def test_bytes_of_each_data_parallel_pattern_by_hand(rows: pl.DataFrame) -> None:
    # every sync the 15 laptops each send p x b bytes once (the paper's radio window moves the same
    # bytes as the idealized pattern); a parameter server pushes and pulls (2x); a ring all-reduce
    # moves 2 (N - 1) p b per sync
    once = SYNCS * 15 * PARAMS * BYTES_PER_PARAM / 1e9
    assert row(rows, "idealized")["comm_gb"] == pytest.approx(once, rel=1e-9)
    assert row(rows, "radio_window")["comm_gb"] == pytest.approx(once, rel=1e-9)
    assert row(rows, "parameter_server")["comm_gb"] == pytest.approx(2 * once, rel=1e-9)
    ring = SYNCS * 2 * (15 - 1) * PARAMS * BYTES_PER_PARAM / 1e9
    assert ring == pytest.approx(2.4432e8, rel=1e-4)
    assert row(rows, "ring_allreduce")["comm_gb"] == pytest.approx(ring, rel=1e-9)
    assert row(rows, "none")["comm_gb"] == 0.0
    # the job's FLOPs are fixed, so tokens ~ 1 / params and a sync pattern's bytes do not depend on the size
    for model_id, *_ in MODEL_CONFIGS:
        assert row(rows, "ring_allreduce", model_id)["comm_gb"] == pytest.approx(ring, rel=1e-9)


def test_energy_and_link_of_the_radio_window_and_ring_by_hand(rows: pl.DataFrame) -> None:
    radio = row(rows, "radio_window")
    # every online laptop's 0.5 W radio busy for its window at link utilisation 1 (network kWh/GB 0)
    kwh = 15 * WINDOW_S * 1.0 * 0.5 / 3.6e6
    assert kwh == pytest.approx(65.7)
    assert radio["comm_kwh"] == pytest.approx(kwh, rel=1e-12)
    assert radio["comm_kgco2e"] == pytest.approx(kwh * 0.367, rel=1e-12)
    assert radio["reduction_factor"] == pytest.approx(CLOUD / (EDGE + kwh * 0.367), rel=1e-12)
    # a laptop's share of the bytes over its 10 MB/s link, over its window: 27.7 windows, infeasible
    share = SYNCS * 15 * PARAMS * BYTES_PER_PARAM / 15 / 10e6 / WINDOW_S
    assert radio["link_time_share"] == pytest.approx(share, rel=1e-9)
    assert share == pytest.approx(27.67, rel=1e-3)
    assert radio["link_feasible"] is False
    ring = row(rows, "ring_allreduce")
    ring_bytes = SYNCS * 2 * 14 * PARAMS * BYTES_PER_PARAM
    assert ring["comm_kwh"] == pytest.approx(ring_bytes / 10e6 * 0.5 / 3.6e6, rel=1e-9)  # the radio for the bytes at 10 MB/s
    assert ring["link_time_share"] == pytest.approx(ring_bytes / 15 / 10e6 / WINDOW_S, rel=1e-9)
    assert ring["reduction_factor"] == pytest.approx(CLOUD / (EDGE + ring_bytes / 10e6 * 0.5 / 3.6e6 * 0.367), rel=1e-9)


def test_compute_only_row_by_hand(rows: pl.DataFrame) -> None:
    compute = row(rows, "none")
    assert (compute["comm_kwh"], compute["link_time_share"], compute["link_feasible"]) == (0.0, 0.0, True)
    assert compute["cloud_total_kgco2e"] == pytest.approx(CLOUD, rel=1e-12)  # 6875.082
    assert compute["edge_added_kgco2e"] == pytest.approx(EDGE, rel=1e-12)
    assert compute["reduction_factor"] == pytest.approx(9.504411, rel=1e-6)
    # the OPT-1.3B state, 1.3e9 x 16 B = 20.8 GB, does not fit in 16 GB x 0.5 usable
    assert compute["memory_feasible"] is False
    assert row(rows, "none", "OPT-125M")["memory_feasible"] is True  # 2 GB fits in 8 GB
