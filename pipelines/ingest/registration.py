"""``edge-carbon register`` and ``edge-carbon scenario new``: validate everything, then write.

Registration refuses a mistake before it touches the manifest, so a refused command never
reaches a build. In order, ``register`` checks:

1. the kind: one the pipeline has a parser for (the ``PARSERS`` dicts of the staging assets,
   :func:`kind_parsers`), and the table: one that kind feeds (defaults to it);
2. the id (unused), the title (required), the status and the file (present, below
   ``sources/``, not registered already);
3. the parser options against :data:`KIND_OPTIONS`, the one place that declares which options
   each kind reads, which are required and their types: TOML dates and UTC date-times
   (``fetched_at = 2026-11-29``), IANA time zones, unit and sign choices, booleans, numbers;
4. a trial parse of the file with its parser and those options;
5. for a power log, the checks the build runs on its runs beside every registered log's: its
   device resolves to a device class (:mod:`pipelines.ingest.devices`: one id per device, the
   ``base_device_id`` of ``device_specs.csv``), its run ids are new, and its series keys hold
   (:mod:`pipelines.ingest.energy.series`: a series repeats one device, model and workload; a
   paper claim is reproduced by one series). They read the sources alone, no warehouse;
6. the build's row checks on the file's rows (:mod:`pipelines.ingest.precheck`: timestamps,
   plausibility bounds, the table's model, parameter bounds): a file the build would keep
   nothing of, or a scenario with a row the build would reject, is refused; a file with some
   bad rows is registered with a one-line warning that counts them.

Only then is the entry written: the whole manifest file is rendered, read back with ``tomllib``
and checked against the intended entry, written to a temporary file beside it and moved into
place with :func:`os.replace`, so a manifest is never half-written. ``--dry-run`` prints the
entry and writes nothing. Two logs with the same content are two runs, each a series of its own
unless they share a ``series_id``.

``scenario new NAME --extends PARENT --set param=value`` (:mod:`pipelines.ingest.scenario_new`)
writes ``sources/scenarios/NAME.csv`` with one row per ``--set`` (unit from the parent) and
registers it in ``sources/manifest/local.toml`` with ``extends = PARENT``, through the same
checks. The options each kind reads are :mod:`pipelines.ingest.register_options`; the entry is
written by :mod:`pipelines.ingest.manifest_writing`.

Every refusal is a :class:`Refused` with one line that names the fix; the CLI prints it and
exits with status 2.
"""

from __future__ import annotations

import datetime as dt
import re
import tomllib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import polars as pl

from pipelines.errors import EdgeCarbonError, Refused
from pipelines.ingest.digests import sha256_file
from pipelines.ingest.energy.series import (
    REPRODUCES,
    run_id_problem,
    series_problem,
    with_reproduces,
)
from pipelines.ingest.manifest import STATUSES, SourceEntry, load_manifest, package_file
from pipelines.ingest.manifest_lock import manifest_lock
from pipelines.ingest.manifest_writing import (
    LOCAL_MANIFEST,
    _appended,
    _check_rendered,
    _rel,
    atomic_write,
    toml_entry,
)
from pipelines.ingest.options import run_options
from pipelines.ingest.register_options import KIND_OPTIONS, _close, kind_parsers, typed_option
from pipelines.paths import sources_dir

#: A table for files that are registered (hashed, listed in staging.sources) but not loaded.
FIXTURE_TABLE = "reference.test_fixtures"
SCENARIO_TABLE = "core.scenario_parameters"
#: Sampled power logs: one run per file, its run id unique across files.
SAMPLES_TABLE = "staging.power_samples"
#: Per-run power files (CodeCarbon, Zeus): one run per row.
RUNS_TABLE = "staging.benchmark_runs"
SCENARIO_COLUMNS = ("parameter", "value", "unit", "low", "high", "distribution", "status", "factor_ref", "reasoning", "range_ref")
DISTRIBUTIONS = ("point", "uniform", "triangular", "split_triangular", "normal", "lognormal")
_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")
_SCENARIO_ID = re.compile(r"^[a-z][a-z0-9_]*$")




# --- the options each kind reads ----------------------------------------------------------


# --- typed option values and TOML --------------------------------------------------------


# --- register -----------------------------------------------------------------------------


@dataclass
class Request:
    """What ``register`` was asked to write."""

    file: str | None
    id: str | None
    kind: str | None
    title: str | None
    table: str | None = None
    url: str = "https://example.invalid/own-measurement"
    license: str = "CC-BY-4.0"
    status: str = "primary"
    manifest: str = LOCAL_MANIFEST
    options: Sequence[str] = ()
    attribution: str | None = None
    notes: str | None = None
    typed_options: dict[str, Any] = field(default_factory=dict)  # already typed (scenario new)


