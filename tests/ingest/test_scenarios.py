"""Scenario files: parsing, inheritance, factor references and their rejects."""

from __future__ import annotations

from pathlib import Path

import duckdb
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pipelines.errors import ManifestError, SourceParseError
from pipelines.ingest.scenarios import parse_ref, parse_scenario, resolve
from pipelines.ingest.staging import parse_entry
from tests.helpers import entry_for, examples

HEADER = "parameter,value,unit,low,high,distribution,status,factor_ref,reasoning\n"


@pytest.fixture
def con() -> duckdb.DuckDBPyConnection:
    con = duckdb.connect()
    con.execute("create schema staging")
    con.execute(
        "create table staging.device_specs as select * from (values "
        "('gpu-a', 700.0, 67.0, 'specs_file', 'curated/device_specs.csv', 2), "
        "('gpu-b', 350.0, 51.0, 'specs_file', 'curated/device_specs.csv', 3)) "
        "as t(device_id, tdp_w, fp32_tflops, source_id, source_file, source_row)"
    )
    return con


def _scenario(tmp_path: Path, name: str, body: str, **options: object):
    path = tmp_path / f"{name}.csv"
    path.write_text(HEADER + body, encoding="utf-8")
    entry = entry_for(path, kind="scenario", table="core.scenario_parameters", options={"scenario_id": name, **options}, source_id=f"scenario_{name}")
    return entry, parse_entry(entry, parse_scenario)


def test_unreadable_numbers_are_rejected_with_line(tmp_path: Path) -> None:
    _, parsed = _scenario(tmp_path, "s", "hours,8,h/day,,,point,paper,,ok\nbad,eight,h/day,,,point,paper,,x\n")
    assert parsed.frame.get_column("parameter").to_list() == ["hours"]
    assert [(r.source_row, r.column_name, r.check_name, r.value) for r in parsed.rejects] == [(3, "value", "parse", "eight")]


def test_inheritance_refs_and_rejects(tmp_path: Path, con: duckdb.DuckDBPyConnection) -> None:
    base = _scenario(
        tmp_path, "base",
        "hours,8,h/day,2,12,uniform,paper,,stated\n"
        "gpu_power_w,,W,,,point,primary,device_specs.device_id=gpu-a.tdp_w,vendor\n"
        "missing_w,,W,,,point,primary,device_specs.device_id=gpu-z.tdp_w,no such device\n"
        "wrong_col,,W,,,point,primary,device_specs.device_id=gpu-a.price,not referencable\n"
        "mismatch_w,650,W,,,point,primary,device_specs.device_id=gpu-a.tdp_w,disagrees\n"
        "empty,,W,,,point,assumed,,nothing\n",
        abstract=True,
    )
    child = _scenario(tmp_path, "child", "hours,4,h/day,,,point,assumed,,halved\n", extends="base")
    frame, rejects = resolve(con, {"base": (base[0], base[1].frame), "child": (child[0], child[1].frame)})
    rows = {(r["scenario_id"], r["parameter"]): r for r in frame.iter_rows(named=True)}
    assert set(rows) == {("child", "hours"), ("child", "gpu_power_w")}  # the abstract parent is not published
    assert rows[("child", "hours")]["value"] == 4 and rows[("child", "hours")]["defined_in"] == "child.csv:2"
    gpu = rows[("child", "gpu_power_w")]
    assert (gpu["value"], gpu["source_id"], gpu["source_file"], gpu["source_row"]) == (700.0, "specs_file", "curated/device_specs.csv", 2)
    got = sorted((e.id, r.source_row, r.column_name, r.check_name) for e, r in rejects)
    assert got == [
        ("scenario_base", 4, "factor_ref", "factor_ref_exists"),
        ("scenario_base", 5, "factor_ref", "factor_ref"),
        ("scenario_base", 6, "value", "matches_factor_ref"),
        ("scenario_base", 7, "value", "not_nullable"),
    ]
    reasons = {r.source_row: r.reason for _, r in rejects}
    assert "no single row with device_id = 'gpu-z'" in reasons[4]
    assert "'price' is not a referencable column" in reasons[5]
    assert "650.0 differs from 700.0" in reasons[6]


def test_inheritance_loop_is_a_clear_error(tmp_path: Path, con: duckdb.DuckDBPyConnection) -> None:
    a = _scenario(tmp_path, "a", "x,1,u,,,point,paper,,r\n", extends="b")
    b = _scenario(tmp_path, "b", "x,1,u,,,point,paper,,r\n", extends="a")
    with pytest.raises(ManifestError, match="loops"):
        resolve(con, {"a": (a[0], a[1].frame), "b": (b[0], b[1].frame)})


