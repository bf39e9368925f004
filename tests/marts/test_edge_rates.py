"""The edge's measured rates name their jobs: each answer row names the training run its edge rate is read
from (marts.verdict.edge_rate_id), as gpu_rate_id names the GPU's; a class whose rate is bridged, not
measured (the phone's, through the paper's Table 1 times), names none.

Inputs are typed in from sources/curated/training_throughput.csv and sources/scenarios/realistic_base.csv;
every expected value is worked out here by hand.
"""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest

from pipelines.defs.assets.verdict import EDGE_RATE_SUFFIX, GPU_RATE_PARAMETER
from pipelines.warehouse.database import open_readonly
from pipelines.warehouse.queries import query_pl
from schemas.vocabulary import BASIS_RULES, COMPUTE_ONLY, MEASURED_RATES_BASIS
from tests.marts.test_verdict_all_draws import COMM, FIRST, SECOND, _mc, _row, _verdict

#: mlx_lora_m1_max_mistral_7b: Mistral-7B LoRA at 250 tokens/s on an M1 Max (2.25 FLOPs per parameter per token counted)
LAPTOP_ROW = "mlx_lora_m1_max_mistral_7b"
REALISTIC = ("realistic_attributional", "realistic_consequential")


def _query(path: Path, sql: str, params: dict | None = None) -> pl.DataFrame:
    with open_readonly(path) as con:
        return query_pl(con, sql, params or {})


def _parameters(path: Path, scenario: str) -> dict[str, float]:
    frame = _query(path, "select parameter, value from core.scenario_parameters where scenario_id = $s and value is not null",
                   {"s": scenario})
    return dict(frame.rows())


def test_same_job_power_given_rows() -> None:
    """Worked by hand on given rows. The verdict names the rate row of each class from the factor_ref of its
    ``<class>_measured_tflops`` row, on the basis that weighs measured rates only; a class without one (the phone here)
    names none, and the GPU's own ``cloud_gpu_measured_tflops`` is not an edge class's."""
    rated = MEASURED_RATES_BASIS
    assert BASIS_RULES[rated].measured_rate > 0
    other = next(b for b, rule in BASIS_RULES.items() if rule.measured_rate == 0 and rule.job_rate > 0)
    evaluated = [{**_row(m, p, r), "basis": basis, "is_headline": basis == rated, "device_class": device_class}
                 for basis in (rated, other) for device_class in ("laptop", "phone")
                 for m in (FIRST, SECOND) for p, r in ((COMPUTE_ONLY, 3.0), (COMM, 2.8))]
    mc = [{**_mc(m, p, (2.0, 2.9, 4.5), (2.0, 2.9, 4.5), 1.0, 0.9, 0.1), "basis": basis, "device_class": device_class}
          for basis in (rated, other) for device_class in ("laptop", "phone") for m in (FIRST, SECOND) for p in (COMPUTE_ONLY, COMM)]
    parameters = [
        {"scenario_id": "s", "parameter": "laptop" + EDGE_RATE_SUFFIX,
         "factor_ref": f"training_throughput.throughput_id={LAPTOP_ROW}.achieved_tflops"},
        {"scenario_id": "s", "parameter": GPU_RATE_PARAMETER,
         "factor_ref": "training_throughput.throughput_id=llmfoundry_h100_1b_bf16_s2048_g8.achieved_tflops"},
        {"scenario_id": "s", "parameter": "laptop_tflops", "factor_ref": "device_specs.device_id=apple-m2-pro-19c.fp32_tflops"},
        {"scenario_id": "s", "parameter": "laptop_measured_share", "factor_ref": None},
    ]
    frame = _verdict(evaluated, mc, parameters=parameters)
    ids = {(b, c): set(frame.filter((pl.col("basis") == b) & (pl.col("device_class") == c)).get_column("edge_rate_id"))
           for b in (rated, other) for c in ("laptop", "phone")}
    assert ids == {(rated, "laptop"): {LAPTOP_ROW}, (rated, "phone"): {None}, (other, "laptop"): {None}, (other, "phone"): {None}}
    assert set(frame.get_column("gpu_rate_id").drop_nulls()) == {"llmfoundry_h100_1b_bf16_s2048_g8"}
    # the row the laptop's answer names, as given: its rate is 2.25 x 7e9 x 250 / 1e12 = 3.9375 TFLOPS, and it gives
    # no power of its run
    given = pl.DataFrame({"throughput_id": [LAPTOP_ROW], "tokens_per_s": [250.0], "model_params": [7e9],
                          "flops_per_param_token": [2.25], "power_w": [None]}, schema_overrides={"power_w": pl.Float64})
    named = frame.filter(pl.col("is_answer") & (pl.col("device_class") == "laptop")).join(
        given, left_on="edge_rate_id", right_on="throughput_id")
    assert named.height == 1
    row = named.row(0, named=True)
    assert row["flops_per_param_token"] * row["model_params"] * row["tokens_per_s"] / 1e12 == pytest.approx(3.9375, rel=1e-12)
    assert row["power_w"] is None


