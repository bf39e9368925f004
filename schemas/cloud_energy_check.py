"""marts.cloud_energy_check: the model's cloud GPU energy per token beside the measured one."""

from __future__ import annotations

import pandera.polars as pa
import polars as pl

from schemas.base import Contract
from schemas.training_throughput import POWER_BOUNDARIES, PRECISIONS

#: Relative tolerance of the ratio arithmetic (floating point only: the columns are not rounded).
RATIO_RTOL = 1e-9


class CloudEnergyCheck(Contract):
    """marts.cloud_energy_check: the model's cloud GPU energy per training token (its board power at
    cloud_utilisation, for the time a token takes at its measured rate) beside this project's
    measurement of the same GPU (power_w / tokens_per_s of a measured rate row). Grain: scenario x
    measured rate row (scenario_id, throughput_id), for every scenario whose cloud GPU rate reads a
    measured rate row and every measured row of that row's device (sql/marts/cloud_energy_check.sql)."""

    #: The warehouse table(s) this model is the contract of (pipelines.warehouse.dictionary finds it so).
    __tables__ = ("marts.cloud_energy_check",)

    scenario_id: str = pa.Field(description="Scenario whose cloud side is checked (core.scenarios): one whose cloud_gpu_measured_tflops reads a row of staging.training_throughput.")
    throughput_id: str = pa.Field(description="The measured rate row (staging.training_throughput, status measured) the model is checked against.")
    device_id: str = pa.Field(description="The GPU of the measured row: the device of the row the scenario's rate reads (model_rate_throughput_id).")
    model: str = pa.Field(description="The model the measured row trained, as the row names it (e.g. OPT-125M).")
    model_params: float = pa.Field(gt=0, description="Parameters of the measured row's model: N of the 6 N FLOPs per token at which the model's rate is carried to that model.")
    precision: str = pa.Field(nullable=True, isin=PRECISIONS, description="Number format of the measured run (" + " | ".join(PRECISIONS) + "); the model's rate is a BF16 one on the shipped scenarios.")
    batch_size: int = pa.Field(nullable=True, description="Sequences per optimizer step of the measured run.")
    sequence_length: int = pa.Field(nullable=True, description="Tokens per sequence of the measured run.")
    series_id: str = pa.Field(nullable=True, description="The power series of the same run (staging.benchmark_series.series_id), where one is registered; null otherwise.")
    power_boundary: str = pa.Field(isin=POWER_BOUNDARIES, description="What the measured power covers: " + " | ".join(POWER_BOUNDARIES) + " (board: the GPU card, as NVML reads it, which the model's side matches).")
    source_id: str = pa.Field(description="Source of the measured row (joins staging.sources).")
    model_rate_throughput_id: str = pa.Field(description="The rate row the scenario's cloud_gpu_measured_tflops reads (its factor_ref), e.g. llmfoundry_h100_1b_bf16_s2048_g8.")
    model_gpu_power_w: float = pa.Field(gt=0, description="The model's GPU power before utilisation: cloud_gpu_power_w (the alternative variant's, cloud_alt_gpu_power_w, where cloud_gpu_variant is 1), W.")
    model_utilisation: float = pa.Field(gt=0, le=1, description="The scenario's cloud_utilisation: the share of that power the model charges while training.")
    model_board_power_w: float = pa.Field(gt=0, description="The model's board power while training: model_gpu_power_w x model_utilisation, W (the node's host share, the fabric and the PUE left out).")
    model_tflops: float = pa.Field(gt=0, description="The model's GPU rate: cloud_gpu_measured_tflops (carried to the variant as the model does), TFLOPS of 6 N D work.")
    model_tokens_per_s: float = pa.Field(gt=0, description="Tokens per second of the measured row's model at the model's rate: model_tflops x 1e12 / (6 x model_params).")
    measured_power_w: float = pa.Field(gt=0, description="The measured row's power_w: mean power of the same run as its rate, W, within power_boundary.")
    measured_tokens_per_s: float = pa.Field(gt=0, description="The measured row's tokens_per_s.")
    measured_tflops: float = pa.Field(nullable=True, gt=0, description="The measured row's achieved_tflops (6 x model_params x tokens_per_s / 1e12), TFLOPS.")
    model_j_per_token: float = pa.Field(gt=0, description="The model's board energy per token: model_board_power_w / model_tokens_per_s, J.")
    measured_j_per_token: float = pa.Field(gt=0, description="The measured energy per token: measured_power_w / measured_tokens_per_s, J.")
    power_ratio: float = pa.Field(gt=0, description="model_board_power_w / measured_power_w: above 1, the model charges the board more power than was measured.")
    rate_ratio: float = pa.Field(gt=0, description="model_tokens_per_s / measured_tokens_per_s: above 1, the model's GPU trains this model faster than was measured.")
    energy_ratio: float = pa.Field(gt=0, description="model_j_per_token / measured_j_per_token (= power_ratio / rate_ratio): above 1, the model charges each token more board energy than was measured; below 1, less.")

    class Config:
        unique = ["scenario_id", "throughput_id"]

    @pa.dataframe_check(name="energy_ratio_is_power_over_rate", description="energy_ratio = power_ratio / rate_ratio")
    @classmethod
    def energy_ratio_is_power_over_rate(cls, data: pa.PolarsData) -> pl.LazyFrame:
        expected = pl.col("power_ratio") / pl.col("rate_ratio")
        return data.lazyframe.select((pl.col("energy_ratio") - expected).abs() <= RATIO_RTOL * expected)
