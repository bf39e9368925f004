"""marts.claims, given rows -> expected rows: each kind of claim recomputed from its rows, judged against its
published bounds; a claim with no case is not reproducible and names what is missing."""

from __future__ import annotations

import pytest

from tests.marts.given_rows import run_mart

CLAIM = {"paper": "A et al. 2030", "title": "T", "citation_url": "https://example.org", "quote": "Q", "location": "L",
         "unit": "x", "published_text": "P", "tolerance": 0.05, "case_id": None, "baseline_case_id": None, "part": None,
         "stance": "neutral", "missing": None, "notes": "N"}
VERDICT = {"is_headline": True, "is_headline_method": True, "is_headline_policy": True, "is_headline_resize_power": True}


def _claims_tables() -> dict[str, list[dict]]:
    """A row of each table the mart reads that no claim of a test reads."""
    return {"marts.verdict": [{**VERDICT, "scenario_id": "unread", "device_class": "x", "reduction_factor": 1.0}],
            "marts.claim_traffic": [{"scenario_id": "unread", "network_method": "volume", "range_end": "central", "wan_tb": 1.0}],
            "core.claim_values": [{"case_id": "unread", "parameter": "x", "range_end": "central", "value": 1.0, "value_text": None}],
            "staging.claim_parameters": [{"case_id": "unread", "status": "paper"}],
            "core.scenario_parameters": [{"scenario_id": "unread", "status": "paper"}]}


def _claims(given: dict) -> dict[str, dict]:
    tables = _claims_tables()
    tables.update(given)
    return {r["claim_id"]: r for r in run_mart("marts.claims", tables, method_tables=("core.patterns", "core.network_methods"))}


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
    values = [{"case_id": "c", "parameter": p, "range_end": "central", "value": v, "value_text": None}
              for p, v in [("energy_kwh", 10.0), ("gco2e_per_kwh", 50.0), ("baseline_energy_kwh", 10.0),
                           ("baseline_gco2e_per_kwh_x", 500.0), ("baseline_gco2e_per_kwh_y", 1000.0)]]
    row = _claims({"staging.claims": claims, "core.claim_values": values})["e"]
    assert (row["recomputed_low"], row["recomputed_high"]) == (pytest.approx(0.05), pytest.approx(0.10))
    assert row["status"] == "reproduced"
    assert "y 10 kg (5.0%)" in row["recomputed_text"] and "x 5 kg (10.0%)" in row["recomputed_text"]


def test_a_claim_without_a_case_is_not_reproducible_and_says_what_is_missing() -> None:
    claims = [{**CLAIM, "claim_id": "n", "quantity": "emissions", "published_low": 5.0, "published_high": 20.0,
               "missing": "the rounds"}]
    row = _claims({"staging.claims": claims})["n"]
    assert row["status"] == "not reproducible" and row["recomputed_value"] is None
    assert row["reason"].startswith("Missing: the rounds")


def _session(**values: float | str) -> list[dict]:
    """A federated session case's rows of core.claim_values, every range end at the same value."""
    return [{"case_id": "fl", "parameter": name, "range_end": end, "value": None if isinstance(v, str) else v,
             "value_text": v if isinstance(v, str) else None} for name, v in values.items() for end in ("central", "low", "high")]


