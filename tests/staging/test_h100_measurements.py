"""This project's own H100 measurement (sources/measurements/h100/, sources/power/h100/): its rate rows
stage into staging.training_throughput with status measured, each figure traced to gpu_bench.json or
the capture logs, and its five capture logs are one registered series in a shipped manifest."""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path

import polars as pl
import pytest

from pipelines.ingest.manifest import load_manifest
from pipelines.ingest.precheck import SAMPLES_TABLE
from pipelines.paths import SOURCES_DIR
from tests.staging.test_training_throughput import row_of, staged_rows

SOURCE_ID = "h100_measured_training_throughput"
SERIES = "capture_nvidia-h100-sxm_opt-125m_20261206"
BENCH = json.loads((SOURCES_DIR / "measurements" / "h100" / "gpu_bench.json").read_text(encoding="utf-8"))["phases"]
#: throughput_id -> its phase of gpu_bench.json
PHASES = {
    "gpubench_h100_mpt1b_bf16_b8_s2048_eager": BENCH["mpt1b"],
    "gpubench_h100_mpt1b_bf16_b8_s2048_compiled": BENCH["mpt1b_compiled"],
    "gpubench_h100_opt125m_bf16_b8_s512": BENCH["opt125m_bf16"]["b8_s512"],
    "gpubench_h100_opt125m_bf16_b16_s2048": BENCH["opt125m_bf16"]["b16_s2048"],
}
CAPTURE_ROW = "capture_nvidia_h100_sxm_opt_125m_20261206"


@pytest.fixture(scope="module")
def rows() -> pl.DataFrame:
    return staged_rows(SOURCE_ID)


def test_every_row_is_a_measured_h100_row(rows: pl.DataFrame) -> None:
    assert sorted(rows.get_column("throughput_id")) == sorted([*PHASES, CAPTURE_ROW])
    for row in rows.iter_rows(named=True):
        assert (row["device_id"], row["device_class"], row["status"], row["method"], row["devices"]) == (
            "nvidia-h100-sxm", "cloud_gpu", "measured", "full", 1), row["throughput_id"]
        assert (row["power_boundary"], row["is_synthetic"], row["flops_per_param_token"]) == ("board", False, 6.0)
        assert "sources/measurements/h100/README.md" in row["citation"]
        assert row["citation_url"] == "https://example.invalid/own-measurement"
        assert row["achieved_tflops"] == pytest.approx(6 * row["model_params"] * row["tokens_per_s"] / 1e12, abs=5e-5)
    # only the capture's rate has a registered power series of the same run
    assert dict(rows.select("throughput_id", "series_id").iter_rows()) == {**dict.fromkeys(PHASES), CAPTURE_ROW: SERIES}


def test_each_bench_row_is_its_phase_of_gpu_bench_json(rows: pl.DataFrame) -> None:
    """tokens_per_s (to 2 decimals), power_w (the NVML energy counter over the window / the window, to 4),
    params, batch, sequence and the llm-foundry MFU (to 4) are the phase's keys; the notes name the phase."""
    for throughput_id, phase in PHASES.items():
        row = row_of(rows, throughput_id)
        assert row["tokens_per_s"] == round(phase["tokens_per_s"], 2)
        assert row["power_w"] == round(phase["mean_power_w_counter"], 4)
        assert phase["mean_power_w_counter"] == pytest.approx(phase["energy_j"] / phase["window_s"], rel=1e-12)
        assert (row["model_params"], row["batch_size"], row["sequence_length"], row["precision"]) == (
            phase["params"], phase["batch"], phase["seq"], "bf16")
        assert row["mfu"] == round(phase["mfu_llmfoundry_vs_989.5"], 4)
        assert row["reported_tflops"] == pytest.approx(phase["achieved_tflops_6N"], abs=5e-5)
        assert row["power_w"] / row["tokens_per_s"] == pytest.approx(phase["j_per_token"], rel=1e-6)
        assert f"gpu_bench.json phases.{'opt125m_bf16.' if 'opt125m' in throughput_id else ''}" in row["notes"]


