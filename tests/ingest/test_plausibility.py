"""No silent corruption: daylight-saving fall-back, plausibility bounds, first-of-duplicates kept,
NaN as a missing cell, and failure summaries that name the file."""

from __future__ import annotations

import datetime as dt
import sys
from pathlib import Path
from typing import Any

import pytest
from dagster._utils.error import serializable_error_info_from_exc_info

from pipelines.defs.assets.staging_tables import GRID_INTENSITY
from pipelines.errors import SourceParseError
from pipelines.ingest.energy.runs import runs_from_samples
from pipelines.ingest.options import run_options
from pipelines.ingest.parsers.android_sysfs import parse_android_sysfs
from pipelines.ingest.parsers.monsoon import parse_monsoon
from pipelines.ingest.parsers.nvidia_smi import parse_nvidia_smi
from pipelines.ingest.plausibility import CLASS_MAX_W, TDP_MULTIPLE, power_bound
from pipelines.ingest.staging import Parser, Staged
from pipelines.run.launch import root_cause
from pipelines.warehouse.power_logs import SAMPLES_TABLE
from schemas.grid_intensity import GridIntensity
from schemas.power_samples import PowerSamples
from tests.helpers import rejects_of, stage_text

GRID_PARSERS, GRID_TABLE = GRID_INTENSITY.parsers, GRID_INTENSITY.table

UTC = dt.UTC
LONDON = {"timezone": "Europe/London", "run_id": "fallback", "device_id": "nvidia-rtx-a5000"}


def utc(*args: int) -> dt.datetime:
    return dt.datetime(*args, tzinfo=UTC)


def samples(
    tmp_path: Path,
    name: str,
    content: str | bytes,
    parser: Parser,
    kind: str,
    options: dict[str, Any],
) -> Staged:
    return stage_text(
        tmp_path,
        name,
        content,
        parser=parser,
        kind=kind,
        table=SAMPLES_TABLE,
        model=PowerSamples,
        options=options,
    )


def grid(
    tmp_path: Path,
    kind: str,
    content: str,
    options: dict[str, Any] | None = None,
    name: str = "g.csv",
) -> Staged:
    return stage_text(
        tmp_path,
        name,
        content,
        parser=GRID_PARSERS[kind],
        kind=kind,
        table=GRID_TABLE,
        model=GridIntensity,
        options={"fetched_at": dt.date(2026, 1, 1), **(options or {})},
    )


def reasons(staged: Staged) -> dict[tuple[int | None, str], str]:
    return {
        (r["source_row"], r["check_name"]): r["reason"]
        for r in staged.rejects.iter_rows(named=True)
    }


def nvidia_log(stamps: list[str], watts: float = 100.0) -> str:
    return "timestamp, index, name, power.draw [W]\n" + "".join(
        f"{s}, 0, NVIDIA RTX A5000, {watts:.2f} W\n" for s in stamps
    )


def run_of(staged: Staged, kind: str, options: dict[str, Any], path: Path) -> dict[str, Any]:
    return runs_from_samples(staged.frame, run_options(path, options), log_format=kind).row(
        0, named=True
    )


# --- daylight-saving fall-back ----------------------------------------------------------------


def test_fall_back_hour_is_placed_by_the_logs_order(tmp_path: Path) -> None:
    # London, 29 Oct 2023: 01:00-01:59:59 BST, then the clocks go back and 01:00-01:59:59 GMT.
    # One reading a minute from 00:30 BST to 02:30 GMT: three hours, at 100 W.
    start = dt.datetime(2023, 10, 29, 0, 30)
    first = [start + dt.timedelta(minutes=i) for i in range(90)]  # 00:30 .. 01:59 (BST)
    second = [
        dt.datetime(2023, 10, 29, 1, 0) + dt.timedelta(minutes=i) for i in range(91)
    ]  # 01:00 .. 02:30 (GMT)
    stamps = [f"{t:%Y/%m/%d %H:%M:%S}.000" for t in first + second]
    staged = samples(tmp_path, "fb.csv", nvidia_log(stamps), parse_nvidia_smi, "nvidia_smi", LONDON)
    assert staged.rejects.height == 0
    assert staged.frame.height == len(stamps)
    ts = staged.frame.get_column("ts").to_list()
    assert ts[0] == utc(2023, 10, 28, 23, 30)
    assert ts[89] == utc(2023, 10, 29, 0, 59)  # 01:59 BST, first pass
    assert ts[90] == utc(2023, 10, 29, 1, 0)  # 01:00 GMT, after the step back
    assert ts[-1] == utc(2023, 10, 29, 2, 30)
    assert ts == sorted(ts)
    run = run_of(staged, "nvidia_smi", LONDON, tmp_path / "fb.csv")
    assert run["duration_s"] == pytest.approx(3 * 3600)
    assert run["energy_j"] == pytest.approx(100.0 * 3 * 3600)


