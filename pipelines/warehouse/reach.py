"""The registered power logs that reach no mart, each in one line that says why and what to do.

A log's run reaches the marts only as one of a series (``staging.benchmark_series``, read by
``marts.training_energy`` and by every scenario whose ``factor_ref`` names the series): a run
without a ``series_id``, or one the build quarantined, stops in the staging tables. The build
itself succeeds, so a user would never learn it: the marts' check ``every_log_reaches_a_mart``
(a warning, :mod:`pipelines.defs.assets.marts`) and the run summary of ``edge-carbon run``
both name each such log with :func:`unreached_lines`, from ``sql/checks/logs_reaching_no_mart.sql``.
"""

from __future__ import annotations

from collections.abc import Callable

import duckdb
import polars as pl

from pipelines.paths import sql_text
from pipelines.warehouse.queries import read_pl, table_exists

SQL = "checks/logs_reaching_no_mart.sql"
#: The tables the query reads; without any of them (a build that stopped early) there is nothing to say.
READS = ("staging.sources", "staging.benchmark_runs", "marts.training_energy", "quarantine.rejected_rows")
#: A quarantined sample's check, in words.
CHECK_WORDS = {
    "time_step_back": "steps back in time",
    "plausible_power": "is above the plausible power",
    "future_timestamp": "lies in the future",
    "outside_log_span": "lies outside the log's span",
    "parse": "does not read",
}


def _samples(n: int, checks: str | None) -> str:
    """``, and 1 of its samples ... (check)`` for a log's quarantined samples."""
    if not n:
        return ""
    words = "; ".join(CHECK_WORDS.get(check, check) for check in (checks or "").split(", ") if check)
    return f"; {n:,} of its samples {'was' if n == 1 else 'were'} quarantined ({words})"


def line(row: dict) -> str:
    """The line for one row of the query: the log, its file, why it reaches no mart, and the fix."""
    where = f"sources/{row['manifest_file']}"
    if row["n_runs"] == 0:
        why = f"its run was quarantined ({row['run_reason']})" if row["run_reason"] else "it has no run in staging.benchmark_runs"
        fix = f"fix the log and run `edge-carbon register --refresh {row['source_id']}`"
    elif row["n_in_series"] == 0:
        why = "its run has no series_id, and the marts read runs only as series"
        fix = f'add series_id = "NAME" under its [source.options] in {where}'
    else:
        why = "its series is not in marts.training_energy"
        fix = "build the marts again (edge-carbon run)"
    return (f"log {row['source_id']} (sources/{row['path']}) reached no mart: {why}"
            f"{_samples(row['n_samples_rejected'], row['sample_checks'])}; {fix}")


def lines_from(frame: pl.DataFrame) -> list[str]:
    """One line per row of the query's result."""
    return [line(row) for row in frame.iter_rows(named=True)]


def unreached(read: Callable[[str], pl.DataFrame], has_table: Callable[[str], bool]) -> list[str]:
    """The lines, reading through ``read`` (a query) where every table the query reads exists."""
    if not all(has_table(table) for table in READS):
        return []
    return lines_from(read(sql_text(SQL)))


def unreached_lines(con: duckdb.DuckDBPyConnection) -> list[str]:
    """The lines for the warehouse open on ``con`` (the published one, for the run summary)."""
    return unreached(lambda sql: read_pl(con, sql), lambda table: table_exists(con, table))
