"""The Parquet lake beside the published warehouse, and the catalog that says which files count.

Tables that grow with the data (every power log's samples) are not stored inside the DuckDB
file. Each partition of such a table is Parquet under the warehouse folder, in a hive layout::

    warehouse/lake/power_samples/source_id=<log>/part-<run id>-<nonce>.parquet

and the warehouse's name for the table (``staging.power_samples``) is a view over the files
that the catalog, ``meta.lake_files`` in the DuckDB file, lists as current. So:

- **Versioned files.** A run never rewrites a file: it writes a new one, named for the run,
  and the catalog row of the partition's previous file gets ``superseded_at``.
- **No glob.** A view names its files one by one (absolute paths, so the published database
  answers from any working directory), from the catalog; a file left by a killed run, which
  no published catalog lists, is never read.
- **Publishing is small.** The catalog and the views are in the DuckDB file, which holds only
  the small tables; a run publishes by replacing that file (pipelines/warehouse/database.py),
  whatever the size of the lake.
- **Retention.** A superseded file is deleted :data:`RETENTION` after it was superseded, so a
  reader that opened the previous snapshot keeps its files for that long; a file no catalog
  lists (a killed run's, or a step's of a run still going) is deleted once it is older than
  :data:`ORPHAN_AFTER`, by a walk of the lake at most every :data:`ORPHAN_SCAN_EVERY`.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import re
import uuid
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

import duckdb
import pandera.polars as pa
import polars as pl

from pipelines.identifiers import checked_identifier
from pipelines.warehouse.queries import query_pl
from schemas.meta import conform, empty_frame

#: The lake's folder, beside the published DuckDB file.
LAKE_FOLDER = "lake"
#: The catalog: one row per Parquet file ever committed and not yet expired.
CATALOG = "meta.lake_files"
#: How long a superseded file is kept for readers of an older snapshot.
RETENTION = dt.timedelta(days=1)
#: A file that no catalog lists is deleted once older than this (a killed run's leftovers; long
#: enough for any run still writing).
ORPHAN_AFTER = dt.timedelta(hours=6)
#: Partition keys and run ids that may name a folder or file: letters, digits, ``_ . -``.
SAFE_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.\-]{0,199}$")

_CATALOG_DDL = f"""
create table if not exists {CATALOG} (
    table_name varchar not null,
    partition_column varchar not null,
    partition_key varchar not null,
    file varchar not null,
    row_count bigint not null,
    size_bytes bigint not null,
    run_id varchar not null,
    written_at timestamptz not null,
    superseded_at timestamptz
)"""


#: The name the rows of a commit are registered under while they are inserted.
_NEW_FILES = "lake_files_committed"


def lake_root(published: Path) -> Path:
    """The lake folder of the warehouse published at ``published``."""
    return published.parent / LAKE_FOLDER


def safe_name(value: str, what: str) -> str:
    """``value`` if it may name a folder or file of the lake, else ValueError naming ``what``."""
    if not SAFE_NAME.match(value) or ".." in value:
        raise ValueError(f"{what} {value!r} cannot name a lake partition: use letters, digits, '_', '.' or '-' (at most 200)")
    return value


@dataclass(frozen=True)
class LakeFile:
    """One Parquet file written for one partition of a lake table (``file`` is relative to the lake)."""

    table_name: str
    partition_column: str
    partition_key: str
    file: str
    row_count: int
    size_bytes: int
    run_id: str

    def as_row(self) -> dict[str, object]:
        return asdict(self)


@dataclass(frozen=True)
class LakeSpec:
    """How a warehouse table lies in the lake: its model, its hive partition column and the
    expression that gives a row's partition key."""

    model: type[pa.DataFrameModel]
    column: str
    key: pl.Expr
    #: Read the files by column name, a column a file lacks as null: for a model that gained
    #: nullable columns after files were written (their older files stay readable beside new ones).
    union_by_name: bool = False


