"""Where training runs: each side of a scenario on its own grid, hour by hour, and R for every
pair of a cloud zone and an edge zone (marts.siting) with where the answer flips
(marts.siting_summary).

Live data moves it: core.zone_intensity reads staging.grid_intensity_live, so the grid-feed job
rebuilds it and the siting marts in the same run, and their eager automation conditions
refresh them whenever an upstream table is materialised outside that job. A refresh re-stamps
only the siting rows whose intensities or R changed (``computed_run_id``).
"""

import dagster as dg
import duckdb
import pandera.polars as pa

from pipelines.identifiers import checked_identifier
from pipelines.ingest.parsers import registry
from pipelines.lib.resources import Warehouse
from pipelines.lib.staging import staging_table
from pipelines.lib.tables import SqlTable, build_table_in_place, with_metadata
from pipelines.paths import sql_text
from pipelines.warehouse.lineage import tables_read_by
from pipelines.warehouse.live_feed import ensure_tables
from pipelines.warehouse.queries import query_pl
from pipelines.warehouse.tables import install_macros, preview_md
from schemas.marts import Siting, SitingSummary
from schemas.siting import (
    INTENSITY_BASES,
    ElectricityDemand,
    ScenarioZones,
    ZoneExclusions,
    ZoneIntensity,
    ZoneTimezones,
)
from schemas.vocabulary import CLAIM_LOW

#: A siting asset refreshes when any table it reads is materialised (and none is missing).
EAGER = dg.AutomationCondition.eager()
#: Share of a year's hours an hourly series must cover to count (the rest of the year is not
#: assumed to look like the hours present).
MIN_HOURLY_COVERAGE = 0.9
#: The marginal factors a consequential scenario reads: the short-run operating margin, the one
#: realistic_consequential's own grid parameters take.
MARGINAL_KIND = "short_run_operating"
#: The temporary relations marts.siting's SQL reads, in order, each the file of sql/siting/ of its name and its kind:
#: the pairs and their intensities, marts.verdict's answer rows, and the model's three arguments (parameter sets and
#: device rows, views over the pairs, and variant rows).
SITING_STEPS = tuple((f"siting_{step}", f"siting/{step}.sql", kind) for step, kind in
                     (("pairs", "table"), ("answers", "table"), ("inputs", "view"), ("devices", "view"), ("variants", "table")))

ZONE_TIMEZONES = staging_table(
    "staging.zone_timezones", ZoneTimezones, registry.ZONE_TIMEZONE_PARSERS, group="grid",
    finish=lambda f: f.sort("zone"),
    description="""Each zone's local clock: the IANA time zone that sets its charging window.

    Grain: one zone. A country with one time zone in the IANA tz database's zone.tab takes it; a
    country with several takes its most populous one (``choice = most_populous``, the reason in
    ``notes``); sub-national zones (balancing areas) take their own.
    """,
)

ELECTRICITY_DEMAND = staging_table(
    "staging.electricity_demand", ElectricityDemand, registry.ELECTRICITY_DEMAND_PARSERS, group="grid",
    finish=lambda f: f.sort("zone", "year"),
    description="""Electricity demand per country and Ember aggregate per year (TWh), from Ember's yearly overview.

    Grain: one zone x year. The Siting page shows the zones with the most demand.
    """,
)

SCENARIO_ZONES = staging_table(
    "core.scenario_zones", ScenarioZones, registry.SCENARIO_ZONE_PARSERS, group="scenarios",
    finish=lambda f: f.sort("scenario_id", "side", "zone"),
    description="""Where each siting scenario's two sides run (sources/scenarios/siting_zones.csv).

    Grain: scenario x side x zone. The cloud in one zone around the clock; the edge in a mix of
    zones (shares summing to 1), charging in a daily window in each zone's local time. A
    scenario states one year, emission scope and signal (average, or marginal for the
    consequential frame), the scope every intensity it reads is in.
    """,
)

ZONE_INTENSITY = SqlTable("core.zone_intensity", "core/zone_intensity.sql", ZoneIntensity)
ZONE_EXCLUSIONS = SqlTable("core.zone_exclusions", "core/zone_exclusions.sql", ZoneExclusions)
SITING = SqlTable("marts.siting", "marts/siting.sql", Siting,
                  also_reads=tuple(sorted({table for _, relative, _ in SITING_STEPS for table in tables_read_by(relative)})))
SITING_SUMMARY = SqlTable("marts.siting_summary", "marts/siting_summary.sql", SitingSummary)


@ZONE_INTENSITY.asset(group="scenarios", automation_condition=EAGER)
def zone_intensity(warehouse: Warehouse) -> dg.MaterializeResult:
    """The intensity each side of a siting scenario meets in every zone, computed, not typed.

    Grain: scenario x side x zone. In order of preference: ``hourly`` (the zone's hourly series
    in the scenario's scope and year, shipped and live, weighted by the side's hours in the
    zone's local time: the cloud around the clock, the edge in its charging window),
    ``hourly_shaped`` (an hourly series of another scope scaled to the zone's annual mean in the
    scenario's scope), ``monthly`` and ``annual``; a marginal scenario reads the zone's marginal
    factor only. Each row records its basis, year, signal, scope, sources and how old its data is.
    """
    con = warehouse.connection()
    ensure_tables(con, warehouse.published)
    result = ZONE_INTENSITY.build(con, {"min_coverage": MIN_HOURLY_COVERAGE, "marginal_kind": MARGINAL_KIND})
    bases = query_pl(con, "select scenario_id, side, intensity_basis, count(*) as zones from core.zone_intensity "
                          "group by all order by all")
    return with_metadata(result, {"zones_by_basis": dg.MetadataValue.md(preview_md(bases, rows=40))})


