"""The parameter sets the model evaluates in the warehouse: core.variants, one row per scenario and variant, read
from the families' files (``sql/variants/<family>.sql``, one file per family: a family is added by a file).

Each family's file selects, per variant, its family, the rows it is evaluated on (the columns of core.variants:
bases, basis_filter, patterns, own_pattern, designs, method_filter, method_rows) and the parameters it overrides
(``overrides``, a list of (parameter, value, value_text)); a column it leaves out takes the default of the macro
``variant_columns`` (sql/model/macros.sql). core.variant_parameters, core.variant_inputs and core.variant_devices
are the declared SQL over this table, and core.model_evaluation the model over them.
"""

from __future__ import annotations

import duckdb
import polars as pl

from pipelines.paths import SQL_DIR, sql_text
from pipelines.warehouse.queries import query_pl
from pipelines.warehouse.tables import install_macros

#: The folder of the families' files, below ``sql/``.
FAMILIES_DIR = "variants"
#: Each column of core.variants a family may leave out, and its default (SQL, over the united rows).
DEFAULTS = {"basis_filter": "'all'", "own_pattern": "false", "designs": "false", "method_filter": "'all'",
            "overrides": "[]::struct(parameter varchar, value double, value_text varchar)[]"}


def family_files() -> list[str]:
    """The families' files (``variants/<family>.sql``), in name order."""
    folder = SQL_DIR.joinpath(FAMILIES_DIR)
    return sorted(f"{FAMILIES_DIR}/{entry.name}" for entry in folder.iterdir() if entry.name.endswith(".sql"))


def variant_rows(con: duckdb.DuckDBPyConnection) -> pl.DataFrame:
    """core.variants: every family's rows united by name with the macro ``variant_columns`` (its columns and types),
    each column a family leaves out at its default (:data:`DEFAULTS`)."""
    install_macros(con)
    parts = " union all by name ".join(f"({sql_text(relative)})" for relative in family_files())
    filled = ", ".join(f"coalesce({column}, {default}) as {column}" for column, default in DEFAULTS.items())
    query = f"select * replace ({filled}) from (select * from variant_columns() union all by name {parts})"  # noqa: S608 - the project's files
    return query_pl(con, query + " order by family <> 'base', family, scenario_id, variant_id")
