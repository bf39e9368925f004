"""A verdict that counts every draw, reads only physical network methods and names the assumptions
that decide it; and a job of tokens asks its devices for the work its tokens imply.

The verdict's SQL (sql/marts/verdict.sql) runs here on given rows, without a build: the tables it
reads are made by hand, a few rows each, so each rule is shown on the one row that exercises it.
"""

from __future__ import annotations

from pathlib import Path

import duckdb
import polars as pl
import pyarrow as pa
import pytest

from pipelines.defs.assets.verdict import VERDICT_PARAMS
from pipelines.model.formula import evaluate, scenario_inputs
from pipelines.model.methods import reference_tables
from pipelines.paths import sql_text
from pipelines.warehouse.database import open_readonly
from pipelines.warehouse.queries import query_pl
from schemas.vocabulary import (
    COMPUTE_ONLY,
    FEASIBLE_SHARE_MIN,
    FRAME_NETWORK_METHODS,
    FRAMES,
    MEASURED_BASIS,
    MEASURED_RATES_BASIS,
    PATTERN_ROWS,
    VERDICT_BELOW,
    VERDICT_HOLDS,
    VERDICT_INFEASIBLE,
    VERDICT_UNCERTAIN,
)
from tests.marts.given_rows import XUE, claim_rows

#: a pattern that moves bytes and a frame that admits two network methods, read from the vocabulary
COMM = next(name for name, row in PATTERN_ROWS.items() if row.moves_bytes and row.resizable)
FRAME = next(name for name, methods in FRAME_NETWORK_METHODS.items() if len(methods) == 2 and FRAMES[name].resizes_fleet)
FIRST, SECOND = FRAME_NETWORK_METHODS[FRAME]
#: the frame's headline allocation policy and another it admits; its headline resize power and another
POLICY, OTHER_POLICY = FRAMES[FRAME].edge_embodied_policy, FRAMES[FRAME].other_embodied_policies[0]
POWER, OTHER_POWER = FRAMES[FRAME].resize_powers[:2]


def _methods(method: str, policy: str, power: str) -> dict:
    """The method-row keys of a row: its network method, allocation policy and resize power, and which are the headline."""
    return {"network_method": method, "embodied_policy": policy, "resize_power": power,
            "is_headline_method": method == FIRST and policy == POLICY and power == POWER,
            "is_headline_policy": policy == POLICY, "is_headline_resize_power": power == POWER}


def _row(method: str, pattern: str, r: float, *, physical: bool = True, w: float = 5.0, policy: str = POLICY,
         power: str = POWER) -> dict:
    """One row of the model's evaluation (core.model_evaluation) for scenario s, class laptop, the measured basis."""
    return {"scenario_id": "s", "family": "base", "device_class": "laptop", "basis": "measured_throughput", "is_headline": True,
            **_methods(method, policy, power), "pattern": pattern, "devices": 100.0,
            "cloud_gpu_count": 1.0, "resized_from": None, "reduction_factor": r, "link_time_share": 0.5,
            "required_link_mb_per_s": 2.5, "link_mb_per_s": 5.0, "link_feasible": True, "implied_device_utilisation": 0.4,
            "network_w_per_line": w, "network_physical": physical, **DESIGN_COLUMNS, "is_scenario_design": pattern != COMPUTE_ONLY}


#: The design columns of a row of core.model_evaluation (one design that fits and carries its traffic) and its carbon by cause.
DESIGN_COLUMNS = {"design_admissible": True, "link_headroom": 0.9415, "training_memory_gb": 4.0, "device_memory_gb": 8.0,
                  "memory_feasible": True, "pipeline_stages": None, "token_overhead": 1.0, "edge_operational_kgco2e": 1.0,
                  "edge_embodied_kgco2e": 0.5, "edge_battery_wear_kgco2e": 0.0, "comm_kgco2e": 0.2, "edge_added_kgco2e": 1.7}


def _mc(method: str, pattern: str, band: tuple[float, float, float], all_draws: tuple[float, float, float],
        feasible: float, ge1: float, ge4: float, *, policy: str = POLICY, power: str = POWER) -> dict:
    """One marts.uncertainty row of R: the feasible draws' band, the band over every draw, the shares."""
    return {"scenario_id": "s", "device_class": "laptop", "basis": "measured_throughput", "pattern": pattern,
            **_methods(method, policy, power), "metric": "reduction_factor", "p05": band[0], "p50": band[1], "p95": band[2],
            "share_r_below_1": 0.1, "share_r_below_4": 0.9, "share_link_feasible": feasible,
            "p05_all_draws": all_draws[0], "p50_all_draws": all_draws[1], "p95_all_draws": all_draws[2],
            "share_feasible_r_ge_1": ge1, "share_feasible_r_ge_4": ge4, "best_design": False}


