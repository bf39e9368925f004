"""The review's six findings and the new model terms, each against arithmetic done by hand here.

Inputs are typed in from the scenario files (sources/scenarios/*.csv), the device specs and
the network factors (units in the names); every expected value is computed in the test, never
read back from the mart it checks.
"""

from __future__ import annotations

import math
from pathlib import Path

import duckdb
import numpy as np
import polars as pl
import pytest

from pipelines.model.draw_tables import draw_tables
from pipelines.model.formula import model_view, scenario_inputs
from pipelines.model.uncertainty import draw_inputs, ranged_parameters
from pipelines.paths import sql_text
from pipelines.warehouse.database import open_readonly
from pipelines.warehouse.queries import query_pl
from tests.marts.test_marts import one

H100_FP32_TFLOPS, H100_BW_GB_PER_S = 67.0, 3350.0
OPT13_PARAMS, OPT13_HIDDEN, OPT13_LAYERS = 1.3e9, 2048, 24
T_YEARS, H_EDGE, H_CLOUD, CI = 3.0, 8.0, 24.0, 367.0
#: The consequential frame's marginal grid: the mean of the current short-run factors, EPA AVERT's US national weighted
#: average for 2023 data alone (Portfolio EE, 1,454.68 lb CO2/MWh x 0.45359237 g/lb = 659.83 g/kWh, stored to 2 decimals).
CI_MARGINAL = round(1454.68 * 0.45359237, 2)
WINDOW_S = H_EDGE * 3600 * 365 * T_YEARS  # one device's scheduled training seconds: 31,536,000
# sources/scenarios/realistic_base.csv (and what it inherits from paper_base.csv)
ONLINE, SLOWDOWN, UTIL, INTENSITY = 0.7, 1.25, 0.76, 20.0
BANDWIDTH_B_PER_S, RADIO_W = 2.3e6, 1.739  # 2.3 MB/s (Ofcom's 18.4 Mbit/s / 8); Pixel 6a WiFi transmit 470 mA x 3.7 V
RECEIVE_W = 0.3626  # Pixel 6a WiFi receive 98 mA x 3.7 V: a device at a byte's other home end, in the two consistent frames
BYTES_PER_PARAM, LOCAL_STEPS, COMPRESSION, ACT_BYTES = 2.0, 8.0, 4.0, 2.0
TOKENS_PER_STEP = 8 * 2048  # batch x sequence length
CHARGER, BATTERY_SHARE, BATTERY_EFF = 0.88, 0.5, 0.95
# the whole laptop at its input: the GPU power of the run its rate is read from (36 W at 4.8905 TFLOPS on an M1 Max,
# tf_metal_m1_max_bertlarge_fp32) at the M2 Pro's rate, 36 x 6.8 / 10.4 = 23.54 W, + Apple's 7 W idle wall figure for the
# M2 Pro Mac mini through the charger, 7 x 0.88 = 6.16 W: 29.70 W as entered (rounded to the hundredth)
REALISTIC_LAPTOP_W = round(36.0 * 6.8 / 10.4 + 7.0 * CHARGER, 2)
WALL = (1 - BATTERY_SHARE + BATTERY_SHARE / BATTERY_EFF) / CHARGER  # 1.1663
# Table 1 times (paper): laptop 480 s, phone 3,510 s, RTX A5000 250 s; H100 SXM = 4.95x the A5000 (Lambda, bridged)
LAPTOP_S, PHONE_S, A5000_S, SPEEDUP = 480.0, 3510.0, 250.0, 4.95
# the realistic headline (measured_rates): the H100's measured BF16 rate of MPT 1b (staging.training_throughput
# llmfoundry_h100_1b_bf16_s2048_g8 achieved_tflops, 6 N D work) and each device's measured share of its FP32 peak
H100_MEASURED_TFLOPS = 358.8992
LAPTOP_SHARE, LAPTOP_TFLOPS, PHONE_SHARE, PHONE_TFLOPS = 0.4242, 6.8, 0.033564, 1.38


