"""WiFi and network energy: literature values -> staging.network_energy."""


import dagster as dg

from pipelines.defs.checks import staging_checks
from pipelines.defs.metadata import column_metadata
from pipelines.defs.resources import Warehouse
from pipelines.defs.staging import SOURCES_KEY, stage_from_manifest
from pipelines.ingest.parsers import registry
from schemas.network_energy import NetworkEnergy

TABLE = "staging.network_energy"
PARSERS = registry.NETWORK_ENERGY_PARSERS


@dg.asset(
    key=["staging", "network_energy"],
    group_name="network",
    kinds={"duckdb", "polars"},
    deps=[SOURCES_KEY],
    metadata=column_metadata(NetworkEnergy),
)
def network_energy(context: dg.AssetExecutionContext, warehouse: Warehouse) -> dg.MaterializeResult:
    """Literature values for the energy of moving training data over WiFi and networks.

    Grain: one value from one study: per-device radio power (the paper's 0.5 W, and a real
    phone's WiFi idle/receive/transmit power from its Android power profile), network energy
    intensity in kWh/GB across studies and years (Aslan et al. 2015 and its 2020 trend, EU
    fixed and mobile 2020), and home-router embodied carbon and average power from Google's
    product reports. Each row has its citation, year and status (derived rows show their
    arithmetic in ``notes``); the ``factor_id`` is what scenarios select.
    """
    return stage_from_manifest(context, warehouse, TABLE, NetworkEnergy, PARSERS, finish=lambda f: f.sort("quantity", "scope", "year"))


network_energy_checks = staging_checks(TABLE, NetworkEnergy)
