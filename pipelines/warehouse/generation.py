"""Which published file a run started from, and the warehouse's generation counter.

When a run copies the published file it records, beside its working copy, the identity of the
file it copied: device, inode, size and modification time (a publish is an ``os.replace``,
which always brings a new inode). Before it replaces the published file it checks, under the
publish lock, that the published file is still that one (:func:`check_base`): a run never
publishes over a state it did not start from. Runs that hold the publish lock from their copy
to their publish (every local run) always pass; the check catches a publisher that held no lock.

Each publish adds a row to ``meta.generations`` (:func:`record_generation`): the base
generation the run copied and the next one, so the published generations form one line.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

import duckdb

from pipelines.errors import StalePublish
from pipelines.paths import sql_text
from pipelines.warehouse.tables import ensure_table
from schemas.generations import Generations

GENERATIONS = "meta.generations"


@dataclass(frozen=True)
class Base:
    """The published file a run copied: its identity (None when there was none) and when."""

    identity: tuple[int, ...] | None
    copied_at: dt.datetime


def base_path(work: Path) -> Path:
    """The record of what ``work`` was copied from, beside it."""
    return work.with_name(work.name + ".base.json")


def identity_of(stat: os.stat_result) -> tuple[int, ...]:
    """A file's identity: (device, inode, size, modification time in ns)."""
    return (stat.st_dev, stat.st_ino, stat.st_size, stat.st_mtime_ns)


def published_identity(published: Path) -> tuple[int, ...] | None:
    """The identity of the published file now, or None when there is none."""
    try:
        return identity_of(published.stat())
    except FileNotFoundError:
        return None


def copy_published(published: Path, target: Path) -> tuple[int, ...] | None:
    """Copy ``published`` to ``target`` from one open file (so the identity is that of the bytes
    copied); returns the identity, or None (and copies nothing) when there is no published file."""
    try:
        source: BinaryIO = open(published, "rb")  # noqa: SIM115 - closed below
    except FileNotFoundError:
        return None
    with source, open(target, "wb") as out:
        found = identity_of(os.fstat(source.fileno()))
        while chunk := source.read(1 << 22):
            out.write(chunk)
    return found


def record_base(work: Path, identity: tuple[int, ...] | None) -> None:
    """Write beside ``work`` the identity of the published file it was copied from (None: none)."""
    payload = {"identity": list(identity) if identity else None, "copied_at": dt.datetime.now(dt.UTC).isoformat()}
    base_path(work).write_text(json.dumps(payload), encoding="utf-8")


def read_base(work: Path) -> Base | None:
    """What ``work`` was copied from, or None when no record is there."""
    try:
        payload = json.loads(base_path(work).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    identity = payload.get("identity")
    return Base(tuple(identity) if identity else None, dt.datetime.fromisoformat(payload["copied_at"]))


def forget_base(work: Path) -> None:
    """Delete the record beside ``work``."""
    with contextlib.suppress(OSError):
        base_path(work).unlink()


def check_base(published: Path, work: Path) -> None:
    """StalePublish unless the published file is still the one ``work`` was copied from."""
    base = read_base(work)
    if base is None:
        raise StalePublish(published, "this run has no record of the file it copied; nothing was published: run it again")
    if base.identity != published_identity(published):
        copied = "an empty warehouse" if base.identity is None else "the file published then"
        raise StalePublish(
            published,
            f"the published warehouse changed while this run worked on its copy (it started from {copied}, "
            f"at {base.copied_at:%Y-%m-%d %H:%M:%S} UTC); nothing was published over the newer state: run it again",
        )


def current_generation(con: duckdb.DuckDBPyConnection) -> int:
    """The generation of the warehouse on ``con`` (0 before its first publish)."""
    ensure_table(con, GENERATIONS, Generations)
    return int(con.execute(sql_text("publish/current_generation.sql")).fetchall()[0][0])


def record_generation(con: duckdb.DuckDBPyConnection, run_id: str) -> int:
    """Number the publish of run ``run_id`` on ``con``: the generation it copied plus one."""
    ensure_table(con, GENERATIONS, Generations)
    found = con.execute(sql_text("publish/next_generation.sql"), {"run_id": run_id, "published_at": dt.datetime.now(dt.UTC)})
    return int(found.fetchall()[0][0])
