"""The fix for a failed build, in one line, from what failed (the CLI's ``FAILED`` entries).

A failure the project raises on purpose names the file (and the line, where one applies);
:func:`fix_for` turns the first failure it recognises into what to do about it, spelled with the
command as the user types it (:func:`pipelines.run.console.command`). A failure it does not
recognise gets the way to the whole log. :func:`scenario_lines` says why an id is no scenario a
what-if (``edge-carbon run --scenario``) can run over, with the closest registered ids.
"""

from __future__ import annotations

import csv
import difflib
import re
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from pipelines.paths import PROJECT_ROOT
from pipelines.run.console import FULL_BUILD, shown

if TYPE_CHECKING:
    from pipelines.ingest.manifest import SourceEntry

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
#: A what-if over scenarios no manifest registers (core.scenario_parameters' scope).
UNKNOWN_SCENARIO = re.compile(r"not registered scenarios: (?P<ids>[\w.-]+(?:, [\w.-]+)*)")
#: Rows whose source_id is not in staging.sources (a staging table's source_ids_join check).
ORPHANS = re.compile(r"^(?P<asset>\S+): source_ids_join\n\s+orphan_source_ids: (?P<ids>.+)$", re.MULTILINE)
#: One source id of an orphan_source_ids summary, ``<id> (<n> rows)``.
ORPHAN_ID = re.compile(r"(?P<id>[\w.-]+) \(\d+ rows\)")
#: A scenario that names a claim staging.claims lacks (core.scenario_parameters' claims_known check).
UNKNOWN_CLAIM = re.compile(r"(?P<path>sources/\S+), line (?P<line>\d+): claim_id = '(?P<claim>[^']+)' is no claim of staging\.claims")
#: A scenario whose terms break its frame's, workload's or fleet's rules (core.scenarios' and core.scenario_devices' checks).
SCENARIO_PROBLEM = re.compile(r"^\S+: (?:frames_consistent|fleet_shares_sum_to_one)\n\s+problems: (?P<scenario>[\w.-]+): ",
                              re.MULTILINE)
#: What a what-if adds to a scenario reference that found no row when files registered since the last
#: full build are not staged (:func:`pipelines.run.launch.with_unstaged`), and the pattern that reads it.
NOT_STAGED = "registered since the last full build, which a what-if does not stage"
UNSTAGED = re.compile(rf"^\s+{NOT_STAGED}: (?P<ids>.+)$", re.MULTILINE)
#: The table scenario files feed, and the one claims files feed.
SCENARIO_TABLE, CLAIMS_TABLE = "core.scenario_parameters", "staging.claims"
#: Closest registered ids offered for an unknown scenario id (difflib), and how close they must be; a
#: claim id (a longer name: author, year, what it states) must be closer to be offered.
CLOSEST, CUTOFF, CLAIM_CUTOFF = 3, 0.6, 0.8


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


def _readable_entries() -> list[SourceEntry] | None:
    """The manifest's entries; None when the manifest cannot be read (its own error is then the failure to report)."""
    from pipelines.errors import EdgeCarbonError
    from pipelines.ingest.manifest import load_manifest

    try:
        return load_manifest()
    except (EdgeCarbonError, OSError, ValueError):
        return None


def _entries(table: str | None = None) -> list[SourceEntry]:
    """The manifest's entries (those feeding ``table``); none when the manifest cannot be read."""
    return [entry for entry in _readable_entries() or [] if table is None or entry.table == table]


def scenario_entries() -> dict[str, SourceEntry]:
    """Every registered scenario file by its scenario id (option ``scenario_id``, else the entry's id)."""
    return {str(entry.options.get("scenario_id", entry.id)): entry for entry in _entries(SCENARIO_TABLE)}


def _where(entry: SourceEntry) -> str:
    """``<file>, in <manifest file>``: a scenario's file and the manifest that registers it, as the user types them."""
    return f"{shown(entry.file)}, in {shown(entry.root / entry.manifest_file)}"


