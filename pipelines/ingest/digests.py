"""sha256 digests of source files, computed once per file version.

Every run verifies every source file against the manifest (twice: the sources asset and the
parser). Re-reading the whole history of power logs on each run would make a run's cost grow
with everything ever loaded, so a digest is recorded with the file's size and modification
time and reused while both are unchanged, as git and make do. An entry is trusted only if the
file was last modified more than :data:`RACY_NS` before it was hashed, so a file rewritten
within the same clock tick as its hashing is hashed again. The record is a small JSON file
beside the published warehouse (``.cache/sha256.json``), replaced atomically; deleting it only
costs one full re-hash. New digests are written at most every :data:`SAVE_EVERY_S` seconds and
at :func:`flush` (the end of a step that verified files, and process exit), dropping the entries
of files that are gone, so a run over thousands of logs does not rewrite the record per file.
"""

from __future__ import annotations

import atexit
import contextlib
import functools
import hashlib
import json
import os
import tempfile
import time
from pathlib import Path

from pipelines.paths import WAREHOUSE_ENV, warehouse_path

#: A file modified this close to (or after) its hashing is hashed again (ns).
RACY_NS = 2_000_000_000
#: Cache file name, below the published warehouse's folder.
CACHE_NAME = Path(".cache") / "sha256.json"

#: Unsaved digests are written when this long has passed since the last write (s).
SAVE_EVERY_S = 5.0

_loaded: dict[Path, dict[str, dict[str, int | str]]] = {}
_dirty: set[Path] = set()
_saved_at: dict[Path, float] = {}


def sha256_file(path: Path) -> str:
    """Hex sha256 of a file, read in 1 MiB chunks."""
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for chunk in iter(lambda: handle.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def cache_path() -> Path:
    """Where the digests are recorded: ``.cache/sha256.json`` beside the published warehouse."""
    return _cache_for(os.environ.get(WAREHOUSE_ENV))


@functools.lru_cache(maxsize=8)
def _cache_for(override: str | None) -> Path:
    """:func:`cache_path` for one value of ``$EDGE_CARBON_WAREHOUSE`` (resolved once, not per file)."""
    return warehouse_path().parent / CACHE_NAME


def _records(cache: Path) -> dict[str, dict[str, int | str]]:
    if cache not in _loaded:
        try:
            _loaded[cache] = json.loads(cache.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            _loaded[cache] = {}
    return _loaded[cache]


def _save(cache: Path, records: dict[str, dict[str, int | str]]) -> None:
    with contextlib.suppress(OSError):  # a read-only place only costs re-hashing next time
        cache.parent.mkdir(parents=True, exist_ok=True)
        handle, tmp = tempfile.mkstemp(dir=cache.parent, prefix=".sha256-", suffix=".json")
        with os.fdopen(handle, "w", encoding="utf-8") as out:
            json.dump(records, out, indent=0, sort_keys=True)
        os.replace(tmp, cache)


def sha256_of(path: Path) -> str:
    """The file's sha256: the recorded one while its size and modification time are those it
    was hashed at (and it was not modified within :data:`RACY_NS` of that), else read again."""
    stat = path.stat()
    cache = cache_path()
    records = _records(cache)
    key = os.path.abspath(path)
    hit = records.get(key)
    if (hit is not None and hit["size"] == stat.st_size and hit["mtime_ns"] == stat.st_mtime_ns
            and int(hit["mtime_ns"]) < int(hit["hashed_at_ns"]) - RACY_NS):
        return str(hit["sha256"])
    hashed_at = time.time_ns()
    digest = sha256_file(path)
    records[key] = {"size": stat.st_size, "mtime_ns": stat.st_mtime_ns, "hashed_at_ns": hashed_at, "sha256": digest}
    _dirty.add(cache)
    if time.monotonic() - _saved_at.get(cache, -SAVE_EVERY_S) >= SAVE_EVERY_S:
        flush()
    return digest


def flush() -> None:
    """Write every record with unsaved digests, without the entries of files that no longer exist."""
    for cache in sorted(_dirty):
        records = _records(cache)
        for key in [k for k in records if not os.path.exists(k)]:
            del records[key]
        _save(cache, records)
        _saved_at[cache] = time.monotonic()
    _dirty.clear()


atexit.register(flush)
