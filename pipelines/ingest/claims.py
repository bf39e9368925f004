"""``edge-carbon claim new`` and ``edge-carbon claim remove``: a row of the claims registry
(``sources/curated/claims.csv``, staging.claims) written or taken out, and its manifest sha256
refreshed, with the guards of ``scenario new``.

``claim new ID ...`` checks everything before it writes:

1. both registry files match the sha256 their manifest entries record (a file changed by hand is
   refreshed on purpose first, ``edge-carbon register --refresh <id>``: nothing is blessed silently);
2. the id is new, and no value holds a line break (the CSV reader takes one record per line);
3. the claims file with the new row appended, parsed by the build's parser and validated against
   :class:`~schemas.claims.Claims` as the build validates it: a bad value is refused in one line
   naming the file, line and column;
4. the claim's case: a registered scenario for ``reduction_factor``; rows of
   ``sources/curated/claim_parameters.csv`` for ``bandwidth_ratio`` (a ``comm_pattern`` for the case
   and for ``--baseline-case``) and ``emission_ratio`` (``energy_kwh``, ``gco2e_per_kwh``,
   ``baseline_energy_kwh`` and at least one ``baseline_gco2e_per_kwh_<name>``) and any other quantity's
   case (its rows present), that file validated against :class:`~schemas.claims.ClaimParameters`;
   a claim no case recomputes takes ``--missing`` instead (the contract's check).

Only then is the row appended (the file written atomically) and ``curated_claims``'s sha256
recomputed, under the manifest lock. ``--dry-run`` prints the row and writes nothing.

``claim remove ID`` cuts exactly that row's line out of the file (every other byte kept, so a
``claim new`` then ``claim remove`` leaves the file as it was) and refreshes the sha256; with
``--with-parameters`` it also cuts the parameter rows of the claim's case and baseline case that
no other claim names, and refreshes ``curated_claim_parameters``. A case's parameter rows are
appended to ``claim_parameters.csv`` by hand (docs/claims.md shows the shell lines), since a
case is a block of rows each with its own status, citation and reasoning.
"""

from __future__ import annotations

import csv
import io
import math
import sys
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pipelines.errors import EdgeCarbonError, Refused
from schemas.statuses import NEUTRAL, STANCES

CLAIMS_TABLE = "staging.claims"
PARAMETERS_TABLE = "staging.claim_parameters"
#: The parameters an emission_ratio case needs (sql/marts/claims.sql), and the prefix of its baselines'.
EMISSION_PARAMETERS = ("energy_kwh", "gco2e_per_kwh", "baseline_energy_kwh")
BASELINE_PREFIX = "baseline_gco2e_per_kwh_"
DEFAULT_TOLERANCE = 0.05


@dataclass
class ClaimRequest:
    """What ``claim new`` was asked to write (the CLI's options)."""

    claim_id: str
    paper: str
    title: str
    quantity: str
    unit: str
    quote: str
    url: str
    value: float | None = None
    low: float | None = None
    high: float | None = None
    text: str | None = None
    location: str | None = None
    case: str | None = None
    baseline_case: str | None = None
    part: str | None = None
    stance: str = NEUTRAL
    tolerance: float = DEFAULT_TOLERANCE
    missing: str | None = None
    notes: str | None = None


@dataclass
class Edit:
    """A registry file's new text, ready to be written, and what to say once it is."""

    file: Path
    source_id: str
    text: str
    said: str


# --- reading the registry ------------------------------------------------------------------


def _entry(cmd: str, table: str) -> Any:
    """The one manifest entry that feeds ``table``."""
    from pipelines.ingest.registration import _manifest_entries

    found = [e for e in _manifest_entries(cmd) if e.table == table]
    if len(found) != 1:
        raise Refused(f"{cmd}: expected one manifest entry feeding {table}, found {len(found)} ({', '.join(e.id for e in found)}); "
                      "fix sources/manifest/claims.toml")
    return found[0]


def _text(cmd: str, entry: Any) -> str:
    """The entry's file, refused when it no longer matches the manifest's sha256."""
    from pipelines.ingest.digests import sha256_file
    from pipelines.ingest.manifest_writing import _rel

    if not entry.file.is_file():
        raise Refused(f"{cmd}: {_rel(entry.file)} of {entry.id} does not exist; restore it")
    if sha256_file(entry.file) != entry.sha256:
        raise Refused(f"{cmd}: {_rel(entry.file)} has changed since {entry.manifest_file} recorded its sha256; check it, "
                      f"run edge-carbon register --refresh {entry.id}, then this again; nothing was written")
    return entry.file.read_text(encoding="utf-8")


