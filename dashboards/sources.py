"""Sources page: every source file with its licence, link, retrieval date and the table it feeds."""

import html

import altair as alt
import duckdb
import polars as pl

from dashboards.shell import Page, bar_chart, query, tooltips

#: The tables the page reads (its "Data:" line); the site asset depends on them.
TABLES = ["marts.sources"]

TOOLTIP = tooltips(("source_id:N", "source"), "title:N", ("license:N", "licence"), ("url:N", "link"),
                   ("retrieved_on:N", "retrieved"), ("table_name:N", "feeds"))

#: Column headings and their share of the table's width: the table fits the page (long cells wrap).
COLUMNS = [("source", 15), ("title", 21), ("licence", 11), ("link", 22), ("retrieved", 9), ("feeds", 14), ("status", 8)]


def table_html(frame: pl.DataFrame) -> str:
    """The sources as an HTML table that fits the page width (links are plain anchors; nothing is fetched)."""
    rows = []
    for r in frame.iter_rows(named=True):
        url = r["url"] or ""
        link = f'<a href="{html.escape(url)}" rel="noreferrer">{html.escape(url)}</a>' if url else ""
        rows.append(
            "<tr>" + "".join(f"<td>{c}</td>" for c in (
                f"<code>{html.escape(r['source_id'])}</code>", html.escape(r["title"] or ""),
                html.escape(r["license"] or ""), link, html.escape(r["retrieved_on"] or ""),
                f"<code>{html.escape(r['table_name'])}</code>", html.escape(r["status"] or ""),
            )) + "</tr>")
    cols = "".join(f'<col style="width: {w}%">' for _, w in COLUMNS)
    head = "".join(f"<th>{h}</th>" for h, _ in COLUMNS)
    return (f'<table id="sources" style="table-layout: fixed; width: 100%"><colgroup>{cols}</colgroup>'
            f'<thead><tr>{head}</tr></thead><tbody>{"".join(rows)}</tbody></table>')


def build(con: duckdb.DuckDBPyConnection) -> Page:
    """Build the page from marts.sources."""
    frame = query(con, "sources")
    chart = bar_chart(
        frame, "Source files per table fed, coloured by licence (hover for each file)", width=700, step=24,
        mark={"stroke": "white"}, y=alt.Y("table_name:N", title=None, sort="-x"),
        x=alt.X("count():Q", title="source files"), color=alt.Color("license:N", title="licence"),
        tooltip=TOOLTIP, detail="source_id:N")
    return Page.one_chart(
        "sources", "Sources",
        f"All {frame.height} source files the warehouse is built from, with licence, link, retrieval date and the "
        "table each one feeds.",
        TABLES, chart, extra_html=table_html(frame),
        answer=f"The warehouse is built from {frame.height} source files under {frame.get_column('license').n_unique()} licences, "
               f"feeding {frame.get_column('table_name').n_unique()} tables.")
