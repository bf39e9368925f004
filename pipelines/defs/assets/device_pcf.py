"""Manufacturer product footprints and embodied-carbon factor sets -> staging.device_pcf."""


import dagster as dg

from pipelines.defs.checks import staging_checks
from pipelines.defs.metadata import column_metadata
from pipelines.defs.resources import Warehouse
from pipelines.defs.staging import SOURCES_KEY, stage_from_manifest
from pipelines.ingest.parsers import registry
from schemas.device_pcf import DevicePcf

TABLE = "staging.device_pcf"
PARSERS = registry.DEVICE_PCF_PARSERS


@dg.asset(
    key=["staging", "device_pcf"],
    group_name="manufacturer_reports",
    kinds={"duckdb", "polars"},
    deps=[SOURCES_KEY],
    metadata=column_metadata(DevicePcf),
)
def device_pcf(context: dg.AssetExecutionContext, warehouse: Warehouse) -> dg.MaterializeResult:
    """Product carbon footprints from manufacturers' reports, and named embodied-carbon factors.

    Grain: one product-footprint report (one product configuration: total kgCO2e over the life
    cycle, its production / use / transport / end-of-life shares, assumed lifetime and use
    region, report date with its precision) or one named embodied factor (``factor_set``, e.g.
    the five published H100 embodied figures a scenario can choose between). Rows come from
    Boavizta's compilation of manufacturer PCF sheets and from a curated file of the reports
    the paper uses; rows whose shares do not add up are quarantined with the reason.
    """
    return stage_from_manifest(
        context, warehouse, TABLE, DevicePcf, PARSERS, finish=lambda f: f.sort("device_id", "factor_set", nulls_last=True)
    )


device_pcf_checks = staging_checks(TABLE, DevicePcf)
