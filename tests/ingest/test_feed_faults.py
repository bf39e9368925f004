"""Faults of the live feeds, injected by the local replay server, against the real asset.

For each fault: the exact periods stored (none lost, none duplicated), the raw payload kept,
a clear error once retries run out, and the previously published warehouse left intact.
"""

from __future__ import annotations

import datetime as dt
import json
import shutil
import socket
import time
from pathlib import Path

import dagster as dg
import polars as pl
import pytest

from pipelines.defs.assets.grid_feeds import grid_intensity_live
from pipelines.defs.schedules import grid_feeds_hourly, grid_feeds_job, refresh_request
from pipelines.ingest.feeds.electricitymaps import ElectricityMapsApi
from pipelines.ingest.feeds.landing import read_all, spool_dir
from pipelines.ingest.feeds.uk_carbon_intensity import UkCarbonIntensityApi
from pipelines.lib.resources import Warehouse
from tests.ingest.test_feeds import (
    UK_PT24H,
    Answer,
    ReplayServer,
    ephemeral_instance,
    live_rows,
    query,
    run_feed,
    server,
    sha256,
    uk_api,
    utc,
)

__all__ = ["server"]  # the replay-server fixture, shared with tests/ingest/test_feeds.py

PT24H_TEXT = UK_PT24H.read_text(encoding="utf-8")
PT24H = json.loads(PT24H_TEXT)
#: The 48 half-hours of the recorded response, and the 47 with an actual.
PERIODS = [utc(r["from"]) for r in PT24H["data"]]
ACTUAL_PERIODS = [utc(r["from"]) for r in PT24H["data"] if r["intensity"]["actual"] is not None]


