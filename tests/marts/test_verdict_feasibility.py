"""A verdict on fleets that can exist: feasibility at the link, one throughput, both network ends,
the network method as a dimension, and central values that are central."""

from __future__ import annotations

import math
from pathlib import Path

import duckdb
import numpy as np
import polars as pl
import pytest

from pipelines.model.methods import frame_method_rows, pattern_rows
from pipelines.model.uncertainty import Ranged, to_values
from pipelines.warehouse.database import open_readonly
from pipelines.warehouse.queries import query_pl
from pipelines.warehouse.tables import install_macros
from schemas.bounds import training_utilisation_ceiling
from schemas.vocabulary import (
    FEASIBLE_SHARE_MIN,
    FRAME_NETWORK_METHODS,
    FRAMES,
    NETWORK_METHOD_ROWS,
    NETWORK_METHODS,
    PATTERN_ROWS,
    VERDICT_HOLDS,
    VERDICT_INFEASIBLE,
    VERDICTS,
)

#: Carbon Trust 2021 averages (kWh/GB) and Malmodin 2020's fixed-line figures, as the scenarios read them.
NETWORK_GB, ROUTER_GB = 0.0065, 0.025
CORE_MARGINAL, ACCESS_MARGINAL = 0.03, 0.02
LINE_W, LINE_SHARE = 18.0, 0.5


def _network(con: duckdb.DuckDBPyConnection, method: str, pattern: str, gb: float, line_hours: float) -> float:
    home, server = PATTERN_ROWS[pattern].home_ends, PATTERN_ROWS[pattern].server_ends
    row = NETWORK_METHOD_ROWS[method]  # the method's weights of the four network terms (core.network_methods)
    return con.execute(
        "select network_kwh($w1, $w2, $w3, $w4, $gb, $home, $server, $net, $router, $net_m, $router_m, $line_w, $share, $hours)",
        {"w1": row.per_gb_one_end, "w2": row.per_gb_by_ends, "w3": row.marginal_by_ends, "w4": row.line_time, "gb": gb, "home": home, "server": server, "net": NETWORK_GB, "router": ROUTER_GB,
         "net_m": CORE_MARGINAL, "router_m": ACCESS_MARGINAL, "line_w": LINE_W, "share": LINE_SHARE, "hours": line_hours},
    ).fetchone()[0]


def test_both_ends_of_a_ring_and_a_pipeline_by_hand() -> None:
    """A 4-device ring all-reduce and a 2-stage pipeline of 2 devices, bytes and kWh per method by hand."""
    con = duckdb.connect()
    install_macros(con)
    params, bytes_per_param, tokens, tokens_per_step, hidden, activation = 1e6, 2.0, 8e6, 1000.0, 1000.0, 2.0
    def comm_bytes(pattern: str, devices: int, stages: int | None) -> float:
        row = PATTERN_ROWS[pattern]
        return con.execute(
            "select comm_bytes($sync_n, $sync_n_minus_1, $activations, $stage_allreduce, $n, $p, $b, $t, $tps, 1, $h, $a, 1, $s)",
            {"sync_n": row.sync_n, "sync_n_minus_1": row.sync_n_minus_1, "activations": row.activations,
             "stage_allreduce": row.stage_allreduce, "n": devices, "s": stages,
             "p": params, "b": bytes_per_param, "t": tokens, "tps": tokens_per_step, "h": hidden, "a": activation}).fetchone()[0]

    ring = comm_bytes("ring_allreduce", 4, None)
    # 8e6 tokens / (4 devices x 1,000 tokens a step) = 2,000 syncs of 2 (N - 1) p b = 12 MB: 24 GB
    assert ring == pytest.approx(2000 * 2 * 3 * 1e6 * 2) == 24e9
    pipeline = comm_bytes("pipeline", 2, 2)
    # one stage boundary, activations forward and gradients back: 8e6 x 2 x 1 x 1,000 x 2 B; no replicas to all-reduce
    assert pipeline == pytest.approx(8e6 * 2 * 1 * 1000 * 2) == 32e9
    # device to device: both homes' fixed network and router (volume), the core once and both access lines (marginal)
    per_gb = {"volume": 2 * (NETWORK_GB + ROUTER_GB), "marginal": (CORE_MARGINAL + 2 * ACCESS_MARGINAL) * 8000 / 3.6e6,
              "radio": NETWORK_GB + ROUTER_GB}
    for pattern, gb, devices in (("ring_allreduce", 24.0, 4), ("pipeline", 32.0, 2)):
        hours = devices * 100.0  # every device holds its line 100 h
        for method, kwh_per_gb in per_gb.items():
            assert _network(con, method, pattern, gb, hours) == pytest.approx(gb * kwh_per_gb, rel=1e-12), (pattern, method)
        # time: 18 W x 0.5 x the devices' 100 h each, whatever the bytes
        assert _network(con, "time", pattern, gb, hours) == pytest.approx(LINE_W * LINE_SHARE * hours / 1000, rel=1e-12)
    assert _network(con, "volume", "ring_allreduce", 24.0, 400) == pytest.approx(1.512)
    assert _network(con, "marginal", "pipeline", 32.0, 200) == pytest.approx(32 * 0.07 * 8000 / 3.6e6)
    # traffic to a server: the device's home end plus the data-centre side's fixed network
    assert _network(con, "volume", "parameter_server", 10.0, 0) == pytest.approx(10 * (NETWORK_GB + ROUTER_GB + NETWORK_GB))
    # no traffic, no network energy
    assert _network(con, "time", "none", 0.0, 400) == 0 and _network(con, "volume", "none", 0.0, 400) == 0


