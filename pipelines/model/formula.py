"""The model's one formula (the table macro ``model_class_rows``, ``sql/model/model_rows.sql``), applied
set-wise to the parameter sets that are random or found by iteration: the Monte Carlo's draws
(pipelines.model.uncertainty) and break-even's search points (pipelines.model.sensitivity). Every other
evaluation is declared SQL: core.model_evaluation over core.variants' families, and marts.siting's pairs
(sql/marts/siting.sql calls the macro over the tables of sql/siting/). Every
evaluation passes the macro tables (its parameter sets, their device rows, and one variant row per set
naming the rows it is evaluated on, core.variants' columns): no session variable, no macro redefined.
Nothing here loops over scenarios or draws in Python.
"""

from __future__ import annotations

from collections.abc import Collection, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

import duckdb
import polars as pl

from pipelines.identifiers import checked_identifier
from pipelines.model.device_rows import KEYS, device_classes, device_rows
from pipelines.model.draw_tables import ParameterSets, load_split_sets
from pipelines.model.methods import reference_tables
from pipelines.paths import sql_text
from pipelines.warehouse.queries import query_pl, table_exists
from pipelines.warehouse.tables import install_macros, load_frame, write_table
from schemas.vocabulary import (
    BASES,
    BASIS_FILTERS,
    DEVICE_FIELDS,
    DEVICE_MARKER,
    FLEET_CLASS,
    HEADLINE_BASES,
    NETWORK_METHODS,
    PATTERN_ROWS,
    PATTERNS,
    POLICIES,
    RESIZE_POWERS,
)

#: Which method rows to evaluate (sql/core/model_evaluation.sql): each frame's headline row of each kind
#: (network method, allocation policy, resize power); every network method at the headline policy and
#: resize power; or every row it admits on the patterns marts.verdict reads (every row on the
#: scenario's own pattern, every policy on the pattern that moves no bytes, the headline row
#: elsewhere). A collection of (network method, policy, resize power) triples: only those rows,
#: where the scenario's frame admits them.
METHOD_FILTERS = ("headline", "network", "all")


def scenario_inputs(con: duckdb.DuckDBPyConnection) -> pl.DataFrame:
    """core.scenarios as model inputs: one row per scenario, its base parameter set (variant 'base')."""
    frame = query_pl(con, "select * from core.scenarios order by scenario_id")
    return frame.select("scenario_id", "variant_id", pl.exclude(KEYS))


def parameter_columns(inputs: pl.DataFrame) -> list[str]:
    """The model parameters among a frame's columns (everything but the keys)."""
    return [c for c in inputs.columns if c not in KEYS]


def scenario_devices(con: duckdb.DuckDBPyConnection) -> pl.DataFrame:
    """core.scenario_devices: one row per scenario and edge device class (the SQL macro ``device_rows`` over
    core.scenarios), with the devices its rows were read from (the keys of their factor_refs)."""
    install_macros(con)
    return query_pl(con, sql_text("core/scenario_devices.sql"), {"suffixes": [f"_{f}" for f in DEVICE_FIELDS]})


def install_methods(con: duckdb.DuckDBPyConnection) -> None:
    """The method tables the model reads (core.frames, core.patterns, core.bases, ...) on a connection
    that lacks them: a scratch connection beside the warehouse's (the Sobol runs', a test's). They are
    the rows the ``model_methods`` asset writes to the warehouse (:func:`reference_tables`), so the
    model reads one set of tables, with one set of names, wherever it runs."""
    if table_exists(con, "core.patterns"):
        return
    for table, rows in reference_tables().items():
        write_table(con, table, pl.from_arrow(rows))


#: The temporary tables an evaluation writes (its parameter sets, device rows, variant rows and a mixed
#: fleet's rows), dropped when it ends.
_TABLES = ("model_given_inputs", "model_device_rows", "model_variant_rows", "model_fleet_inputs", "model_fleet_devices",
           "model_fleet_rows")


