"""Where it trains: zone intensities from the staged series, marts.siting from the one formula,
the zones left out with their reasons, and a live-feed refresh of one zone that re-stamps its
siting rows only."""

from __future__ import annotations

import datetime as dt
import json
import shutil
from pathlib import Path

import dagster as dg
import duckdb
import polars as pl
import pytest

from pipelines.defs.assets.siting import (
    EAGER,
    MIN_HOURLY_COVERAGE,
    SITING,
    SITING_BASIS,
    SITING_SUMMARY,
    ZONE_INTENSITY,
)
from pipelines.model.formula import evaluate, scenario_inputs, substitute
from tests.test_feeds import EM_HISTORY, Answer, ReplayServer, em_api, server

__all__ = ["server"]  # the replay-server fixture of tests/test_feeds.py

TOKEN = "test-token-not-secret"
#: The shipped siting zones' edge window: 23:00-07:00 local time.
NIGHT = (23, 8)


def read(path: Path, sql: str, params: dict | None = None) -> pl.DataFrame:
    con = duckdb.connect(str(path), read_only=True)
    try:
        con.execute("set TimeZone = 'UTC'")
        return pl.from_arrow(con.sql(sql, params=params or {}).to_arrow_table())  # type: ignore[return-value]
    finally:
        con.close()


def hourly_by_hand(path: Path, zone: str, scope: str, time_zone: str, year: int = 2023) -> pl.DataFrame:
    """The zone's hourly series of ``scope`` in ``year`` from staging.grid_intensity, in Python: one
    value per period (an actual before a forecast, then the newest fetch), half-hours averaged to
    UTC hours, with each hour's local hour of day."""
    rows = read(path, "select period_start, period_end, signal, fetched_at, source_id, gco2e_per_kwh from staging.grid_intensity "
                      "where zone = $zone and emission_scope = $scope and resolution in ('PT30M', 'PT1H') "
                      "and signal in ('actual', 'forecast')", {"zone": zone, "scope": scope})
    best = (rows.with_columns((pl.col("signal") == "actual").alias("is_actual"))
            .sort(["period_start", "period_end", "is_actual", "fetched_at", "source_id"], descending=[False, False, True, True, False])
            .unique(["period_start", "period_end"], keep="first"))
    best = best.filter(pl.col("period_start").dt.year() == year)
    seconds = (pl.col("period_end") - pl.col("period_start")).dt.total_seconds()
    hours = (best.group_by(pl.col("period_start").dt.truncate("1h").alias("hour"))
             .agg(((pl.col("gco2e_per_kwh") * seconds).sum() / seconds.sum()).alias("g")))
    return hours.with_columns(pl.col("hour").dt.convert_time_zone(time_zone).dt.hour().alias("local_hour"))


def in_window(hours: pl.DataFrame, start: int, length: int) -> pl.DataFrame:
    return hours.filter((pl.col("local_hour") - start + 24) % 24 < length)


def annual_by_hand(path: Path, zone: str, year: int = 2023) -> float:
    [(value,)] = read(path, "select gco2e_per_kwh from staging.grid_intensity where zone = $zone and signal = 'annual_average' "
                            "and emission_scope = 'lifecycle' and year(period_start) = $year", {"zone": zone, "year": year}).rows()
    return value


def pair(path: Path, scenario: str, cloud: str, edge: str, device: str = "laptop") -> dict:
    [row] = read(path, "select * from marts.siting where scenario_id = $s and cloud_zone = $c and edge_zone = $e and device_class = $d",
                 {"s": scenario, "c": cloud, "e": edge, "d": device}).to_dicts()
    return row