@dataclass
class Plan:
    """A validated entry, ready to be written."""

    manifest_file: Path
    entry: dict[str, Any]
    text: str  # the whole manifest file after the append
    warnings: list[str]


def _manifest_entries(cmd: str) -> list[SourceEntry]:
    try:
        return load_manifest()
    except EdgeCarbonError as exc:
        raise Refused(f"{cmd}: the manifest does not load ({exc}); fix that entry first, nothing was written") from None


def _parse_options(cmd: str, kind: str, raw: Sequence[str]) -> dict[str, Any]:
    specs = KIND_OPTIONS[kind]
    options: dict[str, Any] = {}
    for item in raw:
        key, sep, text = item.partition("=")
        key = key.strip()
        if not sep or not key:
            raise Refused(f"{cmd}: --option {item!r} is not KEY=VALUE; write e.g. --option timezone=Europe/London")
        if key not in specs:
            known = ", ".join(specs) or "none"
            raise Refused(f"{cmd}: kind {kind} reads no option {key!r}{_close(key, list(specs))}; its options: {known}")
        if key in options:
            raise Refused(f"{cmd}: --option {key} is given twice; keep one")
        options[key] = typed_option(cmd, kind, key, text, specs[key])
    return options


def _check_options(cmd: str, kind: str, options: Mapping[str, Any], entries: Sequence[SourceEntry], source_id: str) -> None:
    """Required options present, references resolvable."""
    specs = KIND_OPTIONS[kind]
    missing = [key for key, spec in specs.items() if spec.required and key not in options]
    if missing:
        examples = {"timezone": "Europe/London", "fetched_at": dt.date.today().isoformat(), "started_at": "2024-05-01T09:30:00Z",
                    "device_id": "nvidia-v100", "workload": '"OPT-125M training"', "timestamp_marks": "hour_end",
                    "zone": "US-CAL-CISO", "zone_name": '"California ISO"'}
        wanted = " ".join(f"--option {key}={examples.get(key, '...')}" for key in missing)
        why = f" ({specs[missing[0]].meaning})" if len(missing) == 1 else ""
        raise Refused(f"{cmd}: kind {kind} needs {wanted}{why}")
    by_id = {e.id: e for e in entries}
    for key, value in options.items():
        spec = specs[key]
        if spec.type == "source" and value not in by_id:
            raise Refused(f"{cmd}: --option {key}={value}: no source has that id{_close(value, list(by_id))}; give a registered source id")
        if spec.type == "scenario":
            scenarios = {str(e.options.get("scenario_id", e.id)) for e in entries if e.table == SCENARIO_TABLE}
            if value not in scenarios:
                raise Refused(f"{cmd}: --option {key}={value}: no scenario has that id{_close(value, sorted(scenarios))}; "
                              f"give one of {', '.join(sorted(scenarios))}")
    if kind == "scenario":
        scenario = str(options.get("scenario_id", source_id))
        taken = {str(e.options.get("scenario_id", e.id)): e.id for e in entries if e.table == SCENARIO_TABLE}
        if scenario in taken:
            raise Refused(f"{cmd}: scenario id {scenario!r} is already used by source {taken[scenario]!r}; choose another scenario_id")


def _trial_parse(cmd: str, parser: Callable[..., Any], path: Path, options: Mapping[str, Any], source_id: str, kind: str) -> Any:
    try:
        return parser(path, {**options, "source_id": source_id})
    except Exception as exc:  # any failure of the parser is a refusal, reported in one line
        message = " ".join(str(exc).split()) or type(exc).__name__
        raise Refused(f"{cmd}: kind {kind} cannot read {_rel(path)} ({message}); check --kind and the file's format") from None


#: The columns of a power log's runs that the build's keys are made of, and their types.
_RUN_KEYS = {"run_id": pl.String, "series_id": pl.String, "device_id": pl.String, "model": pl.String, "workload": pl.String,
             "is_synthetic": pl.Boolean, "source_id": pl.String}


def _run_keys(source_id: str, path: Path, table: str, options: Mapping[str, Any], parsed: Any) -> list[dict[str, Any]]:
    """The key columns of a power log's runs: a sampled log's one run from its options (all the
    build's integration takes from them), a per-run file's rows as parsed."""
    if table == SAMPLES_TABLE:
        run = run_options(path, options)
        return [{key: source_id if key == "source_id" else getattr(run, key) for key in _RUN_KEYS}]
    return parsed.frame.select([key for key in _RUN_KEYS if key != "source_id"]).with_columns(source_id=pl.lit(source_id)).to_dicts()