def _verdict(evaluated: list[dict], mc: list[dict], sensitivity: list[dict] | None = None,
             parameters: list[dict] | None = None, *, claim: str = XUE["claim_id"]) -> pl.DataFrame:
    """sql/marts/verdict.sql over the given rows of core.model_evaluation (and the shipped reference tables core.frames, core.patterns,
    core.bases, and Xue et al.'s row of core.claim; ``claim``: the claim the scenario names; ``parameters``: rows of core.scenario_parameters, scenario_id, parameter and factor_ref)."""
    con = duckdb.connect()
    for schema in ("core", "marts"):
        con.execute(f"create schema {schema}")
    refs = reference_tables()
    for name, table in (("frames", "core.frames"), ("patterns", "core.patterns"), ("bases", "core.bases")):
        con.register(name, refs[table])
    con.register("claim", pa.Table.from_pylist(claim_rows()))
    con.execute("create table core.frames as select * from frames")
    con.execute("create table core.patterns as select * from patterns")
    con.execute("create table core.claim as select * from claim")
    con.execute("create table core.bases as select * from bases")
    parameter_keys = {"scenario_id": pa.string(), "parameter": pa.string(), "factor_ref": pa.string()}
    con.register("params", pa.Table.from_pylist(parameters or [], schema=pa.schema(parameter_keys)))
    con.execute("create table core.scenario_parameters as select * from params")
    con.execute("create table core.scenarios as select 's' as scenario_id, $frame as accounting_frame, $comm as comm_pattern, "
                "$claim as claim_id", {"frame": FRAME, "comm": COMM, "claim": claim})
    con.register("mc", pa.Table.from_pylist(mc))
    con.execute("create table marts.uncertainty as select * from mc")
    keys = {"scenario_id": pa.string(), "device_class": pa.string(), "pattern": pa.string(), "network_method": pa.string(),
            "parameter": pa.string(), "status": pa.string(), "value_low": pa.float64(), "value_high": pa.float64(),
            "reduction_factor_at_low": pa.float64(), "reduction_factor_at_high": pa.float64(), "rank": pa.int64()}
    con.register("sens", pa.Table.from_pylist(sensitivity or [], schema=pa.schema(keys)))
    con.execute("create table marts.sensitivity as select * from sens")
    con.register("evaluated", pa.Table.from_pylist(evaluated))
    con.execute("create table core.model_evaluation as select * from evaluated")
    return query_pl(con, sql_text("marts/verdict.sql"), VERDICT_PARAMS)


def test_a_scenario_is_read_against_its_own_claim_and_one_in_other_terms_has_no_rows() -> None:
    evaluated = [_row(m, p, r) for m in (FIRST, SECOND) for p, r in ((COMPUTE_ONLY, 3.0), (COMM, 2.8))]
    mc = [_mc(m, p, (2.0, 2.9, 4.5), (0.0, 2.1, 3.8), 0.6, 0.55, 0.04) for m in (FIRST, SECOND) for p in (COMPUTE_ONLY, COMM)]
    assert set(_verdict(evaluated, mc).select("claim_id", "claim_low", "claim_high").rows()) == {(XUE["claim_id"], 4.0, 8.0)}
    assert _verdict(evaluated, mc, claim="jaghouar2024_bandwidth_400x").height == 0  # a bandwidth ratio: marts.claims only


