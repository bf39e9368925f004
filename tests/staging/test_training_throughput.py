"""staging.training_throughput: measured training rates per device, with their sources."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import polars as pl
import pytest

from pipelines.defs.assets.staging_tables import TRAINING_THROUGHPUT
from pipelines.ingest.manifest import entries_for
from pipelines.ingest.staging import Staged, parse_entry, validate_parsed
from pipelines.warehouse.database import open_readonly
from schemas.device_specs import STATUSES
from schemas.meta import columns
from schemas.training_throughput import TrainingThroughput
from tests.conftest import build
from tests.helpers import rejects_of, stage_text

PARSER, TABLE = TRAINING_THROUGHPUT.parsers["curated_training_throughput"], TRAINING_THROUGHPUT.table
SOURCE_FILE = "throughput.csv"
COLUMNS = [name for name in columns(TrainingThroughput) if name not in ("source_id", "source_file", "source_row")]


def staged_rows(source_id: str) -> pl.DataFrame:
    """The rows of one shipped source of staging.training_throughput, staged as the pipeline stages them (no reject)."""
    (entry,) = [e for e in entries_for(TABLE) if e.id == source_id]
    staged = validate_parsed(TABLE, TrainingThroughput, [(entry, parse_entry(entry, PARSER))], run_id="test")
    assert staged.rejects.height == 0, staged.rejects.select("source_row", "column_name", "check_name", "reason").rows()
    return staged.frame


@pytest.fixture(scope="module")
def rows() -> pl.DataFrame:
    return staged_rows("curated_training_throughput")  # the H100 measurement: test_h100_measurements.py


def row_of(rows: pl.DataFrame, throughput_id: str) -> dict[str, Any]:
    (row,) = rows.filter(pl.col("throughput_id") == throughput_id).iter_rows(named=True)
    return row


def test_the_shipped_file_stages_every_row(rows: pl.DataFrame) -> None:
    assert rows.height == 24
    assert set(rows.get_column("precision").drop_nulls()) == {"bf16", "fp8", "fp16", "fp32"}
    assert set(rows.get_column("device_class")) == {"cloud_gpu", "workstation_gpu", "laptop", "phone", "desktop"}
    assert set(rows.get_column("status")) <= set(STATUSES)
    assert rows.get_column("citation_url").str.starts_with("https://").all()
    assert rows.get_column("notes").is_not_null().all()
    # Sources by the prefix of their ids: llm-foundry's tables, Llama 3's Table 4, the paper's Table 1, MLX LoRA,
    # QVAC Fabric's phone fine-tuning, tf-metal-experiments' M1 Max training.
    prefixes = rows.get_column("throughput_id").str.extract(r"^([a-z0-9]+)_").value_counts().sort("throughput_id")
    assert dict(prefixes.iter_rows()) == {"llama3": 3, "llmfoundry": 14, "mlx": 2, "paper": 3, "qvac": 1, "tf": 1}


def test_llm_foundry_h100_1b_row_by_hand(rows: pl.DataFrame) -> None:
    """The README's H100 80GB BF16 row '1b | 2048 | 8 | h100_80gb | 41.82 | ... | 4.138134E+14 | ... | 45455 | ... | 1315950592'."""
    row = row_of(rows, "llmfoundry_h100_1b_bf16_s2048_g8")
    assert (row["device_id"], row["precision"], row["method"], row["devices"], row["sequence_length"]) == ("nvidia-h100-sxm", "bf16", "full", 8, 2048)
    assert (row["tokens_per_s"], row["model_params"], row["mfu"], row["batch_size"]) == (45455.0, 1315950592.0, 0.4182, 112)
    # 6 x params x tokens/s, with the README's NumParams: 358.9 TFLOPS per GPU (to the 4 decimals entered).
    assert row["achieved_tflops"] == pytest.approx(6 * 1315950592 * 45455 / 1e12, abs=5e-5)
    # With the nominal 1.3B the figure is 354.5: the README's exact count is 1.2% larger.
    assert 6 * 1.3e9 * 45455 / 1e12 == pytest.approx(354.549, abs=1e-3)
    assert row["achieved_tflops"] / (6 * 1.3e9 * 45455 / 1e12) == pytest.approx(1.0122, abs=1e-4)
    # The README's own Model TFLOP (413.8) adds the attention FLOPs, 3 x n_layers x 2 x 2 x d_model x
    # seq_len per token (MPT-1b: n_layers 24, d_model 2048, scripts/train/yamls/pretrain/mpt-1b.yaml).
    attention_per_token = 3 * 24 * 2 * 2 * 2048 * 2048
    assert row["reported_tflops"] == pytest.approx((6 * 1315950592 + attention_per_token) * 45455 / 1e12, rel=1e-4)
    # ... and its MFU is that over the H100 SXM's dense BF16 peak, 989.5 TFLOPS as in device_specs.
    assert row["reported_tflops"] / 989.5 == pytest.approx(row["mfu"], abs=5e-5)


