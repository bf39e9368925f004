"""The landing spool: every payload is written to disk the moment it is received.

A run that fails is not published (see pipelines/warehouse/database.py), so the payloads it received
would be lost with its working copy. They are therefore first written here, one JSON file
per payload, beside the published warehouse (``warehouse/landing/grid_feeds/``); the next
run that publishes loads every spooled payload that raw.carbon_intensity_payloads does not
hold yet.

The spool does not grow with every hour ever fetched: a run reads only the files of payloads
the warehouse does not hold yet (their ids are in the file names), and compacts the landed
ones (:func:`compact`): a landed payload fetched more than :data:`KEEP_FILES` ago moves into
one JSON Lines file per UTC day of fetching (``archive/<day>.jsonl``), and an archive day older
than :data:`RETENTION` is deleted (raw.carbon_intensity_payloads keeps every payload). A
payload the warehouse does not hold is never moved or deleted.
"""

from __future__ import annotations

import datetime as dt
import json
import os
from pathlib import Path
from typing import Any

from pipelines.ingest.feeds.http import Payload

SPOOL_DIR = Path("landing") / "grid_feeds"
#: Landed payloads stay one file each for this long after they were fetched.
KEEP_FILES = dt.timedelta(days=1)
#: Compacted days are deleted this long after the day (the raw table keeps every payload).
RETENTION = dt.timedelta(days=30)
ARCHIVE = "archive"


def spool_dir(published: Path) -> Path:
    """The spool folder of a published warehouse file."""
    return published.parent / SPOOL_DIR


def _stamp(value: dt.datetime | None) -> str | None:
    return None if value is None else value.astimezone(dt.UTC).isoformat()


def _instant(value: str | None) -> dt.datetime | None:
    return None if value is None else dt.datetime.fromisoformat(value).astimezone(dt.UTC)


def write(folder: Path, payload: Payload, run_id: str) -> Path:
    """Write ``payload`` atomically as ``<fetched_at>_<payload_id>.json``; return the path."""
    folder.mkdir(parents=True, exist_ok=True)
    name = f"{payload.fetched_at.astimezone(dt.UTC):%Y%m%dT%H%M%S%fZ}_{payload.payload_id}.json"
    path = folder / name
    if path.exists():
        return path
    record: dict[str, Any] = {
        "source": payload.source,
        "zone": payload.zone,
        "url": payload.url,
        "status": payload.status,
        "fetched_at": _stamp(payload.fetched_at),
        "period_from": _stamp(payload.period_from),
        "period_to": _stamp(payload.period_to),
        "body": payload.body,
        "run_id": run_id,
    }
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(record, ensure_ascii=False), encoding="utf-8")
    os.replace(tmp, path)
    return path


def _files(folder: Path) -> dict[str, Path]:
    """payload_id -> its spool file (``<fetched_at>_<payload_id>.json``), without reading any."""
    return {path.stem.split("_", 1)[1]: path for path in sorted(folder.glob("*.json"))} if folder.exists() else {}


def spooled_ids(folder: Path) -> list[str]:
    """The payload ids of the spool's files, from their names."""
    return list(_files(folder))


def read(folder: Path, payload_ids: set[str]) -> list[tuple[Payload, str]]:
    """The spooled payloads among ``payload_ids`` with the runs that received them, oldest first."""
    return [_record(path) for payload_id, path in _files(folder).items() if payload_id in payload_ids]


def read_all(folder: Path) -> list[tuple[Payload, str]]:
    """Every spooled payload with the run that received it, oldest first."""
    return [_record(path) for path in _files(folder).values()]


def compact(folder: Path, landed: set[str], now: dt.datetime) -> dict[str, int]:
    """Move landed payloads fetched before ``now - KEEP_FILES`` into ``archive/<day>.jsonl``
    (one line per payload, appended atomically), then delete archive days older than
    ``now - RETENTION``. ``landed``: ids the published warehouse holds. Returns the counts."""
    cutoff = (now - KEEP_FILES).astimezone(dt.UTC).strftime("%Y%m%dT%H%M%S%fZ")
    by_day: dict[str, list[Path]] = {}
    for payload_id, path in _files(folder).items():
        if payload_id in landed and path.name < cutoff:
            by_day.setdefault(path.name[:8], []).append(path)
    archive = folder / ARCHIVE
    moved = 0
    for day, paths in sorted(by_day.items()):
        archive.mkdir(parents=True, exist_ok=True)
        target = archive / f"{day[:4]}-{day[4:6]}-{day[6:]}.jsonl"
        existing = target.read_text(encoding="utf-8") if target.exists() else ""
        # a run killed between the append and the deletes leaves both: append each payload once
        archived = {json.loads(line)["payload_id"] for line in existing.splitlines() if line}
        lines = [json.dumps({"payload_id": p.stem.split("_", 1)[1], **json.loads(p.read_text(encoding="utf-8"))}, ensure_ascii=False)
                 for p in paths if p.stem.split("_", 1)[1] not in archived]
        tmp = target.with_suffix(".tmp")
        tmp.write_text(existing + "".join(line + "\n" for line in lines), encoding="utf-8")
        os.replace(tmp, target)
        for path in paths:
            path.unlink()
        moved += len(paths)
    oldest = (now - RETENTION).astimezone(dt.UTC).date().isoformat()
    pruned = 0
    for day_file in sorted(archive.glob("*.jsonl")) if archive.exists() else []:
        if day_file.stem < oldest:
            day_file.unlink()
            pruned += 1
    return {"compacted": moved, "days_pruned": pruned}


def _record(path: Path) -> tuple[Payload, str]:
    """One spool file: its payload and the run that received it."""
    record = json.loads(path.read_text(encoding="utf-8"))
    payload = Payload(
        source=record["source"],
        zone=record["zone"],
        url=record["url"],
        status=int(record["status"]),
        fetched_at=_instant(record["fetched_at"]),  # type: ignore[arg-type]
        body=record["body"],
        period_from=_instant(record.get("period_from")),
        period_to=_instant(record.get("period_to")),
    )
    return payload, str(record.get("run_id", ""))
