"""staging.device_specs: peak compute, memory and power of the devices the audit compares."""

from __future__ import annotations

import pandera.polars as pa
import polars as pl

from schemas.base import FiniteProvenance, weak_rows_explained
from schemas.statuses import STATUS_TEXT, STATUSES

DEVICE_CLASSES = ["cloud_gpu", "workstation_gpu", "laptop", "phone", "desktop"]
DEVICE_ID_PATTERN = r"^[a-z0-9]+(-[a-z0-9]+)*$"
COMPUTE_COLUMNS = (
    "fp64_tflops",
    "fp32_tflops",
    "fp16_tflops",
    "tf32_tensor_tflops",
    "bf16_tensor_tflops",
    "fp16_tensor_tflops",
    "npu_tops",
)
#: Figures a vendor may not publish (phones, Apple silicon); a null one must be explained in notes.
OPTIONAL_SPEC_COLUMNS = ("mem_bandwidth_gb_per_s", "memory_gb", "tdp_w")


class DeviceSpecs(FiniteProvenance):
    """Grain: one device spec variant (device_id unique).

    Variants of one device (GPU core bins, disputed FLOPS figures) share ``base_device_id``,
    the id other tables use for the device. All FLOPS are dense peak figures (no sparsity).
    """

    #: The warehouse table(s) this model is the contract of (pipelines.warehouse.dictionary finds it so).
    __tables__ = ("staging.device_specs",)

    device_id: str = pa.Field(unique=True, str_matches=DEVICE_ID_PATTERN, description="Unique id of this spec variant.")
    base_device_id: str = pa.Field(
        str_matches=DEVICE_ID_PATTERN, description="Device id shared with other tables (benchmark runs, footprints); variants share it."
    )
    variant: str = pa.Field(nullable=True, description="What distinguishes this variant, e.g. '19-core GPU' or 'Adreno 660 at 1.72 TFLOPS'.")
    device_class: str = pa.Field(isin=DEVICE_CLASSES, description="cloud_gpu | workstation_gpu | laptop | phone | desktop.")
    vendor: str = pa.Field(description="Chip vendor.")
    model: str = pa.Field(description="Chip or product name.")
    accelerator: str = pa.Field(description="The unit the FLOPS refer to, e.g. 'Adreno 660 GPU' or 'H100 SXM5 GPU'.")
    fp64_tflops: float = pa.Field(nullable=True, gt=0, description="Peak FP64 (vector), TFLOPS.")
    fp32_tflops: float = pa.Field(nullable=True, gt=0, description="Peak FP32 (vector), TFLOPS.")
    fp16_tflops: float = pa.Field(nullable=True, gt=0, description="Peak FP16 (vector, non-tensor), TFLOPS.")
    tf32_tensor_tflops: float = pa.Field(nullable=True, gt=0, description="Peak TF32 tensor-core, dense, TFLOPS.")
    bf16_tensor_tflops: float = pa.Field(nullable=True, gt=0, description="Peak BF16 tensor-core, dense, TFLOPS.")
    fp16_tensor_tflops: float = pa.Field(nullable=True, gt=0, description="Peak FP16 tensor-core, dense, TFLOPS.")
    npu_tops: float = pa.Field(nullable=True, gt=0, description="Peak of the NPU / Neural Engine in tera-operations per second, as the vendor states it (usually INT8).")
    mem_bandwidth_gb_per_s: float = pa.Field(nullable=True, gt=0, description="Peak memory bandwidth, GB/s.")
    memory_gb: float = pa.Field(nullable=True, gt=0, description="Memory capacity of the reference configuration, GB.")
    tdp_w: float = pa.Field(nullable=True, gt=0, description="Vendor TDP / maximum board power, W; null where none is published (then see notes).")
    year: int = pa.Field(in_range={"min_value": 1990, "max_value": 2100}, description="Year the device was introduced.")
    status: str = pa.Field(isin=STATUSES, description=STATUS_TEXT + " (the weakest of the row's figures).")
    citation: str = pa.Field(description="Datasheet or spec page the figures come from.")
    citation_url: str = pa.Field(str_startswith="http", description="Link to it.")
    notes: str = pa.Field(nullable=True, description="Arithmetic behind derived figures, and why a figure is missing.")

    @pa.dataframe_check(name="has_a_compute_figure", description="at least one peak FLOPS or TOPS figure is given")
    @classmethod
    def has_a_compute_figure(cls, data: pa.PolarsData) -> pl.LazyFrame:
        return data.lazyframe.select(pl.any_horizontal([pl.col(c).is_not_null() for c in COMPUTE_COLUMNS]))

    @pa.dataframe_check(name="missing_specs_are_explained", description="a null bandwidth, memory or TDP comes with notes")
    @classmethod
    def missing_specs_are_explained(cls, data: pa.PolarsData) -> pl.LazyFrame:
        missing = pl.any_horizontal([pl.col(c).is_null() for c in OPTIONAL_SPEC_COLUMNS])
        return data.lazyframe.select(~missing | pl.col("notes").is_not_null())

    @pa.dataframe_check(name="derived_or_assumed_rows_explain", description="a derived or assumed row has notes")
    @classmethod
    def derived_or_assumed_rows_explain(cls, data: pa.PolarsData) -> pl.LazyFrame:
        return weak_rows_explained(data)

    @pa.dataframe_check(name="variants_are_named", description="a row whose device_id differs from base_device_id names its variant")
    @classmethod
    def variants_are_named(cls, data: pa.PolarsData) -> pl.LazyFrame:
        return data.lazyframe.select((pl.col("device_id") == pl.col("base_device_id")) | pl.col("variant").is_not_null())
