"""What a bench process measures of itself and of its children: resident memory and CPU time."""

from __future__ import annotations

import os
import resource
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any


def current_rss_bytes() -> int:
    """Resident set size now (Linux ``/proc``; elsewhere the high-water mark so far)."""
    try:
        pages = int(Path("/proc/self/statm").read_text().split()[1])
        return pages * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return peak_rss_bytes()


def peak_rss_bytes() -> int:
    """Peak resident set size of this process's own memory: ``VmHWM`` of ``/proc/self/status`` on Linux.

    Not ``ru_maxrss``: Linux carries that over from the parent through fork and exec, so a
    subprocess of a large process (a bench driver that has just generated a 2 GB log, a test
    session holding a built warehouse) would report its parent's peak as its own. Elsewhere
    ``ru_maxrss`` (KiB on Linux, bytes on macOS) is the best there is.
    """
    try:
        for line in Path("/proc/self/status").read_text(encoding="ascii").splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak if sys.platform == "darwin" else peak * 1024


def cpu_seconds() -> float:
    """User plus system CPU time of this process so far (all threads)."""
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


@dataclass
class Measured:
    """A finished child process: its exit status, output, wall and CPU seconds and peak RSS."""

    returncode: int
    stdout: str
    stderr: str
    seconds: float
    cpu_seconds: float
    peak_rss: int


def run_measured(command: list[str], *, cwd: Path, env: dict[str, str] | None = None) -> Measured:
    """Run ``command`` to its end; its own rusage (``os.wait4``): CPU seconds of it and its
    children it waited for, and its peak RSS. Output is captured through temporary files."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        started = time.perf_counter()
        proc = subprocess.Popen(command, cwd=cwd, env=env, stdout=out, stderr=err)
        _, status, usage = os.wait4(proc.pid, 0)
        seconds = time.perf_counter() - started
        proc.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        texts: list[Any] = [out.read().decode(errors="replace"), err.read().decode(errors="replace")]
    peak = usage.ru_maxrss if sys.platform == "darwin" else usage.ru_maxrss * 1024
    return Measured(proc.returncode, texts[0], texts[1], seconds, usage.ru_utime + usage.ru_stime, peak)