def test_methods_are_rows_and_every_frame_admits_its_own() -> None:
    methods = pl.from_arrow(frame_method_rows())
    assert len(set(NETWORK_METHODS) - {"radio"}) >= 3
    admitted = {f: set(g.get_column("network_method")) for (f,), g in methods.group_by(["accounting_frame"])}
    assert admitted == {f: set(m) for f, m in FRAME_NETWORK_METHODS.items()}
    assert admitted["attributional"] == {"volume", "time"} and admitted["consequential"] == {"marginal"}
    # one headline method per frame
    assert methods.group_by("accounting_frame").agg(pl.col("is_frame_headline").sum()).get_column("is_frame_headline").to_list() == [1] * len(FRAMES)
    ends = pl.from_arrow(pattern_rows())
    assert ends.filter(pl.col("name") == "ring_allreduce").row(0)[1:3] == (2, 0)
    assert ends.filter(pl.col("resizable")).get_column("name").to_list() == ["pipeline", "diloco_pipeline"]


def test_pipeline_fleet_for_link_is_the_smallest_over_stage_counts() -> None:
    """The closed form against a brute-force search over fleet sizes and stage counts."""
    con = duckdb.connect()
    install_macros(con)
    a, kp, s0, layers, lw = 1.266e15, 5.15e14, 3, 24, 1.577e14
    sql = "select pipeline_fleet_for_link($a, $kp, $s0, $layers, $lw, $online, true, 0)"
    # every device always online: the fewest devices training at once
    best = con.execute(sql, {"a": a, "kp": kp, "s0": s0, "layers": layers, "lw": lw, "online": 1.0}).fetchone()[0]
    feasible = [(n, s) for n in range(1, 400) for s in range(s0, layers + 1)
                if n >= s and (a * (s - 1) + kp * (n / s - 1)) / n <= lw]
    n_min = min(n for n, _ in feasible)
    assert math.ceil(best["n"] - 1e-9) == n_min == math.ceil(best["devices"] - 1e-9)
    assert (a * (best["s"] - 1) + kp * (best["n"] / best["s"] - 1)) / best["n"] == pytest.approx(lw)
    # 70% online: a pipeline of s stages trains 0.7^s of the window, so D devices put D x 0.7^s to work at once;
    # the fewest devices over the stage counts (here 3-8)
    best = con.execute(sql, {"a": a, "kp": kp, "s0": s0, "layers": 8, "lw": lw, "online": 0.7}).fetchone()[0]
    feasible = [(d, s) for d in range(1, 8000) for s in range(s0, 9)
                if d * 0.7**s >= s and (a * (s - 1) + kp * (d * 0.7**s / s - 1)) / (d * 0.7**s) <= lw]
    d_min = min(d for d, _ in feasible)
    assert math.ceil(best["devices"] - 1e-9) == d_min
    assert best["devices"] == pytest.approx(best["n"] / 0.7 ** best["s"], rel=1e-12)
    # a link below every stage count's all-reduce share: no fleet carries it
    assert con.execute(sql, {"a": a, "kp": kp, "s0": 3, "layers": 4, "lw": kp / 5, "online": 0.7}).fetchone()[0] is None


