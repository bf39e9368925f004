"""The code location loads, and every asset is described, grouped, typed and checked."""

from __future__ import annotations

import re

import dagster as dg

from pipelines.definitions import defs
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
    for table in ("sources", "device_pcf", "device_specs", "grid_intensity", "power_samples", "benchmark_runs", "network_energy",
                  "training_throughput"):
        assert f"staging/{table}" in keys


def test_batched_log_gathers_lines_into_one_entry() -> None:
    from pipelines.lib.progress import BatchedLog

    written: list[str] = []
    with BatchedLog(written.append, every_s=3600) as log:
        log("[1/2] a.csv: 3 rows")
        log("[2/2] b.csv: 4 rows")
        assert written == []
    assert written == ["[1/2] a.csv: 3 rows\n[2/2] b.csv: 4 rows"]
    with BatchedLog(written.append, every_s=0) as log:
        log("a slow file")
    assert written[-1] == "a slow file"


PROBE = '''"""A module added to the defs folder, listed nowhere."""

import dagster as dg


@dg.asset(key=["marts", "folder_probe"], group_name="marts", kinds={"duckdb"}, deps=[["marts", "verdict"]])
def folder_probe() -> None:
    """An asset that only a folder scan can find."""
'''


def test_a_module_added_to_the_defs_folder_is_loaded_without_a_list(tmp_path, monkeypatch) -> None:
    """A copy of pipelines/defs/ (not its definitions.py, which loads the real folder) under another
    package name, on a tmp path without pyproject.toml (as in the Kubernetes image), with one new
    module: the folder's loading finds every asset of the original and the new one."""
    import importlib
    import shutil
    import sys

    import pipelines.defs
    from pipelines.definitions import folder, found

    copy = tmp_path / "defs_copy"
    shutil.copytree(next(iter(pipelines.defs.__path__)), copy, ignore=shutil.ignore_patterns("__pycache__", "definitions.py"))
    (copy / "assets" / "folder_probe.py").write_text(PROBE, encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    try:
        loaded = found(importlib.import_module("defs_copy"), tmp_path)
    finally:
        for name in [m for m in sys.modules if m == "defs_copy" or m.startswith("defs_copy.")]:
            del sys.modules[name]
    keys = {key for assets_def in loaded.assets or [] for key in assets_def.keys}
    original = {key for assets_def in folder().assets or [] for key in assets_def.keys}
    assert keys == original | {dg.AssetKey(["marts", "folder_probe"])}
    assert {dg.AssetKey(["staging", "power_samples"]), dg.AssetKey(["core", "scenario_parameters"])} <= original
    assert {s.name for s in loaded.sensors or []} == {s.name for s in folder().sensors or []} == {"power_log_partitions"}
    assert not (tmp_path / "pyproject.toml").exists()


def test_the_location_is_the_folder_scan_with_its_policy() -> None:
    """Every asset, check, job, schedule and sensor the folder defines is in the location once,
    with build_warehouse and the site added by definitions.py."""
    from pipelines.definitions import folder

    found_keys = {key for assets_def in folder().assets or [] for key in assets_def.keys}
    graph = defs.resolve_asset_graph()
    assert set(graph.get_all_asset_keys()) == found_keys | {dg.AssetKey(["dashboards", "site"])}
    assert sorted(j.name for j in defs.jobs or []) == ["build_warehouse", "grid_feeds"]
    assert [s.name for s in defs.schedules or []] == ["grid_feeds_hourly"]


def test_the_location_module_holds_one_definitions_object() -> None:
    """Dagster's module loading (``dagster dev``, ``dg launch``) refuses a module with two."""
    import pipelines.definitions as location

    assert [name for name, value in vars(location).items() if isinstance(value, dg.Definitions)] == ["defs"]