# per scenario and pattern, typed out from the formulas the test checks: online share, link, radio,
# wall factor, window and the network's kWh/GB by the frame's headline method at the pattern's ends
# (home ends: 2 between devices, 1 to a server, which adds the fixed network at its end):
# as_published (radio): network + router once; attributional (volume): home x (network + router)
# + server x network; consequential (marginal): (core + home x access) W per Mbit/s x 8,000 Mbit
FRAME_NETWORK_SQL = """
select scenario_id, pattern, device_online_fraction as online, edge_bandwidth_mb_per_s as bandwidth_mb_per_s,
       wifi_radio_power_w as radio_w,
       case when accounting_frame in ('attributional', 'consequential') and home = 2 then wifi_receive_power_w else 0.0 end as receive_w,
       link_utilisation, edge_hours_per_day * 3600 * 365 * horizon_years as window_s,
       (1 - battery_throughput_share + battery_throughput_share / battery_round_trip_efficiency) / edge_charger_efficiency as wall,
       case when accounting_frame = 'consequential' then (network_marginal_w_per_mbps + home * router_marginal_w_per_mbps) * 8000 / 3.6e6
            when accounting_frame = 'attributional' then home * (network_kwh_per_gb + router_kwh_per_gb) + server * network_kwh_per_gb
            else network_kwh_per_gb + router_kwh_per_gb end as kwh_per_gb
from core.scenarios
cross join (values ('radio_window', 1, 1), ('idealized', 1, 1), ('parameter_server', 1, 1), ('ring_allreduce', 2, 0),
                   ('pipeline', 2, 0)) as ends (pattern, home, server)
"""


def rows(path: Path, sql: str, params: dict | None = None) -> list[dict]:
    with open_readonly(path) as con:
        return query_pl(con, sql, params or {}).to_dicts()


def realistic_tokens() -> float:
    """Tokens the H100 trains over the horizon at its measured rate (the realistic headline, measured_rates): 4.35e12."""
    return H100_MEASURED_TFLOPS * 1e12 * 3600 * H_CLOUD * 365 * T_YEARS / (6 * OPT13_PARAMS)


def realistic_laptops() -> int:
    """Laptops per H100 on measured_rates: 358.9 x 24 / (0.4242 x 6.8 x 8 x online / slowdown) = 666.5 -> 667."""
    return math.ceil(H100_MEASURED_TFLOPS * H_CLOUD / (LAPTOP_SHARE * LAPTOP_TFLOPS * H_EDGE * ONLINE / SLOWDOWN))


def test_measured_throughput_counts_and_headline(built_warehouse: Path) -> None:
    # devices per GPU = (t_dev / (t_A5000 / speedup)) x 24 / (8 x online / slowdown), at least the memory floor
    laptops = math.ceil(LAPTOP_S / (A5000_S / SPEEDUP) * H_CLOUD / (H_EDGE * ONLINE / SLOWDOWN))  # 50.91 -> 51
    phones = math.ceil(PHONE_S / (A5000_S / SPEEDUP) * H_CLOUD / (H_EDGE * ONLINE / SLOWDOWN))  # 372.3 -> 373
    assert (laptops, phones) == (51, 373)
    got = {(r["scenario_id"], r["device_class"]): (r["devices_per_gpu"], r["is_headline"]) for r in rows(
        built_warehouse, "select scenario_id, device_class, devices_per_gpu, is_headline from marts.fleet_equivalence "
                         "where basis = 'measured_throughput'")}
    for frame in ("realistic_attributional", "realistic_consequential"):
        assert got[(frame, "laptop")] == (laptops, False)
        assert got[(frame, "phone")] == (phones, False)
    # every scenario has the basis; the paper's (online 1, slowdown 1): 480 / 50.5 x 3 = 28.5 -> 29 laptops, but
    # at their 6.8 TFLOPS peak 29 M2 Pros cannot do the H100's 67 TFLOPS x 24 h: the basis counts the 30 that can
    scenarios = {s for s, in one_column(built_warehouse, "select scenario_id from core.scenarios")}
    assert {s for s, _ in got} == scenarios
    measured = math.ceil(LAPTOP_S / (A5000_S / SPEEDUP) * 3)
    at_peak = math.ceil(H100_FP32_TFLOPS * H_CLOUD / (6.8 * H_EDGE))
    assert (measured, at_peak) == (29, 30)
    assert got[("paper_text", "laptop")] == (at_peak, False)


