"""The lines ``edge-carbon run`` ends with: on success, what was built and then the verdict and the
next commands, spelled as the user types them; on failure, what failed and its fix, last.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import duckdb

from dashboards.shell import ratio_text
from pipelines.ingest.manifest_writing import LOCAL_MANIFEST
from pipelines.paths import sql_text
from pipelines.run.console import shown
from pipelines.run.fixes import fix_for, primary
from pipelines.warehouse.dictionary import LISTED_SCHEMAS
from pipelines.warehouse.queries import table_exists

#: The schemas the summary counts tables in, in this order: those the data dictionary page lists,
#: so the two give the same number (``meta``, the build's bookkeeping, apart in both).
SUMMARY_SCHEMAS = LISTED_SCHEMAS
#: The manifest of the user's own sources, as staging.sources names it (``manifest_file``).
OWN_MANIFEST = f"manifest/{LOCAL_MANIFEST}"
#: The query the success summary offers first (the whole verdict table).
VERDICT_QUERY = ("select scenario_id, device_class, edge_design, reduction_factor_with_comm, p05_with_comm_all_draws, "
                 "p95_with_comm_all_draws, verdict from marts.verdict where is_answer")
#: The second: what each mart holds (the data dictionary's table comments).
DICTIONARY_QUERY = "select table_name, comment from duckdb_tables() where schema_name = 'marts'"


def _r(value: float | None) -> str:
    """An R value as the README gives it (dashboards.shell.ratio_text)."""
    if value is None:
        return "-"
    return ratio_text(value)


def table_lines(con: duckdb.DuckDBPyConnection) -> list[str]:
    """The tables and views per schema, and the rows quarantined per table with how many of them are
    the shipped sources' known rejections, in two lines (one when nothing was rejected)."""
    tables = [(schema, name) for schema, name, _ in con.execute(sql_text("publish/summary.sql"), {"schemas": list(SUMMARY_SCHEMAS)}).fetchall()]
    per_schema = ", ".join(f"{schema} {n}" for schema in SUMMARY_SCHEMAS if (n := sum(s == schema for s, _ in tables)))
    lines = [f"{len(tables)} tables and views ({per_schema}), as the data dictionary lists them"]
    if not table_exists(con, "quarantine.rejected_rows"):
        return lines
    if not table_exists(con, "staging.sources"):  # a partial build: which source is shipped is not known
        rejected = {t: r for t, r, _ in con.execute(sql_text("publish/rejected_by_table.sql")).fetchall() if r}
        if rejected:
            lines.append("rows rejected into quarantine.rejected_rows: " + ", ".join(f"{t} {n:,}" for t, n in sorted(rejected.items())))
        return lines
    rows = con.execute(sql_text("publish/rejected_by_origin.sql"), {"local_manifest": OWN_MANIFEST}).fetchall()
    return lines + rejected_lines([(table, source, bool(shipped), int(n)) for table, source, shipped, n in rows if n])


def rejected_lines(rows: Sequence[tuple[str, str | None, bool, int]]) -> list[str]:
    """The line of quarantined rows: per staging table, then how many came from the shipped sources
    (their known rejections: each shipped file is pinned by its sha256, so every build rejects the
    same rows of it, and its manifest notes say why) and how many are new, from the user's own
    sources (or sources no manifest lists), per source. ``rows``: (table, source_id, shipped, rows)."""
    if not rows:
        return []
    per_table: dict[str, int] = {}
    for table, _, _, n in rows:
        per_table[table] = per_table.get(table, 0) + n
    expected = sum(n for _, _, shipped, n in rows if shipped)
    new: dict[str, int] = {}
    for _, source, shipped, n in rows:
        if not shipped:
            name = source or "(no source id)"
            new[name] = new.get(name, 0) + n
    line = "rows rejected into quarantine.rejected_rows: " + ", ".join(f"{t} {n:,}" for t, n in sorted(per_table.items()))
    known = "the shipped sources' known rejections (each file pinned by its sha256; its notes in sources/manifest/ say why)"
    if not new:
        return [f"{line}; all {expected:,} expected: {known}; none from your own sources"]
    where = ", ".join(f"{source} {n:,}" for source, n in sorted(new.items()))
    fresh = (f"{sum(new.values()):,} new, from your own sources: {where} "
             "(quarantine.rejected_rows has each one's file, line and reason)")
    return [f"{line}; {expected:,} expected: {known}; {fresh}" if expected else f"{line}; all {fresh}"]