def test_a_device_charged_for_replacement_carries_no_battery_wear() -> None:
    con = duckdb.connect()
    install_macros(con)
    # nonuse 100 kg, battery share 0.05, 400 extra cycles of 1,000 rated (no replacement battery of 1.8 kg), owner 200 cycles
    # a year, 3 years of a 4-year life; the battery_wear policy's weights (core.embodied_policies): the battery-wear term alone
    args = "1.0, 0.0, 100.0, 0.0, 0.05, 400.0, 1000.0, 8, 4, 200.0, $share, 3.0, 4.0, 1.8"
    wear_only = con.execute(f"select embodied_allocated_kgco2e({args})", {"share": 0.0}).fetchone()[0]
    replaced = con.execute(f"select embodied_allocated_kgco2e({args})", {"share": 1.0}).fetchone()[0]
    lost = con.execute("select battery_life_lost_years(1000.0, 200.0, 400.0, 3.0, 4.0)").fetchone()[0]
    assert wear_only == pytest.approx(100 * 0.05 * 400 / 1000)
    assert lost > 0 and replaced == pytest.approx(100 * lost / 4)  # the replacement alone, no wear on top


def test_split_triangular_is_centred_on_its_value() -> None:
    unit = np.random.default_rng(7).random(400_001)
    drawn = to_values(unit, Ranged("x", "split_triangular", 0.7, 0.4, 0.95))
    assert np.median(drawn) == pytest.approx(0.7, abs=2e-3)
    assert drawn.min() >= 0.4 and drawn.max() <= 0.95
    # each half is a triangle peaked at the value: a quarter of the draws within (value - low) / 2 above low would be 1/8
    assert np.mean(drawn < 0.55) == pytest.approx(0.125, abs=3e-3)


@pytest.fixture(scope="module")
def verdict(built_warehouse: Path) -> pl.DataFrame:
    with open_readonly(built_warehouse) as con:
        return query_pl(con, "select * from marts.verdict")


def test_no_claim_holds_on_a_fleet_that_cannot_send_its_traffic(verdict: pl.DataFrame) -> None:
    assert set(verdict.get_column("verdict").unique()) <= set(VERDICTS)
    # the verdict is read on the edge's best design: where even that one cannot send its traffic (below the link's headroom)
    infeasible = verdict.filter(pl.col("is_best_design") & (
        (pl.col("link_time_share") > pl.col("link_headroom") * (1 + 1e-9)) | pl.col("required_link_mb_per_s").is_null()
        | (pl.col("feasible_share") < FEASIBLE_SHARE_MIN)))
    assert infeasible.height > 0
    assert (infeasible.get_column("verdict") == VERDICT_INFEASIBLE).all()
    assert VERDICT_HOLDS not in infeasible.get_column("verdict").to_list()
    # the paper's own fleets cannot send the paper's traffic over the paper's 10 MB/s link
    published = verdict.filter(pl.col("accounting_frame") == "as_published")
    assert (published.get_column("link_mb_per_s") == 10).all()
    assert (published.get_column("verdict") == VERDICT_INFEASIBLE).all()
    assert VERDICT_HOLDS in published.get_column("verdict_if_feasible").to_list()


def test_the_papers_own_r_is_unchanged(built_warehouse: Path) -> None:
    with open_readonly(built_warehouse) as con:
        fleet = query_pl(con, "select device_class, reduction_factor from marts.fleet_equivalence "
                              "where scenario_id = 'paper_text' and basis = 'peak_flops' order by device_class")
        verdict = query_pl(con, "select device_class, reduction_factor from marts.verdict "
                                "where scenario_id = 'paper_text' and basis = 'peak_flops' order by device_class")
        reproduced = query_pl(con, "select reproduced_value_text from marts.paper_reproduction where claim_id = 'F5_reduction'").item()
    for frame in (fleet, verdict):
        r = dict(frame.iter_rows())
        assert round(r["laptop"], 4) == 9.5044 and round(r["phone"], 4) == 3.0993
    assert "3.10x (phones, N=69), 9.50x (laptops, N=15)" in reproduced


