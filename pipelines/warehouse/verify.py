"""Before a run publishes: every file the lake's views name is there and readable.

- Every current file of the catalog (``meta.lake_files``) is checked cheaply: it exists and
  has the size the catalog records (one ``stat`` a file, no read).
- Every view the run refreshed is bound (DuckDB finds every file it names), and the files the
  run changed in it are queried once for their row count (their footers), against the
  catalog's. The cost grows with the change, not with the history.

A problem blocks the publish with a :class:`pipelines.errors.LakeFileError` naming the file and
its catalog row, and the row goes on the repair list beside the published file
(:func:`repairs_path`). The next run repairs what is on the list: a registered power log's
partition is ingested again, any other row is dropped with a warning (:func:`drop_rows`).
"""

from __future__ import annotations

import contextlib
import datetime as dt
import json
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

import duckdb

from pipelines.errors import LakeFileError
from pipelines.identifiers import checked_identifier
from pipelines.paths import sql_text
from pipelines.warehouse import lake
from pipelines.warehouse.queries import table_exists


@dataclass(frozen=True)
class BrokenFile:
    """A current catalog row whose file is missing, has another size or cannot be read."""

    table_name: str
    partition_key: str
    file: str
    run_id: str
    reason: str

    def line(self, root: Path) -> str:
        """The file and its catalog row, in one line."""
        return (f"{root / self.file} {self.reason} (catalog row {lake.CATALOG}: table_name={self.table_name}, "
                f"partition_key={self.partition_key}, run_id={self.run_id})")


def _has_catalog(con: duckdb.DuckDBPyConnection) -> bool:
    """Whether the database has a lake catalog (a read-only check: nothing is created)."""
    return table_exists(con, lake.CATALOG)


def current_rows(con: duckdb.DuckDBPyConnection, table: str | None) -> list[tuple]:
    """The catalog's current files of ``table`` (all tables when None), as
    sql/publish/current_lake_files.sql gives them; none when there is no catalog (read-only)."""
    if not _has_catalog(con):
        return []
    return con.execute(sql_text("publish/current_lake_files.sql"), {"table": table}).fetchall()


def totals(con: duckdb.DuckDBPyConnection, table: str) -> tuple[int, int]:
    """(current files, rows in them) of ``table``, as the catalog records them."""
    rows = current_rows(con, table)
    return len(rows), sum(row[4] for row in rows)


def broken_files(con: duckdb.DuckDBPyConnection, root: Path, *, table: str | None = None) -> list[BrokenFile]:
    """The current files of ``table`` (default: every lake table) that are missing or whose
    size is not the catalog's: one ``stat`` a file."""
    broken = []
    for name, key, file, size, _rows_in, run_id, _at in current_rows(con, table):
        try:
            found = (root / file).stat().st_size
        except FileNotFoundError:
            broken.append(BrokenFile(name, key, file, run_id, "is missing"))
            continue
        except OSError as exc:
            broken.append(BrokenFile(name, key, file, run_id, f"cannot be read ({exc.strerror})"))
            continue
        if found != size:
            broken.append(BrokenFile(name, key, file, run_id, f"has {found:,} bytes, the catalog says {size:,}"))
    return broken


def unreadable_files(con: duckdb.DuckDBPyConnection, root: Path, rows: Sequence[tuple]) -> list[BrokenFile]:
    """Of the catalog ``rows`` (:func:`changed_files`), the files whose Parquet footer cannot be
    read or whose row count is not the catalog's (each footer read once)."""
    broken = []
    for name, key, file, _size, count, run_id, _at in rows:
        try:
            found = con.execute(sql_text("publish/files_row_count.sql"), {"files": [str(root / file)]}).fetchall()[0][0]
        except duckdb.Error as exc:
            broken.append(BrokenFile(name, key, file, run_id, f"cannot be read ({str(exc).splitlines()[0]})"))
            continue
        if found != count:
            broken.append(BrokenFile(name, key, file, run_id, f"has {found:,} rows, the catalog says {count:,}"))
    return broken


def changed_files(con: duckdb.DuckDBPyConnection, run_id: str, since: dt.datetime | None = None) -> list[tuple]:
    """The current catalog rows a run wrote (``run_id``) or committed since ``since``."""
    if not _has_catalog(con):
        return []
    return con.execute(sql_text("publish/changed_lake_files.sql"), {"run_id": run_id, "since": since}).fetchall()


