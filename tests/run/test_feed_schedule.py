"""The live feed as Dagster runs it: the schedule's reachability probe (skip with a reason
instead of a failed run), the schedule's job rebuilding what reads the live rows (and nothing
else), and the freshness policy evaluated by the daemon whether or not the schedule runs.

Nothing here touches the internet: an unreachable feed is a local port nobody listens on, and
live answers come from the local replay server of tests/ingest/test_feeds.py.
"""

from __future__ import annotations

import datetime as dt
import json
import shutil
import socket
from pathlib import Path

import dagster as dg
import duckdb
import pytest

from pipelines.defs.assets.grid_feeds import FRESHNESS_POLICY
from pipelines.defs.schedules import (
    LIVE_OP,
    RANGE_END_TAG,
    RANGE_START_TAG,
    SKIPPED_FEEDS_TAG,
    grid_feeds_hourly,
    grid_feeds_job,
)
from pipelines.ingest.feeds.electricitymaps import ElectricityMapsApi
from pipelines.ingest.feeds.uk_carbon_intensity import (
    RecordedUkCarbonIntensity,
    UkCarbonIntensityApi,
)
from pipelines.lib.keys import LIVE_KEY
from pipelines.lib.resources import Warehouse, feed_resources
from tests.conftest import with_run_config_for
from tests.ingest.test_feeds import EM_HISTORY, Answer, ReplayServer, em_api, server, uk_api

__all__ = ["server"]  # the replay-server fixture of tests/ingest/test_feeds.py

TICK = dt.datetime(2024, 12, 1, 0, 20, tzinfo=dt.UTC)
TOKEN = "test-token-not-secret"


def unused_port_url() -> str:
    """``http://127.0.0.1:<port>`` for a port nothing listens on (connection refused at once)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return f"http://127.0.0.1:{port}"


def tick(uk: object, em: object) -> dg.ScheduleExecutionData:
    """Evaluate grid_feeds_hourly at TICK with these feed clients."""
    context = dg.build_schedule_context(scheduled_execution_time=TICK,
                                        resources={"uk_carbon_intensity": uk, "electricitymaps": em})
    return grid_feeds_hourly.evaluate_tick(context)


def chosen_feeds(request: dg.RunRequest) -> list[str]:
    return request.run_config["ops"][LIVE_OP]["config"]["feeds"]


# --- the schedule's probe ---------------------------------------------------------------------


def test_unreachable_network_skips_the_tick_naming_feed_and_url(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ELECTRICITYMAPS_TOKEN", TOKEN)
    uk_url, em_url = unused_port_url(), unused_port_url()
    data = tick(UkCarbonIntensityApi(base_url=uk_url, probe_timeout_s=0.5),
                ElectricityMapsApi(base_url=em_url, zones=["DE"], probe_timeout_s=0.5))
    assert data.run_requests == []
    message = data.skip_message or ""
    assert message.startswith("no grid feed can be reached")
    assert f"grid feed uk_carbon_intensity: {uk_url}: unreachable" in message
    assert f"grid feed electricitymaps: {em_url}/v3/carbon-intensity/history: unreachable" in message


def test_unresolvable_host_skips_the_tick() -> None:
    data = tick(UkCarbonIntensityApi(base_url="https://feed.invalid", probe_timeout_s=0.5), ElectricityMapsApi())
    assert data.run_requests == []
    assert "grid feed uk_carbon_intensity: https://feed.invalid: unreachable" in (data.skip_message or "")


def test_recorded_feeds_always_run() -> None:
    data = tick(*feed_resources("recorded").values())
    assert data.skip_message is None
    [request] = data.run_requests
    assert (request.tags[RANGE_START_TAG], request.tags[RANGE_END_TAG]) == ("2024-11-30", "2024-12-01")
    assert chosen_feeds(request) == ["uk_carbon_intensity", "electricitymaps"]
    assert SKIPPED_FEEDS_TAG not in request.tags


def test_missing_token_leaves_out_electricity_maps_only(server: ReplayServer, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ELECTRICITYMAPS_TOKEN", raising=False)
    data = tick(uk_api(server), em_api(server, ["DE"]))
    [request] = data.run_requests
    assert chosen_feeds(request) == ["uk_carbon_intensity"]
    assert request.tags[SKIPPED_FEEDS_TAG] == "electricitymaps"
    assert server.seen == []  # the probe is a TCP connect: no request reaches the API
    # no UK feed either: the reasons name both
    data = tick(UkCarbonIntensityApi(base_url=unused_port_url(), probe_timeout_s=0.5), em_api(server, ["DE"]))
    assert data.run_requests == []
    assert "set the environment variable ELECTRICITYMAPS_TOKEN" in (data.skip_message or "")


def test_token_and_host_reachable_runs_both(server: ReplayServer, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ELECTRICITYMAPS_TOKEN", TOKEN)
    [request] = tick(uk_api(server), em_api(server, ["DE"])).run_requests
    assert chosen_feeds(request) == ["uk_carbon_intensity", "electricitymaps"]
    # Electricity Maps without zones has nothing to fetch: not probed, not reported
    [request] = tick(uk_api(server), ElectricityMapsApi()).run_requests
    assert chosen_feeds(request) == ["uk_carbon_intensity"] and SKIPPED_FEEDS_TAG not in request.tags


def test_a_run_leaves_out_the_feeds_its_config_drops(server: ReplayServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The scheduled run with Electricity Maps left out does not fail on the missing token."""
    from pipelines.defs.assets.grid_feeds import grid_intensity_live

    monkeypatch.delenv("ELECTRICITYMAPS_TOKEN", raising=False)
    server.default = Answer(200, '{"data": []}')
    result = dg.materialize(
        [grid_intensity_live], partition_key="2024-11-30", raise_on_error=False,
        run_config=dg.RunConfig(ops={LIVE_OP: {"config": {"feeds": ["uk_carbon_intensity"]}}}),
        resources={"warehouse": Warehouse(path=str(tmp_path / "wh.duckdb")), "uk_carbon_intensity": uk_api(server),
                   "electricitymaps": em_api(server, ["DE"])},
    )
    assert result.success
    assert [s.path for s in server.seen] == ["/intensity/2024-11-30T00:00Z/2024-12-01T00:00Z"]