def _times(value: float) -> str:
    """1 / R: how many times the cloud's carbon the devices emit (where R < 1)."""
    return f"{1 / value:.1f}x" if value < 1 else "-"


def verdict_lines(con: duckdb.DuckDBPyConnection) -> list[str]:
    """The answer rows of the realistic scenarios (marts.verdict is_answer: one per scenario and device class, at the
    edge's best admissible design, the worst beside it), one line each (one line saying why not, when the build left
    marts.verdict out: ``--only`` a few tables)."""
    if not table_exists(con, "marts.verdict"):
        return ["Does the claim hold? this build did not include marts.verdict; a full build "
                "(make run, or edge-carbon run without --only) ends with the verdict"]
    cursor = con.execute(sql_text("docs/headline_verdict.sql"))
    names = [d[0] for d in cursor.description]
    rows = [dict(zip(names, row, strict=True)) for row in cursor.fetchall()]
    if not rows:
        return ["Does the claim hold? marts.verdict has no answer row of a realistic scenario in this build."]
    low, high = rows[0]["claim_low"], rows[0]["claim_high"]
    header = ("scenario", "device", "best design", "R", "edge/cloud", "p05-p95, all draws", "worst design: R", "verdict")
    table = [header] + [(r["scenario_id"], r["device_class"], r["edge_design"], _r(r["reduction_factor_with_comm"]),
                         _times(r["reduction_factor_with_comm"]),
                         f"{_r(r['p05_with_comm_all_draws'])}-{_r(r['p95_with_comm_all_draws'])}",
                         f"{r['worst_design']}: {_r(r['worst_reduction_factor_with_comm'])}", r["verdict"]) for r in rows]
    widths = [max(len(row[i]) for row in table) for i in range(len(header))]
    lines = [f"Does the claim hold? R = cloud carbon / edge carbon at the edge's best admissible design; the claim is "
             f"R = {low:g}-{high:g} (R < 1: the devices emit 1/R times the cloud's carbon)"]
    lines += ["  " + "  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip() for row in table]
    return lines


def next_lines(command: str) -> list[str]:
    """The next commands, each as typed from the current directory (``command`` is edge-carbon as
    the user types it); an activation hint when it is a virtual environment's script."""
    lines = ["next, from this folder:", f'  {command} sql "{VERDICT_QUERY}"',
             f'  {command} sql "{DICTIONARY_QUERY}"']
    if command.endswith("bin/edge-carbon"):
        activate = str(Path(command).parent / "activate")
        lines.append(f"  . {activate}    # once per shell; then plain `edge-carbon sql ...` works")
    return lines


def failure_lines(failures: Sequence[str], elapsed: float, log: Path | None, command: str, run: str, home: Path) -> list[str]:
    """What a failed build prints: the outcome and where its log is, what failed (the failures
    the project or a check named, else all), then the fix; the fix is the last line."""
    where = f"Dagster's log: {shown(log)} (--verbose prints it here)" if log else f"run {run} in the Dagster instance at {home}"
    shown_failures = primary(failures)
    lines = [f"build failed after {elapsed:.1f}s; the published warehouse is unchanged; {where}"]
    hidden = len(failures) - len(shown_failures)
    if hidden:
        lines.append(f"({hidden} more step(s) failed for want of their inputs; the log has them)")
    lines += [f"FAILED {failure}" for failure in shown_failures]
    lines.append(fix_for(shown_failures, command, shown(log) if log else None))
    return lines
