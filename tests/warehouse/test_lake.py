"""The Parquet lake and its catalog: versioned files, views from the catalog, retention, one-log
runs that touch one partition, readers never broken, any working directory, N workers."""

from __future__ import annotations

import datetime as dt
import os
import shutil
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import dagster as dg
import duckdb
import pytest

from pipelines.ingest.digests import sha256_file
from pipelines.paths import SOURCES_DIR, SOURCES_ENV, WAREHOUSE_ENV
from pipelines.run.launch import SAMPLES_KEY, materialise
from pipelines.warehouse import lake
from pipelines.warehouse.database import open_readonly
from schemas.marts import RUN_STAMP_COLUMNS
from schemas.meta import columns
from schemas.power_samples import PowerSamples
from tests.helpers import kill_run_when
from tests.ingest.test_feeds import ReplayServer, server  # noqa: F401 - the server fixture

TABLE = "staging.power_samples"


def _write(con: duckdb.DuckDBPyConnection, root: Path, key: str, run_id: str, rows: int) -> lake.LakeFile:
    con.execute(f"create or replace table staging.scratch as select '{key}' as source_id, range as i from range({rows})")  # noqa: S608 - test constants
    path = lake.new_file(root, TABLE, "source_id", key, run_id)
    return lake.copy_to_parquet(con, "staging.scratch", path, root, table=TABLE, column="source_id", key=key, run_id=run_id)


def test_catalog_lists_current_files_only_and_sweeps_by_retention(tmp_path: Path) -> None:
    root = tmp_path / "lake"
    con = duckdb.connect(str(tmp_path / "wh.duckdb"))
    con.execute("create schema staging")
    first = [_write(con, root, key, "run-1", n) for key, n in (("a", 3), ("b", 4))]
    t0 = dt.datetime(2026, 1, 1, tzinfo=dt.UTC)
    lake.commit(con, TABLE, first, replaces=["a", "b"], now=t0)
    catalog = con.execute(f"select * from {lake.CATALOG} order by file").fetchall()  # noqa: S608 - test constants
    assert catalog == sorted([(*f.as_row().values(), t0, None) for f in first], key=lambda row: row[3])
    lake.refresh_view(con, TABLE, PowerSamples, root)
    assert con.execute(f"select count(*) from {TABLE}").fetchall() == [(7,)]  # noqa: S608 - test constants
    # a second version of a, a leftover file no catalog lists, then b retired
    second = _write(con, root, "a", "run-2", 5)
    leftover = _write(con, root, "a", "killed", 100)
    lake.commit(con, TABLE, [second], replaces=["a"], retire=["b"], now=t0 + dt.timedelta(hours=1))
    lake.refresh_view(con, TABLE, PowerSamples, root)
    assert con.execute(f"select source_id, count(*) from {TABLE} group by 1").fetchall() == [("a", 5)]  # noqa: S608 - test constants
    assert lake.current_keys(con, TABLE) == ["a"]
    # within the retention every file stays (readers of the older snapshot keep theirs)
    assert lake.sweep(con, root, now=t0 + dt.timedelta(hours=2)) == {"expired": 0, "orphans": 0}
    assert all((root / f.file).exists() for f in [*first, second, leftover])
    os.utime(root / leftover.file, (0, 0))  # the leftover is older than ORPHAN_AFTER
    swept = lake.sweep(con, root, now=t0 + dt.timedelta(hours=1) + lake.RETENTION + dt.timedelta(seconds=1))
    assert swept == {"expired": 2, "orphans": 1}
    assert [f.exists() for f in (root / first[0].file, root / first[1].file, root / second.file, root / leftover.file)] == [
        False, False, True, False]
    assert con.execute(f"select count(*) from {lake.CATALOG}").fetchall() == [(1,)]  # noqa: S608 - test constants
    # with no current file the view is empty, with the model's columns
    lake.commit(con, TABLE, [], replaces=[], retire=["a"])
    lake.refresh_view(con, TABLE, PowerSamples, root)
    assert con.execute(f"select count(*) from {TABLE}").fetchall() == [(0,)]  # noqa: S608 - test constants
    assert [c[0] for c in con.execute(f"describe {TABLE}").fetchall()] == list(columns(PowerSamples))


