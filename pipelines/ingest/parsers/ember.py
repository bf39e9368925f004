"""Ember electricity data: yearly and monthly carbon intensity per country and region, and US states.

Ember names countries by ISO-3166 alpha-3 code and aggregates ("World", "EU", "OECD", ...) by
name with an empty code. Zone ids here are Electricity Maps style, so both are translated
through the reference table ``sources/curated/zones.csv`` (kind ``zones``): alpha-3 -> alpha-2
for countries, Ember name -> upper-case slug for aggregates. A row whose code or aggregate name
is not in that table is rejected with the reason, never dropped.
"""

from __future__ import annotations

import datetime as dt
import functools
import operator
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import polars as pl

from pipelines.errors import ManifestError, SourceParseError
from pipelines.ingest.cells import is_blank, rejects_where
from pipelines.ingest.manifest import SourceEntry, load_manifest
from pipelines.ingest.options import instant_option
from pipelines.ingest.parsers.common import checked_casts, require_columns
from pipelines.ingest.parsers.grid import empty_rows, grid_rows, read_grid_csv
from pipelines.ingest.quarantine import Reject
from pipelines.ingest.staging import Parsed, Parser
from schemas.grid_intensity import ZONE_PATTERN

INTENSITY = "emissions_intensity_gco2_per_kwh"
YEARS = (1900, 2100)

#: US state (as Ember names it) -> USPS code; the zone is "US-<code>". "US Total" is zone "US".
US_STATES: dict[str, str] = {
    "Alabama": "AL", "Alaska": "AK", "Arizona": "AZ", "Arkansas": "AR", "California": "CA",
    "Colorado": "CO", "Connecticut": "CT", "Delaware": "DE", "Florida": "FL", "Georgia": "GA",
    "Hawaii": "HI", "Idaho": "ID", "Illinois": "IL", "Indiana": "IN", "Iowa": "IA",
    "Kansas": "KS", "Kentucky": "KY", "Louisiana": "LA", "Maine": "ME", "Maryland": "MD",
    "Massachusetts": "MA", "Michigan": "MI", "Minnesota": "MN", "Mississippi": "MS",
    "Missouri": "MO", "Montana": "MT", "Nebraska": "NE", "Nevada": "NV", "New Hampshire": "NH",
    "New Jersey": "NJ", "New Mexico": "NM", "New York": "NY", "North Carolina": "NC",
    "North Dakota": "ND", "Ohio": "OH", "Oklahoma": "OK", "Oregon": "OR", "Pennsylvania": "PA",
    "Rhode Island": "RI", "South Carolina": "SC", "South Dakota": "SD", "Tennessee": "TN",
    "Texas": "TX", "Utah": "UT", "Vermont": "VT", "Virginia": "VA", "Washington": "WA",
    "West Virginia": "WV", "Wisconsin": "WI", "Wyoming": "WY", "Washington, D.C.": "DC",
    "Puerto Rico": "PR",
}  # fmt: skip
US_TOTAL = "US Total"


@dataclass(frozen=True)
class Zones:
    """The zone reference table: ISO3 -> (zone, name) for countries, Ember name -> zone for aggregates."""

    countries: dict[str, tuple[str, str]]
    aggregates: dict[str, str]
    file: str

    @property
    def label(self) -> str:
        """The table's file as people know it, e.g. ``curated/zones.csv``."""
        return "/".join(Path(self.file).parts[-2:])


ZonesLoader = Callable[[Mapping[str, Any]], Zones]


