"""The summary line of ``make run``: it counts the tables and views the data dictionary page lists
(one number on both), and it tells the shipped sources' known rejections (expected at every build)
from new ones, which come from the user's own sources."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import duckdb
import polars as pl
import pytest

from dashboards import dictionary as dictionary_page
from dashboards.shell import query
from pipelines.run.report import OWN_MANIFEST, SUMMARY_SCHEMAS, rejected_lines, table_lines
from pipelines.warehouse.database import open_readonly
from pipelines.warehouse.dictionary import LISTED_SCHEMAS
from pipelines.warehouse.queries import query_pl

KNOWN = ("expected: the shipped sources' known rejections (each file pinned by its sha256; "
         "its notes in sources/manifest/ say why)")


@pytest.fixture
def con() -> Iterator[duckdb.DuckDBPyConnection]:
    """A small warehouse: a table or view in each listed schema, meta's bookkeeping, two shipped
    sources and one of the user's own, and rejected rows of both."""
    connection = duckdb.connect()
    for schema in ("raw", "staging", "quarantine", "core", "marts", "meta"):
        connection.execute(f"create schema {schema}")
    connection.execute("create table raw.payloads (x int)")
    connection.execute("create table staging.sources as select * from (values "
                       "('boavizta_pcf', 'manifest/pcf.toml'), ('neso', 'manifest/grid.toml'), ('my_log', $own)) "
                       "as t(source_id, manifest_file)", {"own": OWN_MANIFEST})
    connection.execute("create view staging.power_samples as select 1 as power_w")
    connection.execute("create table core.scenarios (x int)")
    connection.execute("create table marts.verdict (x int)")
    connection.execute("create table meta.generations (x int)")
    connection.execute("create table quarantine.rejected_rows (table_name varchar, source_id varchar, check_name varchar, "
                       "source_file varchar, source_row bigint)")
    connection.execute("insert into quarantine.rejected_rows values "
                       "('staging.device_pcf', 'boavizta_pcf', 'in_range', 'pcf/b.csv', 1), "
                       "('staging.device_pcf', 'boavizta_pcf', 'shares_sum', 'pcf/b.csv', 1), "  # one row, two checks
                       "('staging.device_pcf', 'boavizta_pcf', 'shares_sum', 'pcf/b.csv', 2), "
                       "('staging.grid_intensity', 'neso', 'missing_value', 'grid/n.csv', 7)")
    yield connection
    connection.close()


def test_the_count_is_the_data_dictionarys_with_raw_and_without_meta(con: duckdb.DuckDBPyConnection) -> None:
    first = table_lines(con)[0]
    assert first == "6 tables and views (raw 1, staging 2, quarantine 1, core 1, marts 1), as the data dictionary lists them"


def test_the_summary_counts_the_schemas_the_dictionary_page_lists() -> None:
    assert SUMMARY_SCHEMAS == LISTED_SCHEMAS
    assert set(dictionary_page.SCHEMAS) == set(LISTED_SCHEMAS)
    assert "meta" not in LISTED_SCHEMAS and "raw" in LISTED_SCHEMAS


def test_a_clean_build_says_every_rejection_is_expected(con: duckdb.DuckDBPyConnection) -> None:
    assert table_lines(con)[1] == ("rows rejected into quarantine.rejected_rows: staging.device_pcf 2, staging.grid_intensity 1; "
                                   f"all 3 {KNOWN}; none from your own sources")


def test_rejections_from_your_own_sources_are_new(con: duckdb.DuckDBPyConnection) -> None:
    con.execute("insert into quarantine.rejected_rows values "
                "('staging.power_samples', 'my_log', 'time_step_back', 'power/own/l.csv', 1203), "
                "('staging.grid_intensity_live', 'feed_2024', 'missing_value', 'feeds/p.json', 3), "  # a source no manifest lists
                "('staging.power_samples', 'my_log', 'in_range', 'power/own/l.csv', 1204)")
    assert table_lines(con)[1] == (
        "rows rejected into quarantine.rejected_rows: staging.device_pcf 2, staging.grid_intensity 1, "
        "staging.grid_intensity_live 1, staging.power_samples 2; "
        f"3 {KNOWN}; 3 new, from your own sources: feed_2024 1, my_log 2 "
        "(quarantine.rejected_rows has each one's file, line and reason)")


def test_only_new_rejections_say_so() -> None:
    assert rejected_lines([("staging.power_samples", "my_log", False, 4)]) == [
        "rows rejected into quarantine.rejected_rows: staging.power_samples 4; all 4 new, from your own sources: my_log 4 "
        "(quarantine.rejected_rows has each one's file, line and reason)"]


def test_without_staging_sources_the_rows_are_counted_unclassified(con: duckdb.DuckDBPyConnection) -> None:
    con.execute("drop table staging.sources")
    assert table_lines(con)[1] == "rows rejected into quarantine.rejected_rows: staging.device_pcf 2, staging.grid_intensity 1"


def test_nothing_rejected_is_no_line(con: duckdb.DuckDBPyConnection) -> None:
    con.execute("delete from quarantine.rejected_rows")
    assert len(table_lines(con)) == 1
    assert rejected_lines([]) == []


def test_the_built_warehouse_agrees_with_its_dictionary_page(built_warehouse: Path) -> None:
    """On a build of the shipped sources: the summary's count is the Data dictionary page's, and every
    rejected row is a shipped source's (the shipped manifests hold no source of the user's own)."""
    with open_readonly(built_warehouse) as connection:
        lines = table_lines(connection)
        page = dictionary_page.tables_frame(query(connection, "dictionary", {"schemas": dictionary_page.SCHEMAS}))
        rejected = query_pl(connection, "select r.source_id, r.source_file, r.source_row, s.manifest_file "
                                        "from quarantine.rejected_rows as r left join staging.sources as s using (source_id)")
    assert lines[0].startswith(f"{page.height} tables and views (")
    assert page.filter(pl.col("schema_name") == "raw").height >= 1  # the table the summary used to leave out
    own = rejected.filter(pl.col("manifest_file").is_null() | (pl.col("manifest_file") == OWN_MANIFEST))
    shipped = rejected.filter(pl.col("manifest_file") != OWN_MANIFEST).select("source_file", "source_row").unique().height
    assert own.height == 0 and shipped > 0
    assert lines[1].endswith(f"; all {shipped:,} {KNOWN}; none from your own sources")
