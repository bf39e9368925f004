"""Where training runs: the zones' time zones and electricity demand, each scenario's zones, and
the intensity each side of a scenario meets in each zone (core.zone_intensity) or why a zone is
left out (core.zone_exclusions). The marts built on them (marts.siting, marts.siting_summary)
are in schemas/marts.py.
"""

from __future__ import annotations

import pandera.polars as pa
import polars as pl
from pandera.engines import polars_engine as pe

from schemas.base import Contract, Provenance, weak_rows_explained
from schemas.grid_intensity import EMISSION_SCOPES, STATUSES, ZONE_PATTERN
from schemas.statuses import STATUS_TEXT

UTC_TS = pe.DateTime(time_zone="UTC")
#: How a country's IANA time zone was chosen: its only one, the most populous of several, a
#: sub-national zone's own, or the zone a tz database link gives.
TIME_ZONE_CHOICES = ["only_zone", "most_populous", "sub_national", "tzdb_link"]
#: The two sides of a comparison: the cloud accelerator's zone and the edge devices' zones.
SIDES = ["cloud", "edge"]
#: What a scenario's siting reads: the grid's average intensity (attributional, as published) or
#: its marginal factor (consequential; never an average in its place).
SITING_SIGNALS = ["average", "marginal"]
#: How an intensity was computed, in order of preference (sql/core/zone_intensity.sql).
INTENSITY_BASES = ["hourly", "hourly_shaped", "monthly", "annual"]
#: Why a zone has no intensity for a scenario's side (core.zone_exclusions).
EXCLUSION_REASONS = ["aggregate", "no_time_zone", "no_data_in_scope", "no_marginal_factor"]


class ZoneTimezones(Provenance):
    """staging.zone_timezones. Grain: one zone.

    The IANA time zone whose local clock sets a zone's charging window. A country with several
    time zones takes its most populous one, recorded as ``most_populous`` with the others counted
    in ``country_time_zones`` and the reason in ``notes``.
    """

    #: The warehouse table(s) this model is the contract of (pipelines.warehouse.dictionary finds it so).
    __tables__ = ("staging.zone_timezones",)

    zone: str = pa.Field(unique=True, str_matches=ZONE_PATTERN, description="Zone id, as in staging.grid_intensity (GB, DE, US-CAL-CISO).")
    iana_time_zone: str = pa.Field(str_matches=r"^[A-Za-z_]+(/[A-Za-z_+-]+)+$", description="IANA time zone of the zone's local clock, e.g. Europe/Berlin.")
    country_time_zones: int = pa.Field(ge=1, description="Time zones the IANA zone.tab lists for the zone's country (1: no choice to make).")
    choice: str = pa.Field(isin=TIME_ZONE_CHOICES, description="only_zone | most_populous | sub_national | tzdb_link: how the time zone was chosen.")
    status: str = pa.Field(isin=STATUSES, description=STATUS_TEXT + ".")
    citation: str = pa.Field(description="Where the time zone is read from (the IANA tz database's zone.tab).")
    citation_url: str = pa.Field(str_startswith="http", description="Link to it.")
    notes: str = pa.Field(nullable=True, description="Why this time zone, where the country has several or none of its own.")

    @pa.dataframe_check(name="derived_or_assumed_rows_explain", description="a derived or assumed row has notes")
    @classmethod
    def derived_or_assumed_rows_explain(cls, data: pa.PolarsData) -> pl.LazyFrame:
        return weak_rows_explained(data)

    @pa.dataframe_check(name="several_zones_are_a_choice", description="a country with several time zones records the choice (most_populous)")
    @classmethod
    def several_zones_are_a_choice(cls, data: pa.PolarsData) -> pl.LazyFrame:
        return data.lazyframe.select((pl.col("country_time_zones") == 1) | (pl.col("choice") == "most_populous"))


