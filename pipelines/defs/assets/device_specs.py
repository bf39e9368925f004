"""Device specifications (peak FLOPS, memory, power) -> staging.device_specs."""


import dagster as dg

from pipelines.defs.checks import staging_checks
from pipelines.defs.metadata import column_metadata
from pipelines.defs.resources import Warehouse
from pipelines.defs.staging import SOURCES_KEY, stage_from_manifest
from pipelines.ingest.parsers import registry
from schemas.device_specs import DeviceSpecs

TABLE = "staging.device_specs"
PARSERS = registry.DEVICE_SPECS_PARSERS


@dg.asset(
    key=["staging", "device_specs"],
    group_name="device_specs",
    kinds={"duckdb", "polars"},
    deps=[SOURCES_KEY],
    metadata=column_metadata(DeviceSpecs),
)
def device_specs(context: dg.AssetExecutionContext, warehouse: Warehouse) -> dg.MaterializeResult:
    """Peak compute, memory bandwidth and capacity, and TDP of the devices the audit compares.

    Grain: one device spec variant (``device_id`` unique). Variants of one device share
    ``base_device_id``, the id other tables use: the M2 Pro's 19- and 16-core GPU bins, and the
    two published Adreno 660 FP32 figures (1.38 and 1.72 TFLOPS) of the Snapdragon 888. FLOPS
    are dense peaks per precision; every row cites its datasheet, and ``status``/``notes`` say
    which figures are derived or assumed and why a figure is missing.
    """
    return stage_from_manifest(context, warehouse, TABLE, DeviceSpecs, PARSERS, finish=lambda f: f.sort("base_device_id", "device_id"))


device_specs_checks = staging_checks(TABLE, DeviceSpecs)