def _manifests() -> str:
    """Where scenarios are registered: the shipped ones' manifest and the user's own."""
    from pipelines.ingest.manifest_writing import LOCAL_MANIFEST
    from pipelines.paths import sources_dir

    manifest = sources_dir() / "manifest"
    return f"the shipped ones in {shown(manifest / 'scenarios.toml')}, yours in {shown(manifest / LOCAL_MANIFEST)}"


def scenario_lines(scenario: str, command: str) -> list[str] | None:
    """Why ``scenario`` is no scenario a what-if can run over, then its fix (the last line, ``fix: ...``);
    None when it is one (registered, and not abstract), or when the manifest cannot be read (the run
    then reports the manifest's own error).

    An abstract scenario (a parent only) names the scenarios that extend it; a source id names its
    scenario's id; an unregistered ``sources/scenarios/<id>.csv`` the command that registers it; any
    other id the closest registered ids (difflib), each with its file and manifest, else every one.
    """
    from pipelines.ingest.manifest_writing import LOCAL_MANIFEST
    from pipelines.paths import sources_dir

    if _readable_entries() is None:
        return None
    entries = scenario_entries()
    runnable = sorted(sid for sid, entry in entries.items() if not entry.options.get("abstract", False))
    if scenario in runnable:
        return None
    if scenario in entries:
        children = sorted(sid for sid in runnable if scenario in _ancestors(sid, entries))
        named = ", ".join(children) or "none yet"
        return [f"{scenario} is an abstract scenario ({_where(entries[scenario])}): a parent whose own rows are never computed, "
                f"so a what-if runs over a scenario that extends it: {named}",
                f"fix: name one of them: {command} run --scenario {children[0]}" if children else
                f"fix: make one that extends it: {command} scenario new NAME --extends {scenario} --set PARAM=VALUE, "
                f"then {command} run --scenario NAME"]
    by_source = {str(entry.id): sid for sid, entry in entries.items() if sid in runnable}
    if scenario in by_source:
        sid = by_source[scenario]
        return [f"{scenario} is the source id of scenario {sid} ({_where(entries[sid])}); --scenario takes a scenario id",
                f"fix: {command} run --scenario {sid}"]
    file = sources_dir() / "scenarios" / f"{scenario}.csv"
    local = shown(sources_dir() / "manifest" / LOCAL_MANIFEST)
    if file.is_file() and not any(entry.file.resolve() == file.resolve() for entry in entries.values()):
        return [f"no scenario {scenario} is registered ({_manifests()}), and no manifest lists {shown(file)}",
                f"fix: register it: {command} register {shown(file)} --id scenario_{scenario} --kind scenario "
                f'--title "..." --option scenario_id={scenario} --option extends=PARENT (into {local}), '
                f"then {command} run --scenario {scenario}"]
    close = difflib.get_close_matches(scenario, runnable, n=CLOSEST, cutoff=CUTOFF)
    create = f"or make {scenario} first: {command} scenario new {scenario} --extends PARENT --set PARAM=VALUE (writes {shown(file)}, registered in {local})"
    if close:
        return [f"no scenario {scenario} is registered ({_manifests()}); did you mean "
                + " or ".join(f"{sid} ({_where(entries[sid])})" for sid in close) + "?",
                f"fix: {command} run --scenario {close[0]}; {create}"]
    return [f"no scenario {scenario} is registered ({_manifests()}); the registered ones: {', '.join(runnable) or 'none'}",
            f"fix: {command} run --scenario <one of them>; {create}"]


def _ancestors(scenario: str, entries: dict[str, SourceEntry]) -> list[str]:
    """The scenarios ``scenario`` extends, nearest first (a cycle, which the build refuses, ends the walk)."""
    chain: list[str] = []
    parent = entries[scenario].options.get("extends") if scenario in entries else None
    while parent is not None and str(parent) not in chain and str(parent) != scenario:
        chain.append(str(parent))
        parent = entries[str(parent)].options.get("extends") if str(parent) in entries else None
    return chain


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


def _unstaged(m: re.Match[str], command: str) -> str:
    """A reference that found no row, in a what-if that left files registered since the last full build unstaged."""
    return (f"fix: {m['ids']}, registered since the last full build, may hold the row the reference above looks for, and a "
            f"what-if stages scenario files alone: {FULL_BUILD} (or {command} run) first")