class ElectricityDemand(Provenance):
    """staging.electricity_demand. Grain: one zone x year.

    Electricity demand per country (and Ember aggregate) per year, from Ember's yearly overview:
    what picks the zones the Siting page shows (the ones with the most demand).
    """

    #: The warehouse table(s) this model is the contract of (pipelines.warehouse.dictionary finds it so).
    __tables__ = ("staging.electricity_demand",)

    zone: str = pa.Field(str_matches=ZONE_PATTERN, description="Zone id (ISO alpha-2 for countries; Ember aggregates as WORLD, EU, ...).")
    zone_name: str = pa.Field(description="The zone's name.")
    country_iso3: str = pa.Field(nullable=True, str_matches=r"^[A-Z]{3}$", description="ISO alpha-3 code; null for aggregates.")
    year: int = pa.Field(in_range={"min_value": 1900, "max_value": 2100}, description="Calendar year.")
    demand_twh: float = pa.Field(ge=0, description="Electricity demand in the year, TWh.")

    class Config:
        unique = ["zone", "year"]


class ScenarioZones(Provenance):
    """core.scenario_zones. Grain: scenario x side x zone.

    Where a scenario's two sides run: the cloud in one zone around the clock, the edge in a mix
    of zones (shares summing to 1) in a charging window in each zone's local time. Every row of a
    scenario states the same year, emission scope and signal: the scope its siting reads (a zone
    without data in it is left out, never read in another scope).
    """

    #: The warehouse table(s) this model is the contract of (pipelines.warehouse.dictionary finds it so).
    __tables__ = ("core.scenario_zones",)

    scenario_id: str = pa.Field(description="Scenario (core.scenarios.scenario_id).")
    side: str = pa.Field(isin=SIDES, description="cloud | edge.")
    zone: str = pa.Field(str_matches=ZONE_PATTERN, description="The zone the scenario names for this side.")
    share: float = pa.Field(gt=0, le=1, description="The zone's share of the side's energy (the cloud's one zone: 1; an edge mix: its shares sum to 1).")
    year: int = pa.Field(in_range={"min_value": 2000, "max_value": 2100}, description="Calendar year of the grid data the scenario reads.")
    emission_scope: str = pa.Field(isin=EMISSION_SCOPES, description="Emission scope of every intensity the scenario reads: lifecycle | direct.")
    signal: str = pa.Field(isin=SITING_SIGNALS, description="average (attributional, as published) | marginal (consequential: marginal factors only).")
    window_start_local_hour: int = pa.Field(in_range={"min_value": 0, "max_value": 23}, description="First hour of the side's daily operating window, in each zone's local time.")
    window_hours: int = pa.Field(in_range={"min_value": 1, "max_value": 24}, description="Length of the daily window, h (the cloud: 24, around the clock).")
    status: str = pa.Field(isin=STATUSES, description=STATUS_TEXT + ".")
    notes: str = pa.Field(nullable=True, description="Why these zones, hours and scope.")

    class Config:
        unique = ["scenario_id", "side", "zone"]

    @pa.dataframe_check(name="derived_or_assumed_rows_explain", description="a derived or assumed row has notes")
    @classmethod
    def derived_or_assumed_rows_explain(cls, data: pa.PolarsData) -> pl.LazyFrame:
        return weak_rows_explained(data)

    @pa.dataframe_check(name="shares_sum_to_one", description="each side's shares sum to 1 (within 1e-9)")
    @classmethod
    def shares_sum_to_one(cls, data: pa.PolarsData) -> pl.LazyFrame:
        return data.lazyframe.select((pl.col("share").sum().over("scenario_id", "side") - 1).abs() <= 1e-9)

    @pa.dataframe_check(name="one_scope_per_scenario", description="a scenario's rows state one year, emission scope and signal")
    @classmethod
    def one_scope_per_scenario(cls, data: pa.PolarsData) -> pl.LazyFrame:
        return data.lazyframe.select(
            pl.all_horizontal([pl.col(c).n_unique().over("scenario_id") == 1 for c in ("year", "emission_scope", "signal")])
        )

    @pa.dataframe_check(name="cloud_in_one_zone_around_the_clock", description="the cloud side is one zone, 24 hours a day")
    @classmethod
    def cloud_in_one_zone_around_the_clock(cls, data: pa.PolarsData) -> pl.LazyFrame:
        cloud = pl.col("side") == "cloud"
        return data.lazyframe.select(~cloud | ((pl.col("window_hours") == 24) & (pl.col("share") == 1)))