def r_by_formula(path: Path, scenario: str, cloud_ci: float, edge_ci: float, device: str = "laptop") -> tuple[float, float]:
    """R compute only and with the scenario's pattern, from the model's one formula at these two intensities."""
    con = duckdb.connect(str(path), read_only=True)
    try:
        base = scenario_inputs(con).filter(pl.col("scenario_id") == scenario)
        overrides = pl.DataFrame({"scenario_id": [scenario] * 2, "variant_id": ["pair"] * 2,
                                  "parameter": ["cloud_grid_gco2e_per_kwh", "edge_grid_gco2e_per_kwh"], "value": [cloud_ci, edge_ci]})
        rows = evaluate(con, substitute(base, overrides), basis_filter="headline_and_measured")
        pattern = {1: "radio_window", 5: "pipeline"}[int(base.item(0, "comm_pattern"))]
    finally:
        con.close()
    rows = rows.filter((pl.col("device_class") == device) & (pl.col("basis") == SITING_BASIS) & pl.col("is_headline_method"))
    r = rows.filter(pl.col("pattern") == "none").item(0, "reduction_factor")
    return r, rows.filter(pl.col("pattern") == pattern).item(0, "reduction_factor")


# --- coverage ---------------------------------------------------------------------------------


def test_siting_covers_every_country_zone_with_lifecycle_data(built_warehouse: Path) -> None:
    counts = read(built_warehouse, "select scenario_id, count(distinct cloud_zone) as clouds, count(distinct edge_zone) as edges, "
                                   "count(*) as rows from marts.siting group by all order by all")
    by_scenario = {r["scenario_id"]: r for r in counts.to_dicts()}
    for scenario in ("paper_text", "realistic_attributional"):
        assert by_scenario[scenario]["clouds"] >= 150 and by_scenario[scenario]["edges"] >= 150
        assert by_scenario[scenario]["rows"] == by_scenario[scenario]["clouds"] * by_scenario[scenario]["edges"] * 2  # laptop, phone
    countries = set(read(built_warehouse, "select distinct zone from staging.grid_intensity where signal = 'annual_average' and "
                                          "emission_scope = 'lifecycle' and year(period_start) = 2023 and country_iso3 is not null")
                    .get_column("zone").to_list())
    assert 160 <= len(countries) <= 180  # about 170 in 2023
    sited = set(read(built_warehouse, "select distinct cloud_zone from marts.siting where scenario_id = 'paper_text'")
                .get_column("cloud_zone").to_list())
    assert countries <= sited
    assert not {"WORLD", "EU", "G20", "NA_EUROPE", "ASIA"} & sited  # aggregates are not zones


# --- three pairs by hand ----------------------------------------------------------------------


def test_three_pairs_recomputed_by_hand(built_warehouse: Path) -> None:
    """An annual zone, an hourly-shaped one (GB: NESO's direct shape on Ember's life-cycle mean) and
    an hourly one with the night charging window (DE), from staging.grid_intensity in Python."""
    start, length = NIGHT
    # annual: Afghanistan has only Ember's annual mean in 2023
    [(basis,)] = read(built_warehouse, "select intensity_basis from core.zone_intensity where scenario_id = 'paper_text' "
                                       "and zone = 'AF' and side = 'edge'").rows()
    assert basis == "annual"
    af = annual_by_hand(built_warehouse, "AF")
    # hourly-shaped: GB's direct half-hours, night window / whole year, times Ember's life-cycle mean
    gb_hours = hourly_by_hand(built_warehouse, "GB", "direct", "Europe/London")
    assert gb_hours.height >= MIN_HOURLY_COVERAGE * 8760
    gb = annual_by_hand(built_warehouse, "GB") * in_window(gb_hours, start, length).get_column("g").mean() / gb_hours.get_column("g").mean()
    # hourly: DE's life-cycle hours in 23:00-07:00 Berlin time
    de = in_window(hourly_by_hand(built_warehouse, "DE", "lifecycle", "Europe/Berlin"), start, length).get_column("g").mean()

    for scenario, cloud, edge, cloud_ci, edge_ci, bases in (
        ("paper_text", "AF", "GB", af, gb, ("annual", "hourly_shaped")),
        ("realistic_attributional", "GB", "DE", annual_by_hand(built_warehouse, "GB"), de, ("hourly_shaped", "hourly")),
    ):
        row = pair(built_warehouse, scenario, cloud, edge)
        assert (row["cloud_intensity_basis"], row["edge_intensity_basis"]) == bases
        assert row["cloud_gco2e_per_kwh"] == pytest.approx(cloud_ci, abs=1e-9)
        assert row["edge_gco2e_per_kwh"] == pytest.approx(edge_ci, abs=1e-9)
        r, r_comm = r_by_formula(built_warehouse, scenario, cloud_ci, edge_ci)
        assert row["reduction_factor"] == pytest.approx(r, abs=1e-9)
        assert row["reduction_factor_with_comm"] == pytest.approx(r_comm, abs=1e-9)


