"""A published warehouse that cannot be opened: saying so, and setting it aside for a rebuild.

``edge-carbon run`` opens the published file read-only before it starts a run
(:func:`damage`); a file that does not open is named in one line with the way out,
``edge-carbon run --rebuild``, which moves the file and its lake aside under a dated name
(:func:`set_aside`, under the publish lock) and builds from an empty warehouse and lake.
"""

from __future__ import annotations

import datetime as dt
import os
from collections.abc import Callable
from pathlib import Path

import duckdb

from pipelines.warehouse import lake
from pipelines.warehouse.verify import clear_repairs
from pipelines.warehouse.database import REBUILD_HINT, publish_lock


def damage(published: Path) -> str | None:
    """Why the published file cannot be opened, in one line; None when it opens (or is absent)."""
    if not published.exists():
        return None
    try:
        with duckdb.connect(str(published), read_only=True) as con:
            con.execute("select count(*) from duckdb_tables()").fetchall()
    except duckdb.Error as exc:
        return f"the published warehouse {published} cannot be opened ({str(exc).splitlines()[0]}); {REBUILD_HINT}"
    return None


def aside_name(path: Path, stamp: str) -> Path:
    """``path`` renamed with ``.aside-<stamp>`` before its suffix (``edge_carbon.aside-<stamp>.duckdb``, ``lake.aside-<stamp>``)."""
    return path.with_name(f"{path.stem}.aside-{stamp}{path.suffix}")


def set_aside(published: Path, holder: str, *, waiting: Callable[[str], object] = lambda _: None,
              now: dt.datetime | None = None) -> list[tuple[Path, Path]]:
    """Move the published file and its lake aside under a dated name (under the publish lock,
    ``waiting`` told if another run holds it), so the next run starts from an empty warehouse;
    returns (from, to) of what moved."""
    stamp = (now or dt.datetime.now(dt.UTC)).strftime("%Y%m%dT%H%M%SZ")
    moved = []
    with publish_lock(published, holder, waiting=waiting):
        for path in (published, lake.lake_root(published)):
            if path.exists():
                target = aside_name(path, stamp)
                os.replace(path, target)
                moved.append((path, target))
        clear_repairs(published)  # the rows it lists were the old catalog's
    return moved
