"""Exclusive locks between processes (``fcntl.flock`` on a file) that say who holds them.

A lock is a file beside what it guards. It is never deleted: deleting a lock file would let
two processes lock two different files. The holder writes one line about itself into the file
(who, process id, host, since when), so a process that has to wait can say what it waits for.
``flock`` works across the nodes of a file store that honours POSIX locks (NFSv4, CephFS).
"""

from __future__ import annotations

import contextlib
import datetime as dt
import fcntl
import os
import socket
from collections.abc import Callable, Iterator
from pathlib import Path


def holder_of(path: Path) -> str:
    """The line the current holder of the lock at ``path`` wrote ('' when none or unreadable)."""
    try:
        return path.read_text(encoding="utf-8").strip()
    except OSError:
        return ""


@contextlib.contextmanager
def held(path: Path, holder: str, *, what: str, waiting: Callable[[str], object] = lambda _: None) -> Iterator[None]:
    """Hold the exclusive lock at ``path`` for the ``with`` block, as ``holder``.

    When another process holds it, ``waiting`` is told once (``what`` names the lock, and the
    message names the holder) and the call blocks until the lock is free.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "a+", encoding="utf-8") as handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            waiting(f"waiting for {what} ({path}), held by {holder_of(path) or 'another process'}")
            fcntl.flock(handle, fcntl.LOCK_EX)
        since = dt.datetime.now(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
        handle.seek(0)
        handle.truncate()
        handle.write(f"{holder} (pid {os.getpid()} on {socket.gethostname()}, since {since})\n")
        handle.flush()
        try:
            yield
        finally:
            with contextlib.suppress(OSError):
                handle.truncate(0)
                handle.flush()
            fcntl.flock(handle, fcntl.LOCK_UN)