def test_charging_window_differs_from_the_annual_mean_as_the_data_says(built_warehouse: Path) -> None:
    """For the hourly zones, the edge's night window minus the zone's whole-year mean is what the
    hours say, in sign and size; the cloud, around the clock, meets the whole-year mean."""
    start, length = NIGHT
    for zone, time_zone, sign in (("DE", "Europe/Berlin", 1), ("US-CAL-CISO", "America/Los_Angeles", 1)):
        hours = hourly_by_hand(built_warehouse, zone, "lifecycle", time_zone)
        expected = in_window(hours, start, length).get_column("g").mean() - hours.get_column("g").mean()
        rows = read(built_warehouse, "select side, gco2e_per_kwh, annual_gco2e_per_kwh, intensity_basis from core.zone_intensity "
                                     "where scenario_id = 'realistic_attributional' and zone = $z order by side", {"z": zone}).to_dicts()
        cloud, edge = rows
        assert edge["intensity_basis"] == "hourly"
        assert edge["gco2e_per_kwh"] - edge["annual_gco2e_per_kwh"] == pytest.approx(expected, abs=1e-9)
        assert (expected > 0) == (sign > 0) and abs(expected) > 1  # g/kWh: night is dirtier there
        assert cloud["gco2e_per_kwh"] == pytest.approx(hours.get_column("g").mean(), abs=1e-9)


# --- left out, with a reason ------------------------------------------------------------------


def test_zones_without_data_in_scope_are_left_out_with_the_reason(built_warehouse: Path) -> None:
    excluded = {(r["scenario_id"], r["side"], r["zone"]): (r["reason_code"], r["reason"])
                for r in read(built_warehouse, "select * from core.zone_exclusions").to_dicts()}
    code, reason = excluded[("paper_text", "edge", "US-CA")]  # an Ember US state: scope unspecified
    assert code == "no_data_in_scope" and "no lifecycle data for 2023" in reason and "unspecified" in reason
    assert excluded[("paper_text", "cloud", "WORLD")][0] == "aggregate"
    # the consequential frame: marginal factors only, never the average
    code, reason = excluded[("realistic_consequential", "edge", "DE")]
    assert code == "no_marginal_factor" and "never falls back to the average" in reason
    consequential = read(built_warehouse, "select distinct cloud_zone, edge_zone, cloud_intensity_basis from marts.siting "
                                          "where scenario_id = 'realistic_consequential' order by all")
    assert {z for row in consequential.rows() for z in row[:2]} == {"GB", "US"}
    marginal = read(built_warehouse, "select zone, signal, factor_id from core.zone_intensity where scenario_id = 'realistic_consequential'")
    assert set(marginal.get_column("signal")) == {"marginal"}
    assert set(marginal.get_column("factor_id")) == {"avert_us_2019_srmer", "hawkes2010_gb_srmef"}
    sited = read(built_warehouse, "select distinct scenario_id, cloud_zone from marts.siting").rows()
    assert not {(s, z) for s, z in sited} & {(s, z) for s, side, z in excluded if side == "cloud"}


