"""The code location loads, and every asset is described, grouped, typed and checked."""

from __future__ import annotations

import re

import dagster as dg

from pipelines.defs.definitions import defs
from pipelines.paths import PROJECT_ROOT


def _assets() -> list[tuple[dg.AssetKey, dg.AssetSpec]]:
    graph = defs.resolve_asset_graph()
    return [(key, graph.get(key)) for key in graph.get_all_asset_keys()]


def test_definitions_load_with_job_and_in_process_executor() -> None:
    job = defs.resolve_job_def("build_warehouse")
    assert job.executor_def.name == "in_process"


def test_every_asset_has_description_group_and_kinds() -> None:
    for key, node in _assets():
        assert node.description and len(node.description) > 40, f"{key} lacks a docstring"
        assert node.group_name and node.group_name != "default", f"{key} has no group"
        assert "duckdb" in node.kinds, f"{key} lacks kinds"


def test_every_staging_table_has_column_schema_and_blocking_checks() -> None:
    graph = defs.resolve_asset_graph()
    staging = [key for key, _ in _assets() if key.path[0] == "staging"]
    assert len(staging) >= 8, staging
    for key in staging:
        node = graph.get(key)
        schema = node.metadata.get("dagster/column_schema")
        assert isinstance(schema, dg.TableSchema) and schema.columns, f"{key} lacks column metadata"
        assert all(col.description for col in schema.columns), f"{key} has undocumented columns"
        checks = {check.name for check in graph.get_check_keys_for_assets([key])}
        assert {"pandera_schema"} <= checks, f"{key} checks: {checks}"
        if key.path[-1] != "sources":
            assert "source_ids_join" in checks, f"{key} checks: {checks}"


def test_the_dagster_page_lists_every_group() -> None:
    """docs/dagster.md's "Groups mirror the domain" list names exactly the definitions' asset groups."""
    text = (PROJECT_ROOT / "docs" / "dagster.md").read_text(encoding="utf-8")
    sentence = text.split("Groups mirror the", 1)[1].split("\n- ", 1)[0]
    listed = re.findall(r"`([a-z_]+)`", sentence)
    groups = {node.group_name for _, node in _assets()}
    assert len(listed) == len(set(listed)), listed
    assert set(listed) == groups, f"docs/dagster.md lists {sorted(set(listed) - groups)} too many, misses {sorted(groups - set(listed))}"


def test_staging_tables_of_the_contract_exist() -> None:
    keys = {"/".join(key.path) for key, _ in _assets()}
    for table in ("sources", "device_pcf", "device_specs", "grid_intensity", "power_samples", "benchmark_runs", "network_energy"):
        assert f"staging/{table}" in keys


def test_batched_log_gathers_lines_into_one_entry() -> None:
    from pipelines.defs.progress import BatchedLog

    written: list[str] = []
    with BatchedLog(written.append, every_s=3600) as log:
        log("[1/2] a.csv: 3 rows")
        log("[2/2] b.csv: 4 rows")
        assert written == []
    assert written == ["[1/2] a.csv: 3 rows\n[2/2] b.csv: 4 rows"]
    with BatchedLog(written.append, every_s=0) as log:
        log("a slow file")
    assert written[-1] == "a slow file"