def _lines(text: str) -> list[str]:
    """The file's physical lines, ends kept, as the CSV reader reads them."""
    return io.StringIO(text, newline="").readlines()


def records(text: str) -> list[tuple[dict[str, str], int, int]]:
    """Each data row of a CSV text, with the span of physical lines (0-based, end exclusive) it takes."""
    reader = csv.reader(_lines(text))
    header = next(reader, None)
    out: list[tuple[dict[str, str], int, int]] = []
    start = reader.line_num
    for values in reader:
        if values:
            out.append((dict(zip(header or [], values, strict=False)), start, reader.line_num))
        start = reader.line_num
    return out


def _validated(cmd: str, entry: Any, model: Any, text: str) -> list[Any]:
    """The rejects of ``text`` as ``entry``'s file: parsed by the build's parser and validated against ``model``."""
    from pipelines.ingest.manifest_writing import _rel
    from pipelines.ingest.register_options import kind_parsers
    from pipelines.ingest.staging import checked_rows, stamped

    parser = kind_parsers()[entry.kind][entry.table]
    shown = _rel(entry.file)
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / entry.file.name
        path.write_text(text, encoding="utf-8", newline="")
        try:
            _, rejects = checked_rows(entry.table, model, stamped(parser(path, entry.options), entry.id, entry.path), file=shown)
        except EdgeCarbonError as exc:
            raise Refused(f"{cmd}: {str(exc).replace(str(path), shown)}; nothing was written") from None
    # by line; on a line, a column's reject before a row check's (the row check may follow from it)
    return sorted(rejects, key=lambda r: (r.source_row or 0, r.column_name is None, r.column_name or ""))


def _said(cmd: str, shown: str, reject: Any, fix: str) -> str:
    """One line for a reject: file, line, the column (or the row check), why, and the fix."""
    from pipelines.ingest.precheck import _why

    where = f"column {reject.column_name}" if reject.column_name else f"check {reject.check_name}"
    line = f", line {reject.source_row}" if reject.source_row else ""
    return f"{cmd}: {shown}{line}, {where}: {_why(reject)}; {fix}; nothing was written"


# --- claim new -------------------------------------------------------------------------------


def _cell(value: float | None) -> str:
    if value is None:
        return ""
    return str(int(value)) if value.is_integer() and abs(value) < 1e15 else repr(value)


def _published(request: ClaimRequest, cmd: str) -> tuple[float | None, float | None, str]:
    """published_low, published_high and published_text from --value or --low/--high."""
    if request.value is not None and (request.low is not None or request.high is not None):
        raise Refused(f"{cmd}: give --value V (a single published value) or --low L --high H (a published range), not both")
    if request.value is not None:
        low = high = request.value
    elif request.low is not None and request.high is not None:
        low, high = request.low, request.high
    else:
        raise Refused(f"{cmd}: give the published value: --value V, or a range with --low L --high H")
    for name, number in (("published_low", low), ("published_high", high), ("tolerance", request.tolerance)):
        if not math.isfinite(number):
            raise Refused(f"{cmd}: column {name}: {number} is not a finite number; nothing was written")
    gap = "" if request.unit == "x" else " "
    text = request.text or (f"{_cell(low)}{gap}{request.unit}" if low == high else f"{_cell(low)}-{_cell(high)}{gap}{request.unit}")
    return low, high, text


def _row(request: ClaimRequest, cmd: str) -> dict[str, str]:
    low, high, text = _published(request, cmd)
    notes = request.notes or (f"Added with edge-carbon claim new; recomputed as a {request.quantity} claim (sql/marts/claims.sql)."
                              if request.case else "Added with edge-carbon claim new; not recomputed.")
    return {
        "claim_id": request.claim_id, "paper": request.paper, "title": request.title, "citation_url": request.url,
        "quote": request.quote, "location": request.location or "not given", "quantity": request.quantity, "unit": request.unit,
        "published_low": _cell(low), "published_high": _cell(high), "published_text": text, "tolerance": _cell(request.tolerance),
        "case_id": request.case or "", "baseline_case_id": request.baseline_case or "", "part": request.part or "",
        "stance": request.stance, "missing": request.missing or "", "notes": notes,
    }


