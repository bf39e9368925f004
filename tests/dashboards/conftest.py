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


@pytest.fixture(autouse=True)
def charts_as_the_build_writes_them() -> Iterator[None]:
    """A chart's spec as the build writes it (dashboards/__init__.py): every page inlines its data, whose rows
    grow with the scenarios, so Altair's 5,000-row guard is off."""
    import altair as alt

    with alt.data_transformers.disable_max_rows():
        yield
