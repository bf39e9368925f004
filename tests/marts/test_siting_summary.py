"""marts.siting_summary, given rows -> expected rows: where the answer flips, read from marts.siting. An
edge zone's R is a line in the cloud's intensity, drawn through its cleanest and dirtiest cloud zone:
the cloud intensity at which it crosses R = 1 and R = 4 (the claim's low end); a cloud zone's row is
the share of edge zones (not the mix) where R >= 1 and R >= 4. Each row carries the zone's electricity
demand and rank, its share in the scenario's zones and how far its hourly series runs."""

from __future__ import annotations

import datetime as dt

import pytest

from schemas.vocabulary import CLAIM_LOW
from tests.marts.given_rows import run_mart

CLOUD = {"SE": 20.0, "FR": 50.0, "PL": 700.0}  # cloud zones' gCO2e/kWh
THROUGH = dt.datetime(2023, 12, 31, 23, tzinfo=dt.UTC)


def siting(edge: str, edge_g: float, r_at_zero: float, per_gram: float, *, clouds: tuple[str, ...] = ("SE", "FR", "PL"),
           mix: str | None = None) -> list[dict]:
    """The pairs of one edge zone, R = r_at_zero + per_gram x cloud intensity; 0.1 less with communication."""
    return [{"scenario_id": "s", "accounting_frame": "attributional", "device_class": "laptop", "cloud_zone": c, "edge_zone": edge,
             "edge_mix": mix, "cloud_gco2e_per_kwh": CLOUD[c], "edge_gco2e_per_kwh": edge_g, "cloud_intensity_basis": "hourly",
             "edge_intensity_basis": "hourly", "cloud_fetched_at": THROUGH, "edge_fetched_at": THROUGH,
             "reduction_factor": r_at_zero + per_gram * CLOUD[c], "reduction_factor_with_comm": r_at_zero - 0.1 + per_gram * CLOUD[c],
             "year": 2023} for c in clouds]


def summary() -> dict[tuple[str, str, str], dict]:
    rows = run_mart("marts.siting_summary", {
        "marts.siting": siting("DE", 350.0, 0.2, 0.01) + siting("NO", 20.0, 2.0, 0.02)
                        + siting("mix", 218.0, 0.5, 0.012, clouds=("FR", "PL"), mix="DE 0.6, NO 0.4"),
        "staging.electricity_demand": [
            {"zone": z, "year": 2023, "demand_twh": twh, "country_iso3": iso} for z, twh, iso in (
                ("DE", 510.0, "DEU"), ("FR", 450.0, "FRA"), ("PL", 170.0, "POL"), ("NO", 135.0, "NOR"), ("SE", 130.0, "SWE"),
                ("EU", 2700.0, None))] + [{"zone": "SE", "year": 2022, "demand_twh": 999.0, "country_iso3": "SWE"}],
        "core.zone_intensity": [{"scenario_id": "s", "side": "edge", "zone": "DE", "data_through": THROUGH}],
        "core.scenario_zones": [{"scenario_id": "s", "side": "edge", "zone": "DE", "share": 0.6},
                                {"scenario_id": "s", "side": "edge", "zone": "NO", "share": 0.4}],
    }, {"claim_low": CLAIM_LOW})
    keys = [(r["r_kind"], r["side"], r["zone"]) for r in rows]
    assert keys == [(kind, side, zone) for kind in ("compute_only", "with_comm")
                    for side, zone in (("cloud", "FR"), ("cloud", "PL"), ("cloud", "SE"), ("edge", "DE"), ("edge", "NO"), ("edge", "mix"))]
    return dict(zip(keys, rows, strict=True))