def write_partitions(frame: pl.DataFrame, table: str, spec: LakeSpec, root: Path, run_id: str) -> list[LakeFile]:
    """``frame``'s rows (the model's columns) as one new Parquet file per partition key."""
    out: list[LakeFile] = []
    if frame.height == 0:
        return out
    keyed = conform(spec.model, frame).with_columns(spec.key.alias("_lake_key"))
    for (key,), part in sorted(keyed.partition_by("_lake_key", as_dict=True).items()):
        path = new_file(root, table, spec.column, str(key), run_id)
        part.drop("_lake_key").write_parquet(path, compression="zstd")
        out.append(LakeFile(table, spec.column, str(key), path.relative_to(root).as_posix(), part.height, path.stat().st_size, run_id))
    return out


def read_partitions(con: duckdb.DuckDBPyConnection, table: str, spec: LakeSpec, root: Path, keys: Iterable[str]) -> pl.DataFrame:
    """The current rows of partitions ``keys`` of ``table`` (the model's columns)."""
    ensure_catalog(con)
    files = [str(root / r[0]) for r in con.execute(
        f"select file from {CATALOG} where table_name = $t and superseded_at is null and list_contains($keys, partition_key) "  # noqa: S608
        "order by partition_key, file", {"t": table, "keys": sorted(set(keys))}).fetchall()]
    if not files:
        return empty_frame(spec.model)
    sql = ("select * from read_parquet($files, hive_partitioning = false, union_by_name = true)" if spec.union_by_name
           else "select * from read_parquet($files, hive_partitioning = false)")
    return conform(spec.model, query_pl(con, sql, {"files": files}))


def is_base_table(con: duckdb.DuckDBPyConnection, table: str) -> bool:
    """Whether ``table`` is a table of this database (not a view)."""
    schema, name = checked_identifier(table).split(".")
    return bool(con.execute(
        "select count(*) from duckdb_tables() where database_name = current_database() and schema_name = $s and table_name = $n",
        {"s": schema, "n": name}).fetchall()[0][0])


def adopt(con: duckdb.DuckDBPyConnection, table: str, spec: LakeSpec, root: Path, run_id: str) -> int:
    """A warehouse written before the lake held ``table`` as a table: its rows become lake
    partitions (nothing lost), then the table gives way to the view. Returns the rows moved."""
    if not is_base_table(con, table):
        return 0
    frame = query_pl(con, f"select * from {checked_identifier(table)}")  # noqa: S608 - checked identifier
    files = write_partitions(frame, table, spec, root, run_id)
    con.execute("begin transaction")
    try:
        commit(con, table, files, replaces=[f.partition_key for f in files])
        con.execute(f"drop table {checked_identifier(table)}")
        con.execute("commit")
    except BaseException:
        con.execute("rollback")
        raise
    return frame.height


def compact(con: duckdb.DuckDBPyConnection, table: str, spec: LakeSpec, root: Path, run_id: str, *, before: str) -> list[str]:
    """Every partition of ``table`` with a key below ``before`` that has more than one current
    file (an append-only table: one file per run) rewritten as one file; returns their keys."""
    ensure_catalog(con)
    keys = [r[0] for r in con.execute(
        f"select partition_key from {CATALOG} where table_name = $t and superseded_at is null and partition_key < $before "  # noqa: S608
        "group by partition_key having count(*) > 1 order by 1", {"t": table, "before": before}).fetchall()]
    for key in keys:
        files = write_partitions(read_partitions(con, table, spec, root, [key]), table, spec, root, run_id)
        commit(con, table, files, replaces=[key])
    return keys


def folder_of(table: str) -> str:
    """The lake folder of warehouse table ``schema.name``: its name (``power_samples``)."""
    return checked_identifier(table).split(".")[1]


def new_file(root: Path, table: str, column: str, key: str, run_id: str) -> Path:
    """A fresh file name in the partition's folder (created): ``part-<run id>-<nonce>.parquet``."""
    folder = root / folder_of(table) / f"{safe_name(column, 'partition column')}={safe_name(key, 'partition key')}"
    folder.mkdir(parents=True, exist_ok=True)
    return folder / f"part-{safe_name(run_id, 'run id')}-{uuid.uuid4().hex[:8]}.parquet"


