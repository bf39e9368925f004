"""Scenario files: their rows read, inheritance between them and factor references resolved.

Columns: ``parameter, value, unit, low, high, distribution, status, factor_ref, reasoning`` and,
optionally, ``range_ref``. ``value`` may be left empty when ``factor_ref`` names the staged row to
read it from, in the form ``<table>.<key_column>=<key>.<value_column>``, for example
``device_specs.device_id=nvidia-h100-sxm.tdp_w``; which tables and columns may be referenced is
fixed in :data:`REFERENCE_TABLES`. ``range_ref`` names a measured mean with a 95% CI
(``benchmark_series.series_id=table1_phone.mean_power_w_mean``); the row's low/high become its
value times the CI's relative ends, so measurement uncertainty enters sensitivity and Monte Carlo.
A parameter that names a method (``accounting_frame,consequential``:
:data:`schemas.parameter_bounds.NAMED`) keeps its ``value`` as text, in ``value_text``; every other
value must read as a number.

A scenario file may ``extend`` another (manifest option), inheriting every parameter it does
not set itself; an ``abstract`` scenario only serves as a parent and is not published. A
parameter whose ``factor_ref`` names a staged row takes its value (and its source_id, file
and line) from that row, so choosing a factor set is editing one cell of a scenario file. A
reference that finds no row stops the build, naming the scenario, the parameter and the row
it looked for: the scenario never falls back to its parent's value in silence.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import duckdb
import polars as pl

from pipelines.errors import ManifestError, UnresolvedRow
from pipelines.ingest.manifest import SourceEntry
from pipelines.ingest.parsers.common import checked_casts, read_text_csv, require_columns
from pipelines.ingest.quarantine import Reject, split_valid
from pipelines.ingest.staging import Parsed, Staged, parse_entry
from schemas.meta import conform, empty_frame
from schemas.parameter_bounds import NAMED, refusal
from schemas.quarantine import RejectedRows
from schemas.scenario_parameters import ScenarioParameters

COLUMNS = ("parameter", "value", "unit", "low", "high", "distribution", "status", "factor_ref", "reasoning", "range_ref")
REQUIRED = ("parameter", "unit", "status")


def parse_scenario(path: Path, options: Mapping[str, Any]) -> Parsed:
    """Read a scenario file; numbers that do not read are quarantined with their line."""
    frame = read_text_csv(path)
    require_columns(path, frame, REQUIRED)
    for name in COLUMNS:
        if name not in frame.columns:
            frame = frame.with_columns(pl.lit(None, dtype=pl.String).alias(name))
    frame = frame.select(["source_row", *COLUMNS])
    named = pl.col("parameter").str.strip_chars().is_in(list(NAMED))
    frame = frame.with_columns(
        pl.when(named & (pl.col("value").str.strip_chars() != "")).then(pl.col("value").str.strip_chars()).alias("value_text"),
        pl.when(~named).then(pl.col("value")).alias("value"),
    )
    typed, rejects = checked_casts(frame, {"value": pl.Float64, "low": pl.Float64, "high": pl.Float64})
    typed = typed.with_columns(
        pl.col("distribution").fill_null("point"),
        pl.col("parameter").str.strip_chars(),
        pl.col("factor_ref").str.strip_chars(),
        pl.col("range_ref").str.strip_chars(),
    )
    return Parsed(frame=typed, rejects=rejects)


#: The table the scenario files are staged into.
TABLE = "core.scenario_parameters"

#: table -> (columns that may serve as the key, columns that may be read as a value)
REFERENCE_TABLES: dict[str, tuple[frozenset[str], frozenset[str]]] = {
    "staging.device_specs": (
        frozenset({"device_id"}),
        frozenset({"fp64_tflops", "fp32_tflops", "fp16_tflops", "tf32_tensor_tflops", "bf16_tensor_tflops",
                   "fp16_tensor_tflops", "npu_tops", "mem_bandwidth_gb_per_s", "memory_gb", "tdp_w"}),
    ),
    "staging.device_pcf": (
        frozenset({"device_id", "factor_set"}),
        frozenset({"total_kgco2e", "production_share", "use_share", "transport_share", "eol_share", "lifetime_years"}),
    ),
    "staging.network_energy": (frozenset({"factor_id"}), frozenset({"value", "low", "high"})),
    # the curated factors among the grid rows (marginal factors of published studies); the time
    # series have no factor_id, so a reference can only name a curated row
    "staging.grid_intensity": (
        frozenset({"factor_id"}),
        frozenset({"gco2e_per_kwh", "low_gco2e_per_kwh", "high_gco2e_per_kwh"}),
    ),
    "staging.model_configs": (frozenset({"model_id"}), frozenset({"params", "n_layers", "hidden_size"})),
    "staging.benchmark_series": (
        frozenset({"series_id"}),
        frozenset({"energy_j_mean", "energy_j_ci95_low", "energy_j_ci95_high", "duration_s_mean", "mean_power_w_mean"}),
    ),
    # measured training rates: a cloud GPU's achieved TFLOPS of 6 N D work, a job's rate per hour
    "staging.training_throughput": (
        frozenset({"throughput_id"}),
        frozenset({"achieved_tflops", "tokens_per_s", "reported_tflops", "mfu", "job_time_s", "jobs_per_h"}),
    ),
    # the one mart a scenario may read: written with its schema, marts.charging_windows.window_id=...
    "marts.charging_windows": (
        frozenset({"window_id"}),
        frozenset({"mean_gco2e_per_kwh", "daily_mean_gco2e_per_kwh", "annual_average_gco2e_per_kwh"}),
    ),
}
#: (table, mean column) -> its 95% CI columns: what a range_ref may name.
CI_COLUMNS: dict[tuple[str, str], tuple[str, str]] = {
    ("staging.benchmark_series", "energy_j_mean"): ("energy_j_ci95_low", "energy_j_ci95_high"),
    ("staging.benchmark_series", "mean_power_w_mean"): ("mean_power_w_ci95_low", "mean_power_w_ci95_high"),
}
#: Tables a factor_ref must name with their schema (all others are staging tables, named without it).
QUALIFIED_TABLES = frozenset({"marts.charging_windows"})
_REF = re.compile(r"^(?:(?P<schema>marts)\.)?(?P<table>[a-z_]+)\.(?P<key>[a-z0-9_]+)=(?P<id>[^\s]+)\.(?P<col>[a-z0-9_]+)$")


@dataclass(frozen=True)
class Ref:
    table: str
    key_column: str
    key: str
    column: str


def parse_ref(text: str) -> Ref:
    """Parse ``table.key_column=key.value_column``; raise ValueError with the reason."""
    match = _REF.match(text)
    if not match:
        raise ValueError(f"factor_ref {text!r} is not of the form table.key_column=key.value_column")
    table = f"{match['schema'] or 'staging'}.{match['table']}"
    if table not in REFERENCE_TABLES or (table in QUALIFIED_TABLES) != bool(match["schema"]):
        known = sorted(t if t in QUALIFIED_TABLES else t.split(".")[1] for t in REFERENCE_TABLES)
        raise ValueError(f"factor_ref {text!r}: table {match['table']!r} is not one of {known}")
    keys, cols = REFERENCE_TABLES[table]
    if match["key"] not in keys:
        raise ValueError(f"factor_ref {text!r}: {match['key']!r} is not a key of {table} ({sorted(keys)})")
    if match["col"] not in cols:
        raise ValueError(f"factor_ref {text!r}: {match['col']!r} is not a referencable column of {table} ({sorted(cols)})")
    return Ref(table, match["key"], match["id"], match["col"])


def _referenced_row(con: duckdb.DuckDBPyConnection, ref: Ref) -> dict | None:
    frame = pl.from_arrow(con.sql("select * from query_table($t)", params={"t": ref.table}).to_arrow_table())
    hits = frame.filter(pl.col(ref.key_column) == ref.key)
    return hits.row(0, named=True) if hits.height == 1 else None


def lookup(con: duckdb.DuckDBPyConnection, ref: Ref) -> tuple[float | None, str, str, int | None] | None:
    """(value, source_id, source_file, source_row) of the referenced row, or None if absent."""
    row = _referenced_row(con, ref)
    if row is None:
        return None
    value = row[ref.column]
    return (None if value is None else float(value), row["source_id"], row["source_file"], row["source_row"])


def names_synthetic_rate(con: duckdb.DuckDBPyConnection, ref: Ref) -> bool:
    """True when ``ref`` names a training rate row that a capture's fake backend wrote (``is_synthetic``)."""
    if ref.table != "staging.training_throughput":
        return False
    row = _referenced_row(con, ref)
    return bool(row is not None and row.get("is_synthetic"))


