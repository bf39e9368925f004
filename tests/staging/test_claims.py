"""staging.claims and staging.claim_parameters as shipped: each file reads through the build's parser, every
case a claim names has its parameter rows; and core.claim, the claims marts.verdict judges, is every claim of the
registry that is a cloud/edge ratio R, its bounds the published ones (given rows -> expected rows, and the shipped
file: Xue et al.'s row)."""

from __future__ import annotations

import re

import duckdb
import polars as pl
import pyarrow as pa

from pipelines.defs.assets.scenarios import claims_known
from pipelines.ingest.parsers.registry import CLAIM_PARAMETERS_PARSERS, CLAIMS_PARSERS
from pipelines.lib.checks import SUMMARY_KEY, ConnectionReader
from pipelines.paths import sources_dir
from schemas.methods import Claim
from schemas.statuses import STATUSES
from schemas.vocabulary import (
    ASSUMED,
    CLAIM_HIGH,
    CLAIM_LOW,
    FEASIBLE_SHARE_MIN,
    FEASIBLE_SHARE_MIN_REASONING,
)
from tests.marts.given_rows import XUE, claim_rows


def _rows(parsers: dict, kind: str, path: str) -> list[dict]:
    """The file's rows through the build's parser: the contract's columns, typed (the staging step validates the rest)."""
    parsed = parsers[kind](sources_dir() / path, {})
    assert not parsed.rejects, parsed.rejects
    return parsed.frame.to_dicts()


def test_core_claim_is_each_ratio_claim_of_the_registry_with_its_published_bounds() -> None:
    given = [
        {"claim_id": "b_ratio", "quantity": "reduction_factor", "published_low": 2.0, "published_high": 3.5},
        {"claim_id": "a_bytes", "quantity": "bandwidth_ratio", "published_low": 400.0, "published_high": 400.0},
        {"claim_id": "a_ratio", "quantity": "reduction_factor", "published_low": 1.5, "published_high": 1.5},
        {"claim_id": "c_share", "quantity": "emission_share", "published_low": 0.2, "published_high": 0.3},
        {"claim_id": "d_kg", "quantity": "emissions", "published_low": 5.0, "published_high": 20.0},
    ]
    threshold = {"feasible_share_min": FEASIBLE_SHARE_MIN, "feasible_share_min_status": ASSUMED,
                 "feasible_share_min_reasoning": FEASIBLE_SHARE_MIN_REASONING}
    assert claim_rows(given) == [
        {"claim_id": "a_ratio", "claim_low": 1.5, "claim_high": 1.5, **threshold},
        {"claim_id": "b_ratio", "claim_low": 2.0, "claim_high": 3.5, **threshold},
    ]


def test_core_claim_from_the_shipped_registry_is_xue_et_al_s_row() -> None:
    """The shipped registry's ratio claim is Xue et al.'s 4-8x, on the figure's counts and on the text's beside it, and
    the verdict's category wording (schemas/vocabulary.py CLAIM_LOW, CLAIM_HIGH: 'below the claim (R < 4)', ...) states
    the same bounds."""
    rows = claim_rows(_rows(CLAIMS_PARSERS, "curated_claims", "curated/claims.csv"))
    Claim.validate(pl.DataFrame(rows))
    assert [(r["claim_id"], r["claim_low"], r["claim_high"]) for r in rows] == [(XUE["claim_id"], 4.0, 8.0),
                                                                              (XUE["claim_id"] + "_text", 4.0, 8.0)]
    assert (rows[0]["claim_low"], rows[0]["claim_high"]) == (CLAIM_LOW, CLAIM_HIGH)


