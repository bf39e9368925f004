"""Progress of work over many files in the run log, without one log event per file.

Every log line is an event Dagster stores; a build that parses dozens of small files would
spend more time storing "file 7 of 12 done" than parsing. :class:`BatchedLog` gathers the
lines and writes them as one entry every few seconds and at the end, so long work still shows
progress while it runs.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from types import TracebackType


class BatchedLog:
    """A log function that writes its lines in batches: when ``every_s`` seconds have passed
    since the last batch, and when the ``with`` block ends."""

    def __init__(self, log: Callable[[str], None], every_s: float = 2.0) -> None:
        self._log = log
        self._every_s = every_s
        self._lines: list[str] = []
        self._last = time.perf_counter()

    def __call__(self, line: str) -> None:
        self._lines.append(line)
        if time.perf_counter() - self._last >= self._every_s:
            self.flush()

    def flush(self) -> None:
        """Write the gathered lines as one entry."""
        if self._lines:
            self._log("\n".join(self._lines))
            self._lines = []
        self._last = time.perf_counter()

    def __enter__(self) -> BatchedLog:
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None) -> None:
        self.flush()
