"""Checked cells and row rejection, shared by the parsers: numbers, required cells, rows
rejected by a mask, plausible timestamps and the daylight-saving fall-back hour."""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Iterable
from typing import Any, TypedDict, Unpack

import numpy as np
import polars as pl

from pipelines.ingest.quarantine import Reject

#: Timestamps outside these bounds are rejected by the parsers as implausible for a log.
EARLIEST = dt.datetime(1970, 1, 1, tzinfo=dt.UTC)
LATEST = dt.datetime(2100, 1, 1, tzinfo=dt.UTC)


def finite_number(expr: pl.Expr) -> pl.Expr:
    """a finite number"""
    value = expr.str.strip_chars().cast(pl.Float64, strict=False)
    return pl.when(value.is_finite()).then(value)


def whole_number(expr: pl.Expr) -> pl.Expr:
    """an integer"""
    return expr.str.strip_chars().cast(pl.Int64, strict=False)


def require_cells(frame: pl.DataFrame, columns: Iterable[str]) -> tuple[pl.DataFrame, list[Reject]]:
    """Reject (and remove) the rows whose text cell in any of ``columns`` is empty."""
    rejects: list[Reject] = []
    empty_any = pl.lit(False)
    for name in columns:
        empty = pl.col(name).is_null() | (pl.col(name).str.strip_chars() == "")
        empty_any = empty_any | empty
        for (row,) in frame.filter(empty).select("source_row").iter_rows():
            rejects.append(Reject(row, name, "not_nullable", None, f"{name}: a value is required but the cell is empty"))
    return frame.filter(~empty_any), rejects


class RejectSpec(TypedDict):
    """What a reject records (keyword arguments of :func:`rejects_where` and :func:`drop_where`)."""

    column: str | None
    check: str
    value: str | None
    reason: str | Callable[[dict[str, Any]], str]


def rejects_where(frame: pl.DataFrame, mask: pl.Expr, **spec: Unpack[RejectSpec]) -> list[Reject]:
    """One Reject per row of ``frame`` where ``mask`` holds (a null mask does not hold).

    ``value`` names a column whose text becomes the reject's value; ``reason`` is a format
    string over the row's columns (e.g. ``"current_now {current_now} has the charging sign"``)
    or a function of the row.
    """
    hits = frame.filter(mask.fill_null(False))
    reason, value = spec["reason"], spec["value"]
    reason_of = reason if callable(reason) else reason.format_map
    return [
        Reject(
            source_row=row["source_row"],
            column_name=spec["column"],
            check_name=spec["check"],
            value=None if value is None or row[value] is None else str(row[value]),
            reason=reason_of(row),
        )
        for row in hits.iter_rows(named=True)
    ]


def drop_where(frame: pl.DataFrame, mask: pl.Expr, **spec: Unpack[RejectSpec]) -> tuple[pl.DataFrame, list[Reject]]:
    """:func:`rejects_where`, and ``frame`` without the rejected rows."""
    rejects = rejects_where(frame, mask, **spec)
    return (frame.filter(~mask) if rejects else frame), rejects


def is_blank(name: str) -> pl.Expr:
    """True where a text cell is missing or only whitespace."""
    return pl.col(name).is_null() | (pl.col(name).str.strip_chars() == "")


# --- local clock times ----------------------------------------------------------------------


def resolve_repeated_hour(
    frame: pl.DataFrame, zone: str, *, label: str = "timestamp"
) -> tuple[pl.DataFrame, list[Reject]]:
    """Place the local times of a daylight-saving fall-back by the log's order.

    ``frame`` (in file order) has ``ts`` (UTC, read with the earlier, summer-time offset) and
    ``ts_late`` (UTC with the later, standard-time offset where the local time is ambiguous,
    else null). A local time in the repeated hour is read in summer time on the first pass
    and in standard time once the log has stepped back, i.e. when summer time would put it
    before the reading on the line above it. If some ambiguous time fits neither reading
    (the log is not in time order across the repeated hour), which pass each ambiguous line
    belongs to is unknown: all of them are rejected (check ``ambiguous_local_time``) rather
    than shifted. Returns the frame without ``ts_late``, and the rejects.
    """
    late_col = frame.get_column("ts_late")
    if late_col.null_count() == frame.height:
        return frame.drop("ts_late"), []
    early = frame.get_column("ts").dt.epoch("us").to_numpy().copy()
    late = late_col.dt.epoch("us").fill_null(0).to_numpy()
    ambiguous = np.flatnonzero(late_col.is_not_null().to_numpy())
    unordered = []
    for i in ambiguous:
        if i == 0 or early[i] >= early[i - 1]:
            continue
        if late[i] >= early[i - 1]:
            early[i] = late[i]
        else:
            unordered.append(int(i))
    if unordered:
        local = frame[ambiguous].select(
            "source_row", pl.col("ts").dt.convert_time_zone(zone).dt.strftime("%Y-%m-%d %H:%M:%S%.f").alias("local")
        )
        rejects = [
            Reject(
                row, label, "ambiguous_local_time", text,
                f"{label}: {text} occurs twice in {zone} (the clocks went back) and the log is not in time order "
                "across the repeated hour, so which pass this line belongs to cannot be told",
            )
            for row, text in local.iter_rows()
        ]
        keep = np.ones(frame.height, dtype=bool)
        keep[ambiguous] = False
        return frame.filter(pl.Series(keep)).drop("ts_late"), rejects
    dtype = frame.schema["ts"]
    resolved = pl.Series("ts", early).cast(pl.Datetime("us")).dt.replace_time_zone("UTC").cast(dtype)
    return frame.with_columns(resolved).drop("ts_late"), []


