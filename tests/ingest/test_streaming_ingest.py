"""Streaming ingest (pipelines.ingest.streaming): a log read in small blocks stages the same rows,
rejects and joules as the whole-frame path (parse, validate, integrate) and as one big block.
"""

from __future__ import annotations

import datetime as dt
import random
from pathlib import Path
from zoneinfo import ZoneInfo

import duckdb
import polars as pl
import pytest

from pipelines.ingest.energy.integration import integrate
from pipelines.ingest.parsers.nvidia_smi import parse_nvidia_smi
from pipelines.ingest.quarantine import Reject, split_valid
from pipelines.ingest.streaming import StreamedLog, stream_nvidia_smi
from schemas.meta import conform
from schemas.power_samples import PowerSamples

ZONE = "America/New_York"
OPTIONS = {"timezone": ZONE, "run_id": "streamed", "device_id": "no-such-device"}
SOURCE = {"source_id": "power_test", "source_file": "power/test.csv"}


def _line(moment: dt.datetime, gpu: int, power: str) -> str:
    return f"{moment.strftime('%Y/%m/%d %H:%M:%S.%f')[:-3]}, {gpu}, NVIDIA RTX A5000, {power}"


def write_log(path: Path, *, unordered_fall_back: bool = False) -> Path:
    """Two GPUs at 1 Hz across the 2023 fall-back in New York, with every kind of bad line."""
    rng = random.Random(15)
    start = dt.datetime(2023, 11, 5, 4, 30, tzinfo=dt.UTC)  # 00:30 EDT
    lines = ["timestamp, index, name, power.draw [W]"]
    for second in range(3 * 3600):
        local = (start + dt.timedelta(seconds=second)).astimezone(ZoneInfo(ZONE)).replace(tzinfo=None)
        for gpu in (0, 1):
            lines.append(_line(local, gpu, f"{rng.uniform(20, 300):.2f} W"))
            roll = rng.random() / 3 if local.hour != 1 else 1.0  # the repeated hour itself stays in order
            if roll < 0.004:
                lines.append(lines[-1])  # exact duplicate
            elif roll < 0.006:
                lines.append(_line(local, gpu, f"{rng.uniform(20, 300):.2f} W"))  # same key, other power
            elif roll < 0.008:
                lines.append(_line(local - dt.timedelta(seconds=30), gpu, "100.00 W"))  # steps back
            elif roll < 0.009:
                lines.append(_line(local.replace(year=2019), gpu, "100.00 W"))  # outside the span
            elif roll < 0.010:
                lines.append(_line(local, gpu, "5000.00 W"))  # above the bound
            elif roll < 0.011:
                lines.append(_line(local, gpu, "[N/A]"))
            elif roll < 0.012:
                lines.append(_line(local.replace(year=2090), gpu, "100.00 W"))  # future
            elif roll < 0.013:
                lines.append(_line(local + dt.timedelta(milliseconds=500), gpu, "-4.00 W"))  # fails the model (power_w >= 0)
            elif roll < 0.014:
                lines.append(f"2023/13/45 99:00:00.000, {gpu}, NVIDIA RTX A5000, 10.00 W")
    if unordered_fall_back:
        # a line of the repeated hour (01:xx) placed far from its pass: fits neither reading
        lines.insert(3 * len(lines) // 4, _line(dt.datetime(2023, 11, 5, 1, 0, 5), 0, "50.00 W"))
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def whole_frame(path: Path) -> tuple[pl.DataFrame, list[Reject], pl.DataFrame]:
    """The whole-frame path: parse, then validate_parsed's conform + split_valid, then integrate."""
    parsed = parse_nvidia_smi(path, OPTIONS)
    frame = conform(PowerSamples, parsed.frame.with_columns(pl.lit(SOURCE["source_id"]).alias("source_id"),
                                                            pl.lit(SOURCE["source_file"]).alias("source_file")))
    valid, rejects = split_valid(PowerSamples, frame, file=str(path))
    return valid, parsed.rejects + rejects, integrate(valid, per_channel=True)


def streamed(path: Path, block_bytes: int, read_rows: int) -> tuple[StreamedLog, pl.DataFrame]:
    con = duckdb.connect()
    result = stream_nvidia_smi(path, OPTIONS, con, "staging.power_samples", block_bytes=block_bytes, read_rows=read_rows, **SOURCE)
    rows = pl.from_arrow(con.sql("select * from staging.power_samples order by source_row").to_arrow_table())
    assert isinstance(rows, pl.DataFrame)
    con.close()
    return result, rows


def _key(rejects: list[Reject]) -> list[tuple]:
    return sorted((r.source_row or 0, r.column_name or "", r.check_name, r.value or "", r.reason) for r in rejects)


@pytest.mark.parametrize("unordered", [False, True], ids=["fall-back in order", "fall-back out of order"])
def test_small_blocks_stage_what_one_frame_stages(tmp_path: Path, unordered: bool) -> None:
    path = write_log(tmp_path / "gpu.csv", unordered_fall_back=unordered)
    valid, rejects, energies = whole_frame(path)
    small, small_rows = streamed(path, block_bytes=16 << 10, read_rows=1000)
    big, big_rows = streamed(path, block_bytes=1 << 30, read_rows=1 << 30)

    # the small budget really is small: many blocks, none larger than the budget's rows
    assert small.largest_block <= 1000 < valid.height // 5
    assert big.largest_block >= valid.height

    checks = {r.check_name for r in rejects}
    expected = {"parse", "plausible_power", "future_timestamp", "outside_log_span", "time_step_back",
                "multiple_fields_uniqueness", "greater_than_or_equal_to(0)"}
    assert expected <= checks
    assert ("ambiguous_local_time" in checks) == unordered
    assert any("an exact duplicate of line" in r.reason for r in rejects)
    assert any("with different values" in r.reason for r in rejects)

    for result, rows in ((small, small_rows), (big, big_rows)):
        assert result.rows == valid.height
        assert rows.equals(valid.with_columns(pl.col("ts").cast(rows.schema["ts"]))), "the same staged rows, in file order"
        assert _key(result.rejects) == _key(rejects)
        got = {row["channel"]: row for row in result.channels.iter_rows(named=True)}
        for row in energies.iter_rows(named=True):
            assert got[row["channel"]]["energy_j"] == pytest.approx(row["energy_j"], rel=1e-12)
            assert got[row["channel"]]["n_samples"] == row["n_samples"]
            assert got[row["channel"]]["started_at"] == row["started_at"]
            assert got[row["channel"]]["ended_at"] == row["ended_at"]
        run = integrate(valid).row(0, named=True)
        assert result.runs.height == 1
        assert result.runs.item(0, "energy_j") == pytest.approx(run["energy_j"], rel=1e-12)
        assert result.runs.item(0, "duration_s") == run["duration_s"]


MONSOON = "Time(ms),Main(mA),Main Voltage(V),\n0,1000,4.0,\n500,1500,4.0,\n1000,abc,4.0,\n1500,-100,4.0,\n2000,2000,3.9,\n"


def test_staging_with_the_warehouse_streams_the_same_tables(tmp_path: Path) -> None:
    """stage_power_logs with a connection (what the power_logs asset does) writes the rows, rejects
    and runs that the whole-frame path returns, leaving no scratch table and DuckDB's limit as it was."""
    from pipelines.warehouse.power_logs import SAMPLES_TABLE, stage_power_logs
    from pipelines.warehouse.tables import write_staged
    from tests.helpers import entry_for

    (tmp_path / "m.csv").write_text(MONSOON)
    entries = [
        entry_for(write_log(tmp_path / "gpu.csv"), kind="nvidia_smi", table=SAMPLES_TABLE, options=OPTIONS, source_id="gpu"),
        entry_for(tmp_path / "m.csv", kind="monsoon", table=SAMPLES_TABLE,
                  options={"run_id": "phone", "started_at": "2024-01-01T00:00:00Z"}, source_id="phone"),
    ]
    whole = stage_power_logs(entries, [], run_id="test")
    con = duckdb.connect(str(tmp_path / "wh.duckdb"))
    limit = con.execute("select current_setting('memory_limit')").fetchall()[0][0]
    tables = stage_power_logs(entries, [], run_id="test", con=con)
    write_staged(con, [tables.samples, tables.runs, tables.series])

    rows = pl.from_arrow(con.sql("select * from staging.power_samples").to_arrow_table())
    assert isinstance(rows, pl.DataFrame)
    assert tables.samples.in_table == rows.height == whole.samples.frame.height > 10_000
    assert rows.equals(whole.samples.frame.with_columns(pl.col("ts").cast(rows.schema["ts"]))), "same rows, same order"
    assert tables.samples.frame.height == 5 and tables.samples.per_source == whole.samples.per_source

    def rejects(frame: pl.DataFrame) -> list[tuple]:
        return sorted(frame.drop("rejected_at").rows(), key=repr)

    stored = pl.from_arrow(con.sql("select * from quarantine.rejected_rows").to_arrow_table())
    assert isinstance(stored, pl.DataFrame)
    assert rejects(tables.samples.rejects) == rejects(whole.samples.rejects)
    assert rejects(stored) == rejects(pl.concat([whole.samples.rejects, whole.runs.rejects]))
    runs, expected = tables.runs.frame, whole.runs.frame
    assert runs.drop("energy_j", "energy_gross_j", "mean_power_w").equals(expected.drop("energy_j", "energy_gross_j", "mean_power_w"))
    for column in ("energy_j", "energy_gross_j", "mean_power_w"):
        assert runs.get_column(column).to_list() == pytest.approx(expected.get_column(column).to_list(), rel=1e-12)

    assert con.execute("select count(*) from duckdb_tables() where temporary or schema_name = 'scratch'").fetchall()[0][0] == 0
    assert con.execute("select current_setting('memory_limit')").fetchall()[0][0] == limit
    con.close()
