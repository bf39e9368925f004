"""The asset graph: deps derived from SQL and from the dashboards' declarations, owners and
layer tags, read-only checks, the offline build's selection, run history, and a snapshot.

The snapshot (tests/architecture/snapshots/asset_graph.json) lists every asset with its deps, group, owners,
tags and checks, and every job, schedule and sensor. After a deliberate change to the graph:

    UPDATE_SNAPSHOTS=1 .venv/bin/python -m pytest -q tests/architecture/test_graph.py -k snapshot
"""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import dagster as dg
import pytest

from pipelines.definitions import BUILD_COMMAND, OWNERS_BY_GROUP, defs
from pipelines.defs.assets.dashboards import SITE_KEY
from pipelines.lib.checks import DECLARED, ConnectionReader
from pipelines.lib.resources import Warehouse, feed_resources
from pipelines.paths import PROJECT_ROOT
from pipelines.warehouse.database import open_readonly
from pipelines.warehouse.lineage import tables_read, tables_read_by

SNAPSHOT = Path(__file__).parent / "snapshots" / "asset_graph.json"
UPDATE_ENV = "UPDATE_SNAPSHOTS"
GRAPH = defs.resolve_asset_graph()


def key(table: str) -> dg.AssetKey:
    return dg.AssetKey(table.split("."))


def deps_of(asset: dg.AssetKey) -> set[dg.AssetKey]:
    return set(GRAPH.get(asset).parent_keys)


def test_tables_read_skips_comments_strings_and_ctes() -> None:
    sql = """
        -- from marts.in_a_comment
        with local as (select * from core.scenarios)  /* join marts.in_a_block
           comment */
        select 'from marts.in_a_string', x.*
        from local join Staging.Device_Specs as d using (device_id)
        left join query_table($t) as q on true
        where exists (select 1 from marts.verdict)
    """
    assert tables_read(sql) == ["core.scenarios", "marts.verdict", "staging.device_specs"]


@pytest.mark.parametrize("sql_file", sorted(p.relative_to(PROJECT_ROOT / "sql").as_posix()
                                            for folder in ("core", "marts") for p in (PROJECT_ROOT / "sql" / folder).glob("*.sql")))
def test_every_sql_asset_depends_on_every_table_its_sql_reads(sql_file: str) -> None:
    asset = key(sql_file.removesuffix(".sql").replace("/", "."))
    assert GRAPH.has(asset), f"sql/{sql_file} builds no asset {asset.to_user_string()}"
    missing = {key(t) for t in tables_read_by(sql_file)} - deps_of(asset) - {asset}
    assert not missing, f"{asset.to_user_string()} reads {sorted(k.to_user_string() for k in missing)} without depending on them"


def test_site_depends_on_every_table_its_pages_read() -> None:
    import dashboards

    site = deps_of(SITE_KEY)
    declared = {key(t) for t in dashboards.tables_read() if t not in dashboards.CATALOG_TABLES}
    assert declared <= site
    queried = {key(t) for path in (PROJECT_ROOT / "dashboards" / "sql").glob("*.sql") for t in tables_read(path.read_text("utf-8"))}
    assert queried <= site, sorted(k.to_user_string() for k in queried - site)
    # the Data dictionary page lists every table, so the site waits for all of them
    assert set(dashboards.CATALOG_TABLES) & set(dashboards.tables_read())
    assert site == set(GRAPH.get_all_asset_keys()) - {SITE_KEY}


def test_every_asset_has_an_owner_and_a_layer_tag() -> None:
    for asset in GRAPH.get_all_asset_keys():
        node = GRAPH.get(asset)
        assert node.owners == [OWNERS_BY_GROUP[node.group_name]], asset
        assert node.tags.get("layer") == asset.path[0], asset


