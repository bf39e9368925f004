"""The bench's results file (``python -m bench --json PATH``): every figure, with the machine, load, commit and date.

``bench/results.json`` is the committed one: the last idle run, from which
:mod:`bench.page` renders the tables of docs/benchmarks.md.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import platform
import subprocess
import sys
from pathlib import Path
from typing import Any

from pipelines.paths import PROJECT_ROOT

#: The committed results file.
RESULTS_FILE = PROJECT_ROOT / "bench" / "results.json"


def load_average() -> list[float] | None:
    """The 1, 5 and 15 minute load averages (None where the system has none)."""
    try:
        return [round(value, 2) for value in os.getloadavg()]
    except OSError:
        return None


def memory_gb() -> float | None:
    """The machine's memory (``/proc/meminfo``), GB."""
    try:
        for line in Path("/proc/meminfo").read_text(encoding="ascii").splitlines():
            if line.startswith("MemTotal:"):
                return round(int(line.split()[1]) * 1024 / 1e9, 1)
    except (OSError, ValueError, IndexError):
        pass
    return None


def commit() -> dict[str, Any]:
    """The checkout's commit and whether its tracked files differ from it."""
    def git(*args: str) -> str:
        proc = subprocess.run(["git", *args], cwd=PROJECT_ROOT, capture_output=True, text=True, check=False)
        return proc.stdout.strip() if proc.returncode == 0 else ""

    return {"commit": git("rev-parse", "HEAD") or None, "dirty": bool(git("status", "--porcelain", "--untracked-files=no"))}


def machine() -> dict[str, Any]:
    """What the figures were measured on."""
    from pipelines.warehouse.duckdb_limits import cpu_budget

    return {"platform": platform.platform(), "processor": platform.machine(), "cpus": os.cpu_count(), "cpu_budget": cpu_budget(),
            "memory_gb": memory_gb(), "python": sys.version.split()[0]}


def header(argv: list[str]) -> dict[str, Any]:
    """The results file's fields known before any figure: date, machine, load at the start, commit, arguments."""
    return {"date": dt.datetime.now(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ"), "machine": machine(),
            "load_at_start": load_average(), **commit(), "arguments": argv}


def write(path: Path, head: dict[str, Any], figures: list[dict[str, Any]], values: dict[str, Any], seconds: float) -> Path:
    """Write the results file: ``head``, the load at the end, the bench's own seconds, the named values, every figure."""
    data = {**head, "load_at_end": load_average(), "bench_seconds": round(seconds, 1), **dict(sorted(values.items())),
            "figures": figures}
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
    return path


def read(path: Path = RESULTS_FILE) -> dict[str, Any]:
    """A results file's contents."""
    return json.loads(path.read_text(encoding="utf-8"))