def _unknown_scenario(m: re.Match[str], command: str) -> str | None:
    """A what-if over an id no manifest registers as a scenario: the closest registered ids."""
    for scenario in m["ids"].split(", "):
        lines = scenario_lines(scenario, command)
        if lines:
            return lines[-1]
    return None


def _orphans(m: re.Match[str], command: str) -> str | None:
    """Registered files missing from staging.sources were registered after the build that wrote it."""
    ids = [found["id"] for found in ORPHAN_ID.finditer(m["ids"])]
    registered = {entry.id for entry in _entries()}
    if not ids or not set(ids) <= registered:
        return None
    these = f"{', '.join(ids)} {'is' if len(ids) == 1 else 'are'}"
    return (f"fix: {these} registered but not in the published staging.sources ({m['asset']} needs {'it' if len(ids) == 1 else 'them'}), "
            f"which only a full build writes: {FULL_BUILD} (or {command} run) first")


def _claims() -> set[str]:
    """The claim ids of the registered claims files (sources/curated/claims.csv)."""
    ids: set[str] = set()
    for entry in _entries(CLAIMS_TABLE):
        try:
            with entry.file.open(encoding="utf-8", newline="") as handle:
                ids |= {row["claim_id"].strip() for row in csv.DictReader(handle) if row.get("claim_id")}
        except (OSError, KeyError, csv.Error):
            continue
    return ids


def _unknown_claim(m: re.Match[str], command: str) -> str:
    """A claim that a claims file registers but the published staging.claims lacks, else one to add or correct."""
    claim = m["claim"]
    if claim in _claims():
        return (f"fix: claim {claim} is registered but not in the published staging.claims, which only a full build writes "
                f"(a what-if stages scenarios alone): {FULL_BUILD} (or {command} run)")
    known = difflib.get_close_matches(claim, sorted(_claims()), n=1, cutoff=CLAIM_CUTOFF)
    instead = f" (did you mean {known[0]}?)" if known else ""
    return (f"fix: in {m['path']}, row {m['line']}, set claim_id to a claim of sources/curated/claims.csv{instead}, "
            f"or add the claim: {command} claim new {claim} ...; then {_refresh(m['path'], command)}")


def _scenario_problem(m: re.Match[str], command: str) -> str:
    """A scenario that breaks its frame's, workload's or fleet's rules: its file, or its removal."""
    scenario = m["scenario"]
    entry = scenario_entries().get(scenario)
    where = shown(entry.file) if entry else f"sources/scenarios/{scenario}.csv"
    return (f"fix: scenario {scenario} breaks the rule above: change its rows in {where} "
            f"(then {command} register --refresh {entry.id if entry else '<its source id>'}) or remove it: "
            f"{command} scenario remove {scenario}")


#: Each failure's pattern and its fix (None: not this rule's cause after all), tried in this order.
RULES: tuple[tuple[re.Pattern[str], Callable[[re.Match[str], str], str | None]], ...] = (
    (MISSING, _missing), (ALTERED, _altered), (UNSTAGED, _unstaged), (UNKNOWN_SCENARIO, _unknown_scenario), (ORPHANS, _orphans),
    (UNKNOWN_CLAIM, _unknown_claim), (OUT_OF_BOUNDS, _bounds), (UNREADABLE, _unreadable), (SCENARIO_ROW, _scenario),
    (SCENARIO_PROBLEM, _scenario_problem),
)


def fix_for(failures: Sequence[str], command: str, log: str | None) -> str:
    """One line: the fix for the first failure a rule recognises, else where the whole log is."""
    for failure in failures:
        for pattern, fix in RULES:
            found = pattern.search(failure)
            line = fix(found, command) if found else None
            if line:
                return line
    where = f"Dagster's log of the build, {log}" if log else "Dagster's log above"
    return f"fix: the failure above names the step and its error; {where} has every step's output"


def primary(failures: Sequence[str]) -> list[str]:
    """The failures to show: those the project raised on purpose or a check found (they name a
    file or a table), else every one. A step that failed only because another's output was
    missing adds nothing to the cause."""
    own = [f for f in failures if "pipelines.errors." in f or "\n" in f]
    return own or list(failures)