def test_mpt1b_rows_by_hand(rows: pl.DataFrame) -> None:
    """The README's Results: MPT-1b shape bf16, 8 x 2048, eager 52,270 tokens/s at 692.6 W (411.2 TFLOPS by 6N,
    0.01325 J/token), compiled 58,232 at 688.3 W (458.1, 0.01182)."""
    eager, compiled = row_of(rows, "gpubench_h100_mpt1b_bf16_b8_s2048_eager"), row_of(rows, "gpubench_h100_mpt1b_bf16_b8_s2048_compiled")
    assert (eager["tokens_per_s"], eager["power_w"], eager["model_params"]) == (52270.32, 692.5966, 1311213568)
    assert eager["achieved_tflops"] == pytest.approx(6 * 1311213568 * 52270.32 / 1e12, abs=5e-5) == pytest.approx(411.2253, abs=1e-4)
    assert 692.5966 / 52270.32 == pytest.approx(0.01325, abs=5e-6)
    assert (compiled["tokens_per_s"], compiled["power_w"]) == (58232.48, 688.2949)
    assert compiled["achieved_tflops"] == pytest.approx(458.1313, abs=1e-4)
    assert 688.2949 / 58232.48 == pytest.approx(0.01182, abs=5e-6)


def _window_s(path: Path) -> float:
    """First to last timestamp of an nvidia_smi log (UTC), s."""
    stamps = [line.split(",")[0] for line in path.read_text(encoding="utf-8").splitlines()[1:] if line.strip()]
    first, last = (datetime.strptime(s, "%Y/%m/%d %H:%M:%S.%f") for s in (stamps[0], stamps[-1]))
    return (last - first).total_seconds()


def test_the_capture_rate_is_its_logs_windows(rows: pl.DataFrame) -> None:
    """409,600 tokens per repeat (8 x 512 x 100 steps) over each measured log's window: the README's 47,650-48,081 tokens/s."""
    windows = [_window_s(SOURCES_DIR / "power" / "h100" / f"{SERIES}_r{k}.csv") for k in range(1, 6)]
    rates = [8 * 512 * 100 / w for w in windows]
    assert (round(min(rates)), round(max(rates))) == (47650, 48081)
    row = row_of(rows, CAPTURE_ROW)
    assert (row["model"], row["precision"], row["batch_size"], row["sequence_length"], row["model_params"]) == (
        "OPT-125M", "fp32", 8, 512, 125239296)
    assert row["tokens_per_s"] == pytest.approx(sum(rates) / 5, abs=0.005) == pytest.approx(47853.39, abs=0.005)
    assert row["achieved_tflops"] == pytest.approx(35.9587, abs=1e-4)
    assert row["mfu"] is None and row["reported_tflops"] is None


def test_the_capture_logs_are_one_series_in_a_shipped_manifest() -> None:
    logs = [e for e in load_manifest() if e.table == SAMPLES_TABLE and e.options.get("series_id") == SERIES]
    assert sorted(e.id for e in logs) == [f"{SERIES}_r{k}" for k in range(1, 6)]
    for entry in logs:
        assert entry.kind == "nvidia_smi" and entry.path == f"power/h100/{entry.id}.csv"
        assert entry.manifest_file == "manifest/measurements.toml"
        options = entry.options
        assert (options["run_id"], options["device_id"], options["model"], options["timezone"], options["is_synthetic"]) == (
            entry.id, "nvidia-h100-sxm", "OPT-125M", "UTC", False)
        assert options["workload"].startswith("OPT-125M training from random init on synthetic tokens, fp32: batch 8, sequence 512")
    # the idle and warm-up logs ship beside them, unregistered; the benchmark's code does not ship
    shipped = {p.name for p in (SOURCES_DIR / "power" / "h100").iterdir()}
    assert len(shipped) == 21 and "SOURCE.md" in shipped
    assert not (SOURCES_DIR / "measurements" / "h100" / "gpu_bench.py").exists()
