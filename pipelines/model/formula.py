"""The model's one formula (``sql/model/evaluate.sql`` over ``sql/model/macros.sql``), applied
set-wise to any table of parameter sets: core.scenarios, one-at-a-time substitutions, search
points or Monte Carlo draws. Nothing here loops over scenarios or draws in Python.
"""

from __future__ import annotations

from collections.abc import Collection, Iterator, Sequence
from contextlib import contextmanager

import duckdb
import polars as pl
import pyarrow as pa

from pipelines.identifiers import checked_identifier
from pipelines.model.methods import reference_tables
from pipelines.paths import sql_text
from pipelines.warehouse.queries import query_pl, table_exists
from pipelines.warehouse.tables import install_macros
from schemas.vocabulary import (
    BASES,
    BASIS_FILTERS,
    DEVICE_FIELDS,
    DEVICE_MARKER,
    HEADLINE_BASES,
    NETWORK_METHODS,
    PATTERNS,
    POLICIES,
    RESIZE_POWERS,
)

KEYS = ("scenario_id", "variant_id")
#: Which method rows to evaluate (sql/model/evaluate.sql): each frame's headline row of each kind
#: (network method, allocation policy, resize power); every network method at the headline policy and
#: resize power; or every row it admits on the patterns marts.verdict reads (every row on the
#: scenario's own pattern, every policy on the pattern that moves no bytes, the headline row
#: elsewhere). A collection of (network method, policy, resize power) triples: only those rows,
#: where the scenario's frame admits them.
METHOD_FILTERS = ("headline", "network", "all")


def scenario_inputs(con: duckdb.DuckDBPyConnection) -> pl.DataFrame:
    """core.scenarios as model inputs: one row per scenario, variant 'base'."""
    frame = query_pl(con, "select * from core.scenarios order by scenario_id")
    return frame.with_columns(pl.lit("base").alias("variant_id")).select(
        "scenario_id", "variant_id", pl.exclude(KEYS)
    )


def parameter_columns(inputs: pl.DataFrame) -> list[str]:
    """The model parameters among a frame's columns (everything but the keys)."""
    return [c for c in inputs.columns if c not in KEYS]


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


def scenario_devices(con: duckdb.DuckDBPyConnection) -> pl.DataFrame:
    """core.scenario_devices: one row per scenario and edge device class, with the devices its
    rows were read from (the keys of their factor_refs)."""
    inputs = scenario_inputs(con)
    rows = device_rows(inputs, ("scenario_id",), device_classes(inputs.columns)).filter(
        pl.col(DEVICE_FIELDS[DEVICE_MARKER]).is_not_null()
    )
    refs = query_pl(
        con,
        sql_text("model/device_refs.sql"),
        {"suffixes": [f"_{f}" for f in DEVICE_FIELDS]},
    )
    joined = rows.join(refs, on=["scenario_id", "device_class"], how="left")
    return joined.select("scenario_id", "device_class", "device_ids", *DEVICE_FIELDS.values()).sort(
        "scenario_id", "device_class"
    )


def publish_model_inputs(con: duckdb.DuckDBPyConnection) -> None:
    """The formula's default inputs as views of the warehouse (schema main): ``model_inputs`` over
    core.scenarios and ``model_devices`` over core.scenario_devices (sql/model/inputs_base.sql,
    devices_base.sql), so sql/model/evaluate.sql runs on the published file with no set-up. A caller
    that evaluates other parameter sets shadows them with temporary views of the same names
    (:func:`model_view`)."""
    con.execute("create or replace view main.model_inputs as " + sql_text("model/inputs_base.sql"))
    con.execute("create or replace view main.model_devices as " + sql_text("model/devices_base.sql"))