def _scenarios(cmd: str) -> list[str]:
    from pipelines.ingest.registration import SCENARIO_TABLE, _manifest_entries

    return sorted({str(e.options.get("scenario_id", e.id)) for e in _manifest_entries(cmd) if e.table == SCENARIO_TABLE})


def _check_case(cmd: str, request: ClaimRequest) -> None:
    """The claim's case (and baseline) has what its quantity's recomputation reads."""
    from pipelines.ingest.manifest_writing import _rel
    from pipelines.ingest.register_options import _close
    from schemas.claims import ClaimParameters

    quantity, case = request.quantity, request.case
    if not case:
        if request.baseline_case:
            raise Refused(f"{cmd}: --baseline-case needs --case (the claim's own case)")
        return
    if quantity == "reduction_factor":
        known = _scenarios(cmd)
        if case not in known:
            raise Refused(f"{cmd}: --case {case}: a reduction_factor claim is recomputed on a registered scenario, and "
                          f"{case!r} is none{_close(case, known)}; scenarios: {', '.join(known)}")
        return
    if quantity == "bandwidth_ratio" and not request.baseline_case:
        raise Refused(f"{cmd}: a bandwidth_ratio claim is its baseline's bytes over its case's: give --baseline-case CASE")
    entry = _entry(cmd, PARAMETERS_TABLE)
    text = _text(cmd, entry)
    shown = _rel(entry.file)
    rejects = _validated(cmd, entry, ClaimParameters, text)
    if rejects:
        raise Refused(_said(cmd, shown, rejects[0], "fix that row, then run edge-carbon register --refresh " + entry.id))
    given: dict[str, set[str]] = {}
    for row, _, _ in records(text):
        given.setdefault(row["case_id"], set()).add(row["parameter"])
    needed: dict[str, list[str]] = {case: [], **({request.baseline_case: []} if request.baseline_case else {})}
    if quantity == "bandwidth_ratio":
        needed = {name: ["comm_pattern"] for name in needed}
    elif quantity == "emission_ratio":
        needed[case] = list(EMISSION_PARAMETERS)
    for name, parameters in needed.items():
        if name not in given:
            raise Refused(f"{cmd}: case {name!r} has no rows in {shown}{_close(name, sorted(given))}; append its parameter rows "
                          f"there (docs/claims.md), run edge-carbon register --refresh {entry.id}, then this again")
        lacking = [p for p in parameters if p not in given[name]]
        if quantity == "emission_ratio" and name == case and not any(p.startswith(BASELINE_PREFIX) for p in given[name]):
            lacking.append(BASELINE_PREFIX + "<baseline>")
        if lacking:
            raise Refused(f"{cmd}: case {name!r} of {shown} has no {', '.join(lacking)}, which a {quantity} claim reads; "
                          f"add the row(s), run edge-carbon register --refresh {entry.id}, then this again")


def plan_claim(request: ClaimRequest, *, cmd: str = "claim new") -> Edit:
    """Validate a new claim and render the claims file with it appended; write nothing."""
    from pipelines.ingest.manifest_writing import _rel
    from schemas.claims import Claims

    entry = _entry(cmd, CLAIMS_TABLE)
    text = _text(cmd, entry)
    shown = _rel(entry.file)
    rows = records(text)
    if any(row["claim_id"] == request.claim_id for row, _, _ in rows):
        raise Refused(f"{cmd}: claim {request.claim_id!r} already exists in {shown}; choose another ID "
                      f"(or edit that row, then run edge-carbon register --refresh {entry.id})")
    row = _row(request, cmd)
    header = next(csv.reader(_lines(text)))
    given = [column for column, value in row.items() if value and column not in header]
    if given:
        raise Refused(f"{cmd}: {shown} has no column {given[0]} (its header: {', '.join(header)}); leave that option out")
    row = {column: row.get(column, "") for column in header}
    for column, value in row.items():
        if "\n" in value or "\r" in value:
            raise Refused(f"{cmd}: column {column}: the value has a line break; give it on one line; nothing was written")
    buffer = io.StringIO()
    csv.DictWriter(buffer, fieldnames=header, lineterminator="\n").writerow(row)
    new = (text if text.endswith("\n") or not text else text + "\n") + buffer.getvalue()
    rejects = _validated(cmd, entry, Claims, new)
    line = len(rows) + 2  # the header, then one line per record (the reader's source_row)
    own = [r for r in rejects if r.source_row == line or r.source_row is None]
    if own:
        raise Refused(_said(cmd, shown, own[0], "correct that option"))
    if rejects:
        raise Refused(_said(cmd, shown, rejects[0], f"fix that row first, then run edge-carbon register --refresh {entry.id}"))
    _check_case(cmd, request)
    return Edit(entry.file, entry.id, new, f"added claim {request.claim_id} to {shown} (line {line})")