def test_build_warehouse_is_every_asset_but_the_live_feed() -> None:
    """The build covers every asset but the daily live feed; its one partitioned asset is the power logs'."""
    job = defs.resolve_job_def("build_warehouse")
    selected = set(job.asset_layer.selected_asset_keys)
    daily = {k for k in GRAPH.get_all_asset_keys() if isinstance(GRAPH.get(k).partitions_def, dg.TimeWindowPartitionsDefinition)}
    assert daily == {dg.AssetKey(["staging", "grid_intensity_live"])}
    assert selected == set(GRAPH.get_all_asset_keys()) - daily
    assert {k for k in selected if GRAPH.get(k).partitions_def is not None} == {dg.AssetKey(["staging", "power_samples"])}
    assert BUILD_COMMAND in (job.description or "")


@pytest.mark.slow  # starts the `dg` CLI in a subprocess, which loads the code location
def test_materialize_everything_from_the_cli_needs_the_job(tmp_path: Path) -> None:
    """``dg launch --assets '*'`` stops before running anything (the live feed is daily-partitioned);
    the job the docs name (``BUILD_COMMAND``) is the way to build everything from a shell."""
    env = {**os.environ, "DAGSTER_HOME": str(tmp_path), "EDGE_CARBON_WAREHOUSE": str(tmp_path / "wh.duckdb")}
    done = subprocess.run([str(Path(sys.executable).with_name("dg")), "launch", "--assets", "*"],
                          cwd=PROJECT_ROOT, env=env, capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode != 0 and "no '--partition' option was provided" in done.stderr, done.stderr[-2000:]
    assert "STEP_START" not in done.stdout + done.stderr and not (tmp_path / "wh.duckdb").exists()
    assert BUILD_COMMAND == "edge-carbon run"


class ReadOnlyWarehouse(Warehouse):
    """The warehouse opened read-only: any write a check tried would raise."""

    @contextlib.contextmanager
    def yield_for_execution(self, context: dg.InitResourceContext) -> Iterator[ReadOnlyWarehouse]:
        con = open_readonly(self.path)
        self._con = con
        try:
            yield self
        finally:
            self._con = None
            con.close()


def test_asset_checks_only_read(built_warehouse: Path) -> None:
    """Every check evaluates on a read-only connection to a built warehouse (no write error): each
    check a table's step evaluates (pipelines.lib.checks), here on the table as stored, and the
    power samples' checks, steps of their own; all pass there but the live freshness check (the
    offline build has no live rows) and the utilisation warning. The checks the steps evaluate are
    exactly the checks the graph shows."""
    with open_readonly(built_warehouse) as con:
        reader = ConnectionReader(con)
        in_steps = {check.spec.key: check(reader) for checks in DECLARED.values() for check in checks.values()}
    own_steps = dg.materialize(
        [*defs.assets, *defs.asset_checks],
        selection=dg.AssetSelection.checks(*defs.asset_checks),
        resources={"warehouse": ReadOnlyWarehouse(path=str(built_warehouse)), **feed_resources("recorded")},
        instance=dg.DagsterInstance.ephemeral(),
        raise_on_error=False,
    )
    evaluations = {e.asset_check_key: e for e in own_steps.get_asset_check_evaluations()}
    assert set(evaluations) == {key for checks in defs.asset_checks for key in checks.check_keys}
    assert not set(evaluations) & set(in_steps)
    evaluations |= in_steps
    assert set(evaluations) == set(GRAPH.asset_check_keys)
    failed = sorted(f"{k.asset_key.to_user_string()}:{k.name}" for k, e in evaluations.items() if not e.passed)
    assert failed == ["marts/verdict:implied_utilisation_plausible", "staging/grid_intensity_live:grid_intensity_live_fresh"]
    warned = evaluations[dg.AssetCheckKey(dg.AssetKey(["marts", "verdict"]), "implied_utilisation_plausible")]
    assert warned.severity == dg.AssetCheckSeverity.WARN and warned.metadata["rows_above_ceiling"].value > 0


def test_dagster_home_defaults_to_the_project_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from pipelines import cli

    monkeypatch.delenv("DAGSTER_HOME", raising=False)
    monkeypatch.setattr(cli, "default_root", lambda: tmp_path)
    home = cli.dagster_home()
    assert home == tmp_path / ".dagster_home" and os.environ["DAGSTER_HOME"] == str(home)
    assert (home / "dagster.yaml").read_text("utf-8") == (PROJECT_ROOT / "pipelines" / "dagster.yaml").read_text("utf-8")


@pytest.mark.slow
def test_edge_carbon_run_records_its_run_in_the_instance(tmp_path: Path) -> None:
    home = tmp_path / "dagster_home"
    env = {**os.environ, "DAGSTER_HOME": str(home), "EDGE_CARBON_WAREHOUSE": str(tmp_path / "wh" / "edge_carbon.duckdb")}
    done = subprocess.run([str(Path(sys.executable).with_name("edge-carbon")), "run", "--skip-dashboards"],
                          cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    with dg.DagsterInstance.from_config(str(home)) as instance:
        runs = instance.get_runs()
        assert [(r.job_name, r.status) for r in runs] == [("build_warehouse", dg.DagsterRunStatus.SUCCESS)]
        assert runs[0].run_id in done.stdout
        materialized = instance.get_latest_materialization_event(dg.AssetKey(["marts", "verdict"]))
        assert materialized is not None and materialized.run_id == runs[0].run_id


def graph_snapshot() -> dict:
    """Assets (deps, group, owners, tags, kinds, partitioning, checks), jobs, schedules, sensors."""
    repo = defs.get_repository_def()
    assets = {}
    for asset in sorted(GRAPH.get_all_asset_keys(), key=lambda k: k.to_user_string()):
        node = GRAPH.get(asset)
        checks = [GRAPH.get_check_spec(c) for c in GRAPH.get_check_keys_for_assets([asset])]
        assets[asset.to_user_string()] = {
            "group": node.group_name,
            "deps": sorted(k.to_user_string() for k in node.parent_keys),
            "owners": list(node.owners),
            "tags": {k: v for k, v in sorted(node.tags.items()) if not k.startswith("dagster/kind/")},
            "kinds": sorted(node.kinds),
            "partitioned": node.partitions_def is not None,
            "checks": sorted(({"name": c.name, "blocking": c.blocking} for c in checks), key=lambda c: c["name"]),
        }
    return {
        "assets": assets,
        "jobs": {
            job.name: sorted(k.to_user_string() for k in job.asset_layer.selected_asset_keys)
            for job in sorted(repo.get_all_jobs(), key=lambda j: j.name) if not job.name.startswith("__")
        },
        "schedules": {
            s.name: {"job": s.job_name, "cron": s.cron_schedule, "timezone": s.execution_timezone,
                     "default_status": s.default_status.value}
            for s in sorted(repo.schedule_defs, key=lambda s: s.name)
        },
        "sensors": {
            s.name: {"jobs": sorted(t.job_name for t in s.targets), "default_status": s.default_status.value}
            for s in sorted(repo.sensor_defs, key=lambda s: s.name)
        },
    }


def test_graph_snapshot() -> None:
    current = json.dumps(graph_snapshot(), indent=2, sort_keys=True) + "\n"
    if os.environ.get(UPDATE_ENV) == "1":
        SNAPSHOT.parent.mkdir(parents=True, exist_ok=True)
        SNAPSHOT.write_text(current, encoding="utf-8")
    assert SNAPSHOT.is_file(), f"no snapshot yet: run with {UPDATE_ENV}=1 to write {SNAPSHOT}"
    assert SNAPSHOT.read_text(encoding="utf-8") == current, (
        f"the asset graph differs from {SNAPSHOT.relative_to(PROJECT_ROOT)}. If the change is intended, "
        f"regenerate it with `{UPDATE_ENV}=1 .venv/bin/python -m pytest -q tests/architecture/test_graph.py -k snapshot` "
        "and review the diff."
    )
