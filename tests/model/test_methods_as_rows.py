"""Methods are rows: the vocabulary (schemas/vocabulary.py) as reference tables, scenarios naming them.

A scenario file names its accounting frame, communication pattern, embodied policy, workload
kind and headline basis (``accounting_frame,consequential``); core.scenario_parameters carries
the name in ``value_text`` and core.scenarios as a text column; the model joins the frame's row
of core.frames (pipelines/model/methods.py) and reads its rules as columns. A fourth frame added
by one vocabulary row is built in tests/architecture/test_one_composition.py (slow).
"""

from __future__ import annotations

import shutil
from pathlib import Path

import duckdb
import polars as pl
import pytest

from pipelines.cli import main
from pipelines.ingest.scenarios import parse_scenario, resolve
from pipelines.ingest.staging import parse_entry
from pipelines.model.formula import evaluate, scenario_inputs, substitute
from pipelines.model.methods import frame_method_rows, frame_rows, reference_tables
from pipelines.paths import SOURCES_DIR, SOURCES_ENV
from pipelines.warehouse.database import open_readonly
from pipelines.warehouse.dictionary import TABLES
from schemas.parameter_bounds import NAMED, Bounds
from schemas.vocabulary import (
    ACCOUNTING_FRAMES,
    BASES,
    CLOUD_EMBODIED_RULES,
    FRAMES,
    POLICIES,
    VERDICTS,
    WORKLOADS,
)
from tests.helpers import entry_for

HEADER = "parameter,value,unit,low,high,distribution,status,factor_ref,reasoning\n"


def test_every_reference_table_is_its_models_and_the_vocabularys() -> None:
    tables = reference_tables()
    for table, rows in tables.items():
        TABLES[table].validate(pl.from_arrow(rows))
    frames = pl.from_arrow(frame_rows())
    assert frames.get_column("accounting_frame").to_list() == list(ACCOUNTING_FRAMES)
    assert dict(frames.select("accounting_frame", "amortises_cloud_embodied").rows()) == {
        "as_published": False, "attributional": True, "consequential": False}
    assert dict(frames.select("accounting_frame", "edge_embodied_policy").rows()) == {
        "as_published": None, "attributional": "per_use_hour", "consequential": "battery_wear"}
    assert frames.get_column("cloud_embodied_rule").to_list() == [CLOUD_EMBODIED_RULES[f.amortises_cloud_embodied] for f in FRAMES.values()]
    # the bridge: each frame's methods, its headline first, the same as core.frames' headline method
    bridge = pl.from_arrow(frame_method_rows())
    headline = dict(bridge.filter("is_frame_headline").select("accounting_frame", "network_method").rows())
    assert headline == dict(frames.select("accounting_frame", "headline_network_method").rows())
    assert pl.from_arrow(tables["core.workload_kinds"]).get_column("workload_kind").to_list() == list(WORKLOADS)
    assert pl.from_arrow(tables["core.embodied_policies"]).get_column("policy").to_list() == list(POLICIES)
    assert pl.from_arrow(tables["core.bases"]).get_column("basis").to_list() == list(BASES)
    assert pl.from_arrow(tables["core.verdicts"]).sort("precedence").get_column("verdict").to_list() == list(VERDICTS)


def test_a_named_parameter_admits_its_tables_names_only() -> None:
    frames = NAMED["accounting_frame"]
    assert frames.admits("consequential") and not frames.admits("Consequential") and not frames.admits(2.0)
    assert not Bounds(0, 1).admits("consequential")
    assert frames.describe() == "one of the names in core.frames: as_published, attributional, consequential"