@pytest.fixture(scope="module")
def baseline_template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One good run of 2023-03-14, published once per module."""
    published = tmp_path_factory.mktemp("baseline") / "wh.duckdb"
    with ReplayServer() as good:
        good.default = Answer(200, PT24H_TEXT)
        run = run_feed(published, uk=uk_api(good))
    assert run.success, run.failure_message()
    return published


@pytest.fixture
def baseline(baseline_template: Path, tmp_path: Path) -> tuple[Path, str, pl.DataFrame]:
    """A copy of the published baseline (and its landing spool); (path, sha256, live rows)."""
    shutil.copytree(baseline_template.parent, tmp_path / "wh")
    published = tmp_path / "wh" / baseline_template.name
    return published, sha256(published), live_rows(published)


def assert_intact(published: Path, digest: str, rows: pl.DataFrame) -> None:
    """The published file is byte-for-byte the one before the failed run."""
    assert sha256(published) == digest
    assert live_rows(published).equals(rows)


def assert_exact_periods(rows: pl.DataFrame, actual: list[dt.datetime], forecast: list[dt.datetime]) -> None:
    """GB rows are exactly these actual and forecast periods, each once."""
    gb = rows.filter(pl.col("zone") == "GB")
    got_actual = gb.filter(pl.col("signal") == "actual").get_column("period_start").to_list()
    got_forecast = gb.filter(pl.col("signal") == "forecast").get_column("period_start").to_list()
    assert sorted(got_actual) == sorted(actual) and len(set(got_actual)) == len(got_actual)
    assert sorted(got_forecast) == sorted(forecast) and len(set(got_forecast)) == len(got_forecast)


def raw_bodies(published: Path) -> list[str]:
    """Bodies of raw.carbon_intensity_payloads in fetch order."""
    return [body for (body,) in query(published, "select body from raw.carbon_intensity_payloads order by fetched_at, payload_id")]


def test_baseline_stores_every_period(baseline: tuple[Path, str, pl.DataFrame]) -> None:
    _, _, rows = baseline
    assert_exact_periods(rows, ACTUAL_PERIODS, [p for p in PERIODS if p not in ACTUAL_PERIODS])
    assert len(PERIODS) == 48 and len(ACTUAL_PERIODS) == 47


def test_timeout_after_retries_is_a_clear_error(server: ReplayServer, baseline: tuple[Path, str, pl.DataFrame]) -> None:
    published, digest, rows = baseline
    server.default = Answer(200, PT24H_TEXT, delay_s=1.0)
    run = run_feed(published, uk=uk_api(server, read_timeout_s=0.2, retries=1))
    assert not run.success
    message = run.failure_message()
    assert "grid feed uk_carbon_intensity" in message and "timed out" in message
    assert "/intensity/2023-03-14T00:00Z/2023-03-15T00:00Z" in message
    assert len(server.seen) == 2  # the first try and one retry
    assert_intact(published, digest, rows)


def test_500_then_success(server: ReplayServer, tmp_path: Path) -> None:
    server.queue = [Answer(500, '{"error": "internal"}')]
    server.default = Answer(200, PT24H_TEXT)
    run = run_feed(tmp_path / "wh.duckdb", uk=uk_api(server))
    assert run.success, run.failure_message()
    assert len(server.seen) == 2
    rows = live_rows(run.published)
    assert_exact_periods(rows, ACTUAL_PERIODS, [p for p in PERIODS if p not in ACTUAL_PERIODS])
    assert query(run.published, "select status, body = ? from raw.carbon_intensity_payloads", [PT24H_TEXT]) == [(200, True)]


def test_429_honours_retry_after(server: ReplayServer, tmp_path: Path) -> None:
    server.queue = [Answer(429, '{"error": "slow down"}', headers={"Retry-After": "1"})]
    server.default = Answer(200, PT24H_TEXT)
    run = run_feed(tmp_path / "wh.duckdb", uk=uk_api(server))  # backoff_factor 0: any wait is Retry-After's
    assert run.success, run.failure_message()
    assert len(server.seen) == 2
    assert server.seen[1].at - server.seen[0].at >= 0.95
    assert_exact_periods(live_rows(run.published), ACTUAL_PERIODS, [p for p in PERIODS if p not in ACTUAL_PERIODS])
    assert raw_bodies(run.published) == [PT24H_TEXT]


def test_persistent_429_is_a_clear_error(server: ReplayServer, baseline: tuple[Path, str, pl.DataFrame]) -> None:
    published, digest, rows = baseline
    server.default = Answer(429, '{"error": "quota"}', headers={"Retry-After": "0"})
    run = run_feed(published, uk=uk_api(server))
    assert not run.success
    assert "grid feed uk_carbon_intensity" in run.failure_message() and "HTTP 429 after retries" in run.failure_message()
    assert len(server.seen) == 3
    assert_intact(published, digest, rows)
    assert [p.body for p, _ in read_all(spool_dir(published)) if p.status == 429] == ['{"error": "quota"}']


def test_persistent_500_fails_keeps_the_body_and_lands_it_later(server: ReplayServer, baseline: tuple[Path, str, pl.DataFrame]) -> None:
    published, digest, rows = baseline
    server.default = Answer(500, '{"error": "still broken"}')
    run = run_feed(published, uk=uk_api(server))
    assert not run.success
    assert "HTTP 500 after retries" in run.failure_message()
    assert len(server.seen) == 3  # one try + two retries
    assert_intact(published, digest, rows)
    spooled = [p for p, _ in read_all(spool_dir(published)) if p.status == 500]
    assert [p.body for p in spooled] == ['{"error": "still broken"}']
    # the next good run lands it in raw (as an http_error) without failing again
    server.default = Answer(200, PT24H_TEXT)
    assert run_feed(published, uk=uk_api(server)).success
    assert query(published, "select parse_status, body from raw.carbon_intensity_payloads where status = 500") == [
        ("http_error", '{"error": "still broken"}')]
    assert live_rows(published).equals(rows)


def test_truncated_json(server: ReplayServer, baseline: tuple[Path, str, pl.DataFrame]) -> None:
    published, digest, rows = baseline
    truncated = PT24H_TEXT[: len(PT24H_TEXT) // 2]
    server.default = Answer(200, truncated)
    run = run_feed(published, uk=uk_api(server))
    assert not run.success
    assert "not valid JSON" in run.failure_message() and "truncated?" in run.failure_message()
    assert_intact(published, digest, rows)
    assert [p.body for p, _ in read_all(spool_dir(published)) if p.body == truncated] == [truncated]
    server.default = Answer(200, PT24H_TEXT)
    assert run_feed(published, uk=uk_api(server)).success
    assert query(published, "select parse_status from raw.carbon_intensity_payloads where body = ?", [truncated]) == [("unparseable",)]
    assert query(published, "select check_name from quarantine.rejected_rows where table_name = 'staging.grid_intensity_live'") == [("payload_parse",)]
    assert live_rows(published).equals(rows)


def test_data_as_object(server: ReplayServer, baseline: tuple[Path, str, pl.DataFrame]) -> None:
    published, digest, rows = baseline
    body = json.dumps({"data": PT24H["data"][0]})
    server.default = Answer(200, body)
    run = run_feed(published, uk=uk_api(server))
    assert not run.success
    assert 'expected a JSON object with a "data" list (Carbon Intensity API); found dict' in run.failure_message()
    assert_intact(published, digest, rows)
    assert [p.body for p, _ in read_all(spool_dir(published)) if p.body == body] == [body]


def test_missing_actual(server: ReplayServer, tmp_path: Path) -> None:
    data = json.loads(PT24H_TEXT)["data"]
    for record in data[:10]:
        del record["intensity"]["actual"]
    server.default = Answer(200, json.dumps({"data": data}))
    run = run_feed(tmp_path / "wh.duckdb", uk=uk_api(server))
    assert run.success, run.failure_message()
    no_actual = PERIODS[:10] + [p for p in PERIODS if p not in ACTUAL_PERIODS]
    assert_exact_periods(live_rows(run.published), [p for p in ACTUAL_PERIODS if p not in PERIODS[:10]], no_actual)
    assert raw_bodies(run.published) == [json.dumps({"data": data})]


def test_duplicated_and_out_of_order_periods(server: ReplayServer, tmp_path: Path) -> None:
    data = json.loads(PT24H_TEXT)["data"]
    shuffled = data[::-1] + [data[5], data[20]]  # reversed, plus two repeats
    shuffled[0], shuffled[17] = shuffled[17], shuffled[0]
    server.default = Answer(200, json.dumps({"data": shuffled}))
    run = run_feed(tmp_path / "wh.duckdb", uk=uk_api(server))
    assert run.success, run.failure_message()
    assert_exact_periods(live_rows(run.published), ACTUAL_PERIODS, [p for p in PERIODS if p not in ACTUAL_PERIODS])
    assert raw_bodies(run.published) == [json.dumps({"data": shuffled})]
    # the repeats are quarantined (forecast and actual row of each), naming their record numbers
    dupes = query(run.published, "select source_row, check_name from quarantine.rejected_rows order by source_row, reason")
    assert {row for row, _ in dupes} == {49, 50} and {c for _, c in dupes} == {"unique_key"} and len(dupes) == 4


def test_daylight_saving_days(server: ReplayServer, tmp_path: Path) -> None:
    """The clocks change on 2023-03-26 and 2023-10-29 (Europe/London): still 48 UTC half-hours a day."""
    def day(date: str, local_offsets: bool) -> str:
        start = dt.datetime.fromisoformat(f"{date}T00:00+00:00")
        records = []
        for i in range(48):
            begin, end = start + dt.timedelta(minutes=30 * i), start + dt.timedelta(minutes=30 * (i + 1))
            if local_offsets:  # the same instants written in London local time with their offset
                from zoneinfo import ZoneInfo

                london = ZoneInfo("Europe/London")
                text = [t.astimezone(london).isoformat(timespec="minutes") for t in (begin, end)]
            else:
                text = [t.strftime("%Y-%m-%dT%H:%MZ") for t in (begin, end)]
            records.append({"from": text[0], "to": text[1], "intensity": {"forecast": 100 + i, "actual": 90 + i, "index": "low"}})
        return json.dumps({"data": records})

    published = tmp_path / "wh.duckdb"
    server.route = lambda path: Answer(200, day(path.split("/")[2][:10], local_offsets="2023-10" in path))
    for partition in ("2023-03-26", "2023-10-29"):
        run = run_feed(published, uk=uk_api(server), partition=partition)
        assert run.success, run.failure_message()
    rows = live_rows(published).filter(pl.col("signal") == "actual")
    for date in ("2023-03-26", "2023-10-29"):
        start = dt.datetime.fromisoformat(f"{date}T00:00+00:00")
        expected = [start + dt.timedelta(minutes=30 * i) for i in range(48)]
        got = rows.filter(pl.col("period_start").dt.date() == dt.date.fromisoformat(date))
        assert got.get_column("period_start").to_list() == expected
        assert got.get_column("gco2e_per_kwh").to_list() == [90.0 + i for i in range(48)]
        assert (got.get_column("period_end") - got.get_column("period_start")).unique().to_list() == [dt.timedelta(minutes=30)]
    assert raw_bodies(published) == [day("2023-03-26", False), day("2023-10-29", True)]
    assert "+01:00" in raw_bodies(published)[1]  # the autumn payload really carried local offsets


def test_scheduled_run_without_network_fails_clearly_and_keeps_the_warehouse(baseline: tuple[Path, str, pl.DataFrame]) -> None:
    """The grid_feeds job, launched with the schedule's request (yesterday..today), and no network."""
    published, digest, rows = baseline
    defs = dg.Definitions(
        assets=[grid_intensity_live],
        jobs=[grid_feeds_job],
        schedules=[grid_feeds_hourly],
        resources={"warehouse": Warehouse(path=str(published)), "uk_carbon_intensity": uk_api_unreachable(),
                   "electricitymaps": ElectricityMapsApi()},
    )
    request = refresh_request(dt.datetime(2023, 3, 15, 0, 20, tzinfo=dt.UTC))
    started = time.monotonic()
    result = defs.resolve_job_def("grid_feeds").execute_in_process(
        tags=request.tags, instance=ephemeral_instance(), raise_on_error=False)
    assert not result.success
    message = next(e.step_failure_data.error.message for e in result.all_events if e.is_step_failure)
    assert "could not connect after retries (no network?)" in message
    assert "/intensity/2023-03-14T00:00Z/2023-03-16T00:00Z" in message  # one request for yesterday and today
    assert time.monotonic() - started < 20
    assert_intact(published, digest, rows)


def uk_api_unreachable() -> UkCarbonIntensityApi:
    """A client pointed at a port nothing listens on."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return UkCarbonIntensityApi(base_url=f"http://127.0.0.1:{port}", retries=1, backoff_factor=0.0, connect_timeout_s=0.5, read_timeout_s=0.5)
