"""Android battery fuel-gauge logs (sysfs via adb) -> staging.power_samples.

The file is written by sampling ``/sys/class/power_supply/battery/{current_now,voltage_now}``
over adb: header ``timestamp_ms,current_now,voltage_now``. ``timestamp_ms`` is Unix epoch
milliseconds (UTC); ``current_now`` and ``voltage_now`` are the raw integers, microamps and
microvolts unless the manifest options ``current_unit`` ("uA" | "mA") and ``voltage_unit``
("uV" | "mV") say otherwise.

Vendors disagree on the sign of ``current_now``. Option ``sign``:

- ``"auto"`` (default): discharge has the sign of the median current of the file's readable
  rows (a training run is mostly discharging); a zero median falls back to the mean's sign;
- ``"discharge_positive"`` or ``"discharge_negative"``: as stated.

Power is ``|I| x V`` W on channel ``battery`` (``counts_to_total``). A reading with the
charging sign is rejected: while charging, ``current_now`` measures the charge current, not
the device's power. A zero current is kept (0 W).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import polars as pl

from pipelines.errors import SourceParseError
from pipelines.ingest.cells import (
    EARLIEST,
    LATEST,
    drop_where,
    finite_number,
    require_cells,
    whole_number,
)
from pipelines.ingest.options import run_options
from pipelines.ingest.parsers.common import checked_casts, read_text_csv, require_columns
from pipelines.ingest.plausibility import check_samples
from pipelines.ingest.staging import Parsed

TIME, CURRENT, VOLTAGE = "timestamp_ms", "current_now", "voltage_now"
CURRENT_UNITS = {"uA": 1e-6, "mA": 1e-3}
VOLTAGE_UNITS = {"uV": 1e-6, "mV": 1e-3}
SIGNS = ("auto", "discharge_positive", "discharge_negative")


def _choice(path: Path, options: Mapping[str, Any], key: str, allowed: Mapping[str, float] | tuple[str, ...], default: str) -> str:
    value = options.get(key, default)
    if value not in allowed:
        raise SourceParseError(path, None, f"manifest option {key} must be one of {list(allowed)}, got {value!r}")
    return str(value)


def discharge_sign(currents: pl.Series, sign: str) -> int:
    """+1 if discharge reads positive, -1 if negative, for option ``sign`` and the readable currents."""
    if sign == "discharge_positive":
        return 1
    if sign == "discharge_negative":
        return -1
    if currents.len() == 0:
        return 1
    median = currents.median()
    if median:
        return 1 if median > 0 else -1  # type: ignore[operator]
    mean = currents.mean()
    return -1 if mean is not None and mean < 0 else 1  # type: ignore[operator]


def parse_android_sysfs(path: Path, options: Mapping[str, Any]) -> Parsed:
    """Parse an adb sysfs battery log into power_samples rows (one run)."""
    run = run_options(path, options)
    amps = CURRENT_UNITS[_choice(path, options, "current_unit", CURRENT_UNITS, "uA")]
    volts = VOLTAGE_UNITS[_choice(path, options, "voltage_unit", VOLTAGE_UNITS, "uV")]
    sign_option = _choice(path, options, "sign", SIGNS, "auto")
    frame = read_text_csv(path)
    require_columns(path, frame, [TIME, CURRENT, VOLTAGE])
    frame, rejects = require_cells(frame.select("source_row", TIME, CURRENT, VOLTAGE), [TIME, CURRENT, VOLTAGE])
    frame = frame.with_columns(pl.col(TIME).str.strip_chars().alias("raw_time"), pl.col(CURRENT).str.strip_chars().alias("raw_current"))
    typed, bad = checked_casts(frame, {TIME: whole_number, CURRENT: finite_number, VOLTAGE: finite_number})
    rejects += bad
    lo, hi = int(EARLIEST.timestamp() * 1000), int(LATEST.timestamp() * 1000)
    typed, bad = drop_where(
        typed,
        (pl.col(TIME) < lo) | (pl.col(TIME) >= hi),
        column=TIME,
        check="in_range",
        value="raw_time",
        reason=f"{TIME}: {{raw_time}} is not a Unix time in ms within {EARLIEST.year}-{LATEST.year - 1}",
    )
    rejects += bad
    sign = discharge_sign(typed.get_column(CURRENT), sign_option)
    how = "median current" if sign_option == "auto" else f"option sign = {sign_option}"
    typed, bad = drop_where(
        typed,
        pl.col(CURRENT) * sign < 0,
        column=CURRENT,
        check="charging",
        value="raw_current",
        reason=(
            f"{CURRENT}: {{raw_current}} has the charging sign (discharge is {'positive' if sign > 0 else 'negative'} "
            f"by the {how}); the battery was charging, so current_now does not measure device power"
        ),
    )
    rejects += bad
    out = typed.select(
        pl.lit(run.run_id).alias("run_id"),
        pl.from_epoch(TIME, time_unit="ms").dt.replace_time_zone("UTC").cast(pl.Datetime("us", "UTC")).alias("ts"),
        pl.lit("battery").alias("channel"),
        (pl.col(CURRENT).abs() * amps * pl.col(VOLTAGE) * volts).alias("power_w"),
        pl.lit(True).alias("counts_to_total"),
        "source_row",
    )
    out, bad = check_samples(out, kind="android_sysfs", options=options, labels={"ts": TIME, "power_w": CURRENT})
    rejects += bad
    return Parsed(frame=out, rejects=sorted(rejects, key=lambda r: (r.source_row or 0, r.column_name or "")))