def test_a_scenario_file_names_its_methods(tmp_path: Path) -> None:
    """A named parameter's text goes to value_text (value null); every other value must read as a number."""
    path = tmp_path / "named.csv"
    path.write_text(HEADER + "accounting_frame, consequential ,name,,,point,assumed,,x\n"
                             "edge_hours_per_day,6,h/day,,,point,assumed,,x\n"
                             "cloud_pue,high,fraction,,,point,assumed,,x\n", encoding="utf-8")
    entry = entry_for(path, kind="scenario", table="core.scenario_parameters", options={"scenario_id": "named"})
    parsed = parse_entry(entry, parse_scenario)
    assert parsed.frame.select("parameter", "value", "value_text").rows() == [("accounting_frame", None, "consequential"),
                                                                            ("edge_hours_per_day", 6.0, None)]
    assert [(r.source_row, r.column_name, r.reason) for r in parsed.rejects] == [(4, "value", "value: cannot read 'high' as a finite number")]
    frame, rejects = resolve(duckdb.connect(), {"named": (entry, parsed.frame)})
    assert rejects == [] and frame.filter(parameter="accounting_frame").select("value", "value_text").row(0) == (None, "consequential")


def test_the_warehouse_carries_the_names(built_warehouse: Path) -> None:
    with open_readonly(built_warehouse) as con:
        named = con.execute("select parameter, count(*), bool_and(value is null), min(unit), max(unit) from core.scenario_parameters "
                            "where value_text is not null group by parameter order by parameter").fetchall()
        types = dict(con.execute("select column_name, data_type from duckdb_columns() where schema_name = 'core' "
                                 "and table_name = 'scenarios'").fetchall())
        frames = dict(con.execute("select scenario_id, accounting_frame from core.scenarios").fetchall())
        tables = {t: con.execute(f"select count(*) from {t}").fetchone()[0] for t in reference_tables()}  # noqa: S608 - known names
    assert [r[0] for r in named] == sorted(NAMED) and all(r[2] and r[3] == r[4] == "name" for r in named)
    assert {p: types[p] for p in NAMED} == dict.fromkeys(NAMED, "VARCHAR") and types["horizon_years"] == "DOUBLE"
    assert frames["paper_text"] == "as_published" and frames["realistic_consequential"] == "consequential"
    assert tables == {t: rows.num_rows for t, rows in reference_tables().items()}


def test_the_model_reads_the_frames_rules_from_its_row(built_warehouse: Path) -> None:
    """The same scenario under another frame's name: the cloud node's embodied carbon follows that frame's row
    (amortised over the node's life in the attributional frame, in full in the consequential one)."""
    with open_readonly(built_warehouse) as con:
        base = scenario_inputs(con).filter(pl.col("scenario_id") == "realistic_attributional")
        overrides = pl.DataFrame({"scenario_id": ["realistic_attributional"] * 2, "variant_id": ["attributional", "consequential"],
                                  "parameter": ["accounting_frame"] * 2, "value": ["attributional", "consequential"]})
        rows = evaluate(con, substitute(con, overrides), patterns=("none",), methods="network")
    embodied = dict(rows.select("variant_id", "cloud_embodied_per_gpu_kgco2e").unique().rows())
    life, years, per_gpu = (base.item(0, c) for c in ("cloud_embodied_life_years", "horizon_years", "cloud_gpu_embodied_kgco2e"))
    assert embodied == pytest.approx({"attributional": per_gpu * min(years / life, 1), "consequential": per_gpu}, rel=1e-12)
    assert embodied["attributional"] < embodied["consequential"]
    methods = rows.group_by("variant_id").agg(pl.col("network_method").unique().sort())
    assert dict(methods.rows()) == {"attributional": ["time", "volume"], "consequential": ["marginal"]}