def test_measured_rates_counts_and_headline(built_warehouse: Path) -> None:
    """The realistic headline: devices per GPU from both sides' measured training TFLOPS, from the rows.

    laptops = 358.9 x 24 / (0.4242 x 6.8 x 8 x online / slowdown) = 666.5 -> 667; phones = 358.9 x 24 /
    (0.033564 x 1.38 x 8 x online / slowdown) = 41,510.0 -> 41,511 (the memory floor, 3 devices, does not bind)."""
    with open_readonly(built_warehouse) as con:
        gpu_rate = query_pl(con, "select achieved_tflops from staging.training_throughput "
                                 "where throughput_id = 'llmfoundry_h100_1b_bf16_s2048_g8'").item()
        shares = dict(query_pl(con, "select device_class, device_measured_share from core.scenario_devices "
                                    "where scenario_id = 'realistic_consequential'").rows())
    assert gpu_rate == H100_MEASURED_TFLOPS
    assert shares == {"laptop": LAPTOP_SHARE, "phone": PHONE_SHARE}
    laptops = realistic_laptops()
    phones = math.ceil(H100_MEASURED_TFLOPS * H_CLOUD / (PHONE_SHARE * PHONE_TFLOPS * H_EDGE * ONLINE / SLOWDOWN))
    assert (laptops, phones) == (667, 41511)
    got = {(r["scenario_id"], r["device_class"]): r for r in rows(
        built_warehouse, "select scenario_id, device_class, devices_per_gpu, is_headline, implied_device_utilisation, gpu_rate_id "
                         "from marts.verdict where basis = 'measured_rates' and network_method in ('volume', 'marginal')")}
    assert set(got) == {(f, c) for f in ("realistic_attributional", "realistic_consequential") for c in ("laptop", "phone")}
    for frame in ("realistic_attributional", "realistic_consequential"):
        assert (got[(frame, "laptop")]["devices_per_gpu"], got[(frame, "phone")]["devices_per_gpu"]) == (laptops, phones)
        for device_class, share, count in (("laptop", LAPTOP_SHARE, laptops), ("phone", PHONE_SHARE, phones)):
            row = got[(frame, device_class)]
            assert row["is_headline"] and row["gpu_rate_id"] == "llmfoundry_h100_1b_bf16_s2048_g8"
            # the devices run at the GPU's measured work over their peak: just below their measured share
            tflops = LAPTOP_TFLOPS if device_class == "laptop" else PHONE_TFLOPS
            utilisation = H100_MEASURED_TFLOPS * H_CLOUD * SLOWDOWN / (count * ONLINE * tflops * H_EDGE)
            assert row["implied_device_utilisation"] == pytest.approx(utilisation, rel=1e-9)
            assert utilisation <= share
    # measured_throughput stays beside it, with no measured GPU row
    ids = one_column(built_warehouse, "select distinct gpu_rate_id from marts.verdict where basis = 'measured_throughput'")
    assert ids == [(None,)]


def one_column(path: Path, sql: str) -> list[tuple]:
    with open_readonly(path) as con:
        return query_pl(con, sql).rows()


def test_finding_1_online_share_counted_once(built_warehouse: Path) -> None:
    r = rows(built_warehouse, "select devices, comm_gb, comm_kwh, link_time_share from marts.communication "
                              "where scenario_id = 'realistic_consequential' and device_class = 'laptop' "
                              "and model_id = 'OPT-1.3B' and pattern = 'radio_window'")[0]
    online_devices = realistic_laptops() * ONLINE  # 667 x 0.7 = 466.9
    # the radio is busy for each online device's whole window: 35.7 x 31,536,000 s x 1.739 W / 3.6e6 kWh
    radio_kwh = online_devices * WINDOW_S * 1.0 * RADIO_W / 3.6e6 * WALL
    # the idealized pattern's bytes: tokens x p x b / (tokens per step x local steps x compression)
    needed_gb = realistic_tokens() * OPT13_PARAMS * BYTES_PER_PARAM / (TOKENS_PER_STEP * LOCAL_STEPS * COMPRESSION) / 1e9
    marginal_kwh_per_gb = (0.03 + 0.02) * 8000 / 3.6e6  # Malmodin: 400 J per GB (core, and one home end: to a controller)
    assert r["devices"] == realistic_laptops() == 667
    assert r["comm_gb"] == pytest.approx(needed_gb, rel=1e-9)
    assert r["comm_kwh"] == pytest.approx(radio_kwh + needed_gb * marginal_kwh_per_gb, rel=1e-9)
    # the link's share of the window: bytes / online devices / bandwidth / window (not / (window x online))
    share = needed_gb * 1e9 / online_devices / BANDWIDTH_B_PER_S / WINDOW_S
    assert r["link_time_share"] == pytest.approx(share, rel=1e-9)
    # 21,587,839 GB / 466.9 / 2.3 MB/s / 31,536,000 s (counting the online share twice would give 0.911)
    assert r["link_time_share"] == pytest.approx(0.6375, abs=1e-4)


