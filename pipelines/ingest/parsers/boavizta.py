"""Manufacturer product-carbon-footprint files -> staging.device_pcf.

Two kinds feed the table:

* ``boavizta_pcf``: Boavizta's compilation of manufacturer PCF sheets
  (``boavizta-data-us.csv``). Its known quirks are handled here, each visibly:

  - ``report_date`` mixes "November 2020", "Feb 2021", "January 17 2023", "2021", "2020-9-5"
    and "26/07/2019" (day first). Each becomes a date plus a precision (day, month -> the
    1st, year -> 1 January). A value in none of these forms is quarantined.
  - Apple's auto-parser named the January 2023 MacBook Pro reports "16-inch MacBook Pro with
    64GB" (no 64 GB configuration exists; the figure is the base M2 Pro configuration). The
    model is cleaned, ``model_raw`` keeps the source name and ``scope_note`` says why.
  - Some HP server names end in a stray footnote digit ("ProLiant DL380 Gen10 server4"); it
    is removed, again with a ``scope_note``.
  - Life-cycle shares are rounded, so their sum may miss 1; a sum outside the tolerance of
    :data:`schemas.device_pcf.SHARES_TOLERANCE` is quarantined with the shares in the reason.
  - ``added_date`` (when Boavizta added the row, dd-mm-yyyy or yyyy-mm-dd) is not used.

  ``device_id`` is a slug of manufacturer and cleaned model (see :func:`device_slug`); where two rows give the same
  slug, the later rows (in file order) get ``-dup2``, ``-dup3``, ... so every row has its own id.

* ``curated_device_pcf``: a hand-curated CSV with the table's own columns (reports the paper
  uses and named H100 embodied factor sets). ``shares_sum`` is computed, never typed in.
"""

from __future__ import annotations

import datetime as dt
import re
import unicodedata
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import polars as pl

from pipelines.errors import SourceParseError
from pipelines.ingest.parsers.common import checked_casts, read_text_csv, require_columns
from pipelines.ingest.quarantine import Reject
from pipelines.ingest.staging import Parsed
from schemas.device_pcf import (
    SHARE_COLUMNS,
    SHARES_TOLERANCE,
    DevicePcf,
    shares_sum_expr,
    shares_sum_ok_expr,
)
from schemas.meta import columns, polars_schema

#: File columns the Boavizta parser reads (the file has more; they are ignored).
BOAVIZTA_COLUMNS = (
    "manufacturer",
    "name",
    "category",
    "subcategory",
    "gwp_total",
    "gwp_use_ratio",
    "yearly_tec",
    "lifetime",
    "use_location",
    "report_date",
    "sources",
    "gwp_manufacturing_ratio",
    "gwp_transport_ratio",
    "gwp_eol_ratio",
)
#: File column -> table column.
RENAME = {
    "gwp_total": "total_kgco2e",
    "gwp_manufacturing_ratio": "production_share",
    "gwp_use_ratio": "use_share",
    "gwp_transport_ratio": "transport_share",
    "gwp_eol_ratio": "eol_share",
    "lifetime": "lifetime_years",
    "yearly_tec": "yearly_use_kwh",
    "sources": "citation_url",
}
SHARE_LABELS = {"production_share": "production", "use_share": "use", "transport_share": "transport", "eol_share": "end of life"}
#: Obvious typos in Boavizta's subcategory, fixed after lower-casing.
SUBCATEGORY_FIXES = {"entertainmentt": "entertainment"}
USE_LOCATION_FIXES = {"Worldwide": "WW"}

_MONTHS = {
    name: number
    for number, names in enumerate(
        [
            ("january", "jan"),
            ("february", "feb"),
            ("march", "mar"),
            ("april", "apr"),
            ("may",),
            ("june", "jun"),
            ("july", "jul"),
            ("august", "aug"),
            ("september", "sep", "sept"),
            ("october", "oct"),
            ("november", "nov"),
            ("december", "dec"),
        ],
        start=1,
    )
    for name in names
}
_YEAR = re.compile(r"^(\d{4})$")
_MONTH_YEAR = re.compile(r"^([A-Za-z]+)\.? (\d{4})$")
_MONTH_DAY_YEAR = re.compile(r"^([A-Za-z]+)\.? (\d{1,2}),? (\d{4})$")
_ISO_LOOSE = re.compile(r"^(\d{4})-(\d{1,2})-(\d{1,2})$")
_DAY_FIRST = re.compile(r"^(\d{1,2})/(\d{1,2})/(\d{4})$")
_MIN_YEAR, _MAX_YEAR = 1980, 2100