def relative_range(con: duckdb.DuckDBPyConnection, text: str) -> tuple[float, float]:
    """(low / mean, high / mean) of the 95% CI of the measured mean a range_ref names.

    Raises ValueError with the reason when the reference is malformed, names a column with no
    CI, or the row or its CI is missing.
    """
    ref = parse_ref(text)
    ci = CI_COLUMNS.get((ref.table, ref.column))
    if ci is None:
        allowed = sorted(f"{t.split('.')[1]}.{c}" for t, c in CI_COLUMNS)
        raise ValueError(f"range_ref {text!r}: {ref.column!r} has no confidence interval; one of {allowed}")
    row = _referenced_row(con, ref)
    if row is None or row[ref.column] is None or row[ci[0]] is None or row[ci[1]] is None:
        raise ValueError(f"range_ref {text!r}: no single row with {ref.key_column} = {ref.key!r} and a mean with a 95% CI in {ref.table}")
    mean = float(row[ref.column])
    return float(row[ci[0]]) / mean, float(row[ci[1]]) / mean


def own_row(entry: SourceEntry, scenario: str, row: Mapping[str, Any]) -> dict[str, Any]:
    """A parsed row of ``entry``'s scenario file as a row of core.scenario_parameters, before its
    references are resolved (its own value, source and line)."""
    return {
        "scenario_id": scenario,
        "parameter": row["parameter"],
        "value": row["value"],
        "value_text": row["value_text"],
        "unit": row["unit"],
        "low": row["low"],
        "high": row["high"],
        "distribution": row["distribution"],
        "status": row["status"],
        "factor_ref": row["factor_ref"],
        "reasoning": row["reasoning"],
        "range_ref": None,
        "defined_in": f"{entry.path}:{row['source_row']}",
        "source_id": entry.id,
        "source_file": entry.path,
        "source_row": row["source_row"],
    }


