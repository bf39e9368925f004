"""Break-even values of the reduction factor: the one what-if that searches, so it evaluates the model in Python
(the tornado and the multiplier x hours grid are declared SQL over their families' rows of core.model_evaluation:
sql/marts/sensitivity.sql, sensitivity_grid.sql)."""

import dagster as dg
import polars as pl

from pipelines.lib.checks import staging_checks
from pipelines.lib.metadata import column_metadata
from pipelines.lib.resources import Warehouse
from pipelines.lib.tables import write_table
from pipelines.model.formula import scenario_inputs
from pipelines.model.sensitivity import break_even
from pipelines.warehouse.queries import query_pl
from pipelines.warehouse.tables import preview_md
from schemas.reviewers import BreakEven
from schemas.vocabulary import COMPUTE_ONLY

KINDS = {"duckdb", "polars"}
DEPS = [["core", "scenarios"], ["core", "scenario_parameters"], ["core", "model_evaluation"]]


def _inputs(warehouse: Warehouse) -> tuple[pl.DataFrame, pl.DataFrame]:
    con = warehouse.connection()
    return scenario_inputs(con), query_pl(con, "select * from core.scenario_parameters")


@dg.asset(key=["marts", "break_even"], group_name="reviewers", kinds=KINDS, deps=DEPS, metadata=column_metadata(BreakEven),
          check_specs=staging_checks("marts.break_even", BreakEven, joins_sources=False))
def break_even_values(warehouse: Warehouse) -> dg.MaterializeResult:
    """Per parameter, the value at which R falls to 1 (no saving) and to 4 (the paper's low end).

    Grain: scenario x edge device class x pattern (compute only; the paper's radio) x
    parameter that moves R. Found by a log-spaced scan and log-scale refinement over the model's one
    formula; the root is substituted back and R there is stored.
    """
    base, parameters = _inputs(warehouse)
    frame = break_even(warehouse.connection(), base, parameters)
    multiplier = frame.filter((pl.col("parameter") == "device_multiplier") & (pl.col("pattern") == COMPUTE_ONLY)).select(
        "scenario_id", "device_class", "baseline_reduction_factor", "value_r1", "value_r4")
    return write_table(warehouse.connection(), "marts.break_even", frame, BreakEven,
                       {"device_multiplier": dg.MetadataValue.md(preview_md(multiplier, rows=40))})
