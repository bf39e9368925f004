"""marts.sources and marts.validation_headlines, given rows -> expected rows: the staged rows the pages list, as staged."""

from __future__ import annotations

from tests.marts.given_rows import run_mart


def test_the_sources_page_lists_every_staged_source_by_table() -> None:
    given = [{"source_id": "b", "table_name": "staging.grid_intensity", "title": "B"},
             {"source_id": "c", "table_name": "staging.device_pcf", "title": "C"},
             {"source_id": "a", "table_name": "staging.grid_intensity", "title": "A"}]
    rows = run_mart("marts.sources", {"staging.sources": given})
    assert [r["source_id"] for r in rows] == ["c", "a", "b"] and rows[0] == given[1]


def test_the_validation_page_lists_the_headlines_only() -> None:
    given = [{"case_id": "z", "kind": "headline", "title": "Z"}, {"case_id": "y", "kind": "case", "title": "Y"},
             {"case_id": "x", "kind": "headline", "title": "X"}]
    rows = run_mart("marts.validation_headlines", {"staging.validation_cases": given})
    assert rows == [given[2], given[0]]
