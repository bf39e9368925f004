"""staging.training_throughput: measured training rates of the compared devices and of cloud GPUs."""

from __future__ import annotations

import pandera.polars as pa
import polars as pl

from schemas.base import FiniteProvenance, weak_rows_explained
from schemas.device_specs import DEVICE_CLASSES, DEVICE_ID_PATTERN, STATUSES
from schemas.statuses import STATUS_TEXT

#: Number formats a training run computes in (mixed precision is named by its matmul format).
PRECISIONS = ["fp32", "bf16", "fp16", "fp8"]
#: How the model is trained: every weight (``full``) or low-rank adapters on frozen weights (``lora``).
METHODS = ["full", "lora"]
#: The peak columns of staging.device_specs a rate at each precision may reach: the largest
#: given one is the device's peak at that precision (an FP32 run may use TF32 tensor cores, an
#: FP16 run the tensor or the vector units). A measured rate above it is a data error. FP8 has
#: no peak column there, so an FP8 rate is not bounded.
PEAK_COLUMNS: dict[str, tuple[str, ...]] = {
    "fp32": ("fp32_tflops", "tf32_tensor_tflops"),
    "bf16": ("bf16_tensor_tflops",),
    "fp16": ("fp16_tensor_tflops", "fp16_tflops"),
}
#: Training FLOPs per parameter per token of a full run: forward 2, backward 4 (activation and
#: weight gradients). LoRA on frozen weights skips the weights' gradients: at most 2 + 2 = 4.
FULL_FLOPS_PER_PARAM_TOKEN = 6.0
LORA_MAX_FLOPS_PER_PARAM_TOKEN = 4.0
#: The columns that name one measured configuration (a second row with the same ones repeats it).
GRAIN = ("device_id", "model", "model_params", "precision", "method", "batch_size", "sequence_length", "devices")
#: Statuses of a rate row: the device specs' own, and ``measured`` for a rate this project measured
#: (a capture of ``edge-carbon-capture register``, or a benchmark run of its own; the citation names the
#: run manifest or the README that produced it).
THROUGHPUT_STATUSES = [*STATUSES, "measured"]
#: What a row's ``power_w`` covers: the chip package (CPU + GPU + NPU, as powermetrics or RAPL
#: read it), the accelerator board (NVML), the whole device from its battery, or the whole device
#: at the wall.
POWER_BOUNDARIES = ["gpu", "package", "board", "device", "wall"]
#: Relative tolerance of the arithmetic checks (achieved TFLOPS, jobs per hour) on rounded cells.
ARITHMETIC_RTOL = 1e-4