def test_llm_foundry_mfu_is_its_tflops_over_the_peak(rows: pl.DataFrame) -> None:
    """Every llm-foundry row's MFU is its Model TFLOP over one peak per table: H100 BF16 989.5,
    H100 FP8 1979, A100 BF16 312 (to the MFU's two decimals of a percent)."""
    peaks = {("nvidia-h100-sxm", "bf16"): 989.5, ("nvidia-h100-sxm", "fp8"): 1979.0, ("nvidia-a100-80gb", "bf16"): 312.0}
    foundry = rows.filter(pl.col("throughput_id").str.starts_with("llmfoundry_"))
    assert foundry.height == 14
    for row in foundry.iter_rows(named=True):
        peak = peaks[(row["device_id"], row["precision"])]
        assert row["reported_tflops"] / peak == pytest.approx(row["mfu"], abs=5e-5), row["throughput_id"]
        assert row["achieved_tflops"] < row["reported_tflops"] < peak, row["throughput_id"]


def test_every_rate_is_below_its_devices_peak(rows: pl.DataFrame) -> None:
    h100 = rows.filter((pl.col("device_id") == "nvidia-h100-sxm") & (pl.col("precision") == "bf16"))
    assert h100.height == 11
    rates = h100.select(pl.max_horizontal("achieved_tflops", "reported_tflops")).to_series()
    assert rates.max() < 989.5
    assert h100.get_column("mfu").min() == 0.349 and h100.get_column("mfu").max() == 0.4644
    llama = rows.filter(pl.col("model") == "Llama 3 405B").sort("devices", "sequence_length")
    assert llama.select("devices", "sequence_length", "reported_tflops", "mfu").rows() == [
        (8192, 8192, 430.0, 0.43), (16384, 8192, 400.0, 0.41), (16384, 131072, 380.0, 0.38)]


def test_job_times_keep_their_unit(rows: pl.DataFrame) -> None:
    """The paper's Table 1: 250 s (RTX A5000), 480 s (M2 Pro), 3,510 s (Snapdragon 888) per OPT-125M job."""
    table1 = rows.filter(pl.col("job_time_s").is_not_null()).sort("job_time_s")
    assert table1.select("device_id", "job_time_s", "jobs_per_h").rows() == [
        ("nvidia-rtx-a5000", 250.0, 14.4), ("apple-m2-pro", 480.0, 7.5), ("qualcomm-sd888", 3510.0, 1.025641)]
    assert table1.get_column("tokens_per_s").is_null().all() and table1.get_column("precision").is_null().all()


def test_lora_counts_the_flops_it_does(rows: pl.DataFrame) -> None:
    """MLX LoRA: forward 2 plus activation gradients through the adapted top layers (16 or 4 of 32)."""
    m2 = row_of(rows, "mlx_lora_m2_ultra_llama_7b")
    m1 = row_of(rows, "mlx_lora_m1_max_mistral_7b")
    assert (m2["tokens_per_s"], m2["flops_per_param_token"], m2["achieved_tflops"]) == (475.0, 3.0, pytest.approx(3 * 7e9 * 475 / 1e12))
    assert (m1["tokens_per_s"], m1["flops_per_param_token"], m1["achieved_tflops"]) == (250.0, 2.25, pytest.approx(2.25 * 7e9 * 250 / 1e12))


def test_full_training_and_lora_through_every_layer_count_their_flops(rows: pl.DataFrame) -> None:
    """BERT-Large trained in full on an M1 Max: 6 FLOPs per parameter per token at 19 x 128 tokens/s, with the same run's
    36 W of GPU power; Qwen3-1.7B LoRA on every layer of a phone: forward 2 plus activation gradients 2, no power."""
    bert = row_of(rows, "tf_metal_m1_max_bertlarge_fp32")
    assert (bert["tokens_per_s"], bert["flops_per_param_token"], bert["precision"], bert["method"]) == (2432.0, 6.0, "fp32", "full")
    assert (bert["model_params"], bert["achieved_tflops"]) == (302_309_376, pytest.approx(6 * 302_309_376 * 2432 / 1e12, abs=5e-7))
    assert (bert["power_w"], bert["power_boundary"], bert["status"]) == (36.0, "gpu", "derived")
    qwen = row_of(rows, "qvac_adreno830_qwen3_1p7b_q4_0_lora")
    assert (qwen["device_class"], qwen["method"], qwen["flops_per_param_token"], qwen["power_w"]) == ("phone", "lora", 4.0, None)
    assert qwen["achieved_tflops"] == pytest.approx(4 * 1_720_574_976 * 6.73 / 1e12, abs=5e-7)