_MBP_ARTEFACT = re.compile(r"^(1[46]-inch MacBook Pro) with 64GB$")
_HP_FOOTNOTE = re.compile(r"^(.*[a-z])\d$")
_BASE_CONFIG = {
    "16-inch MacBook Pro": "M2 Pro 12-core CPU, 19-core GPU, 16 GB memory, 512 GB SSD",
    "14-inch MacBook Pro": "M2 Pro, Apple's entry configuration",
}


# The docstrings of the two cast functions below name the expected type in quarantine reasons
# ("gwp_total: cannot read 'abc' as a finite number"), so they are phrased to complete that sentence.
def finite_float(expr: pl.Expr) -> pl.Expr:
    """a finite number"""
    value = expr.str.strip_chars().cast(pl.Float64, strict=False)
    return pl.when(value.is_finite()).then(value)


def parse_report_date(text: str | None) -> tuple[dt.date, str] | None:
    """``(date, precision)`` for one ``report_date`` cell, or None if it is in no known form.

    Known forms: ``2021`` (year), ``November 2020`` / ``Feb 2021`` (month), ``January 17 2023``
    (day), ``2020-9-5`` (day, year first) and ``26/07/2019`` (day first, as Boavizta writes
    dates). Years outside 1980-2100 are not accepted.
    """
    if text is None:
        return None
    text = " ".join(text.split())
    try:
        if match := _YEAR.match(text):
            return _checked(int(match[1]), 1, 1), "year"
        if match := _MONTH_YEAR.match(text):
            month = _MONTHS.get(match[1].lower())
            return (_checked(int(match[2]), month, 1), "month") if month else None
        if match := _MONTH_DAY_YEAR.match(text):
            month = _MONTHS.get(match[1].lower())
            return (_checked(int(match[3]), month, int(match[2])), "day") if month else None
        if match := _ISO_LOOSE.match(text):
            return _checked(int(match[1]), int(match[2]), int(match[3])), "day"
        if match := _DAY_FIRST.match(text):
            return _checked(int(match[3]), int(match[2]), int(match[1])), "day"
    except ValueError:
        return None
    return None


def _checked(year: int, month: int, day: int) -> dt.date:
    if not _MIN_YEAR <= year <= _MAX_YEAR:
        raise ValueError(f"year {year} out of range")
    return dt.date(year, month, day)


def clean_model(manufacturer: str, name: str, report_year: int | None) -> tuple[str, str | None]:
    """The cleaned model name and a note on what was changed (None if nothing was)."""
    model = " ".join(name.split())
    if manufacturer == "Apple" and report_year == 2023 and (match := _MBP_ARTEFACT.match(model)):
        product = match[1]
        return (
            f"{product} (M2 Pro)",
            f"Source name {name!r} is an Apple auto-parser artefact (no 64 GB configuration exists); the figure is "
            f"the January 2023 report's base configuration ({_BASE_CONFIG[product]}).",
        )
    if manufacturer == "HP" and (match := _HP_FOOTNOTE.match(model)):
        return match[1], f"Stray footnote digit removed from the source name {name!r}."
    return model, None


def slug(text: str) -> str:
    """Lower-case ASCII words joined by '-' (accents dropped, '+' read as 'plus', other characters separate)."""
    ascii_text = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode("ascii").lower()
    return re.sub(r"[^a-z0-9]+", "-", ascii_text.replace("+", " plus ")).strip("-")


def device_slug(manufacturer: str, model: str) -> str:
    """``slug(manufacturer + model)``, without repeating a manufacturer the model already starts with."""
    maker, product = slug(manufacturer), slug(model)
    if maker and (product == maker or product.startswith(f"{maker}-")):
        return product
    return "-".join(part for part in (maker, product) if part)


def assign_device_ids(bases: Sequence[str]) -> list[str]:
    """Make ids unique in order: the first row with a base keeps it, later ones get -dup2, -dup3, ...

    A suffix is never one that another row already has as its own base.
    """
    taken = set(bases)
    used: set[str] = set()
    out = []
    for base in bases:
        candidate = base
        if base in used:
            k = 2
            while f"{base}-dup{k}" in taken or f"{base}-dup{k}" in used:
                k += 1
            candidate = f"{base}-dup{k}"
        used.add(candidate)
        out.append(candidate)
    return out


def _fmt(value: float | None) -> str:
    return "missing" if value is None else f"{value:g}"