def test_fall_back_hour_of_a_log_out_of_order_is_quarantined(tmp_path: Path) -> None:
    # 01:30 after 01:45 and then 01:10 again: no reading of the repeated hour keeps the log in
    # order, so its ambiguous lines are quarantined, not shifted; the unambiguous lines load.
    stamps = ["2023/10/29 00:50:00.000", "2023/10/29 01:45:00.000", "2023/10/29 01:30:00.000", "2023/10/29 01:10:00.000",
              "2023/10/29 01:05:00.000", "2023/10/29 02:10:00.000"]  # fmt: skip
    staged = samples(tmp_path, "fb.csv", nvidia_log(stamps), parse_nvidia_smi, "nvidia_smi", LONDON)
    assert [r[:3] for r in rejects_of(staged)] == [
        (n, "timestamp", "ambiguous_local_time") for n in (3, 4, 5, 6)
    ]
    assert "occurs twice in Europe/London" in reasons(staged)[(5, "ambiguous_local_time")]
    assert staged.frame.get_column("source_row").to_list() == [2, 7]


# --- plausibility bounds ----------------------------------------------------------------------


def test_bounds_come_from_the_tdp_or_the_class() -> None:
    assert power_bound("nvidia_smi", "nvidia-rtx-a5000").max_w == TDP_MULTIPLE * 230
    assert power_bound("android_sysfs", "qualcomm-sd888").max_w == CLASS_MAX_W["phone"]
    assert power_bound("powermetrics", "apple-m2-pro").max_w == CLASS_MAX_W["laptop"]
    assert power_bound("monsoon", None).max_w == CLASS_MAX_W["phone"]


def test_power_above_the_devices_bound_is_quarantined(tmp_path: Path) -> None:
    content = (
        "timestamp, index, name, power.draw [W]\n"
        "2023/05/01 12:00:00.000, 0, G, 200.00 W\n"
        "2023/05/01 12:00:01.000, 0, G, 2147483648.00 W\n"  # 2^31 W: a wrapped int32
        "2023/05/01 12:00:02.000, 0, G, 210.00 W\n"
    )
    options = {"timezone": "UTC", "device_id": "nvidia-rtx-a5000"}
    staged = samples(tmp_path, "gpu.csv", content, parse_nvidia_smi, "nvidia_smi", options)
    assert rejects_of(staged) == [(3, "power.draw [W]", "plausible_power", "2.14748e+09")]
    assert (
        "above the plausible 460 W (2 x the TDP of nvidia-rtx-a5000 (230 W))"
        in reasons(staged)[(3, "plausible_power")]
    )
    assert staged.frame.get_column("power_w").to_list() == [200.0, 210.0]


def test_android_current_of_minus_two_to_the_31_is_quarantined(tmp_path: Path) -> None:
    # Discharge negative (e.g. Pixel): -2^31 uA at 3.8 V would be about 8 kW for a phone.
    content = "timestamp_ms,current_now,voltage_now\n1700000000000,-1000000,3800000\n1700000001000,-2147483648,3800000\n1700000002000,-1100000,3800000\n"
    options = {"run_id": "phone", "device_id": "qualcomm-sd888", "sign": "discharge_negative"}
    staged = samples(tmp_path, "a.csv", content, parse_android_sysfs, "android_sysfs", options)
    assert [r[:3] for r in rejects_of(staged)] == [(3, "current_now", "plausible_power")]
    assert "the bound of its class phone" in reasons(staged)[(3, "plausible_power")]
    assert staged.frame.get_column("source_row").to_list() == [2, 4]