def throughput_row(**cells: Any) -> str:
    values = {c: "" for c in COLUMNS}
    values.update(
        throughput_id="run_a", device_id="nvidia-h100-sxm", device_class="cloud_gpu", device_name="H100", model="M",
        model_params="1000000000", precision="bf16", method="full", devices="8", tokens_per_s="50000",
        flops_per_param_token="6", achieved_tflops="300", mfu="0.4", status="derived", citation="Benchmark table",
        citation_url="https://example.org/t", notes="6 x 1e9 x 50000 / 1e12 = 300",
    )
    values.update({k: str(v) for k, v in cells.items()})
    if "model" not in cells:  # each row its own configuration unless a test repeats one
        values["model"] = values["throughput_id"]
    return ",".join(values.values())


def stage_rows(tmp_path: Path, *lines: str) -> Staged:
    return stage_text(tmp_path, SOURCE_FILE, ",".join(COLUMNS) + "\n" + "\n".join(lines) + "\n",
                      parser=PARSER, kind="curated_training_throughput", table=TABLE, model=TrainingThroughput)


def test_bad_rows_are_quarantined_with_file_row_and_column(tmp_path: Path) -> None:
    staged = stage_rows(
        tmp_path,
        throughput_row(),
        throughput_row(throughput_id="run_b", mfu="1.7"),
        throughput_row(throughput_id="run_c", tokens_per_s="600000", achieved_tflops="3600"),
        throughput_row(throughput_id="run_d", precision="fp32", reported_tflops="500"),
        throughput_row(throughput_id="run_e", achieved_tflops="310"),
        throughput_row(throughput_id="run_f", method="lora"),
        throughput_row(throughput_id="run_g", precision="int4"),
        throughput_row(throughput_id="run_h", job_time_s="250", jobs_per_h="15", tokens_per_s="", achieved_tflops=""),
        throughput_row(throughput_id="run_i", device_id="apple-m2-ultra", device_class="desktop", precision="fp16", tokens_per_s="900000", achieved_tflops="5400"),
    )
    rejects = rejects_of(staged)
    assert [r[:3] for r in rejects] == [
        (3, "mfu", "less_than_or_equal_to(1)"),
        (4, "achieved_tflops", "below_device_peak"),
        (5, "reported_tflops", "below_device_peak"),
        (6, None, "achieved_tflops_is_its_arithmetic"),
        (7, None, "flops_count_fits_the_method"),
        (8, "precision", "isin(['fp32', 'bf16', 'fp16', 'fp8'])"),
        (9, None, "jobs_per_h_is_its_arithmetic"),
    ]
    assert [r[3] for r in rejects if r[1] is not None] == ["1.7", "3600", "500", "int4"]
    assert set(staged.rejects.get_column("source_file")) == {SOURCE_FILE}
    reasons = dict(staged.rejects.select("source_row", "reason").iter_rows())
    assert reasons[3] == "mfu: must be <= 1"
    assert reasons[4] == ("achieved_tflops: 3600 TFLOPS per device is above the peak of nvidia-h100-sxm at bf16 (989.5 TFLOPS, "
                          "sources/curated/device_specs.csv); a measured rate cannot exceed its device's peak")
    # FP32 on an H100 may use TF32 tensor cores: its bound is the larger of FP32 67 and TF32 494.5.
    assert "peak of nvidia-h100-sxm at fp32 (494.5 TFLOPS" in reasons[5]
    # A device not in device_specs (apple-m2-ultra) has no peak: its rate is not bounded.
    assert staged.frame.get_column("throughput_id").to_list() == ["run_a", "run_i"]


def test_staged_table_is_described_in_the_warehouse(tmp_path: Path) -> None:
    """The table reaches a published warehouse with a comment on every column."""
    path = tmp_path / "w.duckdb"
    result = build(path, only=("staging/training_throughput",))
    assert result.success
    con = open_readonly(path)
    try:
        comments = dict(con.execute("select column_name, comment from duckdb_columns() "
                                    "where schema_name = 'staging' and table_name = 'training_throughput'").fetchall())
        staged = con.execute("select count(*), count(distinct precision) from staging.training_throughput").fetchone()
    finally:
        con.close()
    assert set(comments) == set(columns(TrainingThroughput))
    assert all(comments.values())
    assert comments["achieved_tflops"].startswith("Model TFLOPS per device on this project's count")
    assert staged[0] >= 8 and staged[1] >= 2


def test_a_repeated_configuration_is_quarantined(tmp_path: Path) -> None:
    staged = stage_rows(tmp_path, throughput_row(model="M"), throughput_row(throughput_id="run_b", model="M", tokens_per_s="40000", achieved_tflops="240"))
    assert [r[:3] for r in rejects_of(staged)] == [(3, None, "multiple_fields_uniqueness")]
    (reason,) = staged.rejects.get_column("reason").to_list()
    assert reason.startswith("repeats the key (device_id = nvidia-h100-sxm, model = M, model_params = 1000000000.0, precision = bf16, "
                             "method = full, batch_size = None, sequence_length = None, devices = 8) of line 2")
    assert staged.frame.get_column("throughput_id").to_list() == ["run_a"]
