"""Parameter sets made in Python (Monte Carlo and Sobol draws, a search's substituted points) as the tables the
model reads.

The draws are drawn in Python (numpy streams, one per scenario and parameter); they enter the
database as temporary tables (:func:`pipelines.warehouse.tables.load_frame`), split as drawn
(one row per draw: only the drawn columns) and constant (one row per scenario), so 50,000 draws
do not copy every constant parameter. Two views join the two into the
parameter sets and device rows :func:`pipelines.model.formula.model_view` evaluates (sql/model/draw_inputs.sql, draw_devices.sql).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import NamedTuple

import duckdb
import polars as pl
import pyarrow as pa

from pipelines.model.device_rows import KEYS, device_classes, device_rows
from pipelines.paths import sql_text
from pipelines.warehouse.tables import load_frame
from schemas.vocabulary import DEVICE_FIELDS

#: The temporary tables and views of the draws, dropped when the evaluation ends.
_TABLES = ("model_draws", "model_constants", "model_device_draws", "model_device_constants", "model_set_devices")


class ParameterSets(NamedTuple):
    """A view of parameter sets and the view of their device rows (names), as :func:`load_split_sets` makes them."""

    inputs: str
    devices: str


def load_split_sets(con: duckdb.DuckDBPyConnection, drawn: pa.Table, constants: pl.DataFrame,
                    devices: pl.DataFrame | None = None) -> ParameterSets:
    """Parameter sets made in Python as temporary tables, and the views of the sets and their device rows.

    ``drawn``: one row per set (scenario_id, variant_id and the columns that vary: drawn, or overridden);
    ``constants``: one row per scenario, every other parameter. A device field is wholly in one of the two.
    ``devices``: the sets' device rows where the caller has them (:func:`device_rows` of the whole sets),
    else they are made from the two parts. Replaces the tables of an earlier call.
    """
    load_frame(con, "temp.model_draws", drawn)
    load_frame(con, "temp.model_constants", constants)
    con.execute("create or replace temp view draw_inputs as " + sql_text("model/draw_inputs.sql"))
    if devices is not None:
        return ParameterSets("temp.draw_inputs", load_frame(con, "temp.model_set_devices", devices))
    frame = pl.from_arrow(drawn)
    classes = device_classes([*frame.columns, *constants.columns])
    in_draws = [f for f in DEVICE_FIELDS if any(f"{c}_{f}" in frame.columns for c in classes)]
    constant = [f for f in DEVICE_FIELDS if f not in in_draws]
    load_frame(con, "temp.model_device_draws", device_rows(frame, KEYS, classes, in_draws, fill_from=constants))
    load_frame(con, "temp.model_device_constants", device_rows(constants, ("scenario_id",), classes, constant))
    con.execute("create or replace temp view draw_devices as " + sql_text("model/draw_devices.sql"))
    return ParameterSets("temp.draw_inputs", "temp.draw_devices")


def drop_split_sets(con: duckdb.DuckDBPyConnection) -> None:
    """The tables and views of :func:`load_split_sets`, dropped."""
    con.execute("drop view if exists temp.draw_inputs")
    con.execute("drop view if exists temp.draw_devices")
    for table in _TABLES:
        con.execute(f"drop table if exists temp.{table}")


@contextmanager
def draw_tables(con: duckdb.DuckDBPyConnection, drawn: pa.Table, constants: pl.DataFrame) -> Iterator[ParameterSets]:
    """The Monte Carlo's draws as :func:`load_split_sets`'s tables while the block runs: ``(inputs, devices)``,
    the names :func:`pipelines.model.formula.model_view` reads."""
    try:
        yield load_split_sets(con, drawn, constants)
    finally:
        drop_split_sets(con)
