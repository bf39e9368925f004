"""staging.network_energy: literature values for WiFi radios, networks and home routers."""

from __future__ import annotations

import pandera.polars as pa
import polars as pl

from schemas.base import Provenance, range_contains_value, weak_rows_explained
from schemas.statuses import STATUS_TEXT, STATUSES

QUANTITIES = ["radio_power", "network_intensity", "router_embodied", "router_power", "network_baseline_power",
              "network_marginal_power"]
#: A power model (baseline W + W per Mbit/s) gives a network's marginal energy per GB:
#: W per Mbit/s x 8,000 Mbit per GB (consequential frame); kWh/GB values are averages
#: (attributional frame).
UNITS = {"radio_power": "W", "network_intensity": "kWh/GB", "router_embodied": "kgCO2e", "router_power": "W",
         "network_baseline_power": "W", "network_marginal_power": "W/(Mbit/s)"}
FRAMES = ["attributional", "consequential", "any"]


class NetworkEnergy(Provenance):
    """Grain: one literature value (a quantity, for a scope, in a year, from one study)."""

    #: The warehouse table(s) this model is the contract of (pipelines.warehouse.dictionary finds it so).
    __tables__ = ("staging.network_energy",)

    factor_id: str = pa.Field(unique=True, description="Stable id of this value, usable as a factor-set choice.")
    factor_set: str = pa.Field(description="The set of values this one belongs to, e.g. malmodin2020_fixed_power_model (a baseline and its marginal powers).")
    frame: str = pa.Field(isin=FRAMES, description="Accounting frame the value serves: attributional (averages, allocated), consequential (marginal) or any.")
    quantity: str = pa.Field(isin=QUANTITIES, description=" | ".join(QUANTITIES) + ".")
    scope: str = pa.Field(description="What the value covers, e.g. wifi_tx, fixed_core_access, mobile, home_router.")
    value: float = pa.Field(gt=0, description="The value, in `unit`.")
    unit: str = pa.Field(isin=sorted(set(UNITS.values())), description="W | W/(Mbit/s) | kWh/GB | kgCO2e.")
    low: float = pa.Field(nullable=True, gt=0, description="Low end of the range the study gives, if any.")
    high: float = pa.Field(nullable=True, gt=0, description="High end of the range, if any.")
    year: int = pa.Field(in_range={"min_value": 1990, "max_value": 2100}, description="Year the value refers to.")
    region: str = pa.Field(nullable=True, description="Region, if the study is regional.")
    status: str = pa.Field(isin=STATUSES, description=STATUS_TEXT + ".")
    citation: str = pa.Field(description="Study or report the value comes from.")
    citation_url: str = pa.Field(str_startswith="http", description="Link to it.")
    notes: str = pa.Field(nullable=True, description="How the value was read or derived.")

    @pa.dataframe_check(name="unit_matches_quantity", description="unit matches quantity")
    @classmethod
    def unit_matches_quantity(cls, data: pa.PolarsData) -> pl.LazyFrame:
        expected = pl.col("quantity").replace_strict(UNITS, default=None)
        return data.lazyframe.select(pl.col("unit") == expected)

    @pa.dataframe_check(name="range_contains_value", description="low <= value <= high where a range is given")
    @classmethod
    def range_contains_value(cls, data: pa.PolarsData) -> pl.LazyFrame:
        return range_contains_value(data, "value", "low", "high")

    @pa.dataframe_check(name="derived_or_assumed_rows_explain", description="a derived or assumed value has notes")
    @classmethod
    def derived_or_assumed_rows_explain(cls, data: pa.PolarsData) -> pl.LazyFrame:
        return weak_rows_explained(data)

    @pa.dataframe_check(name="numbers_are_finite", description="value, low and high are finite numbers")
    @classmethod
    def numbers_are_finite(cls, data: pa.PolarsData) -> pl.LazyFrame:
        return data.lazyframe.select(pl.all_horizontal([pl.col(c).is_finite().fill_null(True) for c in ("value", "low", "high")]))
