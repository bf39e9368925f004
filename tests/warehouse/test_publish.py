"""Publishing without losing an update: the publish lock, the generation a run started from,
the lake verified before a publish, a damaged published file named, no working copy left.

These run on small DuckDB files without Dagster; the full runs side by side, the missing lake
file and the truncated warehouse through ``edge-carbon run`` are in test_concurrent_runs.py (slow).
"""

from __future__ import annotations

import logging
import os
import threading
import time
from pathlib import Path

import duckdb
import pytest

from pipelines.errors import DamagedWarehouse, LakeFileError, StalePublish
from pipelines.ingest.digests import sha256_file
from pipelines.warehouse import lake, verify
from pipelines.warehouse.database import lake_views, lock_path, publish_lock, runs_dir, working_copy
from pipelines.warehouse.generation import GENERATIONS
from pipelines.warehouse.rebuild import damage, set_aside
from schemas.power_samples import PowerSamples

LOG = logging.getLogger("test_publish")
TABLE = "staging.power_samples"


def _publish(published: Path, run_id: str, rows: int = 1) -> None:
    """A run that writes one small table and publishes."""
    with working_copy(published, run_id, failed=lambda: False, log=LOG) as con:
        con.execute("create or replace table core.t as select range as i from range($n)", {"n": rows})


def _generations(published: Path) -> list[tuple[int, int, str]]:
    with duckdb.connect(str(published), read_only=True) as con:
        return con.execute(f"select generation, base_generation, run_id from {GENERATIONS} order by generation").fetchall()  # noqa: S608


def test_each_publish_is_the_next_generation_and_leaves_no_copy(tmp_path: Path) -> None:
    published = tmp_path / "wh" / "edge_carbon.duckdb"
    _publish(published, "run-a", 3)
    _publish(published, "run-b", 5)
    assert _generations(published) == [(1, 0, "run-a"), (2, 1, "run-b")]
    assert list(runs_dir(published).iterdir()) == []


def test_a_second_writer_waits_and_says_for_which_run(tmp_path: Path) -> None:
    published = tmp_path / "edge_carbon.duckdb"
    said: list[str] = []
    got: list[float] = []

    def second() -> None:
        with publish_lock(published, "run second", waiting=said.append):
            got.append(time.monotonic())

    with publish_lock(published, "run first"):
        thread = threading.Thread(target=second)
        thread.start()
        time.sleep(0.3)
        assert got == [] and len(said) == 1
        released = time.monotonic()
    thread.join(timeout=10)
    assert len(got) == 1 and got[0] >= released
    assert said[0].startswith(f"waiting for the publish lock of {published} ({lock_path(published)}), held by run first (pid {os.getpid()} on ")


def test_a_run_never_publishes_over_a_newer_state(tmp_path: Path) -> None:
    """A publisher that held no lock replaced the file while the run worked: the run refuses."""
    published = tmp_path / "edge_carbon.duckdb"
    _publish(published, "run-a")
    newer = tmp_path / "newer.duckdb"
    with pytest.raises(StalePublish, match="changed while this run worked on its copy"):
        with working_copy(published, "run-b", failed=lambda: False, log=LOG) as con:
            con.execute("create table core.mine as select 1 as x")
            os.replace(published, newer)  # "another publisher": copy it back under a new inode
            newer.write_bytes(b"")
            os.replace(newer, published)
    assert published.read_bytes() == b"", "the newer state is left as it was"
    assert list(runs_dir(published).iterdir()) == []


def test_a_failed_or_raising_run_removes_its_copy_at_once(tmp_path: Path) -> None:
    published = tmp_path / "edge_carbon.duckdb"
    _publish(published, "run-a")
    before = sha256_file(published)
    with working_copy(published, "run-failed", failed=lambda: True, log=LOG) as con:
        con.execute("create table core.lost as select 1 as x")
    with pytest.raises(RuntimeError, match="a step raised"):
        with working_copy(published, "run-raised", failed=lambda: False, log=LOG):
            raise RuntimeError("a step raised")
    assert sha256_file(published) == before
    assert list(runs_dir(published).iterdir()) == []