def test_finding_2_network_energy_on_needed_bytes_only(built_warehouse: Path) -> None:
    comm = pl.DataFrame(rows(built_warehouse, "select scenario_id, device_class, model_id, pattern, devices, comm_gb, comm_kwh "
                                              "from marts.communication"))
    params = pl.DataFrame(rows(built_warehouse, FRAME_NETWORK_SQL))
    joined = comm.join(params, on=["scenario_id", "pattern"])
    online = joined["devices"] * joined["online"]
    # the sender's radio for the bytes' time at the link rate, and in the two consistent frames a receiving device's
    radio_time_kwh = (joined["comm_gb"] * 1e9 / (joined["bandwidth_mb_per_s"] * 1e6) * (joined["radio_w"] + joined["receive_w"]) / 3.6e6
                      * joined["wall"])
    radio_window_kwh = online * joined["window_s"] * joined["link_utilisation"] * joined["radio_w"] / 3.6e6 * joined["wall"]
    radio = pl.Series([w if p == "radio_window" else t for p, w, t in zip(joined["pattern"], radio_window_kwh, radio_time_kwh, strict=True)])
    network_kwh = joined["comm_kwh"] - radio
    charged_gb = pl.Series([n / k if k > 0 else 0.0 for n, k in zip(network_kwh, joined["kwh_per_gb"], strict=True)])
    # network energy is charged on exactly the bytes the pattern needs, at its ends
    assert np.allclose(charged_gb.to_numpy(), np.where(joined["kwh_per_gb"] > 0, joined["comm_gb"], 0.0), rtol=1e-6, atol=1e-6)
    # the radio window pattern needs the idealized pattern's bytes, not the links' capacity
    wide = comm.filter(pl.col("pattern").is_in(["radio_window", "idealized"])).pivot(
        on="pattern", index=["scenario_id", "device_class", "model_id"], values="comm_gb")
    assert np.allclose(wide["radio_window"].to_numpy(), wide["idealized"].to_numpy(), rtol=1e-12)
    # realistic attributional laptops: capacity would be 466.9 x 2.3 MB/s x window = 33,866 TB; needed is 21,588 TB
    capacity_gb = realistic_laptops() * ONLINE * BANDWIDTH_B_PER_S * WINDOW_S / 1e9
    needed = wide.filter(scenario_id="realistic_attributional", device_class="laptop", model_id="OPT-1.3B")["radio_window"].item()
    assert capacity_gb == pytest.approx(3.3866e7, rel=1e-4) and needed == pytest.approx(2.1588e7, rel=1e-4)
    # every 'with communication' figure names its pattern
    named = dict(one_column(built_warehouse, "select distinct scenario_id, comm_pattern from marts.fleet_equivalence"))
    assert named["paper_text"] == "radio_window" and named["realistic_consequential"] == "pipeline"


