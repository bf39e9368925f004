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
    SITING_SUMMARY,
    ZONE_INTENSITY,
)
from pipelines.model.formula import evaluate, model_view, scenario_inputs, substitute
from pipelines.paths import SOURCES_DIR
from pipelines.warehouse.queries import query_pl
from pipelines.warehouse.tables import install_macros
from schemas.vocabulary import COMPUTE_ONLY, PATTERN_ROWS
from tests.ingest.test_feeds import EM_HISTORY, Answer, ReplayServer, em_api, server

__all__ = ["server"]  # the replay-server fixture of tests/ingest/test_feeds.py

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


def monthly_by_hand(path: Path, zone: str, year: int = 2023) -> float:
    """The zone's 12 life-cycle monthly means of ``year``, weighted by each month's hours."""
    rows = read(path, "select period_start, period_end, gco2e_per_kwh from staging.grid_intensity where zone = $zone "
                      "and signal = 'monthly_average' and emission_scope = 'lifecycle' and year(period_start) = $year",
                {"zone": zone, "year": year})
    assert rows.height == 12
    seconds = (rows.get_column("period_end") - rows.get_column("period_start")).dt.total_seconds()
    return float((rows.get_column("gco2e_per_kwh") * seconds).sum() / seconds.sum())


def pair(path: Path, scenario: str, cloud: str, edge: str, device: str = "laptop") -> dict:
    [row] = read(path, "select * from marts.siting where scenario_id = $s and cloud_zone = $c and edge_zone = $e and device_class = $d",
                 {"s": scenario, "c": cloud, "e": edge, "d": device}).to_dicts()
    return row


#: marts.verdict's answer row of a scenario and class (is_answer; in the paper's frame, which has none, the row built
#: the same way): its headline basis, its best design, at the method row that sets the verdict.
ANSWER = ("select basis, edge_design, network_method, embodied_policy, resize_power from marts.verdict "
          "where scenario_id = $s and device_class = $d and is_headline and is_best_design and network_method = verdict_driver_method "
          "and embodied_policy = verdict_driver_policy and resize_power = verdict_driver_resize_power")


def answer_row(path: Path, scenario: str, device: str) -> tuple[str, str, str, str, str]:
    """The basis, edge design and method row (network method, allocation policy, resize power) of marts.verdict's
    answer for the scenario and class."""
    [row] = read(path, ANSWER, {"s": scenario, "d": device}).rows()
    return row


def driver_row(path: Path, scenario: str, device: str) -> tuple[str, str, str]:
    """The method row (network method, allocation policy, resize power) of that answer."""
    return answer_row(path, scenario, device)[2:]


def r_by_formula(path: Path, scenario: str, cloud_ci: float, edge_ci: float, device: str = "laptop") -> tuple[float, float]:
    """R compute only and with the answer's edge design under the answer's method row on its basis, from the
    model's one formula (every basis evaluated, under that row) at these two intensities."""
    basis, design, method, policy, power = answer_row(path, scenario, device)
    con = duckdb.connect(str(path), read_only=True)
    try:
        overrides = pl.DataFrame({"scenario_id": [scenario] * 2, "variant_id": ["pair"] * 2,
                                  "parameter": ["cloud_grid_gco2e_per_kwh", "edge_grid_gco2e_per_kwh"], "value": [cloud_ci, edge_ci]})
        rows = evaluate(con, substitute(con, overrides), all_bases=True, patterns=(COMPUTE_ONLY, design),
                        methods=[(method, policy, power)])
    finally:
        con.close()
    rows = rows.filter((pl.col("device_class") == device) & (pl.col("basis") == basis) & (pl.col("network_method") == method)
                       & (pl.col("embodied_policy") == policy) & (pl.col("resize_power") == power))
    r = rows.filter(pl.col("pattern") == COMPUTE_ONLY).item(0, "reduction_factor")
    return r, rows.filter(pl.col("pattern") == design).item(0, "reduction_factor")