def test_a_share_claim_is_its_part_of_a_federated_session_s_energy_by_the_paper_s_method() -> None:
    """A 10M-parameter float32 model: 40 MB each way at 10 MB/s (4 s). Compute 1 W x 240 s = 240 J. Upload: a 2 W
    radio for 4 s = 8 J, plus 0.04 GB x (home end: 0.01 + 0.02 router; server end: 0.01) kWh/GB = 0.0016 kWh = 5,760 J
    by volume. Download: 0.5 W x 4 s = 2 J + 5,760 J. Server: 45 W x 2 x 1.09 x 240 s / 1,000 clients = 23.544 J.
    By volume the upload is 5,768 / 11,793.544 = 48.9%; by marginal energy (core 0.03, access 0.02 W per Mbit/s at the
    home end: 0.04 GB x 8,000 x 0.05 = 16 J) it is 24 / 305.544 = 7.9%. Published 27-29%, between the two methods'
    values but within 5% of neither the central (volume) value: inconclusive."""
    claims = [{**CLAIM, "claim_id": "up", "quantity": "emission_share", "unit": "fraction", "published_low": 0.27,
               "published_high": 0.29, "case_id": "fl", "part": "upload"},
              {**CLAIM, "claim_id": "cpu", "quantity": "emission_share", "unit": "fraction", "published_low": 0.46,
               "published_high": 0.50, "case_id": "fl", "part": "client_compute"}]
    values = _session(comm_pattern="federated_round", cpu_power_w=1.0, cpu_seconds=240.0, radio_tx_power_w=2.0, radio_rx_power_w=0.5,
                      link_mb_per_s=10.0, params=1e7, bytes_per_param=4.0, network_kwh_per_gb=0.01, router_kwh_per_gb=0.02,
                      network_marginal_w_per_mbps=0.03, router_marginal_w_per_mbps=0.02, server_power_w=45.0, servers=2.0,
                      server_pue=1.09, round_seconds=240.0, concurrency=1000.0)
    got = _claims({"staging.claims": claims, "core.claim_values": values})
    total_volume = 240 + (8 + 5760) + (2 + 5760) + 23.544
    total_marginal = 240 + (8 + 16) + (2 + 16) + 23.544
    assert got["up"]["recomputed_value"] == pytest.approx(5768 / total_volume)
    assert got["up"]["recomputed_low"] == pytest.approx(24 / total_marginal)
    assert got["up"]["status"] == "inconclusive"
    assert got["up"]["relative_error"] == pytest.approx(5768 / total_volume / 0.29 - 1)
    assert got["cpu"]["recomputed_value"] == pytest.approx(240 / total_volume)
    assert got["cpu"]["recomputed_high"] == pytest.approx(240 / total_marginal)


def test_a_published_value_inside_the_sourced_range_but_off_the_central_value_is_inconclusive() -> None:
    """400x published; the central recomputation 200x (relative error 50%), but the range ends give 100x-500x,
    which hold 400x: neither confirmed nor refuted, inconclusive. The same range without 400x inside it differs."""
    claims = [{**CLAIM, "claim_id": "b", "quantity": "bandwidth_ratio", "published_low": 400.0, "published_high": 400.0,
               "case_id": "own", "baseline_case_id": "base"},
              {**CLAIM, "claim_id": "c", "quantity": "bandwidth_ratio", "published_low": 600.0, "published_high": 600.0,
               "case_id": "own", "baseline_case_id": "base"}]
    traffic = [{"scenario_id": s, "network_method": "volume", "range_end": e, "wan_tb": tb}
               for s, e, tb in [("own", "central", 1.0), ("own", "low", 2.0), ("own", "high", 1.0),
                                ("base", "central", 200.0), ("base", "low", 200.0), ("base", "high", 500.0)]]
    rows = _claims({"staging.claims": claims, "marts.claim_traffic": traffic})
    inside, outside = rows["b"], rows["c"]
    assert (inside["recomputed_value"], inside["recomputed_low"], inside["recomputed_high"]) == (200.0, 100.0, 500.0)
    assert inside["relative_error"] == pytest.approx(0.5)
    assert inside["status"] == "inconclusive"
    assert inside["verdict"].startswith("P is neither confirmed nor refuted: it lies inside the recomputed range")
    assert inside["reason"].startswith("The published P lies inside the recomputed range")
    assert outside["status"] == "differs"


def test_a_span_over_classes_alone_is_judged_end_by_end_never_inconclusive() -> None:
    """R of 3 (phone) and 9 (laptop) hold 4-8 between them, but each class's R is its own end: differs."""
    claims = [{**CLAIM, "claim_id": "r", "quantity": "reduction_factor", "published_low": 4.0, "published_high": 8.0, "case_id": "s"}]
    verdict = [{**VERDICT, "scenario_id": "s", "device_class": c, "reduction_factor": r} for c, r in (("phone", 3.0), ("laptop", 9.0))]
    assert _claims({"staging.claims": claims, "marts.verdict": verdict})["r"]["status"] == "differs"