def test_a_scenario_naming_an_unknown_claim_fails_its_check_naming_the_scenario() -> None:
    con = duckdb.connect()
    con.execute("create schema core; create schema staging")
    parameters = [("mine", "claim_id", "no_such_claim", "scenarios/mine.csv:3"), ("fine", "claim_id", XUE["claim_id"], "scenarios/a.csv:9"),
                  ("bare", "horizon_years", None, "scenarios/bare.csv:2")]
    con.register("given", pa.Table.from_pylist([dict(zip(("scenario_id", "parameter", "value_text", "defined_in"), p, strict=True))
                                                for p in parameters]))
    con.execute("create table core.scenario_parameters as select * from given")
    con.register("registry", pa.Table.from_pylist([XUE]))
    con.execute("create table staging.claims as select * from registry")
    result = claims_known(ConnectionReader(con))
    assert not result.passed
    assert result.metadata[SUMMARY_KEY].value.splitlines() == [
        "scenario bare names no claim: give it a claim_id row, the id of a claim of staging.claims",
        "sources/scenarios/mine.csv, line 3: claim_id = 'no_such_claim' is no claim of staging.claims "
        "(sources/curated/claims.csv; edge-carbon claim new adds one) (scenario mine)",
    ]
    con.execute("delete from core.scenario_parameters where scenario_id <> 'fine'")
    assert claims_known(ConnectionReader(con)).passed


def test_every_claim_case_has_its_parameter_rows_and_every_row_a_source() -> None:
    claims = _rows(CLAIMS_PARSERS, "curated_claims", "curated/claims.csv")
    parameters = _rows(CLAIM_PARAMETERS_PARSERS, "curated_claim_parameters", "curated/claim_parameters.csv")
    cases = {r["case_id"] for r in parameters}
    for claim in claims:
        if claim["quantity"] != "reduction_factor" and claim["case_id"]:
            assert claim["case_id"] in cases, claim["claim_id"]
            assert claim["baseline_case_id"] is None or claim["baseline_case_id"] in cases, claim["claim_id"]
    assert len({r["paper"] for r in claims}) >= 9
    for row in parameters:  # a status, a citation, and a link (or a factor row that has one)
        assert row["status"] in STATUSES and row["citation"], (row["case_id"], row["parameter"])
        assert row["citation_url"] or row["factor_id"], (row["case_id"], row["parameter"])


def paper_key(url: str) -> str:
    """The paper a link names: its arXiv id or DOI where it has one (any version, any mirror), else the link."""
    if found := re.search(r"(\d{4}\.\d{4,5})", url):
        return "arXiv:" + found.group(1)
    if found := re.search(r"(10\.\d{4,9}/[^\s?#]+)", url):
        return "doi:" + found.group(1).lower()
    return url.rstrip("/")


def paper_rows_citing_another_paper(claims: list[dict], parameters: list[dict]) -> list[tuple[str, str, str]]:
    """(case, parameter, its paper) of each `paper` row whose link is not the paper of a claim its case recomputes."""
    papers: dict[str, set[str]] = {}
    for claim in claims:
        for case in (claim["case_id"], claim["baseline_case_id"]):
            if case:
                papers.setdefault(case, set()).add(paper_key(claim["citation_url"]))
    return [(row["case_id"], row["parameter"], paper_key(row["citation_url"] or ""))
            for row in parameters if row["status"] == "paper" and paper_key(row["citation_url"] or "") not in papers.get(row["case_id"], set())]


def test_a_paper_row_is_read_in_the_claim_s_own_paper() -> None:
    """A `paper` input is the claim's own paper's number (same arXiv id or DOI): one read in another paper is
    `secondary`, or another paper's number this project takes, `assumed`. A row citing another paper is found."""
    claims = _rows(CLAIMS_PARSERS, "curated_claims", "curated/claims.csv")
    parameters = _rows(CLAIM_PARAMETERS_PARSERS, "curated_claim_parameters", "curated/claim_parameters.csv")
    assert paper_rows_citing_another_paper(claims, parameters) == []
    (row,) = [r for r in parameters if (r["case_id"], r["parameter"]) == ("yousefpour2023_session", "server_pue")]
    moved = {**row, "citation_url": "https://arxiv.org/abs/2507.01803v1"}
    assert paper_rows_citing_another_paper(claims, [moved]) == [("yousefpour2023_session", "server_pue", "arXiv:2507.01803")]
    assert paper_rows_citing_another_paper(claims, [{**row, "citation_url": "https://arxiv.org/pdf/2303.14604v2"}]) == []