# --- coverage ---------------------------------------------------------------------------------


def test_siting_covers_every_country_zone_with_lifecycle_data(built_warehouse: Path) -> None:
    counts = read(built_warehouse, "select scenario_id, count(distinct cloud_zone) as clouds, count(distinct edge_zone) as edges, "
                                   "count(*) as rows from marts.siting group by all order by all")
    by_scenario = {r["scenario_id"]: r for r in counts.to_dicts()}
    for scenario in ("paper_text", "realistic_attributional"):
        assert by_scenario[scenario]["clouds"] >= 150 and by_scenario[scenario]["edges"] >= 150 + 1  # the zones and the mix
        assert by_scenario[scenario]["rows"] == by_scenario[scenario]["clouds"] * by_scenario[scenario]["edges"] * 2  # laptop, phone
    # every cloud zone against the scenario's own edge mix: one row per class
    mixes = read(built_warehouse, "select scenario_id, count(*) as rows, count(distinct cloud_zone) as clouds, any_value(edge_mix) as mix "
                                  "from marts.siting where edge_zone = 'mix' group by all order by all").to_dicts()
    assert [m["scenario_id"] for m in mixes] == ["paper_text", "realistic_attributional", "realistic_consequential"]
    assert all(m["rows"] == 2 * m["clouds"] == 2 * by_scenario[m["scenario_id"]]["clouds"] for m in mixes)
    assert mixes[0]["mix"] == "US 0.5, DE 0.25, FR 0.25" and mixes[2]["mix"] == "US 1.0"
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
        assert (row["basis"], row["edge_design"], row["network_method"], row["embodied_policy"], row["resize_power"]) == answer_row(
            built_warehouse, scenario, "laptop")
        assert row["edge_mix"] is None
        assert row["cloud_gco2e_per_kwh"] == pytest.approx(cloud_ci, abs=1e-9)
        assert row["edge_gco2e_per_kwh"] == pytest.approx(edge_ci, abs=1e-9)
        r, r_comm = r_by_formula(built_warehouse, scenario, cloud_ci, edge_ci)
        assert row["reduction_factor"] == pytest.approx(r, abs=1e-9)
        assert row["reduction_factor_with_comm"] == pytest.approx(r_comm, abs=1e-9)


