"""The same nvidia-smi ingest written in plain pandas: the benchmark's point of comparison.

Straightforward, idiomatic pandas: ``read_csv`` with the default engine, strip the unit,
parse the timestamps with their explicit format, localise to the log's time zone and convert
to UTC, then integrate each GPU's power over time by the trapezoid rule with numpy. Rows whose
power reads ``[N/A]`` are left out of the integral (the trapezoid spans the gap).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

TIMESTAMP_FORMAT = "%Y/%m/%d %H:%M:%S.%f"


def read_nvidia_smi(path: Path, timezone: str) -> pd.DataFrame:
    """One row per sample: ``channel`` (``gpu<index>``), ``ts`` (UTC), ``power_w`` (NaN if N/A)."""
    raw = pd.read_csv(path, skipinitialspace=True)
    raw.columns = [c.strip() for c in raw.columns]
    power = pd.to_numeric(raw["power.draw [W]"].str.removesuffix(" W"), errors="coerce")
    ts = pd.to_datetime(raw["timestamp"], format=TIMESTAMP_FORMAT)
    ts = ts.dt.tz_localize(timezone, ambiguous="raise", nonexistent="raise").dt.tz_convert("UTC")
    return pd.DataFrame({"channel": "gpu" + raw["index"].astype(str), "ts": ts, "power_w": power})


def integrate(samples: pd.DataFrame) -> pd.DataFrame:
    """Per channel: trapezoid energy (J) over the valid samples, their count and time span."""
    valid = samples.dropna(subset=["power_w"]).sort_values(["channel", "ts"], kind="stable")
    rows = []
    for channel, group in valid.groupby("channel", sort=True):
        seconds = (group["ts"] - group["ts"].iloc[0]).dt.total_seconds().to_numpy()
        power = group["power_w"].to_numpy()
        rows.append(
            {
                "channel": channel,
                "energy_j": float(np.trapezoid(power, seconds)),
                "n_samples": len(group),
                "duration_s": float(seconds[-1]),
            }
        )
    return pd.DataFrame(rows)


def ingest(path: Path, timezone: str = "UTC") -> pd.DataFrame:
    """Read and integrate one nvidia-smi log."""
    return integrate(read_nvidia_smi(path, timezone))
