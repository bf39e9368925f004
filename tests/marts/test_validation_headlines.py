"""marts.validation_headlines, given rows -> expected rows: the validation cases the Validation page lists (the
headline cases only), as staged."""

from __future__ import annotations

from tests.marts.given_rows import run_mart


def test_the_validation_page_lists_the_headlines_only() -> None:
    given = [{"case_id": "z", "kind": "headline", "title": "Z"}, {"case_id": "y", "kind": "case", "title": "Y"},
             {"case_id": "x", "kind": "headline", "title": "X"}]
    rows = run_mart("marts.validation_headlines", {"staging.validation_cases": given})
    assert rows == [given[2], given[0]]
