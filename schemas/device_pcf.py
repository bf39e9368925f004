"""staging.device_pcf: manufacturer product carbon footprints and named embodied-carbon factors."""

from __future__ import annotations

import datetime as dt

import pandera.polars as pa
import polars as pl

from schemas.base import FiniteProvenance, weak_rows_explained
from schemas.statuses import STATUS_TEXT, STATUSES

CATEGORIES = ["workplace", "home", "datacenter"]
PRECISIONS = ["day", "month", "year"]
SHARE_COLUMNS = ("production_share", "use_share", "transport_share", "eol_share")
#: Reports publish each life-cycle share rounded to a whole percent, so four shares can miss
#: 100% by up to 4 x 0.5% = 2% (Apple's 16-inch MacBook Pro report: 74 + 25 + 1 + 1 = 101%).
SHARES_TOLERANCE = 0.02
DEVICE_ID_PATTERN = r"^[a-z0-9]+(-[a-z0-9]+)*$"


def shares_sum_expr() -> pl.Expr:
    """Sum of the life-cycle shares that are given; null when none is given."""
    shares = [pl.col(c) for c in SHARE_COLUMNS]
    return pl.when(pl.any_horizontal([s.is_not_null() for s in shares])).then(pl.sum_horizontal(shares).round(6))


def shares_sum_ok_expr() -> pl.Expr:
    """True where ``shares_sum`` is consistent with the stated tolerance.

    Given shares may never add up to more than 1 + tolerance. When all four shares are given
    they must also reach 1 - tolerance (a complete split that covers 90% of the total is not
    a rounding artefact). With fewer shares given, the missing ones are unknown, so only the
    upper bound applies. Rows with a share outside [0, 1] pass here: the share's own range
    check reports them.
    """
    total = pl.col("shares_sum")
    complete = pl.all_horizontal([pl.col(c).is_not_null() for c in SHARE_COLUMNS])
    # A share outside [0, 1] is reported by that share's own range check, not here.
    out_of_range = pl.any_horizontal([~pl.col(c).is_between(0, 1) for c in SHARE_COLUMNS]).fill_null(False)
    within = (total <= 1 + SHARES_TOLERANCE) & (~complete | (total >= 1 - SHARES_TOLERANCE))
    return total.is_null() | out_of_range | within