def test_a_policy_and_a_workload_are_weights_of_their_rows() -> None:
    """A policy's charge is its row's weights of the three embodied terms, each a macro computed once, so a policy that
    mixes them (half battery wear, half use hours) is the mean of the two shipped ones; the shipped rows pick one term
    each. Per calendar hour (ACT) charges the share of the day training holds the device: 8 h / 24."""
    from pipelines.model.methods import policy_rows, workload_rows
    from pipelines.warehouse.tables import install_macros

    con = duckdb.connect()
    install_macros(con)
    # nonuse 100 kg, horizon embodied 40 kg, battery share 0.05, 400 extra cycles of 1,000 (within the rated cycles: no
    # replacement battery, whatever its 1.8 kg), 8 h training vs 4 h own use
    args = "100.0, 40.0, 0.05, 400.0, 1000.0, 8, 4, 200.0, 0.0, 3.0, 4.0, 1.8"
    terms = con.execute("select embodied_battery_wear_kgco2e(100.0, 0.05, 400.0, 1000.0, 200.0, 0.0, 3.0, 4.0, 1.8), "
                        "embodied_use_hours_kgco2e(40.0, 8, 4), embodied_calendar_kgco2e(40.0, 8)").fetchone()
    columns = ("battery_wear", "use_hours", "calendar_hours")
    weights = {row["policy"]: tuple(row[c] for c in columns) for row in pl.from_arrow(policy_rows()).iter_rows(named=True)}
    assert weights == {"none": (0.0, 0.0, 0.0), "battery_wear": (1.0, 0.0, 0.0), "per_use_hour": (0.0, 1.0, 0.0),
                       "calendar_time": (0.0, 0.0, 1.0)}
    charged = {name: sum(w * t for w, t in zip(ws, terms, strict=True)) for name, ws in {**weights, "mixed": (0.5, 0.5, 0.0)}.items()}
    assert charged["none"] == 0.0
    assert charged["battery_wear"] == pytest.approx(100.0 * 0.05 * 400.0 / 1000.0, rel=1e-12)
    assert charged["per_use_hour"] == pytest.approx(40.0 * 8 / (8 + 4), rel=1e-12)
    assert charged["calendar_time"] == pytest.approx(40.0 * 8 / 24, rel=1e-12)
    assert charged["mixed"] == pytest.approx((charged["battery_wear"] + charged["per_use_hour"]) / 2, rel=1e-12)
    # the two-weight macro the marts share agrees with the terms
    for name in ("none", "battery_wear", "per_use_hour"):
        w, u, _ = weights[name]
        assert con.execute(f"select embodied_allocated_kgco2e($w, $u, {args})", {"w": w, "u": u}).fetchone()[0] == pytest.approx(
            charged[name], rel=1e-12)
    kinds = pl.from_arrow(workload_rows())
    # every kind weighs exactly one of the three job lengths
    assert kinds.select(pl.sum_horizontal("horizon", "gpu_hours", "tokens")).to_series().to_list() == [1.0] * len(WORKLOADS)


def test_a_basis_is_weights_of_the_capacity_measures() -> None:
    """core.bases: each shipped basis compares one capacity measure; the stated count and the measured rate
    belong to one basis each (the paper's peak FLOPS, the measured throughput)."""
    from pipelines.model.methods import BASIS_MEASURES, basis_rows
    from schemas.vocabulary import MEASURED_BASIS, STATED_BASIS

    bases = pl.from_arrow(basis_rows())
    assert bases.select(pl.sum_horizontal(*BASIS_MEASURES)).to_series().to_list() == [1.0] * len(BASES)
    assert bases.filter("takes_stated_count").get_column("basis").to_list() == [STATED_BASIS] == ["peak_flops"]
    assert bases.filter("measured").get_column("basis").to_list() == [MEASURED_BASIS] == ["measured_throughput"]
    assert bases.filter("device_peak_floor").get_column("basis").to_list() == ["measured_throughput"]
    measure = {r["basis"]: next(m for m in BASIS_MEASURES if r[m]) for r in bases.iter_rows(named=True)}
    assert measure == {"peak_flops": "fp32_peak", "peak_fp16": "fp16_peak", "memory_bandwidth": "bandwidth", "roofline": "roofline",
                       "availability": "fp32_peak", "binding": "roofline", "measured_throughput": "job_rate",
                       "measured_rates": "measured_rate"}


