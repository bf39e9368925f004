"""The edge's measured rates name their jobs: each answer row names the training run its edge rate is read
from (marts.verdict.edge_rate_id), as gpu_rate_id names the GPU's; the laptop's run gives its power too, and the
phone's rate is a phone's own measurement.

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

#: tf_metal_m1_max_bertlarge_fp32: BERT-Large trained in FP32 at 19 sequences of 128 tokens a second on an M1 Max
#: 32-core GPU, 36 W of GPU power in the same run
LAPTOP_ROW = "tf_metal_m1_max_bertlarge_fp32"
#: qvac_adreno830_qwen3_1p7b_q4_0_lora: Qwen3-1.7B LoRA at 6.73 tokens/s on a Snapdragon 8 Elite phone's Adreno 830
PHONE_ROW = "qvac_adreno830_qwen3_1p7b_q4_0_lora"
#: mlx_lora_m1_max_mistral_7b: the other laptop reading, the low end of the laptop's share
MLX_ROW = "mlx_lora_m1_max_mistral_7b"
REALISTIC = ("realistic_attributional", "realistic_consequential")
#: by hand: 6 x 302,309,376 (BERT-Large's 24 encoder layers) x (19 x 128) / 1e12, and 4 x 1,720,574,976 x 6.73 / 1e12
LAPTOP_TFLOPS = 6 * 302_309_376 * 19 * 128 / 1e12
PHONE_TFLOPS = 4 * 1_720_574_976 * 6.73 / 1e12


def _query(path: Path, sql: str, params: dict | None = None) -> pl.DataFrame:
    with open_readonly(path) as con:
        return query_pl(con, sql, params or {})


def test_same_job_power_given_rows() -> None:
    """Worked by hand on given rows. The verdict names the rate row of each class from the factor_ref of its
    ``<class>_measured_tflops`` row, on the basis that weighs measured rates only; the GPU's own
    ``cloud_gpu_measured_tflops`` is not an edge class's. The laptop's named row gives the power of its own run, from
    which the laptop's whole-device power is worked: the GPU at the run's energy per FLOP on the M2 Pro, plus the
    machine's base load."""
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
        {"scenario_id": "s", "parameter": "phone" + EDGE_RATE_SUFFIX,
         "factor_ref": f"training_throughput.throughput_id={PHONE_ROW}.achieved_tflops"},
        {"scenario_id": "s", "parameter": GPU_RATE_PARAMETER,
         "factor_ref": "training_throughput.throughput_id=llmfoundry_h100_1b_bf16_s2048_g8.achieved_tflops"},
        {"scenario_id": "s", "parameter": "laptop_tflops", "factor_ref": "device_specs.device_id=apple-m2-pro-19c.fp32_tflops"},
        {"scenario_id": "s", "parameter": "laptop_measured_share", "factor_ref": None},
    ]
    frame = _verdict(evaluated, mc, parameters=parameters)
    ids = {(b, c): set(frame.filter((pl.col("basis") == b) & (pl.col("device_class") == c)).get_column("edge_rate_id"))
           for b in (rated, other) for c in ("laptop", "phone")}
    assert ids == {(rated, "laptop"): {LAPTOP_ROW}, (rated, "phone"): {PHONE_ROW}, (other, "laptop"): {None}, (other, "phone"): {None}}
    assert set(frame.get_column("gpu_rate_id").drop_nulls()) == {"llmfoundry_h100_1b_bf16_s2048_g8"}
    # the row the laptop's answer names, as given: 6 x 302,309,376 x 2,432 / 1e12 = 4.4113 TFLOPS at 36 W of GPU power
    given = pl.DataFrame({"throughput_id": [LAPTOP_ROW], "tokens_per_s": [19.0 * 128], "model_params": [302_309_376.0],
                          "flops_per_param_token": [6.0], "power_w": [36.0]})
    named = frame.filter(pl.col("is_answer") & (pl.col("device_class") == "laptop")).join(
        given, left_on="edge_rate_id", right_on="throughput_id")
    assert named.height == 1
    row = named.row(0, named=True)
    rate = row["flops_per_param_token"] * row["model_params"] * row["tokens_per_s"] / 1e12
    assert rate == pytest.approx(4.411298414592, rel=1e-12)
    # the same run's energy per FLOP on the M2 Pro (6.8 TFLOPS peak against the M1 Max's 10.4, at the same share of
    # its peak): 36 x 6.8 / 10.4 = 23.538 W of GPU, + the Mac mini's 7 W idle x 0.88 = 6.16 W of base load = 29.70 W
    share = rate / 10.4
    gpu_w = row["power_w"] / rate * (share * 6.8)
    assert gpu_w == pytest.approx(23.538461538, rel=1e-9)
    assert round(gpu_w + 7 * 0.88, 2) == pytest.approx(29.70)