def test_a_band_that_spans_the_claim_on_feasible_draws_falls_below_it_over_every_draw() -> None:
    """Feasible draws 2.0-4.5 span 4 ('claim uncertain'); 40% of the draws are infeasible, so over every draw (an
    infeasible one counted as R = 0) the p95 is 3.8: below the claim. The verdict reads every draw."""
    evaluated = [_row(m, p, r) for m in (FIRST, SECOND) for p, r in ((COMPUTE_ONLY, 3.0), (COMM, 2.8))]
    mc = [_mc(m, p, (2.0, 2.9, 4.5), (0.0, 2.1, 3.8), 0.6, 0.55, 0.04) for m in (FIRST, SECOND) for p in (COMPUTE_ONLY, COMM)]
    frame = _verdict(evaluated, mc)
    assert frame.height == 2
    row = frame.row(0, named=True)
    assert row["verdict_if_feasible"] == VERDICT_UNCERTAIN
    assert row["verdict"] == VERDICT_BELOW
    assert (row["p05_with_comm_all_draws"], row["p95_with_comm_all_draws"]) == (0.0, 3.8)
    assert (row["share_feasible_r_ge_1"], row["share_feasible_r_ge_4"]) == (0.55, 0.04)
    # the same rows with every draw feasible read the feasible band: the claim is uncertain
    whole = [_mc(m, p, (2.0, 2.9, 4.5), (2.0, 2.9, 4.5), 1.0, 0.95, 0.06) for m in (FIRST, SECOND) for p in (COMPUTE_ONLY, COMM)]
    assert set(_verdict(evaluated, whole).get_column("verdict")) == {VERDICT_UNCERTAIN}


def test_below_the_feasible_share_threshold_a_row_is_infeasible() -> None:
    evaluated = [_row(m, p, r) for m in (FIRST, SECOND) for p, r in ((COMPUTE_ONLY, 6.0), (COMM, 5.0))]
    share = FEASIBLE_SHARE_MIN - 0.01
    mc = [_mc(m, p, (4.5, 5.0, 6.0), (0.0, 0.0, 5.5), share, share, share) for m in (FIRST, SECOND) for p in (COMPUTE_ONLY, COMM)]
    frame = _verdict(evaluated, mc)
    assert set(frame.get_column("verdict")) == {VERDICT_INFEASIBLE}
    assert set(frame.get_column("verdict_if_feasible")) == {VERDICT_HOLDS}


def test_a_method_that_is_not_physical_sets_no_verdict() -> None:
    """The second method charges each line 1,132 W (far above any line's power) and puts R at 0.04: it stays on its row,
    flagged, but the frame's verdict reads the physical method alone."""
    evaluated = [_row(FIRST, COMPUTE_ONLY, 6.0), _row(FIRST, COMM, 5.0),
                 _row(SECOND, COMPUTE_ONLY, 6.0), _row(SECOND, COMM, 0.04, physical=False, w=1132.0)]
    mc = [_mc(FIRST, p, (4.2, 5.0, 6.0), (4.1, 5.0, 6.0), 1.0, 1.0, 0.97) for p in (COMPUTE_ONLY, COMM)]
    mc += [_mc(SECOND, COMPUTE_ONLY, (4.2, 5.0, 6.0), (4.1, 5.0, 6.0), 1.0, 1.0, 0.97),
           _mc(SECOND, COMM, (0.01, 0.04, 0.3), (0.01, 0.04, 0.3), 1.0, 0.0, 0.0)]
    frame = _verdict(evaluated, mc).sort("network_method")
    assert dict(zip(frame.get_column("network_method"), frame.get_column("network_physical"), strict=True)) == {FIRST: True, SECOND: False}
    assert set(frame.get_column("verdict")) == {VERDICT_HOLDS}
    assert set(frame.get_column("verdict_driver_method")) == {FIRST}
    # were no method physical, the frame would read them all: 0.01-6.0 spans 4
    unphysical = [{**r, "network_physical": False} for r in evaluated]
    assert set(_verdict(unphysical, mc).get_column("verdict")) == {VERDICT_UNCERTAIN}


def test_the_verdict_names_the_assumed_ranges_that_cross_its_bounds() -> None:
    """An assumed range whose ends put R on both sides of 1 (or of 4) under the method that sets the verdict is named;
    one that stays on one side, a primary range, and a range under another method are not."""
    evaluated = [_row(m, p, r) for m in (FIRST, SECOND) for p, r in ((COMPUTE_ONLY, 3.0), (COMM, 1.2))]
    mc = [_mc(m, p, (0.9, 1.2, 1.5), (0.9, 1.2, 1.5), 1.0, 0.9, 0.0) for m in (FIRST, SECOND) for p in (COMPUTE_ONLY, COMM)]
    mc = [{**r, "p95": 1.6, "p95_all_draws": 1.6} if r["network_method"] == SECOND else r for r in mc]  # the second sets it

    def sens(parameter: str, status: str, method: str, low: float, high: float, rank: int) -> dict:
        return {"scenario_id": "s", "device_class": "laptop", "pattern": COMM, "network_method": method, "parameter": parameter,
                "status": status, "value_low": 1.0, "value_high": 2.0, "reduction_factor_at_low": low,
                "reduction_factor_at_high": high, "rank": rank}

    rows = [sens("straggler_slowdown", "assumed", SECOND, 1.4, 0.7, 1), sens("comm_compression", "assumed", SECOND, 1.1, 4.2, 2),
            sens("batch_size", "assumed", SECOND, 1.1, 1.3, 3), sens("cloud_pue", "primary", SECOND, 0.9, 1.5, 4),
            sens("local_steps_per_sync", "assumed", FIRST, 0.5, 1.5, 1)]
    frame = _verdict(evaluated, mc, rows)
    assert set(frame.get_column("verdict_driver_method")) == {SECOND}
    assert set(frame.get_column("verdict_deciding_assumptions")) == {
        "straggler_slowdown 1-2 (R 0.70-1.40); comm_compression 1-2 (R 1.10-4.20)"}