def split_share_sums(frame: pl.DataFrame) -> tuple[pl.DataFrame, list[Reject]]:
    """Add ``shares_sum`` and quarantine rows whose shares do not add up within the tolerance.

    Rows with a share outside [0, 1] are left for the schema check, which names that share.
    """
    frame = frame.with_columns(shares_sum_expr().alias("shares_sum"))
    in_range = pl.all_horizontal([pl.col(c).is_null() | pl.col(c).is_between(0, 1) for c in SHARE_COLUMNS])
    bad = frame.filter(in_range & ~shares_sum_ok_expr())
    rejects = []
    for row in bad.select("source_row", "shares_sum", *SHARE_COLUMNS).iter_rows(named=True):
        parts = " + ".join(f"{SHARE_LABELS[c]} {_fmt(row[c])}" for c in SHARE_COLUMNS)
        complete = all(row[c] is not None for c in SHARE_COLUMNS)
        rule = f"1 +/- {SHARES_TOLERANCE}" if complete else f"at most 1 + {SHARES_TOLERANCE}"
        rejects.append(
            Reject(
                source_row=row["source_row"],
                column_name="shares_sum",
                check_name="shares_sum_within_tolerance",
                value=_fmt(row["shares_sum"]),
                reason=f"shares_sum: the life-cycle shares sum to {row['shares_sum']:g} ({parts}); "
                f"{'with all four given they' if complete else 'they'} must sum to {rule} (shares are rounded)",
            )
        )
    keep = frame.filter(~(in_range & ~shares_sum_ok_expr()))
    return keep, rejects


def _text(name: str) -> pl.Expr:
    value = pl.col(name).str.strip_chars()
    return pl.when(value != "").then(value)


def parse_boavizta(path: Path, options: Mapping[str, Any]) -> Parsed:
    """Boavizta ``boavizta-data-us.csv`` -> rows of staging.device_pcf (see module docstring)."""
    frame = read_text_csv(path)
    require_columns(path, frame, BOAVIZTA_COLUMNS)
    frame = frame.select("source_row", *[_text(c).alias(c) for c in BOAVIZTA_COLUMNS])
    rejects: list[Reject] = []

    missing = frame.filter(pl.col("manufacturer").is_null() | pl.col("name").is_null())
    for row in missing.select("source_row", "manufacturer", "name").iter_rows(named=True):
        column = "manufacturer" if row["manufacturer"] is None else "name"
        rejects.append(Reject(row["source_row"], column, "not_nullable", None, f"{column}: required to identify the product, but the cell is empty"))
    frame = frame.filter(pl.col("manufacturer").is_not_null() & pl.col("name").is_not_null())

    dates = {text: parse_report_date(text) for text in frame.get_column("report_date").drop_nulls().unique().to_list()}

    def as_report_date(expr: pl.Expr) -> pl.Expr:
        return expr.replace_strict({k: v[0] for k, v in dates.items() if v}, default=None, return_dtype=pl.Date)

    as_report_date.__doc__ = "a date ('2021', 'November 2020', 'January 17 2023', '2020-9-5' or '26/07/2019')"
    casts = {c: finite_float for c in ("gwp_total", "gwp_use_ratio", "gwp_manufacturing_ratio", "gwp_transport_ratio", "gwp_eol_ratio", "lifetime", "yearly_tec")}
    frame = frame.with_columns(pl.col("report_date").alias("report_date_raw"))
    typed, cast_rejects = checked_casts(frame, {**casts, "report_date": as_report_date})
    rejects.extend(cast_rejects)

    precision = {k: v[1] for k, v in dates.items() if v}
    typed = typed.with_columns(
        pl.col("report_date_raw").replace_strict(precision, default=None, return_dtype=pl.String).alias("report_date_precision")
    )

    rows = typed.select("manufacturer", "name", pl.col("report_date").dt.year().alias("year")).rows()
    cleaned = [clean_model(m, n, y) for m, n, y in rows]
    bases = [device_slug(m, model) for (m, _, _), (model, _) in zip(rows, cleaned, strict=True)]
    unnamed = [i for i, base in enumerate(bases) if not base]
    if unnamed:
        for i in unnamed:
            row = typed.row(i, named=True)
            rejects.append(
                Reject(row["source_row"], "name", "device_id_buildable", row["name"], "name: no letters or digits in manufacturer and name to build a device_id from")
            )
        typed = typed.filter(pl.Series([bool(base) for base in bases]))
        cleaned = [c for c, base in zip(cleaned, bases, strict=True) if base]
        bases = [base for base in bases if base]

    typed = typed.with_columns(
        pl.Series("device_id", assign_device_ids(bases), dtype=pl.String),
        pl.Series("model", [model for model, _ in cleaned], dtype=pl.String),
        pl.Series("scope_note", [note for _, note in cleaned], dtype=pl.String),
        pl.col("name").alias("model_raw"),
        pl.col("category").str.to_lowercase(),
        pl.col("subcategory").str.to_lowercase().replace(SUBCATEGORY_FIXES),
        pl.col("use_location").replace(USE_LOCATION_FIXES),
        pl.lit("primary").alias("status"),
        (pl.col("manufacturer") + pl.lit(" product carbon footprint report for ") + pl.col("name") + pl.lit(" (via Boavizta environmental-footprint-data)")).alias(
            "citation"
        ),
    ).rename(RENAME)
    typed = typed.with_columns(pl.when(pl.col("citation_url").str.starts_with("http")).then(pl.col("citation_url")).alias("citation_url"))
    typed, share_rejects = split_share_sums(typed)
    rejects.extend(share_rejects)
    return Parsed(frame=typed.drop("name", "report_date_raw"), rejects=rejects)


