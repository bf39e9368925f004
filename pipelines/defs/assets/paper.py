"""The audited paper's claims and the OPT model family -> staging.paper_claims, staging.model_configs."""

import dagster as dg

from pipelines.defs.checks import staging_checks
from pipelines.defs.metadata import column_metadata
from pipelines.defs.resources import Warehouse
from pipelines.defs.staging import SOURCES_KEY, stage_from_manifest
from pipelines.ingest.parsers import registry
from schemas.paper_claims import ModelConfigs, PaperClaims


@dg.asset(
    key=["staging", "paper_claims"],
    group_name="paper",
    kinds={"duckdb", "polars"},
    deps=[SOURCES_KEY],
    metadata=column_metadata(PaperClaims),
)
def paper_claims(context: dg.AssetExecutionContext, warehouse: Warehouse) -> dg.MaterializeResult:
    """Every number the paper publishes that this project recomputes, as the paper states it.

    Grain: one claim (claim_id). The value, its unit, where it appears (table/figure) and the
    relative tolerance within which a recomputation counts as reproduced.
    """
    return stage_from_manifest(
        context, warehouse, "staging.paper_claims", PaperClaims, registry.PAPER_CLAIMS_PARSERS
    )


@dg.asset(
    key=["staging", "model_configs"],
    group_name="paper",
    kinds={"duckdb", "polars"},
    deps=[SOURCES_KEY],
    metadata=column_metadata(ModelConfigs),
)
def model_configs(context: dg.AssetExecutionContext, warehouse: Warehouse) -> dg.MaterializeResult:
    """OPT model sizes 125M to 66B with layers and hidden size, for the scaling figure.

    Grain: one model configuration (model_id).
    """
    return stage_from_manifest(
        context, warehouse, "staging.model_configs", ModelConfigs, registry.MODEL_CONFIGS_PARSERS
    )


paper_claims_checks = staging_checks("staging.paper_claims", PaperClaims)
model_configs_checks = staging_checks("staging.model_configs", ModelConfigs)
