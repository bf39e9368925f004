"""staging.claims and staging.claim_parameters as shipped: each file reads through the build's parser, every
case a claim names has its parameter rows, and the claim marts.verdict judges (core.claim, schemas/vocabulary.py
CLAIM_LOW / CLAIM_HIGH) is Xue et al.'s row of the registry: its bounds are in two places, and this test holds
them equal."""

from __future__ import annotations

from pipelines.ingest.parsers.registry import CLAIM_PARAMETERS_PARSERS, CLAIMS_PARSERS
from pipelines.paths import sources_dir
from schemas.vocabulary import CLAIM_HIGH, CLAIM_LOW


def _rows(parsers: dict, kind: str, path: str) -> list[dict]:
    """The file's rows through the build's parser: the contract's columns, typed (the staging step validates the rest)."""
    parsed = parsers[kind](sources_dir() / path, {})
    assert not parsed.rejects, parsed.rejects
    return parsed.frame.to_dicts()


def test_the_verdict_s_claim_is_xue_et_al_s_row_of_the_registry() -> None:
    claims = {r["claim_id"]: r for r in _rows(CLAIMS_PARSERS, "curated_claims", "curated/claims.csv")}
    xue = claims["xue2025_reduction_4_8x"]
    assert (xue["quantity"], xue["published_low"], xue["published_high"]) == ("reduction_factor", CLAIM_LOW, CLAIM_HIGH)
    assert xue["case_id"] == "paper_text"


def test_every_claim_case_has_its_parameter_rows_and_every_row_a_source() -> None:
    claims = _rows(CLAIMS_PARSERS, "curated_claims", "curated/claims.csv")
    parameters = _rows(CLAIM_PARAMETERS_PARSERS, "curated_claim_parameters", "curated/claim_parameters.csv")
    cases = {r["case_id"] for r in parameters}
    for claim in claims:
        if claim["quantity"] != "reduction_factor" and claim["case_id"]:
            assert claim["case_id"] in cases, claim["claim_id"]
            assert claim["baseline_case_id"] is None or claim["baseline_case_id"] in cases, claim["claim_id"]
    assert len({r["paper"] for r in claims}) >= 4
    assert all(r["status"] in ("paper", "primary", "derived", "assumed") and r["citation"] for r in parameters)
