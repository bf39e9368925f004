"""``edge-carbon unregister ID`` and ``edge-carbon scenario remove NAME``: undo ``register`` and
``scenario new``.

Only your own sources can be removed: the entries of ``sources/manifest/local.toml``, where
``register`` and ``scenario new`` write. Each command checks first and writes last; a refusal
is one line naming the fix (exit status 2) and nothing is written. It refuses:

1. an id (a scenario name) that is not registered, or that is registered in a shipped manifest;
2. a source that another entry depends on: a scenario that another ``extends``, a source an
   option names (the option types ``scenario`` and ``source`` of :data:`KIND_OPTIONS`);
3. a manifest that would not read back as the same entries less the one removed.

Then the entry's ``[[source]]`` block is cut from ``local.toml`` (written atomically, under the
manifest lock); when no entry is left and only the header ``register`` wrote remains, the file
is deleted, as it was before the first ``register``. Both commands treat the data file the same
way: they keep it (a log you copied there may be your only copy; a scenario CSV may hold your
edits) and say so, ``kept <path>; delete it yourself or pass --delete-file``; with
``--delete-file`` they delete it too.

A sampled power log is also a Dagster partition and a partition of the lake: the CLI then
deletes its partition from the Dagster instance (:func:`pipelines.cli.sync_partitions`) and
retires its lake files in the published warehouse (:func:`pipelines.run.unregister.retire_logs`).
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pipelines.errors import EdgeCarbonError, Refused
from pipelines.ingest.manifest import SourceEntry, _entry
from pipelines.ingest.manifest_lock import manifest_lock
from pipelines.ingest.manifest_writing import _LOCAL_HEADER, LOCAL_MANIFEST, _rel, atomic_write
from pipelines.ingest.register_options import KIND_OPTIONS, _close
from pipelines.ingest.registration import SCENARIO_TABLE, _manifest_entries
from pipelines.paths import sources_dir

#: The line that opens a manifest entry.
_BLOCK = re.compile(r"^\[\[source\]\][ \t]*(?:#.*)?$", re.M)


@dataclass
class Removal:
    """A validated removal: the entry, and the manifest file's text without it (None: delete the file)."""

    entry: SourceEntry
    manifest_file: Path
    text: str | None
    delete_file: bool


def scenario_of(entry: SourceEntry) -> str | None:
    """The scenario id of a scenario entry (``scenario_id``, else its source id); None for others."""
    return str(entry.options.get("scenario_id", entry.id)) if entry.table == SCENARIO_TABLE else None


def dependants(target: SourceEntry, entries: Sequence[SourceEntry]) -> list[str]:
    """Each other entry that names ``target``, as ``'<id>' (<option> = <value>, <manifest file>)``."""
    scenario = scenario_of(target)
    found = []
    for entry in entries:
        for key, value in entry.options.items():
            spec = KIND_OPTIONS.get(entry.kind, {}).get(key)
            names = spec is not None and ((spec.type == "source" and value == target.id) or
                                          (spec.type == "scenario" and scenario is not None and value == scenario))
            if names and entry.id != target.id:
                found.append(f"{entry.id!r} ({key} = {value}, {entry.manifest_file})")
    return found


def without_entry(text: str, source_id: str) -> str | None:
    """``text`` (a manifest file) with the ``[[source]]`` block of ``source_id`` cut out, as
    ``register`` appended it (the blank line before a last block goes with it); None when no
    block holds exactly that entry."""
    starts = [match.start() for match in _BLOCK.finditer(text)]
    for i, start in enumerate(starts):
        end = starts[i + 1] if i + 1 < len(starts) else len(text)
        try:
            parsed = tomllib.loads(text[start:end])
        except tomllib.TOMLDecodeError:
            continue
        if [raw.get("id") for raw in parsed.get("source", [])] != [source_id]:
            continue
        head = text[:start]
        if end == len(text) and head.endswith("\n\n"):
            head = head[:-1]
        return head + text[end:]
    return None