@pytest.mark.parametrize("bad", ["../up", "a,b", "", "a/b", "x" * 201])
def test_partition_keys_that_cannot_name_a_folder_are_refused(tmp_path: Path, bad: str) -> None:
    with pytest.raises(ValueError, match="cannot name a lake partition"):
        lake.new_file(tmp_path, TABLE, "source_id", bad, "run")


def linked_sources(tmp_path: Path) -> Path:
    """A sources folder: the shipped folders linked, the manifests copied (so tests may add some)."""
    sources = tmp_path / "sources"
    sources.mkdir()
    for child in SOURCES_DIR.iterdir():
        if child.name != "manifest":
            (sources / child.name).symlink_to(child)
    shutil.copytree(SOURCES_DIR / "manifest", sources / "manifest")
    return sources


ADDED = "added_gpu_log"


def add_log(sources: Path) -> None:
    """Register a copy of a shipped nvidia-smi log under a new id and run id."""
    extra = sources / "extra"
    extra.mkdir(exist_ok=True)
    log = extra / "added.csv"
    shutil.copyfile(SOURCES_DIR / "power" / "synthetic" / "table1_gpu_r1.csv", log)
    (sources / "manifest" / "extra.toml").write_text(textwrap.dedent(f"""
        [[source]]
        id = "{ADDED}"
        path = "extra/added.csv"
        title = "A copy of the Table 1 GPU log, registered as a new log"
        url = "https://example.invalid/added"
        license = "CC-BY-4.0"
        retrieved_on = 2026-11-30
        sha256 = "{sha256_file(log)}"
        kind = "nvidia_smi"
        table = "staging.power_samples"
        status = "derived"

        [source.options]
        run_id = "added_gpu_run"
        device_id = "nvidia-rtx-a5000"
        model = "OPT-125M"
        workload = "OPT-125M training, a registered copy"
        is_synthetic = true
        timezone = "America/New_York"
    """), encoding="utf-8")


def lake_files(published: Path) -> dict[str, int]:
    """Every Parquet file of the lake -> its modification time (ns)."""
    root = lake.lake_root(published)
    return {p.relative_to(root).as_posix(): p.stat().st_mtime_ns for p in root.rglob("*.parquet")}


def materialised(instance: dg.DagsterInstance, run_id: str) -> set[tuple[str, str | None]]:
    """(asset key, partition) of every materialisation of a run."""
    records = instance.get_records_for_run(run_id, of_type=dg.DagsterEventType.ASSET_MATERIALIZATION).records
    return {(r.event_log_entry.dagster_event.asset_key.to_user_string(), r.event_log_entry.dagster_event.partition) for r in records}