class TrainingThroughput(FiniteProvenance):
    """Grain: one measured training configuration (throughput_id unique): a device, a model and
    its size, a precision, a method (full or LoRA), and the batch, sequence length and number of
    devices of the run where the source gives them.

    Rates are per device. ``tokens_per_s`` and the source's own ``reported_tflops`` and ``mfu``
    are as published; ``achieved_tflops`` is this project's count of the same rate,
    ``flops_per_param_token`` x ``model_params`` x ``tokens_per_s`` (attention FLOPs left out), so
    rows of different sources compare on one convention. A job time without a token count (the
    paper's Table 1) keeps its own unit: ``job_time_s`` and ``jobs_per_h``. A rate above the
    device's peak at its precision (staging.device_specs) is quarantined.
    """

    #: The warehouse table(s) this model is the contract of (pipelines.warehouse.dictionary finds it so).
    __tables__ = ("staging.training_throughput",)

    throughput_id: str = pa.Field(unique=True, str_matches=r"^[a-z0-9]+(_[a-z0-9]+)*$", description="Stable id of the configuration, e.g. llmfoundry_h100_1b_bf16_s2048_g8.")
    device_id: str = pa.Field(
        str_matches=DEVICE_ID_PATTERN,
        description="The device: a base_device_id of staging.device_specs where the device is there (e.g. nvidia-h100-sxm), else an id of its own (e.g. apple-m2-ultra; the device class says what it is).",
    )
    device_class: str = pa.Field(isin=DEVICE_CLASSES, description="The device's class: " + " | ".join(DEVICE_CLASSES) + ".")
    device_name: str = pa.Field(description="The device as the source names it, e.g. 'h100_80gb' or 'M2 Ultra'.")
    model: str = pa.Field(description="The trained model as the source names it, e.g. 'MPT 1b' or 'Llama 3 405B'.")
    model_params: float = pa.Field(gt=0, description="Parameters of the model (the source's count, or its nominal size where it gives none; see notes).")
    precision: str = pa.Field(nullable=True, isin=PRECISIONS, description="Number format of the run's matrix products: " + " | ".join(PRECISIONS) + "; null where the source does not say (then see notes).")
    method: str = pa.Field(isin=METHODS, description="full (every weight trained) | lora (low-rank adapters on frozen weights).")
    batch_size: int = pa.Field(nullable=True, gt=0, description="Sequences per optimizer step over all devices of the run (the global batch); null where not given.")
    sequence_length: int = pa.Field(nullable=True, gt=0, description="Tokens per sequence; null where not given.")
    devices: int = pa.Field(ge=1, description="Devices (GPUs, laptops, phones) in the measured run.")
    tokens_per_s: float = pa.Field(nullable=True, gt=0, description="Training tokens per second per device, as published; null where the source gives no token rate.")
    flops_per_param_token: float = pa.Field(
        nullable=True, gt=0, le=FULL_FLOPS_PER_PARAM_TOKEN,
        description="Training FLOPs per parameter per token behind achieved_tflops: 6 for full training (forward 2, backward 4); for LoRA the forward 2 plus the activation gradients through the frozen layers the backward pass reaches (2 x the share of layers at or above the lowest adapter), at most 4.",
    )
    achieved_tflops: float = pa.Field(nullable=True, gt=0, description="Model TFLOPS per device on this project's count: flops_per_param_token x model_params x tokens_per_s / 1e12 (derived; attention FLOPs left out).")
    reported_tflops: float = pa.Field(nullable=True, gt=0, description="TFLOPS per device as the source reports them, on the source's own FLOP count (notes say which, e.g. with attention FLOPs).")
    mfu: float = pa.Field(nullable=True, gt=0, le=1, description="Model FLOPs utilisation as the source reports it, a fraction in (0, 1] (41.82% is 0.4182).")
    job_time_s: float = pa.Field(nullable=True, gt=0, description="Seconds one device takes for one training job, where the source gives a job time instead of a token rate.")
    jobs_per_h: float = pa.Field(nullable=True, gt=0, description="Jobs per hour per device: 3600 / job_time_s (derived).")
    status: str = pa.Field(isin=THROUGHPUT_STATUSES, description=STATUS_TEXT + " (the weakest of the row's figures) | measured (this project's own measurement, the run manifest or README that produced it cited).")
    citation: str = pa.Field(description="Where the figures are published (table, section, file).")
    citation_url: str = pa.Field(str_startswith="http", description="Link to it (a commit's permalink for a repository file).")
    notes: str = pa.Field(nullable=True, description="The published figures quoted with where they are, the arithmetic of derived ones, and what the source leaves unsaid.")
    power_w: float = pa.Field(
        nullable=True, gt=0,
        description="Mean power per device while this run trained, W, where the source gives the power of the same run (or, status derived, of the same chip, precision and kind of work; notes say which); within power_boundary.",
    )
    power_boundary: str = pa.Field(
        nullable=True, isin=POWER_BOUNDARIES,
        description="What power_w covers: " + " | ".join(POWER_BOUNDARIES) + " (gpu: a system-on-chip's GPU alone, as powermetrics' gpu_power reads it; package: the chip's CPU, GPU and NPU; board: the accelerator card, as NVML reads it; device: the whole device, from its battery; wall: the whole device at the socket).",
    )
    series_id: str = pa.Field(
        nullable=True,
        description="The power series (staging.benchmark_series.series_id) measured in the same run as this rate, where one was: a capture's rate and its power logs share it; null for published rows.",
    )
    is_synthetic: bool = pa.Field(
        nullable=True,
        description="True for a row written by a capture's fake backend (not a measurement): no scenario may read it (a factor_ref to it is rejected); null or false otherwise.",
    )

    class Config:
        #: The grain: one row per measured configuration.
        unique = list(GRAIN)

    @pa.dataframe_check(name="has_a_rate", description="a row gives a token rate, the source's TFLOPS or a job time")
    @classmethod
    def has_a_rate(cls, data: pa.PolarsData) -> pl.LazyFrame:
        return data.lazyframe.select(pl.any_horizontal([pl.col(c).is_not_null() for c in ("tokens_per_s", "reported_tflops", "job_time_s")]))

    @pa.dataframe_check(name="achieved_tflops_is_its_arithmetic", description="achieved_tflops is given with tokens_per_s and flops_per_param_token and equals flops_per_param_token x model_params x tokens_per_s / 1e12")
    @classmethod
    def achieved_tflops_is_its_arithmetic(cls, data: pa.PolarsData) -> pl.LazyFrame:
        product = pl.col("flops_per_param_token") * pl.col("model_params") * pl.col("tokens_per_s") / 1e12
        matches = ((pl.col("achieved_tflops") - product).abs() <= ARITHMETIC_RTOL * product).fill_null(False)
        return data.lazyframe.select(pl.col("achieved_tflops").is_null() | matches)

    @pa.dataframe_check(name="jobs_per_h_is_its_arithmetic", description="jobs_per_h is given with job_time_s and equals 3600 / job_time_s")
    @classmethod
    def jobs_per_h_is_its_arithmetic(cls, data: pa.PolarsData) -> pl.LazyFrame:
        rate = 3600.0 / pl.col("job_time_s")
        matches = ((pl.col("jobs_per_h") - rate).abs() <= ARITHMETIC_RTOL * rate).fill_null(False)
        return data.lazyframe.select(pl.col("jobs_per_h").is_null() | matches)

    @pa.dataframe_check(name="flops_count_fits_the_method", description="flops_per_param_token is 6 for full training and at most 4 for LoRA")
    @classmethod
    def flops_count_fits_the_method(cls, data: pa.PolarsData) -> pl.LazyFrame:
        factor = pl.col("flops_per_param_token")
        full = (pl.col("method") == "full") & (factor == FULL_FLOPS_PER_PARAM_TOKEN)
        lora = (pl.col("method") == "lora") & (factor <= LORA_MAX_FLOPS_PER_PARAM_TOKEN)
        return data.lazyframe.select(factor.is_null() | (full | lora).fill_null(False))

    @pa.dataframe_check(name="missing_precision_is_explained", description="a null precision comes with notes")
    @classmethod
    def missing_precision_is_explained(cls, data: pa.PolarsData) -> pl.LazyFrame:
        return data.lazyframe.select(pl.col("precision").is_not_null() | pl.col("notes").is_not_null())

    @pa.dataframe_check(name="power_has_a_boundary", description="power_w and power_boundary are given together")
    @classmethod
    def power_has_a_boundary(cls, data: pa.PolarsData) -> pl.LazyFrame:
        return data.lazyframe.select(pl.col("power_w").is_null() == pl.col("power_boundary").is_null())

    @pa.dataframe_check(name="derived_or_assumed_rows_explain", description="a derived or assumed row has notes")
    @classmethod
    def derived_or_assumed_rows_explain(cls, data: pa.PolarsData) -> pl.LazyFrame:
        return weak_rows_explained(data)
