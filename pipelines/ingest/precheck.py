"""What the build would make of a new file's rows, told before ``register`` writes anything.

``edge-carbon register`` trial-parses a file with the parser the build uses, and the parsers of
power logs already apply the plausibility bounds and the timestamp rules
(:mod:`pipelines.ingest.plausibility`). Here the same rows go through the rest of the build's
row checks, with the build's own code, so no rule is written twice:

- a power log (``staging.power_samples``): the samples are validated against
  :class:`~schemas.power_samples.PowerSamples` (:func:`pipelines.ingest.staging.checked_rows`)
  and the run is integrated from the samples kept (:func:`pipelines.ingest.energy.runs.runs_from_samples`)
  and validated against :class:`~schemas.benchmark_runs.BenchmarkRuns`, as the build does;
- a per-run power file (``staging.benchmark_runs``): its runs against ``BenchmarkRuns``;
- a scenario file (``core.scenario_parameters``): each row's reference is parsed
  (:func:`pipelines.ingest.scenarios.parse_ref`), the rows that need no staged table are
  resolved as the build resolves them, validated against
  :class:`~schemas.scenario_parameters.ScenarioParameters` and checked against their
  parameter's bounds (:func:`pipelines.ingest.scenarios.out_of_bounds`).

The verdict: a file the build would keep nothing of (no valid row, or for a power log no run
to integrate), or a scenario file with any row the build would reject (that row would give the
scenario its parent's value), is refused, naming the file, line, column, reason and fix; a
file with only some bad rows is accepted with a one-line warning that counts them, and the
build quarantines those rows as it always does.
"""

from __future__ import annotations

import dataclasses
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import duckdb
import pandera.polars as pa
import polars as pl

from pipelines.ingest.manifest import SourceEntry
from pipelines.ingest.quarantine import Reject, split_valid
from pipelines.ingest.staging import Parsed, checked_rows, stamped
from schemas.meta import conform

SAMPLES_TABLE = "staging.power_samples"
RUNS_TABLE = "staging.benchmark_runs"
SCENARIO_TABLE = "core.scenario_parameters"
#: The tables whose rows ``register`` checks as the build would.
CHECKED_TABLES = (SAMPLES_TABLE, RUNS_TABLE, SCENARIO_TABLE)

#: What to do about the rows a check rejects, by the check's name (the build's reject names).
FIXES: dict[str, str] = {
    "plausible_power": "check the unit of the power column (watts) and --option device_id (its TDP sets the bound)",
    "time_step_back": "put the lines in time order, or drop the lines logged before the clock changed",
    "future_timestamp": "check the logger's clock and the log's time zone (--option timezone where the format reads one)",
    "outside_log_span": "drop the lines that are not part of this run (a wrong date)",
    "parse": "fix the cell so that it reads as its column's type",
    "no_run": "give the log at least two valid samples a run can be integrated over",
}
DEFAULT_FIX = "fix those rows"
#: What to do about a run the build cannot integrate from valid samples.
RUN_FIX = "check the log's options (an idle_baseline_w at or above the run's mean power leaves no energy)"


@dataclass(frozen=True)
class Verdict:
    """What ``register`` says about a file's rows: a refusal (one line, without the command's
    prefix), else a warning (one line, or None), with the counts behind them."""

    refusal: str | None
    warning: str | None
    rows: int
    rejected: int


def _line_of(reject: Reject) -> str:
    return "" if reject.source_row is None else f", line {reject.source_row}"


def _column_of(reject: Reject) -> str:
    return "" if reject.column_name is None else f", column {reject.column_name}"


def _why(reject: Reject) -> str:
    """The reject's reason without its leading ``column: `` (the line names the column)."""
    return reject.reason.removeprefix(f"{reject.column_name}: ") if reject.column_name else reject.reason


def _typical(rejects: Sequence[Reject]) -> Reject:
    """The first reject (by line) of the commonest check: the one that says what went wrong."""
    check = Counter(r.check_name for r in rejects).most_common(1)[0][0]
    return min((r for r in rejects if r.check_name == check), key=lambda r: r.source_row or 0)


def _rows(rejects: Sequence[Reject]) -> set[int | None]:
    return {r.source_row for r in rejects}


def _counted(shown: str, kept: pl.DataFrame, rejects: Sequence[Reject], what: str, *, runs: pl.DataFrame | None,
             run_rejects: Sequence[Reject]) -> Verdict:
    """The verdict on a power file: refused when nothing (or no run) would load, warned when some rows would not."""
    bad = _rows(rejects)
    good = set(kept.get_column("source_row").to_list()) if "source_row" in kept.columns else set()
    total, rejected = len(bad | good), len(bad)  # lines: a line with one bad reading of several counts as bad
    no_run = runs is not None and runs.height == 0
    if total == 0:
        return Verdict(f"{shown}: the file has no {what}; {FIXES['no_run']}, then register it again; nothing was written", None, 0, 0)
    if kept.height and no_run and rejected < kept.height:  # most samples kept, yet no run: the run itself is the cause
        why = run_rejects[0].reason if run_rejects else "fewer than two samples to integrate over"
        also = f", and {rejected:,} of them would be quarantined" if rejected else ""
        return Verdict(f"{shown}: the build would integrate no run from its {total:,} {what} ({why}){also}; {RUN_FIX}, then "
                       "register it again; nothing was written", None, total, rejected)
    if kept.height == 0 or no_run:
        first = _typical(rejects)
        lost = (f"the build would keep none of its {total:,} {what}" if kept.height == 0 else
                f"the build would keep {kept.height:,} of its {total:,} {what} and integrate no run from them"
                + (f" ({run_rejects[0].reason})" if run_rejects else ""))
        return Verdict(f"{shown}{_line_of(first)}{_column_of(first)}: {_why(first)}; {lost}; "
                       f"{FIXES.get(first.check_name, DEFAULT_FIX)}, then register it again; nothing was written", None, total, rejected)
    if not rejects:
        return Verdict(None, None, total, 0)
    first = _typical(rejects)
    return Verdict(None, f"warning: {shown}: the build will quarantine {rejected:,} of its {total:,} {what} and load the "
                         f"other {total - rejected:,} (e.g. line {first.source_row}{_column_of(first)}: {_why(first)})",
                   total, rejected)


