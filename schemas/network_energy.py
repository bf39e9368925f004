"""staging.network_energy: literature values for WiFi radios, networks and home routers."""

from __future__ import annotations

import pandera.polars as pa

from schemas.base import Provenance

QUANTITIES = ["radio_power", "network_intensity", "router_embodied", "router_power"]
UNITS = {"radio_power": "W", "network_intensity": "kWh/GB", "router_embodied": "kgCO2e", "router_power": "W"}
STATUSES = ["paper", "primary", "derived", "assumed"]


class NetworkEnergy(Provenance):
    """Grain: one literature value (a quantity, for a scope, in a year, from one study)."""

    factor_id: str = pa.Field(unique=True, description="Stable id of this value, usable as a factor-set choice.")
    quantity: str = pa.Field(isin=QUANTITIES, description="radio_power | network_intensity | router_embodied | router_power.")
    scope: str = pa.Field(description="What the value covers, e.g. wifi_tx, fixed_core_access, mobile, home_router.")
    value: float = pa.Field(gt=0, description="The value, in `unit`.")
    unit: str = pa.Field(isin=sorted(set(UNITS.values())), description="W | kWh/GB | kgCO2e.")
    low: float = pa.Field(nullable=True, gt=0, description="Low end of the range the study gives, if any.")
    high: float = pa.Field(nullable=True, gt=0, description="High end of the range, if any.")
    year: int = pa.Field(in_range={"min_value": 1990, "max_value": 2100}, description="Year the value refers to.")
    region: str = pa.Field(nullable=True, description="Region, if the study is regional.")
    status: str = pa.Field(isin=STATUSES, description="paper | primary | derived | assumed.")
    citation: str = pa.Field(description="Study or report the value comes from.")
    citation_url: str = pa.Field(str_startswith="http", description="Link to it.")
    notes: str = pa.Field(nullable=True, description="How the value was read or derived.")

    class Config:
        strict = True

    @pa.dataframe_check(description="unit matches quantity")
    @classmethod
    def unit_matches_quantity(cls, data: pa.PolarsData):  # type: ignore[no-untyped-def]
        import polars as pl

        expected = pl.col("quantity").replace_strict(UNITS, default=None)
        return data.lazyframe.select(pl.col("unit") == expected)
