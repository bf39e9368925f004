"""marts.claims, given rows -> expected rows: each kind of claim recomputed from its rows, judged against its
published bounds; a claim with no case is not reproducible and names what is missing."""

from __future__ import annotations

import pytest

from tests.marts.given_rows import run_mart

CLAIM = {"paper": "A et al. 2030", "title": "T", "citation_url": "https://example.org", "quote": "Q", "location": "L",
         "unit": "x", "published_text": "P", "tolerance": 0.05, "case_id": None, "baseline_case_id": None, "missing": None,
         "notes": "N"}
VERDICT = {"is_headline": True, "is_headline_method": True, "is_headline_policy": True, "is_headline_resize_power": True}


def _claims(given: dict) -> dict[str, dict]:
    # a row of each table that no claim reads, where the test gives none
    tables = {"marts.verdict": [{**VERDICT, "scenario_id": "unread", "device_class": "x", "reduction_factor": 1.0}],
              "marts.claim_traffic": [{"scenario_id": "unread", "network_method": "volume", "range_end": "central", "wan_tb": 1.0}],
              "staging.claim_parameters": [{"case_id": "unread", "parameter": "x", "value": 1.0}]}
    tables.update(given)
    return {r["claim_id"]: r for r in run_mart("marts.claims", tables)}


def test_a_ratio_claim_is_judged_on_its_scenario_s_classes() -> None:
    """R of 3 (phone) and 9 (laptop) against a published 4-8: the ends miss by 25% and 12.5%, so it differs."""
    claims = [{**CLAIM, "claim_id": "r", "quantity": "reduction_factor", "published_low": 4.0, "published_high": 8.0, "case_id": "s"}]
    verdict = [{**VERDICT, "scenario_id": "s", "device_class": "phone", "reduction_factor": 3.0},
               {**VERDICT, "scenario_id": "s", "device_class": "laptop", "reduction_factor": 9.0},
               {**VERDICT, "scenario_id": "s", "device_class": "laptop", "reduction_factor": 99.0, "is_headline": False},
               {**VERDICT, "scenario_id": "other", "device_class": "laptop", "reduction_factor": 5.0}]
    row = _claims({"staging.claims": claims, "marts.verdict": verdict})["r"]
    assert (row["recomputed_low"], row["recomputed_high"], row["recomputed_value"]) == (3.0, 9.0, 6.0)
    assert row["relative_error"] == pytest.approx(0.25)
    assert row["status"] == "differs" and row["verdict"].startswith("P does not hold as published")


def test_a_bandwidth_claim_is_the_baseline_s_bytes_over_its_own() -> None:
    """400 TB against 1 TB at central values (400x, reproduced); 200x at the low ends."""
    claims = [{**CLAIM, "claim_id": "b", "quantity": "bandwidth_ratio", "published_low": 400.0, "published_high": 400.0,
               "case_id": "own", "baseline_case_id": "base"}]
    traffic = [{"scenario_id": s, "network_method": m, "range_end": e, "wan_tb": tb}
               for s, e, tb in [("own", "central", 1.0), ("own", "low", 0.5), ("base", "central", 400.0), ("base", "low", 100.0)]
               for m in ("volume", "marginal")]
    row = _claims({"staging.claims": claims, "marts.claim_traffic": traffic})["b"]
    assert (row["recomputed_value"], row["recomputed_low"], row["recomputed_high"]) == (400.0, 200.0, 400.0)
    assert row["status"] == "reproduced" and row["relative_error"] == 0.0


def test_an_emission_ratio_is_the_case_s_carbon_over_each_baseline_s() -> None:
    """10 kWh at 50 g against 10 kWh at 500 g and at 1,000 g: 10% and 5%, a published 5-10% reproduced."""
    claims = [{**CLAIM, "claim_id": "e", "quantity": "emission_ratio", "unit": "fraction", "published_low": 0.05,
               "published_high": 0.10, "case_id": "c"}]
    params = [{"case_id": "c", "parameter": p, "value": v}
              for p, v in [("energy_kwh", 10.0), ("gco2e_per_kwh", 50.0), ("baseline_energy_kwh", 10.0),
                           ("baseline_gco2e_per_kwh_x", 500.0), ("baseline_gco2e_per_kwh_y", 1000.0)]]
    row = _claims({"staging.claims": claims, "staging.claim_parameters": params})["e"]
    assert (row["recomputed_low"], row["recomputed_high"]) == (pytest.approx(0.05), pytest.approx(0.10))
    assert row["status"] == "reproduced"
    assert "y 10 kg (5.0%)" in row["recomputed_text"] and "x 5 kg (10.0%)" in row["recomputed_text"]


def test_a_claim_without_a_case_is_not_reproducible_and_says_what_is_missing() -> None:
    claims = [{**CLAIM, "claim_id": "n", "quantity": "emissions", "published_low": 5.0, "published_high": 20.0,
               "missing": "the rounds"}]
    row = _claims({"staging.claims": claims})["n"]
    assert row["status"] == "not reproducible" and row["recomputed_value"] is None
    assert row["reason"].startswith("Missing: the rounds")
