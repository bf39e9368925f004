"""staging.grid_intensity: carbon intensity of electricity, per zone and period, from every grid source."""

from __future__ import annotations

import pandera.polars as pa
import polars as pl
from pandera.engines import polars_engine as pe

from schemas.base import Provenance, range_contains_value, weak_rows_explained
from schemas.bounds import GRID_MAX_G_PER_KWH, GRID_MIN_G_PER_KWH, now_utc
from schemas.statuses import STATUS_TEXT, STATUSES

RESOLUTIONS = ["PT30M", "PT1H", "P1M", "P1Y"]
SIGNALS = ["actual", "forecast", "annual_average", "monthly_average", "marginal"]
EMISSION_SCOPES = ["direct", "lifecycle", "unspecified"]

#: Signals that are averages over a calendar period, and the resolution each one must have.
AVERAGE_SIGNALS = {"annual_average": "P1Y", "monthly_average": "P1M"}
#: Resolutions of the time-series signals (actual, forecast, marginal).
SERIES_RESOLUTIONS = ["PT30M", "PT1H"]
#: A marginal factor may also be one value for a calendar year (a study's annual estimate).
MARGINAL_RESOLUTIONS = [*SERIES_RESOLUTIONS, "P1Y"]
#: What a marginal factor measures: the short-run operating margin (the plants that ramp for a
#: change in demand, the fleet fixed) or the long-run margin (also the plants built or retired
#: because of it).
MARGINAL_KINDS = ["short_run_operating", "long_run"]

#: Zone ids follow Electricity Maps: ISO-3166 alpha-2 for countries ("GB", "DE"), sub-national
#: zones with dashes ("US-CAL-CISO", "IN-WE"), Ember aggregates as upper-case slugs ("WORLD",
#: "NORTH_AMERICA").
ZONE_PATTERN = r"^[A-Z0-9]+(?:[-_][A-Z0-9]+)*$"
#: Key of one value: a row must be unique on these columns (the first occurrence in a file is kept).
#: ``factor_id`` is null for every time series, so for them the key is the other columns; two
#: studies' annual marginal factors for one zone and year are two rows.
UNIQUE_KEY = ["zone", "period_start", "resolution", "signal", "emission_scope", "source_id", "factor_id"]

UTC_TS = pe.DateTime(time_zone="UTC")


def period_end_expr(start: pl.Expr, resolution: pl.Expr) -> pl.Expr:
    """The end of a period that starts at ``start`` and lasts one ``resolution`` step (null if unknown)."""
    return (
        pl.when(resolution == "PT30M")
        .then(start + pl.duration(minutes=30))
        .when(resolution == "PT1H")
        .then(start + pl.duration(hours=1))
        .when(resolution == "P1M")
        .then(start.dt.offset_by("1mo"))
        .when(resolution == "P1Y")
        .then(start.dt.offset_by("1y"))
        .otherwise(None)
    )