def install_methods(con: duckdb.DuckDBPyConnection) -> None:
    """The method tables the model reads (core.frames, core.patterns, core.bases, ...) on a connection
    that lacks them: a scratch connection beside the warehouse's (the Sobol runs', a test's). They are
    the rows the ``model_methods`` asset writes to the warehouse (:func:`reference_tables`), so the
    model reads one set of tables, with one set of names, wherever it runs."""
    if table_exists(con, "core.patterns"):
        return
    con.execute("create schema if not exists core")
    for table, rows in reference_tables().items():
        con.register("_method_rows", rows)
        con.execute(f"create table {checked_identifier(table)} as select * from _method_rows")  # noqa: S608 - a checked constant
        con.unregister("_method_rows")


def _has_fleets(inputs: pa.Table, constants: pl.DataFrame | None) -> bool:
    """Whether any parameter set has a mixed fleet (a non-null ``<class>_fleet_share``)."""
    suffix = "_fleet_share"
    columns = [pl.from_arrow(inputs.select([c])).to_series() for c in inputs.column_names if c.endswith(suffix)]
    if constants is not None:
        columns += [constants.get_column(c) for c in constants.columns if c.endswith(suffix)]
    return any(column.null_count() < len(column) for column in columns)


def _register_devices(
    con: duckdb.DuckDBPyConnection, inputs: pa.Table, constants: pl.DataFrame | None
) -> None:
    """The view ``model_devices``: one row per parameter set and edge device class."""
    if constants is None:
        frame = pl.from_arrow(inputs)
        con.register(
            "model_devices", device_rows(frame, KEYS, device_classes(frame.columns)).to_arrow()
        )
        return
    drawn = pl.from_arrow(inputs)
    classes = device_classes([*drawn.columns, *constants.columns])
    in_draws = [f for f in DEVICE_FIELDS if any(f"{c}_{f}" in drawn.columns for c in classes)]
    constant = [f for f in DEVICE_FIELDS if f not in in_draws]
    con.register(
        "model_device_draws",
        device_rows(drawn, KEYS, classes, in_draws, fill_from=constants).to_arrow(),
    )
    con.register(
        "model_device_constants",
        device_rows(constants, ("scenario_id",), classes, constant).to_arrow(),
    )
    con.execute("create or replace temp view model_devices as " + sql_text("model/devices.sql"))