def test_summary_break_even_lies_on_the_siting_rows(built_warehouse: Path) -> None:
    """The edge zone's break-even cloud intensity: R there, by the model's rows' own line, is 1."""
    row = read(built_warehouse, "select * from marts.siting_summary where scenario_id = 'realistic_attributional' and side = 'edge' "
                                "and zone = 'FR' and device_class = 'laptop' and r_kind = 'compute_only'").to_dicts()[0]
    rows = read(built_warehouse, "select cloud_gco2e_per_kwh as x, reduction_factor as r from marts.siting "
                                 "where scenario_id = 'realistic_attributional' and edge_zone = 'FR' and device_class = 'laptop'")
    predicted = row["r_at_zero_cloud_intensity"] + row["r_per_cloud_gco2e_per_kwh"] * rows.get_column("x")
    assert (predicted - rows.get_column("r")).abs().max() < 1e-9  # R is a line in the cloud's intensity
    assert row["share_r_ge_1"] == pytest.approx((rows.get_column("r") >= 1).mean(), abs=1e-12)
    if row["cloud_gco2e_per_kwh_for_r1"] is not None:
        at = row["r_at_zero_cloud_intensity"] + row["r_per_cloud_gco2e_per_kwh"] * row["cloud_gco2e_per_kwh_for_r1"]
        assert at == pytest.approx(1.0, abs=1e-9)


# --- live data moves it -----------------------------------------------------------------------


def de_day_2023(value: float) -> str:
    """A replayed Electricity Maps history for DE: 24 hours of 2023-06-01 (UTC), every hour at ``value``."""
    obj = json.loads(EM_HISTORY.read_text(encoding="utf-8"))
    first = dt.datetime(2023, 6, 1, tzinfo=dt.UTC)
    records = [{**r, "zone": "DE", "carbonIntensity": value, "isEstimated": False,
                "datetime": (first + dt.timedelta(hours=i)).strftime("%Y-%m-%dT%H:%M:%S.000Z")}
               for i, r in enumerate(obj["history"][:24])]
    return json.dumps({"zone": "DE", "history": records})


def test_siting_assets_refresh_eagerly_with_the_feed() -> None:
    from pipelines.defs.assets.grid_feeds import LIVE_KEY
    from pipelines.defs.definitions import defs
    from pipelines.defs.schedules import grid_feeds_job

    graph = defs.resolve_asset_graph()
    downstream = dg.AssetSelection.assets(LIVE_KEY).downstream().resolve(graph)
    job_keys = set(defs.resolve_job_def(grid_feeds_job.name).asset_layer.executable_asset_keys)
    for table in (ZONE_INTENSITY, SITING, SITING_SUMMARY):
        assert table.key in downstream and table.key in job_keys
        assert defs.resolve_assets_def(table.key).specs_by_key[table.key].automation_condition == EAGER


