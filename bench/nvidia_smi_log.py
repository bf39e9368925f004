"""A large synthetic ``nvidia-smi --query-gpu=timestamp,index,name,power.draw --format=csv`` log.

The benchmark needs a big file in exactly the format the project ingests::

    timestamp, index, name, power.draw [W]
    2023/05/01 12:00:00.123, 0, NVIDIA RTX A5000, 220.15 W
    2023/05/01 12:00:00.123, 1, NVIDIA RTX A5000, 61.40 W

Two GPUs are polled together every ~100 ms (both lines of a poll carry the same timestamp),
GPU 0 training and GPU 1 mostly idle with bursts. A few ``power.draw`` cells read ``[N/A]``,
as nvidia-smi prints when a reading is unavailable. Rows are built column-wise with numpy
and polars, so 5 million samples take a few seconds. The output is deterministic for a given
(samples, seed).
"""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import numpy as np
import polars as pl

HEADER = "timestamp, index, name, power.draw [W]"
GPU_NAME = "NVIDIA RTX A5000"
START = dt.datetime(2023, 5, 1, 12, 0, tzinfo=dt.UTC)


def na_rows(samples: int, gpus: int = 2) -> np.ndarray:
    """Row numbers (0-based, header excluded) whose power cell is ``[N/A]``: a few, spread out."""
    count = max(2, min(12, samples // 400_000))
    rows = np.linspace(samples * 0.1, samples * 0.9, count).astype(np.int64)
    return rows - rows % gpus + np.arange(count) % gpus


def build_frame(samples: int, *, gpus: int = 2, seed: int = 7) -> pl.DataFrame:
    """The log's rows as one text column ``line`` (no header)."""
    if samples % gpus:
        raise ValueError(f"samples ({samples}) must be a multiple of gpus ({gpus})")
    rng = np.random.default_rng(seed)
    polls = samples // gpus
    steps_ms = 100 + rng.integers(0, 6, polls)
    steps_ms[0] = 0
    epoch_ms = int(START.timestamp() * 1000) + np.cumsum(steps_ms)
    t_s = (epoch_ms - epoch_ms[0]) / 1000.0
    busy = 205.0 + 12.0 * np.sin(2 * np.pi * t_s / 900.0)
    power = np.empty((polls, gpus))
    power[:, 0] = busy + rng.normal(0.0, 4.0, polls)
    for gpu in range(1, gpus):
        bursts = (np.sin(2 * np.pi * t_s / (1800.0 + 300.0 * gpu)) > 0.6) * 120.0
        power[:, gpu] = 24.0 + bursts + rng.normal(0.0, 1.5, polls)
    centiwatts = np.round(np.clip(power, 5.0, None).reshape(-1) * 100.0).astype(np.int64)
    frame = pl.DataFrame(
        {
            "ms": np.repeat(epoch_ms, gpus),
            "index": np.tile(np.arange(gpus), polls),
            "cw": centiwatts,
        }
    )
    power_text = (
        (pl.col("cw") // 100).cast(pl.String) + "." + (pl.col("cw") % 100).cast(pl.String).str.zfill(2) + " W"
    )
    na = pl.Series("na", np.zeros(samples, dtype=bool)).scatter(na_rows(samples, gpus), True)
    return frame.with_columns(na).select(
        pl.concat_str(
            [
                pl.from_epoch("ms", time_unit="ms").dt.strftime("%Y/%m/%d %H:%M:%S%.3f"),
                pl.col("index").cast(pl.String),
                pl.lit(GPU_NAME),
                pl.when(pl.col("na")).then(pl.lit("[N/A]")).otherwise(power_text),
            ],
            separator=", ",
        ).alias("line")
    )


def write_log(path: Path, samples: int, *, gpus: int = 2, seed: int = 7) -> Path:
    """Write the log to ``path`` (parents created) and return it."""
    path.parent.mkdir(parents=True, exist_ok=True)
    frame = build_frame(samples, gpus=gpus, seed=seed)
    tmp = path.with_suffix(path.suffix + ".part")
    with tmp.open("wb") as handle:
        handle.write((HEADER + "\n").encode("ascii"))
        frame.write_csv(handle, include_header=False, quote_style="never")
    tmp.replace(path)
    return path


def cached_log(out_dir: Path, samples: int, *, gpus: int = 2, seed: int = 7) -> Path:
    """The log for (samples, gpus, seed) under ``out_dir``, generated on first use."""
    path = out_dir / f"nvidia_smi_{samples}_{gpus}gpu_seed{seed}.csv"
    if not path.is_file():
        write_log(path, samples, gpus=gpus, seed=seed)
    return path