@contextmanager
def model_view(
    con: duckdb.DuckDBPyConnection,
    inputs: pl.DataFrame | pa.Table,
    *,
    constants: pl.DataFrame | None = None,
    all_bases: bool = False,
    patterns: Sequence[str] = PATTERNS,
    own_pattern: bool = False,
    basis_filter: str | None = None,
    methods: str | Collection[tuple[str, str, str]] = "headline",
) -> Iterator[str]:
    """The temporary view ``model_evaluation``: evaluate.sql over ``inputs``.

    ``all_bases``: every basis of :data:`BASES`, else only each scenario's headline;
    ``basis_filter`` overrides that choice of rows (:data:`BASIS_FILTERS`).
    ``inputs`` holds every parameter column, or, with ``constants`` (one row per scenario),
    only the varying ones: the two are joined on scenario_id (sql/model/inputs.sql).
    ``patterns``: the communication patterns of every parameter set; ``own_pattern``: each
    set's own named pattern (its ``comm_pattern``) beside them.
    ``methods``: which method rows (:data:`METHOD_FILTERS`), or a collection of (network method,
    allocation policy, resize power) triples: only those (a frame admitting none of them has no rows). Queries
    over the view aggregate in DuckDB without materialising one row per draw, class and
    pattern in Python.
    """
    install_macros(con)
    install_methods(con)
    table = inputs.to_arrow() if isinstance(inputs, pl.DataFrame) else inputs
    if constants is None:
        con.register("model_inputs", table)
    else:
        con.register("model_draws", table)
        con.register("model_constants", constants.to_arrow())
        con.execute("create or replace temp view model_inputs as " + sql_text("model/inputs.sql"))
    _register_devices(con, table, constants)
    unknown = sorted(set(patterns) - set(PATTERNS))
    if unknown:
        raise ValueError(f"unknown communication patterns {unknown}; known: {list(PATTERNS)}")
    basis_filter = basis_filter or ("all" if all_bases else "headline")
    if basis_filter not in BASIS_FILTERS:
        raise ValueError(f"unknown basis filter {basis_filter!r}; known: {list(BASIS_FILTERS)}")
    con.execute("set variable model_basis_filter = $filter", {"filter": basis_filter})
    con.execute("set variable model_patterns = $patterns::varchar[]", {"patterns": list(patterns)})
    con.execute("set variable model_own_pattern = $own::boolean", {"own": own_pattern})
    if isinstance(methods, str):
        if methods not in METHOD_FILTERS:
            raise ValueError(f"unknown method filter {methods!r}; known: {list(METHOD_FILTERS)}")
    else:
        rows = [tuple(row) for row in methods]
        unknown = [row for row in rows if len(row) != 3 or row[0] not in NETWORK_METHODS or row[1] not in POLICIES
                   or row[2] not in RESIZE_POWERS]
        if not rows or unknown:
            raise ValueError(f"method rows {unknown or rows}: expected (network method, allocation policy, resize power) of "
                             f"{list(NETWORK_METHODS)}, {list(POLICIES)}, {list(RESIZE_POWERS)}")
        con.execute("set variable model_method_rows = $rows::struct(network_method varchar, policy varchar, resize_power varchar)[]",
                    {"rows": [{"network_method": m, "policy": p, "resize_power": r} for m, p, r in rows]})
        methods = "rows"
    con.execute("set variable model_method_filter = $methods", {"methods": methods})
    con.execute("set variable model_bases = $bases::varchar[]", {"bases": list(BASES if all_bases else HEADLINE_BASES)})
    if _has_fleets(table, constants):
        con.execute("create or replace temp view model_class_rows as " + sql_text("model/evaluate.sql"))
        con.execute("create or replace temp view model_evaluation as " + sql_text("model/fleet.sql"))
    else:  # the class rows are the evaluation: one view, bound once
        con.execute("create or replace temp view model_evaluation as " + sql_text("model/evaluate.sql"))
    try:
        yield "model_evaluation"
    finally:
        con.execute("drop view if exists temp.model_evaluation")
        con.execute("drop view if exists temp.model_class_rows")
        if constants is None:
            con.unregister("model_inputs")
            con.unregister("model_devices")
        else:
            con.execute("drop view if exists temp.model_inputs")  # never the warehouse's own (main.model_inputs)
            con.execute("drop view if exists temp.model_devices")
            for name in (
                "model_draws",
                "model_constants",
                "model_device_draws",
                "model_device_constants",
            ):
                con.unregister(name)


def evaluate(
    con: duckdb.DuckDBPyConnection,
    inputs: pl.DataFrame,
    *,
    all_bases: bool = False,
    patterns: Sequence[str] = PATTERNS,
    basis_filter: str | None = None,
    methods: str | Collection[tuple[str, str, str]] = "headline",
) -> pl.DataFrame:
    """R and its parts per input row x device class x basis x pattern x method row (sql/model/evaluate.sql)."""
    with model_view(con, inputs, all_bases=all_bases, patterns=patterns, basis_filter=basis_filter, methods=methods):
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
    wide = overrides.pivot(
        on="parameter",
        index=["scenario_id", "variant_id"],
        values="value",
        aggregate_function="first",
    )
    changed = [c for c in wide.columns if c not in KEYS]
    wide = wide.rename({c: f"__new_{c}" for c in changed})
    joined = wide.join(base.drop("variant_id"), on="scenario_id", how="inner")
    return joined.select(
        "scenario_id",
        "variant_id",
        *[
            pl.coalesce(pl.col(f"__new_{c}"), pl.col(c)).alias(c) if c in changed else pl.col(c)
            for c in params
        ],
    )