class ZoneIntensity(Contract):
    """core.zone_intensity. Grain: scenario x side x zone.

    The carbon intensity each side of a siting scenario meets in every zone with data in the
    scenario's year, scope and signal, computed in order of preference: ``hourly`` (the zone's
    hourly series, weighted by the side's operating hours in the zone's local time),
    ``hourly_shaped`` (an hourly series of another scope, its window/annual ratio applied to the
    zone's annual mean in the scenario's scope), ``monthly`` (the monthly means weighted by the
    hours of each month) and ``annual`` (the annual mean). A marginal scenario reads the zone's
    marginal factor only. Aggregates are not zones.
    """

    #: The warehouse table(s) this model is the contract of (pipelines.warehouse.dictionary finds it so).
    __tables__ = ("core.zone_intensity",)

    scenario_id: str = pa.Field(description="Scenario (core.scenario_zones).")
    side: str = pa.Field(isin=SIDES, description="cloud (around the clock) | edge (in its charging window).")
    zone: str = pa.Field(str_matches=ZONE_PATTERN, description="Zone id.")
    zone_name: str = pa.Field(description="The zone's name as its annual or hourly source gives it.")
    iana_time_zone: str = pa.Field(description="The zone's local clock (staging.zone_timezones).")
    window_start_local_hour: int = pa.Field(in_range={"min_value": 0, "max_value": 23}, description="First local hour of the side's daily window.")
    window_hours: int = pa.Field(in_range={"min_value": 1, "max_value": 24}, description="Hours a day the side runs.")
    gco2e_per_kwh: float = pa.Field(ge=0, description="The intensity the side meets in the zone, gCO2e/kWh.")
    intensity_basis: str = pa.Field(isin=INTENSITY_BASES, description="hourly | hourly_shaped | monthly | annual: how it was computed.")
    year: int = pa.Field(description="The scenario's year (core.scenario_zones).")
    data_year: int = pa.Field(description="Calendar year of the data read: the scenario's, or for a marginal factor the study's (the newest at or before it).")
    signal: str = pa.Field(description="The signal read: actual (hourly series), monthly_average, annual_average or marginal.")
    emission_scope: str = pa.Field(isin=EMISSION_SCOPES, description="Emission scope of the intensity (the scenario's).")
    annual_gco2e_per_kwh: float = pa.Field(nullable=True, ge=0, description="The zone's mean over the whole year in the same scope (hourly mean, monthly or annual mean), gCO2e/kWh.")
    shape_factor: float = pa.Field(nullable=True, gt=0, description="hourly_shaped: window mean / annual mean of the hourly series of the other scope (1 for the cloud's 24 hours).")
    shape_scope: str = pa.Field(nullable=True, description="hourly_shaped: the scope of the hourly series that gave the shape.")
    n_hours: int = pa.Field(nullable=True, ge=1, description="Hours of the series in the window over the year (hourly, hourly_shaped).")
    data_through: UTC_TS = pa.Field(nullable=True, description="End of the newest period of the hourly series read (hourly, hourly_shaped).")  # type: ignore[valid-type]
    fetched_at: UTC_TS = pa.Field(description="When the newest value read was fetched (a live feed's payload, else the file's retrieval).")  # type: ignore[valid-type]
    source_ids: str = pa.Field(description="The sources of the values read, comma-separated (staging.sources / the live feeds).")
    factor_id: str = pa.Field(nullable=True, description="marginal: the curated factor read (staging.grid_intensity.factor_id).")

    class Config:
        unique = ["scenario_id", "side", "zone"]


class ZoneExclusions(Contract):
    """core.zone_exclusions. Grain: scenario x side x zone.

    Every zone of staging.grid_intensity (and the live feeds) that has no intensity for a
    scenario's side, with the reason: an aggregate of several countries; no time zone for its
    charging window; no data in the scenario's year and scope (e.g. Ember's US states, scope
    unspecified); or, for a marginal scenario, no marginal factor (never an average instead).
    """

    #: The warehouse table(s) this model is the contract of (pipelines.warehouse.dictionary finds it so).
    __tables__ = ("core.zone_exclusions",)

    scenario_id: str = pa.Field(description="Scenario.")
    side: str = pa.Field(isin=SIDES, description="cloud | edge.")
    zone: str = pa.Field(description="Zone id.")
    reason_code: str = pa.Field(isin=EXCLUSION_REASONS, description="aggregate | no_time_zone | no_data_in_scope | no_marginal_factor.")
    reason: str = pa.Field(description="Why the zone is left out, naming what it has instead.")

    class Config:
        unique = ["scenario_id", "side", "zone"]
