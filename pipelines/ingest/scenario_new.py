"""``edge-carbon scenario new NAME --extends PARENT --set param=value [--from-series SERIES]``: a
scenario file of the parent's parameter rows that it changes, checked as the build checks it,
written and registered through :mod:`pipelines.ingest.registration` (the same checks, dry run and
manifest lock). ``--from-series`` points the device or GPU power (and, where the series has a
measured rate row, the rate) at a registered power series (:mod:`pipelines.ingest.scenario_series`)."""

from __future__ import annotations

import csv
import hashlib
import io
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pipelines.errors import Refused
from pipelines.ingest.manifest import STATUSES, SourceEntry
from pipelines.ingest.manifest_lock import manifest_lock
from pipelines.ingest.manifest_writing import LOCAL_MANIFEST, _rel, atomic_write, toml_entry
from pipelines.ingest.register_options import _close
from pipelines.ingest.registration import (
    _SCENARIO_ID,
    DISTRIBUTIONS,
    SCENARIO_COLUMNS,
    SCENARIO_TABLE,
    Plan,
    Request,
    _manifest_entries,
    _say,
    plan_register,
    write_plan,
)
from pipelines.paths import sources_dir
from schemas.parameter_bounds import is_named, refusal

#: The status of a row that reads a registered measurement (``--from-series``).
SERIES_STATUS = "measured"


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
    from_series: str | None = None


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
    if not request.sets and not request.from_series:
        raise Refused(f"{cmd}: give at least one --set PARAMETER=VALUE (e.g. --set edge_hours_per_day=6) or --from-series SERIES")
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
    if request.from_series:
        from pipelines.ingest.scenario_series import series_rows

        added, notes = series_rows(request.from_series, {parameter: row for parameter, (_, row) in inherited.items()})
        clash = [row.parameter for row in added if row.parameter in sets]
        if clash:
            raise Refused(f"{cmd}: --set {clash[0]} and --from-series {request.from_series} both set {clash[0]}; keep one")
        warnings += notes
        for row in added:
            rows.append({"parameter": row.parameter, "value": "", "unit": (inherited[row.parameter][1].get("unit") or "").strip(),
                         "low": "", "high": "", "distribution": "normal" if row.range_ref else "point", "status": SERIES_STATUS,
                         "factor_ref": row.factor_ref, "reasoning": request.reason or row.reasoning, "range_ref": row.range_ref})
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=SCENARIO_COLUMNS, lineterminator="\n")
    writer.writeheader()
    writer.writerows(rows)
    changed = [*sets, *([f"the series {request.from_series}"] if request.from_series else [])]
    title = request.title or f"{name}: {parent} with {', '.join(changed)} set on the command line"
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
            status=args.status, title=args.title, manifest=args.manifest, from_series=getattr(args, "from_series", None),
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
