"""Shared fixtures. The whole pipeline is built once per session into a temporary folder."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import dagster as dg
import pytest

from pipelines.paths import WAREHOUSE_ENV


def build(path: Path) -> dg.ExecuteInProcessResult:
    """Run the build_warehouse job, publishing to ``path``."""
    from pipelines.defs.definitions import defs
    from pipelines.defs.resources import Warehouse

    # render the dashboards beside the warehouse, not into the repository's dashboards/site/
    os.environ.setdefault("EDGE_CARBON_SITE", str(path.parent / "site"))
    job = defs.resolve_job_def("build_warehouse")
    return job.execute_in_process(
        instance=dg.DagsterInstance.ephemeral(),
        resources={"warehouse": Warehouse(path=str(path))},
        raise_on_error=False,
    )


@pytest.fixture(scope="session")
def built_warehouse(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """A warehouse built once from the shipped sources; tests open it read-only."""
    path = tmp_path_factory.mktemp("warehouse") / "edge_carbon.duckdb"
    result = build(path)
    failures = [e.step_key for e in result.all_events if e.is_step_failure]
    assert result.success, f"pipeline failed in steps {failures}"
    yield path


@pytest.fixture
def warehouse_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Point EDGE_CARBON_WAREHOUSE at a fresh temporary file."""
    path = tmp_path / "wh" / "edge_carbon.duckdb"
    monkeypatch.setenv(WAREHOUSE_ENV, str(path))
    return path