def resolve_order(entries: Sequence[SourceEntry]) -> list[SourceEntry]:
    """Scenario entries ordered so that every parent comes before the scenarios extending it."""
    by_id = {str(e.options.get("scenario_id", e.id)): e for e in entries}
    ordered: list[SourceEntry] = []
    state: dict[str, str] = {}

    def visit(scenario: str, chain: tuple[str, ...]) -> None:
        if state.get(scenario) == "done":
            return
        if scenario in chain:
            raise ManifestError(by_id[scenario].manifest_file, f"scenario inheritance loops: {' -> '.join((*chain, scenario))}")
        entry = by_id[scenario]
        parent = entry.options.get("extends")
        if parent:
            if parent not in by_id:
                raise ManifestError(entry.manifest_file, f"scenario {scenario!r} extends unknown scenario {parent!r}")
            visit(str(parent), (*chain, scenario))
        state[scenario] = "done"
        ordered.append(entry)

    for scenario in by_id:
        visit(scenario, ())
    return ordered


def resolve(
    con: duckdb.DuckDBPyConnection, parsed: Mapping[str, tuple[SourceEntry, pl.DataFrame]]
) -> tuple[pl.DataFrame, list[tuple[SourceEntry, Reject]]]:
    """Apply inheritance and factor references; return published rows and rejects.

    ``parsed`` maps scenario id -> (entry, parsed frame). Rows whose reference cannot be
    resolved are rejected with the reason; the rest of the scenario still resolves.
    """
    resolved: dict[str, dict[str, dict]] = {}
    rejects: list[tuple[SourceEntry, Reject]] = []
    entries = resolve_order([entry for entry, _ in parsed.values()])
    for entry in entries:
        scenario = str(entry.options.get("scenario_id", entry.id))
        frame = parsed[scenario][1]
        parent = entry.options.get("extends")
        rows = {k: {**v, "scenario_id": scenario} for k, v in resolved.get(str(parent), {}).items()} if parent else {}
        for row in frame.iter_rows(named=True):
            out = own_row(entry, scenario, row)
            if row["factor_ref"]:
                try:
                    ref = parse_ref(row["factor_ref"])
                except ValueError as exc:
                    rejects.append((entry, Reject(row["source_row"], "factor_ref", "factor_ref", row["factor_ref"], str(exc))))
                    continue
                found = lookup(con, ref)
                if found is None or found[0] is None:
                    rejects.append((entry, Reject(row["source_row"], "factor_ref", "factor_ref_exists", row["factor_ref"],
                                                  f"factor_ref: no single row with {ref.key_column} = {ref.key!r} and a {ref.column} value in {ref.table}")))
                    continue
                if names_synthetic_rate(con, ref):
                    rejects.append((entry, Reject(row["source_row"], "factor_ref", "factor_ref_measured", row["factor_ref"],
                                                  f"factor_ref: the {ref.table} row {ref.key!r} is synthetic (a fake capture), not a "
                                                  "measurement; a scenario reads measured rows only")))
                    continue
                value, source_id, source_file, source_row = found
                if row["value"] is not None and abs(row["value"] - value) > 1e-9 * max(1.0, abs(value)):
                    rejects.append((entry, Reject(row["source_row"], "value", "matches_factor_ref", str(row["value"]),
                                                  f"value: {row['value']} differs from {value} in the referenced row {row['factor_ref']}")))
                    continue
                out.update(value=value, source_id=source_id, source_file=source_file, source_row=source_row)
            elif row["value"] is None and row["value_text"] is None:
                rejects.append((entry, Reject(row["source_row"], "value", "not_nullable", None, "value: empty and no factor_ref to read it from")))
                continue
            if row.get("range_ref"):
                if row["low"] is not None or row["high"] is not None:
                    rejects.append((entry, Reject(row["source_row"], "range_ref", "range_ref_alone", row["range_ref"],
                                                  "range_ref: low and high must be empty when the range comes from a measurement")))
                    continue
                try:
                    low_ratio, high_ratio = relative_range(con, row["range_ref"])
                except ValueError as exc:
                    rejects.append((entry, Reject(row["source_row"], "range_ref", "range_ref_exists", row["range_ref"], str(exc))))
                    continue
                out.update(low=out["value"] * low_ratio, high=out["value"] * high_ratio, range_ref=row["range_ref"])
            rows[row["parameter"]] = out
        resolved[scenario] = rows
    published = [
        row
        for entry in entries
        if not entry.options.get("abstract", False)
        for row in resolved[str(entry.options.get("scenario_id", entry.id))].values()
    ]
    frame = pl.DataFrame(published, infer_schema_length=None) if published else pl.DataFrame()
    return frame, rejects