def test_a_network_method_is_weights_of_the_four_network_terms() -> None:
    """network_kwh weighs its four terms by the method's row of core.network_methods: the shipped methods pick
    one term each, and a method that mixes two (half volume, half marginal) is their mean."""
    from pipelines.model.methods import network_method_rows
    from pipelines.warehouse.tables import install_macros

    con = duckdb.connect()
    install_macros(con)
    rows = {r["network_method"]: r for r in pl.from_arrow(network_method_rows()).iter_rows(named=True)}
    weights = ("per_gb_one_end", "per_gb_by_ends", "marginal_by_ends", "line_time")
    assert {name: [r[w] for w in weights] for name, r in rows.items()} == {
        "radio": [1.0, 0, 0, 0], "volume": [0, 1.0, 0, 0], "time": [0, 0, 0, 1.0], "marginal": [0, 0, 1.0, 0],
        "per_bit": [0, 0, 0, 0]}  # per_bit's term is the claims' marts' own (test below)
    rows.pop("per_bit")
    # 10 GB between two homes; Carbon Trust kWh/GB of the network and the router, Malmodin's marginal W per Mbit/s
    # and an 18 W line half held for 100 h
    args = "10.0, 2, 0, 0.0065, 0.025, 0.03, 0.02, 18.0, 0.5, 100.0"
    kwh = {name: con.execute(f"select network_kwh({', '.join(['?'] * 4)}, {args})", [r[w] for w in weights]).fetchone()[0]
           for name, r in {**rows, "mixed": {"per_gb_one_end": 0, "per_gb_by_ends": 0.5, "marginal_by_ends": 0.5, "line_time": 0}}.items()}
    assert kwh["radio"] == pytest.approx(10 * (0.0065 + 0.025), rel=1e-12)
    assert kwh["volume"] == pytest.approx(10 * 2 * (0.0065 + 0.025), rel=1e-12)
    assert kwh["marginal"] == pytest.approx(10 * (0.03 + 2 * 0.02) * 8000 / 3.6e6, rel=1e-12)
    assert kwh["time"] == pytest.approx(18.0 * 0.5 * 100.0 / 1000, rel=1e-12)
    assert kwh["mixed"] == pytest.approx((kwh["volume"] + kwh["marginal"]) / 2, rel=1e-12)


def test_scenario_new_writes_a_name(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """``scenario new --set`` writes a name as the scenario file's value, and refuses one its table lacks."""
    sources = tmp_path / "sources"
    shutil.copytree(SOURCES_DIR, sources)
    monkeypatch.setenv(SOURCES_ENV, str(sources))
    monkeypatch.chdir(tmp_path)
    assert main(["scenario", "new", "mine", "--extends", "realistic_attributional", "--set", "accounting_frame=consequential",
                 "--set", "edge_embodied_policy=battery_wear", "--set", "edge_hours_per_day=6"]) == 0
    capsys.readouterr()
    written = (sources / "scenarios" / "mine.csv").read_text(encoding="utf-8").splitlines()
    assert [line.split(",")[:3] for line in written[1:]] == [["accounting_frame", "consequential", "name"],
                                                            ["edge_embodied_policy", "battery_wear", "name"],
                                                            ["edge_hours_per_day", "6", "h/day"]]
    assert main(["scenario", "new", "bad", "--extends", "mine", "--set", "workload_kind=tokens"]) == 2
    out, err = capsys.readouterr()
    assert err == ("scenario new: --set workload_kind=tokens: workload_kind = 'tokens' is outside its bounds: workload_kind must be "
                   "one of the names in core.workload_kinds: horizon, gpu_hours, params_tokens; nothing was written\n")


def test_no_frame_admits_a_method_whose_term_the_model_does_not_charge() -> None:
    """The per-bit method weighs a term only the claims' marts charge (sql/marts/claims.sql): a frame admitting it
    would get no network energy from the model, so none does."""
    from schemas.vocabulary import FRAME_NETWORK_METHODS, NETWORK_METHOD_ROWS

    claims_only = {name for name, row in NETWORK_METHOD_ROWS.items() if row.per_bit > 0}
    assert claims_only == {"per_bit"}
    assert all(not claims_only & set(methods) for methods in FRAME_NETWORK_METHODS.values())
