"""staging.device_specs: curated datasheet figures for the compared devices."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import polars as pl
import pytest

from pipelines.defs.assets.staging_tables import DEVICE_SPECS
from pipelines.errors import SourceParseError
from pipelines.ingest.manifest import entries_for
from pipelines.ingest.staging import Staged, parse_entry, validate_parsed
from schemas.device_specs import COMPUTE_COLUMNS, OPTIONAL_SPEC_COLUMNS, DeviceSpecs
from tests.helpers import rejects_of, stage_text

PARSERS, TABLE = DEVICE_SPECS.parsers, DEVICE_SPECS.table

REQUIRED_BASE_IDS = {
    "nvidia-h100-sxm",
    "nvidia-h100-pcie",
    "nvidia-rtx-a5000",
    "apple-m2-pro",
    "qualcomm-sd888",
    "apple-m1",
    "nvidia-v100",
    "nvidia-a40",
    "nvidia-p100",
    "nvidia-quadro-rtx-6000",
    "intel-core-i7-8850h",
}
COLUMNS = [
    "device_id",
    "base_device_id",
    "variant",
    "device_class",
    "vendor",
    "model",
    "accelerator",
    *COMPUTE_COLUMNS,
    *OPTIONAL_SPEC_COLUMNS,
    "year",
    "status",
    "citation",
    "citation_url",
    "notes",
]


def spec_row(**cells: Any) -> str:
    values = {c: "" for c in COLUMNS}
    values.update(
        device_id="gpu-a",
        base_device_id="gpu-a",
        device_class="cloud_gpu",
        vendor="V",
        model="A",
        accelerator="A GPU",
        fp32_tflops="10",
        mem_bandwidth_gb_per_s="1000",
        memory_gb="40",
        tdp_w="300",
        year="2022",
        status="primary",
        citation="Datasheet",
        citation_url="https://example.org/a",
    )
    values.update({k: str(v) for k, v in cells.items()})
    return ",".join(values.values())


def stage_specs(tmp_path: Path, *rows: str, header: str = ",".join(COLUMNS)) -> Staged:
    return stage_text(
        tmp_path, "specs.csv", header + "\n" + "\n".join(rows) + "\n", parser=PARSERS["curated_device_specs"], kind="curated_device_specs", table=TABLE, model=DeviceSpecs
    )


def test_bad_rows_are_quarantined_with_reasons(tmp_path: Path) -> None:
    staged = stage_specs(
        tmp_path,
        spec_row(),
        spec_row(device_id="gpu-b", base_device_id="gpu-b", fp32_tflops="fast"),
        spec_row(device_id="gpu-c", base_device_id="gpu-c", device_class="toaster"),
        spec_row(device_id="gpu-d", base_device_id="gpu-d", tdp_w=""),
        spec_row(device_id="gpu-e", base_device_id="gpu-e", fp32_tflops=""),
        spec_row(device_id="gpu-f", base_device_id="gpu-a"),
        spec_row(device_id="gpu-g", base_device_id="gpu-g", citation_url="www.example.org"),
        spec_row(device_id="gpu-h", base_device_id="gpu-h", status="derived"),
        spec_row(device_id="gpu-i", base_device_id="gpu-i", fp32_tflops="-1"),
        spec_row(device_id="gpu-a", variant="dup", base_device_id="gpu-a"),
        spec_row(device_id="gpu-j", base_device_id="gpu-j", memory_gb="", notes="Vendor publishes no memory size."),
    )
    rejects = rejects_of(staged)
    # Line 11 repeats gpu-a of line 2: only the later row is quarantined, line 2 loads.
    assert [r[:3] for r in rejects] == [
        (3, "fp32_tflops", "parse"),
        (4, "device_class", "isin(['cloud_gpu', 'workstation_gpu', 'laptop', 'phone', 'desktop'])"),
        (5, None, "missing_specs_are_explained"),
        (6, None, "has_a_compute_figure"),
        (7, None, "variants_are_named"),
        (8, "citation_url", "str_startswith('http')"),
        (9, None, "derived_or_assumed_rows_explain"),
        (10, "fp32_tflops", "greater_than(0)"),
        (11, "device_id", "field_uniqueness"),
    ]
    assert [r[3] for r in rejects if r[1] is not None] == ["fast", "toaster", "www.example.org", "-1.0", "gpu-a"]
    reasons = dict(staged.rejects.select("source_row", "reason").iter_rows())
    assert reasons[11] == "device_id: repeats the key (device_id = gpu-a) of line 2 with different values; the first is kept"
    assert reasons[3] == "fp32_tflops: cannot read 'fast' as a finite number"
    assert reasons[5] == "a null bandwidth, memory or TDP comes with notes"
    assert staged.frame.get_column("device_id").to_list() == ["gpu-a", "gpu-j"]


def test_unknown_column_is_a_parse_error(tmp_path: Path) -> None:
    with pytest.raises(SourceParseError, match=r"specs\.csv, line 1: unknown column\(s\) \['colour'\]"):
        stage_specs(tmp_path, spec_row() + ",red", header=",".join([*COLUMNS, "colour"]))


@pytest.fixture(scope="module")
def specs() -> pl.DataFrame:
    (entry,) = [e for e in entries_for(TABLE) if e.kind == "curated_device_specs"]  # the GPU database: tests/staging/test_gpu_database.py
    staged = validate_parsed(TABLE, DeviceSpecs, [(entry, parse_entry(entry, PARSERS[entry.kind]))], run_id="test")
    assert staged.rejects.height == 0, staged.rejects.select("source_row", "column_name", "check_name", "value").rows()
    return staged.frame


def test_every_required_device_is_covered(specs: pl.DataFrame) -> None:
    assert REQUIRED_BASE_IDS <= set(specs.get_column("base_device_id").to_list())
    assert specs.get_column("device_id").is_unique().all()
    current = {"nvidia-h200-sxm", "apple-a17-pro", "apple-m4-pro", "apple-m4-max"}
    assert current <= set(specs.get_column("device_id").to_list())


def test_variants_of_the_papers_devices(specs: pl.DataFrame) -> None:
    m2 = dict(specs.filter(pl.col("base_device_id") == "apple-m2-pro").select("variant", "fp32_tflops").iter_rows())
    assert m2 == {"19-core GPU": 6.8, "16-core GPU": 5.7}
    sd888 = specs.filter(pl.col("base_device_id") == "qualcomm-sd888")
    assert dict(sd888.select("variant", "fp32_tflops").iter_rows()) == {"Adreno 660 at 1.38 TFLOPS": 1.38, "Adreno 660 at 1.72 TFLOPS": 1.72}
    assert sd888.get_column("npu_tops").to_list() == [26.0, 26.0]
    assert sd888.get_column("mem_bandwidth_gb_per_s").to_list() == [51.2, 51.2]
    assert sd888.get_column("tdp_w").is_null().all()
    # The M2 Pro FP32 figures are 19 or 16 cores x 128 lanes x 2 FLOP x 1.398 GHz.
    assert round(19 * 128 * 2 * 1.398e9 / 1e12, 1) == m2["19-core GPU"]
    assert round(16 * 128 * 2 * 1.398e9 / 1e12, 1) == m2["16-core GPU"]


def test_paper_table_figures(specs: pl.DataFrame) -> None:
    row = {r["device_id"]: r for r in specs.iter_rows(named=True)}
    sxm = row["nvidia-h100-sxm"]
    assert (sxm["fp64_tflops"], sxm["fp32_tflops"], sxm["tf32_tensor_tflops"], sxm["fp16_tensor_tflops"]) == (34.0, 67.0, 494.5, 989.5)
    assert (sxm["mem_bandwidth_gb_per_s"], sxm["memory_gb"], sxm["tdp_w"], sxm["device_class"]) == (3350.0, 80.0, 700.0, "cloud_gpu")
    pcie = row["nvidia-h100-pcie"]
    assert (pcie["fp64_tflops"], pcie["fp32_tflops"], pcie["fp16_tensor_tflops"], pcie["mem_bandwidth_gb_per_s"], pcie["tdp_w"]) == (26.0, 51.0, 756.5, 2000.0, 350.0)
    a5000 = row["nvidia-rtx-a5000"]
    assert (a5000["fp32_tflops"], a5000["mem_bandwidth_gb_per_s"], a5000["memory_gb"], a5000["tdp_w"]) == (27.8, 768.0, 24.0, 230.0)
    m2 = row["apple-m2-pro-19c"]
    assert (m2["npu_tops"], m2["mem_bandwidth_gb_per_s"], m2["memory_gb"], m2["tdp_w"]) == (15.8, 200.0, 16.0, None)
    # The CodeCarbon fixture's CPU: 6 cores x 2 AVX2 FMA units x 8 FP32 lanes x 2 FLOP x 2.60 GHz, FP64 half of it.
    i7 = row["intel-core-i7-8850h"]
    assert (i7["fp32_tflops"], i7["fp64_tflops"]) == (round(6 * 2 * 8 * 2 * 2.6e9 / 1e12, 3), round(6 * 2 * 4 * 2 * 2.6e9 / 1e12, 2))
    assert (i7["mem_bandwidth_gb_per_s"], i7["tdp_w"], i7["device_class"], i7["base_device_id"]) == (41.8, 45.0, "laptop", "intel-core-i7-8850h")
    # The H100 roofline ratio the reviewers cite: HBM vs a phone's LPDDR5.
    assert round(sxm["mem_bandwidth_gb_per_s"] / row["qualcomm-sd888-a660-138"]["mem_bandwidth_gb_per_s"]) == 65


def test_every_row_is_sourced_and_explained(specs: pl.DataFrame) -> None:
    assert specs.get_column("citation_url").str.starts_with("https://").all()
    flagged = specs.filter(pl.col("status").is_in(["derived", "assumed"]))
    assert set(flagged.get_column("device_id").to_list()) == {
        "apple-m2-pro-19c",
        "apple-m2-pro-16c",
        "qualcomm-sd888-a660-138",
        "qualcomm-sd888-a660-172",
        "nvidia-v100",
        "nvidia-p100",
        "intel-core-i7-8850h",
    }
    assert flagged.get_column("notes").is_not_null().all()
    missing_tdp = specs.filter(pl.col("tdp_w").is_null()).get_column("device_class").unique().sort().to_list()
    assert missing_tdp == ["laptop", "phone"]