def test_allocation_and_resize_power_rows_set_the_verdict_as_network_methods_do() -> None:
    """Alone, the frame's headline row (its headline network method, policy and resize power) reads 4.2-5.5: the claim
    holds. The frame's other allocation policy reads 3.5-4.4, so over its method rows the lowest p05 is 3.5: the claim
    is uncertain, and the row that sets it is named by its policy; a resize-power row above the headline moves nothing."""
    rows = [(POLICY, POWER, (4.2, 4.5, 5.5)), (OTHER_POLICY, POWER, (3.5, 4.0, 4.4)), (POLICY, OTHER_POWER, (4.6, 5.0, 5.9))]
    evaluated = [_row(FIRST, COMPUTE_ONLY, 6.0, policy=policy) for policy in (POLICY, OTHER_POLICY)]
    evaluated += [_row(FIRST, COMM, band[1], policy=policy, power=power) for policy, power, band in rows]
    mc = [_mc(FIRST, COMPUTE_ONLY, (5.0, 6.0, 7.0), (5.0, 6.0, 7.0), 1.0, 1.0, 1.0, policy=policy) for policy in (POLICY, OTHER_POLICY)]
    mc += [_mc(FIRST, COMM, band, band, 1.0, 1.0, 0.9, policy=policy, power=power) for policy, power, band in rows]
    frame = _verdict(evaluated, mc)
    assert frame.height == 3
    assert set(frame.get_column("verdict")) == {VERDICT_UNCERTAIN}
    assert set(frame.select("verdict_driver_method", "verdict_driver_policy", "verdict_driver_resize_power").rows()) == {
        (FIRST, OTHER_POLICY, POWER)}
    headline = frame.filter(pl.col("is_headline_method"))
    assert (headline.height, headline.item(0, "embodied_policy"), headline.item(0, "resize_power")) == (1, POLICY, POWER)
    # each row's R compute only is its own policy's
    assert sorted(frame.get_column("p05").to_list()) == [5.0, 5.0, 5.0]
    only_headline = _verdict([r for r in evaluated if r["embodied_policy"] == POLICY],
                             [r for r in mc if r["embodied_policy"] == POLICY])
    assert set(only_headline.get_column("verdict")) == {VERDICT_HOLDS}


@pytest.fixture(scope="module")
def verdict(built_warehouse: Path) -> pl.DataFrame:
    with open_readonly(built_warehouse) as con:
        return query_pl(con, "select * from marts.verdict")


def test_the_built_verdict_counts_every_draw(verdict: pl.DataFrame) -> None:
    """Over every draw the band sits at or below the feasible draws' band, and a share that reaches 4 is part of one that
    reaches 1, itself part of the feasible share."""
    compared = verdict.filter(pl.col("p95_with_comm").is_not_null())
    assert compared.height > 0
    assert (compared.get_column("p95_with_comm_all_draws") <= compared.get_column("p95_with_comm") + 1e-12).all()
    assert (compared.get_column("p05_with_comm_all_draws") <= compared.get_column("p05_with_comm") + 1e-12).all()
    assert (verdict.get_column("share_feasible_r_ge_4") <= verdict.get_column("share_feasible_r_ge_1")).all()
    assert (verdict.get_column("share_feasible_r_ge_1") <= verdict.get_column("feasible_share") + 1e-12).all()