def test_finding_3_pipeline_stages_capped_at_layers(built_warehouse: Path) -> None:
    # paper_text phones: 69 stated phones, whose work is what the paper equates them with: 69 x 1.38 TFLOPS x 8 h / 24 h;
    # fp32 on the wire, a sync every step, no compression
    tokens = 69 * 1.38 * H_EDGE / H_CLOUD * 1e12 * 3600 * H_CLOUD * 365 * T_YEARS / (6 * OPT13_PARAMS)
    per_boundary = 2 * OPT13_HIDDEN * 2  # activations forward + gradients back, fp16: 8,192 B per token
    allreduce = 2 * OPT13_PARAMS * 4 / TOKENS_PER_STEP  # 634,766 B per token
    assert allreduce / 69 > per_boundary  # so one stage per device, capped at the model's 24 layers
    stages = min(69, OPT13_LAYERS)
    expected_gb = tokens * (per_boundary * (stages - 1) + allreduce * (1 - stages / 69)) / 1e9
    r = rows(built_warehouse, "select pipeline_stages, comm_gb from marts.communication where scenario_id = 'paper_text' "
                              "and device_class = 'phone' and model_id = 'OPT-1.3B' and pattern = 'pipeline'")[0]
    assert r["pipeline_stages"] == 24
    assert r["comm_gb"] == pytest.approx(expected_gb, rel=1e-9)
    # activations cross 23 boundaries, not N - 1 = 68 (68 / 23 = 2.96x fewer activation bytes); the
    # 69 / 24 = 2.9 pipeline replicas all-reduce their fp32 gradients every step on top
    activation_gb = tokens * per_boundary * (stages - 1) / 1e9
    assert tokens * per_boundary * (69 - 1) / 1e9 / activation_gb == pytest.approx(68 / 23)
    # realistic laptops: activations cost more per token than the replicas' all-reduce per device, so
    # the fewest stages that hold the 20.8 GB training state: ceil(20.8 / (16 x 0.5)) = 3 for 667 laptops
    allreduce_realistic = 2 * OPT13_PARAMS * BYTES_PER_PARAM / (TOKENS_PER_STEP * LOCAL_STEPS)  # 39,673 B per token
    n0 = realistic_laptops() * ONLINE
    assert per_boundary > allreduce_realistic / n0
    base_gb = realistic_tokens() * (per_boundary * 2 + allreduce_realistic * (1 - 3 / n0)) / COMPRESSION / 1e9
    # ... but that is more than 2.3 MB/s per laptop, so the fleet is resized at its global batch: S stages of n laptops
    # training at once move a (S - 1) + kp (n / S - 1) bytes, a = tokens x 8,192 B / 4, kp = tokens x 39,673 B / 4 x 3 / n0;
    # a pipeline of S stages trains only while all S laptops are online, 0.7^S of the window, so n training at once
    # take n / 0.7^S laptops, and the resize takes the stage count with the fewest laptops
    assert base_gb * 1e9 / n0 / BANDWIDTH_B_PER_S / WINDOW_S > 1
    r = rows(built_warehouse, "select devices, pipeline_stages, memory_feasible, comm_gb, link_time_share from marts.communication "
                              "where scenario_id = 'realistic_consequential' and device_class = 'laptop' "
                              "and model_id = 'OPT-1.3B' and pattern = 'pipeline'")[0]
    a = realistic_tokens() * per_boundary / COMPRESSION
    kp = realistic_tokens() * allreduce_realistic / COMPRESSION * 3 / n0
    # each laptop sends at most 94.15% of its link's rate (link_headroom), in pipelines of at most 8 stages
    # (max_pipeline_stages); the fewest stages that hold the state and its activations are still 3
    lw = BANDWIDTH_B_PER_S * WINDOW_S * 0.9415
    fleets = [(max((a * (s - 1) - kp) / (lw - kp / s), s) / ONLINE ** s, s) for s in range(3, 8 + 1) if lw > kp / s]
    best = min(fleets)
    assert r["pipeline_stages"] == best[1] >= 3
    assert r["devices"] == math.ceil(best[0] - 1e-9) > realistic_laptops()
    # 5 stages of 2,763 laptops training at once (16,441 x 0.7^5): 16,441 laptops; the fewest training at once
    # (at 8 stages, the deepest allowed) complete less often and would need more
    assert (best[1], r["devices"]) == (5, 16441)
    assert min(fleets, key=lambda f: f[0] * ONLINE ** f[1])[1] == 8 > best[1]
    assert r["memory_feasible"] and r["link_time_share"] <= 0.9415 * (1 + 1e-9)
    n = r["devices"] * ONLINE ** best[1]
    assert r["comm_gb"] == pytest.approx((a * (best[1] - 1) + kp * (n / best[1] - 1)) / 1e9, rel=1e-9)


def test_finding_4_no_impossible_values(built_warehouse: Path) -> None:
    powers = [p for p, in one_column(built_warehouse, "select train_power_w_for_r4 from marts.fleet_equivalence")]
    assert all(p is None or p >= 0 for p in powers)
    # realistic_attributional laptops: 42 laptops' per-use-hour embodied carbon alone exceeds cloud / 4 -> null
    cloud, embodied, power = one(built_warehouse, "select cloud_total_kgco2e, edge_embodied_kgco2e, train_power_w_for_r4 "
                                                  "from marts.fleet_equivalence where scenario_id = 'realistic_attributional' "
                                                  "and device_class = 'phone' and basis = 'measured_throughput'")
    assert embodied > cloud / 4 and power is None
    # lifecycle: a laptop's training electricity under realistic counts the online share and the wall losses
    op = one(built_warehouse, "select operational_kgco2e from marts.lifecycle_carbon where scenario_id = 'realistic_consequential' "
                              "and device_class = 'laptop'")[0]
    assert op == pytest.approx(ONLINE * REALISTIC_LAPTOP_W * WALL * H_EDGE * 365 * T_YEARS * CI_MARGINAL / 1e6, rel=1e-9)  # 140.1 kg


def test_finding_5_memory_floor_is_not_an_equivalence(built_warehouse: Path) -> None:
    bases = {b for b, in one_column(built_warehouse, "select distinct basis from marts.fleet_equivalence")}
    assert "memory_capacity" not in bases
    # OPT-1.3B's 20.8 GB of training state: 3 laptops (8 GB usable) or 6 phones (4 GB) per GPU (72 GB usable: 1)
    floors = dict(one_column(built_warehouse, "select distinct device_class, devices_memory_floor from marts.fleet_equivalence "
                                              "where scenario_id = 'paper_text'"))
    assert floors == {"laptop": math.ceil(20.8e9 / 8e9), "phone": math.ceil(20.8e9 / 4e9)}
    assert "memory_capacity" not in Path("dashboards/sql/fleet.sql").read_text().split("--")[-1]


