"""The marts the dashboard pages read besides the model's: scenarios, sources, validation headlines
and grid intensity. Whatever a page shows comes from a mart; its SQL (dashboards/sql) only selects
and shapes."""

import dagster as dg

from pipelines.lib.resources import Warehouse
from pipelines.lib.tables import sql_table

SCENARIO_IDS = sql_table("marts.scenarios")
SOURCES = sql_table("marts.sources")
VALIDATION_HEADLINES = sql_table("marts.validation_headlines")
GRID_DAILY = sql_table("marts.grid_daily")
GRID_PROFILES = sql_table("marts.grid_profiles")
GRID_ANNUAL = sql_table("marts.grid_annual")


@SCENARIO_IDS.asset(group="marts")
def scenario_ids(warehouse: Warehouse) -> dg.MaterializeResult:
    """The scenarios the build evaluated, for every page's scenario selector.

    Grain: scenario (core.scenarios' ids, in order).
    """
    return SCENARIO_IDS.build(warehouse.connection())


@SOURCES.asset(group="marts")
def sources_list(warehouse: Warehouse) -> dg.MaterializeResult:
    """Every shipped source file with its licence, link, retrieval date and the table it feeds (the Sources page).

    Grain: one shipped source file; the columns of staging.sources.
    """
    return SOURCES.build(warehouse.connection())


@VALIDATION_HEADLINES.asset(group="marts")
def validation_headlines(warehouse: Warehouse) -> dg.MaterializeResult:
    """Published training footprints that give no inputs to recompute (the Validation page's headline list).

    Grain: one published headline (staging.validation_cases of kind ``headline``); marts.validation
    recomputes the other cases.
    """
    return VALIDATION_HEADLINES.build(warehouse.connection())


@GRID_DAILY.asset(group="marts")
def grid_daily(warehouse: Warehouse) -> dg.MaterializeResult:
    """Daily mean grid intensity per zone from the hourly and half-hourly actual series (the Grid page).

    Grain: zone x UTC day. One emission scope per zone: lifecycle where the zone's sub-daily
    series has it, else direct; ``periods`` counts the readings averaged, so the page can leave
    out thin days.
    """
    return GRID_DAILY.build(warehouse.connection())


@GRID_PROFILES.asset(group="marts")
def grid_profiles(warehouse: Warehouse) -> dg.MaterializeResult:
    """Grid intensity by hour of the day (UTC) per zone: mean, lowest and highest (the Grid page's daily profile).

    Grain: zone x hour of day, over the sub-daily actual series in the scope marts.grid_daily chose.
    """
    return GRID_PROFILES.build(warehouse.connection())


@GRID_ANNUAL.asset(group="marts")
def grid_annual(warehouse: Warehouse) -> dg.MaterializeResult:
    """Annual average lifecycle grid intensity per zone and year (the Grid page's long run).

    Grain: zone x year (staging.grid_intensity's annual_average rows, e.g. Ember).
    """
    return GRID_ANNUAL.build(warehouse.connection())
