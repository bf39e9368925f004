"""Scenario values are checked against each parameter's bounds before the model runs.

The bounds are data (schemas/parameter_bounds.py): a device class's rows take those of the
core.scenario_devices column they fill (its pandera model), a method a scenario names one of the
names of its reference table (core.frames, ...: the vocabulary's), a switch one of its codes. A build
with a value out of bounds stops at the blocking check on core.scenario_parameters with one
line per bad value (file, line, parameter, allowed range); ``scenario new`` refuses one in a
line and writes nothing.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import duckdb
import polars as pl
import pytest

from pipelines.cli import main
from pipelines.ingest.scenarios import out_of_bounds, parse_scenario, resolve
from pipelines.ingest.staging import parse_entry
from pipelines.paths import SOURCES_DIR, SOURCES_ENV
from pipelines.run.launch import _failures
from schemas.parameter_bounds import PARAMETER_BOUNDS, Bounds, bounds_for, refusal
from tests.helpers import entry_for

HEADER = "parameter,value,unit,low,high,distribution,status,factor_ref,reasoning\n"


@pytest.mark.parametrize(("bounds", "inside", "outside", "words"), [
    (Bounds(0, low_open=True), [1e-9, 5, 1e9], [0, -5, float("nan"), float("inf")], "> 0"),
    (Bounds(0), [0, 3], [-0.1], ">= 0"),
    (Bounds(0, 1), [0, 0.5, 1], [-0.01, 1.01], "in [0, 1]"),
    (Bounds(0, 24, low_open=True), [0.5, 24], [0, 24.5], "in (0, 24]"),
    (Bounds(1), [1, 64], [0.99, 0], ">= 1"),
    (Bounds(codes={1: "a", 2: "b"}), [1, 2.0], [0, 1.5, 3], "one of 1 (a), 2 (b)"),
])
def test_bounds_admit_and_say_their_range(bounds: Bounds, inside: list[float], outside: list[float], words: str) -> None:
    assert [bounds.admits(v) for v in inside] == [True] * len(inside)
    assert [bounds.admits(v) for v in outside] == [False] * len(outside)
    assert bounds.describe() == words


@pytest.mark.parametrize(("parameter", "words"), [
    # a device class's rows: the bounds ScenarioDevices puts on the column they fill, for any class
    ("laptop_train_power_w", "> 0"),
    ("tablet_train_power_w", "> 0"),
    ("phone_nonuse_share", "in [0, 1]"),
    ("laptop_fp16_tflops", ">= 0"),
    ("tablet_hours_per_day", "in (0, 24]"),
    ("phone_fleet_share", "in [0, 1]"),
    ("phone_lifetime_years", "> 0"),
    # names: the vocabulary's, as its reference tables hold them
    ("comm_pattern", "one of the names in core.patterns: radio_window, idealized, parameter_server, ring_allreduce, pipeline, federated_round, diloco_allreduce, diloco_server, diloco_ring, diloco_pipeline"),
    ("accounting_frame", "one of the names in core.frames: as_published, attributional, consequential"),
    ("headline_basis", "one of the names in core.bases: binding, measured_throughput, measured_rates"),
    ("workload_kind", "one of the names in core.workload_kinds: horizon, gpu_hours, params_tokens"),
    ("edge_embodied_policy", "one of the names in core.embodied_policies: none, battery_wear, per_use_hour, calendar_time"),
    # a claim: a row of the registry (data), which the build's check reads
    ("claim_id", "the id of a row of staging.claims"),
    # switches: codes
    ("grid_shared", "one of 0 (independent draws), 1 (one draw for both sides)"),
    # the table's own rows, before any class ending they share
    ("edge_hours_per_day", "in (0, 24]"),
    ("cloud_gpu_count", ">= 1"),
    ("cloud_gpu_tflops", "> 0"),
    ("cloud_pue", ">= 1"),
    ("edge_grid_gco2e_per_kwh", "in [0, 2000]"),
])
def test_each_parameter_has_its_bounds_once(parameter: str, words: str) -> None:
    bounds = bounds_for(parameter)
    assert bounds is not None and bounds.describe() == words


def test_a_parameter_nobody_declared_has_no_bounds() -> None:
    assert bounds_for("train_power_w") is None and bounds_for("no_such_parameter") is None
    assert refusal("no_such_parameter", -5) is None


def test_every_shipped_value_is_within_its_bounds(built_warehouse: Path) -> None:
    """Every parameter the shipped scenarios set has bounds, and every value and range end lies inside them."""
    with duckdb.connect(str(built_warehouse), read_only=True) as con:
        frame = con.sql("select * from core.scenario_parameters").pl()
    unbounded = sorted({p for p in frame.get_column("parameter").to_list() if bounds_for(p) is None})
    assert unbounded == []
    assert out_of_bounds(frame) == []
    assert len(set(frame.get_column("parameter"))) > 90  # the check saw every parameter


def test_the_examples_scenario_is_within_its_bounds(tmp_path: Path) -> None:
    example = tmp_path / "mixed_fleet.csv"
    shutil.copyfile(SOURCES_DIR.parent / "docs" / "examples" / "mixed_fleet.csv", example)
    entry = entry_for(example, kind="scenario", table="core.scenario_parameters", options={"scenario_id": "mixed_fleet"})
    parsed = parse_entry(entry, parse_scenario).frame
    assert [p for p in parsed.get_column("parameter").to_list() if bounds_for(p) is None] == []
    values = parsed.filter(pl.col("value").is_not_null())
    names = parsed.filter(pl.col("value_text").is_not_null())
    assert values.height > 0 and set(names.get_column("parameter")) == {"workload_kind", "headline_basis"}
    assert [p for p, v, u in values.select("parameter", "value", "unit").iter_rows() if refusal(p, v, u)] == []
    assert [p for p, v, u in names.select("parameter", "value_text", "unit").iter_rows() if refusal(p, v, u)] == []


def _resolved(tmp_path: Path, files: dict[str, tuple[str, dict[str, str]]]) -> pl.DataFrame:
    parsed = {}
    for name, (body, options) in files.items():
        path = tmp_path / f"{name}.csv"
        path.write_text(HEADER + body, encoding="utf-8")
        entry = entry_for(path, kind="scenario", table="core.scenario_parameters",
                          options={"scenario_id": name, **options}, source_id=f"scenario_{name}")
        parsed[name] = (entry, parse_entry(entry, parse_scenario).frame)
    frame, rejects = resolve(duckdb.connect(), parsed)
    assert rejects == []
    return frame


def test_out_of_bounds_names_file_line_parameter_and_range(tmp_path: Path) -> None:
    frame = _resolved(tmp_path, {
        "base": ("laptop_train_power_w,-5,W,,,point,assumed,,x\n"
                 "edge_hours_per_day,8,h/day,2,30,uniform,assumed,,x\n"
                 "comm_pattern,ring,name,,,point,assumed,,x\n"
                 "cloud_utilisation,0.5,fraction,,,point,assumed,,x\n", {}),
        "child": ("cloud_utilisation,1.5,fraction,,,point,assumed,,x\n", {"extends": "base"}),
    })
    assert out_of_bounds(frame) == [
        "sources/base.csv, line 2: laptop_train_power_w = -5 W is outside its bounds: laptop_train_power_w must be > 0 "
        "(scenarios base, child)",
        "sources/base.csv, line 3: edge_hours_per_day (high end of its range) = 30 h/day is outside its bounds: "
        "edge_hours_per_day must be in (0, 24] (scenarios base, child)",
        "sources/base.csv, line 4: comm_pattern = 'ring' is outside its bounds: comm_pattern must be one of the names in "
        "core.patterns: radio_window, idealized, parameter_server, ring_allreduce, pipeline, federated_round, diloco_allreduce, diloco_server, diloco_ring, diloco_pipeline (scenarios base, child)",
        "sources/child.csv, line 2: cloud_utilisation = 1.5 fraction is outside its bounds: cloud_utilisation must be in (0, 1] "
        "(scenario child)",
    ]


@pytest.fixture
def sources(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A private copy of the shipped sources."""
    copy = tmp_path / "sources"
    shutil.copytree(SOURCES_DIR, copy)
    monkeypatch.setenv(SOURCES_ENV, str(copy))
    monkeypatch.chdir(tmp_path)
    return copy


