"""Row-level verdicts: split a parsed frame into valid rows and quarantined rejects."""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Iterable
from dataclasses import dataclass

import pandera.polars as pa
import polars as pl

from pipelines.errors import SourceParseError
from schemas.meta import conform, empty_frame
from schemas.quarantine import RejectedRows


@dataclass(frozen=True)
class Reject:
    """One failed check of one input row, before it is stamped with run and source."""

    source_row: int | None
    column_name: str | None
    check_name: str
    value: str | None
    reason: str
    #: The row's file, where the checked frame holds rows of several files (a ``source_file``
    #: column): files share line numbers, so a row is known by (source_file, source_row).
    source_file: str | None = None


_CHECK_WORDS = [
    (re.compile(r"^not_nullable$"), "a value is required but the cell is empty or unreadable"),
    (re.compile(r"^greater_than_or_equal_to\((.*)\)$"), "must be >= {0}"),
    (re.compile(r"^greater_than\((.*)\)$"), "must be > {0}"),
    (re.compile(r"^less_than_or_equal_to\((.*)\)$"), "must be <= {0}"),
    (re.compile(r"^less_than\((.*)\)$"), "must be < {0}"),
    (re.compile(r"^in_range\((.*)\)$"), "must lie in [{0}]"),
    (re.compile(r"^isin\((.*)\)$"), "must be one of {0}"),
    (re.compile(r"^str_matches\((.*)\)$"), "must match {0}"),
    (re.compile(r"^field_uniqueness$|^multiple_fields_uniqueness$|^unique$"), "duplicates another row"),
]


def describe_check(check: str, column: str | None) -> str:
    """A sentence for a pandera check name, e.g. ``must be >= 0`` for ``greater_than_or_equal_to(0)``."""
    for pattern, words in _CHECK_WORDS:
        match = pattern.match(check)
        if match:
            text = words.format(*match.groups())
            return f"{column}: {text}" if column else text
    return f"{column}: failed check {check}" if column else f"failed check {check}"


def check_descriptions(model: type[pa.DataFrameModel]) -> dict[str, str]:
    """Check name -> the description written on the model (custom checks only)."""
    schema = model.to_schema()
    checks = list(schema.checks) + [c for col in schema.columns.values() for c in col.checks]
    return {c.name: c.description for c in checks if getattr(c, "description", None) and c.name}


def explain_check(check: str, column: str | None, described: dict[str, str]) -> str:
    """Why a row failed ``check``: the description written on the model (:func:`check_descriptions`)
    for a custom check, else :func:`describe_check`'s sentence."""
    if check in described:
        return f"{column + ': ' if column else ''}{described[check]}"
    return describe_check(check, column)


_PROVENANCE = ("source_id", "source_file", "source_row")


def unique_keys(model: type[pa.DataFrameModel]) -> list[tuple[str, list[str]]]:
    """(pandera check name, columns) of every uniqueness rule of ``model``.

    A column with ``unique=True`` is ``field_uniqueness``; ``Config.unique`` is
    ``multiple_fields_uniqueness`` (or ``field_uniqueness`` when it names one column).
    """
    schema = model.to_schema()
    keys = [("field_uniqueness", [name]) for name, column in schema.columns.items() if column.unique]
    config = schema.unique
    if config:
        names = [config] if isinstance(config, str) else list(config)
        keys.append(("multiple_fields_uniqueness" if len(names) > 1 else "field_uniqueness", names))
    return keys


def split_repeats(model: type[pa.DataFrameModel], frame: pl.DataFrame) -> tuple[pl.DataFrame, list[Reject]]:
    """Keep the first row of each key of ``model``'s uniqueness rules; reject the later ones.

    pandera flags every copy of a repeated key, which would quarantine the first (valid)
    row too. Here the first occurrence in file order is kept and each later one is
    rejected with the line it repeats: as an exact duplicate (every column equal) or as a
    key conflict (same key, other values).
    """
    keys = [(check, names) for check, names in unique_keys(model) if all(n in frame.columns for n in names)]
    if not keys or frame.height < 2:
        return frame, []
    has_line = "source_row" in frame.columns
    work = frame.with_row_index("__i")
    content = [c for c in frame.columns if c not in _PROVENANCE]
    rejects: list[Reject] = []
    drop: set[int] = set()
    for check, names in keys:
        key = pl.struct(names)
        if work.select(key.is_first_distinct().all()).item():
            continue
        first_line = (pl.col("source_row") if has_line else pl.col("__i")).first().over(names)
        repeats = work.with_columns(first_line.alias("__first"), pl.struct(content).is_first_distinct().alias("__new")).filter(
            ~key.is_first_distinct()
        )
        for row in repeats.iter_rows(named=True):
            if row["__i"] in drop:
                continue
            drop.add(row["__i"])
            shown = ", ".join(f"{n} = {row[n]}" for n in names)
            column = names[0] if len(names) == 1 else None
            prefix = f"{column}: " if column else ""
            what = (
                f"an exact duplicate of line {row['__first']}"
                if not row["__new"]
                else f"repeats the key ({shown}) of line {row['__first']} with different values"
            )
            rejects.append(
                Reject(
                    source_row=row["source_row"] if has_line else None,
                    column_name=column,
                    check_name=check,
                    value=str(row[column]) if column else shown,
                    reason=f"{prefix}{what}; the first is kept",
                    source_file=row.get("source_file"),
                )
            )
    if not drop:
        return frame, []
    return work.filter(~pl.col("__i").is_in(sorted(drop))).drop("__i"), rejects