def test_sample_five_years_off_and_in_the_future_are_quarantined(tmp_path: Path) -> None:
    base = 1_700_000_000_000  # 2023-11-14 22:13:20 UTC
    five_years = 5 * 365 * 86_400_000
    future = int((dt.datetime.now(UTC) + dt.timedelta(days=3650)).timestamp() * 1000)
    rows = [base, base + 1000, base - five_years, base + 2000, future, base + 3000]
    content = "timestamp_ms,current_now,voltage_now\n" + "".join(
        f"{t},1000000,4000000\n" for t in rows
    )
    options = {"run_id": "phone", "device_id": "qualcomm-sd888"}
    staged = samples(tmp_path, "a.csv", content, parse_android_sysfs, "android_sysfs", options)
    assert [r[:3] for r in rejects_of(staged)] == [
        (4, "timestamp_ms", "outside_log_span"),
        (6, "timestamp_ms", "future_timestamp"),
    ]
    assert "outside the log's own span" in reasons(staged)[(4, "outside_log_span")]
    assert "is in the future" in reasons(staged)[(6, "future_timestamp")]
    assert staged.frame.get_column("source_row").to_list() == [2, 3, 5, 7]
    run = run_of(staged, "android_sysfs", options, tmp_path / "a.csv")
    assert run["duration_s"] == 3.0
    assert run["energy_j"] == pytest.approx(12.0)


def test_timestamp_stepping_back_an_hour_is_quarantined(tmp_path: Path) -> None:
    # Monsoon: ms from started_at; line 4 steps back an hour, line 5 carries on from line 3.
    content = "Time(ms),Main(mA),Main Voltage(V),\n0,1000,4.0,\n1000,1000,4.0,\n-3599000,1000,4.0,\n2000,1000,4.0,\n"
    options = {"run_id": "m", "started_at": "2023-05-01T12:00:00Z"}
    staged = samples(tmp_path, "m.csv", content, parse_monsoon, "monsoon", options)
    assert [r[:3] for r in rejects_of(staged)] == [(4, "Time(ms)", "time_step_back")]
    assert "steps back in time" in reasons(staged)[(4, "time_step_back")]
    assert staged.frame.get_column("source_row").to_list() == [2, 3, 5]
    assert run_of(staged, "monsoon", options, tmp_path / "m.csv")["duration_s"] == 2.0


def test_grid_actual_in_the_future_and_out_of_bounds_are_quarantined(tmp_path: Path) -> None:
    future = (dt.datetime.now(UTC) + dt.timedelta(days=400)).replace(
        minute=0, second=0, microsecond=0
    )
    content = (
        "timestamp,avg_CI\n"
        "2022-01-01 01:00:00+00:00,250.0\n"
        f"{future:%Y-%m-%d %H:%M:%S}+00:00,240.0\n"  # actual, dated in the future
        "2022-01-01 02:00:00+00:00,2500.0\n"  # above 2,000 g/kWh
        "2022-01-01 03:00:00+00:00,260.0\n"
    )
    options = {"zone": "US-CAL-CISO-PROD", "zone_name": "CAISO", "timestamp_marks": "hour_end"}
    staged = grid(tmp_path, "eia930_csv", content, options)
    assert [r[:3] for r in rejects_of(staged)] == [
        (3, None, "actual_not_in_future"),
        (4, "gco2e_per_kwh", "less_than_or_equal_to(2000)"),
    ]
    assert "cannot be dated in the future" in reasons(staged)[(3, "actual_not_in_future")]
    assert staged.frame.get_column("source_row").to_list() == [2, 5]


# --- valid rows are not lost ------------------------------------------------------------------


def test_exact_duplicate_log_line_keeps_the_first(tmp_path: Path) -> None:
    content = (
        "timestamp, index, name, power.draw [W]\n"
        "2023/05/01 12:00:00.000, 0, G, 100.00 W\n"
        "2023/05/01 12:00:01.000, 0, G, 110.00 W\n"
        "2023/05/01 12:00:01.000, 0, G, 110.00 W\n"  # exact duplicate of line 3
        "2023/05/01 12:00:02.000, 0, G, 120.00 W\n"
    )
    staged = samples(
        tmp_path, "gpu.csv", content, parse_nvidia_smi, "nvidia_smi", {"timezone": "UTC"}
    )
    assert [r[:3] for r in rejects_of(staged)] == [(4, None, "multiple_fields_uniqueness")]
    assert (
        reasons(staged)[(4, "multiple_fields_uniqueness")]
        == "an exact duplicate of line 3; the first is kept"
    )
    assert staged.frame.get_column("source_row").to_list() == [2, 3, 5]