def test_every_answer_names_its_edge_rate_row(built_warehouse: Path) -> None:
    """marts.verdict.edge_rate_id: the laptop's answers read the MLX LoRA run on an M1 Max; the phone's, whose rate is
    bridged through the paper's Table 1 times, name none; documented on the published column."""
    answers = _query(built_warehouse, "select scenario_id, device_class, basis, edge_rate_id from marts.verdict where is_answer")
    assert set(answers.get_column("scenario_id")) == set(REALISTIC)
    assert (answers.get_column("basis") == MEASURED_RATES_BASIS).all()
    assert set(answers.select("device_class", "edge_rate_id").unique().rows()) == {("laptop", LAPTOP_ROW), ("phone", None)}
    comment = _query(built_warehouse, "select comment from duckdb_columns() where schema_name = 'marts' and table_name = 'verdict' "
                                      "and column_name = 'edge_rate_id'").item()
    assert "measured_tflops" in comment and "throughput_id" in comment
    # bases that weigh no measured rate name none
    assert _query(built_warehouse, "select count(*) from marts.verdict where basis <> $b and edge_rate_id is not null",
                  {"b": MEASURED_RATES_BASIS}).item() == 0
    # the named row is the one the laptop's share is read from: 3.9375 TFLOPS over the M1 Max's 10.4 (32-core GPU) and 7.8
    # (24-core) FP32 peaks, 0.3786 and 0.5048, the ends of laptop_measured_share's range
    rate = _query(built_warehouse, "select achieved_tflops from staging.training_throughput where throughput_id = $t",
                  {"t": LAPTOP_ROW}).item()
    assert rate == pytest.approx(3.9375, rel=1e-9)
    for scenario in REALISTIC:
        share = _query(built_warehouse, "select value, low, high from core.scenario_parameters where scenario_id = $s "
                                        "and parameter = 'laptop_measured_share'", {"s": scenario}).row(0)
        assert share[1:] == (pytest.approx(rate / 10.4, abs=5e-5), pytest.approx(rate / 7.8, abs=5e-5))


def test_the_papers_scenarios_keep_their_own_inputs(built_warehouse: Path) -> None:
    """The paper's scenarios read no measured edge rate: no ``<class>_measured_tflops`` row, the Table 1 powers (paper_base
    is their abstract parent, so its rows are read through them)."""
    names = ("paper_text", "paper_figure", "roofline", "vendor_fp32")
    rows = _query(built_warehouse, "select scenario_id, parameter, value from core.scenario_parameters "
                                   "where list_contains($s, scenario_id) and (suffix(parameter, $suffix) "
                                   "or parameter in ('laptop_train_power_w', 'phone_train_power_w'))",
                  {"s": list(names), "suffix": EDGE_RATE_SUFFIX})
    assert set(rows.get_column("scenario_id")) == set(names)
    assert set(rows.get_column("parameter")) == {"laptop_train_power_w", "phone_train_power_w"}
    for name in names:
        assert dict(rows.filter(pl.col("scenario_id") == name).select("parameter", "value").rows()) == {
            "laptop_train_power_w": 15.0, "phone_train_power_w": 10.0}