def _registered_runs(cmd: str, entries: Sequence[SourceEntry], *, series: set[str], per_run: bool) -> list[dict[str, Any]]:
    """The run keys of the registered power logs: every sampled log's (from its options), and
    the per-run files' (parsed; all of them with ``per_run``, else those of ``series``)."""
    from pipelines.ingest.parsers.registry import RUN_PARSERS

    rows: list[dict[str, Any]] = []
    for entry in entries:
        wanted = entry.table == RUNS_TABLE and (per_run or entry.options.get("series_id") in series) and entry.kind in RUN_PARSERS
        if entry.table != SAMPLES_TABLE and not wanted:
            continue
        try:
            parsed = RUN_PARSERS[entry.kind](entry.verified_file(), {**entry.options, "source_id": entry.id}) if wanted else None
            rows += _run_keys(entry.id, entry.file, entry.table, entry.options, parsed)
        except EdgeCarbonError as exc:
            raise Refused(f"{cmd}: registered source {entry.id!r} does not load ({exc}); fix it first, nothing was written") from None
    return rows


def _check_power_log(cmd: str, source_id: str, file: Path, table: str, options: Mapping[str, Any], parsed: Any,
                     entries: Sequence[SourceEntry]) -> None:
    """What the build checks of a power log's runs beside every registered log's: the device
    resolves to a device class, the run ids are new, and the series keys hold."""
    from pipelines.ingest.devices import registered_devices

    try:
        devices = registered_devices(entries)
    except EdgeCarbonError as exc:
        raise Refused(f"{cmd}: the device specs do not load ({exc}); fix them first, nothing was written") from None
    mine = _run_keys(source_id, file, table, options, parsed)
    for device in sorted({row["device_id"] for row in mine if row["device_id"] is not None}):
        problem = devices.problem(device)
        if problem is not None:
            raise Refused(f"{cmd}: {problem}")
    series = {row["series_id"] for row in mine if row["series_id"] is not None}
    others = _registered_runs(cmd, [e for e in entries if e.id != source_id], series=series, per_run=table == RUNS_TABLE)
    reproduces = {e.id: e.options.get(REPRODUCES) for e in entries} | {source_id: options.get(REPRODUCES)}
    runs = with_reproduces(pl.DataFrame([*others, *mine], schema=_RUN_KEYS), reproduces)
    files = {e.id: _rel(e.file) for e in entries}
    clash = run_id_problem(runs, files | {source_id: _rel(file)})
    if clash is not None:  # a per-run file's run ids are its own (a sampled log's were checked with its options)
        first, _, message = clash
        raise Refused(f"{cmd}: {_rel(file)}: {message}; register each run once: a file that repeats registered runs is a newer "
                      f"copy of that file (CodeCarbon appends to one emissions.csv), so copy it over {files[first]} and run "
                      f"`edge-carbon register --refresh {first}` instead")
    claims = [claim for claim in [options.get(REPRODUCES)] if claim is not None]
    touched = runs.filter(pl.col("series_id").is_in(list(series)) | pl.col(REPRODUCES).is_in(claims) | (pl.col("source_id") == source_id))
    problem = series_problem(touched)
    if problem is not None:
        raise Refused(f"{cmd}: {problem}")


def _check_rows(cmd: str, request: Request, table: str, file: Path, rel: str, options: Mapping[str, Any], parsed: Any) -> list[str]:
    """The build's row checks on the file (:mod:`pipelines.ingest.precheck`): :class:`Refused` when
    the build would keep nothing of it (or reject a scenario row), else the warning, if any."""
    from pipelines.ingest.precheck import verdict

    entry = SourceEntry(id=str(request.id), path=rel, title="", url="", license="", retrieved_on=dt.date.today(), sha256="",
                        kind=str(request.kind), table=table, status=request.status, options=dict(options), root=sources_dir())
    said = verdict(entry, parsed, shown=_rel(file))
    if said.refusal is not None:
        raise Refused(f"{cmd}: {said.refusal}")
    return [f"{cmd}: {said.warning}"] if said.warning else []


