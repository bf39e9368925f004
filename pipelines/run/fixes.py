"""The fix for a failed build, in one line, from what failed (the CLI's ``FAILED`` entries).

A failure the project raises on purpose names the file (and the line, where one applies);
:func:`fix_for` turns the first failure it recognises into what to do about it, spelled with the
command as the user types it (:func:`pipelines.run.console.command`). A failure it does not
recognise gets the way to the whole log.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from pathlib import Path

from pipelines.paths import PROJECT_ROOT
from pipelines.run.console import shown

#: A file the manifest lists that is not there (pipelines.ingest.manifest.verify).
MISSING = re.compile(r"(?P<path>\S+): source '(?P<id>[^']+)' is listed in (?P<manifest>\S+) but the file is missing")
#: A file whose bytes are not the ones the manifest's sha256 names.
ALTERED = re.compile(r"(?P<path>\S+): sha256 mismatch for source '(?P<id>[^']+)'")
#: A scenario value or range end outside its parameter's bounds (core.scenario_parameters' check).
OUT_OF_BOUNDS = re.compile(r"(?P<path>sources/\S+), line (?P<line>\d+): (?P<parameter>\w+)(?P<end> \((?:low|high) end of its range\))? = ")
#: A file that cannot be parsed at a line (pipelines.errors.SourceParseError).
UNREADABLE = re.compile(r"(?:^|: )(?P<path>[^\s:]+\.\w+), line (?P<line>\d+): ")
#: A failing row of a mart fed by a scenario (a check's summary).
SCENARIO_ROW = re.compile(r"^\s*scenario_id=(?P<scenario>[\w.-]+)", re.MULTILINE)


def source_id(path: str) -> str | None:
    """The manifest id of the source file ``path`` (absolute, or ``sources/...``), if one lists it."""
    from pipelines.errors import EdgeCarbonError
    from pipelines.ingest.manifest import load_manifest

    try:
        entries = load_manifest()
    except (EdgeCarbonError, OSError, ValueError):  # a broken manifest is itself the failure being reported
        return None
    wanted = Path(path)
    for entry in entries:
        if wanted.is_absolute() and entry.file.resolve() == wanted.resolve():
            return entry.id
        if not wanted.is_absolute() and f"sources/{entry.path}" == path:
            return entry.id
    return None


def _refresh(path: str, command: str) -> str:
    found = source_id(path)
    return f"{command} register --refresh {found}" if found else f"{command} register --refresh <its source id>"


def _restore(path: str) -> str:
    """How to get a shipped file back: ``git checkout`` when it lies in this checkout."""
    try:
        relative = Path(path).resolve().relative_to(PROJECT_ROOT)
    except ValueError:
        return "from where you copied it"
    return f"(a shipped file: git checkout -- {relative})"


def _missing(m: re.Match[str], command: str) -> str:
    return (f"fix: put {shown(Path(m['path']))} back {_restore(m['path'])}, "
            f"or, for a file you registered, remove its entry: {command} unregister {m['id']}")


def _altered(m: re.Match[str], command: str) -> str:
    return (f"fix: if you changed {shown(Path(m['path']))} on purpose, record its new sha256: {command} register --refresh {m['id']}; "
            f"else restore it {_restore(m['path'])}")


def _bounds(m: re.Match[str], command: str) -> str:
    column = "value" if not m["end"] else ("low" if "low" in m["end"] else "high")
    return (f"fix: in {m['path']}, row {m['line']}, column {column}: set {m['parameter']} within its bounds, "
            f"then {_refresh(m['path'], command)}")


def _unreadable(m: re.Match[str], command: str) -> str:
    return f"fix: correct {m['path']} at row {m['line']} as the line above says, then {_refresh(m['path'], command)}"


def _scenario(m: re.Match[str], command: str) -> str:
    scenario = m["scenario"]
    return (f"fix: scenario {scenario} gives the failing rows above: change its parameters in sources/scenarios/{scenario}.csv "
            f"(then {command} register --refresh on it) or remove it: {command} scenario remove {scenario}")


RULES: tuple[tuple[re.Pattern[str], Callable[[re.Match[str], str], str]], ...] = (
    (MISSING, _missing), (ALTERED, _altered), (OUT_OF_BOUNDS, _bounds), (UNREADABLE, _unreadable), (SCENARIO_ROW, _scenario),
)


def fix_for(failures: Sequence[str], command: str, log: str | None) -> str:
    """One line: the fix for the first failure a rule recognises, else where the whole log is."""
    for failure in failures:
        for pattern, fix in RULES:
            found = pattern.search(failure)
            if found:
                return fix(found, command)
    where = f"Dagster's log of the build, {log}" if log else "Dagster's log above"
    return f"fix: the failure above names the step and its error; {where} has every step's output"


def primary(failures: Sequence[str]) -> list[str]:
    """The failures to show: those the project raised on purpose or a check found (they name a
    file or a table), else every one. A step that failed only because another's output was
    missing adds nothing to the cause."""
    own = [f for f in failures if "pipelines.errors." in f or "\n" in f]
    return own or list(failures)
