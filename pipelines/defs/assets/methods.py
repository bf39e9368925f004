"""The model's methods as warehouse tables: accounting frames and their rules, the network methods each admits,
workload kinds, embodied policies, equivalence bases, verdict categories and the patterns' ends; and core.claim, the
bounds of the cloud/edge ratio claims of the claims registry."""

from __future__ import annotations

import dagster as dg
import pandera.polars as pa
import polars as pl

from pipelines.ingest.manifest import ManifestError, load_manifest
from pipelines.lib.checks import staging_checks
from pipelines.lib.metadata import column_metadata
from pipelines.lib.resources import Warehouse
from pipelines.lib.tables import sql_table, write_table
from pipelines.model.methods import CLAIM_PARAMS, reference_tables
from pipelines.warehouse.dictionary import TABLES as DICTIONARY
from schemas.patterns import PATTERNS_SOURCE_ID, read_pattern_rows

#: table -> its pandera model (the dictionary's): every reference table of the vocabulary
TABLES: dict[str, type[pa.DataFrameModel]] = {table: DICTIONARY[table] for table in reference_tables()}
#: core.claim: the registry's cloud/edge ratio claims (sql/core/claim.sql), one row each.
CLAIM = sql_table("core.claim")


@dg.multi_asset(
    specs=[dg.AssetSpec(key=table.split("."), group_name="scenarios", kinds={"duckdb", "polars"},
                        description=(model.__doc__ or "").splitlines()[0], metadata=column_metadata(model))
           for table, model in TABLES.items()],
    name="model_methods",
    check_specs=[spec for table, model in TABLES.items() for spec in staging_checks(table, model, joins_sources=False)],
    can_subset=False,
)
def model_methods(warehouse: Warehouse):  # type: ignore[no-untyped-def]
    """The model's methods as rows, from schemas/vocabulary.py (pipelines/model/methods.py): what
    sql/core/model_evaluation.sql joins, what the scenario files name, for analysts to query.

    core.frames: each accounting frame's rules (cloud embodied charge, network energy rule,
    fleet resizing, the embodied policy it requires); core.frame_network_methods: the network
    methods each frame admits (its headline first); core.workload_kinds, core.embodied_policies,
    core.bases and core.verdicts: the other names a scenario or a mart uses; core.network_methods:
    how network energy is counted; core.patterns: the home and server ends of each pattern's
    bytes (sources/curated/patterns.csv).
    """
    con = warehouse.connection()
    # core.patterns: the rows of the patterns' source file, its sha256 checked against the manifest
    entries = [e for e in load_manifest() if e.id == PATTERNS_SOURCE_ID]
    if len(entries) != 1:
        raise ManifestError("sources/manifest", f"the build needs the entry {PATTERNS_SOURCE_ID!r} (sources/curated/patterns.csv); "
                                                "restore sources/manifest/patterns.toml")
    for table, rows in reference_tables(read_pattern_rows(entries[0].verified_file())).items():
        # each table's pandera check runs in this step, on the rows just written (check_specs)
        yield write_table(con, table, pl.from_arrow(rows), TABLES[table])


@CLAIM.asset(group="claims")
def claim(warehouse: Warehouse) -> dg.MaterializeResult:
    """The claims marts.verdict judges: every claim of staging.claims that is a cloud/edge ratio R, its published bounds
    as claim_low and claim_high, with the verdict's feasibility threshold (sql/core/claim.sql). A scenario names the
    claim it tests (claim_id); marts.verdict, marts.fleet_equivalence and marts.paper_reproduction join its row."""
    return CLAIM.build(warehouse.connection(), CLAIM_PARAMS)