def read_zones(path: Path) -> Zones:
    """Read ``zones.csv`` (zone, iso3, name, kind); any malformed or duplicate line fails the file.

    The table is a lookup: a wrong line would put rows in the wrong zone silently, so it is an
    error, not a quarantined row.
    """
    frame = read_grid_csv(path)
    require_columns(path, frame, ["zone", "iso3", "name", "kind"])
    countries: dict[str, tuple[str, str]] = {}
    aggregates: dict[str, str] = {}
    seen: dict[str, int] = {}
    for row in frame.iter_rows(named=True):
        line = row["source_row"]
        zone, iso3, name, kind = ((row[c] or "").strip() for c in ("zone", "iso3", "name", "kind"))
        if not re.fullmatch(ZONE_PATTERN, zone):
            raise SourceParseError(path, line, f"zone {zone!r} is not an upper-case zone id like GB or US-CAL-CISO")
        if not name:
            raise SourceParseError(path, line, f"zone {zone!r} has no name")
        if zone in seen:
            raise SourceParseError(path, line, f"zone {zone!r} is already listed on line {seen[zone]}")
        seen[zone] = line
        if kind == "country":
            if not re.fullmatch(r"[A-Z]{3}", iso3):
                raise SourceParseError(path, line, f"country {zone!r} needs an ISO-3166 alpha-3 code, got {iso3!r}")
            if iso3 in countries:
                raise SourceParseError(path, line, f"iso3 {iso3!r} is already listed for zone {countries[iso3][0]!r}")
            countries[iso3] = (zone, name)
        elif kind == "aggregate":
            if iso3:
                raise SourceParseError(path, line, f"aggregate {zone!r} must have an empty iso3, got {iso3!r}")
            if name in aggregates:
                raise SourceParseError(path, line, f"aggregate name {name!r} is already listed for zone {aggregates[name]!r}")
            aggregates[name] = zone
        else:
            raise SourceParseError(path, line, f"kind must be 'country' or 'aggregate', got {kind!r}")
    return Zones(countries=countries, aggregates=aggregates, file=str(path))


def zones_from_manifest(options: Mapping[str, Any]) -> Zones:
    """The zone table registered in the manifest (hash verified).

    ``options["zones_source"]`` names its source id; without it, the single entry of kind
    ``zones`` is used.
    """
    entries = load_manifest()
    wanted = options.get("zones_source")
    matches: list[SourceEntry] = [
        e for e in entries if (e.id == wanted if wanted else e.kind == "zones")
    ]
    if len(matches) != 1:
        what = f"source id {wanted!r}" if wanted else "exactly one entry of kind 'zones'"
        raise ManifestError("sources/manifest", f"the Ember parsers need {what} (the zone table); found {len(matches)}")
    return read_zones(matches[0].verified_file())


def _year_cast(expr: pl.Expr) -> pl.Expr:
    """a whole year like '2024'"""
    return expr.str.strip_chars().cast(pl.Int64, strict=False)


def _month_cast(expr: pl.Expr) -> pl.Expr:
    """a date like '2018-01-01'"""
    return expr.str.strip_chars().str.to_date("%Y-%m-%d", strict=False)


def _blank_intensity(frame: pl.DataFrame, where: Callable[[dict[str, Any]], str]) -> list[Reject]:
    return rejects_where(
        frame,
        is_blank(INTENSITY),
        column=INTENSITY,
        check="missing_value",
        value=None,
        reason=lambda row: f"{INTENSITY} is blank: Ember gives no carbon intensity for {where(row)}",
    )


def _period_start(frame: pl.DataFrame, period: str) -> tuple[pl.DataFrame, list[Reject]]:
    """Add ``period_start`` (UTC) from ``year`` or ``date``; out-of-range years and mid-month dates are rejected."""
    if period == "year":
        bad = (pl.col("year") < YEARS[0]) | (pl.col("year") > YEARS[1])
        rejects = rejects_where(
            frame, bad, column="year", check="out_of_range", value="year",
            reason=lambda row: f"year: {row['year']} is outside {YEARS[0]}-{YEARS[1]}",
        )
        frame = frame.filter(~bad.fill_null(False))
        start = pl.datetime(pl.col("year"), 1, 1, time_zone="UTC")
    else:
        bad = (pl.col("date").dt.day() != 1) | (pl.col("date").dt.year() < YEARS[0]) | (pl.col("date").dt.year() > YEARS[1])
        rejects = rejects_where(
            frame, bad, column="date", check="not_month_start", value="date",
            reason=lambda row: f"date: {row['date']} is not the first day of a month in {YEARS[0]}-{YEARS[1]} (Ember monthly rows are YYYY-MM-01)",
        )
        frame = frame.filter(~bad.fill_null(False))
        start = pl.col("date").cast(pl.Datetime("us")).dt.replace_time_zone("UTC")
    return frame.with_columns(start.alias("period_start")), rejects


