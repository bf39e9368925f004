"""Feed clients and the live-feed asset against a local HTTP server replaying recorded responses.

The server (``ReplayServer``) runs on 127.0.0.1 in a thread; each test scripts its answers
(status, body, headers, delay) per request. Nothing here touches the internet.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import http.server
import json
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import dagster as dg
import duckdb
import polars as pl
import pytest

from pipelines.defs.assets.grid_feeds import grid_intensity_live
from pipelines.defs.schedules import (
    RANGE_END_TAG,
    RANGE_START_TAG,
    grid_feeds_hourly,
    refresh_request,
)
from pipelines.ingest.feeds.electricitymaps import ElectricityMapsApi, RecordedElectricityMaps
from pipelines.ingest.feeds.http import USER_AGENT
from pipelines.ingest.feeds.uk_carbon_intensity import (
    RecordedUkCarbonIntensity,
    UkCarbonIntensityApi,
    day_chunks,
)
from pipelines.lib.resources import Warehouse, feed_resources
from pipelines.paths import SOURCES_DIR

UK_PT24H = SOURCES_DIR / "grid/uk_api_recorded/national_pt24h_2023-03-15T1201Z.json"
UK_FW48H = SOURCES_DIR / "grid/uk_api_recorded/national_fw48h_2023-03-15T1201Z.json"
EM_HISTORY = SOURCES_DIR / "grid/electricitymaps_recorded/carbon-intensity-history_US-MIDW-MISO_2024-11-30.json"


@dataclass
class Answer:
    """One scripted response: status, body, extra headers, and a delay before answering."""

    status: int = 200
    body: str = ""
    headers: dict[str, str] = field(default_factory=dict)
    delay_s: float = 0.0


@dataclass
class Seen:
    """One request the server received."""

    path: str
    headers: dict[str, str]
    at: float


class ReplayServer:
    """A local HTTP server; ``script(path) -> Answer`` decides each answer (queue per test)."""

    def __init__(self) -> None:
        self.queue: list[Answer] = []
        self.default: Answer | None = None
        self.route: Callable[[str], Answer | None] | None = None
        self.seen: list[Seen] = []
        self.required_token: str | None = None
        server = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                server.seen.append(Seen(self.path, {k.lower(): v for k, v in self.headers.items()}, time.monotonic()))
                answer = server.next_answer(self.path, self.headers.get("auth-token"))
                if answer.delay_s:
                    time.sleep(answer.delay_s)
                body = answer.body.encode("utf-8")
                try:
                    self.send_response(answer.status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(body)))
                    for key, value in answer.headers.items():
                        self.send_header(key, value)
                    self.end_headers()
                    self.wfile.write(body)
                except (BrokenPipeError, ConnectionResetError):
                    pass

            def log_message(self, format: str, *args: Any) -> None:
                return

        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        # a short poll interval: shutdown() waits up to one interval, at every test's teardown
        self.thread = threading.Thread(target=self.httpd.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}"

    def next_answer(self, path: str, token: str | None) -> Answer:
        if self.required_token is not None and token != self.required_token:
            return Answer(401, '{"error": "bad token"}')
        if self.route is not None:
            routed = self.route(path)
            if routed is not None:
                return routed
        if self.queue:
            return self.queue.pop(0)
        if self.default is not None:
            return self.default
        return Answer(404, '{"error": "no scripted answer"}')

    def __enter__(self) -> ReplayServer:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture
def server() -> Iterator[ReplayServer]:
    """A fresh replay server per test."""
    with ReplayServer() as srv:
        yield srv


def uk_api(server: ReplayServer, **kwargs: Any) -> UkCarbonIntensityApi:
    """A live UK client pointed at the local server, with short timeouts and no backoff."""
    settings: dict[str, Any] = {"base_url": server.url, "retries": 2, "backoff_factor": 0.0, "connect_timeout_s": 1.0, "read_timeout_s": 0.5}
    settings.update(kwargs)
    return UkCarbonIntensityApi(**settings)


def em_api(server: ReplayServer, zones: list[str] | None = None, **kwargs: Any) -> ElectricityMapsApi:
    """A live Electricity Maps client pointed at the local server."""
    settings: dict[str, Any] = {"base_url": server.url, "zones": zones or [], "retries": 2, "backoff_factor": 0.0,
                                "connect_timeout_s": 1.0, "read_timeout_s": 0.5}
    settings.update(kwargs)
    return ElectricityMapsApi(**settings)


@dataclass
class FeedRun:
    """Outcome of one feed run: the Dagster result, its instance logs and the published file."""

    result: dg.ExecuteInProcessResult
    logs: list[str]
    published: Path

    @property
    def success(self) -> bool:
        return self.result.success

    def failure_message(self) -> str:
        for event in self.result.all_events:
            if event.is_step_failure:
                return event.step_failure_data.error.message  # type: ignore[union-attr]
        return ""


def run_feed(
    published: Path,
    uk: Any = None,
    em: Any = None,
    partition: str | None = "2023-03-14",
    tags: dict[str, str] | None = None,
) -> FeedRun:
    """Materialise staging.grid_intensity_live (and its checks) for one partition or a tagged range."""
    resources = {
        "warehouse": Warehouse(path=str(published)),
        "uk_carbon_intensity": uk if uk is not None else RecordedUkCarbonIntensity(),
        "electricitymaps": em if em is not None else ElectricityMapsApi(zones=[]),
    }
    instance = ephemeral_instance()
    result = dg.materialize(
        [grid_intensity_live],  # its checks run in its step
        partition_key=partition,
        resources=resources,
        instance=instance,
        raise_on_error=False,
        tags=tags,
    )
    records = instance.all_logs(result.run_id)
    logs = [record.user_message for record in records]
    logs += [str(record.dagster_event.event_specific_data) for record in records if record.dagster_event]
    return FeedRun(result, logs, published)


_INSTANCE: list[dg.DagsterInstance] = []


def ephemeral_instance() -> dg.DagsterInstance:
    """One in-memory Dagster instance for the test session (a sqlite one costs ~1.7 s to create)."""
    if not _INSTANCE:
        _INSTANCE.append(dg.DagsterInstance.ephemeral())
    return _INSTANCE[0]


def live_rows(published: Path) -> pl.DataFrame:
    """staging.grid_intensity_live of the published file, in key order."""
    con = duckdb.connect(str(published), read_only=True)
    try:
        con.execute("set TimeZone = 'UTC'")
        table = con.sql("select * from staging.grid_intensity_live order by zone, period_start, signal, emission_scope, source_id").to_arrow_table()
    finally:
        con.close()
    return pl.from_arrow(table)  # type: ignore[return-value]


def query(published: Path, sql: str, params: list[Any] | None = None) -> list[tuple[Any, ...]]:
    """Rows of a query on the published file."""
    con = duckdb.connect(str(published), read_only=True)
    try:
        con.execute("set TimeZone = 'UTC'")
        return con.execute(sql, params or []).fetchall()
    finally:
        con.close()


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def utc(text: str) -> dt.datetime:
    return dt.datetime.fromisoformat(text.replace("Z", "+00:00")).astimezone(dt.UTC)


def recorded_periods(path: Path) -> list[tuple[dt.datetime, Any, Any]]:
    """(period start, forecast, actual) of every record of a recorded UK response."""
    obj = json.loads(path.read_text(encoding="utf-8"))
    return [(utc(r["from"]), r["intensity"]["forecast"], r["intensity"]["actual"]) for r in obj["data"]]


# --- unit: requests, chunking, session ------------------------------------------------------


def test_day_chunks_split_at_14_days() -> None:
    spans = day_chunks(dt.date(2023, 1, 1), dt.date(2023, 2, 1), 14)
    assert [(a.date().isoformat(), b.date().isoformat()) for a, b in spans] == [
        ("2023-01-01", "2023-01-15"), ("2023-01-15", "2023-01-29"), ("2023-01-29", "2023-02-01")]
    assert day_chunks(dt.date(2023, 1, 2), dt.date(2023, 1, 2), 14) == []


def test_uk_requests_national_and_regional() -> None:
    client = UkCarbonIntensityApi(base_url="http://h/", regions=[13])
    got = client.requests_for(dt.date(2023, 3, 14), dt.date(2023, 3, 15))
    assert [(z, u) for z, u, _, _ in got] == [
        ("GB", "http://h/intensity/2023-03-14T00:00Z/2023-03-15T00:00Z"),
        ("GB-R13", "http://h/regional/intensity/2023-03-14T00:00Z/2023-03-15T00:00Z/regionid/13"),
    ]
    with pytest.raises(ValueError, match="max_days_per_request"):
        UkCarbonIntensityApi(max_days_per_request=15).requests_for(dt.date(2023, 1, 1), dt.date(2023, 1, 2))


def test_user_agent_and_backfill_range_split(server: ReplayServer, tmp_path: Path) -> None:
    """A 31-day backfill is one run that sends three requests of at most 14 days."""
    server.default = Answer(200, '{"data": []}')
    run = run_feed(tmp_path / "wh.duckdb", uk=uk_api(server), partition=None,
                   tags={RANGE_START_TAG: "2023-01-01", RANGE_END_TAG: "2023-01-31"})
    assert run.success, run.failure_message()
    assert [s.path for s in server.seen] == [
        "/intensity/2023-01-01T00:00Z/2023-01-15T00:00Z",
        "/intensity/2023-01-15T00:00Z/2023-01-29T00:00Z",
        "/intensity/2023-01-29T00:00Z/2023-02-01T00:00Z",
    ]
    assert {s.headers["user-agent"] for s in server.seen} == {USER_AGENT}
    assert query(run.published, "select count(*), count(distinct payload_id) from raw.carbon_intensity_payloads") == [(3, 3)]


# --- the recorded clients: the shipped snapshot ------------------------------------------------


def test_recorded_clients_land_the_shipped_responses(tmp_path: Path) -> None:
    run = run_feed(tmp_path / "wh.duckdb", uk=RecordedUkCarbonIntensity(), em=RecordedElectricityMaps())
    assert run.success, run.failure_message()
    pt24h, fw48h = recorded_periods(UK_PT24H), recorded_periods(UK_FW48H)
    actual_periods = {p for p, _, a in pt24h if a not in (None, 0)}
    all_periods = {p for p, _, _ in pt24h} | {p for p, _, _ in fw48h}
    rows = live_rows(run.published)
    gb = rows.filter(pl.col("zone") == "GB")
    assert gb.height == len(all_periods) == 144
    assert set(gb.filter(pl.col("signal") == "actual").get_column("period_start").to_list()) == actual_periods
    assert gb.filter(pl.col("signal") == "actual").height == 47
    assert gb.select(pl.struct("period_start").is_unique().all()).item()
    miso = rows.filter(pl.col("zone") == "US-MIDW-MISO")
    assert miso.height == 24 and set(miso.get_column("emission_scope").to_list()) == {"lifecycle"}
    bodies = query(run.published, "select source, body from raw.carbon_intensity_payloads order by source, url")
    assert [b for _, b in bodies] == [EM_HISTORY.read_text(encoding="utf-8"), UK_FW48H.read_text(encoding="utf-8"),
                                      UK_PT24H.read_text(encoding="utf-8")]


def test_feed_resources_modes() -> None:
    assert isinstance(feed_resources("recorded")["uk_carbon_intensity"], RecordedUkCarbonIntensity)
    assert isinstance(feed_resources("live")["uk_carbon_intensity"], UkCarbonIntensityApi)
    with pytest.raises(ValueError, match="live' or 'recorded"):
        feed_resources("carrier-pigeon")


# --- idempotence, upsert rules ------------------------------------------------------------------


def test_same_partition_twice_leaves_identical_rows(server: ReplayServer, tmp_path: Path) -> None:
    server.default = Answer(200, UK_PT24H.read_text(encoding="utf-8"))
    published = tmp_path / "wh.duckdb"
    first = run_feed(published, uk=uk_api(server))
    assert first.success, first.failure_message()
    before = live_rows(published)
    second = run_feed(published, uk=uk_api(server))
    assert second.success, second.failure_message()
    after = live_rows(published)
    assert before.height == 48
    assert after.equals(before)  # same values, same fetched_at, same source_file: byte-identical rows
    assert query(published, "select count(*) from raw.carbon_intensity_payloads") == [(2,)]


def test_later_actual_replaces_forecast_both_stay_in_raw(server: ReplayServer, tmp_path: Path) -> None:
    obj = json.loads(UK_PT24H.read_text(encoding="utf-8"))
    forecast_only = json.dumps({"data": [{**r, "intensity": {**r["intensity"], "actual": None}} for r in obj["data"]]})
    published = tmp_path / "wh.duckdb"
    server.default = Answer(200, forecast_only)
    assert run_feed(published, uk=uk_api(server)).success
    assert live_rows(published).get_column("signal").unique().to_list() == ["forecast"]
    server.default = Answer(200, UK_PT24H.read_text(encoding="utf-8"))
    assert run_feed(published, uk=uk_api(server)).success
    rows = live_rows(published)
    assert rows.height == 48
    assert rows.group_by("signal").len().sort("signal").rows() == [("actual", 47), ("forecast", 1)]
    # the forecast that survives is the last period's, which has no actual yet
    assert rows.filter(pl.col("signal") == "forecast").get_column("period_start").to_list() == [utc("2023-03-15T11:30Z")]
    raw = query(published, "select body from raw.carbon_intensity_payloads order by fetched_at")
    assert [b for (b,) in raw] == [forecast_only, UK_PT24H.read_text(encoding="utf-8")]


def test_a_revised_value_replaces_the_stored_one(server: ReplayServer, tmp_path: Path) -> None:
    obj = json.loads(UK_PT24H.read_text(encoding="utf-8"))
    published = tmp_path / "wh.duckdb"
    server.default = Answer(200, json.dumps(obj))
    assert run_feed(published, uk=uk_api(server)).success
    obj["data"][0]["intensity"]["actual"] = 123
    server.default = Answer(200, json.dumps(obj))
    assert run_feed(published, uk=uk_api(server)).success
    rows = live_rows(published)
    first = rows.filter((pl.col("period_start") == utc("2023-03-14T12:00Z")) & (pl.col("signal") == "actual"))
    assert first.get_column("gco2e_per_kwh").to_list() == [123.0]
    assert rows.height == 48


# --- schedule and freshness ---------------------------------------------------------------------


def test_schedule_refreshes_yesterday_and_today() -> None:
    assert grid_feeds_hourly.default_status == dg.DefaultScheduleStatus.RUNNING
    request = refresh_request(dt.datetime(2026, 3, 29, 0, 20, tzinfo=dt.UTC))
    assert request.tags[RANGE_START_TAG] == "2026-03-28" and request.tags[RANGE_END_TAG] == "2026-03-29"
    context = dg.build_schedule_context(scheduled_execution_time=dt.datetime(2026, 11, 29, 19, 20, tzinfo=dt.UTC),
                                        resources=feed_resources("recorded"))
    evaluated = grid_feeds_hourly.evaluate_tick(context)
    assert [r.tags[RANGE_START_TAG] for r in evaluated.run_requests] == ["2026-11-28"]


def test_freshness_check_warns_on_old_data_and_passes_on_new(server: ReplayServer, tmp_path: Path) -> None:
    old = run_feed(tmp_path / "old.duckdb", uk=RecordedUkCarbonIntensity())
    evaluation = [e for e in old.result.get_asset_check_evaluations() if e.check_name == "grid_intensity_live_fresh"][0]
    assert not evaluation.passed and evaluation.severity == dg.AssetCheckSeverity.WARN
    assert old.success  # a WARN does not fail the run
    now = dt.datetime.now(dt.UTC).replace(minute=0, second=0, microsecond=0)
    fresh = {"data": [{"from": (now - dt.timedelta(minutes=30 * (i + 1))).strftime("%Y-%m-%dT%H:%MZ"),
                       "to": (now - dt.timedelta(minutes=30 * i)).strftime("%Y-%m-%dT%H:%MZ"),
                       "intensity": {"forecast": 100 + i, "actual": 90 + i, "index": "low"}} for i in range(4)]}
    server.default = Answer(200, json.dumps(fresh))
    new = run_feed(tmp_path / "new.duckdb", uk=uk_api(server), partition=now.date().isoformat())
    evaluation = [e for e in new.result.get_asset_check_evaluations() if e.check_name == "grid_intensity_live_fresh"][0]
    assert evaluation.passed


# --- secrets --------------------------------------------------------------------------------------

SENTINEL = "sentinel-token-7f3a9c-do-not-log"


def test_token_never_reaches_logs_metadata_or_warehouse(
    server: ReplayServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capfd: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("ELECTRICITYMAPS_TOKEN", SENTINEL)
    server.required_token = SENTINEL
    history = EM_HISTORY.read_text(encoding="utf-8")
    server.route = lambda path: Answer(200, history) if path.startswith("/v3/carbon-intensity/history") else Answer(500, "{}")
    published = tmp_path / "wh.duckdb"
    ok = run_feed(published, uk=uk_api(server, national=False), em=em_api(server, ["US-MIDW-MISO"]))
    assert ok.success, ok.failure_message()
    assert server.seen and all(s.headers.get("auth-token") == SENTINEL for s in server.seen)  # it was sent
    assert server.seen[0].path == "/v3/carbon-intensity/history?zone=US-MIDW-MISO&emissionFactorType=lifecycle"
    assert live_rows(published).height == 24
    # a failing run too: its error message and logs must not carry the token
    server.route = lambda path: Answer(503, '{"error": "down"}')
    failed = run_feed(published, uk=uk_api(server, national=False), em=em_api(server, ["US-MIDW-MISO"]))
    assert not failed.success and "HTTP 503" in failed.failure_message()
    texts = ok.logs + failed.logs + [failed.failure_message()]
    for run in (ok, failed):
        for event in run.result.all_events:
            texts.append(str(event.event_specific_data))
            texts.append(str(getattr(event, "message", "")))
        texts.append(json.dumps(run.result.dagster_run.run_config, default=str))
        texts.append(json.dumps(run.result.dagster_run.tags, default=str))
        for mat in run.result.get_asset_materialization_events():
            texts.append(str(mat.materialization.metadata))
    captured = capfd.readouterr()
    texts += [captured.out, captured.err]
    assert not [t for t in texts if SENTINEL in t]
    for path in [published, *published.parent.rglob("*")]:
        if path.is_file():
            assert SENTINEL.encode() not in path.read_bytes(), path


def test_missing_token_is_a_clear_error(server: ReplayServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ELECTRICITYMAPS_TOKEN", raising=False)
    run = run_feed(tmp_path / "wh.duckdb", uk=uk_api(server, national=False), em=em_api(server, ["DE"]))
    assert not run.success
    assert "set the environment variable ELECTRICITYMAPS_TOKEN" in run.failure_message()
    assert server.seen == []


def test_regional_forecast_and_latest(server: ReplayServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A NESO regional response (records nested one level down) and an Electricity Maps /latest record."""
    regional = {"data": [{"regionid": 13, "dnoregion": "UKPN London", "shortname": "London", "data": [
        {"from": "2023-03-14T00:00Z", "to": "2023-03-14T00:30Z", "intensity": {"forecast": 150, "index": "moderate"}, "generationmix": []},
        {"from": "2023-03-14T00:30Z", "to": "2023-03-14T01:00Z", "intensity": {"forecast": 140, "index": "moderate"}, "generationmix": []},
    ]}]}
    server.route = lambda path: Answer(200, json.dumps(regional)) if "/regionid/13" in path else None
    run = run_feed(tmp_path / "wh.duckdb", uk=uk_api(server, national=False, regions=[13]))
    assert run.success, run.failure_message()
    rows = live_rows(run.published)
    assert rows.select("zone", "zone_name", "signal", "gco2e_per_kwh").rows() == [
        ("GB-R13", "London (NESO region)", "forecast", 150.0), ("GB-R13", "London (NESO region)", "forecast", 140.0)]
    monkeypatch.setenv("ELECTRICITYMAPS_TOKEN", "t")
    record = json.loads(EM_HISTORY.read_text(encoding="utf-8"))["history"][0]
    server.route = lambda path: Answer(200, json.dumps(record))
    payload = em_api(server).latest("US-MIDW-MISO")
    assert payload.url.endswith("/v3/carbon-intensity/latest?zone=US-MIDW-MISO&emissionFactorType=lifecycle")
    from pipelines.ingest.feeds.live import parse_payload

    frame, rejects = parse_payload(payload)
    assert frame.select("zone", "gco2e_per_kwh", "emission_scope").rows() == [("US-MIDW-MISO", 501.0, "lifecycle")] and rejects == []