def test_the_scenarios_own_edge_mix_recomputed_by_hand(built_warehouse: Path) -> None:
    """The edge mix of sources/scenarios/siting_zones.csv against the scenario's own cloud zone:
    each mix zone's intensity in its night window by hand (DE and FR from their hours in Berlin and
    Paris time, the US from its monthly means), weighted by the file's shares; R from the formula."""
    start, length = NIGHT
    scenario = "realistic_attributional"
    zones = pl.read_csv(SOURCES_DIR / "scenarios" / "siting_zones.csv").filter(pl.col("scenario_id") == scenario)
    shares = dict(zones.filter(pl.col("side") == "edge").select("zone", "share").iter_rows())
    assert shares == {"US": 0.5, "DE": 0.25, "FR": 0.25}
    [cloud] = zones.filter(pl.col("side") == "cloud").get_column("zone").to_list()
    bases = dict(read(built_warehouse, "select zone, intensity_basis from core.zone_intensity where scenario_id = $s and side = 'edge' "
                                       "and zone in ('US', 'DE', 'FR')", {"s": scenario}).iter_rows())
    assert bases == {"US": "monthly", "DE": "hourly", "FR": "hourly"}
    by_hand = {zone: in_window(hourly_by_hand(built_warehouse, zone, "lifecycle", time_zone), start, length).get_column("g").mean()
               for zone, time_zone in (("DE", "Europe/Berlin"), ("FR", "Europe/Paris"))}
    by_hand["US"] = monthly_by_hand(built_warehouse, "US")
    mix_ci = sum(share * by_hand[zone] for zone, share in shares.items())
    cloud_ci = monthly_by_hand(built_warehouse, cloud)
    for device in ("laptop", "phone"):
        row = pair(built_warehouse, scenario, cloud, "mix", device)
        assert row["edge_mix"] == "US 0.5, DE 0.25, FR 0.25"
        assert (row["cloud_intensity_basis"], row["edge_intensity_basis"]) == ("monthly", "monthly")  # the mix: its coarsest zone's
        assert row["edge_gco2e_per_kwh"] == pytest.approx(mix_ci, abs=1e-9)
        assert row["cloud_gco2e_per_kwh"] == pytest.approx(cloud_ci, abs=1e-9)
        r, r_comm = r_by_formula(built_warehouse, scenario, cloud_ci, mix_ci, device)
        assert row["reduction_factor"] == pytest.approx(r, abs=1e-9)
        assert row["reduction_factor_with_comm"] == pytest.approx(r_comm, abs=1e-9)
    # the summary's line of the mix, and the mix at its own share of the scenario's edge
    line = read(built_warehouse, "select * from marts.siting_summary where scenario_id = $s and side = 'edge' and zone = 'mix' "
                                 "and r_kind = 'with_comm' and device_class = 'laptop'", {"s": scenario}).to_dicts()[0]
    assert line["edge_mix"] == "US 0.5, DE 0.25, FR 0.25" and line["scenario_share"] == 1.0
    assert line["zone_gco2e_per_kwh"] == pytest.approx(mix_ci, abs=1e-9)
    at_cloud = line["r_at_zero_cloud_intensity"] + line["r_per_cloud_gco2e_per_kwh"] * cloud_ci
    assert at_cloud == pytest.approx(pair(built_warehouse, scenario, cloud, "mix")["reduction_factor_with_comm"], rel=1e-9)
    # the mix is not an edge zone: the cloud zones' shares of winning edge zones leave it out
    [(n_pairs,)] = read(built_warehouse, "select distinct n_pairs from marts.siting_summary where scenario_id = $s and side = 'cloud'",
                        {"s": scenario}).rows()
    [(edge_zones,)] = read(built_warehouse, "select count(*) from core.zone_intensity where scenario_id = $s and side = 'edge'",
                           {"s": scenario}).rows()
    assert n_pairs == edge_zones


def test_with_communication_reads_the_network_method_of_the_verdict(built_warehouse: Path) -> None:
    """Every siting row's R with communication is under the method row that sets marts.verdict's
    reading for its scenario and class on the answer's basis: the verdict and the map agree."""
    rows = read(built_warehouse, "select distinct s.scenario_id, s.device_class, s.network_method, s.embodied_policy, s.resize_power, "
                                 "v.verdict_driver_method, v.verdict_driver_policy, v.verdict_driver_resize_power "
                                 "from marts.siting as s left join marts.verdict as v on v.scenario_id = s.scenario_id "
                                 "and v.device_class = s.device_class and v.basis = s.basis order by all")
    assert rows.height == 6  # three siting scenarios x two classes, one method row each
    assert rows.select("network_method", "embodied_policy", "resize_power").rows() == rows.select(
        "verdict_driver_method", "verdict_driver_policy", "verdict_driver_resize_power").rows()