def test_finding_6_draws_describe_their_scenario(built_warehouse: Path) -> None:
    # the paper counts no network energy: its scenarios never draw it, and no paper-status input leaves the paper
    with open_readonly(built_warehouse) as con:
        params = query_pl(con, "select * from core.scenario_parameters")
        frames = dict(con.execute("select scenario_id, accounting_frame from core.scenarios").fetchall())
    for scenario, frame in frames.items():
        drawn = {p.parameter: p for p in ranged_parameters(params.filter(pl.col("scenario_id") == scenario))}
        if frame == "as_published":
            assert "network_kwh_per_gb" not in drawn
            statuses = dict(params.filter(scenario_id=scenario).select("parameter", "status").rows())
            paper_drawn = [p for p in drawn.values() if statuses[p.parameter] == "paper" and p.distribution != "normal"]
            assert paper_drawn == [], scenario
    # paper_text laptops, compute only: the deterministic R lies inside its own Monte Carlo p05-p95; the paper's
    # idealized traffic cannot cross its 10 MB/s link, so no draw of it is feasible and it has no range
    det = one(built_warehouse, "select reduction_factor from marts.communication where scenario_id = 'paper_text' "
                               "and device_class = 'laptop' and model_id = 'OPT-1.3B' and pattern = 'idealized'")[0]
    p05, p95 = one(built_warehouse, "select p05, p95 from marts.uncertainty where scenario_id = 'paper_text' and device_class = 'laptop' "
                                    "and pattern = 'none' and metric = 'reduction_factor' and is_headline")
    r = one(built_warehouse, "select reduction_factor from marts.verdict where scenario_id = 'paper_text' and device_class = 'laptop' "
                             "and is_headline")[0]
    assert p05 <= r <= p95 and det < r
    infeasible = one(built_warehouse, "select n_feasible, p05 from marts.uncertainty where scenario_id = 'paper_text' "
                                      "and device_class = 'laptop' and pattern = 'idealized' and metric = 'reduction_factor' and is_headline")
    assert infeasible == (0, None)


def test_monte_carlo_brackets_every_deterministic_r(built_warehouse: Path) -> None:
    with open_readonly(built_warehouse) as con:
        con.execute("set threads to 2")
        with model_view(con, scenario_inputs(con), own_pattern=True, designs=True, basis_filter="headline_and_measured", methods="all"):
            det = query_pl(con, "select scenario_id, device_class, basis, pattern, network_method, embodied_policy, resize_power, "
                                "reduction_factor, design_admissible as link_feasible from model_evaluation")
        mc = query_pl(con, "select scenario_id, device_class, basis, pattern, network_method, embodied_policy, resize_power, p05, p95, "
                           "share_link_feasible from marts.uncertainty where metric = 'reduction_factor' and not best_design")
    joined = det.join(mc, on=["scenario_id", "device_class", "basis", "pattern", "network_method", "embodied_policy", "resize_power"],
                      how="left")
    assert joined.height == mc.height
    # a range over the feasible draws exists wherever any draw is feasible, and wherever the deterministic fleet is
    assert joined.filter(pl.col("p05").is_null() & (pl.col("share_link_feasible") > 0)).height == 0
    assert joined.filter(pl.col("p05").is_null() & pl.col("link_feasible")).height == 0
    joined = joined.filter(pl.col("p05").is_not_null() & pl.col("link_feasible"))
    outside = joined.filter((pl.col("reduction_factor") < pl.col("p05") / 2) | (pl.col("reduction_factor") > pl.col("p95") * 2))
    assert outside.height == 0, outside


def test_every_scenario_has_a_frame_and_the_realistic_pair_extends_one_base(built_warehouse: Path) -> None:
    frames = dict(one_column(built_warehouse, "select scenario_id, accounting_frame from core.scenarios"))
    assert frames["paper_text"] == frames["paper_figure"] == frames["vendor_fp32"] == "as_published"
    assert frames["realistic_attributional"] == "attributional" and frames["realistic_consequential"] == "consequential"
    defined = dict(one_column(built_warehouse, "select scenario_id, defined_in from core.scenario_parameters "
                                               "where parameter = 'cloud_node_overhead_w'"))
    assert defined["realistic_attributional"] == defined["realistic_consequential"]
    assert defined["realistic_consequential"].startswith("scenarios/realistic_base.csv:")