def _variant_rows(
    con: duckdb.DuckDBPyConnection,
    inputs: str,
    *,
    family: str,
    all_bases: bool,
    patterns: Sequence[str],
    own_pattern: bool,
    basis_filter: str | None,
    methods: str | Collection[tuple[str, str, str]],
    designs: bool,
    set_patterns: str | None = None,
) -> str:
    """The variant rows of an evaluation (the model's argument ``variants``: the columns of core.variants), one
    per parameter set of ``inputs``, as the temporary table ``model_variant_rows``; returns its name. ``set_patterns``:
    the name of a table of (scenario_id, variant_id, pattern) rows, each set evaluated on its own patterns only."""
    unknown = sorted(set(patterns) - set(PATTERN_ROWS))
    if unknown:
        raise ValueError(f"unknown communication patterns {unknown}; known: {list(PATTERN_ROWS)}")
    basis_filter = basis_filter or ("all" if all_bases else "headline")
    if basis_filter not in BASIS_FILTERS:
        raise ValueError(f"unknown basis filter {basis_filter!r}; known: {list(BASIS_FILTERS)}")
    method_rows = None
    if isinstance(methods, str):
        if methods not in METHOD_FILTERS:
            raise ValueError(f"unknown method filter {methods!r}; known: {list(METHOD_FILTERS)}")
    else:
        rows = [tuple(row) for row in methods]
        wrong = [row for row in rows if len(row) != 3 or row[0] not in NETWORK_METHODS or row[1] not in POLICIES
                 or row[2] not in RESIZE_POWERS]
        if not rows or wrong:
            raise ValueError(f"method rows {wrong or rows}: expected (network method, allocation policy, resize power) of "
                             f"{list(NETWORK_METHODS)}, {list(POLICIES)}, {list(RESIZE_POWERS)}")
        method_rows = [{"network_method": m, "policy": p, "resize_power": r} for m, p, r in rows]
        methods = "rows"
    columns = ("$family::varchar as family, $bases::varchar[] as bases, $basis_filter::varchar as basis_filter, "
               "$patterns::varchar[] as patterns, $own::boolean as own_pattern, $designs::boolean as designs, "
               "$methods::varchar as method_filter, "
               "$rows::struct(network_method varchar, policy varchar, resize_power varchar)[] as method_rows")
    sql = f"create or replace temp table model_variant_rows as select distinct scenario_id, variant_id, {columns} from {inputs}"  # noqa: S608 - a checked name; every value bound
    if set_patterns is not None:
        own = checked_identifier(set_patterns)
        sql = (f"create or replace temp table model_variant_rows as select sets.* replace (own.patterns as patterns) from "  # noqa: S608 - checked names; every value bound
               f"(select distinct scenario_id, variant_id, {columns} from {inputs}) as sets inner join "
               f"(select scenario_id, variant_id, list(distinct pattern order by pattern) as patterns from {own} group by all) as own "
               "using (scenario_id, variant_id)")
    con.execute(sql, {"family": family, "bases": list(BASES if all_bases else HEADLINE_BASES), "basis_filter": basis_filter,
                      "patterns": list(patterns), "own": own_pattern, "designs": designs, "methods": methods, "rows": method_rows})
    return "temp.model_variant_rows"


def _prepare(
    con: duckdb.DuckDBPyConnection,
    inputs: str | ParameterSets | pl.DataFrame | None,
    devices: str | None,
    **variant: Any,
) -> str:
    """Set up an evaluation (:func:`model_view`'s arguments) and return the query that evaluates it: the macro
    model_class_rows over the tables of parameter sets, device rows and variant rows, and a mixed fleet's rows."""
    install_macros(con)
    install_methods(con)
    if isinstance(inputs, ParameterSets):
        inputs, devices = inputs
    if isinstance(inputs, pl.DataFrame):
        inputs = load_frame(con, "temp.model_given_inputs", inputs)
    if inputs is None:  # the warehouse's scenarios, each its base set
        inputs = "core.scenarios"
    inputs = checked_identifier(inputs)
    if devices is None:  # the device rows of the inputs, computed once for the evaluation
        con.execute(f"create or replace temp table model_device_rows as select * from device_rows('{inputs}')")  # noqa: S608 - a checked name
        devices = "temp.model_device_rows"
    devices = checked_identifier(devices)
    variants = _variant_rows(con, inputs, **variant)
    query = f"select * from model_class_rows('{inputs}', '{devices}', '{variants}')"  # noqa: S608 - checked names
    return _with_fleet_rows(con, inputs, devices, variants, query) if _has_fleets(con, devices) else query


