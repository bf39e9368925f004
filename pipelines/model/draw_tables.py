"""Monte Carlo and Sobol draws as the tables the model reads.

The draws are drawn in Python (numpy streams, one per scenario and parameter); they enter the
database as temporary tables (:func:`pipelines.warehouse.tables.load_frame`), split as drawn
(one row per draw: only the drawn columns) and constant (one row per scenario), so 50,000 draws
do not copy every constant parameter. Two views join the two into the
parameter sets and device rows :func:`pipelines.model.formula.model_view` evaluates (sql/model/draw_inputs.sql, draw_devices.sql).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager

import duckdb
import polars as pl
import pyarrow as pa

from pipelines.model.formula import KEYS
from pipelines.paths import sql_text
from pipelines.warehouse.tables import load_frame
from schemas.vocabulary import DEVICE_FIELDS, DEVICE_MARKER

#: The temporary tables and views of the draws, dropped when the evaluation ends.
_TABLES = ("model_draws", "model_constants", "model_device_draws", "model_device_constants")


def device_classes(columns: Sequence[str]) -> list[str]:
    """The edge device classes among parameter columns: every ``<class>_train_power_w``."""
    suffix = "_" + DEVICE_MARKER
    return sorted(c[: -len(suffix)] for c in columns if c.endswith(suffix))


def device_rows(
    frame: pl.DataFrame,
    keys: Sequence[str],
    classes: Sequence[str],
    fields: Sequence[str] = tuple(DEVICE_FIELDS),
    fill_from: pl.DataFrame | None = None,
) -> pl.DataFrame:
    """One row per row of ``frame`` and device class: the class's ``<class>_<field>`` columns
    under the model's names (:data:`DEVICE_FIELDS`), null where the class leaves one unset.

    ``fill_from`` (one row per scenario) supplies a field a class keeps constant while another
    class's is drawn, so a field is wholly in the drawn rows or wholly in the constant ones.
    """
    parts = []
    for device_class in classes:
        part = frame.select(*keys)
        for field in fields:
            column, name = f"{device_class}_{field}", DEVICE_FIELDS[field]
            if column in frame.columns:
                part = part.with_columns(frame.get_column(column).cast(pl.Float64).alias(name))
            elif fill_from is not None and column in fill_from.columns:
                constant = fill_from.select(
                    "scenario_id", pl.col(column).cast(pl.Float64).alias(name)
                )
                part = part.join(constant, on="scenario_id", how="left", maintain_order="left")
            else:
                part = part.with_columns(pl.lit(None, pl.Float64).alias(name))
        parts.append(part.with_columns(pl.lit(device_class).alias("device_class")))
    if not parts:
        return pl.DataFrame(
            schema={
                **{k: frame.schema[k] for k in keys},
                **{DEVICE_FIELDS[f]: pl.Float64 for f in fields},
                "device_class": pl.String,
            }
        )
    return pl.concat(parts)



@contextmanager
def draw_tables(con: duckdb.DuckDBPyConnection, drawn: pa.Table, constants: pl.DataFrame) -> Iterator[tuple[str, str]]:
    """The draws as temporary tables, and the views of their parameter sets and device rows:
    ``(inputs, devices)``, the names :func:`pipelines.model.formula.model_view` reads.

    ``drawn``: one row per draw (scenario_id, variant_id and the drawn columns); ``constants``: one
    row per scenario, every other parameter. A device field is wholly drawn or wholly constant.
    """
    frame = pl.from_arrow(drawn)
    classes = device_classes([*frame.columns, *constants.columns])
    in_draws = [f for f in DEVICE_FIELDS if any(f"{c}_{f}" in frame.columns for c in classes)]
    constant = [f for f in DEVICE_FIELDS if f not in in_draws]
    load_frame(con, "temp.model_draws", drawn)
    load_frame(con, "temp.model_constants", constants)
    load_frame(con, "temp.model_device_draws", device_rows(frame, KEYS, classes, in_draws, fill_from=constants))
    load_frame(con, "temp.model_device_constants", device_rows(constants, ("scenario_id",), classes, constant))
    con.execute("create or replace temp view draw_inputs as " + sql_text("model/draw_inputs.sql"))
    con.execute("create or replace temp view draw_devices as " + sql_text("model/draw_devices.sql"))
    try:
        yield "temp.draw_inputs", "temp.draw_devices"
    finally:
        con.execute("drop view if exists temp.draw_inputs")
        con.execute("drop view if exists temp.draw_devices")
        for table in _TABLES:
            con.execute(f"drop table if exists temp.{table}")