_PROVENANCE = ("source_id", "source_file", "source_row")


def iso_date(expr: pl.Expr) -> pl.Expr:
    """a date written YYYY-MM-DD"""
    return expr.str.strip_chars().str.to_date("%Y-%m-%d", strict=False)


def parse_curated_device_pcf(path: Path, options: Mapping[str, Any]) -> Parsed:
    """Curated CSV whose header names DevicePcf's own columns; ``shares_sum`` is computed.

    Columns the model allows to be empty may be left out of the file. Numbers that do not
    read as finite numbers, and dates not written YYYY-MM-DD, reject their row with the reason.
    """
    return _typed_pcf(path, read_text_csv(path))


#: The prefix of a device's footprint columns in the device specs file (sources/curated/device_specs.csv).
FOOTPRINT_PREFIX = "footprint_"


def parse_device_footprints(path: Path, options: Mapping[str, Any]) -> Parsed:
    """The footprint reports of a device specs file: a device's row carries its product footprint
    in ``footprint_<column>`` columns (DevicePcf's columns; its device is the row's base_device_id and
    its manufacturer the row's vendor), so a device is one row of one file. A row without a
    footprint_total_kgco2e has none; a footprint cell on such a row rejects it, naming the column."""
    frame = read_text_csv(path)
    require_columns(path, frame, ["base_device_id", "vendor", f"{FOOTPRINT_PREFIX}total_kgco2e"])
    named = [c for c in frame.columns if c.startswith(FOOTPRINT_PREFIX)]
    has = pl.col(f"{FOOTPRINT_PREFIX}total_kgco2e").is_not_null()
    stray = frame.filter(~has & pl.any_horizontal([pl.col(c).is_not_null() for c in named]))
    if stray.height:
        row = stray.row(0, named=True)
        cells = [c for c in named if row[c] is not None]
        raise SourceParseError(path, row["source_row"], f"{', '.join(cells)} set without {FOOTPRINT_PREFIX}total_kgco2e: "
                                                          "a footprint needs its total")
    reports = frame.filter(has).select(
        "source_row", pl.col("base_device_id").alias("device_id"), pl.col("vendor").alias("manufacturer"),
        *[pl.col(c).alias(c.removeprefix(FOOTPRINT_PREFIX)) for c in named])
    return _typed_pcf(path, reports)


def _typed_pcf(path: Path, frame: pl.DataFrame) -> Parsed:
    """Curated footprint rows (DevicePcf's columns, as text) typed and checked; ``shares_sum`` computed."""
    schema = {name: dtype for name, dtype in polars_schema(DevicePcf).items() if name not in _PROVENANCE}
    required = [name for name, col in columns(DevicePcf).items() if name not in _PROVENANCE and not col.nullable]
    require_columns(path, frame, required)
    if "shares_sum" in frame.columns:
        raise SourceParseError(path, 1, "column 'shares_sum' is derived from the four shares; remove it from the file")
    extra = [c for c in frame.columns if c not in schema and c != "source_row"]
    if extra:
        raise SourceParseError(path, 1, f"unknown column(s) {extra}; DevicePcf has {list(schema)}")
    kinds = {pl.Date: iso_date, pl.Float64: finite_float}
    casts = {name: kinds.get(dtype, dtype) for name, dtype in schema.items() if name in frame.columns and dtype != pl.String}
    typed, rejects = checked_casts(frame, casts)
    typed = typed.with_columns([pl.lit(None, dtype=pl.Float64).alias(c) for c in SHARE_COLUMNS if c not in typed.columns])
    typed, share_rejects = split_share_sums(typed)
    return Parsed(frame=typed, rejects=[*rejects, *share_rejects])