def test_the_siting_evaluation_asks_the_model_only_for_the_answers(built_warehouse: Path) -> None:
    """The headline basis only, compute only and the answers' edge designs, the answers' method rows
    only: the rows marts.siting reads are the full evaluation's there, with the same values."""
    answers = read(built_warehouse, "select distinct scenario_id, device_class, basis, edge_design, network_method, embodied_policy, "
                                    "resize_power from marts.siting")
    named = sorted(set(answers.select("network_method", "embodied_policy", "resize_power").rows()))
    designs = sorted(set(answers.get_column("edge_design")))
    con = duckdb.connect(str(built_warehouse), read_only=True)
    try:
        install_macros(con)
        inputs = scenario_inputs(con)
        full = evaluate(con, inputs, all_bases=True, patterns=tuple(PATTERN_ROWS), methods="all")
        with model_view(con, inputs, patterns=(COMPUTE_ONLY, *designs), basis_filter="headline", methods=named):
            narrow = query_pl(con, "select * from model_evaluation")
    finally:
        con.close()
    keys = ["scenario_id", "variant_id", "device_class", "basis", "pattern", "network_method", "embodied_policy", "resize_power"]
    triple = pl.concat_str("network_method", "embodied_policy", "resize_power", separator="/")
    # the headline basis only, the answers' designs and compute only, the answers' method rows
    assert narrow.get_column("is_headline").all()
    assert set(narrow.get_column("pattern")) == {COMPUTE_ONLY, *designs}
    assert set(narrow.select(triple).to_series()) == {"/".join(row) for row in named}
    # the rows marts.siting reads: each scenario and class at its answer's basis, design and method row
    read_rows = narrow.join(answers.rename({"edge_design": "pattern"}),
                            on=["scenario_id", "device_class", "basis", "pattern", "network_method", "embodied_policy", "resize_power"],
                            how="semi")
    assert read_rows.select("scenario_id", "device_class").unique().height == answers.height == 6
    joined = read_rows.join(full, on=keys, how="inner", suffix="_full")
    assert joined.height == read_rows.height
    assert (joined.get_column("reduction_factor") == joined.get_column("reduction_factor_full")).all()
    # compute only depends on the allocation policy alone: each answer's R is the full evaluation's at that policy
    by_policy = full.filter(pl.col("is_headline") & (pl.col("pattern") == COMPUTE_ONLY)).group_by(
        "scenario_id", "variant_id", "device_class", "basis", "embodied_policy").agg(
        pl.col("reduction_factor").min().alias("low"), pl.col("reduction_factor").max().alias("high"))
    assert (by_policy.get_column("low") == by_policy.get_column("high")).all()
    compute = narrow.filter(pl.col("pattern") == COMPUTE_ONLY).join(
        by_policy, on=["scenario_id", "variant_id", "device_class", "basis", "embodied_policy"], how="inner")
    assert compute.height == narrow.filter(pl.col("pattern") == COMPUTE_ONLY).height > 0
    assert (compute.get_column("reduction_factor") == compute.get_column("low")).all()


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
                                          "where scenario_id = 'realistic_consequential' and edge_mix is null order by all")
    # only the US has a short-run marginal factor fitted to data from 2014 on (EPA AVERT 2023); GB's is retired
    assert {z for row in consequential.rows() for z in row[:2]} == {"US"}
    code, reason = excluded[("realistic_consequential", "cloud", "GB")]  # GB's long-run factor is not the margin it reads
    assert code == "no_marginal_factor" and "no short_run_operating marginal factor" in reason
    marginal = read(built_warehouse, "select zone, signal, factor_id from core.zone_intensity where scenario_id = 'realistic_consequential'")
    assert set(marginal.get_column("signal")) == {"marginal"}
    assert set(marginal.get_column("factor_id")) == {"avert_us_2023_srmer"}
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
    from pipelines.definitions import defs
    from pipelines.defs.schedules import grid_feeds_job
    from pipelines.lib.keys import LIVE_KEY

    graph = defs.resolve_asset_graph()
    downstream = dg.AssetSelection.assets(LIVE_KEY).downstream().resolve(graph)
    job_keys = set(defs.resolve_job_def(grid_feeds_job.name).asset_layer.executable_asset_keys)
    for table in (ZONE_INTENSITY, SITING, SITING_SUMMARY):
        assert table.key in downstream and table.key in job_keys
        assert defs.resolve_assets_def(table.key).specs_by_key[table.key].automation_condition == EAGER


