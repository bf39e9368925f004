"""Figure: committing many lake files to the catalog at once against row by row (the catalog's write path)."""

from __future__ import annotations

import datetime as dt
import statistics
import time
from collections.abc import Sequence
from typing import Any

from bench.fleet_sources import FLEET_SAMPLES, TABLE, log_id
from bench.report import Report

#: Catalog rows committed by figure (d).
CATALOG_FILES = 20_000


def catalog_files(count: int) -> list[Any]:
    """``count`` catalog entries of new files, one per log, as a fleet's ingest writes them."""
    from pipelines.warehouse.lake import LakeFile

    return [LakeFile(TABLE, "source_id", log_id(n), f"power_samples/source_id={log_id(n)}/part-bench-{n:06d}.parquet",
                     FLEET_SAMPLES, 150_000, "bench") for n in range(1, count + 1)]


def commit_row_by_row(con: Any, files: Sequence[Any], now: dt.datetime) -> None:
    """The baseline of figure (d): one ``insert`` statement a catalog row."""
    from pipelines.warehouse import lake

    lake.ensure_catalog(con)
    for item in files:
        con.execute(f"insert into {lake.CATALOG} values ($table_name, $partition_column, $partition_key, $file, "  # noqa: S608
                    "$row_count, $size_bytes, $run_id, $now, null)", {**item.as_row(), "now": now})


def time_commit(files: Sequence[Any], row_by_row: bool) -> float:
    """Seconds to commit ``files`` into a fresh in-memory catalog, one transaction; checks the count."""
    import duckdb

    from pipelines.warehouse import lake

    con = duckdb.connect()
    now = dt.datetime.now(dt.UTC)
    started = time.perf_counter()
    con.execute("begin")
    if row_by_row:
        commit_row_by_row(con, files, now)
    else:
        lake.commit(con, TABLE, files, replaces=[f.partition_key for f in files], now=now)
    con.execute("commit")
    seconds = time.perf_counter() - started
    (count,) = con.execute(f"select count(*) from {lake.CATALOG}").fetchone()  # noqa: S608 - constant
    con.close()
    if count != len(files):
        raise RuntimeError(f"catalog commit: {count:,} rows for {len(files):,} files")
    return seconds


def catalog_commit(report: Report, count: int = CATALOG_FILES, repeats: int = 3) -> None:
    """Figure (d): see the module docstring."""
    files = catalog_files(count)
    batched = statistics.median(time_commit(files, row_by_row=False) for _ in range(repeats))
    baseline = statistics.median(time_commit(files, row_by_row=True) for _ in range(repeats))
    print(f"fleet (d): catalog commit of {count:,} files: {batched:.2f} s in one statement, {baseline:.2f} s one a row "
          f"(medians of {repeats})", flush=True)
    report.add(f"fleet: catalog commit of {count:,} files, one statement / one a row (medians)",
               f"{batched:.2f} s / {baseline:.2f} s ({baseline / batched:.0f}x)")
