"""The warehouse's table writers (pipelines/warehouse/tables.py) as Dagster materialisations,
each with the results of the written table's checks (:mod:`pipelines.lib.checks`)."""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, ParamSpec

import dagster as dg
import duckdb
import pandera.polars as pa

from pipelines.lib.checks import ConnectionReader, check_results, staging_checks
from pipelines.lib.metadata import column_metadata
from pipelines.paths import SQL_DIR, sql_text
from pipelines.warehouse import tables
from pipelines.warehouse.dictionary import TABLES
from pipelines.warehouse.lineage import tables_read_by

_OWN = ("table", "row_count", "preview", "sql_file", "frame")
P = ParamSpec("P")


def as_metadata(written: dict[str, Any]) -> dict[str, Any]:
    """Row count and preview (and the SQL file, for a mart built from one) as Dagster metadata."""
    metadata = {
        "dagster/row_count": written["row_count"],
        "preview": dg.MetadataValue.md(written["preview"]),
        **{k: v for k, v in written.items() if k not in _OWN},
    }
    if "sql_file" in written:
        metadata["sql"] = dg.MetadataValue.path(written["sql_file"])
    return metadata


def _materialised(write: Callable[P, dict[str, Any]], *, keyed: bool) -> Callable[P, dg.MaterializeResult]:
    """``write`` (a writer of :mod:`pipelines.warehouse.tables`, called with the connection
    first), returning its asset's materialisation with the table's checks evaluated on the rows
    it wrote (on the table as stored where the writer kept no frame).

    ``keyed``: the result names the written table's asset (for writers called from multi-assets).
    """

    @functools.wraps(write)
    def materialise(*args: P.args, **kwargs: P.kwargs) -> dg.MaterializeResult:
        written = write(*args, **kwargs)
        key = dg.AssetKey(written["table"].split(".")) if keyed else None
        checks = check_results(ConnectionReader(args[0]), written["table"], written.get("frame"))  # type: ignore[arg-type]
        return dg.MaterializeResult(asset_key=key, metadata=as_metadata(written), check_results=checks)

    return materialise


def with_metadata(result: dg.MaterializeResult, metadata: dict[str, Any]) -> dg.MaterializeResult:
    """``result`` with ``metadata`` added to its own (its check results kept)."""
    return result._replace(metadata={**(result.metadata or {}), **metadata})


#: :func:`pipelines.warehouse.tables.build_table`, as the asset's materialisation.
build_table = _materialised(tables.build_table, keyed=False)
#: :func:`pipelines.warehouse.tables.build_table_in_place`, as the asset's materialisation.
build_table_in_place = _materialised(tables.build_table_in_place, keyed=False)
#: :func:`pipelines.warehouse.tables.write_table`, as the materialisation of ``table``'s asset.
write_table = _materialised(tables.write_table, keyed=True)


@dataclass(frozen=True)
class SqlTable:
    """A table built from one SQL file below ``sql/``: the one declaration its asset and its SQL share.

    The asset's deps are the tables the SQL reads (:func:`pipelines.warehouse.lineage.tables_read`),
    plus ``also_reads``: tables the asset's Python reads before the SQL runs (e.g. core.scenarios
    through :func:`pipelines.model.formula.scenario_inputs`). With a model, the asset has the
    model's blocking checks (:func:`pipelines.lib.checks.staging_checks`; ``joins_sources``: also
    the join of every source_id), evaluated as :meth:`build` writes the table.
    """

    table: str
    sql_file: str
    model: type[pa.DataFrameModel] | None = None
    also_reads: tuple[str, ...] = ()
    joins_sources: bool = False

    @property
    def key(self) -> dg.AssetKey:
        return dg.AssetKey(self.table.split("."))

    def reads(self) -> list[str]:
        """Every table the asset reads: from its SQL, and ``also_reads``."""
        return sorted((set(tables_read_by(self.sql_file)) | set(self.also_reads)) - {self.table})

    def asset(
        self, *, group: str, kinds: set[str] | None = None, check_specs: Sequence[dg.AssetCheckSpec] = (), **kwargs: Any
    ) -> Callable[..., dg.AssetsDefinition]:
        """``@dg.asset`` for this table: key, group, kinds, derived deps, the model's columns and
        checks, and ``check_specs`` (checks of the table's own, :func:`pipelines.lib.checks.table_check`)."""
        metadata = column_metadata(self.model) if self.model is not None else {}
        checks = staging_checks(self.table, self.model, joins_sources=self.joins_sources) if self.model is not None else []
        return dg.asset(
            key=self.key, group_name=group, kinds=kinds or {"duckdb", "sql"},
            deps=[dg.AssetKey(t.split(".")) for t in self.reads()], metadata=metadata,
            check_specs=[*checks, *check_specs], **kwargs,
        )

    def build(
        self, con: duckdb.DuckDBPyConnection, params: dict[str, Any] | None = None
    ) -> dg.MaterializeResult:
        """Run the SQL into the table (cast to the model) as the asset's materialisation, with its checks."""
        return build_table(con, self.table, self.sql_file, params, self.model)


def sql_table(table: str, also_reads: tuple[str, ...] = (), *, joins_sources: bool = False) -> SqlTable:
    """``table`` built from ``sql/<schema>/<name>.sql``, checked against its model in the dictionary's
    registry (``joins_sources``: and every source_id joins staging.sources)."""
    return SqlTable(table, f"{table.replace('.', '/')}.sql", TABLES.get(table), also_reads, joins_sources)


#: The header line of a SQL file whose table is built from that file and its contract alone:
#: ``-- asset: group=marts``. The loader (``pipelines/defs/assets/sql_tables.py``) makes its asset.
ASSET_HEADER = re.compile(r"^-- asset: group=([a-z_]+)[ \t]*$", re.M)
#: The schemas whose SQL files may declare their tables so.
DECLARING_SCHEMAS = ("core", "marts")


@dataclass(frozen=True)
class DeclaredTable:
    """A table its SQL file declares: the table (SQL and contract), its asset group, and its description
    (the file's leading comment, without the header line)."""

    table: SqlTable
    group: str
    description: str


def leading_comment(sql: str) -> str:
    """The comment lines that open ``sql``, as one paragraph (the ``-- asset:`` header left out)."""
    lines = []
    for line in sql.splitlines():
        if not line.startswith("--"):
            break
        if not ASSET_HEADER.match(line):
            lines.append(line[2:].strip())
    return " ".join(line for line in lines if line)


def declared_tables(schemas: Sequence[str] = DECLARING_SCHEMAS) -> list[DeclaredTable]:
    """Every table of ``schemas`` whose ``sql/<schema>/<table>.sql`` carries the ``-- asset:`` header,
    with its contract (the model that names it, :func:`schemas.registry.contracts`), in file order."""
    found = []
    for schema in schemas:
        for entry in sorted(SQL_DIR.joinpath(schema).iterdir(), key=lambda e: e.name):
            if not entry.name.endswith(".sql"):
                continue
            text = sql_text(f"{schema}/{entry.name}")
            header = ASSET_HEADER.search(text)
            if header is None:
                continue
            table = sql_table(f"{schema}.{entry.name.removesuffix('.sql')}")
            if table.model is None:
                raise ValueError(f"sql/{schema}/{entry.name}: declares an asset, but no model of schemas/ names {table.table} "
                                 "in its __tables__ (schemas/registry.py)")
            found.append(DeclaredTable(table, header.group(1), leading_comment(text)))
    return found