def _zone_columns(frame: pl.DataFrame, zones: Zones) -> tuple[pl.DataFrame, list[Reject]]:
    """Add zone, zone_name and country_iso3; unknown codes and names are rejected."""
    code = pl.col("country_code").str.strip_chars().fill_null("")
    name = pl.col("country_or_region").str.strip_chars().fill_null("")
    country = pl.DataFrame(
        {
            "__code": list(zones.countries),
            "__czone": [z for z, _ in zones.countries.values()],
            "__cname": [n for _, n in zones.countries.values()],
        },
        schema={"__code": pl.String, "__czone": pl.String, "__cname": pl.String},
    )
    aggregate = pl.DataFrame(
        {"__name": list(zones.aggregates), "__azone": list(zones.aggregates.values())},
        schema={"__name": pl.String, "__azone": pl.String},
    )
    joined = (
        frame.with_columns(code.alias("__code"), name.alias("__name"))
        .join(country, on="__code", how="left", maintain_order="left")
        .join(aggregate, on="__name", how="left", maintain_order="left")
    )
    has_code = pl.col("__code") != ""
    unknown_code = has_code & pl.col("__czone").is_null()
    unknown_name = ~has_code & pl.col("__azone").is_null()
    known, rejects = _drop_unknown_zones(
        joined,
        (unknown_code, "country_code", "__code",
         lambda row: f"country_code: ISO3 code {row['__code']!r} ({row['__name']}) is not in {zones.label}; add the country there"),
        (unknown_name, "country_or_region", "__name",
         lambda row: f"country_or_region: {row['__name']!r} has no country_code and is not an aggregate listed in {zones.label}"),
    )
    out = known.with_columns(
        pl.when(has_code).then(pl.col("__czone")).otherwise(pl.col("__azone")).alias("zone"),
        pl.when(has_code).then(pl.col("__cname")).otherwise(pl.col("__name")).alias("zone_name"),
        pl.when(has_code).then(pl.col("__code")).otherwise(None).alias("country_iso3"),
    )
    return out, rejects


#: An unknown-zone test: the mask, the column it blames, the column whose text is the value, the reason.
ZoneCheck = tuple[pl.Expr, str, str, Callable[[dict[str, Any]], str]]


def _drop_unknown_zones(frame: pl.DataFrame, *checks: ZoneCheck) -> tuple[pl.DataFrame, list[Reject]]:
    """The rows that pass every check, and an ``unknown_zone`` reject per row and check that fails."""
    rejects = [r for mask, column, value, reason in checks
               for r in rejects_where(frame, mask, column=column, check="unknown_zone", value=value, reason=reason)]
    return frame.filter(~functools.reduce(operator.or_, [mask for mask, *_ in checks])), rejects


def _read_periods(path: Path, options: Mapping[str, Any], columns: list[str], column: str, period: str,
                  label: Callable[[dict[str, Any]], str]) -> tuple[dt.datetime, pl.DataFrame, list[Reject]]:
    """Read an Ember CSV: its ``fetched_at``, the rows with an intensity and a period (``column``, cast by
    ``period``, "year" or "month", with the period's start added) and the rejects so far.

    ``columns`` are the file's other required columns; ``label`` names a row in the blank-intensity rejects.
    """
    fetched_at = instant_option(path, options, "fetched_at")
    frame = read_grid_csv(path)
    require_columns(path, frame, [*columns, column, INTENSITY])
    rejects = _blank_intensity(frame, label)
    rejects += rejects_where(
        frame, is_blank(column), column=column, check="missing_value", value=None,
        reason=lambda row: f"{column} is blank: the row has no period",
    )
    frame = frame.filter(~(is_blank(INTENSITY) | is_blank(column)))
    cast = _year_cast if period == "year" else _month_cast
    typed, cast_rejects = checked_casts(frame, {INTENSITY: pl.Float64, column: cast})
    typed, period_rejects = _period_start(typed, period)
    return fetched_at, typed, rejects + cast_rejects + period_rejects