def test_the_cloud_intensity_at_which_an_edge_zones_r_crosses_1_and_4() -> None:
    rows = summary()
    de = rows["compute_only", "edge", "DE"]
    # R 0.4 at SE's 20 g, 7.2 at PL's 700 g: slope 6.8 / 680 = 0.01 per g, R = 0.2 on a carbon-free cloud grid
    assert (de["n_pairs"], de["r_min"], de["r_max"]) == (3, pytest.approx(0.4), pytest.approx(7.2))
    assert de["r_per_cloud_gco2e_per_kwh"] == pytest.approx(0.01, rel=1e-12)
    assert de["r_at_zero_cloud_intensity"] == pytest.approx(0.2, rel=1e-12)
    assert de["cloud_gco2e_per_kwh_for_r1"] == pytest.approx(80.0, rel=1e-12)  # (1 - 0.2) / 0.01
    assert de["cloud_gco2e_per_kwh_for_r4"] == pytest.approx(380.0, rel=1e-12)  # (4 - 0.2) / 0.01
    assert (de["share_r_ge_1"], de["share_r_ge_4"]) == (pytest.approx(1 / 3), pytest.approx(1 / 3))  # PL only
    # with communication R is 0.1 lower: (1 - 0.1) / 0.01 = 90 g
    assert rows["with_comm", "edge", "DE"]["cloud_gco2e_per_kwh_for_r1"] == pytest.approx(90.0, rel=1e-12)
    no = rows["compute_only", "edge", "NO"]
    # R = 2 + 0.02 x cloud: above 1 even on a carbon-free cloud grid, so its R = 1 point is negative: (1 - 2) / 0.02
    assert no["cloud_gco2e_per_kwh_for_r1"] == pytest.approx(-50.0, rel=1e-12)
    assert no["cloud_gco2e_per_kwh_for_r4"] == pytest.approx(100.0, rel=1e-12)  # (4 - 2) / 0.02
    mix = rows["compute_only", "edge", "mix"]
    # the mix's line through FR (1.1) and PL (8.9): 7.8 / 650 = 0.012 per g; (1 - 0.5) / 0.012 = 41.7 g
    assert (mix["edge_mix"], mix["n_pairs"]) == ("DE 0.6, NO 0.4", 2)
    assert mix["cloud_gco2e_per_kwh_for_r1"] == pytest.approx(0.5 / 0.012, rel=1e-12)
    assert (mix["zone_gco2e_per_kwh"], mix["scenario_share"], mix["demand_twh"]) == (218.0, 1.0, None)


def test_a_cloud_zones_share_of_edge_zones_and_each_zones_demand_and_share() -> None:
    rows = summary()
    fr, pl, se = rows["compute_only", "cloud", "FR"], rows["compute_only", "cloud", "PL"], rows["compute_only", "cloud", "SE"]
    # FR against DE (0.7) and NO (3.0); the mix is not an edge zone
    assert (fr["n_pairs"], fr["r_min"], fr["r_max"], fr["share_r_ge_1"], fr["share_r_ge_4"]) == (
        2, pytest.approx(0.7), pytest.approx(3.0), 0.5, 0.0)
    assert (pl["share_r_ge_1"], pl["share_r_ge_4"]) == (1.0, 1.0)  # 7.2 and 16
    assert (se["share_r_ge_1"], se["share_r_ge_4"], se["zone_gco2e_per_kwh"]) == (0.5, 0.0, 20.0)  # 0.4 and 2.4
    assert fr["cloud_gco2e_per_kwh_for_r1"] is None and fr["r_per_cloud_gco2e_per_kwh"] is None  # no line for a cloud zone
    # demand in 2023, ranked among countries (the EU aggregate has no country code): DE 510, FR 450, PL 170, NO 135, SE 130 TWh
    assert [(rows["compute_only", side, z]["demand_twh"], rows["compute_only", side, z]["demand_rank"])
            for side, z in (("edge", "DE"), ("cloud", "FR"), ("cloud", "SE"))] == [(510.0, 1), (450.0, 2), (130.0, 5)]
    de = rows["compute_only", "edge", "DE"]
    assert (de["scenario_share"], de["data_through"]) == (0.6, THROUGH)
    assert (fr["scenario_share"], fr["data_through"]) == (None, None)  # not one of the scenario's cloud zones