def _files(sources: Path) -> dict[str, bytes]:
    return {p.relative_to(sources).as_posix(): p.read_bytes() for p in sorted((sources / "manifest").iterdir())
            + sorted((sources / "scenarios").iterdir())}


def test_the_docs_quote_the_refusal() -> None:
    docs = " ".join((SOURCES_DIR.parent / "docs" / "data.md").read_text(encoding="utf-8").split())
    assert "`--set laptop_train_power_w=-5` gives `laptop_train_power_w = -5 W is outside its bounds: laptop_train_power_w must be > 0`" in docs


@pytest.mark.parametrize(("flags", "line"), [
    (["--set", "laptop_train_power_w=-5"],
     "scenario new: --set laptop_train_power_w=-5: laptop_train_power_w = -5 W is outside its bounds: "
     "laptop_train_power_w must be > 0; nothing was written"),
    (["--set", "laptop_train_power_w=12", "--range", "laptop_train_power_w=-1:20"],
     "scenario new: --range laptop_train_power_w: laptop_train_power_w (low end of its range) = -1 W is outside its bounds: "
     "laptop_train_power_w must be > 0; nothing was written"),
    (["--set", "edge_hours_per_day=6", "--range", "edge_hours_per_day=4:30"],
     "scenario new: --range edge_hours_per_day: edge_hours_per_day (high end of its range) = 30 h/day is outside its bounds: "
     "edge_hours_per_day must be in (0, 24]; nothing was written"),
    (["--set", "phone_nonuse_share=1.2"],
     "scenario new: --set phone_nonuse_share=1.2: phone_nonuse_share = 1.2 fraction is outside its bounds: "
     "phone_nonuse_share must be in [0, 1]; nothing was written"),
    (["--set", "comm_pattern=none"],
     "scenario new: --set comm_pattern=none: comm_pattern = 'none' is outside its bounds: comm_pattern must be one of the names in "
     "core.patterns: radio_window, idealized, parameter_server, ring_allreduce, pipeline, federated_round, diloco_allreduce, diloco_server, diloco_ring, diloco_pipeline; nothing was written"),
    (["--set", "accounting_frame=2"],
     "scenario new: --set accounting_frame=2: accounting_frame = '2' is outside its bounds: accounting_frame must be one of the "
     "names in core.frames: as_published, attributional, consequential; nothing was written"),
])
def test_scenario_new_refuses_out_of_bounds_in_one_line(flags: list[str], line: str, sources: Path,
                                                         capsys: pytest.CaptureFixture[str]) -> None:
    before = _files(sources)
    code = main(["scenario", "new", "bad", "--extends", "paper_text", *flags])
    out, err = capsys.readouterr()
    assert (code, out, err) == (2, "", line + "\n")
    assert _files(sources) == before


