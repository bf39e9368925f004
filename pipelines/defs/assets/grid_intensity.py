"""Grid carbon intensity from Ember, NESO, Electricity Maps and EIA-930 -> staging.grid_intensity."""


import dagster as dg
import polars as pl

from pipelines.defs.checks import staging_checks
from pipelines.defs.metadata import column_metadata
from pipelines.defs.resources import Warehouse
from pipelines.defs.staging import SOURCES_KEY, stage_from_manifest
from pipelines.ingest.parsers import registry
from pipelines.ingest.staging import Parser
from schemas.grid_intensity import GridIntensity

TABLE = "staging.grid_intensity"

PARSERS: dict[str, Parser] = registry.GRID_PARSERS


def finish(frame: pl.DataFrame) -> pl.DataFrame:
    """Stable order for readers: zone, period, signal, then scope and source."""
    return frame.sort("zone", "period_start", "signal", "emission_scope", "source_id")


def rows_by_zone_md(frame: pl.DataFrame) -> str:
    """Markdown table: rows, first and last period and mean intensity per zone and signal."""
    summary = (
        frame.group_by("zone", "signal", "emission_scope", "resolution")
        .agg(
            pl.len().alias("rows"),
            pl.col("period_start").min().alias("first"),
            pl.col("period_start").max().alias("last"),
            pl.col("gco2e_per_kwh").mean().round(2).alias("mean_gco2e_per_kwh"),
        )
        .sort("zone", "signal", "emission_scope", "resolution")
    )
    lines = ["| zone | signal | scope | resolution | rows | first | last | mean gCO2e/kWh |", "|---|---|---|---|---|---|---|---|"]
    for row in summary.iter_rows(named=True):
        lines.append(
            f"| {row['zone']} | {row['signal']} | {row['emission_scope']} | {row['resolution']} | {row['rows']} "
            f"| {row['first']:%Y-%m-%d %H:%M} | {row['last']:%Y-%m-%d %H:%M} | {row['mean_gco2e_per_kwh']} |"
        )
    return "\n".join(lines)


@dg.asset(
    key=["staging", "grid_intensity"],
    group_name="grid",
    kinds={"duckdb", "polars"},
    deps=[SOURCES_KEY],
    metadata=column_metadata(GridIntensity),
)
def grid_intensity(context: dg.AssetExecutionContext, warehouse: Warehouse) -> dg.MaterializeResult:
    """Carbon intensity of electricity (gCO2e/kWh) per zone and period, from every grid source.

    Grain: one zone x period x signal x emission scope x source. Ember yearly and monthly
    averages per country and region (and US states), NESO's half-hourly GB forecast and
    actual (2023 file and recorded API responses), Electricity Maps hourly direct and
    life-cycle values (DE, FR, US-CAL-CISO, IN-WE 2023; a recorded US-MIDW-MISO response) and
    EIA-930 California ISO production-based hourly values (2022). Zones use Electricity Maps
    ids (ISO alpha-2 for countries); all times are UTC. Scenarios choose annual vs hourly,
    average vs forecast, direct vs life-cycle by filtering ``signal``, ``resolution`` and
    ``emission_scope``.
    """
    staged: list[pl.DataFrame] = []

    def keep(frame: pl.DataFrame) -> pl.DataFrame:
        out = finish(frame)
        staged.append(out)
        return out

    result = stage_from_manifest(context, warehouse, TABLE, GridIntensity, PARSERS, finish=keep)
    metadata = dict(result.metadata or {})
    metadata["rows_by_zone"] = dg.MetadataValue.md(rows_by_zone_md(staged[0]))
    metadata["zones"] = staged[0].get_column("zone").n_unique()
    return dg.MaterializeResult(metadata=metadata)


grid_intensity_checks = staging_checks(TABLE, GridIntensity)
