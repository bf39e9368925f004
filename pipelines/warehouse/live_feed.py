"""The live grid feeds in the warehouse: their lake views and quarantine table, and a batch of
landed payloads written to the lake and the run's working copy in one transaction (the live
rows of each day upserted by sql/feeds/upsert_live.sql)."""

import datetime as dt
from logging import Logger
from pathlib import Path

import duckdb
import polars as pl

from pipelines.ingest.feeds.live import LIVE_TABLE, RAW_TABLE
from pipelines.paths import sql_text
from pipelines.warehouse import lake
from pipelines.warehouse.database import LAKE_TABLES, lake_views
from pipelines.warehouse.queries import query_pl
from pipelines.warehouse.tables import ensure_table, load_frame, write_table
from schemas.grid_intensity import GridIntensity
from schemas.meta import conform
from schemas.quarantine import RejectedRows


def ensure_tables(con: duckdb.DuckDBPyConnection, published: Path, log: Logger | None = None) -> None:
    """raw.carbon_intensity_payloads and staging.grid_intensity_live as views over their lake
    files (empty with none), and the quarantine table; ``log`` hears of a lake row dropped for
    repair (:func:`pipelines.warehouse.database.lake_views`)."""
    ensure_table(con, "quarantine.rejected_rows", RejectedRows)
    lake_views(con, published, log=log)


def sql_statements(relative: str) -> list[str]:
    """The statements of a multi-statement ``.sql`` file (split on ``;``, comment lines dropped)."""
    out = []
    for chunk in sql_text(relative).split(";"):
        body = "\n".join(line for line in chunk.splitlines() if not line.strip().startswith("--")).strip()
        if body:
            out.append(body)
    return out


def upsert_days(current: pl.DataFrame, incoming: pl.DataFrame) -> pl.DataFrame:
    """The rows of the days ``incoming`` touches after the upsert (sql/feeds/upsert_live.sql),
    run on a scratch connection over ``current``, those days' stored rows: every key of the
    upsert (zone, period, signal...) lies within one UTC day, so a day is upserted alone."""
    scratch = duckdb.connect()
    try:
        scratch.execute("set TimeZone = 'UTC'")
        scratch.execute("create schema staging")
        write_table(scratch, LIVE_TABLE, current, GridIntensity)
        load_frame(scratch, "temp._incoming", conform(GridIntensity, incoming))
        for statement in sql_statements("feeds/upsert_live.sql"):
            scratch.execute(statement)
        return conform(GridIntensity, query_pl(scratch, f"select * from {LIVE_TABLE}"))  # noqa: S608 - module constant
    finally:
        scratch.close()


def write_feed_batch(con: duckdb.DuckDBPyConnection, published: Path, run_id: str, raw: pl.DataFrame, staged: pl.DataFrame,
                     quarantined: pl.DataFrame) -> dict[str, int]:
    """The batch into the lake and the run's working copy, in one transaction: the raw payloads
    as a new file of each fetch day (append-only; days before today compacted to one file), the
    live rows of each day they touch upserted into a new file of that day (the day's previous
    file superseded), the quarantine rows appended. No file of a day the batch does not touch is
    written, and the DuckDB file holds none of these rows."""
    root = lake.lake_root(published)
    raw_spec, live_spec = LAKE_TABLES[RAW_TABLE], LAKE_TABLES[LIVE_TABLE]
    raw_files = lake.write_partitions(raw, RAW_TABLE, raw_spec, root, run_id)
    days = sorted(set(staged.select(live_spec.key).to_series().to_list())) if staged.height else []
    live_files: list[lake.LakeFile] = []
    if days:
        merged = upsert_days(lake.read_partitions(con, LIVE_TABLE, live_spec, root, days), staged)
        live_files = lake.write_partitions(merged, LIVE_TABLE, live_spec, root, run_id)
    con.execute("begin transaction")
    try:
        lake.commit(con, RAW_TABLE, raw_files, replaces=[])
        lake.commit(con, LIVE_TABLE, live_files, replaces=days)
        if quarantined.height:
            con.register("_rejects", quarantined.to_arrow())
            con.execute("insert into quarantine.rejected_rows by name select * from _rejects")
            con.unregister("_rejects")
        compacted = lake.compact(con, RAW_TABLE, raw_spec, root, run_id, before=dt.datetime.now(dt.UTC).date().isoformat())
        con.execute("commit")
    except BaseException:
        con.execute("rollback")
        raise
    for table, spec in ((RAW_TABLE, raw_spec), (LIVE_TABLE, live_spec)):
        lake.refresh_view(con, table, spec.model, root, union_by_name=spec.union_by_name)
    return {"days_written": len(days), "raw_files": len(raw_files), "raw_days_compacted": len(compacted)}