@pytest.mark.slow  # two ingest runs into a fresh warehouse (CI runs it; the fast loop keeps the catalog's unit test)
def test_adding_one_log_writes_only_its_partition(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    sources = linked_sources(tmp_path)
    monkeypatch.setenv(SOURCES_ENV, str(sources))
    published = tmp_path / "wh" / "edge_carbon.duckdb"
    instance = dg.DagsterInstance.ephemeral()
    first = materialise(scope="ingest", instance=instance, warehouse=published)
    assert first.success, first.failures
    before = lake_files(published)
    with open_readonly(published) as con:
        logs_before = con.execute("select count(distinct source_id), count(*) from staging.power_samples").fetchone()
    assert logs_before is not None and len(before) == logs_before[0] >= 10

    add_log(sources)
    second = materialise(scope="ingest", logs=[ADDED], instance=instance, warehouse=published)
    assert second.success, second.failures
    after = lake_files(published)
    assert {k: v for k, v in after.items() if k in before} == before, "another partition's file was rewritten"
    [new] = [k for k in after if k not in before]
    assert new.startswith(f"power_samples/source_id={ADDED}/part-{second.run_id}-")
    assert materialised(instance, second.run_id) == {
        (SAMPLES_KEY.to_user_string(), ADDED), ("staging/sources", None), ("staging/benchmark_runs", None), ("staging/benchmark_series", None)}
    with open_readonly(published) as con:
        logs = con.execute("select count(distinct source_id), count(*) from staging.power_samples").fetchone()
        added = con.execute("select count(*) from staging.power_samples where source_id = $s", {"s": ADDED}).fetchone()
        runs = con.execute("select energy_j from staging.benchmark_runs where run_id in ('added_gpu_run', 'table1_gpu_r1') order by run_id").fetchall()
    assert logs is not None and added is not None
    assert logs == (logs_before[0] + 1, logs_before[1] + added[0]) and added[0] > 1000
    assert runs[0] == runs[1], "the copy integrates to the same energy as the log it copies"


@pytest.mark.slow  # two subprocesses (a DuckDB client and edge-carbon sql) started in another folder
def test_published_warehouse_answers_from_another_directory(built_warehouse: Path, tmp_path: Path) -> None:
    """A client started elsewhere reads the lake views: their files are named by absolute path."""
    script = "import duckdb, sys; con = duckdb.connect(sys.argv[1], read_only=True); " \
             "print(con.execute('select count(*), count(distinct source_id) from staging.power_samples').fetchone())"
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    done = subprocess.run([sys.executable, "-c", script, str(built_warehouse)], cwd=elsewhere, capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 0, done.stderr
    with open_readonly(built_warehouse) as con:
        expected = con.execute("select count(*), count(distinct source_id) from staging.power_samples").fetchone()
    assert done.stdout.strip() == str(expected) and expected is not None and expected[0] > 30_000
    cli = subprocess.run([sys.executable, "-m", "pipelines.cli", "sql", "select count(*) as n from staging.power_samples", "--format", "csv"],
                         cwd=elsewhere, env={**os.environ, WAREHOUSE_ENV: str(built_warehouse)}, capture_output=True, text=True, timeout=60, check=False)
    assert cli.returncode == 0 and cli.stdout.split() == ["n", str(expected[0])], cli.stderr


def copy_warehouse(source: Path, target: Path) -> Path:
    """A private copy of a published warehouse: the DuckDB file and its lake."""
    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(source, target)
    shutil.copytree(lake.lake_root(source), lake.lake_root(target))
    return target


READER = textwrap.dedent(
    """
    import os, sys, time, duckdb
    con = duckdb.connect(sys.argv[1], read_only=True)
    first = con.execute("select count(*), sum(round(power_w * 1000)::hugeint) from staging.power_samples").fetchone()
    print("open", flush=True)
    reads = 0
    while not os.path.exists(sys.argv[2]):
        assert con.execute("select count(*), sum(round(power_w * 1000)::hugeint) from staging.power_samples").fetchone() == first
        reads += 1
        time.sleep(0.02)
    print("reads", reads, first[0], flush=True)
    """
)


@pytest.mark.slow  # a reader subprocess held open through two runs
def test_reader_holds_its_snapshot_through_a_partitioned_run_and_a_feed_run(built_warehouse: Path, tmp_path: Path) -> None:
    from pipelines.defs.assets.grid_feeds import grid_intensity_live
    from pipelines.lib.resources import Warehouse, feed_resources

    published = copy_warehouse(built_warehouse, tmp_path / "wh" / "edge_carbon.duckdb")
    stop = tmp_path / "stop"
    reader = subprocess.Popen([sys.executable, "-c", READER, str(published), str(stop)], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        assert reader.stdout is not None and reader.stdout.readline().strip() == "open"
        instance = dg.DagsterInstance.ephemeral()
        key = "synthetic_table1_gpu_r1"
        outcome = materialise(scope="ingest", logs=[key], instance=instance, warehouse=published)
        assert outcome.success, outcome.failures
        feed = dg.materialize(  # the hourly run's feed step (the job also rebuilds what reads it: test_feed_schedule.py)
            [grid_intensity_live], instance=instance, partition_key="2025-06-01",
            resources={"warehouse": Warehouse(path=str(published)), **feed_resources("recorded")}, raise_on_error=False,
        )
        assert feed.success, [e.step_key for e in feed.all_events if e.is_step_failure]
        time.sleep(0.3)
    finally:
        stop.touch()
        out, _ = reader.communicate(timeout=60)
    assert reader.returncode == 0, out
    assert int(out.split()[1]) > 0
    with open_readonly(published) as con:
        files = con.execute(f"select file, superseded_at is null from {lake.CATALOG} where partition_key = $k order by written_at", {"k": key}).fetchall()  # noqa: S608 - test constants
    assert [current for _, current in files] == [False, True], "the re-ingested log has a new file, the old one kept for readers"
    assert all((lake.lake_root(published) / file).exists() for file, _ in files)


@pytest.mark.slow  # starts `edge-carbon run --only ingest` in a subprocess and kills it while it writes Parquet
@pytest.mark.kills_runs
def test_killed_partitioned_run_leaves_the_last_good_state(built_warehouse: Path, tmp_path: Path) -> None:
    published = copy_warehouse(built_warehouse, tmp_path / "wh" / "edge_carbon.duckdb")
    before_sha = sha256_file(published)
    with open_readonly(published) as con:
        before = con.execute("select count(*), sum(round(power_w * 1000)::hugeint) from staging.power_samples").fetchone()
    files_before = lake_files(published)
    env = {**os.environ, WAREHOUSE_ENV: str(published), "DAGSTER_HOME": str(tmp_path / "dh")}
    # kill it once it has written Parquet of its own
    kill_run_when(["run", "--only", "ingest", "--verbose"], env, lambda line: "(streamed)" in line or len(lake_files(published)) > len(files_before))
    assert sha256_file(published) == before_sha
    assert len(lake_files(published)) > len(files_before), "the killed run had written files"
    with open_readonly(published) as con:
        assert con.execute("select count(*), sum(round(power_w * 1000)::hugeint) from staging.power_samples").fetchone() == before


@pytest.mark.slow  # two full builds, one on the multiprocess executor (~90 s on 2 cores)
def test_two_workers_build_the_same_warehouse(tmp_path: Path, built_warehouse: Path) -> None:
    published = tmp_path / "wh2" / "edge_carbon.duckdb"
    from tests.conftest import run_config_for

    (tmp_path / "dagster_home").mkdir()
    with dg.DagsterInstance.local_temp(str(tmp_path / "dagster_home")) as instance:  # workers need a persistent instance
        outcome = materialise(workers=2, skip_dashboards=True, instance=instance, warehouse=published, run_config=run_config_for(published))
    assert outcome.success, outcome.failures
    with open_readonly(published) as con:
        con.execute(f"attach '{built_warehouse}' as one (read_only)")
        tables = [r[0] for r in con.execute(
            "select schema_name || '.' || table_name from duckdb_tables() where database_name = 'one' "
            "and schema_name in ('staging', 'core', 'marts') union all "
            "select schema_name || '.' || view_name from duckdb_views() where database_name = 'one' and schema_name = 'staging' "
            "order by 1").fetchall()]
        assert len(tables) > 30
        differ = []
        for table in tables:
            ours, theirs = f"edge_carbon.{table}", f"one.{table}"
            schema, name = table.split(".")
            names = {c for (c,) in con.execute("select column_name from duckdb_columns() where database_name = 'one' "
                                               "and schema_name = ? and table_name = ?", [schema, name]).fetchall()}
            stamps = [c for c in RUN_STAMP_COLUMNS if c in names]  # which run computed a row differs by design
            star = f"* exclude ({', '.join(stamps)})" if stamps else "*"
            n = con.execute(f"select count(*) from (select {star} from {ours} except all select {star} from {theirs})").fetchone()  # noqa: S608 - test constants
            m = con.execute(f"select count(*) from (select {star} from {theirs} except all select {star} from {ours})").fetchone()  # noqa: S608 - test constants
            if n != (0,) or m != (0,):
                differ.append(table)
    assert differ == []


def test_an_hourly_feed_run_writes_only_the_days_it_touches(tmp_path: Path, server: ReplayServer, monkeypatch: pytest.MonkeyPatch) -> None:  # noqa: F811
    """The live feed's rows are Parquet per UTC day: a run that brings one zone's day rewrites that
    day's file only; the DuckDB file holds none of the feed's rows (both feed tables are views)."""
    from pipelines.ingest.feeds.electricitymaps import RecordedElectricityMaps
    from pipelines.ingest.feeds.uk_carbon_intensity import RecordedUkCarbonIntensity
    from tests.run.test_feed_schedule import de_history
    from tests.ingest.test_feeds import Answer, em_api, run_feed

    published = tmp_path / "wh.duckdb"
    first = run_feed(published, uk=RecordedUkCarbonIntensity(), em=RecordedElectricityMaps())
    assert first.success, first.failure_message()
    live = {k: v for k, v in lake_files(published).items() if k.startswith("grid_intensity_live/")}
    with open_readonly(published) as con:
        kinds = dict(con.execute("select table_name, table_type from information_schema.tables where table_name in "
                                 "('grid_intensity_live', 'carbon_intensity_payloads')").fetchall())
        days = [r[0] for r in con.execute("select distinct strftime(period_start, '%Y-%m-%d') from staging.grid_intensity_live order by 1").fetchall()]
    assert kinds == {"grid_intensity_live": "VIEW", "carbon_intensity_payloads": "VIEW"}
    assert sorted(k.split("/")[1] for k in live) == [f"day={d}" for d in days] and len(days) >= 3

    monkeypatch.setenv("ELECTRICITYMAPS_TOKEN", "test-token")
    server.required_token = "test-token"
    server.default = Answer(200, de_history(40.0))
    second = run_feed(published, uk=RecordedUkCarbonIntensity(), em=em_api(server, ["DE"]))
    assert second.success, second.failure_message()
    with open_readonly(published) as con:
        de_days = {r[0] for r in con.execute("select distinct strftime(period_start, '%Y-%m-%d') from staging.grid_intensity_live "
                                             "where zone = 'DE' and source_id = 'feed_electricitymaps'").fetchall()}
    after = {k: v for k, v in lake_files(published).items() if k.startswith("grid_intensity_live/")}
    untouched = {k: v for k, v in live.items() if k.split("/")[1].removeprefix("day=") not in de_days}
    assert untouched and {k: after[k] for k in untouched} == untouched, "a day the run did not touch was rewritten"
    with open_readonly(published) as con:
        current = [r[0] for r in con.execute(f"select partition_key from {lake.CATALOG} where table_name = 'staging.grid_intensity_live' "  # noqa: S608
                                              "and superseded_at is null").fetchall()]
    assert sorted(current) == sorted(set(days) | de_days), "one current file per day"


@pytest.mark.slow  # starts edge-carbon in a subprocess
def test_running_a_log_that_is_not_registered_is_one_line(tmp_path: Path) -> None:
    env = {**os.environ, WAREHOUSE_ENV: str(tmp_path / "wh.duckdb"), "DAGSTER_HOME": str(tmp_path / "dh")}
    done = subprocess.run([sys.executable, "-m", "pipelines.cli", "run", "--logs", "no_such_log"], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 2
    assert done.stderr.strip().splitlines()[-1] == "edge-carbon run: not a registered power log: no_such_log (edge-carbon register adds one)"
    assert "Traceback" not in done.stderr and not (tmp_path / "wh.duckdb").exists()


def test_the_partition_sensor_follows_the_manifest(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Where a daemon runs, a log registered in the manifest gains its partition, and loses it when taken out."""
    from pipelines.defs.partitions import power_log_partitions, registered_logs

    sources = linked_sources(tmp_path)
    monkeypatch.setenv(SOURCES_ENV, str(sources))
    instance = dg.DagsterInstance.ephemeral()
    instance.add_dynamic_partitions("power_logs", ["a_log_no_longer_registered"])
    add_log(sources)
    result = power_log_partitions(dg.build_sensor_context(instance=instance))
    assert isinstance(result, dg.SensorResult)
    [gone, new] = result.dynamic_partitions_requests
    assert isinstance(gone, dg.DeleteDynamicPartitionsRequest) and list(gone.partition_keys) == ["a_log_no_longer_registered"]
    assert isinstance(new, dg.AddDynamicPartitionsRequest) and list(new.partition_keys) == registered_logs() and ADDED in new.partition_keys
    instance.delete_dynamic_partition("power_logs", "a_log_no_longer_registered")
    instance.add_dynamic_partitions("power_logs", list(new.partition_keys))
    assert isinstance(power_log_partitions(dg.build_sensor_context(instance=instance)), dg.SkipReason)


def test_live_grid_files_written_before_the_curated_columns_stay_readable(tmp_path: Path) -> None:
    """staging.grid_intensity_live is read by column name: a day written before GridIntensity
    gained factor_id ... data_last_year reads beside a day written after, those columns null."""
    import polars as pl

    from pipelines.warehouse.database import LAKE_TABLES
    from schemas.grid_intensity import GridIntensity
    from schemas.meta import conform

    table = "staging.grid_intensity_live"
    spec = LAKE_TABLES[table]
    assert spec.union_by_name
    root = tmp_path / "lake"
    con = duckdb.connect(str(tmp_path / "wh.duckdb"))
    day = dt.datetime(2026, 1, 1, tzinfo=dt.UTC)
    rows = [{"zone": "GB", "zone_name": "Great Britain", "country_iso3": "GBR", "period_start": day + dt.timedelta(days=d),
             "period_end": day + dt.timedelta(days=d, minutes=30), "resolution": "PT30M", "gco2e_per_kwh": 100.0 + d,
             "signal": "actual", "emission_scope": "direct", "is_estimated": None, "fetched_at": day + dt.timedelta(days=d, hours=1),
             "source_id": "feed", "source_file": "f", "source_row": 1} for d in range(2)]
    new = lake.write_partitions(conform(GridIntensity, pl.DataFrame(rows[1:])), table, spec, root, "new")
    old_path = lake.new_file(root, table, spec.column, "2026-01-01", "old")
    old_frame = conform(GridIntensity, pl.DataFrame(rows[:1])).drop(
        "factor_id", "low_gco2e_per_kwh", "high_gco2e_per_kwh", "marginal_kind", "status", "citation", "citation_url", "notes",
        "data_first_year", "data_last_year")
    old_frame.write_parquet(old_path)
    old = lake.LakeFile(table, spec.column, "2026-01-01", old_path.relative_to(root).as_posix(), 1, old_path.stat().st_size, "old")
    lake.commit(con, table, [*new, old], replaces=["2026-01-01", "2026-01-02"])
    assert lake.refresh_view(con, table, GridIntensity, root, union_by_name=spec.union_by_name) == 2
    got = con.execute(f"select gco2e_per_kwh, factor_id, notes from {table} order by period_start").fetchall()  # noqa: S608 - test constants
    assert got == [(100.0, None, None), (101.0, None, None)]
    back = lake.read_partitions(con, table, spec, root, ["2026-01-01", "2026-01-02"])
    assert back.get_column("gco2e_per_kwh").to_list() == [100.0, 101.0] and back.get_column("factor_id").null_count() == 2
