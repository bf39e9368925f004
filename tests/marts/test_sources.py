"""marts.sources, given rows -> expected rows: the staged sources the Sources page lists, by table, as staged."""

from __future__ import annotations

from tests.marts.given_rows import run_mart


def test_the_sources_page_lists_every_staged_source_by_table() -> None:
    given = [{"source_id": "b", "table_name": "staging.grid_intensity", "title": "B"},
             {"source_id": "c", "table_name": "staging.device_pcf", "title": "C"},
             {"source_id": "a", "table_name": "staging.grid_intensity", "title": "A"}]
    rows = run_mart("marts.sources", {"staging.sources": given})
    assert [r["source_id"] for r in rows] == ["c", "a", "b"] and rows[0] == given[1]
