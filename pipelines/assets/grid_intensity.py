"""Grid carbon intensity from Ember, NESO, Electricity Maps and EIA-930 -> staging.grid_intensity."""


import dagster as dg
import polars as pl

from pipelines.checks import staging_checks
from pipelines.parsers.eia930 import parse_eia930_csv
from pipelines.parsers.electricitymaps import parse_electricitymaps_csv, parse_electricitymaps_json
from pipelines.parsers.ember import ember_parser, parse_ember_us_states, zones_from_manifest
from pipelines.parsers.neso import parse_neso_csv
from pipelines.parsers.uk_carbon_intensity import parse_uk_ci_json
from pipelines.staging import SOURCES_KEY, Parser, stage_from_manifest
from pipelines.warehouse import Warehouse
from schemas.grid_intensity import GridIntensity
from schemas.meta import column_metadata

TABLE = "staging.grid_intensity"

#: Manifest ``kind`` -> parser. The Ember parsers read the zone table (kind ``zones``,
#: ``sources/curated/zones.csv``) through the manifest, so its sha256 is verified too.
PARSERS: dict[str, Parser] = {
    "ember_yearly": ember_parser("year", zones_from_manifest),
    "ember_monthly": ember_parser("month", zones_from_manifest),
    "ember_us_states": parse_ember_us_states,
    "neso_csv": parse_neso_csv,
    "uk_ci_json": parse_uk_ci_json,
    "electricitymaps_csv": parse_electricitymaps_csv,
    "electricitymaps_json": parse_electricitymaps_json,
    "eia930_csv": parse_eia930_csv,
}


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