# --- claim remove ----------------------------------------------------------------------------


def _without(text: str, spans: Sequence[tuple[int, int]]) -> str:
    lines = _lines(text)
    cut = {i for start, end in spans for i in range(start, end)}
    return "".join(line for i, line in enumerate(lines) if i not in cut)


def plan_removal(claim_id: str, *, with_parameters: bool, cmd: str = "claim remove") -> list[Edit]:
    """Validate removing a claim (and, asked, its cases' parameter rows no other claim names); write nothing."""
    from pipelines.ingest.manifest_writing import _rel
    from pipelines.ingest.register_options import _close

    entry = _entry(cmd, CLAIMS_TABLE)
    text = _text(cmd, entry)
    shown = _rel(entry.file)
    rows = records(text)
    found = [(row, start, end) for row, start, end in rows if row["claim_id"] == claim_id]
    if not found:
        known = [row["claim_id"] for row, _, _ in rows]
        raise Refused(f"{cmd}: no claim {claim_id!r} in {shown}{_close(claim_id, known)}; claims: {', '.join(known)}")
    row, start, end = found[0]
    edits = [Edit(entry.file, entry.id, _without(text, [(start, end)]), f"removed claim {claim_id} from {shown}")]
    if not with_parameters:
        return edits
    others = {row2[c] for row2, _, _ in rows if row2["claim_id"] != claim_id for c in ("case_id", "baseline_case_id")}
    cases = [c for c in dict.fromkeys((row["case_id"], row["baseline_case_id"])) if c and c not in others]
    params = _entry(cmd, PARAMETERS_TABLE)
    params_text = _text(cmd, params)
    spans = [(s, e) for prow, s, e in records(params_text) if prow["case_id"] in cases]
    if spans:
        edits.append(Edit(params.file, params.id, _without(params_text, spans),
                          f"removed {len(spans)} parameter row(s) of {', '.join(cases)} from {_rel(params.file)}"))
    return edits


# --- the CLI's side --------------------------------------------------------------------------


def _write(edits: Sequence[Edit], cmd: str) -> list[str]:
    from pipelines.ingest.manifest_writing import atomic_write
    from pipelines.ingest.registration import refresh

    said = []
    for edit in edits:
        atomic_write(edit.file, edit.text)
        digest, where = refresh(edit.source_id, cmd=cmd)
        said.append(f"{edit.said}; {edit.source_id}: sha256 {digest} ({where})")
    return said


def _number(text: str | None, flag: str, cmd: str) -> float | None:
    if text is None:
        return None
    try:
        return float(text)
    except ValueError:
        raise Refused(f"{cmd}: {flag} {text!r} is not a number") from None


def claim_new_cli(args: Any) -> int:
    """``edge-carbon claim new``: 0 when written (or dry-run), 2 when refused (one line on stderr)."""
    from pipelines.ingest.manifest_lock import manifest_lock

    cmd = "claim new"
    try:
        request = ClaimRequest(
            claim_id=args.id, paper=args.paper, title=args.title, quantity=args.quantity, unit=args.unit, quote=args.quote,
            url=args.url, value=_number(args.value, "--value", cmd), low=_number(args.low, "--low", cmd),
            high=_number(args.high, "--high", cmd), text=args.text, location=args.location, case=args.case,
            baseline_case=args.baseline_case, part=args.part, stance=args.stance, tolerance=_number(args.tolerance, "--tolerance", cmd) or 0.0, missing=args.missing,
            notes=args.notes,
        )
        if args.dry_run:
            edit = plan_claim(request, cmd=cmd)
            print(f"# dry run: this row would be appended to {edit.said.split(' to ', 1)[1]}; nothing was written")
            lines = _lines(edit.text)
            print(lines[0] + lines[-1], end="")
            return 0
        with manifest_lock(f"edge-carbon claim new {args.id}"):
            said = _write([plan_claim(request, cmd=cmd)], cmd)
    except Refused as exc:
        print(str(exc), file=sys.stderr)
        return 2
    print("\n".join(said))
    print(f"build with `make run`, then look it up in marts.claims (claim_id {args.id}; docs/claims.md shows the query)")
    return 0