def copy_to_parquet(con: duckdb.DuckDBPyConnection, relation: str, path: Path, root: Path, *, table: str, column: str, key: str,
                    run_id: str) -> LakeFile:
    """Write ``relation`` (a checked table name on ``con``) to ``path`` as Parquet (zstd); its LakeFile."""
    # COPY answers with the number of rows it wrote
    rows = con.execute(f"copy (select * from {checked_identifier(relation)}) to '{_literal(path)}' (format parquet, compression zstd)").fetchall()[0][0]  # noqa: S608
    return LakeFile(table, column, key, path.relative_to(root).as_posix(), int(rows), path.stat().st_size, run_id)


def ensure_catalog(con: duckdb.DuckDBPyConnection) -> None:
    """Create ``meta.lake_files`` if absent."""
    con.execute("create schema if not exists meta")
    con.execute(_CATALOG_DDL)


def commit(con: duckdb.DuckDBPyConnection, table: str, files: Sequence[LakeFile], *, replaces: Iterable[str], retire: Iterable[str] = (),
           now: dt.datetime | None = None) -> None:
    """Record ``files`` as the current files of their partitions (inside the caller's transaction).

    The current files of the partitions ``replaces`` (those rewritten) and ``retire`` (those
    dropped: a log no longer registered) are marked superseded at ``now``.
    """
    ensure_catalog(con)
    stamp = now or dt.datetime.now(dt.UTC)
    gone = sorted({*replaces, *retire})
    if gone:
        con.execute(
            f"update {CATALOG} set superseded_at = $now where table_name = $table and superseded_at is null "  # noqa: S608 - constant
            "and list_contains($keys, partition_key)",
            {"now": stamp, "table": table, "keys": gone},
        )
    if files:  # one statement for the lot: a row-by-row insert takes seconds per 10,000 files
        con.register(_NEW_FILES, pl.DataFrame([item.as_row() for item in files]))
        try:  # by name: LakeFile's fields are the catalog's columns; superseded_at stays null
            con.execute(f"insert into {CATALOG} by name select *, $now as written_at from {_NEW_FILES}", {"now": stamp})  # noqa: S608
        finally:
            con.unregister(_NEW_FILES)


def current_keys(con: duckdb.DuckDBPyConnection, table: str) -> list[str]:
    """The partition keys of ``table`` that have a current file."""
    return sorted(set(_current(con, table, "partition_key")))


def current_files(con: duckdb.DuckDBPyConnection, table: str) -> list[str]:
    """The current files of ``table``, relative to the lake, by partition key and file name."""
    return _current(con, table, "file")


def _current(con: duckdb.DuckDBPyConnection, table: str, column: str) -> list[str]:
    """``column`` (partition_key or file) of every current file of ``table``, by key and file name."""
    ensure_catalog(con)
    chosen = {"partition_key": "partition_key", "file": "file"}[column]
    rows = con.execute(
        f"select {chosen} from {CATALOG} where table_name = $t and superseded_at is null order by partition_key, file",  # noqa: S608
        {"t": table},
    ).fetchall()
    return [r[0] for r in rows]


def _literal(path: Path | str) -> str:
    """A path as the body of a SQL string literal (quotes doubled)."""
    return str(path).replace("'", "''")


def model_columns(con: duckdb.DuckDBPyConnection, model: type[pa.DataFrameModel]) -> list[tuple[str, str]]:
    """(name, DuckDB type) of the model's columns, in table order, as DuckDB stores them."""
    con.register("_model_empty", empty_frame(model).to_arrow())
    try:
        return [tuple(r) for r in con.execute("select column_name, column_type from (describe select * from _model_empty)").fetchall()]
    finally:
        con.unregister("_model_empty")