def test_a_feed_refresh_of_one_zone_restamps_its_siting_rows_only(built_warehouse: Path, tmp_path: Path, server: ReplayServer,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    from pipelines.defs.assets.grid_feeds import LIVE_KEY
    from pipelines.defs.definitions import defs
    from pipelines.defs.resources import Warehouse
    from pipelines.defs.schedules import LIVE_OP, RANGE_END_TAG, RANGE_START_TAG, grid_feeds_job
    from pipelines.ingest.feeds.uk_carbon_intensity import RecordedUkCarbonIntensity

    shutil.copytree(built_warehouse.parent, tmp_path / "wh", ignore=shutil.ignore_patterns("site", ".runs"))
    published = tmp_path / "wh" / built_warehouse.name
    columns = "scenario_id, cloud_zone, edge_zone, device_class, reduction_factor, reduction_factor_with_comm, computed_run_id"
    before = read(published, f"select {columns} from marts.siting order by all")  # noqa: S608 - test constant
    [(fetched_before,)] = read(published, "select distinct fetched_at from core.zone_intensity where zone = 'DE' and side = 'edge'").rows()

    monkeypatch.setenv("ELECTRICITYMAPS_TOKEN", TOKEN)
    server.required_token = TOKEN
    server.default = Answer(200, de_day_2023(40.0))
    job = defs.resolve_job_def(grid_feeds_job.name).get_subset(
        asset_selection={LIVE_KEY, ZONE_INTENSITY.key, SITING.key, SITING_SUMMARY.key})
    result = job.execute_in_process(
        run_config={"ops": {LIVE_OP: {"config": {"feeds": ["electricitymaps"]}}}},
        tags={RANGE_START_TAG: "2023-06-01", RANGE_END_TAG: "2023-06-01"}, instance=dg.DagsterInstance.ephemeral(),
        resources={"warehouse": Warehouse(path=str(published)), "uk_carbon_intensity": RecordedUkCarbonIntensity(),
                   "electricitymaps": em_api(server, ["DE"])}, raise_on_error=False)
    assert result.success, [e.step_key for e in result.all_events if e.is_step_failure]

    after = read(published, f"select {columns} from marts.siting order by all")  # noqa: S608 - test constant
    assert after.height == before.height
    keys = ["scenario_id", "cloud_zone", "edge_zone", "device_class"]
    joined = before.join(after, on=keys, suffix="_after")
    touches_de = (pl.col("cloud_zone") == "DE") | (pl.col("edge_zone") == "DE")
    de, others = joined.filter(touches_de), joined.filter(~touches_de)
    # every row that reads DE (both scenarios on average intensities) was recomputed by this run, with a new R
    zones = before.filter(pl.col("scenario_id") == "paper_text").get_column("cloud_zone").n_unique()
    assert de.height == 2 * 2 * (2 * zones - 1)  # two scenarios on averages, two classes, DE on either side
    assert set(de.get_column("computed_run_id_after")) == {result.run_id}
    assert (de.get_column("reduction_factor") != de.get_column("reduction_factor_after")).all()
    # a cleaner day in DE: the cloud there emits less (R falls), edge devices there emit less (R rises)
    cloud_de = de.filter((pl.col("cloud_zone") == "DE") & (pl.col("edge_zone") != "DE"))
    edge_de = de.filter((pl.col("edge_zone") == "DE") & (pl.col("cloud_zone") != "DE"))
    assert (cloud_de.get_column("reduction_factor_after") < cloud_de.get_column("reduction_factor")).all()
    assert (edge_de.get_column("reduction_factor_after") > edge_de.get_column("reduction_factor")).all()
    # every other row is untouched: the same R, the run that computed it before
    assert others.height == before.height - de.height
    assert (others.get_column("computed_run_id") == others.get_column("computed_run_id_after")).all()
    assert (others.get_column("reduction_factor") == others.get_column("reduction_factor_after")).all()
    assert (others.get_column("reduction_factor_with_comm") == others.get_column("reduction_factor_with_comm_after")).all()
    # and the page's age of DE's hourly intensity moves with the fetch
    [(fetched,)] = read(published, "select distinct fetched_at from core.zone_intensity where zone = 'DE' and side = 'edge'").rows()
    assert fetched > fetched_before


def test_findings_siting_block_is_the_warehouse(built_warehouse: Path) -> None:
    """The siting block of docs/findings.md (deterministic: no draws) rendered again from the test build."""
    from pipelines.paths import PROJECT_ROOT
    from pipelines.warehouse.docs import SITING_BEGIN, SITING_END, between, siting_table

    con = duckdb.connect(str(built_warehouse), read_only=True)
    try:
        table = siting_table(con)
    finally:
        con.close()
    assert "| realistic_consequential | consequential | laptop | 2 x 2 |" in table
    findings = (PROJECT_ROOT / "docs" / "findings.md").read_text(encoding="utf-8")
    assert between(findings, SITING_BEGIN, SITING_END) == table, "docs/findings.md's siting is stale: run `edge-carbon docs`"
