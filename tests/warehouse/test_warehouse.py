"""Publishing: readers are never blocked, failed or killed runs never touch the published file."""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import duckdb
import pytest

from pipelines.errors import SourceIntegrityError
from pipelines.ingest.manifest import load_manifest, verify
from pipelines.paths import SOURCES_DIR, SOURCES_ENV, WAREHOUSE_ENV
from tests.conftest import build
from tests.helpers import kill_run_when


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _counts(path: Path) -> dict[str, int]:
    with duckdb.connect(str(path), read_only=True) as con:
        tables = [r[0] for r in con.execute(
            "select schema_name || '.' || table_name from duckdb_tables() where schema_name in ('staging','quarantine') order by 1"
        ).fetchall()]
        return {t: con.execute("select count(*) from query_table($t)", {"t": t}).fetchone()[0] for t in tables}


@pytest.fixture
def published(tmp_path: Path, built_warehouse: Path) -> Path:
    """A private copy of the session's warehouse, as the published file of a fresh location."""
    path = tmp_path / "wh" / "edge_carbon.duckdb"
    path.parent.mkdir()
    shutil.copyfile(built_warehouse, path)
    return path


def test_tampered_source_fails_with_message_naming_the_file(tmp_path: Path) -> None:
    copy = tmp_path / "sources"
    shutil.copytree(SOURCES_DIR, copy)
    entry = next(e for e in load_manifest(copy) if e.id == "curated_network_energy")
    with entry.file.open("a", encoding="utf-8") as handle:
        handle.write("tampered,radio_power,x,1,W,,,2020,,primary,x,https://x.org,\n")
    with pytest.raises(SourceIntegrityError) as err:
        verify(entry)
    message = str(err.value)
    assert str(entry.file) in message and "sha256 mismatch" in message and "curated_network_energy" in message


def test_failed_run_leaves_published_warehouse_unchanged(tmp_path: Path, published: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    before_sha, before = _sha(published), _counts(published)
    copy = tmp_path / "sources"
    shutil.copytree(SOURCES_DIR, copy)
    (copy / "curated" / "network_energy.csv").write_text("factor_id\nchanged\n", encoding="utf-8")
    monkeypatch.setenv(SOURCES_ENV, str(copy))
    result = build(published)
    assert not result.success
    errors = [e.step_failure_data.error for e in result.all_events if e.is_step_failure]
    assert any("network_energy.csv" in str(err) and "sha256 mismatch" in str(err) for err in errors)
    assert _sha(published) == before_sha
    assert _counts(published) == before
    assert not list((published.parent / ".runs").glob("*.duckdb")), "working copy of the failed run was not removed"


READER = textwrap.dedent(
    """
    import os, sys, time, duckdb
    con = duckdb.connect(sys.argv[1], read_only=True)
    print("open", flush=True)
    n = 0
    deadline = time.time() + 120
    while time.time() < deadline and not os.path.exists(sys.argv[2]):
        n = con.execute("select count(*) from staging.sources").fetchone()[0]
        time.sleep(0.05)
    print("rows", n, flush=True)
    """
)


def test_open_reader_and_materialisation_both_succeed(published: Path, tmp_path: Path) -> None:
    before = _counts(published)
    stop = tmp_path / "stop"
    reader = subprocess.Popen([sys.executable, "-c", READER, str(published), str(stop)], stdout=subprocess.PIPE, text=True)
    try:
        assert reader.stdout is not None and reader.stdout.readline().strip() == "open"
        result = build(published, only=["marts/training_energy"])  # publishes over the file the reader holds open
        assert result.success
    finally:
        stop.touch()
        out, _ = reader.communicate(timeout=60)
    assert reader.returncode == 0, out
    assert int(out.split()[-1]) == before["staging.sources"]
    assert _counts(published) == before  # same inputs, same warehouse


@pytest.mark.slow  # starts `edge-carbon run` in a subprocess (kills it once it is writing)
@pytest.mark.kills_runs
def test_killed_run_leaves_previous_warehouse_complete(published: Path) -> None:
    before_sha, before = _sha(published), _counts(published)
    # kill it once it has written into its working copy
    kill_run_when(["run", "--verbose"], {**os.environ, WAREHOUSE_ENV: str(published)}, lambda line: "verified" in line and "source files" in line)
    assert _sha(published) == before_sha
    assert _counts(published) == before


def test_unparseable_file_fails_naming_file_and_line(tmp_path: Path, published: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from pipelines.cli import main as cli

    before_sha = _sha(published)
    copy = tmp_path / "sources"
    shutil.copytree(SOURCES_DIR, copy)
    (copy / "power" / "synthetic" / "table1_gpu_r3.csv").write_bytes(b"this is not, an nvidia-smi log\n\x00\x01\x02\n")
    monkeypatch.setenv(SOURCES_ENV, str(copy))
    assert cli(["register", "--refresh", "synthetic_table1_gpu_r3"]) == 0
    result = build(published)
    assert not result.success
    errors = " ".join(str(e.step_failure_data.error) for e in result.all_events if e.is_step_failure)
    assert "table1_gpu_r3.csv, line 1" in errors and "header lacks column" in errors
    assert _sha(published) == before_sha
