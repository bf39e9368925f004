"""The edge devices of parameter sets computed in Python (a search's points, Monte Carlo draws) as rows: one per
set and device class, each class's ``<class>_<field>`` columns under the model's names. The SQL macro
``device_rows`` (sql/model/macros.sql) does the same for a table; this is its counterpart for sets that enter the
database as tables, computed where they are made, column by column instead of an unpivot of every set."""

from __future__ import annotations

from collections.abc import Sequence

import polars as pl

from schemas.vocabulary import DEVICE_FIELDS, DEVICE_MARKER

#: The keys of a parameter set.
KEYS = ("scenario_id", "variant_id")


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