def test_volume_rows_are_not_physical_and_never_set_a_verdict(verdict: pl.DataFrame) -> None:
    """Carbon Trust's average kWh per GB on the realistic pipeline's traffic charges each home line hundreds of W; the
    verdict keeps those rows as bounds and reads the time method. Only where the scenario's pattern passes home lines
    (a pattern between data-centre ends, e.g. diloco_allreduce, holds none), on the scenario's own pattern: a DiLoCo
    design moves a tenth of its bytes or less, which the volume method charges within a line's power."""
    home = [name for name, row in PATTERN_ROWS.items() if row.home_ends > 0]
    verdict = verdict.filter(pl.col("comm_pattern").is_in(home) & (pl.col("edge_design") == pl.col("comm_pattern")))
    volume = verdict.filter((pl.col("network_method") == "volume") & (pl.col("accounting_frame") == "attributional"))
    # the laptops' lines: hundreds of W each, not physical; the phone's measured rate is so low that 41,511 phones share
    # a GPU's work, each line carrying few bytes, and the volume method charges it a physical 24 W
    unphysical = volume.filter(~pl.col("network_physical"))
    assert unphysical.height > 0 and set(unphysical.get_column("device_class")) >= {"laptop"}
    assert (unphysical.get_column("network_w_per_line") > 93).all()
    assert (volume.filter(pl.col("network_physical")).get_column("network_w_per_line") <= 93).all()
    assert (verdict.filter(pl.col("accounting_frame") == "attributional").get_column("verdict_driver_method") == "time").all()
    physical = verdict.filter(pl.col("network_method") != "volume")
    assert physical.get_column("network_physical").all()


def test_the_feasible_share_threshold_is_a_documented_row(built_warehouse: Path) -> None:
    with open_readonly(built_warehouse) as con:
        claim = query_pl(con, "select * from core.claim")
        comment = con.execute("select comment from duckdb_columns() where schema_name = 'core' and table_name = 'claim' "
                              "and column_name = 'feasible_share_min'").fetchone()[0]
    assert claim.height == 2  # Xue et al.'s ratio on the figure's counts and on the text's
    assert set(claim.get_column("feasible_share_min")) == {FEASIBLE_SHARE_MIN}
    assert set(claim.get_column("feasible_share_min_status")) == {"assumed"}
    assert "all-draw band" in comment


def test_a_job_of_tokens_asks_its_devices_for_the_work_its_tokens_imply(built_warehouse: Path) -> None:
    """A params_tokens workload: the GPUs' work is 6 N D FLOPs over the job's hours (64 H100s training OPT-1.3B on 26 B
    tokens at 40% MFU of 989.5 TFLOPS BF16 do 395.8 TFLOPS each, 7.8x the 50.9 TFLOPS of 0.76 x the FP32 roofline), so
    the devices' implied utilisation follows from the tokens, and the count keeps it at or below their peak."""
    with open_readonly(built_warehouse) as con:
        base = scenario_inputs(con).filter(pl.col("scenario_id") == "realistic_attributional")
        tokens = base.with_columns(pl.lit("params_tokens").alias("workload_kind"), pl.lit(26e9).alias("workload_tokens"),
                                   pl.lit(0.4).alias("workload_mfu"), pl.lit(64.0).alias("cloud_gpu_count"))
        rows = evaluate(con, tokens, patterns=(COMPUTE_ONLY,), basis_filter="all")
    params, fp16 = base.item(0, "fleet_model_params"), base.item(0, "cloud_gpu_fp16_tflops")
    assert fp16 == pytest.approx(989.5)
    job_hours = 6 * params * 26e9 / (fp16 * 1e12 * 0.4) / 3600 / 64  # each GPU's hours on the job
    assert rows.height > 0
    for r in rows.filter(pl.col("basis") != "peak_flops").iter_rows(named=True):
        assert r["job_years"] == pytest.approx(job_hours / (24 * 365), rel=1e-12)
        peak = base.item(0, f"{r['device_class']}_tflops")
        slowdown = base.item(0, "straggler_slowdown") if r["online_fraction"] < 1 else 1.0
        device_seconds = r["devices"] * r["online_fraction"] * r["hours_per_day"] * 3600 * 365 * r["job_years"]
        expected = 6 * params * 26e9 * slowdown / (device_seconds * peak * 1e12)
        assert r["implied_device_utilisation"] == pytest.approx(expected, rel=1e-9), r
        assert r["implied_device_utilisation"] <= 1 + 1e-12, r