def view_problems(con: duckdb.DuckDBPyConnection, root: Path, table: str, changed: Sequence[tuple]) -> list[BrokenFile]:
    """The view ``table`` bound (every file it names there), and queried once for the row count
    of the files that changed (``changed``: catalog rows, :func:`changed_files`), against the
    catalog; when either fails or disagrees, the files to blame, else nothing. The cost grows
    with the files changed, not with those the view names."""
    files = [str(root / row[2]) for row in changed]
    expected = sum(row[4] for row in changed)
    try:
        con.execute(sql_text("publish/view_binds.sql"), {"table": checked_identifier(table)}).fetchall()
        found = con.execute(sql_text("publish/files_row_count.sql"), {"files": files}).fetchall()[0][0] if files else 0
    except duckdb.Error:
        found = None
    if found == expected:
        return []
    return broken_files(con, root, table=table) or unreadable_files(con, root, changed) or [
        BrokenFile(table, "*", lake.folder_of(table), "*", f"gives {found} rows in the files changed, the catalog says {expected:,}")]


def changed_tables(con: duckdb.DuckDBPyConnection, run_id: str, since: dt.datetime) -> list[str]:
    """The lake tables whose files a run changed (since it copied the published file)."""
    if not _has_catalog(con):
        return []
    return [r[0] for r in con.execute(sql_text("publish/changed_lake_tables.sql"), {"run_id": run_id, "since": since}).fetchall()]


def problems(con: duckdb.DuckDBPyConnection, root: Path, run_id: str, tables: Iterable[str], since: dt.datetime | None = None, *,
             stat: bool = True) -> list[BrokenFile]:
    """What blocks a publish: every current file stat-checked (unless ``stat`` is False: done
    already); the views of ``tables`` bound and the files the run changed in them counted
    (:func:`view_problems`)."""
    found = broken_files(con, root) if stat else []
    if found:
        return found
    changed = changed_files(con, run_id, since)
    for table in tables:
        found += view_problems(con, root, table, [row for row in changed if row[0] == table])
    return found


def refuse(published: Path, broken: Sequence[BrokenFile]) -> LakeFileError:
    """The error that blocks a publish over ``broken`` (put on the repair list first)."""
    record_repairs(published, broken)
    root = lake.lake_root(published)
    more = f" (and {len(broken) - 1} more)" if len(broken) > 1 else ""
    return LakeFileError(
        published,
        f"not published: {broken[0].line(root)}{more}; the previous warehouse is unchanged, and the next run "
        "ingests such a log again (or drops the row with a warning)",
    )


# --- the repair list ---------------------------------------------------------------------------


def repairs_path(published: Path) -> Path:
    """The list of catalog rows a refused publish found broken, beside the published file."""
    return published.with_name(published.name + ".repairs.json")


def record_repairs(published: Path, broken: Sequence[BrokenFile]) -> None:
    """Add ``broken`` to the repair list of ``published``."""
    known = {(item["table_name"], item["file"]): item for item in due_repairs(published)}
    known.update({(item.table_name, item.file): asdict(item) for item in broken})
    target = repairs_path(published)
    partial = target.with_name(target.name + ".partial")
    partial.write_text(json.dumps(sorted(known.values(), key=lambda i: (i["table_name"], i["file"])), indent=1), encoding="utf-8")
    partial.replace(target)


def due_repairs(published: Path, table: str | None = None) -> list[dict[str, str]]:
    """The rows on the repair list of ``published`` (of ``table``, or all)."""
    try:
        items = json.loads(repairs_path(published).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return []
    return [item for item in items if table is None or item.get("table_name") == table]


def clear_repairs(published: Path) -> None:
    """Empty the repair list (after a publish that verified every file)."""
    with contextlib.suppress(OSError):
        repairs_path(published).unlink()


def drop_rows(con: duckdb.DuckDBPyConnection, broken: Iterable[BrokenFile], now: dt.datetime | None = None) -> list[BrokenFile]:
    """Supersede the catalog rows of ``broken`` (their views stop naming the files); returns them."""
    stamp = now or dt.datetime.now(dt.UTC)
    dropped = list(broken)
    for item in dropped:
        con.execute(sql_text("publish/drop_lake_file.sql"), {"now": stamp, "table": item.table_name, "file": item.file})
    return dropped
