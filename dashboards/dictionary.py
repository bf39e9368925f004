"""Data dictionary page: every table and view of the warehouse, each column with its type and meaning.

The meaning is the comment each table, view and column carries in the warehouse (``COMMENT ON``,
written from the pandera models by pipelines/warehouse/dictionary.py), read back from DuckDB's catalog.
"""

import html
import re

import altair as alt
import duckdb
import polars as pl

from dashboards.shell import Page, bar_chart, query, tooltips

#: The tables the page reads (its "Data:" line): DuckDB's catalog of every table and view of the warehouse
#: (``dashboards.CATALOG_TABLES``).
TABLES = ["main.duckdb_tables", "main.duckdb_views", "main.duckdb_columns"]

#: Schemas shown, in page order: what analysts query first.
SCHEMAS = ["marts", "core", "staging", "quarantine", "raw"]

TOOLTIP = tooltips(("table_id:N", "table"), ("kind:N", "table or view"), "columns:Q", ("undocumented:Q", "columns without a comment"),
                   ("table_comment:N", "what it holds"))

#: Column widths are fixed and long words break, so the tables never overflow the page width.
STYLE = """<style>
.dictionary table { width: 100%; table-layout: fixed; margin-bottom: 1.2rem; }
.dictionary th, .dictionary td, .dictionary p, .toc { overflow-wrap: anywhere; }
.dictionary col.name { width: 24%; } .dictionary col.type { width: 16%; } .dictionary col.meaning { width: 60%; }
.dictionary h2 { font-size: 1.1rem; margin: 1.4rem 0 0.3rem; }
.toc { line-height: 1.6; }
.toc a { margin-right: 0.6rem; white-space: nowrap; }
.dictionary .kind { font-size: 0.8rem; font-weight: normal; margin-left: 0.5rem; }
</style>"""
#: What follows a name in its heading: nothing for a table, a mark for a view (a query over other
#: tables or files, e.g. staging.power_samples over the lake's Parquet files).
VIEW_MARK = {"table": "", "view": ' <span class="kind">(view)</span>'}


def anchor(table_id: str) -> str:
    """The id of a table's section, e.g. ``table-marts-verdict``."""
    return "table-" + re.sub(r"[^a-z0-9_]+", "-", table_id.lower())


def tables_frame(frame: pl.DataFrame) -> pl.DataFrame:
    """One row per table or view: schema, name, kind, comment and column count, in page order."""
    return frame.group_by("table_id", maintain_order=True).agg(
        pl.col("schema_name").first(), pl.col("table_name").first(), pl.col("kind").first(), pl.col("table_comment").first(),
        pl.len().alias("columns"), pl.col("column_comment").is_null().sum().alias("undocumented"),
    )


def table_html(frame: pl.DataFrame) -> str:
    """A contents line, then per table or view its comment and a column | type | meaning table (a view is marked as one)."""
    tables = tables_frame(frame)
    toc = " ".join(f'<a href="#{anchor(t)}"><code>{html.escape(t)}</code></a>' for t in tables.get_column("table_id"))
    sections = []
    for table in tables.iter_rows(named=True):
        cols = frame.filter(pl.col("table_id") == table["table_id"])
        rows = "".join(
            "<tr>" + "".join(f"<td>{c}</td>" for c in (
                f"<code>{html.escape(r['column_name'])}</code>",
                html.escape(r["data_type"] + ("" if r["is_nullable"] else " not null")),
                html.escape(r["column_comment"] or "(no comment)"),
            )) + "</tr>"
            for r in cols.iter_rows(named=True))
        head = "".join(f"<th>{h}</th>" for h in ("column", "type", "meaning"))
        sections.append(
            f'<section id="{anchor(table["table_id"])}"><h2><code>{html.escape(table["table_id"])}</code>{VIEW_MARK[table["kind"]]}</h2>'
            f'<p>{html.escape(table["table_comment"] or "(no comment)")}</p>'
            '<table><colgroup><col class="name"><col class="type"><col class="meaning"></colgroup>'
            f"<thead><tr>{head}</tr></thead><tbody>{rows}</tbody></table></section>")
    return f'{STYLE}<p class="toc">Tables and views: {toc}</p><div class="dictionary" id="dictionary">{"".join(sections)}</div>'


def build(con: duckdb.DuckDBPyConnection) -> Page:
    """Build the page from DuckDB's catalog (duckdb_tables(), duckdb_views(), duckdb_columns())."""
    frame = query(con, "dictionary", {"schemas": SCHEMAS})
    tables = tables_frame(frame)
    chart = bar_chart(
        tables, "Columns per table and view, by schema (hover for what it holds)", width=600, step=16,
        y=alt.Y("table_id:N", title=None, sort=None, axis=alt.Axis(labelLimit=300)),
        x=alt.X("columns:Q", title="columns"), color=alt.Color("schema_name:N", title="schema", sort=SCHEMAS),
        tooltip=TOOLTIP)
    return Page(
        slug="dictionary",
        title="Data dictionary",
        summary=f"Every table ({tables.filter(pl.col('kind') == 'table').height}), view "
                f"({tables.filter(pl.col('kind') == 'view').height}) and column ({frame.height}) of the warehouse with its "
                "type and meaning: the comments written from the pandera models, read back from DuckDB's catalog.",
        tables=TABLES,
        charts={"tables": chart},
        notes=["In any DuckDB client: select table_name, column_name, comment from duckdb_columns() "
               "where schema_name = 'marts'."],
        extra_html=table_html(frame),
        answer=f"The warehouse holds {tables.filter(pl.col('kind') == 'table').height} tables and "
               f"{tables.filter(pl.col('kind') == 'view').height} views with {frame.height} columns, "
               f"{frame.get_column('column_comment').is_null().sum()} of them without a comment.",
    )