def claim_remove_cli(args: Any) -> int:
    """``edge-carbon claim remove``: 0 when removed (or dry-run), 2 when refused."""
    from pipelines.ingest.manifest_lock import manifest_lock

    cmd = "claim remove"
    try:
        if args.dry_run:
            edits = plan_removal(args.id, with_parameters=args.with_parameters, cmd=cmd)
            print("# dry run: " + "; ".join(e.said.replace("removed", "would remove", 1) for e in edits) + "; nothing was written")
            return 0
        with manifest_lock(f"edge-carbon claim remove {args.id}"):
            said = _write(plan_removal(args.id, with_parameters=args.with_parameters, cmd=cmd), cmd)
    except Refused as exc:
        print(str(exc), file=sys.stderr)
        return 2
    print("\n".join(said))
    return 0


def add_parser(sub: Any) -> None:
    """``edge-carbon claim new`` and ``edge-carbon claim remove`` on the CLI's subparsers."""
    from schemas.claims import QUANTITIES

    claim = sub.add_parser("claim", help="add a published claim to the claims registry (sources/curated/claims.csv), or remove one")
    claim_sub = claim.add_subparsers(dest="claim_command", required=True)
    new = claim_sub.add_parser("new", help="append a claim row to sources/curated/claims.csv and refresh its sha256")
    new.add_argument("id", metavar="ID", help="claim id: lower case, digits and '_' (first author, year, what it states)")
    new.add_argument("--paper", required=True, help="first author et al. and year, e.g. 'Douillard et al. 2023'")
    new.add_argument("--title", required=True, help="the paper's title and where it appeared")
    new.add_argument("--quantity", required=True, help="what it states: " + " | ".join(QUANTITIES))
    new.add_argument("--value", help="the published value (a single number)")
    new.add_argument("--low", help="the low end of a published range (with --high)")
    new.add_argument("--high", help="the high end of a published range (with --low)")
    new.add_argument("--text", help="the published value as stated (default: from --value or --low/--high and --unit)")
    new.add_argument("--unit", required=True, help="unit of the published value: x, fraction, kgCO2e")
    new.add_argument("--quote", required=True, help="the sentence that states the claim, as published")
    new.add_argument("--url", required=True, help="link to the paper")
    new.add_argument("--location", help="where in the paper (abstract, section, figure)")
    new.add_argument("--case", help="the case that recomputes it: a scenario (reduction_factor) or a case of claim_parameters.csv")
    new.add_argument("--baseline-case", help="the case it is compared against (bandwidth_ratio)")
    new.add_argument("--part", help="the part of a run's energy an emission_share claim is about (schemas/claims.py PARTS)")
    new.add_argument("--stance", default=NEUTRAL, choices=STANCES,
                     help=f"which side of 'train outside the data centre' the claim argues (default {NEUTRAL}: it argues neither)")
    new.add_argument("--tolerance", default=str(DEFAULT_TOLERANCE),
                     help=f"relative error within which a recomputed end counts as reproduced (default {DEFAULT_TOLERANCE})")
    new.add_argument("--missing", help="what the paper does not publish that a recomputation needs (a claim with no case)")
    new.add_argument("--notes", help="how it is recomputed, or why it cannot be (default: a line saying it was added here)")
    new.add_argument("--dry-run", action="store_true", help="validate and print the row; write nothing")
    new.set_defaults(func=claim_new_cli)
    drop = claim_sub.add_parser("remove", help="undo claim new: remove a claim's row and refresh the sha256")
    drop.add_argument("id", metavar="ID", help="the claim id")
    drop.add_argument("--with-parameters", action="store_true",
                      help="also remove the parameter rows of its case and baseline case that no other claim names")
    drop.add_argument("--dry-run", action="store_true", help="check and say what would be removed; write nothing")
    drop.set_defaults(func=claim_remove_cli)
