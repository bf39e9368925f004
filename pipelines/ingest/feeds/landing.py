"""The landing spool: every payload is written to disk the moment it is received.

A run that fails is not published (see pipelines/warehouse/database.py), so the payloads it received
would be lost with its working copy. They are therefore first written here, one JSON file
per payload, beside the published warehouse (``warehouse/landing/grid_feeds/``); the next
run that publishes loads every spooled payload that raw.carbon_intensity_payloads does not
hold yet. Files are never deleted by the pipeline.
"""

from __future__ import annotations

import datetime as dt
import json
import os
from pathlib import Path
from typing import Any

from pipelines.ingest.feeds.http import Payload

SPOOL_DIR = Path("landing") / "grid_feeds"


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


def read_all(folder: Path) -> list[tuple[Payload, str]]:
    """Every spooled payload with the run that received it, oldest first."""
    out = []
    for path in sorted(folder.glob("*.json")) if folder.exists() else []:
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
        out.append((payload, str(record.get("run_id", ""))))
    return out
