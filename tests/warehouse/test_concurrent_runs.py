"""Fault injection on a built warehouse through ``edge-carbon run`` (slow: whole runs in
subprocesses): runs started together lose no update, a catalog row for a missing file blocks
the publish and is repaired by the next run, a truncated published file is named and rebuilt."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import duckdb
import pytest

from pipelines.ingest.digests import sha256_file
from pipelines.ingest.manifest import entries_for
from pipelines.ingest.registration import refresh
from pipelines.paths import PROJECT_ROOT, SOURCES_DIR, SOURCES_ENV, WAREHOUSE_ENV
from pipelines.warehouse import lake, verify
from pipelines.warehouse.database import open_readonly
from pipelines.warehouse.generation import GENERATIONS
from pipelines.warehouse.power_logs import SAMPLES_TABLE, stage_log
from tests.warehouse.test_lake import copy_warehouse, linked_sources

REPEATS = 5
FIRST, SECOND, THIRD = "synthetic_table1_gpu_r1", "synthetic_table1_gpu_r2", "synthetic_table1_gpu_r3"


@pytest.fixture
def setting(tmp_path: Path, built_warehouse: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, dict[str, str]]:
    """A copy of the built warehouse, sources whose power logs are copies (so a test may change
    them), and the environment of an ``edge-carbon`` subprocess on them."""
    sources = linked_sources(tmp_path)
    (sources / "power").unlink()
    shutil.copytree(SOURCES_DIR / "power", sources / "power")
    monkeypatch.setenv(SOURCES_ENV, str(sources))
    published = copy_warehouse(built_warehouse, tmp_path / "wh" / "edge_carbon.duckdb")
    env = {**os.environ, WAREHOUSE_ENV: str(published), SOURCES_ENV: str(sources), "DAGSTER_HOME": str(tmp_path / "dh")}
    return published, env


def start(env: dict[str, str], *args: str) -> subprocess.Popen[str]:
    """``edge-carbon ARGS`` in a subprocess."""
    return subprocess.Popen([sys.executable, "-m", "pipelines.cli", *args], cwd=PROJECT_ROOT, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def finish(proc: subprocess.Popen[str]) -> tuple[int, str, str]:
    out, err = proc.communicate(timeout=600)
    return proc.returncode, out, err


def shorten(log: str, drop: int) -> None:
    """Give log ``log`` a new file: its shipped lines less the last ``drop``; its sha256 refreshed."""
    [entry] = [e for e in entries_for(SAMPLES_TABLE) if e.id == log]
    lines = (SOURCES_DIR / entry.path).read_text(encoding="utf-8").splitlines(keepends=True)
    entry.file.write_text("".join(lines[:-drop]), encoding="utf-8")
    refresh(log)


def expected_rows(log: str) -> int:
    """The samples the log's current file gives (staged here as the run stages it)."""
    [entry] = [e for e in entries_for(SAMPLES_TABLE) if e.id == log]
    staged, _ = stage_log(entry, run_id="expected")
    return staged.row_count


def state(published: Path, logs: list[str]) -> dict[str, tuple[int, str | None]]:
    """Per log: its rows in staging.power_samples and its sha256 in staging.sources."""
    with open_readonly(published) as con:
        rows = dict(con.execute("select source_id, count(*) from staging.power_samples where list_contains($l, source_id) group by 1",
                                {"l": logs}).fetchall())
        shas = dict(con.execute("select source_id, sha256 from staging.sources where list_contains($l, source_id)", {"l": logs}).fetchall())
    return {log: (rows.get(log, 0), shas.get(log)) for log in logs}


def generations(published: Path) -> list[tuple[int, int]]:
    with open_readonly(published) as con:
        return con.execute(f"select generation, base_generation from {GENERATIONS} order by generation").fetchall()  # noqa: S608


def run_together(published: Path, env: dict[str, str], runs: dict[str, list[str]]) -> str:
    """Start the runs together; each must succeed and every changed log hold its new file's rows
    (staging.sources agreeing), with one new generation a run on top of the previous. Returns
    their stderr, joined."""
    before = generations(published)
    procs = {log: start(env, "run", *args) for log, args in runs.items()}
    done = {log: finish(proc) for log, proc in procs.items()}
    for log, (code, out, err) in done.items():
        assert code == 0, f"{log}: {err[-3000:]}"
        assert "built " in out
    files = {e.id: e.file for e in entries_for(SAMPLES_TABLE)}
    assert state(published, list(runs)) == {log: (expected_rows(log), sha256_file(files[log])) for log in runs}, "an update was lost"
    top = before[-1][0]
    assert generations(published)[len(before):] == [(top + i + 1, top + i) for i in range(len(runs))]
    return "".join(err for _, _, err in done.values())


