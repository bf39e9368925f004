"""The published warehouse opens in DuckDB clients older than the build's: it is written at DuckDB's
v1.4.0 storage format, and the newest ``duckdb`` CLI on the package index (``duckdb-cli``, a base
dependency pinned in constraints.txt, so ``make run`` installs it) reads it; a file published at
duckdb 2.0's own format is rewritten once by the next run's copy."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import duckdb

from pipelines.warehouse import compat
from pipelines.warehouse.database import _start, open_readonly, work_path
from pipelines.warehouse.generation import forget_base
from tests.helpers import pinned_versions

#: The DuckDB CLI the project installs beside this interpreter (``.venv/bin/duckdb``).
CLI = Path(os.path.abspath(sys.executable)).parent / "duckdb"


def cli_count(path: Path, table: str) -> int:
    """``select count(*) from TABLE`` through the DuckDB CLI, read-only."""
    done = subprocess.run([str(CLI), "-readonly", "-csv", "-noheader", str(path), "-c", f"select count(*) from {table}"],  # noqa: S608
                          capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    return int(done.stdout.strip())


def test_the_cli_is_the_pinned_release() -> None:
    assert CLI.exists(), f"{CLI} is missing: install the project (pip install -c constraints.txt -e .)"
    done = subprocess.run([str(CLI), "--version"], capture_output=True, text=True, timeout=60, check=True)
    assert done.stdout.split()[0] == "v" + pinned_versions()["duckdb-cli"]


def test_the_published_warehouse_opens_in_the_duckdb_cli(built_warehouse: Path) -> None:
    assert compat.storage_version(built_warehouse) in compat.OLDER_CLIENTS_READ
    with open_readonly(built_warehouse) as con:
        verdict, samples = (con.execute(f"select count(*) from {t}").fetchone()[0] for t in ("marts.verdict", "staging.power_samples"))  # noqa: S608
    assert verdict > 0 and samples > 0
    assert cli_count(built_warehouse, "marts.verdict") == verdict
    assert cli_count(built_warehouse, "staging.power_samples") == samples  # a view over the lake's Parquet


def newer_file(path: Path) -> Path:
    """A DuckDB file at duckdb 2.0's own storage format, with a schema, a table, a view and comments."""
    with duckdb.connect(str(path)) as con:
        con.execute("create schema marts")
        con.execute("create table marts.t as select range as x, range * 2 as y from range(1000)")
        con.execute("create view marts.v as select x from marts.t where x < 10")
        con.execute("comment on table marts.t is 'a table'")
        con.execute("comment on column marts.t.y is 'twice x'")
    return path


def test_a_file_of_a_newer_format_is_rewritten_with_its_contents(tmp_path: Path) -> None:
    path = newer_file(tmp_path / "newer.duckdb")
    assert compat.storage_version(path) not in compat.OLDER_CLIENTS_READ
    assert compat.rewrite_if_newer(path)
    assert compat.storage_version(path) in compat.OLDER_CLIENTS_READ
    assert not compat.rewrite_if_newer(path)  # once
    with duckdb.connect(str(path), read_only=True) as con:
        assert con.execute("select count(*), sum(y) from marts.t").fetchone() == (1000, 999_000)
        assert con.execute("select count(*) from marts.v").fetchone() == (10,)
        assert con.execute("select comment from duckdb_tables() where table_name = 't'").fetchone() == ("a table",)
        assert con.execute("select comment from duckdb_columns() where column_name = 'y'").fetchone() == ("twice x",)
    assert cli_count(path, "marts.v") == 10
    assert [p.name for p in tmp_path.iterdir()] == ["newer.duckdb"]


def test_a_run_copying_a_newer_published_file_writes_the_older_format(tmp_path: Path) -> None:
    published = newer_file(tmp_path / "edge_carbon.duckdb")
    work = work_path(published, "run-1")
    _start(published, work)
    try:
        assert compat.storage_version(work) in compat.OLDER_CLIENTS_READ
        assert compat.storage_version(published) not in compat.OLDER_CLIENTS_READ  # the published file is not touched
    finally:
        work.unlink()
        forget_base(work)