def _has_fleets(con: duckdb.DuckDBPyConnection, devices: str) -> bool:
    """Whether any parameter set's device rows have a mixed fleet (a fleet_share)."""
    return bool(con.execute(f"select coalesce(bool_or(fleet_share is not null), false) from {devices}").fetchall()[0][0])  # noqa: S608 - a checked name


def _with_fleet_rows(con: duckdb.DuckDBPyConnection, inputs: str, devices: str, variants: str, query: str) -> str:
    """``query`` (the class rows) beside the mixed fleets' rows, evaluated first over the parameter sets that have a
    fleet alone (the macro fleet_rows over their class rows): the macro model_rows would hold every set's class rows
    to find the fleets among them (a Monte Carlo's hundreds of thousands), here only those sets are evaluated twice."""
    con.execute(f"create or replace temp table model_fleet_inputs as select * from {inputs} semi join "  # noqa: S608 - checked names
                f"(select distinct scenario_id, variant_id from {devices} where fleet_share is not null) "
                "using (scenario_id, variant_id)")
    con.execute(f"create or replace temp table model_fleet_devices as select * from {devices} "  # noqa: S608 - a checked name
                "semi join temp.model_fleet_inputs using (scenario_id, variant_id)")
    fleet_classes = f"select * from model_class_rows('temp.model_fleet_inputs', 'temp.model_fleet_devices', '{variants}')"  # noqa: S608 - a checked name
    con.execute(f"create or replace temp table model_fleet_rows as with class_rows as ({fleet_classes}) "  # noqa: S608 - the project's SQL
                "select * from fleet_rows('class_rows')")
    return f"{query} union all by name select * from temp.model_fleet_rows"  # noqa: S608 - the project's SQL


def _clean_up(con: duckdb.DuckDBPyConnection) -> None:
    """Drop an evaluation's temporary view and tables: the connection is then as it was."""
    con.execute("drop view if exists temp.model_evaluation")
    for table in _TABLES:
        con.execute(f"drop table if exists temp.{table}")


@contextmanager
def model_view(
    con: duckdb.DuckDBPyConnection,
    inputs: str | ParameterSets | pl.DataFrame | None = None,
    *,
    devices: str | None = None,
    all_bases: bool = False,
    patterns: Sequence[str] = PATTERNS,
    own_pattern: bool = False,
    basis_filter: str | None = None,
    methods: str | Collection[tuple[str, str, str]] = "headline",
    designs: bool = False,
    family: str = "base",
) -> Iterator[str]:
    """The temporary view ``model_evaluation``: the macro model_class_rows (sql/model/model_rows.sql) over a
    table of parameter sets, and a mixed fleet's rows.

    ``inputs``: the name of a table or view of parameter sets (scenario_id, variant_id and
    core.scenarios' columns: :func:`substitute`'s, siting's pairs, the Monte Carlo draws), or None:
    the warehouse's scenarios (core.scenarios, each its base set), or a frame of them, loaded as a
    temporary table first (:func:`pipelines.warehouse.tables.load_frame`; a test's rows). Whatever the
    source, the model reads tables, passed to the macro by name. ``devices``: the name of their
    device rows, else the macro ``device_rows`` over the inputs (sql/model/macros.sql). The arguments
    below become one variant row per set (``family`` names them), the macro's ``variants``.
    ``all_bases``: every basis of :data:`BASES`, else only each scenario's headline;
    ``basis_filter`` overrides that choice of rows (:data:`BASIS_FILTERS`).
    ``patterns``: the communication patterns of every parameter set; ``own_pattern``: each
    set's own named pattern (its ``comm_pattern``) beside them; ``designs``: each set's edge training
    designs (core.patterns edge_design, where its frame resizes the fleet) beside them.
    ``methods``: which method rows (:data:`METHOD_FILTERS`), or a collection of (network method,
    allocation policy, resize power) triples: only those (a frame admitting none of them has no rows).
    """
    try:
        query = _prepare(con, inputs, devices, family=family, all_bases=all_bases, patterns=patterns,
                         own_pattern=own_pattern, basis_filter=basis_filter, methods=methods, designs=designs)
        con.execute("create or replace temp view model_evaluation as " + query)
        yield "model_evaluation"
    finally:
        _clean_up(con)