def test_frames_choose_network_energy_and_cloud_embodied(built_warehouse: Path) -> None:
    # consequential: Malmodin's marginal 0.05 W per Mbit/s -> 400 J = 1.11e-4 kWh per GB
    # attributional: Carbon Trust averages 0.0065 (network) + 0.025 (router) kWh/GB
    # (a pipeline's byte passes two homes: both access lines and routers; the core once under the power model)
    got = {r["scenario_id"]: r["kwh_per_gb"] for r in rows(built_warehouse, FRAME_NETWORK_SQL) if r["pattern"] == "pipeline"}
    assert got["realistic_consequential"] == pytest.approx((0.03 + 2 * 0.02) * 8000 / 3.6e6, rel=1e-12)
    assert got["realistic_attributional"] == pytest.approx(2 * (0.0065 + 0.025), rel=1e-12)
    assert got["paper_text"] == 0
    # the cloud node: 0.76 x (700 + 575) W x 24 h x 1,095 d x 1.1 PUE x 1.05 x the grid + embodied 318 kg; the grid is
    # the 0.367 kg/kWh average (attributional) or the 0.65983 kg/kWh marginal factor (consequential)
    operational_per_g = UTIL * (700 + 575) * H_CLOUD * 365 * T_YEARS / 1000 * 1.1 * 1.05 / 1000
    expected = {"realistic_consequential": (CI_MARGINAL, 318.0), "realistic_attributional": (CI, 318.0 * T_YEARS / 5)}  # amortised over 5 years
    for scenario, (grid, emb) in expected.items():
        total = one(built_warehouse, "select total_kgco2e from marts.lifecycle_carbon where scenario_id = $s and device_class = 'cloud_gpu'",
                    {"s": scenario})[0]
        assert total == pytest.approx(operational_per_g * grid + emb, rel=1e-9)


def test_network_power_model_rows_are_sourced(built_warehouse: Path) -> None:
    rows_ = rows(built_warehouse, "select factor_id, quantity, unit, value, citation, source_id from staging.network_energy "
                                  "where factor_set = 'malmodin2020_fixed_power_model'")
    units = {r["quantity"]: r["unit"] for r in rows_}
    assert units == {"network_baseline_power": "W", "network_marginal_power": "W/(Mbit/s)"}
    assert all(r["citation"].startswith("Malmodin") and r["source_id"] for r in rows_)
    slopes = sum(r["value"] for r in rows_ if r["quantity"] == "network_marginal_power")
    assert slopes == pytest.approx(0.05)


def test_consequential_battery_wear_and_early_replacement(built_warehouse: Path) -> None:
    # one phone under realistic_consequential, 3 years: training cycles = 0.5 x 10 W x 8 h x 0.7 x 1,095 d / 15 Wh = 2,044
    cycles = BATTERY_SHARE * 10.0 * H_EDGE * ONLINE * 365 * T_YEARS / 15.0
    nonuse = 66.0 * 0.85  # iPhone 15 Pro total x the non-use share (realistic_base: its range's median)
    # the phone's own battery is worn out at its 1,000 rated cycles (5% of the non-use embodied carbon, in full); the other
    # 1,044 cycles take ceil(2,044 / 1,000) - 1 = 2 replacement batteries of 15 Wh x 120 kgCO2e/kWh = 1.8 kg each
    assert cycles == pytest.approx(2044, abs=0.5)
    wear = nonuse * 0.05 * min(cycles, 1000) / 1000 + (math.ceil(cycles / 1000) - 1) * 15 / 1000 * 120
    # the battery lasts min(1,000 / 300, 3-year life) = 3 y without training, 1,000 / (300 + 681.3) = 1.02 y with it
    lost = max(min(1000 / 300, 3.0) - 1000 / (300 + cycles / T_YEARS), 0)
    assert lost > 0
    # no study gives the share of owners who replace the whole phone: the headline carries 0, so battery wear alone
    per_phone = one(built_warehouse, "select embodied_per_device_kgco2e from marts.embodied_allocation "
                                     "where scenario_id = 'realistic_consequential' and device_class = 'phone' and policy = 'battery_wear'")[0]
    assert per_phone == pytest.approx(wear, rel=1e-9)
    # at a share s, those s replace the phone (its life lost) and carry no battery wear on top
    con = duckdb.connect()
    from pipelines.warehouse.tables import install_macros
    install_macros(con)
    replaced = con.execute("select embodied_allocated_kgco2e(1.0, 0.0, $nonuse, 0.0, 0.05, $cycles, 1000.0, 8, 4, 300.0, 0.3, 3.0, 3.0, 1.8)",
                           {"nonuse": nonuse, "cycles": cycles}).fetchone()[0]
    assert replaced == pytest.approx(0.3 * nonuse * min(lost / 3.0, 1) + 0.7 * wear, rel=1e-9)


