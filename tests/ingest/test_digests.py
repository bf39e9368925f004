"""Source digests are recorded with the file's size and modification time and reused while
both hold, so a run does not re-read the whole history of sources."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import pytest

from pipelines.errors import SourceIntegrityError
from pipelines.ingest import digests
from pipelines.ingest.manifest import SourceEntry, verify
from pipelines.paths import WAREHOUSE_ENV


@pytest.fixture
def counted(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> list[Path]:
    """Every full read of a file's bytes, with the cache beside a temporary warehouse."""
    monkeypatch.setenv(WAREHOUSE_ENV, str(tmp_path / "wh" / "edge_carbon.duckdb"))
    monkeypatch.setattr(digests, "_loaded", {})
    reads: list[Path] = []
    real = digests.sha256_file

    def reading(path: Path) -> str:
        reads.append(path)
        return real(path)

    monkeypatch.setattr(digests, "sha256_file", reading)
    return reads


def aged(path: Path, seconds_ago: float = 60) -> None:
    """Date the file's modification well before it is hashed (a trusted, non-racy entry)."""
    when = path.stat().st_mtime - seconds_ago
    os.utime(path, (when, when))


def test_an_unchanged_file_is_read_once(tmp_path: Path, counted: list[Path]) -> None:
    log = tmp_path / "log.csv"
    log.write_text("a,b\n1,2\n", encoding="utf-8")
    aged(log)
    first = digests.sha256_of(log)
    assert digests.sha256_of(log) == first == hashlib.sha256(log.read_bytes()).hexdigest()
    assert counted == [log]
    # another process (a fresh memo) reads the record from disk
    digests._loaded.clear()
    assert digests.sha256_of(log) == first and counted == [log]
    assert digests.cache_path() == tmp_path / "wh" / ".cache" / "sha256.json" and digests.cache_path().is_file()


def test_a_changed_file_is_read_again_and_fails_its_check(tmp_path: Path, counted: list[Path]) -> None:
    log = tmp_path / "log.csv"
    log.write_text("a,b\n1,2\n", encoding="utf-8")
    aged(log)
    entry = SourceEntry(id="log", path="log.csv", title="t", url="u", license="l", retrieved_on=None,  # type: ignore[arg-type]
                        sha256=digests.sha256_of(log), kind="k", table="t", status="primary", root=tmp_path)
    verify(entry)
    log.write_text("a,b\n1,3\n", encoding="utf-8")  # same size, new content
    aged(log, seconds_ago=30)
    with pytest.raises(SourceIntegrityError, match="sha256 mismatch"):
        verify(entry)
    assert counted == [log, log]


def test_a_file_modified_as_it_was_hashed_is_not_trusted(tmp_path: Path, counted: list[Path]) -> None:
    log = tmp_path / "log.csv"
    log.write_text("fresh\n", encoding="utf-8")  # modified just now: the record may predate a write in the same tick
    digests.sha256_of(log)
    digests.sha256_of(log)
    assert counted == [log, log]