def test_a_fleet_over_its_link_is_resized_until_it_carries_it(verdict: pl.DataFrame) -> None:
    resized = verdict.filter(pl.col("resized_from").is_not_null())
    assert resized.height > 0
    assert (resized.get_column("accounting_frame") != "as_published").all()
    assert (resized.get_column("comm_pattern") == "pipeline").all()
    assert (resized.get_column("devices_with_comm_per_gpu") > resized.get_column("resized_from")).all()
    # grown from the compute-equivalent fleet (a DiLoCo design's times its token overhead)
    assert (resized.get_column("resized_from")
            == (resized.get_column("devices_per_gpu") * resized.get_column("token_overhead")).ceil()).all()
    admissible = resized.filter(pl.col("design_admissible"))
    assert admissible.height > 0 and (admissible.get_column("link_time_share") <= admissible.get_column("link_headroom") * (1 + 1e-9)).all()
    # no cap: a resize is the finite fleet that carries the traffic, or none (the row stays infeasible)
    assert np.isfinite(resized.get_column("devices_with_comm_per_gpu").to_numpy()).all()
    # a required rate is the link use x the link
    assert np.allclose(verdict.get_column("required_link_mb_per_s").to_numpy(),
                       (verdict.get_column("link_time_share") * verdict.get_column("link_mb_per_s")).to_numpy())


def test_implied_device_utilisation_is_physical(verdict: pl.DataFrame) -> None:
    u = verdict.get_column("implied_device_utilisation")
    assert ((u > 0) & (u <= 1)).all()
    # a stated count (the paper's) does the work its own equivalence gives it: exactly at the devices' peak
    stated = verdict.filter((pl.col("basis") == "peak_flops") & (pl.col("accounting_frame") == "as_published"))
    assert stated.height > 0 and (stated.get_column("implied_device_utilisation") == 1).all()
    # the measured basis counts at least the devices that can do the work at their peak
    measured = verdict.filter(pl.col("basis") == "measured_throughput")
    assert (measured.get_column("implied_device_utilisation") <= 1).all()
    assert training_utilisation_ceiling("laptop") == 0.6


def test_every_realistic_attributional_row_carries_volume_and_time(verdict: pl.DataFrame) -> None:
    attributional = verdict.filter(pl.col("accounting_frame") == "attributional")
    assert attributional.height > 0
    methods = attributional.filter(pl.col("is_headline_policy") & pl.col("is_headline_resize_power")).group_by(
        "scenario_id", "basis", "device_class", "edge_design").agg(pl.col("network_method").sort())
    assert all(m == ["time", "volume"] for m in methods.get_column("network_method").to_list())
    # the frame's verdict is one reading over its methods, set by one of them, repeated on each row
    per_frame = attributional.group_by("scenario_id", "basis", "device_class").agg(
        pl.col("verdict").n_unique(), pl.col("verdict_driver_method").n_unique())
    assert (per_frame.get_column("verdict") == 1).all() and (per_frame.get_column("verdict_driver_method") == 1).all()
    consequential = verdict.filter(pl.col("accounting_frame") == "consequential")
    assert set(consequential.get_column("network_method")) == {"marginal"}


def test_central_values_lie_inside_their_own_range(verdict: pl.DataFrame) -> None:
    feasible = verdict.filter(pl.col("feasible_share") >= FEASIBLE_SHARE_MIN)
    assert feasible.height > 0
    choices = verdict.group_by("scenario_id", "basis", "device_class", "network_method", "embodied_policy", "resize_power").agg(
        pl.len().alias("designs"))
    for r in feasible.join(choices, on=["scenario_id", "basis", "device_class", "network_method", "embodied_policy",
                                        "resize_power"]).iter_rows(named=True):
        assert r["p05"] <= r["reduction_factor"] <= r["p95"], r
        if r["is_best_design"] and r["designs"] > 1:
            # each draw's best design: at least the deterministic best's R in most draws, so its band may lie above it
            assert r["reduction_factor_with_comm"] <= r["p95_with_comm"], r
        elif r["feasible_share"] < 0.9:
            # a fleet near its link's limit is feasible in the draws that favour it, so its feasible band may lie above
            # its central R; over every draw (an infeasible one counted as 0) the central R lies inside
            assert r["p05_with_comm_all_draws"] <= r["reduction_factor_with_comm"] <= r["p95_with_comm_all_draws"], r
        else:
            assert r["p05_with_comm"] <= r["reduction_factor_with_comm"] <= r["p95_with_comm"], r


def test_replacement_share_is_a_sensitivity_not_a_draw(built_warehouse: Path) -> None:
    with open_readonly(built_warehouse) as con:
        row = query_pl(con, "select value, low, high, distribution, status from core.scenario_parameters "
                            "where scenario_id = 'realistic_consequential' and parameter = 'device_replacement_share'")
        swept = query_pl(con, "select distinct parameter from marts.sensitivity where scenario_id = 'realistic_consequential'")
    assert row.row(0) == (0.0, 0.0, 0.6, "point", "assumed")
    assert "device_replacement_share" in swept.get_column("parameter").to_list()
