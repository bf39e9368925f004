"""What ``edge-carbon run`` shows on the console, and where Dagster's log goes instead.

A build's Dagster log (every step's INFO lines, each failure's stack trace) is written to a file
under the warehouse's folder, ``<warehouse folder>/.logs/run-<UTC time>.log``
(:func:`log_file`), not to the console: :class:`Quiet` points the process's standard output and
error (file descriptors 1 and 2, so worker processes and libraries follow) at that file while
the build runs, and echoes each warning of the log to the console as it is written, one line
each. ``--verbose`` leaves the console as it is (the log is shown, and no file written).
"""

from __future__ import annotations

import datetime as dt
import os
import re
import shutil
import sys
import threading
from pathlib import Path
from types import TracebackType

#: Folder of the build logs, beside the published file.
LOGS_DIR = ".logs"
#: Build logs kept (the oldest are deleted when a new one starts).
KEEP_LOGS = 20
#: A line of Dagster's console log at WARNING level: time, "dagster", level, job, run id, then
#: (for a step) the process id and step, then the message.
WARNING_LINE = re.compile(r"^\S+ \S+ [+-]\d{4} - dagster - WARNING - \S+ - [0-9a-f-]{36} - (?:\d+ - )?(?:(?P<step>\S+) - )?(?P<message>.*)$")
#: How often the log is read for new warnings while the build runs (seconds).
POLL_S = 0.25
#: The full build, as the docs and the Makefile name it (``edge-carbon run`` is the same without make).
FULL_BUILD = "make run"


def log_file(published: Path, now: dt.datetime | None = None) -> Path:
    """A new build log's path under ``published``'s folder (its folder created, old logs beyond :data:`KEEP_LOGS` deleted)."""
    folder = published.parent / LOGS_DIR
    folder.mkdir(parents=True, exist_ok=True)
    for old in sorted(folder.glob("run-*.log"))[:-(KEEP_LOGS - 1)]:
        old.unlink(missing_ok=True)
    stamp = (now or dt.datetime.now(dt.UTC)).strftime("%Y%m%dT%H%M%SZ")
    return folder / f"run-{stamp}-{os.getpid()}.log"


def shown(path: Path) -> str:
    """``path`` as a user types it from the current directory (relative when below it)."""
    try:
        return str(path.resolve().relative_to(Path.cwd().resolve()))
    except ValueError:
        return str(path)


def command() -> str:
    """How to type ``edge-carbon`` from the current directory: the bare name when it is on PATH
    (an activated virtual environment, an installed package), else the path of this
    environment's script (``.venv/bin/edge-carbon`` after ``make run``), else ``python -m``."""
    python = Path(os.path.abspath(sys.executable))
    script = python.parent / "edge-carbon"
    found = shutil.which("edge-carbon")
    if found and (not script.exists() or Path(found).resolve() == script.resolve()):
        return "edge-carbon"
    if script.exists():
        return shown(script)
    return f"{shown(python)} -m pipelines.cli"


class Quiet:
    """For the ``with`` block: standard output and error into ``path`` (None: left as they are),
    Dagster's WARNING lines echoed to the console (``warning: <step>: <message>``), and
    :meth:`say` writing to the console."""

    def __init__(self, path: Path | None) -> None:
        self.path = path
        self._saved: tuple[int, int] | None = None
        self._stop = threading.Event()
        self._tail: threading.Thread | None = None

    def __enter__(self) -> Quiet:
        if self.path is None:
            return self
        sys.stdout.flush()
        sys.stderr.flush()
        self._saved = (os.dup(1), os.dup(2))
        target = os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
        os.dup2(target, 1)
        os.dup2(target, 2)
        os.close(target)
        self._tail = threading.Thread(target=self._echo_warnings, name="edge-carbon-log-tail", daemon=True)
        self._tail.start()
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None) -> None:
        if self._saved is None:
            return
        sys.stdout.flush()
        sys.stderr.flush()
        self._stop.set()
        if self._tail is not None:
            self._tail.join(timeout=5)
        out, err = self._saved
        os.dup2(out, 1)
        os.dup2(err, 2)
        os.close(out)
        os.close(err)
        self._saved = None

    def say(self, line: str) -> None:
        """One line on the console's standard error, whether or not the block has redirected it."""
        if self._saved is None:
            print(line, file=sys.stderr, flush=True)
        else:
            os.write(self._saved[1], (line + "\n").encode("utf-8", "replace"))

    def _echo_warnings(self) -> None:
        """Read the log as it grows; echo each WARNING line's message (until stopped, then once more)."""
        assert self.path is not None
        with open(self.path, encoding="utf-8", errors="replace") as log:
            pending = ""
            while True:
                stopping = self._stop.wait(POLL_S)
                pending += log.read()
                *lines, pending = pending.split("\n")
                for line in lines:
                    match = WARNING_LINE.match(line)
                    if match:
                        step = f"{match['step']}: " if match["step"] else ""
                        self.say(f"warning: {step}{match['message']}")
                if stopping:
                    return


#: The console of the build in progress (``edge-carbon run``), for lines that must reach the user.
CURRENT: list[Quiet] = []


def say(line: str) -> None:
    """A line on the console of the build in progress (standard error when none is quieted)."""
    if CURRENT:
        CURRENT[-1].say(line)
    else:
        print(line, file=sys.stderr, flush=True)


def what_if_site_line(site: Path, command: str) -> str:
    """What a what-if says of the dashboards in ``site`` (it renders none): the pages it left as
    published, which lack its rows, and the full build that re-renders them."""
    rebuild = f"{FULL_BUILD} (or {command} run)"
    pages = sorted(path.name for path in site.glob("*.html") if path.name != "index.html")
    if not (site / "index.html").is_file():
        return f"dashboards: none published in {shown(site)}; a what-if renders none, {rebuild} renders them"
    return (f"dashboards not re-rendered (a what-if renders none): {', '.join(['index.html', *pages])} in {shown(site)} "
            f"are left as published, without this what-if's rows; {rebuild} re-renders them")
