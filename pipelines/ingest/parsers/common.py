"""Building blocks shared by the parsers: text CSV reading and checked casts."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path

import polars as pl

from pipelines.errors import SourceParseError
from pipelines.ingest.quarantine import Reject

Cast = pl.DataType | type[pl.DataType] | Callable[[pl.Expr], pl.Expr]


def read_text_csv(path: Path, *, skip_rows: int = 0, separator: str = ",", encoding: str = "utf8") -> pl.DataFrame:
    """Read a CSV with every column as text, plus ``source_row`` (1-based line in the file).

    ``skip_rows`` lines are skipped before the header. Assumes no quoted line breaks, so that
    record n sits on line ``skip_rows + 1 + n``.
    """
    try:
        frame = pl.read_csv(
            path,
            infer_schema=False,
            skip_rows=skip_rows,
            separator=separator,
            encoding=encoding,
            truncate_ragged_lines=False,
        )
    except (pl.exceptions.PolarsError, UnicodeDecodeError, OSError) as exc:
        line, why = _diagnose(path, skip_rows=skip_rows, separator=separator, encoding=encoding)
        if why is not None:
            raise SourceParseError(path, line, f"not a readable CSV: {why}") from exc
        raise SourceParseError(path, _line_of(exc), f"not a readable CSV: {_first_line(exc)}") from exc
    if not frame.columns or frame.columns == [""]:
        raise SourceParseError(path, skip_rows + 1, "no header row")
    if "source_row" in frame.columns:
        raise SourceParseError(path, skip_rows + 1, "header has a column named source_row, which is reserved")
    header_line = skip_rows + 1
    return frame.with_row_index("source_row", offset=header_line + 1).with_columns(pl.col("source_row").cast(pl.Int64))


def _diagnose(path: Path, *, skip_rows: int, separator: str, encoding: str) -> tuple[int | None, str | None]:
    """(line, reason) of a CSV the reader refused: empty, not UTF-8, or a line with extra fields.

    (None, None) when none of these explains it. Reads the file once more; only on failure.
    """
    import csv
    import io

    try:
        data = path.read_bytes()
    except OSError:
        return None, None
    if not data.strip():
        return None, "the file is empty (no header row)"
    if encoding in ("utf8", "utf-8"):
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError as bad:
            line = data.count(b"\n", 0, bad.start) + 1
            return line, f"byte 0x{data[bad.start]:02x} at offset {bad.start} is not UTF-8 text (save the file as UTF-8)"
    else:
        text = data.decode("utf-8", errors="replace")
    lines = text.split("\n")[skip_rows:]
    reader = csv.reader(io.StringIO("\n".join(lines)), delimiter=separator)
    width = None
    try:
        for number, record in enumerate(reader, start=skip_rows + 1):
            if width is None:
                width = len(record)
            elif len(record) > width:
                return number, f"{len(record)} fields where the header has {width} (an unquoted {separator!r} in a value?)"
    except csv.Error as exc:
        return skip_rows + reader.line_num, str(exc)
    return None, None


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return text[0] if text else type(exc).__name__


def _line_of(exc: BaseException) -> int | None:
    import re

    match = re.search(r"line (\d+)", str(exc))
    return int(match.group(1)) if match else None


def is_nan_text(name: str) -> pl.Expr:
    """True where a text cell reads ``NaN`` (any case): a missing value, like a blank cell."""
    return pl.col(name).str.strip_chars().str.to_lowercase().is_in(["nan", "-nan", "+nan"]).fill_null(False)


def require_columns(path: Path, frame: pl.DataFrame, names: list[str] | tuple[str, ...], line: int = 1) -> None:
    """Raise a clear error if the header lacks any of ``names``."""
    missing = [name for name in names if name not in frame.columns]
    if missing:
        raise SourceParseError(path, line, f"header lacks column(s) {missing}; found {frame.columns}")


def _is_dtype(cast: Cast) -> bool:
    return isinstance(cast, pl.DataType) or (isinstance(cast, type) and issubclass(cast, pl.DataType))


def _as_expr(name: str, cast: Cast) -> pl.Expr:
    if not _is_dtype(cast):
        return cast(pl.col(name))  # type: ignore[operator]
    text = pl.col(name).str.strip_chars()
    if cast == pl.Date:
        return text.str.to_date("%Y-%m-%d", strict=False)
    if cast == pl.Boolean:
        lowered = text.str.to_lowercase()
        return pl.when(lowered.is_in(["true", "1", "yes"])).then(True).when(lowered.is_in(["false", "0", "no"])).then(False)
    typed = text.cast(cast, strict=False)
    if cast in (pl.Float64, pl.Float32):
        # "inf" and "nan" read as floats but are never valid measurements
        typed = pl.when(typed.is_finite()).then(typed)
    return typed


def checked_casts(
    frame: pl.DataFrame, casts: Mapping[str, Cast], *, labels: Mapping[str, str] | None = None
) -> tuple[pl.DataFrame, list[Reject]]:
    """Cast text columns; a non-empty cell that does not convert rejects its whole row.

    Returns the typed frame (bad rows removed) and one Reject per unreadable cell. ``labels``
    maps a column to the name it has in the file, for the reject message.
    """
    labels = labels or {}
    typed = frame.with_columns([_as_expr(name, cast).alias(f"__typed_{name}") for name, cast in casts.items()])
    rejects: list[Reject] = []
    bad = pl.lit(False)
    for name in casts:
        raw, new = pl.col(name), pl.col(f"__typed_{name}")
        failed = raw.is_not_null() & (raw.str.strip_chars() != "") & new.is_null()
        bad = bad | failed
        hits = typed.filter(failed).select("source_row", name)
        for row, value in hits.iter_rows():
            rejects.append(
                Reject(
                    source_row=row,
                    column_name=labels.get(name, name),
                    check_name="parse",
                    value=value,
                    reason=f"{labels.get(name, name)}: cannot read {value!r} as {_kind(casts[name])}",
                )
            )
    typed = typed.filter(~bad).drop(list(casts)).rename({f"__typed_{name}": name for name in casts})
    return typed, rejects


def _kind(cast: Cast) -> str:
    if _is_dtype(cast):
        return {"Float64": "a finite number", "Int64": "an integer", "Date": "a date (YYYY-MM-DD)", "Boolean": "true/false"}.get(str(cast), str(cast))
    return getattr(cast, "__doc__", None) or "the expected type"