def ember_parser(period: str, zones: ZonesLoader) -> Parser:
    """A parser for Ember's country overview, ``period`` "year" (kind ember_yearly) or "month" (ember_monthly)."""
    if period not in ("year", "month"):
        raise ValueError(f"period must be 'year' or 'month', got {period!r}")
    column = "year" if period == "year" else "date"
    resolution, signal = ("P1Y", "annual_average") if period == "year" else ("P1M", "monthly_average")

    def parse(path: Path, options: Mapping[str, Any]) -> Parsed:
        fetched_at, typed, rejects = _read_periods(
            path, options, ["country_or_region", "country_code"], column, period,
            label=lambda row: f"{row['country_or_region']} {row[column]}")
        typed, zone_rejects = _zone_columns(typed, zones(options))
        rows = grid_rows(
            typed.rename({INTENSITY: "gco2e_per_kwh"}),
            resolution=resolution, signal=signal, emission_scope="lifecycle", fetched_at=fetched_at,
        )
        return Parsed(frame=rows if rows.height else empty_rows(), rejects=rejects + zone_rejects)

    parse.__doc__ = f"Ember country overview, one row per country or region and {period}."
    return parse


def parse_ember_us_states(path: Path, options: Mapping[str, Any]) -> Parsed:
    """Ember's US overview (kind ember_us_states): one row per state and year, zone ``US-<USPS code>``.

    "US Total" becomes zone ``US``. Ember does not say which emission factors the state
    series uses (it divides ``emissions_ktco2`` by state demand), so the scope is
    ``unspecified``.
    """
    fetched_at, typed, rejects = _read_periods(
        path, options, ["country", "state"], "year", "year", label=lambda row: f"{row['state']} {row['year']}")
    state = pl.col("state").str.strip_chars().fill_null("")
    codes = {**{name: f"US-{code}" for name, code in US_STATES.items()}, US_TOTAL: "US"}
    typed = typed.with_columns(
        state.alias("__state"),
        state.replace_strict(codes, default=None, return_dtype=pl.String).alias("zone"),
        (pl.col("country").str.strip_chars().fill_null("") == "United States").alias("__us"),
    )
    bad_country = ~pl.col("__us")
    unknown_state = pl.col("__us") & pl.col("zone").is_null()
    typed, zone_rejects = _drop_unknown_zones(
        typed,
        (bad_country, "country", "country",
         lambda row: f"country: {row['country']!r} is not 'United States'; this file holds US states only"),
        (unknown_state, "state", "__state",
         lambda row: f"state: {row['__state']!r} is not a US state, DC, Puerto Rico or '{US_TOTAL}'"),
    )
    typed = typed.with_columns(
        pl.when(pl.col("__state") == US_TOTAL)
        .then(pl.lit("United States (total of Ember's state series)"))
        .otherwise(pl.col("__state"))
        .alias("zone_name")
    )
    rows = grid_rows(
        typed.rename({INTENSITY: "gco2e_per_kwh"}),
        country_iso3="USA", resolution="P1Y", signal="annual_average", emission_scope="unspecified", fetched_at=fetched_at,
    )
    return Parsed(frame=rows, rejects=rejects + zone_rejects)


DEMAND = "demand_twh"


def ember_demand_parser(zones: ZonesLoader) -> Parser:
    """A parser for the electricity demand column of Ember's yearly country overview (kind ember_demand)."""

    def parse(path: Path, options: Mapping[str, Any]) -> Parsed:
        frame = read_grid_csv(path)
        require_columns(path, frame, ["country_or_region", "country_code", "year", DEMAND])
        rejects = rejects_where(
            frame, is_blank(DEMAND) | is_blank("year"), column=DEMAND, check="missing_value", value=None,
            reason=lambda row: f"{DEMAND} or year is blank: Ember gives no demand for {row['country_or_region']} {row['year']}",
        )
        frame = frame.filter(~(is_blank(DEMAND) | is_blank("year")))
        typed, cast_rejects = checked_casts(frame, {DEMAND: pl.Float64, "year": _year_cast})
        typed, zone_rejects = _zone_columns(typed, zones(options))
        rows = typed.select("zone", "zone_name", "country_iso3", "year", DEMAND, "source_row")
        return Parsed(frame=rows, rejects=rejects + cast_rejects + zone_rejects)

    parse.__doc__ = "Ember country overview, yearly: electricity demand (TWh) per country or region and year."
    return parse