def plan_removal(source_id: str, *, cmd: str, delete_file: bool) -> Removal:
    """Validate removing the entry ``source_id`` from the local manifest; raise :class:`Refused`, write nothing."""
    entries = _manifest_entries(cmd)
    by_id = {entry.id: entry for entry in entries}
    local = f"manifest/{LOCAL_MANIFEST}"
    if source_id not in by_id:
        own = sorted(e.id for e in entries if e.manifest_file == local)
        raise Refused(f"{cmd}: no source has the id {source_id!r}{_close(source_id, own)}; "
                      f"your own sources: {', '.join(own) or f'none (sources/{local} lists them)'}")
    entry = by_id[source_id]
    if entry.manifest_file != local:
        raise Refused(f"{cmd}: {source_id!r} is a shipped source (sources/{entry.manifest_file}); only your own sources, "
                      f"those in sources/{local}, can be removed")
    needed = dependants(entry, entries)
    if needed:
        raise Refused(f"{cmd}: {source_id!r} is still needed by {', '.join(needed)}; remove that first")
    manifest_file = sources_dir() / "manifest" / LOCAL_MANIFEST
    text = manifest_file.read_text(encoding="utf-8")
    remaining = without_entry(text, source_id)
    if remaining is None:
        raise Refused(f"{cmd}: cannot find the [[source]] block of {source_id!r} in {_rel(manifest_file)}; "
                      "remove it there by hand (from its [[source]] line to the next)")
    _check_remaining(cmd, manifest_file, text, remaining, source_id)
    return Removal(entry, manifest_file, None if remaining == _LOCAL_HEADER else remaining, delete_file)


def _check_remaining(cmd: str, manifest_file: Path, text: str, remaining: str, source_id: str) -> None:
    """The file without the entry reads back as every other entry, unchanged, and each still loads."""
    before = [raw for raw in tomllib.loads(text).get("source", []) if raw.get("id") != source_id]
    try:
        after = tomllib.loads(remaining).get("source", [])
        for raw in after:
            _entry(raw, manifest_file, sources_dir())
    except (tomllib.TOMLDecodeError, EdgeCarbonError) as exc:
        raise Refused(f"{cmd}: {_rel(manifest_file)} would not load without {source_id!r} ({exc}); "
                      "nothing was written, remove the entry by hand") from None
    if after != before:
        raise Refused(f"{cmd}: {_rel(manifest_file)} would not read back as its other entries without {source_id!r}; "
                      "nothing was written, remove the entry by hand")


def write_removal(removal: Removal) -> list[str]:
    """Write the manifest without the entry (or delete it), then the data file if asked; the lines to say."""
    done = []
    if removal.text is None:
        removal.manifest_file.unlink()
        done.append(f"removed {_rel(removal.manifest_file)} (no entry left)")
    else:
        atomic_write(removal.manifest_file, removal.text)
    done.insert(0, f"unregistered {removal.entry.id} from {_rel(removal.manifest_file)}")
    if removal.delete_file:
        removal.entry.file.unlink(missing_ok=True)
        done.append(f"deleted {_rel(removal.entry.file)}")
    else:
        done.append(f"kept {_rel(removal.entry.file)}; delete it yourself or pass --delete-file")
    return done


def _say(lines: Sequence[str]) -> None:
    for line in lines:
        print(line)


def _remove(cmd: str, source_id: str, *, delete_file: bool, dry_run: bool) -> tuple[int, SourceEntry | None]:
    """Plan, then (unless ``dry_run``) write a removal under the manifest lock; (status, entry removed)."""
    import sys

    try:
        if dry_run:
            removal = plan_removal(source_id, cmd=cmd, delete_file=delete_file)
            print(f"# dry run: {removal.entry.id} would leave {_rel(removal.manifest_file)} and {_rel(removal.entry.file)} "
                  f"would be {'deleted' if delete_file else 'kept'}; nothing was written")
            return 0, None
        with manifest_lock(f"edge-carbon {cmd} {source_id}"):
            removal = plan_removal(source_id, cmd=cmd, delete_file=delete_file)
            _say(write_removal(removal))
    except Refused as exc:
        print(str(exc), file=sys.stderr)
        return 2, None
    return 0, removal.entry


def unregister_cli(args: Any) -> tuple[int, SourceEntry | None]:
    """``edge-carbon unregister ID``: (0, the entry removed, None on a dry run), or (2, None) when refused."""
    return _remove("unregister", args.id, delete_file=args.delete_file, dry_run=args.dry_run)


def scenario_remove_cli(args: Any) -> tuple[int, SourceEntry | None]:
    """``edge-carbon scenario remove NAME``: the scenario's entry and, with ``--delete-file``, its CSV."""
    import sys

    try:
        entries = _manifest_entries("scenario remove")
    except Refused as exc:
        print(str(exc), file=sys.stderr)
        return 2, None
    by_scenario = {scenario_of(e): e for e in entries if e.table == SCENARIO_TABLE}
    entry = by_scenario.get(args.name)
    if entry is None:
        known = sorted(str(s) for s in by_scenario)
        print(f"scenario remove: no scenario {args.name!r}{_close(args.name, known)}; scenarios: {', '.join(known)}", file=sys.stderr)
        return 2, None
    return _remove("scenario remove", entry.id, delete_file=args.delete_file, dry_run=args.dry_run)