def test_a_feed_refresh_of_one_zone_restamps_its_siting_rows_only(built_warehouse: Path, tmp_path: Path, server: ReplayServer,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    from pipelines.definitions import defs
    from pipelines.defs.schedules import LIVE_OP, RANGE_END_TAG, RANGE_START_TAG, grid_feeds_job
    from pipelines.ingest.feeds.uk_carbon_intensity import RecordedUkCarbonIntensity
    from pipelines.lib.keys import LIVE_KEY
    from pipelines.lib.resources import Warehouse

    shutil.copytree(built_warehouse.parent, tmp_path / "wh", ignore=shutil.ignore_patterns("site", ".runs"))
    published = tmp_path / "wh" / built_warehouse.name
    columns = "scenario_id, cloud_zone, edge_zone, edge_mix, device_class, reduction_factor, reduction_factor_with_comm, computed_run_id"
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
    mix_with_de = pl.col("edge_mix").str.contains(r"\bDE\b").fill_null(False)
    touches_de = (pl.col("cloud_zone") == "DE") | (pl.col("edge_zone") == "DE") | mix_with_de
    de, others = joined.filter(touches_de), joined.filter(~touches_de)
    # every row that reads DE (both scenarios on average intensities, their edge mixes hold DE) was
    # recomputed by this run, with a new R
    zones = before.filter(pl.col("scenario_id") == "paper_text").get_column("cloud_zone").n_unique()
    # two scenarios on averages, two classes: DE's cloud against every edge zone and the mix, DE's
    # edge and the mix against every other cloud zone
    assert de.height == 2 * 2 * (3 * zones - 1)
    assert set(de.get_column("computed_run_id_after")) == {result.run_id}
    assert (de.get_column("reduction_factor") != de.get_column("reduction_factor_after")).all()
    # a cleaner day in DE: the cloud there emits less (R falls), edge devices there emit less (R rises)
    cloud_de = de.filter((pl.col("cloud_zone") == "DE") & (pl.col("edge_zone") != "DE"))
    edge_de = de.filter((pl.col("edge_zone") == "DE") & (pl.col("cloud_zone") != "DE"))
    assert (cloud_de.get_column("reduction_factor_after") < cloud_de.get_column("reduction_factor")).all()
    assert (edge_de.get_column("reduction_factor_after") > edge_de.get_column("reduction_factor")).all()
    mix_de = de.filter(mix_with_de & (pl.col("cloud_zone") != "DE"))
    assert mix_de.height == 2 * 2 * (zones - 1)
    assert (mix_de.get_column("reduction_factor_after") > mix_de.get_column("reduction_factor")).all()
    # every other row is untouched: the same R, the run that computed it before
    assert others.height == before.height - de.height
    assert (others.get_column("computed_run_id") == others.get_column("computed_run_id_after")).all()
    assert (others.get_column("reduction_factor") == others.get_column("reduction_factor_after")).all()
    assert (others.get_column("reduction_factor_with_comm") == others.get_column("reduction_factor_with_comm_after")).all()
    # and the page's age of DE's hourly intensity moves with the fetch
    [(fetched,)] = read(published, "select distinct fetched_at from core.zone_intensity where zone = 'DE' and side = 'edge'").rows()
    assert fetched > fetched_before


def test_findings_siting_block_is_the_warehouse(built_warehouse: Path) -> None:
    """The siting block of docs/findings.md rendered again from the test build (deterministic: no
    draws; the verdict's network method for each scenario and class is the same at the test
    build's draws as at the default build's)."""
    from pipelines.paths import PROJECT_ROOT
    from pipelines.warehouse.docs import SITING_BEGIN, SITING_END, between, siting_table

    con = duckdb.connect(str(built_warehouse), read_only=True)
    try:
        table = siting_table(con)
    finally:
        con.close()
    [consequential] = [line for line in table.splitlines() if line.startswith("| realistic_consequential | consequential | laptop |")]
    # on the scenario's headline basis; the US alone has a current short-run factor
    assert consequential.startswith("| realistic_consequential | consequential | laptop | measured_rates |") and "| 1 x 1 |" in consequential
    findings = (PROJECT_ROOT / "docs" / "findings.md").read_text(encoding="utf-8")
    assert between(findings, SITING_BEGIN, SITING_END) == table, "docs/findings.md's siting is stale: run `edge-carbon docs`"
