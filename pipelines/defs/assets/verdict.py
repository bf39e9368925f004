"""The verdict: R per scenario, frame, basis and device class, with its Monte Carlo range."""

import dagster as dg

from pipelines.defs.checks import staging_checks
from pipelines.defs.resources import Warehouse
from pipelines.defs.tables import SqlTable
from pipelines.warehouse.queries import query_pl
from pipelines.warehouse.tables import preview_md
from schemas.marts import Verdict

VERDICT = SqlTable("marts.verdict", "marts/verdict.sql", Verdict)


@VERDICT.asset(group="marts")
def verdict(warehouse: Warehouse) -> dg.MaterializeResult:
    """The answer to the claim: R per scenario x accounting frame x basis x edge device class.

    Grain: scenario x basis (the headline, and measured_throughput beside it) x device class,
    with the scenario's accounting frame. Deterministic R (compute only, and with the
    scenario's named communication pattern) from marts.fleet_equivalence beside the Monte
    Carlo p05/p50/p95 of the same basis and pattern from marts.uncertainty, and a verdict on the
    range with communication against the paper's 4-8x. The README's verdict table and
    docs/findings.md are rendered from this table.
    """
    con = warehouse.connection()
    result = VERDICT.build(con)
    headline = query_pl(con, "select scenario_id, accounting_frame, device_class, round(reduction_factor, 2) as r, "
                             "round(p05_with_comm, 2) as p05_comm, round(p95_with_comm, 2) as p95_comm, verdict "
                             "from marts.verdict where is_headline order by scenario_id, device_class")
    return dg.MaterializeResult(metadata={**result.metadata, "headline": dg.MetadataValue.md(preview_md(headline, rows=40))})


verdict_checks = staging_checks("marts.verdict", Verdict, joins_sources=False)