def test_a_value_out_of_bounds_stops_the_build_before_the_model(sources: Path, tmp_path: Path) -> None:
    """A hand-written scenario with a negative power: ``register`` refuses it; written over a
    registered file (and its digest refreshed), the build stops at the blocking check on
    core.scenario_parameters, and what the CLI prints names the file, line, parameter and bounds."""
    from tests.conftest import build

    bad = HEADER + "edge_hours_per_day,6,h/day,,,point,assumed,,x\nlaptop_train_power_w,-5,W,,,point,assumed,,x\n"
    register = ["register", "sources/scenarios/bad.csv", "--id", "scenario_bad", "--kind", "scenario", "--title", "bad",
                "--option", "scenario_id=bad", "--option", "extends=paper_text"]
    (sources / "scenarios" / "bad.csv").write_text(bad, encoding="utf-8")
    assert main(register) == 2
    (sources / "scenarios" / "bad.csv").write_text(bad.replace("-5,W", "5,W"), encoding="utf-8")
    assert main(register) == 0
    (sources / "scenarios" / "bad.csv").write_text(bad, encoding="utf-8")
    assert main(["register", "--refresh", "scenario_bad"]) == 0
    result = build(tmp_path / "wh" / "edge_carbon.duckdb", only=["core/scenarios"])
    assert not result.success
    built = {e.asset_key.to_user_string() for e in result.get_asset_materialization_events()}
    assert "core/scenario_parameters" in built and "core/scenarios" not in built
    assert _failures(result.all_events) == [
        "core/scenario_parameters: parameters_in_bounds\n"
        "  sources/scenarios/bad.csv, line 3: laptop_train_power_w = -5 W is outside its bounds: laptop_train_power_w must be > 0 "
        "(scenario bad)"
    ]
    assert not (tmp_path / "wh" / "edge_carbon.duckdb").exists()  # nothing published


def test_a_scenario_naming_an_unknown_claim_stops_the_build_naming_it(sources: Path, tmp_path: Path) -> None:
    """A claim id is any id to ``register`` (the registry is data); the build stops at the blocking check on
    core.scenario_parameters, naming the file, line, claim and scenario."""
    from tests.conftest import build

    (sources / "scenarios" / "bad.csv").write_text(HEADER + "claim_id,no_such_claim,name,,,point,assumed,,x\n", encoding="utf-8")
    assert main(["register", "sources/scenarios/bad.csv", "--id", "scenario_bad", "--kind", "scenario", "--title", "bad",
                 "--option", "scenario_id=bad", "--option", "extends=paper_text"]) == 0
    result = build(tmp_path / "wh" / "edge_carbon.duckdb", only=["core/scenarios"])
    assert not result.success
    assert _failures(result.all_events) == [
        "core/scenario_parameters: claims_known\n"
        "  sources/scenarios/bad.csv, line 2: claim_id = 'no_such_claim' is no claim of staging.claims "
        "(sources/curated/claims.csv; edge-carbon claim new adds one) (scenario bad)"
    ]


def test_scenario_parameter_table_names_only_known_parameters() -> None:
    """No entry of the table is a device class's field, which would shadow the contract's bounds."""
    from schemas.vocabulary import DEVICE_FIELDS

    assert [p for p in PARAMETER_BOUNDS if any(p == f"{c}_{f}" for c in ("laptop", "phone") for f in DEVICE_FIELDS)] == []