@ZONE_EXCLUSIONS.asset(group="scenarios", automation_condition=EAGER)
def zone_exclusions(warehouse: Warehouse) -> dg.MaterializeResult:
    """The zones a siting scenario's side leaves out, each with its reason.

    Grain: scenario x side x zone. An aggregate (WORLD, EU, ...) is not a zone; a zone without
    data in the scenario's year and scope (e.g. Ember's US states, scope unspecified) is left
    out, never read in another scope; a consequential scenario leaves out every zone without a
    marginal factor of the kind it reads (``MARGINAL_KIND``), never pricing it at its average or
    at another margin.
    """
    con = warehouse.connection()
    ensure_tables(con, warehouse.published)
    return ZONE_EXCLUSIONS.build(con, {"marginal_kind": MARGINAL_KIND})


@SITING.asset(group="marts", automation_condition=EAGER)
def siting(context: dg.AssetExecutionContext, warehouse: Warehouse) -> dg.MaterializeResult:
    """R for every pair of a cloud zone and an edge zone, and of each cloud zone and the scenario's
    own edge mix, per siting scenario and device class, read as marts.verdict reads its answer.

    Grain: scenario x cloud zone x edge zone (or ``mix``) x edge device class. The model's one
    formula (the table macro model_rows, called in sql/marts/siting.sql) over core.scenarios, each pair's
    two intensities (core.zone_intensity; the mix: its zones' share-weighted mean) in place of the
    scenario's grid parameters (variant rows of family ``siting``, sql/siting/variants.sql), all pairs
    at once and only what the mart reads: each scenario's headline basis, compute
    only and the answer's edge design, under the method row that sets the verdict (marts.verdict's answer
    row per scenario and class, sql/siting/answers.sql: ``basis``, ``edge_design``, the method row).
    Deterministic. The rows stay in DuckDB. Rows whose R and intensities did not change since the published
    table keep the run that computed them (``computed_run_id``).
    """
    con = warehouse.connection()
    try:
        prepare_siting(con)
        pairs = con.execute("select count(*) from siting_pairs").fetchall()[0][0]
        con.execute("create or replace temp table siting_fresh as " + sql_text("marts/siting.sql"))
        previous = warehouse.has_table("marts.siting") and _has_every_column(con, "marts.siting", Siting)
        result = build_table_in_place(con, "marts.siting", "siting/refresh.sql" if previous else "siting/fresh.sql", Siting,
                                      {"run_id": context.run_id})
    finally:
        for name, _, kind in reversed(SITING_STEPS):
            con.execute(f"drop {kind} if exists temp.{name}")
        con.execute("drop table if exists temp.siting_fresh")
    refreshed = query_pl(con, "select count(*) filter (where computed_run_id = $run) as refreshed, "
                              "count(*) filter (where edge_mix is not null) as mix_rows from marts.siting", {"run": context.run_id})
    return with_metadata(result, {"pairs": pairs, "rows_refreshed": int(refreshed.item(0, "refreshed")),
                                  "edge_mix_rows": int(refreshed.item(0, "mix_rows"))})


def prepare_siting(con: duckdb.DuckDBPyConnection) -> None:
    """The temporary tables sql/marts/siting.sql reads (:data:`SITING_STEPS`), each from its file of sql/siting/,
    on any connection to the warehouse (the asset's; a read-only session's: temporary tables are its own), after the
    model's macros (a step of a multiprocess run opens a connection of its own)."""
    install_macros(con)
    for name, relative, kind in SITING_STEPS:
        sql = f"create or replace temp {kind} {name} as " + sql_text(relative)
        con.execute(sql, {"bases": INTENSITY_BASES} if "$bases" in sql else {})


def _has_every_column(con: duckdb.DuckDBPyConnection, table: str, model: type[pa.DataFrameModel]) -> bool:
    """Whether ``table`` (an existing table) has every column of ``model``: a table published before a column was
    added is built afresh, not refreshed."""
    columns = {d[0] for d in con.execute(f"select * from {checked_identifier(table)} limit 0").description}  # noqa: S608 - a checked name
    return set(model.to_schema().columns) <= columns


@SITING_SUMMARY.asset(group="marts", automation_condition=EAGER)
def siting_summary(warehouse: Warehouse) -> dg.MaterializeResult:
    """Where the answer flips: per edge zone, the cloud intensity below which R < 1 and below
    which the claim's 4x fails; per cloud zone, the share of edge zones where R >= 1 and R >= 4.

    Grain: scenario x device class x R kind (compute only, with communication) x side x zone.
    Read from marts.siting: R against the cloud's intensity is a straight line through the
    model's own rows. Each row carries the zone's intensity, basis, age and electricity demand.
    """
    return SITING_SUMMARY.build(warehouse.connection(), {"claim_low": CLAIM_LOW})


assets = [ZONE_TIMEZONES.asset, ELECTRICITY_DEMAND.asset, SCENARIO_ZONES.asset]
