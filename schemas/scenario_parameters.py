"""core.scenario_parameters: every free parameter of the model, per scenario, as data."""

from __future__ import annotations

import pandera.polars as pa

from schemas.base import Provenance

STATUSES = ["paper", "primary", "derived", "assumed"]
DISTRIBUTIONS = ["point", "uniform", "triangular", "normal", "lognormal"]


class ScenarioParameters(Provenance):
    """Grain: one parameter of one scenario (after inheritance from the scenario it extends).

    ``value`` is what the deterministic marts use. ``low``/``high`` and ``distribution``
    describe the plausible range for sensitivity and Monte Carlo. ``factor_ref`` names the
    staged row the value was read from (``table.key_column=key.value_column``), so a value
    chosen from a factor set can be traced with SQL; ``source_id`` is then that row's source.
    """

    scenario_id: str = pa.Field(description="Scenario, e.g. paper_text, paper_figure, vendor_fp32.")
    parameter: str = pa.Field(str_matches=r"^[a-z][a-z0-9_]*$", description="Parameter name; its unit is in `unit`.")
    value: float = pa.Field(description="Value used by the deterministic marts.")
    unit: str = pa.Field(description="Unit of value, low and high.")
    low: float = pa.Field(nullable=True, description="Plausible low end (sensitivity, Monte Carlo).")
    high: float = pa.Field(nullable=True, description="Plausible high end.")
    distribution: str = pa.Field(isin=DISTRIBUTIONS, description="point | uniform | triangular | normal | lognormal.")
    status: str = pa.Field(isin=STATUSES, description="paper | primary | derived | assumed.")
    factor_ref: str = pa.Field(nullable=True, description="Staged row the value was taken from, e.g. device_specs.device_id=nvidia-h100-sxm.tdp_w.")
    reasoning: str = pa.Field(nullable=True, description="Why this value: citation, derivation or the assumption made.")
    range_ref: str = pa.Field(nullable=True, description="Measured mean whose relative 95% CI set low/high, e.g. benchmark_series.series_id=table1_phone.mean_power_w_mean.")
    defined_in: str = pa.Field(description="Scenario file that set the value (itself or the one it extends).")

    class Config:
        strict = True
        unique = ["scenario_id", "parameter"]

    @pa.dataframe_check(description="low <= value <= high when a range is given")
    @classmethod
    def value_inside_range(cls, data: pa.PolarsData):  # type: ignore[no-untyped-def]
        import polars as pl

        return data.lazyframe.select(
            (pl.col("low").is_null() | (pl.col("low") <= pl.col("value")))
            & (pl.col("high").is_null() | (pl.col("value") <= pl.col("high")))
        )