def out_of_bounds(frame: pl.DataFrame) -> list[str]:
    """One line per value, or end of a range, of core.scenario_parameters outside its parameter's
    bounds (:mod:`schemas.parameter_bounds`): the scenario file and line that set it, the
    parameter, the value, the allowed range and the scenarios that use it. A row inherited by
    several scenarios is named once."""
    found: dict[tuple[str, int, str, str], tuple[str, list[str]]] = {}
    for row in frame.iter_rows(named=True):
        for column in ("value", "value_text", "low", "high"):
            number = row[column]
            why = None if number is None else refusal(row["parameter"], number, row["unit"], end=column if column in ("low", "high") else None)
            if why is None:
                continue
            path, _, line = str(row["defined_in"]).rpartition(":")
            if row["factor_ref"] and column == "value":
                why += f" (read from {row['factor_ref']})"
            key = (path, int(line) if line.isdigit() else 0, row["parameter"], column)
            found.setdefault(key, (why, []))[1].append(row["scenario_id"])
    lines = []
    for (path, line, _, _), (why, scenarios) in sorted(found.items()):
        used = ", ".join(sorted(set(scenarios)))
        lines.append(f"sources/{path}, line {line}: {why} (scenario{'s' if len(set(scenarios)) > 1 else ''} {used})")
    return lines


def _reference_fix(reject: Reject, parent: str | None) -> str:
    """How to mend an unresolved row: for a reference that finds no row, where that row comes from."""
    inherit = f"or remove the row to inherit {parent}'s value" if parent else "or remove the row"
    try:
        ref = parse_ref(str(reject.value)) if reject.check_name in ("factor_ref_exists", "range_ref_exists") else None
    except ValueError:
        ref = None
    if ref is not None and ref.table == "staging.benchmark_series":
        return (f"register the power log(s) of series {ref.key} (edge-carbon register ... --option series_id={ref.key}) "
                f"or point the reference at a registered series, {inherit}")
    if ref is not None:
        return f"add that row to the source of {ref.table} or point the reference at a row it has, {inherit}"
    return f"fix the row, {inherit}"


