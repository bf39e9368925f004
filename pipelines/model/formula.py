"""The model's one formula (``sql/model/evaluate.sql`` over ``sql/model/macros.sql``), applied
set-wise to any table of parameter sets: core.scenarios, one-at-a-time substitutions, search
points or Monte Carlo draws. Nothing here loops over scenarios or draws in Python.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager

import duckdb
import polars as pl
import pyarrow as pa

from pipelines.paths import sql_text
from pipelines.warehouse.queries import query_pl
from pipelines.warehouse.tables import install_macros
from schemas.vocabulary import BASES, BASIS_FILTERS, HEADLINE_BASES, PATTERNS

KEYS = ("scenario_id", "variant_id")


def scenario_inputs(con: duckdb.DuckDBPyConnection) -> pl.DataFrame:
    """core.scenarios as model inputs: one row per scenario, variant 'base'."""
    frame = query_pl(con, "select * from core.scenarios order by scenario_id")
    return frame.with_columns(pl.lit("base").alias("variant_id")).select("scenario_id", "variant_id", pl.exclude(KEYS))


def parameter_columns(inputs: pl.DataFrame) -> list[str]:
    """The model parameters among a frame's columns (everything but the keys)."""
    return [c for c in inputs.columns if c not in KEYS]


@contextmanager
def model_view(
    con: duckdb.DuckDBPyConnection,
    inputs: pl.DataFrame | pa.Table,
    *,
    constants: pl.DataFrame | None = None,
    all_bases: bool = False,
    patterns: Sequence[str] = PATTERNS,
    basis_filter: str | None = None,
) -> Iterator[str]:
    """The temporary view ``model_evaluation``: evaluate.sql over ``inputs``.

    ``all_bases``: every basis of :data:`BASES`, else only each scenario's headline;
    ``basis_filter`` overrides that choice of rows (:data:`BASIS_FILTERS`).
    ``inputs`` holds every parameter column, or, with ``constants`` (one row per scenario),
    only the varying ones: the two are joined on scenario_id (sql/model/inputs.sql). Queries
    over the view aggregate in DuckDB without materialising one row per draw, class and
    pattern in Python.
    """
    install_macros(con)
    table = inputs.to_arrow() if isinstance(inputs, pl.DataFrame) else inputs
    if constants is None:
        con.register("model_inputs", table)
    else:
        con.register("model_draws", table)
        con.register("model_constants", constants.to_arrow())
        con.execute("create or replace temp view model_inputs as " + sql_text("model/inputs.sql"))
    unknown = sorted(set(patterns) - set(PATTERNS))
    if unknown:
        raise ValueError(f"unknown communication patterns {unknown}; known: {list(PATTERNS)}")
    basis_filter = basis_filter or ("all" if all_bases else "headline")
    if basis_filter not in BASIS_FILTERS:
        raise ValueError(f"unknown basis filter {basis_filter!r}; known: {list(BASIS_FILTERS)}")
    con.execute("set variable model_bases = $bases::varchar[]", {"bases": list(BASES if all_bases else HEADLINE_BASES)})
    con.execute("set variable model_basis_filter = $filter", {"filter": basis_filter})
    con.execute("set variable model_patterns = $patterns::varchar[]", {"patterns": list(patterns)})
    con.execute("create or replace temp view model_evaluation as " + sql_text("model/evaluate.sql"))
    try:
        yield "model_evaluation"
    finally:
        con.execute("drop view if exists model_evaluation")
        if constants is None:
            con.unregister("model_inputs")
        else:
            con.execute("drop view if exists model_inputs")
            con.unregister("model_draws")
            con.unregister("model_constants")


def evaluate(
    con: duckdb.DuckDBPyConnection, inputs: pl.DataFrame, *, all_bases: bool = False, patterns: Sequence[str] = PATTERNS
) -> pl.DataFrame:
    """R and its parts per input row x device class x basis x pattern (sql/model/evaluate.sql)."""
    with model_view(con, inputs, all_bases=all_bases, patterns=patterns):
        return query_pl(con, "select * from model_evaluation")


def substitute(base: pl.DataFrame, overrides: pl.DataFrame) -> pl.DataFrame:
    """Parameter sets that differ from their scenario's in the overridden parameters only.

    ``base``: model inputs (one row per scenario). ``overrides``: long rows (scenario_id,
    variant_id, parameter, value); a variant may override several parameters. Returns one
    row per (scenario_id, variant_id), every other parameter at the scenario's value.
    """
    params = parameter_columns(base)
    unknown = set(overrides.get_column("parameter").unique().to_list()) - set(params)
    if unknown:
        raise ValueError(f"not model parameters: {sorted(unknown)}")
    wide = overrides.pivot(on="parameter", index=["scenario_id", "variant_id"], values="value", aggregate_function="first")
    changed = [c for c in wide.columns if c not in KEYS]
    wide = wide.rename({c: f"__new_{c}" for c in changed})
    joined = wide.join(base.drop("variant_id"), on="scenario_id", how="inner")
    return joined.select(
        "scenario_id", "variant_id",
        *[pl.coalesce(pl.col(f"__new_{c}"), pl.col(c)).alias(c) if c in changed else pl.col(c) for c in params],
    )