# --- the schedule's job: new live rows reach the marts and scenarios ----------------------------


def de_history(value: float) -> str:
    """A 24-hour Electricity Maps history for DE (lifecycle), every hour at ``value``."""
    obj = json.loads(EM_HISTORY.read_text(encoding="utf-8"))
    records = [{**r, "zone": "DE", "carbonIntensity": value, "isEstimated": False} for r in obj["history"]]
    return json.dumps({"zone": "DE", "history": records})


def snapshot(path: Path) -> dict[str, list[tuple]]:
    con = duckdb.connect(str(path), read_only=True)
    try:
        return {
            "windows": con.execute("select window_id, mean_gco2e_per_kwh, source_id from marts.charging_windows order by window_id").fetchall(),
            "param": con.execute("""select value from core.scenario_parameters
                                    where scenario_id = 'charging_window' and parameter = 'edge_grid_gco2e_per_kwh'""").fetchall(),
            "fleet": con.execute("""select scenario_id, device_class, basis, reduction_factor from marts.fleet_equivalence
                                    where scenario_id in ('paper_text', 'charging_window') order by all""").fetchall(),
            "live": con.execute("select zone, count(*) from staging.grid_intensity_live group by zone order by zone").fetchall(),
        }
    finally:
        con.close()


@pytest.mark.slow  # reruns everything downstream of the live feed: the scenarios, the Monte Carlo, the marts, the dashboards
def test_scheduled_run_rebuilds_charging_windows_and_scenarios_only(
    built_warehouse: Path, tmp_path: Path, server: ReplayServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """One scheduled run: the recorded UK responses and a replayed Electricity Maps day for DE land in
    staging.grid_intensity_live, and marts.charging_windows, the charging_window scenario (its
    factor_ref) and the marts on the scenarios are rebuilt in the same run; nothing upstream is."""
    from pipelines.definitions import defs

    shutil.copytree(built_warehouse.parent, tmp_path / "wh", ignore=shutil.ignore_patterns("site", ".runs"))
    published = tmp_path / "wh" / built_warehouse.name
    before = snapshot(published)
    assert before["live"] == []

    monkeypatch.setenv("ELECTRICITYMAPS_TOKEN", TOKEN)
    monkeypatch.setenv("EDGE_CARBON_SITE", str(tmp_path / "site"))
    server.required_token = TOKEN
    server.default = Answer(200, de_history(40.0))
    feeds = {"uk_carbon_intensity": RecordedUkCarbonIntensity(), "electricitymaps": em_api(server, ["DE"])}
    [request] = tick(*feeds.values()).run_requests

    job = defs.resolve_job_def(grid_feeds_job.name)
    result = job.execute_in_process(
        run_config=with_run_config_for(request.run_config, published, job), tags=request.tags, instance=dg.DagsterInstance.ephemeral(),
        resources={"warehouse": Warehouse(path=str(published)), **feeds}, raise_on_error=False,
    )
    assert result.success, [e.step_key for e in result.all_events if e.is_step_failure]

    graph = defs.resolve_asset_graph()
    downstream = dg.AssetSelection.assets(LIVE_KEY).downstream().resolve(graph)
    materialized = {e.asset_key for e in result.get_asset_materialization_events()}
    assert materialized == downstream
    for key in (LIVE_KEY, ["marts", "charging_windows"], ["core", "scenario_parameters"], ["core", "scenarios"],
                ["marts", "fleet_equivalence"], ["marts", "verdict"]):
        assert dg.AssetKey.from_coercible(key) in materialized
    for key in (["staging", "grid_intensity"], ["staging", "sources"], ["staging", "power_samples"], ["staging", "device_pcf"]):
        assert dg.AssetKey(key) not in materialized  # not a full rebuild
    assert len(materialized) < len(graph.get_all_asset_keys())

    after = snapshot(published)
    assert after["live"] == [("DE", 24), ("GB", 144)]
    windows_before = {w: (mean, source) for w, mean, source in before["windows"]}
    windows_after = {w: (mean, source) for w, mean, source in after["windows"]}
    assert windows_after.keys() == windows_before.keys()
    # a clean new day in DE lowers every hour of its profile, so its cleanest window too
    assert windows_after["DE.lifecycle.cleanest"][0] < windows_before["DE.lifecycle.cleanest"][0]
    assert windows_after["GB.direct.all_day"][0] != windows_before["GB.direct.all_day"][0]  # the recorded UK responses
    # the scenario reads the new window through its factor_ref, and R follows
    [(param,)] = after["param"]
    assert param == pytest.approx(windows_after["DE.lifecycle.cleanest"][0], rel=1e-12)
    assert param != before["param"][0][0]
    fleet_before = {row[:3]: row[3] for row in before["fleet"]}
    fleet_after = {row[:3]: row[3] for row in after["fleet"]}
    assert fleet_after.keys() == fleet_before.keys()
    for key, r in fleet_after.items():
        if key[0] == "paper_text":
            assert r == pytest.approx(fleet_before[key], rel=1e-12)
        else:
            assert r > fleet_before[key], key  # a cleaner edge grid: a larger reduction factor


def test_grid_feeds_job_selects_the_live_feed_and_what_reads_it() -> None:
    from pipelines.definitions import defs

    graph = defs.resolve_asset_graph()
    job = defs.resolve_job_def(grid_feeds_job.name)
    keys = set(job.asset_layer.executable_asset_keys)
    assert keys == dg.AssetSelection.assets(LIVE_KEY).downstream().resolve(graph)
    assert dg.AssetKey(["marts", "charging_windows"]) in keys and dg.AssetKey(["staging", "grid_intensity"]) not in keys
    assert job.partitions_def is not None and job.partitions_def.get_partition_keys()[0] == "2023-01-01"


# --- freshness: a FreshnessPolicy the daemon evaluates, schedule or not -------------------------


def test_freshness_policy_is_evaluated_without_the_schedule() -> None:
    """The daemon's freshness evaluation (what ``dagster dev`` runs every 30 s) turns the live asset
    WARN three hours and FAIL a day after its last materialisation; no schedule or run is involved."""
    from dagster._core.remote_origin import InProcessCodeLocationOrigin
    from dagster._core.test_utils import freeze_time
    from dagster._core.types.loadable_target_origin import LoadableTargetOrigin
    from dagster._core.workspace.context import WorkspaceProcessContext
    from dagster._core.workspace.load_target import InProcessWorkspaceLoadTarget
    from dagster._daemon.freshness import FreshnessDaemon

    from pipelines.definitions import defs

    assert defs.resolve_assets_def(LIVE_KEY).specs_by_key[LIVE_KEY].freshness_policy == FRESHNESS_POLICY
    start = dt.datetime(2026, 3, 1, 12, tzinfo=dt.UTC)
    origin = InProcessCodeLocationOrigin(LoadableTargetOrigin(module_name="pipelines.definitions", attribute="defs"))
    with dg.instance_for_test() as instance, WorkspaceProcessContext(instance, InProcessWorkspaceLoadTarget([origin])) as workspace:

        def state_at(hours: float) -> str | None:
            with freeze_time(start + dt.timedelta(hours=hours)):
                list(FreshnessDaemon().run_iteration(workspace))
            record = instance.get_freshness_state_records([LIVE_KEY]).get(LIVE_KEY)
            return record.freshness_state.value if record else None

        assert state_at(0) == "UNKNOWN"  # never materialised
        with freeze_time(start):
            instance.report_runless_asset_event(dg.AssetMaterialization(LIVE_KEY, partition="2026-03-01"))
        assert [state_at(h) for h in (1, 4, 25)] == ["PASS", "WARN", "FAIL"]