def unresolved(rejects: Sequence[tuple[SourceEntry, Reject]],
               parsed: Mapping[str, tuple[SourceEntry, pl.DataFrame]]) -> UnresolvedRow:
    """The error of the first row (by file and line) that :func:`resolve` could not resolve: the
    file and line, the scenario, the parameter, why, and the fix, in one line."""
    entry, reject = min(rejects, key=lambda item: (item[0].path, item[1].source_row or 0))
    scenario = str(entry.options.get("scenario_id", entry.id))
    rows = parsed[scenario][1].filter(pl.col("source_row") == reject.source_row).get_column("parameter").to_list()
    parameter = rows[0] if rows else "?"
    why = reject.reason.removeprefix(f"{reject.column_name}: ") if reject.column_name else reject.reason
    if reject.check_name == "factor_ref_exists":
        why = f"factor_ref {reject.value} finds no row ({why})"
    parent = entry.options.get("extends")
    more = f" ({len(rejects) - 1} more unresolved row(s) after it)" if len(rejects) > 1 else ""
    return UnresolvedRow(f"sources/{entry.path}", reject.source_row,
                         f"scenario {scenario}, parameter {parameter}: {why}; {_reference_fix(reject, parent and str(parent))}{more}")


def stage_scenarios(con: duckdb.DuckDBPyConnection, entries: Sequence[SourceEntry], *, run_id: str,
                    log: Callable[[str], Any] = lambda _: None) -> Staged:
    """core.scenario_parameters from the scenario files ``entries``: each parsed, inheritance and
    factor references resolved (:func:`resolve`, reading the staged tables through ``con``),
    then every row checked against :class:`ScenarioParameters`. A row that cannot be resolved
    (a reference that finds no row: a series whose log was unregistered, say) raises
    :class:`UnresolvedRow` naming it, since leaving it out would give its scenario the parent's
    value in silence. So does a row that cannot be parsed or fails the contract (:func:`refused`):
    a scenario row is never quarantined, and ``edge-carbon register`` refuses such a file before
    it is registered."""
    parsed = {}
    by_path = {entry.path: entry for entry in entries}
    for entry in entries:
        result = parse_entry(entry, parse_scenario)
        scenario = str(entry.options.get("scenario_id", entry.id))
        if result.rejects:  # a row left out would leave its scenario the parent's value, or none, without a word
            raise refused(entry, result.rejects)
        parsed[scenario] = (entry, result.frame)
        log(f"scenario {scenario}: {result.frame.height} rows in {entry.path}")
    frame, rejects = resolve(con, parsed)
    if rejects:
        raise unresolved(rejects, parsed)
    frame = conform(ScenarioParameters, frame) if frame.height else empty_frame(ScenarioParameters)
    valid, row_rejects = split_valid(ScenarioParameters, frame, file="sources/scenarios")
    if row_rejects:
        first = min(row_rejects, key=lambda r: (str(r.source_file), r.source_row or 0))
        entry = by_path.get(str(first.source_file).removeprefix("sources/"))
        if entry is not None:
            at = (pl.col("source_file") == first.source_file) & (pl.col("source_row") == first.source_row)
            named = frame.filter(at).get_column("parameter").to_list() if "source_file" in frame.columns else []
            raise refused(entry, row_rejects, first, named[0] if named else None)
        raise UnresolvedRow(str(first.source_file), first.source_row, f"{first.reason}; fix the row or remove it")
    return Staged(
        table=TABLE,
        frame=valid.sort("scenario_id", "parameter"),
        rejects=empty_frame(RejectedRows),
        per_source=[],
    )


def refused(entry: SourceEntry, rejects: Sequence[Reject], first: Reject | None = None,
            parameter: str | None = None) -> UnresolvedRow:
    """The error of a scenario file's first row that fails to parse or its contract: a scenario row
    is never quarantined, since leaving it out would give its scenario the parent's value."""
    first = first or min(rejects, key=lambda r: r.source_row or 0)
    scenario = str(entry.options.get("scenario_id", entry.id))
    parent = entry.options.get("extends")
    inherit = f"or remove the row to inherit {parent}'s value" if parent else "or remove the row"
    column = (f", parameter {parameter}" if parameter else "") + (f", column {first.column_name}" if first.column_name else "")
    more = f" ({len(rejects) - 1} more rejected row(s) after it)" if len(rejects) > 1 else ""
    return UnresolvedRow(f"sources/{entry.path}", first.source_row,
                         f"scenario {scenario}{column}: {first.reason}; fix the row, {inherit}{more}")
