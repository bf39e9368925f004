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
    PATTERN_ROWS,
    VERDICT_BELOW,
    VERDICT_HOLDS,
    VERDICT_INFEASIBLE,
    VERDICT_UNCERTAIN,
)

#: a pattern that moves bytes and a frame that admits two network methods, read from the vocabulary
COMM = next(name for name, row in PATTERN_ROWS.items() if row.moves_bytes and row.resizable)
FRAME = next(name for name, methods in FRAME_NETWORK_METHODS.items() if len(methods) == 2 and FRAMES[name].resizes_fleet)
FIRST, SECOND = FRAME_NETWORK_METHODS[FRAME]


def _row(method: str, pattern: str, r: float, *, physical: bool = True, w: float = 5.0) -> dict:
    """One row of the model's evaluation (the relation `evaluated`) for scenario s, class laptop, the measured basis."""
    return {"scenario_id": "s", "device_class": "laptop", "basis": "measured_throughput", "is_headline": True,
            "network_method": method, "is_headline_method": method == FIRST, "pattern": pattern, "devices": 100.0,
            "cloud_gpu_count": 1.0, "resized_from": None, "reduction_factor": r, "link_time_share": 0.5,
            "required_link_mb_per_s": 2.5, "link_mb_per_s": 5.0, "link_feasible": True, "implied_device_utilisation": 0.4,
            "network_w_per_line": w, "network_physical": physical}


def _mc(method: str, pattern: str, band: tuple[float, float, float], all_draws: tuple[float, float, float],
        feasible: float, ge1: float, ge4: float) -> dict:
    """One marts.uncertainty row of R: the feasible draws' band, the band over every draw, the shares."""
    return {"scenario_id": "s", "device_class": "laptop", "basis": "measured_throughput", "pattern": pattern,
            "network_method": method, "metric": "reduction_factor", "p05": band[0], "p50": band[1], "p95": band[2],
            "share_r_below_1": 0.1, "share_r_below_4": 0.9, "share_link_feasible": feasible,
            "p05_all_draws": all_draws[0], "p50_all_draws": all_draws[1], "p95_all_draws": all_draws[2],
            "share_feasible_r_ge_1": ge1, "share_feasible_r_ge_4": ge4}


def _verdict(evaluated: list[dict], mc: list[dict], sensitivity: list[dict] | None = None) -> pl.DataFrame:
    """sql/marts/verdict.sql over the given rows (and the shipped reference tables core.frames, core.patterns, core.claim)."""
    con = duckdb.connect()
    for schema in ("core", "marts"):
        con.execute(f"create schema {schema}")
    refs = reference_tables()
    for name, table in (("frames", "core.frames"), ("patterns", "core.patterns"), ("claim", "core.claim")):
        con.register(name, refs[table])
    con.execute("create table core.frames as select * from frames")
    con.execute("create table core.patterns as select * from patterns")
    con.execute("create table core.claim as select * from claim")
    con.execute("create table core.scenarios as select 's' as scenario_id, $frame as accounting_frame, $comm as comm_pattern",
                {"frame": FRAME, "comm": COMM})
    con.register("mc", pa.Table.from_pylist(mc))
    con.execute("create table marts.uncertainty as select * from mc")
    keys = {"scenario_id": pa.string(), "device_class": pa.string(), "pattern": pa.string(), "network_method": pa.string(),
            "parameter": pa.string(), "status": pa.string(), "value_low": pa.float64(), "value_high": pa.float64(),
            "reduction_factor_at_low": pa.float64(), "reduction_factor_at_high": pa.float64(), "rank": pa.int64()}
    con.register("sens", pa.Table.from_pylist(sensitivity or [], schema=pa.schema(keys)))
    con.execute("create table marts.sensitivity as select * from sens")
    con.register("evaluated", pa.Table.from_pylist(evaluated))
    return query_pl(con, sql_text("marts/verdict.sql"), VERDICT_PARAMS)


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
    verdict keeps those rows as bounds and reads the time method."""
    volume = verdict.filter((pl.col("network_method") == "volume") & (pl.col("accounting_frame") == "attributional"))
    assert volume.height > 0
    assert not volume.get_column("network_physical").any()
    assert (volume.get_column("network_w_per_line") > 93).all()
    assert (verdict.filter(pl.col("accounting_frame") == "attributional").get_column("verdict_driver_method") == "time").all()
    physical = verdict.filter(pl.col("network_method") != "volume")
    assert physical.get_column("network_physical").all()


def test_the_feasible_share_threshold_is_a_documented_row(built_warehouse: Path) -> None:
    with open_readonly(built_warehouse) as con:
        claim = query_pl(con, "select * from core.claim")
        comment = con.execute("select comment from duckdb_columns() where schema_name = 'core' and table_name = 'claim' "
                              "and column_name = 'feasible_share_min'").fetchone()[0]
    assert claim.height == 1
    assert claim.item(0, "feasible_share_min") == FEASIBLE_SHARE_MIN
    assert claim.item(0, "feasible_share_min_status") == "assumed"
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
