"""Training rates of a capture: tokens per second, model TFLOPS (6N) and MFU against the device's peak.

Standard library only: the capture runs where the GPU is, without the warehouse's packages. The
peak of a device at a precision is read from the shipped curated device specs
(``sources/curated/device_specs.csv``, the same rows ``staging.device_specs`` holds), with the
column each precision's matrix products run on. A device without a row there, or without a figure
for that precision, gets ``mfu`` null and ``mfu_reason`` saying which.
"""

from __future__ import annotations

import csv
import os
import re
from dataclasses import dataclass
from pathlib import Path

#: Training FLOPs per parameter per token (forward 2, backward 4), attention FLOPs left out: the
#: convention of staging.training_throughput's ``achieved_tflops``.
FLOPS_PER_PARAM_TOKEN = 6.0
#: The device specs column of each capture precision's peak (dense, non-sparse figures).
PEAK_COLUMNS = {
    "fp32": "fp32_tflops",
    "tf32": "tf32_tensor_tflops",
    "bf16": "bf16_tensor_tflops",
    "fp16": "fp16_tensor_tflops",
}
#: The warehouse's precision of each capture precision (a TF32 run keeps FP32 weights: ``fp32``).
WAREHOUSE_PRECISION = {"fp32": "fp32", "tf32": "fp32", "bf16": "bf16", "fp16": "fp16"}
#: GPU names as NVML (and ``nvidia-smi --query-gpu=name``) reports them -> the device id of the
#: curated specs row. Names not listed become their slug (``NVIDIA A40`` -> ``nvidia-a40``).
NVML_NAMES = {
    "nvidia h100 80gb hbm3": "nvidia-h100-sxm",
    "nvidia h100 pcie": "nvidia-h100-pcie",
    "nvidia h200": "nvidia-h200-sxm",
}
#: Where the shipped sources are, when ``$EDGE_CARBON_SOURCES`` does not say.
SOURCES_ENV = "EDGE_CARBON_SOURCES"


def slug(text: str) -> str:
    """Lowercase id made of letters, digits and dashes (``NVIDIA H200`` -> ``nvidia-h200``)."""
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")


def device_id_for(device_name: str) -> str:
    """The warehouse's device id of a device the backend names ``device_name``."""
    return NVML_NAMES.get(" ".join(device_name.lower().split()), slug(device_name))


def sources_folder() -> Path:
    """``$EDGE_CARBON_SOURCES``, else the ``sources/`` folder of this checkout."""
    override = os.environ.get(SOURCES_ENV)
    return Path(override).expanduser().resolve() if override else Path(__file__).resolve().parents[2] / "sources"


@dataclass(frozen=True)
class Peak:
    """A device's peak TFLOPS at one precision, or why there is none."""

    tflops: float | None
    column: str | None
    reason: str | None


def device_peak(device_id: str, precision: str, specs: Path | None = None) -> Peak:
    """The peak of ``device_id`` (a ``device_id`` or ``base_device_id`` of the curated specs) at ``precision``."""
    column = PEAK_COLUMNS[precision]
    path = specs or sources_folder() / "curated" / "device_specs.csv"
    try:
        with path.open(encoding="utf-8", newline="") as handle:
            rows = [row for row in csv.DictReader(handle) if device_id in (row.get("device_id"), row.get("base_device_id"))]
    except OSError as exc:
        return Peak(None, column, f"no device specs to read the peak from ({exc.strerror}: {path})")
    if not rows:
        return Peak(None, column, f"{device_id} has no row in {path.name}, so its {precision} peak is unknown")
    text = (rows[0].get(column) or "").strip()
    if not text:
        return Peak(None, column, f"{device_id}'s row in {path.name} gives no {column}")
    return Peak(float(text), column, None)


def rates(*, tokens: int, seconds: float, params: int, peak: Peak) -> dict[str, float | str | None]:
    """``tokens_per_s``, ``achieved_tflops`` (6 x params x tokens/s) and ``mfu`` (over the peak) of one window."""
    tokens_per_s = tokens / seconds if seconds > 0 else None
    achieved = FLOPS_PER_PARAM_TOKEN * params * tokens_per_s / 1e12 if tokens_per_s else None
    mfu = achieved / peak.tflops if achieved and peak.tflops else None
    return {
        "tokens_per_s": tokens_per_s,
        "achieved_tflops": achieved,
        "mfu": mfu,
        "mfu_reason": None if mfu is not None else (peak.reason or "no training time was measured"),
    }
