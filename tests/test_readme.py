"""The README's example SQL runs against a freshly built warehouse and returns rows."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from pipelines.paths import PROJECT_ROOT
from pipelines.warehouse.database import open_readonly
from pipelines.warehouse.queries import query_pl

QUERIES = re.findall(r"```sql\n(.*?)```", (PROJECT_ROOT / "README.md").read_text(encoding="utf-8"), flags=re.S)


def test_readme_has_example_queries() -> None:
    assert len(QUERIES) >= 5


@pytest.mark.parametrize("query", QUERIES, ids=[f"query{i}" for i in range(len(QUERIES))])
def test_readme_query_returns_rows(built_warehouse: Path, query: str) -> None:
    with open_readonly(built_warehouse) as con:
        frame = query_pl(con, query.strip().rstrip(";"))
    assert frame.height > 0, query