def plan_register(request: Request, *, cmd: str = "register", check_file: bool = True) -> Plan:
    """Validate a registration; raise :class:`Refused` on the first problem, write nothing."""
    parsers = kind_parsers()
    manifest_file = sources_dir() / "manifest" / request.manifest
    manifest_rel = f"sources/manifest/{request.manifest}"
    if not request.file:
        raise Refused(f"{cmd}: FILE is required: the file below sources/ to register (or use --refresh ID)")
    if not request.kind:
        raise Refused(f"{cmd}: --kind is required: the parser of the file, one of {', '.join(sorted(parsers))}")
    if request.kind not in parsers:
        raise Refused(f"{cmd}: unknown --kind {request.kind!r}{_close(request.kind, sorted(parsers))}; "
                      f"give one of {', '.join(sorted(parsers))}")
    tables = list(parsers[request.kind])
    table = request.table or tables[0]
    if table not in tables and table != FIXTURE_TABLE:
        raise Refused(f"{cmd}: kind {request.kind} feeds {' or '.join(tables)}, not {table}; "
                      f"pass --table {tables[0]} (or leave --table out)")
    if not request.id:
        raise Refused(f"{cmd}: --id is required: a unique source id, e.g. my_gpu_run1 (every loaded row carries it)")
    if not _ID.match(request.id):
        raise Refused(f"{cmd}: --id {request.id!r} may use only letters, digits, '_', '.' and '-' (starting with a letter or digit)")
    if request.title is None or not request.title.strip():
        raise Refused(f"{cmd}: --title is required (a human-readable name for {manifest_rel})")
    if request.status not in STATUSES:
        raise Refused(f"{cmd}: --status {request.status!r} is not one of {', '.join(STATUSES)}")
    if not request.manifest.endswith(".toml") or Path(request.manifest).name != request.manifest:
        raise Refused(f"{cmd}: --manifest {request.manifest!r} must be a file name ending in .toml, e.g. {LOCAL_MANIFEST}")
    for name, value in (("--url", request.url), ("--license", request.license)):
        if not value or not value.strip():
            raise Refused(f"{cmd}: {name} must not be empty")
    root = sources_dir()
    file = Path(request.file).expanduser().resolve()
    if check_file:
        if not file.exists():
            raise Refused(f"{cmd}: {request.file} does not exist; copy the file below {_rel(root)}/ (e.g. {_rel(root)}/power/own/) and pass that path")
        if not file.is_file():
            raise Refused(f"{cmd}: {request.file} is not a file; pass the path of one file below {_rel(root)}/")
    if not file.is_relative_to(root):
        raise Refused(f"{cmd}: {request.file} is not below {_rel(root)}/; copy it there (e.g. {_rel(root)}/power/own/) and register the copy")
    rel = file.relative_to(root).as_posix()
    if rel.startswith("manifest/"):
        raise Refused(f"{cmd}: {request.file} is a manifest file; register a data file instead")
    entries = _manifest_entries(cmd)
    by_id = {e.id: e for e in entries}
    if request.id in by_id:
        raise Refused(f"{cmd}: source id {request.id!r} is already registered in {by_id[request.id].manifest_file}; "
                      f"choose another --id (or, after changing that file on purpose, run register --refresh {request.id})")
    same_path = [e for e in entries if e.path == rel]
    if same_path:
        raise Refused(f"{cmd}: {_rel(file)} is already registered as {same_path[0].id!r}; "
                      f"after changing it on purpose run register --refresh {same_path[0].id}")
    options = {**request.typed_options, **_parse_options(cmd, request.kind, request.options)}
    _check_options(cmd, request.kind, options, entries, request.id)
    if table == SAMPLES_TABLE:
        run_id = str(options.get("run_id") or file.stem)
        clash = next((e for e in entries if e.table == SAMPLES_TABLE and str(e.options.get("run_id") or Path(e.path).stem) == run_id), None)
        if clash is not None:
            raise Refused(f"{cmd}: run_id {run_id!r} is already the run of source {clash.id!r}; "
                          f"pass --option run_id=<a new id> (run ids are unique across logs)")
    warnings: list[str] = []
    if check_file and table != FIXTURE_TABLE:
        parsed = _trial_parse(cmd, parsers[request.kind][table], file, options, request.id, request.kind)
        if table in (SAMPLES_TABLE, RUNS_TABLE):
            _check_power_log(cmd, request.id, file, table, options, parsed, entries)
        warnings += _check_rows(cmd, request, table, file, rel, options, parsed)
    entry: dict[str, Any] = {
        "id": request.id,
        "path": rel,
        "title": request.title.strip(),
        "url": request.url.strip(),
        "license": request.license.strip(),
    }
    if request.attribution:
        entry["attribution"] = request.attribution
    entry.update(
        retrieved_on=dt.date.today(),
        sha256=sha256_file(file) if check_file else "0" * 64,
        kind=request.kind,
        table=table,
        status=request.status,
    )
    if request.notes:
        entry["notes"] = request.notes
    if options:
        entry["options"] = options
    text = _appended(manifest_file, entry)
    _check_rendered(cmd, manifest_file, text, entry)
    return Plan(manifest_file=manifest_file, entry=entry, text=text, warnings=warnings)


