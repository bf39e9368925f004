"""The manifest lock: one command at a time writes the source manifest.

``edge-carbon register`` (and ``--refresh``) and ``edge-carbon scenario new`` read the
manifest, check the new entry against it and rewrite a manifest file; two of them at once
would each rewrite the file from what they read, and one entry would be lost. Each holds an
exclusive lock on ``sources/.manifest.lock`` from its first read to its write. ``--dry-run``
writes nothing and takes no lock.
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Iterator
from pathlib import Path

from pipelines import locks
from pipelines.paths import sources_dir

LOCK_NAME = ".manifest.lock"


def manifest_lock_path() -> Path:
    """The manifest lock of the sources folder in use."""
    return sources_dir() / LOCK_NAME


@contextlib.contextmanager
def manifest_lock(command: str) -> Iterator[None]:
    """Hold the manifest lock as ``command``; says on stderr when it waits, and for whom."""
    with locks.held(manifest_lock_path(), command, what="the manifest lock",
                    waiting=lambda line: print(line, file=sys.stderr, flush=True)):
        yield