def test_a_run_s_emissions_are_its_energy_pue_idle_energy_intensity_and_embodied_carbon() -> None:
    """1,000 GPU-h at 400 W x PUE 1.5 = 600 kWh, plus 400 kWh idle, at 50 g/kWh = 50 kg, plus 20 kg embodied:
    70 kg against a published 70 kg, reproduced; a case that gives its energy (1,000 kWh, no PUE) at 50 g: 50 kg."""
    claims = [{**CLAIM, "claim_id": "run", "quantity": "emissions", "unit": "kgCO2e", "published_low": 70.0, "published_high": 70.0,
               "case_id": "c"},
              {**CLAIM, "claim_id": "given", "quantity": "emissions", "unit": "kgCO2e", "published_low": 60.0, "published_high": 60.0,
               "case_id": "d"}]
    values = [{"case_id": case, "parameter": p, "range_end": e, "value": v, "value_text": None}
              for case, p, v in [("c", "accelerator_hours", 1000.0), ("c", "accelerator_power_w", 400.0), ("c", "pue", 1.5),
                                 ("c", "idle_energy_kwh", 400.0), ("c", "gco2e_per_kwh", 50.0), ("c", "embodied_kgco2e", 20.0),
                                 ("d", "energy_kwh", 1000.0), ("d", "gco2e_per_kwh", 50.0)]
              for e in ("central", "low", "high")]
    rows = _claims({"staging.claims": claims, "core.claim_values": values})
    assert rows["run"]["recomputed_value"] == pytest.approx(70.0) and rows["run"]["status"] == "reproduced"
    assert rows["run"]["recomputed_text"] == "0.07 t CO2e"
    assert rows["given"]["recomputed_value"] == pytest.approx(50.0) and rows["given"]["status"] == "differs"


def test_a_claim_counts_the_inputs_it_rests_on_by_status() -> None:
    """A ratio claim counts its scenario's parameter rows; a claim on cases counts both cases' rows; one with no case none."""
    claims = [{**CLAIM, "claim_id": "r", "quantity": "reduction_factor", "published_low": 4.0, "published_high": 8.0, "case_id": "s"},
              {**CLAIM, "claim_id": "b", "quantity": "bandwidth_ratio", "published_low": 2.0, "published_high": 2.0,
               "case_id": "own", "baseline_case_id": "base"},
              {**CLAIM, "claim_id": "n", "quantity": "emissions", "published_low": 1.0, "published_high": 1.0, "missing": "M"}]
    scenario = [{"scenario_id": "s", "status": s} for s in ("paper", "secondary", "secondary", "assumed", "calibrated")]
    parameters = [{"case_id": c, "status": s} for c, s in (("own", "paper"), ("own", "primary"), ("base", "assumed"), ("x", "paper"))]
    rows = _claims({"staging.claims": claims, "core.scenario_parameters": scenario, "staging.claim_parameters": parameters,
                    "marts.verdict": [{**VERDICT, "scenario_id": "s", "device_class": "laptop", "reduction_factor": 6.0}]})
    assert (rows["r"]["inputs_paper"], rows["r"]["inputs_secondary"]) == (1, 2)
    assert rows["r"]["inputs_by_status"] == "secondary 2, assumed 1, calibrated 1, paper 1"
    assert (rows["b"]["inputs_paper"], rows["b"]["inputs_secondary"], rows["b"]["inputs_by_status"]) == (1, 0, "assumed 1, paper 1, primary 1")
    assert (rows["n"]["inputs_paper"], rows["n"]["inputs_by_status"]) == (0, "none: no case recomputes it")


def test_a_share_claim_is_recomputed_per_bit_where_its_case_gives_the_path_s_energy_per_bit() -> None:
    """The session of the share test with a path of 0.0005 kWh per GB per bit: upload 8 J + 0.04 GB x 0.0005 x 3.6e6
    = 8 + 72 = 80 J, download 2 + 72 = 74 J; total 240 + 80 + 74 + 23.544 = 417.544 J: the upload 19.2%, the per-bit
    method's share central, the volume and marginal ones beside it."""
    claims = [{**CLAIM, "claim_id": "up", "quantity": "emission_share", "unit": "fraction", "published_low": 0.18,
               "published_high": 0.20, "case_id": "fl", "part": "upload"}]
    values = _session(comm_pattern="federated_round", cpu_power_w=1.0, cpu_seconds=240.0, radio_tx_power_w=2.0, radio_rx_power_w=0.5,
                      link_mb_per_s=10.0, params=1e7, bytes_per_param=4.0, network_kwh_per_gb=0.01, router_kwh_per_gb=0.02,
                      network_marginal_w_per_mbps=0.03, router_marginal_w_per_mbps=0.02, server_power_w=45.0, servers=2.0,
                      server_pue=1.09, round_seconds=240.0, concurrency=1000.0, per_bit_kwh_per_gb=0.0005)
    row = _claims({"staging.claims": claims, "core.claim_values": values})["up"]
    assert row["recomputed_value"] == pytest.approx(80 / 417.544)
    assert row["recomputed_text"].startswith("19.2% per bit (the paper's method), 48.9% by volume (average energy per GB), 7.9% by marginal")
    assert row["status"] == "reproduced"