def test_joint_draws_move_the_gpu_variant_and_the_grid_together(built_warehouse: Path) -> None:
    with open_readonly(built_warehouse) as con:
        base = scenario_inputs(con).filter(pl.col("scenario_id") == "realistic_consequential")
        params = query_pl(con, "select * from core.scenario_parameters where scenario_id = 'realistic_consequential'")
    # half the draws on the PCIe variant; the grid ranged on both sides and shared
    params = params.with_columns(
        pl.when(pl.col("parameter") == "cloud_gpu_alt_share").then(0.5).otherwise(pl.col("value")).alias("value"),
        pl.when(pl.col("parameter").str.ends_with("grid_gco2e_per_kwh")).then(pl.lit("triangular")).otherwise(pl.col("distribution"))
        .alias("distribution"),
    )
    draws = draw_inputs(base, params, 4000, seed=3)
    drawn = pl.from_arrow(draws.drawn)
    assert 0.45 < drawn["cloud_gpu_variant"].mean() < 0.55
    assert drawn["cloud_grid_gco2e_per_kwh"].std() > 10
    assert (drawn["cloud_grid_gco2e_per_kwh"] == drawn["edge_grid_gco2e_per_kwh"]).all()
    con = duckdb.connect()
    with draw_tables(con, draws.drawn, draws.constants) as (inputs, devices), model_view(con, inputs, devices=devices, patterns=["none"]):
        evaluated = query_pl(con, "select variant_id, device_class, cloud_total_kgco2e, devices from model_evaluation where device_class = 'laptop'")
    joined = evaluated.join(drawn.select("variant_id", "cloud_gpu_variant", "cloud_utilisation", "cloud_grid_gco2e_per_kwh",
                                         "cloud_pue", "cloud_comm_energy_share"), on="variant_id")
    # the PCIe draws carry the PCIe card's 350 W (the SXM's 700 W otherwise), with the node's host share on top
    power = np.where(joined["cloud_gpu_variant"] == 1, 350.0, 700.0) + 575.0
    operational = (power * joined["cloud_utilisation"] * H_CLOUD * 365 * T_YEARS * joined["cloud_pue"]
                   * (1 + joined["cloud_comm_energy_share"]) * joined["cloud_grid_gco2e_per_kwh"] / 1e6)
    embodied = joined["cloud_total_kgco2e"].to_numpy() - operational.to_numpy()
    assert np.all(embodied > 100) and np.all(embodied < 600)
    # and its measured speed: 3x the A5000 instead of 4x (triangular draws around those), so more laptops
    mean_devices = joined.group_by("cloud_gpu_variant").agg(pl.col("devices").mean()).sort("cloud_gpu_variant")["devices"]
    assert mean_devices[0] > mean_devices[1]


def test_frame_consistency_check_names_what_breaks() -> None:
    from pipelines.model.methods import frame_rows, workload_rows

    con = duckdb.connect()
    con.execute("create schema core")
    con.register("frame_rows", frame_rows())
    con.execute("create table core.frames as select * from frame_rows")
    con.register("workload_rows", workload_rows())
    con.execute("create table core.workload_kinds as select * from workload_rows")
    con.execute("create table core.scenarios as select * from (values "
                "('broken', 'consequential', 'per_use_hour', 0.0, 0.0, 0.03, 'gpu_hours', 0.0, cast(null as double)), "
                "('unknown', 'marginal', 'none', 0.05, 0.02, 0.03, 'horizon', 0.0, 0.36), "
                "('paper', 'as_published', 'none', 0.0, 0.0, 0.0, 'horizon', 1.0, null)) "
                "as s (scenario_id, accounting_frame, edge_embodied_policy, network_marginal_w_per_mbps, router_marginal_w_per_mbps, "
                "network_kwh_per_gb, workload_kind, workload_gpu_hours, wifi_receive_power_w), "
                "(select 0.0 as workload_tokens, 0.0 as workload_mfu)")
    problems = [(s, p) for s, _, p in con.execute(sql_text("checks/frame_consistency.sql")).fetchall()]
    # a name out of its table on its own is the bounds check's (tests/ingest/test_parameter_bounds.py), which runs before
    # core.scenarios is built; the frame's row says what the scenario must agree with
    assert problems == [
        ("broken", "consequential frame charges edge embodied carbon by battery_wear (edge_embodied_policy = battery_wear)"),
        ("broken", "consequential frame needs a marginal network power (network_ and router_marginal_w_per_mbps)"),
        ("broken", "consequential frame charges the receiving radio (wifi_receive_power_w)"),
        ("broken", "workload_kind gpu_hours needs workload_gpu_hours > 0"),
        ("unknown", "accounting_frame marginal is not a row of core.frames"),
    ]