class GridIntensity(Provenance):
    """Grain: one zone x period x signal x emission scope x source.

    Every grid source lands here in the same shape, so a scenario can choose its grid factor
    (annual vs hourly, average vs forecast, direct vs life-cycle) as a filter, not a join:

    - **Ember** (yearly, monthly; US states yearly): ``annual_average`` / ``monthly_average`` of
      generation, life-cycle factors (Ember's methodology). The US-state file divides CO2 (not
      CO2e) by state demand and does not say which factors it uses, so its scope is
      ``unspecified``.
    - **NESO Carbon Intensity API** (the 2023 half-hourly file and the recorded API responses):
      ``forecast`` and ``actual`` per half-hour, zone ``GB`` (Great Britain, national). Scope
      ``direct``: NESO's methodology counts operational (combustion) CO2 only, so wind, solar,
      nuclear and hydro are zero. The values are gCO2/kWh (CO2 only), stored in the gCO2e column
      as published; the other greenhouse gases add about 1%.
    - **Electricity Maps** (Data Portal hourly CSVs and a recorded API response): ``actual``
      hourly values, consumption-based (flow-traced, imports included), ``direct`` and
      ``lifecycle`` as separate rows; ``is_estimated`` is Electricity Maps' own flag.
    - **EIA-930 / SustainDC** (California ISO 2022): ``actual`` hourly, production-based (the
      balancing authority's own generation, no imports), life-cycle factors; its zone is
      ``US-CAL-CISO-PROD`` so that it is never mistaken for Electricity Maps' ``US-CAL-CISO``.
    - **Marginal emission factors** (a curated file of published studies): ``marginal`` values
      per zone and year (``P1Y``), each with a ``factor_id`` a scenario's ``factor_ref`` names,
      its range, the years its data cover (``data_first_year`` to ``data_last_year``), whether
      it is a short-run operating or a long-run margin, its status and its citation. The columns after ``fetched_at`` are null for every other source.

    ``fetched_at`` is when the value was obtained: the capture time of a recorded API response,
    or the manifest's ``retrieved_on`` (00:00 UTC) for a downloaded file.
    """

    #: The warehouse table(s) this model is the contract of (pipelines.warehouse.dictionary finds it so).
    __tables__ = ("staging.grid_intensity", "staging.grid_intensity_live")

    zone: str = pa.Field(str_matches=ZONE_PATTERN, description="Zone id, Electricity Maps style: GB, DE, US-CAL-CISO, IN-WE; Ember aggregates as WORLD, EU, NORTH_AMERICA.")
    zone_name: str = pa.Field(description="Readable name of the zone as the source means it (e.g. United Kingdom for Ember, Great Britain for NESO).")
    country_iso3: str = pa.Field(nullable=True, str_matches=r"^[A-Z]{3}$", description="ISO-3166 alpha-3 code of the country the zone lies in; null for multi-country aggregates.")
    period_start: UTC_TS = pa.Field(description="Start of the period the value covers (UTC, inclusive).")  # type: ignore[valid-type]
    period_end: UTC_TS = pa.Field(description="End of the period (UTC, exclusive).")  # type: ignore[valid-type]
    resolution: str = pa.Field(isin=RESOLUTIONS, description="Length of the period, ISO-8601: PT30M | PT1H | P1M | P1Y.")
    gco2e_per_kwh: float = pa.Field(
        ge=GRID_MIN_G_PER_KWH,
        le=GRID_MAX_G_PER_KWH,
        description="Carbon intensity of electricity, gCO2e per kWh (physical bounds: schemas/bounds.py).",
    )
    signal: str = pa.Field(isin=SIGNALS, description="actual | forecast | annual_average | monthly_average | marginal.")
    emission_scope: str = pa.Field(isin=EMISSION_SCOPES, description="direct (combustion only) | lifecycle (incl. construction, fuel supply) | unspecified.")
    is_estimated: bool = pa.Field(nullable=True, description="The source flags this value as estimated (modelled, not measured); null when the source does not say.")
    fetched_at: UTC_TS = pa.Field(description="When the value was fetched (UTC): capture time of an API response, else retrieved_on at 00:00 UTC.")  # type: ignore[valid-type]
    factor_id: str = pa.Field(nullable=True, description="Stable id of a curated factor (a scenario's factor_ref names it: grid_intensity.factor_id=<id>.gco2e_per_kwh); null for every time series.")
    low_gco2e_per_kwh: float = pa.Field(nullable=True, ge=GRID_MIN_G_PER_KWH, le=GRID_MAX_G_PER_KWH, description="Low end of the range the source gives for this value, gCO2e/kWh; null when none.")
    high_gco2e_per_kwh: float = pa.Field(nullable=True, ge=GRID_MIN_G_PER_KWH, le=GRID_MAX_G_PER_KWH, description="High end of that range, gCO2e/kWh; null when none.")
    marginal_kind: str = pa.Field(nullable=True, isin=MARGINAL_KINDS, description="For a marginal factor: short_run_operating (the fleet fixed) or long_run (builds and retirements included); null otherwise.")
    status: str = pa.Field(nullable=True, isin=STATUSES, description="For a curated factor: " + STATUS_TEXT + "; null for the time series (their manifest entry carries it).")
    citation: str = pa.Field(nullable=True, description="For a curated factor: the study or report, with the table or page the value is read from.")
    citation_url: str = pa.Field(nullable=True, str_startswith="http", description="For a curated factor: a link to the study or report.")
    notes: str = pa.Field(nullable=True, description="For a curated factor: how the value was read or derived (the arithmetic of a derived row).")
    data_first_year: int = pa.Field(nullable=True, ge=1990, le=2100, description="For a marginal factor: the first year of the data it is fitted to (for a long-run projection, the first year it projects; for a combined row, the earliest of its inputs'); null otherwise.")
    data_last_year: int = pa.Field(nullable=True, ge=1990, le=2100, description="For a marginal factor: the last year of the data it is fitted to, or of the years it projects; null otherwise.")

    @pa.dataframe_check(name="period_end_after_start", description="period_end must be later than period_start")
    @classmethod
    def period_end_after_start(cls, data: pa.PolarsData) -> pl.LazyFrame:
        """A period ends after it starts."""
        return data.lazyframe.select(pl.col("period_end") > pl.col("period_start"))

    @pa.dataframe_check(
        name="period_matches_resolution",
        description="the period must be exactly one resolution step (30 minutes, an hour, a calendar month or a calendar year)",
    )
    @classmethod
    def period_matches_resolution(cls, data: pa.PolarsData) -> pl.LazyFrame:
        """The period is exactly one step of its resolution (a half-hour, an hour, a month, a year)."""
        expected = period_end_expr(pl.col("period_start"), pl.col("resolution"))
        return data.lazyframe.select((pl.col("period_end") == expected).fill_null(True))

    @pa.dataframe_check(
        name="signal_matches_resolution",
        description="annual_average must be P1Y and monthly_average P1M; actual and forecast must be PT30M or PT1H; "
        "marginal PT30M, PT1H or P1Y",
    )
    @classmethod
    def signal_matches_resolution(cls, data: pa.PolarsData) -> pl.LazyFrame:
        """Averages cover their calendar period; series signals are half-hourly or hourly; a
        marginal factor is a series or one study's annual value."""
        signal, resolution = pl.col("signal"), pl.col("resolution")
        expected = signal.replace_strict(AVERAGE_SIGNALS, default=None, return_dtype=pl.String)
        ok = (
            pl.when(expected.is_not_null())
            .then(resolution == expected)
            .when(signal == "marginal")
            .then(resolution.is_in(MARGINAL_RESOLUTIONS))
            .otherwise(resolution.is_in(SERIES_RESOLUTIONS))
        )
        return data.lazyframe.select(ok.fill_null(True))

    @pa.dataframe_check(
        name="annual_marginal_is_curated",
        description="an annual (P1Y) marginal factor needs a factor_id, a marginal_kind, a status, a citation and its URL; "
        "marginal_kind is only for marginal rows",
    )
    @classmethod
    def annual_marginal_is_curated(cls, data: pa.PolarsData) -> pl.LazyFrame:
        """A study's annual marginal factor says which margin it is and where it comes from."""
        annual_marginal = (pl.col("signal") == "marginal") & (pl.col("resolution") == "P1Y")
        described = pl.all_horizontal(
            [pl.col(c).is_not_null() for c in ("factor_id", "marginal_kind", "status", "citation", "citation_url")]
        )
        kind_only_marginal = pl.col("marginal_kind").is_null() | (pl.col("signal") == "marginal")
        return data.lazyframe.select(((~annual_marginal | described) & kind_only_marginal).fill_null(False))

    @pa.dataframe_check(
        name="marginal_factor_has_range_and_period",
        description="an annual (P1Y) marginal factor needs its range (low and high) and the years its data cover "
        "(data_first_year <= data_last_year); those years are only for marginal rows",
    )
    @classmethod
    def marginal_factor_has_range_and_period(cls, data: pa.PolarsData) -> pl.LazyFrame:
        """A study's marginal factor says how uncertain it is and which years it rests on."""
        annual_marginal = (pl.col("signal") == "marginal") & (pl.col("resolution") == "P1Y")
        first, last = pl.col("data_first_year"), pl.col("data_last_year")
        complete = pl.all_horizontal(
            [pl.col(c).is_not_null() for c in ("low_gco2e_per_kwh", "high_gco2e_per_kwh", "data_first_year", "data_last_year")]
        ) & (first <= last)
        years_only_marginal = (first.is_null() & last.is_null()) | (pl.col("signal") == "marginal")
        return data.lazyframe.select(((~annual_marginal | complete) & years_only_marginal).fill_null(False))

    @pa.dataframe_check(name="factor_id_unique", description="a factor_id names one row (repeats after the first are rejected)")
    @classmethod
    def factor_id_unique(cls, data: pa.PolarsData) -> pl.LazyFrame:
        return data.lazyframe.select(pl.col("factor_id").is_null() | pl.col("factor_id").is_first_distinct())

    @pa.dataframe_check(name="range_contains_value", description="low <= gco2e_per_kwh <= high where a range is given")
    @classmethod
    def range_contains_value(cls, data: pa.PolarsData) -> pl.LazyFrame:
        return range_contains_value(data, "gco2e_per_kwh", "low_gco2e_per_kwh", "high_gco2e_per_kwh")

    @pa.dataframe_check(name="derived_or_assumed_rows_explain", description="a derived or assumed factor has notes")
    @classmethod
    def derived_or_assumed_rows_explain(cls, data: pa.PolarsData) -> pl.LazyFrame:
        return weak_rows_explained(data)

    @pa.dataframe_check(
        name="actual_not_in_future",
        description="an actual value cannot be dated in the future (its period starts after the build time)",
    )
    @classmethod
    def actual_not_in_future(cls, data: pa.PolarsData) -> pl.LazyFrame:
        """An ``actual`` is measured, so its period has begun; a future one is a wrong date or signal."""
        future = (pl.col("signal") == "actual") & (pl.col("period_start") > pl.lit(now_utc()))
        return data.lazyframe.select(~future.fill_null(False))

    @pa.dataframe_check(
        name="unique_key",
        description="duplicates an earlier row of the same file (same zone, period_start, resolution, signal, emission_scope and factor_id); the first is kept",
    )
    @classmethod
    def unique_key(cls, data: pa.PolarsData) -> pl.LazyFrame:
        """Flags every repeat of a key after its first occurrence."""
        return data.lazyframe.select(pl.struct(UNIQUE_KEY).is_first_distinct())


#: Column types of the rows a grid parser emits (the model's columns minus source_id/source_file).
ROW_SCHEMA: dict[str, pl.DataType] = {
    "zone": pl.String(),
    "zone_name": pl.String(),
    "country_iso3": pl.String(),
    "period_start": pl.Datetime("us", "UTC"),
    "period_end": pl.Datetime("us", "UTC"),
    "resolution": pl.String(),
    "gco2e_per_kwh": pl.Float64(),
    "signal": pl.String(),
    "emission_scope": pl.String(),
    "is_estimated": pl.Boolean(),
    "fetched_at": pl.Datetime("us", "UTC"),
    "source_row": pl.Int64(),
}
