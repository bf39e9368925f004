"""The dashboard tests' shared fixtures: the site rendered from the session's warehouse, and a read-only connection
to it, once per test module."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import duckdb
import pytest

from pipelines.warehouse.database import open_readonly


@pytest.fixture(scope="module")
def site(built_warehouse: Path, rendered_site: Callable[..., dict]) -> dict:
    return rendered_site(built_warehouse)


@pytest.fixture(scope="module")
def con(built_warehouse: Path) -> Iterator[duckdb.DuckDBPyConnection]:
    connection = open_readonly(built_warehouse)
    yield connection
    connection.close()