def test_a_damaged_published_file_is_named_and_set_aside(tmp_path: Path) -> None:
    published = tmp_path / "edge_carbon.duckdb"
    _publish(published, "run-a", 100_000)
    size = published.stat().st_size
    with open(published, "r+b") as handle:
        handle.truncate(min(size // 2, 20_000))
    damaged = sha256_file(published)
    why = damage(published)
    assert why is not None and why.startswith(f"the published warehouse {published} cannot be opened (")
    assert why.endswith("edge-carbon run --rebuild starts again from an empty warehouse and lake and keeps this file and the old lake aside")
    with pytest.raises(DamagedWarehouse, match="cannot be opened") as caught:
        _publish(published, "run-b")
    assert caught.value.path == str(published)
    assert list(runs_dir(published).iterdir()) == [], "the damaged copy is not kept"
    (tmp_path / "lake" / "power_samples").mkdir(parents=True)
    moved = set_aside(published, "test")
    assert [(a.name, b.name.split(".aside-")[0]) for a, b in moved] == [("edge_carbon.duckdb", "edge_carbon"), ("lake", "lake")]
    assert sha256_file(moved[0][1]) == damaged and (moved[1][1] / "power_samples").is_dir()
    assert not published.exists() and damage(published) is None


def _lake(tmp_path: Path) -> tuple[duckdb.DuckDBPyConnection, Path, list[lake.LakeFile]]:
    """A catalog of three current files of staging.power_samples (3, 4 and 5 rows) and its view."""
    root = tmp_path / "lake"
    con = duckdb.connect(str(tmp_path / "wh.duckdb"))
    con.execute("create schema staging")
    files = []
    for key, rows in (("a", 3), ("b", 4), ("c", 5)):
        con.execute("create or replace table staging.scratch as select $k as source_id, range as i from range($n)", {"k": key, "n": rows})
        path = lake.new_file(root, TABLE, "source_id", key, "run-1")
        files.append(lake.copy_to_parquet(con, "staging.scratch", path, root, table=TABLE, column="source_id", key=key, run_id="run-1"))
    lake.commit(con, TABLE, files, replaces=["a", "b", "c"])
    return con, root, files


def test_verification_names_a_missing_and_a_resized_file(tmp_path: Path) -> None:
    con, root, (a, b, _) = _lake(tmp_path)
    lake.refresh_view(con, TABLE, PowerSamples, root)
    assert verify.view_problems(con, root, TABLE, verify.changed_files(con, "run-1")) == [] and verify.broken_files(con, root) == []
    assert verify.totals(con, TABLE) == (3, 12)
    (root / a.file).unlink()
    with open(root / b.file, "ab") as handle:
        handle.write(b"x")
    assert [(item.partition_key, item.reason) for item in verify.broken_files(con, root)] == [
        ("a", "is missing"), ("b", f"has {b.size_bytes + 1:,} bytes, the catalog says {b.size_bytes:,}")]


def test_an_unreadable_file_of_the_right_size_is_found_by_reading_the_view(tmp_path: Path) -> None:
    con, root, (_, _, c) = _lake(tmp_path)
    lake.refresh_view(con, TABLE, PowerSamples, root)
    (root / c.file).write_bytes(b"\0" * c.size_bytes)
    assert verify.broken_files(con, root) == [], "a stat cannot tell"
    assert verify.view_problems(con, root, TABLE, verify.changed_files(con, "another-run")) == [], "only the changed files are read"
    [found] = verify.view_problems(con, root, TABLE, verify.changed_files(con, "run-1"))
    assert (found.partition_key, found.file) == ("c", c.file) and found.reason.startswith("cannot be read (")


def test_a_refused_publish_names_the_file_and_row_and_lists_it_for_repair(tmp_path: Path) -> None:
    con, root, (a, _, _) = _lake(tmp_path)
    (root / a.file).unlink()
    published = tmp_path / "wh.duckdb"
    error = verify.refuse(published, verify.broken_files(con, root))
    assert isinstance(error, LakeFileError)
    assert str(error) == (
        f"{published}: not published: {root / a.file} is missing (catalog row meta.lake_files: table_name={TABLE}, "
        "partition_key=a, run_id=run-1); the previous warehouse is unchanged, and the next run ingests such a log again "
        "(or drops the row with a warning)")
    assert [(item["partition_key"], item["file"]) for item in verify.due_repairs(published)] == [("a", a.file)]
    assert [item.partition_key for item in verify.drop_rows(con, verify.broken_files(con, root))] == ["a"]
    assert lake.current_keys(con, TABLE) == ["b", "c"] and verify.broken_files(con, root) == []
    verify.clear_repairs(published)
    assert verify.due_repairs(published) == []


def test_views_refuse_a_missing_file_until_the_repair_list_has_it_then_drop_its_row(tmp_path: Path,
                                                                                    caplog: pytest.LogCaptureFixture) -> None:
    """What a run does that cannot ingest the partition again (a feed run, a run of the marts)."""
    con, root, (a, _, _) = _lake(tmp_path)
    published = tmp_path / "wh.duckdb"
    (root / a.file).unlink()
    with pytest.raises(LakeFileError, match=f"{root / a.file} is missing"):
        lake_views(con, published, log=LOG)
    assert [item["file"] for item in verify.due_repairs(published)] == [a.file]
    with caplog.at_level(logging.WARNING, logger=LOG.name):
        lake_views(con, published, log=LOG)
    assert lake.current_keys(con, TABLE) == ["b", "c"]
    assert con.execute(f"select count(*) from {TABLE}").fetchall() == [(9,)]  # noqa: S608 - test constant
    assert [r.getMessage() for r in caplog.records] == [
        f"dropped from the lake's catalog: {root / a.file} is missing (catalog row meta.lake_files: table_name={TABLE}, "
        "partition_key=a, run_id=run-1); edge-carbon run --logs a ingests it again"]