def test_the_verdict_names_the_measured_row_of_the_gpus_rate_on_a_measured_rate_basis() -> None:
    """gpu_rate_id: the key of the factor_ref of the scenario's GPU-rate parameter, on a basis that weighs measured
    training rates only (core.bases measured_rate); null on the others."""
    from pipelines.defs.assets.verdict import GPU_RATE_PARAMETER
    from schemas.vocabulary import BASIS_RULES

    rated = next(b for b, rule in BASIS_RULES.items() if rule.measured_rate > 0)
    other = next(b for b, rule in BASIS_RULES.items() if rule.measured_rate == 0 and rule.job_rate > 0)
    evaluated = [{**_row(m, p, r), "basis": basis, "is_headline": basis == rated}
                 for basis in (rated, other) for m in (FIRST, SECOND) for p, r in ((COMPUTE_ONLY, 3.0), (COMM, 2.8))]
    mc = [{**_mc(m, p, (2.0, 2.9, 4.5), (2.0, 2.9, 4.5), 1.0, 0.9, 0.1), "basis": basis}
          for basis in (rated, other) for m in (FIRST, SECOND) for p in (COMPUTE_ONLY, COMM)]
    parameters = [{"scenario_id": "s", "parameter": GPU_RATE_PARAMETER,
                   "factor_ref": "training_throughput.throughput_id=llmfoundry_h100_1b_bf16_s2048_g8.achieved_tflops"},
                  {"scenario_id": "s", "parameter": "cloud_gpu_tflops", "factor_ref": "device_specs.device_id=nvidia-h100-sxm.fp32_tflops"}]
    frame = _verdict(evaluated, mc, parameters=parameters)
    ids = dict(zip(frame.get_column("basis"), frame.get_column("gpu_rate_id"), strict=False))
    assert ids == {rated: "llmfoundry_h100_1b_bf16_s2048_g8", other: None}
    # without the parameter row the basis names no measured row
    assert frame.height == 4 and _verdict(evaluated, mc).get_column("gpu_rate_id").null_count() == 4


def _ceiling_rows(*rows: tuple[str, str, bool, float, float | None, str | None], basis: str = MEASURED_RATES_BASIS) -> pl.DataFrame:
    """marts.verdict rows (scenario, frame, headline, utilisation, the device's measured share, gpu_rate_id) of laptops."""
    return pl.DataFrame(
        [{"scenario_id": s, "accounting_frame": f, "is_headline": h, "basis": basis, "device_class": "laptop",
          "implied_device_utilisation": u, "gpu_rate_id": g, "device_measured_share": m} for s, f, h, u, m, g in rows],
        schema={"scenario_id": pl.String, "accounting_frame": pl.String, "is_headline": pl.Boolean, "basis": pl.String,
                "device_class": pl.String, "implied_device_utilisation": pl.Float64, "gpu_rate_id": pl.String,
                "device_measured_share": pl.Float64})


def test_the_measured_ceiling_check_fails_a_realistic_headline_row_above_it() -> None:
    """A realistic headline row above 0.6 (the class's training ceiling, schemas/bounds.py) or above its measured share
    fails, as does one whose GPU rate names no measured row; the paper's frame and non-headline rows are not checked."""
    from pipelines.defs.assets.verdict import rows_above_measured_ceiling
    from schemas.bounds import training_utilisation_ceiling
    from schemas.vocabulary import PAPER_FRAME

    assert training_utilisation_ceiling("laptop") == 0.6
    ok = ("a", FRAME, True, 0.3785, 0.3786, "row")
    assert rows_above_measured_ceiling(_ceiling_rows(ok)).height == 0
    frame = _ceiling_rows(ok, ("b", FRAME, True, 0.61, None, "row"), ("c", FRAME, True, 0.40, 0.3786, "row"),
                          ("d", FRAME, True, 0.30, 0.3786, None), ("e", PAPER_FRAME, True, 0.99, None, None),
                          ("f", FRAME, False, 0.79, None, None))
    failing = rows_above_measured_ceiling(frame)
    assert dict(zip(failing.get_column("scenario_id"), failing.get_column("reason"), strict=True)) == {
        "b": "above the class's training ceiling", "c": "above the device's measured rate",
        "d": "the GPU's rate names no measured row"}
    # on a basis that weighs no measured rate (measured_throughput's job times) gpu_rate_id is null by definition
    assert rows_above_measured_ceiling(_ceiling_rows(("d", FRAME, True, 0.30, None, None), basis=MEASURED_BASIS)).height == 0