def test_nan_in_one_electricitymaps_column_keeps_the_other(tmp_path: Path) -> None:
    header = (
        "Datetime (UTC),Country,Zone Name,Zone Id,Carbon Intensity gCO\u2082eq/kWh (direct),Carbon Intensity gCO\u2082eq/kWh (LCA),"
        "Data Estimated\n"
    )
    content = header + (
        "2023-01-01 00:00:00,Germany,Germany,DE,152.0,199.5,false\n"
        "2023-01-01 01:00:00,Germany,Germany,DE,NaN,198.4,false\n"  # NaN direct: lifecycle kept
        "2023-01-01 02:00:00,Germany,Germany,DE,150.0,,false\n"  # blank lifecycle: direct kept
    )
    staged = grid(tmp_path, "electricitymaps_csv", content)
    assert [r[:3] for r in rejects_of(staged)] == [
        (3, "Carbon Intensity gCO\u2082eq/kWh (direct)", "missing_value"),
        (4, "Carbon Intensity gCO\u2082eq/kWh (LCA)", "missing_value"),
    ]
    assert (
        "is NaN (no value): the hour's other row is kept" in reasons(staged)[(3, "missing_value")]
    )
    assert sorted(staged.frame.select("source_row", "emission_scope", "gco2e_per_kwh").rows()) == [
        (2, "direct", 152.0), (2, "lifecycle", 199.5), (3, "lifecycle", 198.4), (4, "direct", 150.0),
    ]  # fmt: skip


def test_nan_in_one_neso_column_keeps_the_other(tmp_path: Path) -> None:
    content = "from,to,forecast,actual,index\n2023-01-26 12:30:00+00:00,2023-01-26 13:00:00+00:00,150,nan,moderate\n"
    staged = grid(tmp_path, "neso_csv", content)
    assert [r[:3] for r in rejects_of(staged)] == [(2, "actual", "missing_value")]
    assert staged.frame.select("signal", "gco2e_per_kwh").rows() == [("forecast", 150.0)]


# --- failure summaries name the file ------------------------------------------------------------


@pytest.mark.parametrize(
    ("content", "line", "words"),
    [
        (
            b"timestamp,avg_CI\n2022-01-01 01:00:00+00:00,250\n2022-01-01 02:00:00+00:00,\xff\xfe\n",
            3,
            "is not UTF-8",
        ),
        (b"", None, "the file is empty"),
        (
            b"timestamp,avg_CI\n2022-01-01 01:00:00+00:00,250\n2022-01-01 02:00:00+00:00,1,234\n",
            3,
            "3 fields where the header has 2",
        ),
    ],
    ids=["non_utf8", "empty", "unquoted_comma"],
)
def test_failure_summary_names_the_file(
    tmp_path: Path, content: bytes, line: int | None, words: str
) -> None:
    options = {"zone": "US-CAL-CISO-PROD", "zone_name": "CAISO", "timestamp_marks": "hour_end"}
    with pytest.raises(SourceParseError) as caught:
        grid(tmp_path, "eia930_csv", content, options, name="broken.csv")  # type: ignore[arg-type]
    error = caught.value
    assert error.path.endswith("broken.csv")
    assert error.line == line
    assert words in str(error)
    # What `edge-carbon run` prints: Dagster wraps the step's error; the project's own error wins
    # over the library exception (e.g. polars' "empty CSV") underneath it.
    try:
        try:
            raise error
        except SourceParseError as inner:
            raise RuntimeError("Error occurred while executing op") from inner
    except RuntimeError:
        info = serializable_error_info_from_exc_info(sys.exc_info())
    summary = root_cause(info)
    assert "broken.csv" in summary
    assert summary.startswith("pipelines.errors.SourceParseError:")
    assert words in summary