@pytest.mark.parametrize(
    "text",
    ["device_specs.device_id=x", "secrets.device_id=x.tdp_w", "device_specs.model=x.tdp_w", "device_specs.device_id=x.tdp_w; drop table t"],
)
def test_bad_refs_are_refused(text: str) -> None:
    with pytest.raises(ValueError):
        parse_ref(text)


@settings(max_examples=examples(80), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(body=st.one_of(st.binary(max_size=300), st.text(max_size=300).map(lambda t: (HEADER + t).encode("utf-8", "surrogatepass"))))
def test_scenario_parser_only_raises_its_own_error(tmp_path: Path, body: bytes) -> None:
    path = tmp_path / "s.csv"
    path.write_bytes(body)
    try:
        parsed = parse_scenario(path, {})
    except SourceParseError:
        return
    assert "parameter" in parsed.frame.columns


def test_range_ref_applies_a_measured_relative_ci(tmp_path: Path, con: duckdb.DuckDBPyConnection) -> None:
    con.execute(
        "create table staging.benchmark_series as select * from (values "
        "('phone', 10.5, 10.0, 11.0, 'logs', 'power/x.txt', cast(null as bigint)), "
        "('single', 9.0, null, null, 'logs', 'power/y.txt', null)) "
        "as t(series_id, mean_power_w_mean, mean_power_w_ci95_low, mean_power_w_ci95_high, source_id, source_file, source_row)"
    )
    header = HEADER.strip() + ",range_ref\n"
    path = tmp_path / "m.csv"
    path.write_text(header
                    + "p,10,W,,,normal,paper,,stated,benchmark_series.series_id=phone.mean_power_w_mean\n"
                    + "q,10,W,9,11,normal,paper,,both,benchmark_series.series_id=phone.mean_power_w_mean\n"
                    + "r,10,W,,,normal,paper,,no ci,benchmark_series.series_id=single.mean_power_w_mean\n"
                    + "s,10,W,,,normal,paper,,not a mean,device_specs.device_id=gpu-a.tdp_w\n", encoding="utf-8")
    entry = entry_for(path, kind="scenario", table="core.scenario_parameters", options={"scenario_id": "m"}, source_id="scenario_m")
    frame, rejects = resolve(con, {"m": (entry, parse_entry(entry, parse_scenario).frame)})
    row = frame.row(0, named=True)
    # the stated 10 W keeps its value and takes the measurement's relative CI: 10 x 10/10.5 .. 10 x 11/10.5
    assert (row["parameter"], row["value"]) == ("p", 10.0)
    assert row["low"] == pytest.approx(10 * 10.0 / 10.5) and row["high"] == pytest.approx(10 * 11.0 / 10.5)
    assert row["range_ref"] == "benchmark_series.series_id=phone.mean_power_w_mean"
    got = sorted((r.source_row, r.check_name) for _, r in rejects)
    assert got == [(3, "range_ref_alone"), (4, "range_ref_exists"), (5, "range_ref_exists")]
    reasons = {r.source_row: r.reason for _, r in rejects}
    assert "'tdp_w' has no confidence interval" in reasons[5]


def test_rejects_of_two_files_that_share_a_line_number_keep_their_own_file(tmp_path: Path, con: duckdb.DuckDBPyConnection) -> None:
    """The model check runs over the rows of every scenario file together; the build stops on the
    first rejected row (a scenario row is never quarantined into its parent's value), naming the
    file and line of its own row, matched by (file, row), not by the line alone, and counting the rest."""
    from pipelines.errors import UnresolvedRow
    from pipelines.ingest.scenarios import stage_scenarios

    first = _scenario(tmp_path, "first", "hours,8,h/day,,,point,paper,,ok\nidle_share,0.5,1,,,point,guessed,,bad on line 3\n")
    second = _scenario(tmp_path, "second", "hours,6,h/day,,,point,paper,,ok\nidle_share,0.4,1,,,point,hoped,,bad on line 3 too\n")
    with pytest.raises(UnresolvedRow) as raised:
        stage_scenarios(con, [second[0], first[0]], run_id="run-1")
    message = str(raised.value)
    assert message.startswith("sources/first.csv, line 3: scenario first, parameter idle_share, column status: "), message
    assert message.endswith("fix the row, or remove the row (1 more rejected row(s) after it)"), message


def test_a_factor_ref_may_name_a_measured_training_rate() -> None:
    """A scenario parameter may read a staging.training_throughput row (the measured_rates basis's GPU rate)."""
    from pipelines.ingest.scenarios import parse_ref

    ref = parse_ref("training_throughput.throughput_id=llmfoundry_h100_1b_bf16_s2048_g8.achieved_tflops")
    assert (ref.table, ref.key_column, ref.key, ref.column) == (
        "staging.training_throughput", "throughput_id", "llmfoundry_h100_1b_bf16_s2048_g8", "achieved_tflops")
    with pytest.raises(ValueError, match="not a referencable column"):
        parse_ref("training_throughput.throughput_id=x.citation")
