"""The example SQL of README.md and docs/*.md runs against a freshly built warehouse and returns rows."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from pipelines.paths import PROJECT_ROOT
from pipelines.warehouse.database import open_readonly
from pipelines.warehouse.queries import query_pl

PAGES = [PROJECT_ROOT / "README.md", *sorted((PROJECT_ROOT / "docs").glob("*.md"))]
QUERIES = [
    (page.relative_to(PROJECT_ROOT).as_posix(), i, query)
    for page in PAGES
    for i, query in enumerate(re.findall(r"```sql\n(.*?)```", page.read_text(encoding="utf-8"), flags=re.S))
]


def test_readme_has_example_queries() -> None:
    assert sum(1 for page, _, _ in QUERIES if page == "README.md") >= 3
    assert len(QUERIES) >= 8


@pytest.mark.parametrize("query", [q for _, _, q in QUERIES], ids=[f"{page}:query{i}" for page, i, _ in QUERIES])
def test_readme_query_returns_rows(built_warehouse: Path, query: str) -> None:
    with open_readonly(built_warehouse) as con:
        frame = query_pl(con, query.strip().rstrip(";"))
    assert frame.height > 0, query
