"""The landing spool stays small: a run reads only payloads the warehouse does not hold, and
the landed ones are compacted into one file per day and pruned after the stated retention."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

from pipelines.ingest.feeds import landing
from pipelines.ingest.feeds.http import Payload

NOW = dt.datetime(2026, 11, 30, 12, tzinfo=dt.UTC)


def payload(fetched_at: dt.datetime, body: str) -> Payload:
    return Payload(source="uk_carbon_intensity", zone="GB", url="https://api.example/x", status=200, fetched_at=fetched_at, body=body)


def test_landed_payloads_are_compacted_by_day_and_pruned(tmp_path: Path) -> None:
    spool = tmp_path / "spool"
    old = payload(NOW - dt.timedelta(days=3), '{"a": 1}')
    older_same_day = payload(NOW - dt.timedelta(days=3, hours=1), '{"a": 0}')
    recent = payload(NOW - dt.timedelta(hours=2), '{"b": 2}')
    pending = payload(NOW - dt.timedelta(days=5), '{"c": 3}')
    for p in (old, older_same_day, recent, pending):
        landing.write(spool, p, "run-1")
    landed = {old.payload_id, older_same_day.payload_id, recent.payload_id}

    assert landing.compact(spool, landed, NOW) == {"compacted": 2, "days_pruned": 0}
    # the recent landed one stays a file (KEEP_FILES); the one the warehouse lacks is never touched
    assert sorted(landing.spooled_ids(spool)) == sorted([recent.payload_id, pending.payload_id])
    day = spool / landing.ARCHIVE / f"{(NOW - dt.timedelta(days=3)).date().isoformat()}.jsonl"
    lines = [json.loads(line) for line in day.read_text(encoding="utf-8").splitlines()]
    assert sorted(line["payload_id"] for line in lines) == sorted([old.payload_id, older_same_day.payload_id])
    assert {line["body"] for line in lines} == {'{"a": 1}', '{"a": 0}'}
    # a run reads only what the warehouse lacks
    assert [p.payload_id for p, _ in landing.read(spool, {pending.payload_id})] == [pending.payload_id]

    # a kill between the append and the deletes: the file is back, and is archived once
    landing.write(spool, old, "run-1")
    assert landing.compact(spool, landed, NOW)["compacted"] == 1
    assert len(day.read_text(encoding="utf-8").splitlines()) == 2

    # past the retention the day is deleted (raw.carbon_intensity_payloads keeps every payload)
    later = NOW + landing.RETENTION
    assert landing.compact(spool, landed, later) == {"compacted": 1, "days_pruned": 1}
    assert not day.exists()
    assert landing.spooled_ids(spool) == [pending.payload_id]