def test_every_answer_names_its_edge_rate_row(built_warehouse: Path) -> None:
    """marts.verdict.edge_rate_id: the laptop's answers read the BERT-Large run on an M1 Max, whose power is that run's;
    the phone's read a phone's own run (QVAC's Qwen3-1.7B LoRA on an Adreno 830), neither the paper's Table 1 nor a
    bridge; documented on the published column."""
    answers = _query(built_warehouse, "select scenario_id, device_class, basis, edge_rate_id from marts.verdict where is_answer")
    assert set(answers.get_column("scenario_id")) == set(REALISTIC)
    assert (answers.get_column("basis") == MEASURED_RATES_BASIS).all()
    assert set(answers.select("device_class", "edge_rate_id").unique().rows()) == {("laptop", LAPTOP_ROW), ("phone", PHONE_ROW)}
    comment = _query(built_warehouse, "select comment from duckdb_columns() where schema_name = 'marts' and table_name = 'verdict' "
                                      "and column_name = 'edge_rate_id'").item()
    assert "measured_tflops" in comment and "throughput_id" in comment
    # bases that weigh no measured rate name none
    assert _query(built_warehouse, "select count(*) from marts.verdict where basis <> $b and edge_rate_id is not null",
                  {"b": MEASURED_RATES_BASIS}).item() == 0
    rows = {r["throughput_id"]: r for r in _query(
        built_warehouse, "select throughput_id, device_class, achieved_tflops, power_w, power_boundary, job_time_s, status "
                         "from staging.training_throughput where list_contains($t, throughput_id)",
        {"t": [LAPTOP_ROW, PHONE_ROW, MLX_ROW]}).iter_rows(named=True)}
    laptop, phone = rows[LAPTOP_ROW], rows[PHONE_ROW]
    # the laptop's rate row gives its own run's power; the phone's is a phone's measured token rate (no job time)
    assert (laptop["achieved_tflops"], laptop["power_w"], laptop["power_boundary"]) == (
        pytest.approx(LAPTOP_TFLOPS, abs=5e-7), 36.0, "gpu")
    assert (phone["device_class"], phone["job_time_s"], phone["status"]) == ("phone", None, "primary")
    assert phone["achieved_tflops"] == pytest.approx(PHONE_TFLOPS, abs=5e-7)  # entered to the millionth
    for scenario in REALISTIC:
        values = {r["parameter"]: r for r in _query(
            built_warehouse, "select parameter, value, low, high from core.scenario_parameters where scenario_id = $s "
                             "and parameter in ('laptop_measured_share', 'phone_measured_share', 'laptop_train_power_w')",
            {"s": scenario}).iter_rows(named=True)}
        # laptop: 4.4113 / 10.4 (M1 Max 32-core FP32 peak); low, the MLX reading 3.9375 / 10.4; high, the same run over
        # every parameter, 6 x 335,150,088 x 2,432 / 1e12 / 10.4
        lap = values["laptop_measured_share"]
        assert (lap["value"], lap["low"], lap["high"]) == (pytest.approx(LAPTOP_TFLOPS / 10.4, abs=5e-5),
                                                           pytest.approx(rows[MLX_ROW]["achieved_tflops"] / 10.4, abs=5e-5),
                                                           pytest.approx(6 * 335_150_088 * 2432 / 1e12 / 10.4, abs=5e-5))
        # phone: the measured rate over the scenario phone's 1.38 TFLOPS, so share x peak is the rate (a point)
        ph = values["phone_measured_share"]
        assert (ph["value"] * 1.38, ph["low"], ph["high"]) == (pytest.approx(PHONE_TFLOPS, rel=1e-5), None, None)
        # the laptop's power is worked from its rate row's power: 36 x 6.8 / 10.4 + 6.16
        assert values["laptop_train_power_w"]["value"] == pytest.approx(laptop["power_w"] * 6.8 / 10.4 + 6.16, abs=5e-3)


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
