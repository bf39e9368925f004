"""Communication patterns as rows of a source file: ``sources/curated/patterns.csv`` (manifest entry
``curated_patterns``), one row per pattern, read into core.patterns by the build.

A pattern's traffic is coefficients of the model's byte and radio terms (sql/model/macros.sql
comm_bytes, radio_kwh; schemas/methods.py ``Patterns`` says what each multiplies); the model reads them
from the row, never the pattern's name. Adding a pattern is adding a row (then ``edge-carbon register
--refresh curated_patterns``); removing the row undoes it.

The names are read when this module is imported, from the sources folder the pipeline reads
(``$EDGE_CARBON_SOURCES``, else the checkout's ``sources/``, else ``./sources``: as
``pipelines/paths.py`` ``sources_dir``), so the vocabularies that validate a scenario's
``comm_pattern`` are the file's rows.
"""

from __future__ import annotations

import csv
import os
from pathlib import Path
from typing import NamedTuple, get_type_hints

import pandera.polars as pa
import polars as pl

from schemas.base import Contract
from schemas.scenario_parameters import STATUSES
from schemas.statuses import STATUS_TEXT

#: The patterns' file, below the sources folder (its manifest entry's path).
PATTERNS_PATH = "curated/patterns.csv"
#: The manifest id of the patterns' file.
PATTERNS_SOURCE_ID = "curated_patterns"
#: Environment variable naming another sources folder (pipelines/paths.py SOURCES_ENV).
SOURCES_ENV = "EDGE_CARBON_SOURCES"


class CommPattern(NamedTuple):
    """One communication pattern's row of core.patterns: what its traffic is made of, as coefficients of the
    model's byte and radio terms (sql/model/macros.sql comm_bytes, radio_kwh; schemas/methods.py Patterns says
    what each multiplies), and the ends of each byte it moves."""

    #: Home access lines and routers each byte passes (2 between devices, 1 to a server), and data-centre ends.
    home_ends: int
    server_ends: int
    #: Bytes per sync (syncs = tokens / (N x tokens per device step x local steps)): x N p b, x max(N - 1, 0) p b.
    sync_n: float = 0.0
    sync_n_minus_1: float = 0.0
    #: Bytes per token: x 2 (S - 1) x hidden x activation bytes (activations forward, their gradients back).
    activations: float = 0.0
    #: The all-reduce between the N / S replicas of an S-stage model: x tokens x 2 p b / (tokens per step x local
    #: steps) x max(1 - S / N, 0).
    stage_allreduce: float = 0.0
    #: The sending radio: x every online device busy for its training window at the link utilisation (the
    #: paper's radio model), x the time to send the bytes at the link rate.
    radio_per_window: float = 0.0
    radio_per_byte: float = 0.0
    #: Whether the model is split into S stages (comm_stages), each device holding 1 / S of the training state.
    splits_model: bool = False
    #: Whether the traffic each device sends falls as the fleet grows at a fixed global batch, so a larger fleet
    #: can carry it (its stage terms only: pipeline_bytes_at).
    resizable: bool = False
    #: Whether every scenario is evaluated on the pattern (the Xue et al. patterns), or only a scenario whose
    #: comm_pattern names it (a pattern a published claim needs: federated rounds, DiLoCo among data centres).
    every_scenario: bool = True
    #: Whether the pattern is an edge training design: a scenario whose frame resizes its fleet (core.frames
    #: resizes_fleet) is evaluated on every design beside its own comm_pattern, and marts.verdict reads its best
    #: admissible design (the highest R) and its worst.
    edge_design: bool = False
    #: Whether the pattern syncs every outer step of DiLoCo-style local training (outer_steps_per_sync inner steps,
    #: its gradient bytes compressed by outer_compression) and trains outer_token_overhead more tokens, instead of
    #: syncing every local_steps_per_sync steps at comm_compression.
    outer_sync: bool = False
    #: Whether each device holds the training state at lean_training_bytes_per_param (bf16 weights and gradients,
    #: 8-bit Adam) instead of training_bytes_per_param.
    lean_state: bool = False

    @property
    def moves_bytes(self) -> bool:
        """Whether the pattern moves any bytes; the one that moves none is the compute-only row of every mart."""
        return any((self.sync_n, self.sync_n_minus_1, self.activations, self.stage_allreduce))


class PatternSources(Contract):
    """sources/curated/patterns.csv: one communication pattern per row, its coefficients (core.patterns'
    columns, schemas/methods.py Patterns) and where its formula comes from. Grain: one pattern."""

    pattern: str = pa.Field(unique=True, str_matches=r"^[a-z][a-z0-9_]*$", description="The pattern's name, as a scenario's comm_pattern names it.")
    home_ends: int = pa.Field(ge=0, le=2, description="Home access lines and routers each byte passes.")
    server_ends: int = pa.Field(ge=0, le=2, description="Data-centre ends each byte passes (2 between data centres).")
    sync_n: float = pa.Field(ge=0, description="Bytes per sync in units of N x p x b.")
    sync_n_minus_1: float = pa.Field(ge=0, description="Bytes per sync in units of max(N - 1, 0) x p x b.")
    activations: float = pa.Field(ge=0, description="Bytes per token in units of 2 (S - 1) x hidden x activation bytes.")
    stage_allreduce: float = pa.Field(ge=0, description="Multiplies the all-reduce between the N / S replicas of an S-stage model.")
    radio_per_window: float = pa.Field(ge=0, description="Multiplies the paper's radio energy (the training window).")
    radio_per_byte: float = pa.Field(ge=0, description="Multiplies the sending radio's energy for the bytes at the link rate.")
    splits_model: bool = pa.Field(description="Whether the model is split into S stages.")
    resizable: bool = pa.Field(description="Whether a larger fleet carries its traffic.")
    every_scenario: bool = pa.Field(description="Whether every scenario is evaluated on it, else only a scenario whose comm_pattern names it.")
    edge_design: bool = pa.Field(description="Whether it is an edge training design, evaluated for every scenario whose frame resizes its fleet.")
    outer_sync: bool = pa.Field(description="Whether it syncs every outer step (outer_steps_per_sync, outer_compression, outer_token_overhead).")
    lean_state: bool = pa.Field(description="Whether each device holds lean_training_bytes_per_param per parameter.")
    status: str = pa.Field(isin=STATUSES, description=STATUS_TEXT + ".")
    citation: str = pa.Field(str_length={"min_value": 1}, description="Where the pattern's formula comes from (the paper, or the model's own assumption).")
    citation_url: str = pa.Field(nullable=True, description="A link to the citation, where it has one.")
    notes: str = pa.Field(str_length={"min_value": 1}, description="What the pattern's traffic is, in words.")