class DevicePcf(FiniteProvenance):
    """Grain: one product-footprint report (one product configuration) or one named embodied factor.

    Manufacturer reports give a whole-life-cycle total and its split into production, use,
    transport and end of life. Named factor sets (``factor_set``) are single embodied-carbon
    figures that tools use for a device (e.g. five published values for one H100); scenarios
    choose among them.
    """

    #: The warehouse table(s) this model is the contract of (pipelines.warehouse.dictionary finds it so).
    __tables__ = ("staging.device_pcf",)

    device_id: str = pa.Field(
        str_matches=DEVICE_ID_PATTERN,
        description="Device the figure applies to: a shared id (e.g. nvidia-h100-sxm, apple-m2-pro) or, for "
        "compilation rows, a slug of manufacturer and cleaned model name (unique per row).",
    )
    manufacturer: str = pa.Field(description="Manufacturer of the product.")
    model: str = pa.Field(description="Product name, cleaned of known source artefacts.")
    model_raw: str = pa.Field(description="Product name exactly as written in the source.")
    category: str = pa.Field(isin=CATEGORIES, description="workplace | home | datacenter.")
    subcategory: str = pa.Field(nullable=True, description="Product type, lower case (laptop, smartphone, server, gpu, ...).")
    total_kgco2e: float = pa.Field(gt=0, description="Life-cycle (or, for factor sets, embodied) carbon, kgCO2e per unit.")
    production_share: float = pa.Field(nullable=True, in_range={"min_value": 0, "max_value": 1}, description="Fraction of the total from production (embodied).")
    use_share: float = pa.Field(nullable=True, in_range={"min_value": 0, "max_value": 1}, description="Fraction of the total from use.")
    transport_share: float = pa.Field(nullable=True, in_range={"min_value": 0, "max_value": 1}, description="Fraction of the total from transport.")
    eol_share: float = pa.Field(nullable=True, in_range={"min_value": 0, "max_value": 1}, description="Fraction of the total from end of life.")
    shares_sum: float = pa.Field(
        nullable=True,
        ge=0,
        description=f"Derived: sum of the given shares (null if none). Must not exceed 1 + {SHARES_TOLERANCE}; "
        f"with all four given, must lie within 1 +/- {SHARES_TOLERANCE} (shares are rounded).",
    )
    lifetime_years: float = pa.Field(nullable=True, gt=0, le=50, description="Use period the report assumes, years.")
    yearly_use_kwh: float = pa.Field(nullable=True, ge=0, description="Annual energy use the report assumes, kWh/year.")
    use_location: str = pa.Field(nullable=True, description="Region whose grid the use phase assumes (WW = worldwide, EU, US, ...).")
    report_date: dt.date = pa.Field(nullable=True, description="Date of the report; see report_date_precision.")
    report_date_precision: str = pa.Field(
        nullable=True, isin=PRECISIONS, description="day | month | year: how much of report_date the source gives (month -> 1st, year -> 1 Jan)."
    )
    factor_set: str = pa.Field(nullable=True, description="Id of a named embodied-carbon factor set, usable as a scenario choice; null for plain reports.")
    scope_note: str = pa.Field(nullable=True, description="What the figure covers (configuration, boundary) and any cleaning applied.")
    status: str = pa.Field(nullable=True, isin=STATUSES, description=STATUS_TEXT + ".")
    citation: str = pa.Field(nullable=True, description="Report or study the figure comes from.")
    citation_url: str = pa.Field(nullable=True, str_startswith="http", description="Link to the report or study.")
    notes: str = pa.Field(nullable=True, description="Arithmetic or reasoning behind a derived or assumed figure.")

    @pa.dataframe_check(name="shares_sum_within_tolerance", description="shares add up to 1 within the rounding tolerance")
    @classmethod
    def shares_sum_within_tolerance(cls, data: pa.PolarsData) -> pl.LazyFrame:
        return data.lazyframe.select(shares_sum_ok_expr())

    @pa.dataframe_check(name="shares_sum_matches_shares", description="shares_sum is the sum of the given shares")
    @classmethod
    def shares_sum_matches_shares(cls, data: pa.PolarsData) -> pl.LazyFrame:
        expected = shares_sum_expr()
        got = pl.col("shares_sum")
        return data.lazyframe.select((got.is_null() & expected.is_null()) | ((got - expected).abs() <= 1e-6).fill_null(False))

    @pa.dataframe_check(name="report_date_has_precision", description="report_date and report_date_precision are both given or both empty")
    @classmethod
    def report_date_has_precision(cls, data: pa.PolarsData) -> pl.LazyFrame:
        return data.lazyframe.select(pl.col("report_date").is_null() == pl.col("report_date_precision").is_null())

    @pa.dataframe_check(name="one_row_per_device_or_factor_set", description="factor_set ids are unique, and so are device ids of plain reports")
    @classmethod
    def one_row_per_device_or_factor_set(cls, data: pa.PolarsData) -> pl.LazyFrame:
        key = pl.when(pl.col("factor_set").is_not_null()).then(pl.lit("factor:") + pl.col("factor_set")).otherwise(pl.lit("device:") + pl.col("device_id"))
        return data.lazyframe.select(~key.is_duplicated())

    @pa.dataframe_check(name="factor_sets_are_sourced", description="a named factor set has a status, a citation and a citation_url")
    @classmethod
    def factor_sets_are_sourced(cls, data: pa.PolarsData) -> pl.LazyFrame:
        sourced = pl.col("status").is_not_null() & pl.col("citation").is_not_null() & pl.col("citation_url").is_not_null()
        return data.lazyframe.select(pl.col("factor_set").is_null() | sourced)

    @pa.dataframe_check(name="derived_or_assumed_rows_explain", description="a derived or assumed figure has notes")
    @classmethod
    def derived_or_assumed_rows_explain(cls, data: pa.PolarsData) -> pl.LazyFrame:
        return weak_rows_explained(data)
