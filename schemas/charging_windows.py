"""marts.charging_windows: when to charge (and train) for the least carbon, per zone."""

from __future__ import annotations

import pandera.polars as pa
import polars as pl
from pandera.engines import polars_engine as pe

from schemas.base import Provenance

UTC_TS = pe.DateTime(time_zone="UTC")
WINDOW_KINDS = ["cleanest", "overnight", "all_day"]


class ChargingWindows(Provenance):
    """Grain: zone x emission scope x window kind (cleanest, overnight, all_day).

    From every half-hourly and hourly value of staging.grid_intensity and
    staging.grid_intensity_live (an actual before a forecast), averaged to UTC hours and then
    to an hour-of-day profile over every day of data. ``cleanest`` is the contiguous window of
    the configured length (default 8 h) with the lowest profile mean; ``overnight`` is the
    fixed window from 00:00 UTC (configurable) of the same length; ``all_day`` is the daily
    mean. Hours are UTC, not local time. ``source_id`` is the source that gave most of the
    zone's periods, so a scenario can reference a row with ``factor_ref``
    (``marts.charging_windows.window_id=DE.lifecycle.cleanest.mean_gco2e_per_kwh``).
    """

    #: The warehouse table(s) this model is the contract of (pipelines.warehouse.dictionary finds it so).
    __tables__ = ("marts.charging_windows",)

    window_id: str = pa.Field(unique=True, description="zone.emission_scope.window_kind, e.g. DE.lifecycle.cleanest: the factor_ref key.")
    zone: str = pa.Field(description="Zone id (as in staging.grid_intensity).")
    emission_scope: str = pa.Field(isin=["direct", "lifecycle", "unspecified"], description="direct | lifecycle | unspecified.")
    window_kind: str = pa.Field(isin=WINDOW_KINDS, description="cleanest | overnight | all_day.")
    window_hours: int = pa.Field(in_range={"min_value": 1, "max_value": 24}, description="Window length, h.")
    window_start_hour_utc: int = pa.Field(in_range={"min_value": 0, "max_value": 23}, description="First hour of the window, UTC hour of the day.")
    window_end_hour_utc: int = pa.Field(in_range={"min_value": 0, "max_value": 23}, description="Hour the window ends (exclusive), UTC; may be smaller than the start (wraps past midnight).")
    mean_gco2e_per_kwh: float = pa.Field(ge=0, description="Mean carbon intensity over the window, gCO2e/kWh.")
    daily_mean_gco2e_per_kwh: float = pa.Field(ge=0, description="Mean of the 24-hour profile, gCO2e/kWh.")
    annual_average_gco2e_per_kwh: float = pa.Field(ge=0, description="Time-weighted mean of every hour of the zone's data (a calendar year for the 2023 series), gCO2e/kWh.")
    saving_vs_annual_average: float = pa.Field(description="1 - window mean / annual average (0.2 = 20% less carbon per kWh).")
    saving_vs_daily_mean: float = pa.Field(description="1 - window mean / daily mean.")
    n_hours: int = pa.Field(ge=24, description="Hours of data behind the profile.")
    n_days: int = pa.Field(ge=1, description="Distinct UTC days of data.")
    first_period_start: UTC_TS = pa.Field(description="First hour of data (UTC).")  # type: ignore[valid-type]
    last_period_end: UTC_TS = pa.Field(description="End of the last hour of data (UTC).")  # type: ignore[valid-type]
    signals: str = pa.Field(description="Signals used: actual, or actual+forecast where some periods have only a forecast.")

    @pa.dataframe_check(name="cleanest_is_lowest", description="the cleanest window's mean is at most the overnight window's and the daily mean")
    @classmethod
    def cleanest_is_lowest(cls, data: pa.PolarsData) -> pl.LazyFrame:
        """No window of a zone and scope is cleaner than its ``cleanest`` row (at the same length)."""
        lf = data.lazyframe
        best = pl.col("mean_gco2e_per_kwh").filter(pl.col("window_kind") == "cleanest").min().over("zone", "emission_scope")
        return lf.select((pl.col("mean_gco2e_per_kwh") >= best - 1e-9).fill_null(True))