def refresh_view(con: duckdb.DuckDBPyConnection, table: str, model: type[pa.DataFrameModel], root: Path, *,
                 union_by_name: bool = False) -> int:
    """``create or replace view <table>`` over its current files (absolute paths), or, with none,
    over no rows of the model's columns; returns the number of files. ``union_by_name`` reads
    the files by column name (see :class:`LakeSpec`).

    A view's text cannot take bound parameters: the file names are the catalog's, every part of
    them made by :func:`new_file` from checked names, and the root is quoted.
    """
    files = current_files(con, table)
    ident = checked_identifier(table)
    schema, name = ident.split(".")
    con.execute(f"create schema if not exists {schema}")
    with contextlib.suppress(duckdb.CatalogException):
        con.execute(f"drop table if exists {ident}")
    if files:
        listed = ", ".join(f"'{_literal(root / file)}'" for file in files)
        by_name = ", union_by_name = true" if union_by_name else ""
        body = f"select * from read_parquet([{listed}], hive_partitioning = false{by_name})"  # noqa: S608 - quoted paths
        found = con.execute("select sql from duckdb_views() where database_name = current_database() and schema_name = $s "
                            "and view_name = $n", {"s": schema, "n": name}).fetchall()
        if found and f"read_parquet(list_value({listed})," in found[0][0]:  # already over these files (DuckDB's own text)
            return len(files)
        con.execute(f"create or replace view {ident} as {body}")
    else:
        columns = ", ".join(f'cast(null as {kind}) as "{name}"' for name, kind in model_columns(con, model))
        con.execute(f"create or replace view {ident} as select {columns} where false")
    return len(files)


def sweep(con: duckdb.DuckDBPyConnection, root: Path, now: dt.datetime | None = None, *, orphans: bool = True) -> dict[str, int]:
    """Delete what no reader may still need: files superseded longer than :data:`RETENTION`
    ago (and their catalog rows), and, with ``orphans``, unlisted files older than
    :data:`ORPHAN_AFTER` (a walk of the whole lake: :func:`orphan_scan_due` says when)."""
    ensure_catalog(con)
    stamp = now or dt.datetime.now(dt.UTC)
    expired = [r[0] for r in con.execute(
        f"select file from {CATALOG} where superseded_at < $cut",  # noqa: S608 - constant
        {"cut": stamp - RETENTION},
    ).fetchall()]
    for file in expired:
        with contextlib.suppress(OSError):
            (root / file).unlink()
    con.execute(f"delete from {CATALOG} where superseded_at < $cut", {"cut": stamp - RETENTION})  # noqa: S608 - constant
    if not orphans:
        return {"expired": len(expired), "orphans": 0}
    listed = {r[0] for r in con.execute(f"select file from {CATALOG}").fetchall()}  # noqa: S608 - constant
    found = 0
    cut = (stamp - ORPHAN_AFTER).timestamp()
    if root.is_dir():
        for path in root.rglob("*.parquet"):
            if path.relative_to(root).as_posix() in listed:
                continue
            with contextlib.suppress(OSError):
                if path.stat().st_mtime < cut:
                    path.unlink()
                    found += 1
        for folder in sorted((p for p in root.rglob("*") if p.is_dir()), key=lambda p: len(p.parts), reverse=True):
            with contextlib.suppress(OSError):
                folder.rmdir()  # only empty folders go
    return {"expired": len(expired), "orphans": found}


#: How often the lake is walked for unlisted files (a run in between only deletes expired ones).
ORPHAN_SCAN_EVERY = dt.timedelta(hours=1)
#: The file whose modification time records the last walk.
SCAN_MARK = ".orphan-scan"


def orphan_scan_due(root: Path, now: dt.datetime | None = None) -> bool:
    """Whether the lake was last walked for unlisted files longer than :data:`ORPHAN_SCAN_EVERY`
    ago (or never); if so, the walk is recorded as done now."""
    mark = root / SCAN_MARK
    stamp = (now or dt.datetime.now(dt.UTC)).timestamp()
    try:
        if stamp - mark.stat().st_mtime < ORPHAN_SCAN_EVERY.total_seconds():
            return False
    except OSError:
        pass
    with contextlib.suppress(OSError):
        root.mkdir(parents=True, exist_ok=True)
        mark.touch()
    return True