def split_valid(
    model: type[pa.DataFrameModel], frame: pl.DataFrame, *, file: str
) -> tuple[pl.DataFrame, list[Reject]]:
    """Validate ``frame`` against ``model``; return the valid rows and one Reject per failure.

    ``frame`` must already be conformed to the model. A failure that concerns the whole
    table (a wrong dtype, a missing column) is not a row problem: it raises
    :class:`SourceParseError` naming the file. A repeated unique key keeps its first row
    and rejects the later ones (:func:`split_repeats`).
    """
    frame, repeat_rejects = split_repeats(model, frame)
    valid, rejects = split_checked(model, frame, file=file)
    if not repeat_rejects:
        return valid, rejects
    return valid, sorted(repeat_rejects + rejects, key=lambda r: (r.source_row or 0, r.column_name or ""))


def split_checked(
    model: type[pa.DataFrameModel], frame: pl.DataFrame, *, file: str
) -> tuple[pl.DataFrame, list[Reject]]:
    """Validate ``frame`` against ``model`` as it is: every row that fails a check is rejected.

    Unlike :func:`split_valid`, a repeated unique key is not resolved first (every copy would
    fail the uniqueness check): for callers that remove repeats themselves, or whose model has
    no key (the streamed ingest's row checks). A table-level failure raises
    :class:`SourceParseError` naming ``file``.
    """
    try:
        model.validate(frame, lazy=True)
        return frame, []
    except pa.errors.SchemaErrors as exc:
        cases = exc.failure_cases
    table_level = cases.filter(pl.col("index").is_null())
    if table_level.height:
        first = table_level.row(0, named=True)
        raise SourceParseError(
            file, None, f"does not fit {model.__name__}: {first['check']} on column {first['column']} ({first['failure_case']})"
        )
    rows = frame.get_column("source_row").to_list() if "source_row" in frame.columns else [None] * frame.height
    files = frame.get_column("source_file").to_list() if "source_file" in frame.columns else [None] * frame.height
    described = check_descriptions(model)
    rejects = []
    for case in cases.sort("index").iter_rows(named=True):
        # A dataframe-level check names the model as its "column" and the whole row as value.
        column = case["column"] if case["schema_context"] == "Column" else None
        rejects.append(
            Reject(
                source_row=rows[case["index"]],
                column_name=column,
                check_name=str(case["check"]),
                value=case["failure_case"],
                reason=explain_check(str(case["check"]), column, described),
                source_file=files[case["index"]],
            )
        )
    bad = sorted({case for case in cases.get_column("index").to_list()})
    valid = frame.with_row_index("__i").filter(~pl.col("__i").is_in(bad)).drop("__i")
    return valid, rejects


def rejects_frame(
    rejects: Iterable[Reject], *, table: str, source_id: str, source_file: str, run_id: str, at: dt.datetime
) -> pl.DataFrame:
    """Stamp rejects with table, source and run, as rows of ``quarantine.rejected_rows``."""
    rows = [
        {
            "run_id": run_id,
            "table_name": table,
            "source_id": source_id,
            "source_file": source_file,
            "source_row": r.source_row,
            "column_name": r.column_name,
            "check_name": r.check_name,
            "value": r.value,
            "reason": r.reason,
            "rejected_at": at,
        }
        for r in rejects
    ]
    if not rows:
        return empty_frame(RejectedRows)
    frame = pl.DataFrame(
        rows,
        schema_overrides={"rejected_at": pl.Datetime("us", "UTC"), "source_row": pl.Int64, "value": pl.String},
        infer_schema_length=None,
    )
    return conform(RejectedRows, frame)


def located_rejects(
    frame: pl.DataFrame, rejects: Iterable[Reject], *, table: str, run_id: str, at: dt.datetime
) -> pl.DataFrame:
    """Rejects of a check over ``frame``, whose rows come from several files, as rows of
    ``quarantine.rejected_rows``: each stamped with the source of its own row, found by
    (source_file, source_row), as files share line numbers."""
    sources = {(file, row): source_id for source_id, file, row in frame.select("source_id", "source_file", "source_row").iter_rows()}
    frames = []
    for reject in rejects:
        source_id = sources.get((reject.source_file, reject.source_row))
        if source_id is None:
            raise SourceParseError(str(reject.source_file), reject.source_row, f"a rejected row that is not a row of the {table} checked")
        frames.append(rejects_frame([reject], table=table, source_id=source_id, source_file=str(reject.source_file), run_id=run_id, at=at))
    return pl.concat(frames) if frames else empty_frame(RejectedRows)
