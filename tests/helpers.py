"""Test helpers: stage one file through a parser exactly as the pipeline does."""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pandera.polars as pa
import polars as pl
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

from pipelines.ingest.digests import sha256_file
from pipelines.ingest.manifest import SourceEntry
from pipelines.ingest.staging import Parser, Staged, parse_entry, validate_parsed
from pipelines.paths import PROJECT_ROOT


def entry_for(path: Path, *, kind: str, table: str, options: dict[str, Any] | None = None, source_id: str = "test_source") -> SourceEntry:
    """A manifest entry for a file written by a test (hash computed, root = its folder)."""
    return SourceEntry(
        id=source_id,
        path=path.name,
        title="test file",
        url="https://example.invalid/test",
        license="CC0-1.0",
        retrieved_on=__import__("datetime").date(2026, 1, 1),
        sha256=sha256_file(path),
        kind=kind,
        table=table,
        status="primary",
        options=options or {},
        root=path.parent,
    )


def stage_text(
    tmp_path: Path,
    name: str,
    content: str | bytes,
    *,
    parser: Parser,
    kind: str,
    table: str,
    model: type[pa.DataFrameModel],
    options: dict[str, Any] | None = None,
) -> Staged:
    """Write ``content`` to ``tmp_path/name`` and run it through parse + validate."""
    path = tmp_path / name
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content, encoding="utf-8")
    entry = entry_for(path, kind=kind, table=table, options=options)
    return validate_parsed(table, model, [(entry, parse_entry(entry, parser))], run_id="test-run")


def rejects_of(staged: Staged) -> list[tuple[Any, ...]]:
    """(source_row, column_name, check_name, value) of every reject, sorted."""
    return sorted(
        staged.rejects.select("source_row", "column_name", "check_name", "value").iter_rows(),
        key=lambda r: (r[0] or 0, r[1] or "", r[2], r[3] or ""),
    )


def reject_table(text: str) -> list[tuple[Any, ...]]:
    """Expected rejects written as a table, one per line: ``row | column | check | value``, with
    ``-`` for a missing column or value (the form :func:`rejects_of` returns)."""
    rows = []
    for line in text.strip().splitlines():
        row, column, check, value = (cell.strip() for cell in line.split(" | "))
        rows.append((int(row), None if column == "-" else column, check, None if value == "-" else value))
    return rows


def assert_reasons(reasons: dict[Any, str], expected: dict[Any, str]) -> None:
    """Each key of ``expected`` is in ``reasons`` with that reason (other keys may be there too)."""
    assert {key: reasons.get(key) for key in expected} == expected


def as_rows(frame: pl.DataFrame, *cols: str) -> list[tuple[Any, ...]]:
    return list(frame.select(cols).iter_rows())


#: Set to 1 (``.ci/run`` does) to run every property test's full number of examples.
FULL_PROPERTIES_ENV = "EDGE_CARBON_FULL_PROPERTIES"


def examples(n: int) -> int:
    """Hypothesis examples for a property test written for ``n``: all of them in CI, a third
    (at least 10) in the default ``make test``, so the everyday loop stays fast and CI keeps
    the full search."""
    return n if os.environ.get(FULL_PROPERTIES_ENV) == "1" else max(10, n // 3)


def kill_run_when(args: list[str], env: dict[str, str], ready: Callable[[str], bool], *, timeout_s: float = 120) -> None:
    """Start ``python -m pipelines.cli ARGS`` in the project, SIGKILL it at the first output line
    for which ``ready(line)`` holds, and check that the kill is what ended it."""
    import signal
    import subprocess
    import sys
    import time

    from pipelines.paths import PROJECT_ROOT

    proc = subprocess.Popen([sys.executable, "-m", "pipelines.cli", *args], cwd=PROJECT_ROOT, env={**env, "PYTHONUNBUFFERED": "1"},
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    assert proc.stdout is not None
    deadline, seen = time.time() + timeout_s, ""
    for line in proc.stdout:
        seen += line
        if ready(line):
            break
        assert time.time() < deadline, seen
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=30)
    assert proc.returncode == -signal.SIGKILL, seen[-2000:]


def pinned_versions(constraints: Path = PROJECT_ROOT / "constraints.txt") -> dict[str, str]:
    """The ``name==version`` pins of a constraints file, by canonical distribution name (PEP 503)."""
    pins = {}
    for line in constraints.read_text(encoding="utf-8").splitlines():
        line = line.split("#", 1)[0].strip()
        if line:
            requirement = Requirement(line)
            (pin,) = requirement.specifier
            pins[canonicalize_name(requirement.name)] = pin.version
    return pins


def browser_missing(chromium: str | None, chromedriver: str | None) -> str | None:
    """Why the browser tests cannot run, naming exactly what is missing (None when both are there)."""
    missing = [name for name, path in (("chromium", chromium), ("chromedriver", chromedriver)) if not path]
    if not missing:
        return None
    return f"{' and '.join(missing)} {'is' if len(missing) == 1 else 'are'} not installed"


#: The folders and files of the project a build reads: what a test copies to change a project by rows.
COPIED = ("pipelines", "schemas", "sql", "dashboards", "sources", "tests", "pyproject.toml")


def copy_project(root: Path) -> None:
    """The project's code and sources (:data:`COPIED`) at ``root``."""
    root.mkdir(parents=True, exist_ok=True)
    for name in COPIED:
        if (PROJECT_ROOT / name).is_file():
            shutil.copyfile(PROJECT_ROOT / name, root / name)
        else:
            shutil.copytree(PROJECT_ROOT / name, root / name, ignore=shutil.ignore_patterns("__pycache__", "site", "out"))


def touched_files(root: Path) -> list[str]:
    """The files of a copy at ``root`` that differ from the project's, or are new: caches and dot files (the
    manifest lock a register leaves, sources/.manifest.lock) aside."""
    touched = []
    for name in COPIED:
        for path in [root / name] if (root / name).is_file() else sorted((root / name).rglob("*")):
            relative = path.relative_to(root)
            if not path.is_file() or "__pycache__" in relative.parts or path.name.startswith("."):
                continue
            original = PROJECT_ROOT / relative
            if not original.is_file() or original.read_bytes() != path.read_bytes():
                touched.append(relative.as_posix())
    return sorted(touched)
