"""The H100 measurement in the marts: its capture series in marts.training_energy, and
marts.cloud_energy_check, the model's cloud GPU energy per token beside the measured one."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from pipelines.warehouse.database import open_readonly
from pipelines.warehouse.queries import query_pl

SERIES = "capture_nvidia-h100-sxm_opt-125m_20261206"
#: Tokens of one capture repeat: batch 8 x sequence 512 x 100 measured steps (the README).
TOKENS_PER_REPEAT = 8 * 512 * 100
MEASURED_ROWS = {
    "capture_nvidia_h100_sxm_opt_125m_20261206",
    "gpubench_h100_mpt1b_bf16_b8_s2048_compiled",
    "gpubench_h100_mpt1b_bf16_b8_s2048_eager",
    "gpubench_h100_opt125m_bf16_b16_s2048",
    "gpubench_h100_opt125m_bf16_b8_s512",
}


def _rows(warehouse: Path, sql: str, params: dict[str, Any] | None = None) -> list[dict[str, Any]]:
    con = open_readonly(warehouse)
    try:
        return query_pl(con, sql, params).to_dicts()
    finally:
        con.close()


def test_the_capture_series_has_five_runs_at_the_readmes_figures(built_warehouse: Path) -> None:
    """5 repeats of about 5,234 J at 611.8 W (the README: 0.01268-0.01307 J per token of 409,600 tokens,
    604-628 W, 8.52-8.60 s per repeat; r4 reads 8.500 s, its last sample quarantined)."""
    (series,) = _rows(built_warehouse, "select * from marts.training_energy where series_id = $s", {"s": SERIES})
    assert (series["device_id"], series["device_class"], series["model"], series["n_runs"], series["is_synthetic"]) == (
        "nvidia-h100-sxm", "cloud_gpu", "OPT-125M", 5, False)
    assert series["energy_j_mean"] == pytest.approx(5234.1, abs=0.05)
    assert series["mean_power_w_mean"] == pytest.approx(611.84, abs=0.005)
    assert series["duration_s_mean"] == pytest.approx((8.584 + 8.519 + 8.596 + 8.500 + 8.577) / 5, abs=1e-9)
    assert series["energy_j_ci95_low"] < series["energy_j_mean"] < series["energy_j_ci95_high"]
    runs = _rows(built_warehouse, "select run_id, energy_j, mean_power_w, duration_s from staging.benchmark_runs "
                                  "where series_id = $s order by run_id", {"s": SERIES})
    assert [r["run_id"] for r in runs] == [f"{SERIES}_r{k}" for k in range(1, 6)]
    # the README stamps each interval's power at its end (and keeps r4's last sample); the warehouse integrates
    # trapezoids: its lowest repeat (r3) is within 0.1% of the README's lowest 0.01268 J per token
    per_token = [run["energy_j"] / TOKENS_PER_REPEAT for run in runs]
    assert min(per_token) == pytest.approx(0.01268, rel=1e-3) and max(per_token) <= 0.01307
    assert [round(run["mean_power_w"], 2) for run in runs] == [604.83, 620.93, 603.87, 622.0, 607.55]
    assert all(604 - 0.5 <= run["mean_power_w"] <= 628 + 0.5 for run in runs)
    assert [run["duration_s"] for run in runs] == [8.584, 8.519, 8.596, 8.5, 8.577]
    rejected = _rows(built_warehouse, "select source_id, source_row, check_name from quarantine.rejected_rows "
                                      "where source_id like $p", {"p": "capture_nvidia-h100-sxm%"})
    assert rejected == [{"source_id": f"{SERIES}_r4", "source_row": 88, "check_name": "plausible_power"}]


def test_the_h100_rows_are_staged_as_measured(built_warehouse: Path) -> None:
    rows = _rows(built_warehouse, "select throughput_id, status, power_boundary, series_id, source_id "
                                  "from staging.training_throughput where source_id = 'h100_measured_training_throughput'")
    assert {r["throughput_id"] for r in rows} == MEASURED_ROWS
    assert {(r["status"], r["power_boundary"]) for r in rows} == {("measured", "board")}
    # the capture's rate and its power series are the same run: the mart's power is the series' mean power
    (capture,) = [r for r in rows if r["series_id"] is not None]
    assert capture["series_id"] == SERIES


def test_every_measured_rate_scenario_meets_every_measured_row(built_warehouse: Path) -> None:
    check = _rows(built_warehouse, "select scenario_id, throughput_id from marts.cloud_energy_check")
    scenarios = {r["scenario_id"] for r in _rows(
        built_warehouse, "select scenario_id from core.scenario_parameters where parameter = 'cloud_gpu_measured_tflops' "
                         "and factor_ref like 'training_throughput.throughput_id=%'")}
    assert {"realistic_attributional", "realistic_consequential"} <= scenarios
    assert not {s for s in scenarios if s.startswith("paper_")}
    assert sorted((r["scenario_id"], r["throughput_id"]) for r in check) == sorted(
        (s, t) for s in scenarios for t in MEASURED_ROWS)


def test_mpt1b_eager_row_by_hand(built_warehouse: Path) -> None:
    """realistic_attributional's cloud side: the H100 SXM's 700 W TDP at cloud_utilisation 0.76 = 532 W on the
    board, at llm-foundry's MPT 1b rate of 358.8992 TFLOPS of 6 N D work; for the 1,311,213,568-parameter MPT-1b
    shape that is 358.8992e12 / (6 x 1,311,213,568) = 45,619.21 tokens/s, so 532 / 45,619.21 = 0.011662 J per
    token. Measured: 692.5966 W / 52,270.32 tokens/s = 0.013250 J per token. The model charges the board
    0.880 x the measured energy per token: 0.768 x the power at 0.873 x the rate."""
    (inputs,) = _rows(built_warehouse, "select cloud_gpu_power_w, cloud_utilisation, cloud_gpu_measured_tflops, cloud_gpu_variant "
                                       "from core.scenarios where scenario_id = 'realistic_attributional'")
    assert inputs == {"cloud_gpu_power_w": 700.0, "cloud_utilisation": 0.76, "cloud_gpu_measured_tflops": 358.8992,
                      "cloud_gpu_variant": 0.0}
    (row,) = _rows(built_warehouse, "select * from marts.cloud_energy_check where scenario_id = 'realistic_attributional' "
                                    "and throughput_id = 'gpubench_h100_mpt1b_bf16_b8_s2048_eager'")
    assert (row["device_id"], row["model_rate_throughput_id"], row["power_boundary"], row["series_id"]) == (
        "nvidia-h100-sxm", "llmfoundry_h100_1b_bf16_s2048_g8", "board", None)
    assert (row["model_gpu_power_w"], row["model_utilisation"], row["model_tflops"]) == (700.0, 0.76, 358.8992)
    assert row["model_board_power_w"] == pytest.approx(532.0, abs=1e-9)
    assert row["model_tokens_per_s"] == pytest.approx(45619.21, abs=0.005)
    assert row["model_j_per_token"] == pytest.approx(0.0116618, abs=5e-8)
    assert (row["measured_power_w"], row["measured_tokens_per_s"]) == (692.5966, 52270.32)
    assert row["measured_j_per_token"] == pytest.approx(0.0132503, abs=5e-8)
    assert row["power_ratio"] == pytest.approx(532 / 692.5966, rel=1e-12) == pytest.approx(0.768, abs=5e-4)
    assert row["rate_ratio"] == pytest.approx(45619.21 / 52270.32, rel=1e-6) == pytest.approx(0.873, abs=5e-4)
    assert row["energy_ratio"] == pytest.approx(0.0116618 / 0.0132503, rel=1e-5) == pytest.approx(0.880, abs=5e-4)


def test_the_consequential_frame_charges_the_same_board(built_warehouse: Path) -> None:
    """The frames differ in grid, network and embodied terms, not in the GPU's power or rate: both scenarios'
    board energy per token is the same for every measured row."""
    rows = _rows(built_warehouse, "select scenario_id, throughput_id, model_j_per_token, energy_ratio from marts.cloud_energy_check "
                                  "where scenario_id in ('realistic_attributional', 'realistic_consequential')")
    by_row: dict[str, set[float]] = {}
    for r in rows:
        by_row.setdefault(r["throughput_id"], set()).add(round(r["energy_ratio"], 12))
    assert set(by_row) == MEASURED_ROWS and all(len(v) == 1 for v in by_row.values())