def evaluate(
    con: duckdb.DuckDBPyConnection,
    inputs: str | ParameterSets | pl.DataFrame | None = None,
    *,
    all_bases: bool = False,
    patterns: Sequence[str] = PATTERNS,
    own_pattern: bool = False,
    basis_filter: str | None = None,
    methods: str | Collection[tuple[str, str, str]] = "headline",
    family: str = "base",
    set_patterns: str | None = None,
) -> pl.DataFrame:
    """R and its parts per parameter set x device class x basis x pattern x method row (sql/core/model_evaluation.sql)
    over ``inputs`` (:func:`model_view`'s: ``own_pattern`` adds each set's own named pattern), queried at once
    (no view to bind first). ``set_patterns``: a table of (scenario_id, variant_id, pattern) rows, each set
    evaluated on its own rows' patterns in place of ``patterns`` (a search point needs one)."""
    try:
        query = _prepare(con, inputs, None, family=family, all_bases=all_bases, patterns=patterns,
                         own_pattern=own_pattern, basis_filter=basis_filter, methods=methods, designs=False,
                         set_patterns=set_patterns)
        return query_pl(con, query)
    finally:
        _clean_up(con)


def substitute(con: duckdb.DuckDBPyConnection, overrides: pl.DataFrame, classes: pl.DataFrame | None = None) -> ParameterSets:
    """Parameter sets that differ from their scenario's in the overridden parameters only, as tables
    (:func:`pipelines.model.draw_tables.load_split_sets`: the overridden columns per set, every other
    parameter per scenario), replacing an earlier call's; returns their names for :func:`evaluate`.

    ``overrides``: long rows (scenario_id, variant_id, parameter, value); a variant may override
    several parameters. One row per (scenario_id, variant_id) of them, every other parameter at the
    scenario's value (core.scenarios). ``classes``: (scenario_id, variant_id, device_class) rows, each set's device
    rows kept for its class only (every class where the class is the mixed fleet's, whose row sums them): a search
    point is searched for one class. The overridden columns are computed here and enter the database as
    a table, as the Monte Carlo's draws do: a search's points are many, and pivoting every parameter of
    each in SQL costs more than evaluating the model.
    """
    base = scenario_inputs(con)
    params = parameter_columns(base)
    unknown = set(overrides.get_column("parameter").unique().to_list()) - set(params)
    if unknown:
        raise ValueError(f"not model parameters: {sorted(unknown)}")
    wide = overrides.with_columns(pl.col("variant_id").cast(pl.String)).pivot(
        on="parameter", index=["scenario_id", "variant_id"], values="value", aggregate_function="first")
    changed = [c for c in wide.columns if c not in KEYS]
    wide = wide.rename({c: f"__new_{c}" for c in changed})
    drawn = wide.join(base.select("scenario_id", *changed), on="scenario_id", how="inner").select(
        "scenario_id", "variant_id", *[pl.coalesce(pl.col(f"__new_{c}"), pl.col(c)).alias(c) for c in changed])
    constants = base.drop("variant_id", *changed)
    sets = drawn.join(constants, on="scenario_id")
    devices = device_rows(sets, KEYS, device_classes(sets.columns)).filter(pl.col(DEVICE_FIELDS[DEVICE_MARKER]).is_not_null())
    if classes is not None:
        fleet = classes.filter(pl.col("device_class") == FLEET_CLASS).select(KEYS)
        devices = pl.concat([devices.join(classes.select(*KEYS, "device_class"), on=[*KEYS, "device_class"], how="semi"),
                             devices.join(fleet, on=KEYS, how="semi")]).unique(maintain_order=True)
    return load_split_sets(con, drawn.to_arrow(), constants, devices)