#: The file's columns, in order: core.patterns' coefficients, then the attribution.
COLUMNS: tuple[str, ...] = tuple(PatternSources.to_schema().columns)
_BOOLS = {"true": True, "false": False}


def sources_folder() -> Path:
    """The sources folder the pipeline reads (pipelines/paths.py ``sources_dir``, which this layer cannot import)."""
    override = os.environ.get(SOURCES_ENV)
    if override:
        return Path(override).expanduser().resolve()
    root = Path(__file__).resolve().parent.parent
    if (root / "pyproject.toml").is_file() and (root / "sql").is_dir():
        return root / "sources"
    return Path.cwd().resolve() / "sources"


def patterns_file() -> Path:
    """sources/curated/patterns.csv of :func:`sources_folder`."""
    return sources_folder() / PATTERNS_PATH


class PatternFileError(ValueError):
    """The patterns' file cannot be read: one line naming the file, row, column and fix."""


def _cell(path: Path, line: int, column: str, text: str, kind: type) -> object:
    """One coefficient cell, typed, or :class:`PatternFileError` naming it."""
    value = text.strip()
    try:
        if kind is bool:
            return _BOOLS[value.lower()]
        return kind(value)
    except (KeyError, ValueError):
        want = "true or false" if kind is bool else ("a whole number" if kind is int else "a number")
        raise PatternFileError(f"{path}: line {line}, column {column}: {value!r} is not {want}; write {want}") from None


def _typed_rows(path: Path) -> list[dict[str, object]]:
    """The file's rows with each coefficient typed (a bad cell or row is one :class:`PatternFileError`
    line), in plain Python: the vocabulary reads it on import, also in Dagster's forkserver, where a
    polars thread pool started before the fork would leave the forked step processes waiting on it."""
    if not path.is_file():
        raise PatternFileError(f"{path}: the communication patterns' file is missing; restore it (git checkout -- "
                               f"sources/{PATTERNS_PATH}) or set ${SOURCES_ENV} to a sources folder that has it")
    fields = {name: kind.__name__ for name, kind in get_type_hints(CommPattern).items()}
    with path.open(encoding="utf-8", newline="") as handle:
        reader = csv.DictReader(handle)
        if tuple(reader.fieldnames or ()) != COLUMNS:
            raise PatternFileError(f"{path}: line 1: the header must be {','.join(COLUMNS)}")
        rows = []
        for line, raw in enumerate(reader, start=2):
            if None in raw or any(value is None for value in raw.values()):
                raise PatternFileError(f"{path}: line {line}: {len(COLUMNS)} cells expected; fix the row's commas")
            row: dict[str, object] = {"pattern": raw["pattern"].strip()}
            for column in COLUMNS[1:]:
                if column in fields:
                    kind = {"int": int, "float": float, "bool": bool}[fields[column]]
                    row[column] = _cell(path, line, column, raw[column], kind)
                else:
                    row[column] = raw[column].strip() or None
            rows.append(row)
    return rows


def read_pattern_frame(path: Path | None = None) -> pl.DataFrame:
    """The file's rows, typed and validated against :class:`PatternSources` (a bad cell or row is one
    :class:`PatternFileError` line)."""
    path = path or patterns_file()
    rows = _typed_rows(path)
    fields = {name: kind.__name__ for name, kind in get_type_hints(CommPattern).items()}
    schema = {c: {"int": pl.Int64, "float": pl.Float64, "bool": pl.Boolean}.get(fields.get(c, ""), pl.String) for c in COLUMNS}
    frame = pl.DataFrame(rows, schema=schema, orient="row")
    try:
        return PatternSources.validate(frame, lazy=True)
    except pa.errors.SchemaErrors as exc:
        first = exc.failure_cases.row(0, named=True)
        index = first.get("index")
        where = f"line {index + 2}, " if index is not None else ""
        raise PatternFileError(f"{path}: {where}column {first.get('column')}: {first.get('failure_case')!r} fails "
                               f"{first.get('check')}; fix the row (schemas/patterns.py PatternSources)") from None


def read_pattern_rows(path: Path | None = None, *, validate: bool = True) -> dict[str, CommPattern]:
    """pattern -> :class:`CommPattern`, in the file's order; ``validate=False`` types the cells only
    (no polars, no pandera: the vocabulary's import; the build's ``model_methods`` validates the file)."""
    rows = read_pattern_frame(path).iter_rows(named=True) if validate else _typed_rows(path or patterns_file())
    return {str(row["pattern"]): CommPattern(**{f: row[f] for f in CommPattern._fields}) for row in rows}
