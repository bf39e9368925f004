"""A what-if over one scenario: a run that recomputes one scenario's rows of every scenario-keyed
table, and keeps every other scenario's rows as the published warehouse holds them.

The run stages only the scenario's parameter rows (core.scenario_parameters' ``scenarios`` config),
so everything downstream computes that scenario alone; before the working copy is published, every
table it rewrote gets the other scenarios' rows back from the published file
(:func:`restore_other_scenarios`). Every scenario-keyed computation is per scenario (the draws are
seeded per scenario, ranks and searches are per scenario), so the tables equal a full build's.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path

import duckdb

from pipelines.identifiers import checked_identifier

#: The schemas whose tables a what-if recomputes (staging's are sources, never one scenario's).
SCHEMAS = ("core", "marts")
_PUBLISHED = "published_before_scope"


def scenario_tables(con: duckdb.DuckDBPyConnection, database: str | None = None) -> list[str]:
    """``schema.table`` of every base table of :data:`SCHEMAS` with a scenario_id column."""
    rows = con.execute(
        "select c.schema_name || '.' || c.table_name from duckdb_columns() as c "
        "inner join duckdb_tables() as t using (database_name, schema_name, table_name) "
        "where c.column_name = 'scenario_id' and list_contains($schemas, c.schema_name) "
        "and c.database_name = coalesce($database, current_database()) order by 1",
        {"schemas": list(SCHEMAS), "database": database},
    ).fetchall()
    return [row[0] for row in rows]


def restore_other_scenarios(con: duckdb.DuckDBPyConnection, published: Path, scenarios: Sequence[str]) -> dict[str, int]:
    """Into every scenario-keyed table of the run's copy that now holds none of a scenario's rows,
    that scenario's rows from ``published``, for every scenario but ``scenarios``; returns the rows
    restored per table. A table the run did not rewrite still holds every scenario: nothing is added."""
    if "'" in str(published):
        raise ValueError(f"a warehouse path with a quote cannot be attached: {published}")
    con.execute(f"attach '{published}' as {_PUBLISHED} (read_only)")
    try:
        restored, added = {}, False
        ours = set(scenario_tables(con))
        for table in scenario_tables(con, _PUBLISHED):
            if table not in ours:
                continue
            name = checked_identifier(table)
            added |= _add_missing_columns(con, table)
            count = con.execute(
                f"insert into {name} by name select * from {_PUBLISHED}.{name} "  # noqa: S608 - names from the catalog, checked
                f"where not list_contains($scenarios, scenario_id) "
                f"and scenario_id not in (select distinct scenario_id from {name})",
                {"scenarios": list(scenarios)},
            ).fetchall()[0][0]
            if count:
                restored[table] = count
        if added:
            _rebind_views(con)
        return restored
    finally:
        con.execute(f"detach {_PUBLISHED}")


def _add_missing_columns(con: duckdb.DuckDBPyConnection, table: str) -> bool:
    """The published table's columns the run's table lacks, added (null in its rows): a pivot's column
    that only another scenario sets (core.scenarios' ``<class>_<field>`` of a class it lacks)."""
    schema, name = table.split(".")
    missing = con.execute(
        "select column_name, data_type from duckdb_columns() where database_name = $db and schema_name = $schema "
        "and table_name = $table and column_name not in (select column_name from duckdb_columns() "
        "where database_name = current_database() and schema_name = $schema and table_name = $table) order by column_index",
        {"db": _PUBLISHED, "schema": schema, "table": name},
    ).fetchall()
    for column, data_type in missing:
        if not re.fullmatch(r"[a-z_][a-z0-9_]*", column) or not re.fullmatch(r"[A-Z0-9_ ,()\[\]]+", data_type):
            raise ValueError(f"{table}: column {column!r} of type {data_type!r} cannot be added by name")
        con.execute(f'alter table {checked_identifier(table)} add column "{column}" {data_type}')
    return bool(missing)


def _rebind_views(con: duckdb.DuckDBPyConnection) -> None:
    """The main schema's views (any ``select *`` over a core table) bound again,
    with their comments, so a column added to a table they read is theirs too."""
    views = con.execute("select view_name, sql, comment from duckdb_views() where database_name = current_database() "
                        "and schema_name = 'main' and not internal").fetchall()
    for name, sql, comment in views:
        if sql.startswith("CREATE VIEW "):
            con.execute("CREATE OR REPLACE VIEW " + sql.removeprefix("CREATE VIEW "))  # the catalog's own statement
            if comment:
                con.execute(f"comment on view main.{checked_identifier('main.' + name).split('.')[1]} is '{comment.replace(chr(39), chr(39) * 2)}'")
