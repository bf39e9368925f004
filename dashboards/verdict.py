"""Verdict page: the answer first. R per scenario against the paper's 4-8x, with its spread."""

import altair as alt
import duckdb
import polars as pl

from dashboards.shell import Page, query, values

TOOLTIP = [
    alt.Tooltip("scenario_id:N", title="scenario"),
    alt.Tooltip("accounting_frame:N", title="accounting frame"),
    alt.Tooltip("basis:N", title="equivalence basis"),
    alt.Tooltip("device_class:N", title="device"),
    alt.Tooltip("devices_per_gpu:Q", title="devices per GPU", format=",.0f"),
    alt.Tooltip("side:N", title="R"),
    alt.Tooltip("comm_pattern:N", title="communication pattern"),
    alt.Tooltip("r:Q", title="R (deterministic)", format=".2f"),
    alt.Tooltip("p05:Q", title="p05", format=".2f"),
    alt.Tooltip("p50:Q", title="p50", format=".2f"),
    alt.Tooltip("p95:Q", title="p95", format=".2f"),
    alt.Tooltip("link_time_share:Q", title="link use (> 1: cannot carry it)", format=".2f"),
    alt.Tooltip("verdict:N"),
]


def verdict_chart(frame: pl.DataFrame) -> alt.TopLevelMixin:
    """R with its p05-p95 per scenario and basis, one panel per device class, the claim's band shaded."""
    order = frame.get_column("row_label").unique(maintain_order=True).to_list()
    base = alt.Chart()
    y = alt.Y("row_label:N", title=None, sort=order, axis=alt.Axis(labelLimit=320))
    y_offset = alt.YOffset("side:N", sort=["compute only", "with communication"])
    colour = alt.Color("side:N", title="R", scale=alt.Scale(domain=["compute only", "with communication"], range=["#1f77b4", "#d62728"]))
    x = alt.X("p05:Q", title="reduction factor R = cloud / edge (log; shaded: the paper's 4-8x)", scale=alt.Scale(type="log"))
    spread = base.mark_rule(strokeWidth=2).encode(x=x, x2="p95:Q", y=y, yOffset=y_offset, color=colour, tooltip=TOOLTIP)
    point = base.mark_point(filled=True, size=60).encode(x="r:Q", y=y, yOffset=y_offset, color=colour, tooltip=TOOLTIP)
    band = alt.Chart(values(pl.DataFrame({"low": [4.0], "high": [8.0]}))).mark_rect(opacity=0.12, color="#2ca02c").encode(
        x="low:Q", x2="high:Q", tooltip=alt.value("the paper's claim: R of 4-8x"))
    one = alt.Chart(values(pl.DataFrame({"r": [1.0]}))).mark_rule(color="#444", strokeDash=[4, 3]).encode(
        x="r:Q", tooltip=alt.value("R = 1: the edge emits as much as the cloud"))
    return alt.layer(band, one, spread, point).properties(width=420, height=alt.Step(26)).facet(
        column=alt.Column("device_class:N", title=None), data=values(frame)).properties(
        title="R per scenario and basis: dot = deterministic, line = Monte Carlo p05-p95 (dashed: R = 1)")


def build(con: duckdb.DuckDBPyConnection) -> Page:
    """Build the page from marts.verdict."""
    frame = query(con, "verdict")
    realistic = frame.filter(pl.col("is_headline") & (pl.col("side") == "with communication")
                             & (pl.col("accounting_frame") != "as_published"))
    lines = [f"{r['scenario_id']}, {r['device_class']}: {r['verdict']}" for r in realistic.iter_rows(named=True)]
    return Page(
        slug="verdict",
        title="Verdict",
        summary="Does training on idle phones and laptops emit 4-8x less carbon than a cloud GPU? R per scenario, "
                "accounting frame, basis and device class, with the spread of the scenario's own Monte Carlo draws, "
                "compute only and with the scenario's named communication pattern.",
        tables=["marts.verdict"],
        charts={"verdict": verdict_chart(frame)},
        notes=["The paper's scenarios (as_published) keep its inputs and arithmetic; the realistic pair differs only in "
               "the accounting frame. The reasoning is in docs/findings.md.", "; ".join(lines) + "."],
        headline=["verdict"],
    )
