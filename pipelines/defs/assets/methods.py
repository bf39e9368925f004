"""The model's methods as warehouse tables: network methods, the methods each frame admits, the patterns' ends and
the claim's bounds."""

from __future__ import annotations

import dagster as dg
import polars as pl

from pipelines.defs.checks import staging_checks
from pipelines.defs.metadata import column_metadata
from pipelines.defs.resources import Warehouse
from pipelines.defs.tables import write_table
from pipelines.model.formula import frame_method_rows, pattern_rows
from schemas.methods import Claim, FrameNetworkMethods, NetworkMethods, Patterns
from schemas.vocabulary import CLAIM_HIGH, CLAIM_LOW, NETWORK_METHODS

#: table -> its pandera model
TABLES = {"core.network_methods": NetworkMethods, "core.frame_network_methods": FrameNetworkMethods, "core.patterns": Patterns,
          "core.claim": Claim}


@dg.multi_asset(
    specs=[dg.AssetSpec(key=table.split("."), group_name="scenarios", kinds={"duckdb", "polars"},
                        description=(model.__doc__ or "").splitlines()[0], metadata=column_metadata(model))
           for table, model in TABLES.items()],
    name="model_methods",
    check_specs=[spec for table, model in TABLES.items() for spec in staging_checks(table, model, joins_sources=False)],
    can_subset=False,
)
def model_methods(warehouse: Warehouse):  # type: ignore[no-untyped-def]
    """The model's methods as rows, from schemas/vocabulary.py: what sql/model/evaluate.sql joins, for analysts to query.

    core.network_methods: how network energy is counted; core.frame_network_methods: which of
    them each accounting frame admits (its headline first) and whether it resizes a fleet to its
    link; core.patterns: the home and server ends of each pattern's bytes; core.claim: the claim's
    bounds, which marts.verdict, marts.fleet_equivalence and marts.paper_reproduction read.
    """
    con = warehouse.connection()
    methods = pl.DataFrame({"network_method": list(NETWORK_METHODS), "description": list(NETWORK_METHODS.values())})
    yield write_table(con, "core.network_methods", methods, NetworkMethods)
    yield write_table(con, "core.frame_network_methods", pl.from_arrow(frame_method_rows()), FrameNetworkMethods)
    yield write_table(con, "core.patterns", pl.from_arrow(pattern_rows()).rename({"name": "pattern"}), Patterns)
    yield write_table(con, "core.claim", pl.DataFrame({"claim_low": [CLAIM_LOW], "claim_high": [CLAIM_HIGH]}), Claim)
