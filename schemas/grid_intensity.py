"""staging.grid_intensity: carbon intensity of electricity, per zone and period, from every grid source."""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import pandera.polars as pa
import polars as pl
from pandera.engines import polars_engine as pe

from pipelines.errors import ManifestError, SourceParseError
from pipelines.parsers.common import read_text_csv
from pipelines.plausibility import GRID_MAX_G_PER_KWH, GRID_MIN_G_PER_KWH, now_utc
from pipelines.quarantine import Reject
from schemas.base import Provenance

RESOLUTIONS = ["PT30M", "PT1H", "P1M", "P1Y"]
SIGNALS = ["actual", "forecast", "annual_average", "monthly_average", "marginal"]
EMISSION_SCOPES = ["direct", "lifecycle", "unspecified"]

#: Signals that are averages over a calendar period, and the resolution each one must have.
AVERAGE_SIGNALS = {"annual_average": "P1Y", "monthly_average": "P1M"}
#: Resolutions of the time-series signals (actual, forecast, marginal).
SERIES_RESOLUTIONS = ["PT30M", "PT1H"]

#: Zone ids follow Electricity Maps: ISO-3166 alpha-2 for countries ("GB", "DE"), sub-national
#: zones with dashes ("US-CAL-CISO", "IN-WE"), Ember aggregates as upper-case slugs ("WORLD",
#: "NORTH_AMERICA").
ZONE_PATTERN = r"^[A-Z0-9]+(?:[-_][A-Z0-9]+)*$"
#: Key of one value: a row must be unique on these columns (the first occurrence in a file is kept).
UNIQUE_KEY = ["zone", "period_start", "resolution", "signal", "emission_scope", "source_id"]

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

    ``fetched_at`` is when the value was obtained: the capture time of a recorded API response,
    or the manifest's ``retrieved_on`` (00:00 UTC) for a downloaded file.
    """

    zone: str = pa.Field(str_matches=ZONE_PATTERN, description="Zone id, Electricity Maps style: GB, DE, US-CAL-CISO, IN-WE; Ember aggregates as WORLD, EU, NORTH_AMERICA.")
    zone_name: str = pa.Field(description="Readable name of the zone as the source means it (e.g. United Kingdom for Ember, Great Britain for NESO).")
    country_iso3: str = pa.Field(nullable=True, str_matches=r"^[A-Z]{3}$", description="ISO-3166 alpha-3 code of the country the zone lies in; null for multi-country aggregates.")
    period_start: UTC_TS = pa.Field(description="Start of the period the value covers (UTC, inclusive).")  # type: ignore[valid-type]
    period_end: UTC_TS = pa.Field(description="End of the period (UTC, exclusive).")  # type: ignore[valid-type]
    resolution: str = pa.Field(isin=RESOLUTIONS, description="Length of the period, ISO-8601: PT30M | PT1H | P1M | P1Y.")
    gco2e_per_kwh: float = pa.Field(
        ge=GRID_MIN_G_PER_KWH,
        le=GRID_MAX_G_PER_KWH,
        description="Carbon intensity of electricity, gCO2e per kWh (physical bounds: pipelines/plausibility.py).",
    )
    signal: str = pa.Field(isin=SIGNALS, description="actual | forecast | annual_average | monthly_average | marginal.")
    emission_scope: str = pa.Field(isin=EMISSION_SCOPES, description="direct (combustion only) | lifecycle (incl. construction, fuel supply) | unspecified.")
    is_estimated: bool = pa.Field(nullable=True, description="The source flags this value as estimated (modelled, not measured); null when the source does not say.")
    fetched_at: UTC_TS = pa.Field(description="When the value was fetched (UTC): capture time of an API response, else retrieved_on at 00:00 UTC.")  # type: ignore[valid-type]

    class Config:
        strict = True

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
        description="annual_average must be P1Y and monthly_average P1M; actual, forecast and marginal must be PT30M or PT1H",
    )
    @classmethod
    def signal_matches_resolution(cls, data: pa.PolarsData) -> pl.LazyFrame:
        """Averages cover their calendar period; series signals are half-hourly or hourly."""
        signal, resolution = pl.col("signal"), pl.col("resolution")
        expected = signal.replace_strict(AVERAGE_SIGNALS, default=None, return_dtype=pl.String)
        ok = pl.when(expected.is_not_null()).then(resolution == expected).otherwise(resolution.is_in(SERIES_RESOLUTIONS))
        return data.lazyframe.select(ok.fill_null(True))

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
        description="duplicates an earlier row of the same file (same zone, period_start, resolution, signal and emission_scope); the first is kept",
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


# --- Helpers shared by the grid parsers (pipelines/parsers/{ember,neso,uk_carbon_intensity,
# --- electricitymaps,eia930}.py): manifest options, timestamp casts, blank cells, final rows.


def option_datetime(options: Mapping[str, Any], key: str, path: Path | str) -> dt.datetime:
    """A UTC instant from the manifest options: a TOML datetime with offset, a date, or ISO text.

    A date means 00:00 UTC of that day (``fetched_at = 2026-11-29`` for a downloaded file).
    """
    value = options.get(key)
    if isinstance(value, str):
        try:
            value = dt.datetime.fromisoformat(value)
        except ValueError:
            value = None
    if isinstance(value, dt.date) and not isinstance(value, dt.datetime):
        value = dt.datetime(value.year, value.month, value.day, tzinfo=dt.UTC)
    if not isinstance(value, dt.datetime) or value.tzinfo is None:
        raise ManifestError(
            path,
            f"the manifest entry of this file needs options.{key} as a date or a UTC datetime "
            f"(e.g. {key} = 2026-11-29 or {key} = 2023-03-15T12:01:00Z); got {options.get(key)!r}",
        )
    return value.astimezone(dt.UTC)


def option_text(options: Mapping[str, Any], key: str, path: Path | str, default: str | None = None) -> str:
    """A text option from the manifest; ``default`` when absent, else a ManifestError naming the file."""
    value = options.get(key, default)
    if not isinstance(value, str) or not value:
        raise ManifestError(path, f"the manifest entry of this file needs options.{key} (text); got {options.get(key)!r}")
    return value


def optional_text(options: Mapping[str, Any], key: str, path: Path | str) -> str | None:
    """A text option that may be absent (None); present but not text is a ManifestError."""
    if options.get(key) is None:
        return None
    return option_text(options, key, path)


def utc_timestamp(formats: Sequence[str], example: str) -> Callable[[pl.Expr], pl.Expr]:
    """A cast for :func:`pipelines.parsers.common.checked_casts`: text -> UTC datetime.

    Formats with ``%z`` are converted from their offset to UTC; formats without an offset are
    read as UTC wall-clock time. The first format that reads a cell wins.
    """

    def cast(expr: pl.Expr) -> pl.Expr:
        text = expr.str.strip_chars()
        parsed = []
        for fmt in formats:
            value = text.str.to_datetime(fmt, strict=False, time_unit="us")
            has_offset = "%z" in fmt or "%:z" in fmt
            parsed.append(value.dt.convert_time_zone("UTC") if has_offset else value.dt.replace_time_zone("UTC"))
        return pl.coalesce(parsed)

    cast.__doc__ = f"a UTC timestamp like {example!r}"
    return cast


def is_blank(name: str) -> pl.Expr:
    """True where a text cell is missing or only whitespace."""
    return pl.col(name).is_null() | (pl.col(name).str.strip_chars() == "")


def rejects_where(
    frame: pl.DataFrame,
    mask: pl.Expr,
    *,
    column: str | None,
    check: str,
    value: str | None,
    reason: Callable[[dict[str, Any]], str],
) -> list[Reject]:
    """One Reject per row of ``frame`` where ``mask`` holds; ``value`` names the column to quote."""
    hits = frame.filter(mask.fill_null(False))
    return [
        Reject(
            source_row=row["source_row"],
            column_name=column,
            check_name=check,
            value=None if value is None or row[value] is None else str(row[value]),
            reason=reason(row),
        )
        for row in hits.iter_rows(named=True)
    ]


def grid_rows(frame: pl.DataFrame, **constants: Any) -> pl.DataFrame:
    """The parser's output: ``ROW_SCHEMA`` columns from ``frame`` and ``constants``.

    Columns neither in ``frame`` nor in ``constants`` are null; ``period_end`` defaults to
    ``period_start`` plus one ``resolution`` step.
    """
    exprs = []
    for name, dtype in ROW_SCHEMA.items():
        if name in constants:
            exprs.append(pl.lit(constants[name], dtype=dtype).alias(name))
        elif name in frame.columns:
            exprs.append(pl.col(name).cast(dtype).alias(name))
        elif name != "period_end":
            exprs.append(pl.lit(None, dtype=dtype).alias(name))
    out = frame.select(exprs)
    if "period_end" not in out.columns:
        out = out.with_columns(period_end_expr(pl.col("period_start"), pl.col("resolution")).alias("period_end"))
    return out.select(list(ROW_SCHEMA))


def empty_rows() -> pl.DataFrame:
    """A zero-row parser output."""
    return pl.DataFrame(schema=ROW_SCHEMA)


def read_grid_csv(path: Path) -> pl.DataFrame:
    """:func:`pipelines.parsers.common.read_text_csv`, with every polars failure as SourceParseError.

    (A header that itself names a ``source_row`` column collides with the line-number column
    read_text_csv adds; that is a malformed file, not a crash.)
    """
    try:
        return read_text_csv(path)
    except pl.exceptions.PolarsError as exc:
        raise SourceParseError(path, 1, f"not a readable CSV: {str(exc).splitlines()[0] if str(exc) else type(exc).__name__}") from exc