def _power_log(shown: str, rel: str, source_id: str, kind: str, path: Path, options: Mapping[str, Any], parsed: Parsed) -> Verdict:
    """A sampled log: its samples as the build validates them, then its run as the build integrates it."""
    from pipelines.ingest.energy.runs import runs_from_samples
    from pipelines.ingest.options import run_options
    from schemas.benchmark_runs import BenchmarkRuns
    from schemas.power_samples import PowerSamples

    kept, rejects = checked_rows(SAMPLES_TABLE, PowerSamples, stamped(parsed, source_id, rel), file=path)
    if kept.height == 0:
        return _counted(shown, kept, rejects, "samples", runs=None, run_rejects=[])
    runs = runs_from_samples(kept, run_options(path, options), log_format=kind)
    runs = runs.with_columns(pl.lit(source_id).alias("source_id"), pl.lit(rel).alias("source_file"))
    valid_runs, run_rejects = checked_rows(RUNS_TABLE, BenchmarkRuns, Parsed(runs), file=path) if runs.height else (runs, [])
    return _counted(shown, kept, rejects, "samples", runs=valid_runs, run_rejects=run_rejects)


def _run_file(shown: str, rel: str, source_id: str, path: Path, parsed: Parsed) -> Verdict:
    """A per-run power file: its runs as the build validates them."""
    from schemas.benchmark_runs import BenchmarkRuns

    kept, rejects = checked_rows(RUNS_TABLE, BenchmarkRuns, stamped(parsed, source_id, rel), file=path)
    return _counted(shown, kept, rejects, "runs", runs=None, run_rejects=[])


def _reference_rejects(frame: pl.DataFrame) -> list[Reject]:
    """A reject per factor_ref or range_ref that does not parse (the build rejects it the same way)."""
    from pipelines.ingest.scenarios import parse_ref

    out = []
    for row in frame.select("source_row", "factor_ref", "range_ref").iter_rows(named=True):
        for column in ("factor_ref", "range_ref"):
            if row[column]:
                try:
                    parse_ref(row[column])
                except ValueError as exc:
                    out.append(Reject(row["source_row"], column, column, row[column], f"{column}: {exc}"))
    return out


def _scenario(shown: str, entry: SourceEntry, parsed: Parsed) -> Verdict:
    """A scenario file: every row the build would reject, found without the warehouse, refuses it."""
    from pipelines.ingest.scenarios import out_of_bounds, resolve
    from schemas.scenario_parameters import ScenarioParameters

    frame = parsed.frame
    rejects = list(parsed.rejects) + _reference_rejects(frame)
    own = frame.filter(pl.col("factor_ref").is_null() & pl.col("range_ref").is_null())
    alone = dataclasses.replace(entry, options={k: v for k, v in entry.options.items() if k not in ("extends", "abstract")})
    scenario = str(entry.options.get("scenario_id", entry.id))
    with duckdb.connect() as con:  # rows without a reference read no table
        resolved, unresolved = resolve(con, {scenario: (alone, own)})
    rejects += [reject for _, reject in unresolved]
    bounds: list[str] = []
    if resolved.height:
        model: type[pa.DataFrameModel] = ScenarioParameters
        valid, row_rejects = split_valid(model, conform(model, resolved), file=str(entry.file))
        rejects += row_rejects
        bounds = out_of_bounds(valid)
    parent = entry.options.get("extends")
    keep = f"fix the row, or remove it to inherit {parent}'s value" if parent else "fix the row"
    if rejects:
        first = min(rejects, key=lambda r: r.source_row or 0)
        more = f" ({len(_rows(rejects)) - 1} more row(s) the build would reject)" if len(_rows(rejects)) > 1 else ""
        return Verdict(f"{shown}{_line_of(first)}{_column_of(first)}: {_why(first)}; the build would reject the row{more}; "
                       f"{keep}; nothing was written", None, frame.height, len(_rows(rejects)))
    if bounds:
        more = f" ({len(bounds) - 1} more out of bounds)" if len(bounds) > 1 else ""
        return Verdict(f"{bounds[0]}{more}; {keep}; nothing was written", None, frame.height, len(bounds))
    return Verdict(None, None, frame.height, 0)


def verdict(entry: SourceEntry, parsed: Parsed, *, shown: str) -> Verdict:
    """What the build would make of the rows of ``entry``'s file (``parsed`` by its parser);
    ``shown``: the file as the messages name it. A table without row checks here gets no verdict."""
    if entry.table == SAMPLES_TABLE:
        return _power_log(shown, entry.path, entry.id, entry.kind, entry.file, entry.options, parsed)
    if entry.table == RUNS_TABLE:
        return _run_file(shown, entry.path, entry.id, entry.file, parsed)
    if entry.table == SCENARIO_TABLE:
        return _scenario(shown, entry, parsed)
    return Verdict(None, None, parsed.frame.height, len(_rows(parsed.rejects)))