@pytest.mark.slow  # 2 x 5 `edge-carbon run --logs` subprocesses, two at a time
def test_two_log_runs_started_together_lose_no_update(setting: tuple[Path, dict[str, str]]) -> None:
    published, env = setting
    said = ""
    for repeat in range(REPEATS):
        shorten(FIRST, 40 + 7 * repeat)
        shorten(SECOND, 60 + 11 * repeat)
        said += run_together(published, env, {FIRST: ["--logs", FIRST, "--only", "ingest"], SECOND: ["--logs", SECOND, "--only", "ingest"]})
    assert "waiting for the publish lock of " in said and ", held by run " in said


@pytest.mark.slow  # 5 full runs, each beside an `edge-carbon run --logs`
def test_a_log_run_beside_a_full_run_loses_no_update(setting: tuple[Path, dict[str, str]]) -> None:
    published, env = setting
    for repeat in range(REPEATS):
        shorten(FIRST, 30 + 13 * repeat)  # the full run's update
        shorten(THIRD, 50 + 5 * repeat)  # the --logs run's
        run_together(published, env, {FIRST: ["--skip-dashboards"], THIRD: ["--logs", THIRD, "--only", "ingest"]})


@pytest.mark.slow  # two `edge-carbon run --logs` subprocesses
def test_a_catalog_row_for_a_missing_file_blocks_the_publish_and_the_next_run_repairs_it(setting: tuple[Path, dict[str, str]]) -> None:
    published, env = setting
    gone = f"power_samples/source_id={FIRST}/part-gone-00000000.parquet"
    with duckdb.connect(str(published)) as con:  # the log's current row now names a file that is not there
        con.execute(f"update {lake.CATALOG} set superseded_at = now() where partition_key = $k and superseded_at is null", {"k": FIRST})  # noqa: S608
        con.execute(f"insert into {lake.CATALOG} values ($t, 'source_id', $k, $f, 10, 1000, 'gone', now(), null)",  # noqa: S608
                    {"t": SAMPLES_TABLE, "k": FIRST, "f": gone})
    before = sha256_file(published)
    code, _, err = finish(start(env, "run", "--logs", SECOND, "--only", "ingest"))
    assert code == 1
    failed = [line for line in err.splitlines() if line.startswith("FAILED ")]
    root = lake.lake_root(published)
    assert failed == [f"FAILED staging__power_samples.commit_power_logs: pipelines.errors.LakeFileError: {published}: not published: "
                      f"{root / gone} is missing (catalog row {lake.CATALOG}: table_name={SAMPLES_TABLE}, partition_key={FIRST}, "
                      "run_id=gone); the previous warehouse is unchanged, and the next run ingests such a log again "
                      "(or drops the row with a warning)"]
    assert "Traceback" not in err.split("FAILED ")[-1]
    assert sha256_file(published) == before, "the published warehouse is byte-identical"

    code, out, err = finish(start(env, "run", "--logs", SECOND, "--only", "ingest"))
    assert code == 0, err[-3000:]
    assert f"ingesting log {FIRST} again: {root / gone} is missing" in err
    assert state(published, [FIRST])[FIRST][0] == expected_rows(FIRST)
    with duckdb.connect(str(published)) as con:
        assert verify.broken_files(con, root) == []
    assert verify.due_repairs(published) == []


@pytest.mark.slow  # a refused `edge-carbon run` and a full `edge-carbon run --rebuild`
def test_a_truncated_published_file_is_named_and_rebuilt(setting: tuple[Path, dict[str, str]], built_warehouse: Path) -> None:
    published, env = setting
    with open(published, "r+b") as handle:
        handle.truncate(20_000)
    damaged = sha256_file(published)
    code, out, err = finish(start(env, "run", "--skip-dashboards"))
    assert code == 1 and out == ""
    [line] = err.strip().splitlines()
    assert line.startswith(f"edge-carbon run: the published warehouse {published} cannot be opened (IO Error: ")
    assert line.endswith("; edge-carbon run --rebuild starts again from an empty warehouse and lake and keeps this file and the old lake aside")

    code, out, err = finish(start(env, "run", "--rebuild", "--skip-dashboards"))
    assert code == 0, err[-3000:]
    [kept] = published.parent.glob("edge_carbon.aside-*.duckdb")
    [old_lake] = published.parent.glob("lake.aside-*")
    assert sha256_file(kept) == damaged and any(old_lake.rglob("*.parquet"))
    assert f"kept aside: {published} -> {kept}" in err
    counts = "select (select count(*) from staging.power_samples), (select count(*) from staging.sources), (select count(*) from marts.verdict)"
    with open_readonly(published) as con, open_readonly(built_warehouse) as reference:
        assert con.execute(counts).fetchall() == reference.execute(counts).fetchall()
        assert con.execute(f"select generation, base_generation from {GENERATIONS}").fetchall() == [(1, 0)]  # noqa: S608
