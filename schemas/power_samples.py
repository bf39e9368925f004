"""staging.power_samples: every power reading of every benchmark run's log."""

from __future__ import annotations

import pandera.polars as pa
import polars as pl
from pandera.engines import polars_engine as pe

from schemas.base import Provenance


class PowerSamples(Provenance):
    """Grain: one reading of one power channel of one training run at one instant.

    A log file is one run. Channels are what the logger measures separately (``gpu0``,
    ``gpu1`` for nvidia-smi; ``cpu``, ``gpu``, ``ane``, ``combined`` for powermetrics;
    ``battery``; ``main``; RAPL domains). ``counts_to_total`` marks the channels whose sum is
    the run's power: sub-channels that are already inside another channel (powermetrics
    ``cpu``/``gpu``/``ane``, RAPL ``core``/``uncore``) do not count.
    """

    #: The warehouse table(s) this model is the contract of (pipelines.warehouse.dictionary finds it so).
    __tables__ = ("staging.power_samples",)

    run_id: str = pa.Field(description="The run this reading belongs to (joins staging.benchmark_runs).")
    ts: pe.DateTime(time_zone="UTC") = pa.Field(  # type: ignore[valid-type]
        description="When the reading was taken (UTC). Local-time logs are converted with their manifest time zone."
    )
    channel: str = pa.Field(description="What was measured: gpu<index>, cpu, gpu, ane, combined, battery, main, or a RAPL domain.")
    power_w: float = pa.Field(ge=0, description="Power (W) at ts; for counter logs (RAPL) the mean over the interval ending at ts.")
    counts_to_total: bool = pa.Field(description="True if this channel is part of the run's total power (summed with the others).")
    interval_s: float = pa.Field(
        nullable=True,
        gt=0,
        description="Counter logs (RAPL) only: length (s) of the interval ending at ts that power_w averages over; null for instantaneous readings.",
    )

    class Config:
        unique = ["run_id", "channel", "ts"]

    @pa.check("power_w", name="finite")
    @classmethod
    def power_is_finite(cls, data: pa.PolarsData) -> pl.LazyFrame:
        """Power must be a finite number (not NaN or infinite)."""
        return data.lazyframe.select(pl.col(data.key).is_finite())
