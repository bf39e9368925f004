"""Tornado, multiplier x hours grid and break-even values of the reduction factor."""

import dagster as dg
import polars as pl

from pipelines.lib.checks import staging_checks
from pipelines.lib.metadata import column_metadata
from pipelines.lib.resources import Warehouse
from pipelines.lib.tables import write_table
from pipelines.model.formula import scenario_inputs
from pipelines.model.sensitivity import HOURS, MULTIPLIERS, break_even, grid, tornado
from pipelines.warehouse.queries import query_pl
from pipelines.warehouse.tables import preview_md
from schemas.reviewers import BreakEven, Sensitivity, SensitivityGrid
from schemas.vocabulary import COMPUTE_ONLY

KINDS = {"duckdb", "polars"}
DEPS = [["core", "scenarios"], ["core", "scenario_parameters"]]


def _inputs(warehouse: Warehouse) -> tuple[pl.DataFrame, pl.DataFrame]:
    con = warehouse.connection()
    return scenario_inputs(con), query_pl(con, "select * from core.scenario_parameters")


@dg.asset(key=["marts", "sensitivity"], group_name="reviewers", kinds=KINDS, deps=DEPS, metadata=column_metadata(Sensitivity),
          check_specs=staging_checks("marts.sensitivity", Sensitivity, joins_sources=False))
def sensitivity(warehouse: Warehouse) -> dg.MaterializeResult:
    """Tornado: R with each ranged parameter at its low and at its high value, all others fixed.

    Grain: scenario x edge device class x communication pattern x parameter (every parameter
    with a low/high in core.scenario_parameters). Ranked by swing |R(high) - R(low)|.
    """
    _, parameters = _inputs(warehouse)
    frame = tornado(warehouse.connection(), parameters)
    top = frame.filter((pl.col("pattern") == COMPUTE_ONLY) & (pl.col("rank") <= 3)).select(
        "scenario_id", "device_class", "parameter", "reduction_factor_at_low", "reduction_factor_at_high")
    return write_table(warehouse.connection(), "marts.sensitivity", frame, Sensitivity,
                       {"largest_swings": dg.MetadataValue.md(preview_md(top, rows=40))})


@dg.asset(key=["marts", "sensitivity_grid"], group_name="reviewers", kinds=KINDS, deps=DEPS, metadata=column_metadata(SensitivityGrid),
          check_specs=staging_checks("marts.sensitivity_grid", SensitivityGrid, joins_sources=False))
def sensitivity_grid(warehouse: Warehouse) -> dg.MaterializeResult:
    """R over a grid of device multiplier (0.25-3) x edge training hours per day (1-24).

    Grain: scenario x edge device class x pattern x multiplier x hours. The multiplier
    scales the basis's device count; the hours change the count too (a fleet training fewer
    hours needs more devices for the GPU's work), so under the paper's formula R hardly moves
    with hours: the multiplier is what decides it.
    """
    base, _ = _inputs(warehouse)
    return write_table(warehouse.connection(), "marts.sensitivity_grid", grid(warehouse.connection(), base, MULTIPLIERS, HOURS),
                       SensitivityGrid)


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