def write_plan(plan: Plan) -> None:
    atomic_write(plan.manifest_file, plan.text)


def register(request: Request, *, cmd: str = "register") -> Plan:
    """Validate ``request`` and append its entry, holding the manifest lock from the first read to
    the write (what ``edge-carbon register`` does, for callers other than the CLI); raise
    :class:`Refused` on the first problem, writing nothing."""
    with manifest_lock(f"edge-carbon {cmd} {request.id or ''}".strip()):
        plan = plan_register(request, cmd=cmd)
        write_plan(plan)
    return plan


def refresh(source_id: str, *, cmd: str = "register") -> tuple[str, str]:
    """Recompute one entry's sha256 in place (atomically); return (sha256, manifest file)."""
    found: tuple[Path, dict[str, Any]] | None = None
    ids: list[str] = []
    for manifest_file in sorted((sources_dir() / "manifest").glob("*.toml")):
        try:
            data = tomllib.loads(manifest_file.read_text(encoding="utf-8"))
        except tomllib.TOMLDecodeError as exc:
            raise Refused(f"{cmd}: {_rel(manifest_file)} is not valid TOML ({exc}); fix it first") from None
        for raw in data.get("source", []):
            ids.append(str(raw.get("id")))
            if raw.get("id") == source_id:
                found = (manifest_file, raw)
    if found is None:
        raise Refused(f"{cmd}: no source with id {source_id!r}{_close(source_id, ids)}; pass the id of a registered source to --refresh")
    manifest_file, raw = found
    try:  # a package's data file (manifest key package) is where the pinned package is installed
        file = package_file(str(raw["package"]), str(raw.get("path", ""))) if raw.get("package") else sources_dir() / str(raw.get("path", ""))
    except EdgeCarbonError as exc:
        raise Refused(f"{cmd}: {exc}") from None
    if not file.is_file():
        raise Refused(f"{cmd}: {_rel(file)} of source {source_id!r} does not exist; restore the file, then --refresh {source_id}")
    digest = sha256_file(file)
    text = manifest_file.read_text(encoding="utf-8")
    block = re.compile(r'(id\s*=\s*"' + re.escape(source_id) + r'".*?sha256\s*=\s*")[^"]*(")', re.S)
    new, n = block.subn(lambda m: m.group(1) + digest + m.group(2), text, count=1)
    if n != 1:
        raise Refused(f"{cmd}: could not find the sha256 line of {source_id!r} in {_rel(manifest_file)}; add sha256 = \"...\" to that entry")
    atomic_write(manifest_file, new)
    return digest, _rel(manifest_file)


# --- scenario new -------------------------------------------------------------------------


# --- the CLI's side -----------------------------------------------------------------------


def _say(lines: Sequence[str], stream: Any) -> None:
    for line in lines:
        print(line, file=stream)


def register_cli(args: Any) -> int:
    """``edge-carbon register``: 0 when written (or dry-run), 2 when refused (one line on stderr).
    A command that may write holds the manifest lock from its first read to its write."""
    if args.dry_run and not args.refresh:
        return _register_cli(args)
    with manifest_lock(f"edge-carbon register {args.refresh or args.id or ''}".strip()):
        return _register_cli(args)


def _register_cli(args: Any) -> int:
    import sys

    # every register command loads the vocabulary first (it reads the patterns file once per process,
    # as the build does), so a bad row there stops it with that file's one line before anything is written
    import schemas.vocabulary  # noqa: F401
    try:
        if args.refresh:
            digest, where = refresh(args.refresh)
            print(f"{args.refresh}: sha256 {digest} ({where})")
            return 0
        plan = plan_register(Request(
            file=args.file, id=args.id, kind=args.kind, title=args.title, table=args.table, url=args.url,
            license=args.license, status=args.status, manifest=args.manifest, options=args.option or (),
            attribution=args.attribution, notes=args.notes,
        ))
    except Refused as exc:
        print(str(exc), file=sys.stderr)
        return 2
    _say(plan.warnings, sys.stderr)
    if args.dry_run:
        print(f"# dry run: this entry would be appended to {_rel(plan.manifest_file)}; nothing was written")
        print(toml_entry(plan.entry), end="")
        return 0
    write_plan(plan)
    print(f"registered {plan.entry['id']} in {_rel(plan.manifest_file)} (sha256 {plan.entry['sha256']})")
    return 0


