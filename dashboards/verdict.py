"""Verdict page: the answer first. R per scenario against the claim's bounds (the paper's 4-8x), with its spread."""

import html

import altair as alt
import duckdb
import polars as pl

from dashboards import siting
from dashboards.shell import (
    LINES_EXPR,
    Page,
    Swatch,
    claim_bounds,
    feasibility,
    feasibility_channel,
    feasibility_condition,
    query,
    ratio_text,
    tooltips,
    values,
)

#: The tables the page reads (its "Data:" line); the site asset depends on them.
TABLES = ["marts.verdict"]

TOOLTIP = tooltips(
    ("scenario_id:N", "scenario"), ("accounting_frame:N", "accounting frame"), ("basis:N", "equivalence basis"), ("device_class:N", "device"),
    ("devices_per_gpu:Q", "devices per GPU", ",.0f"), ("side:N", "R"),
    ("comm_pattern:N", "communication pattern"), ("r:Q", "R (deterministic)", ".2f"), ("p05:Q", "p05", ".2f"),
    ("p50:Q", "p50", ".2f"), ("p95:Q", "p95", ".2f"),
    ("method_row:N", "method row (network method, allocation policy, resize power)"), ("devices_with_comm_per_gpu:Q", "devices per GPU with communication", ",.0f"),
    ("link_time_share:Q", "link use (> 1: cannot carry it)", ".2f"), ("required_link_mb_per_s:Q", "link rate needed, MB/s", ".2f"),
    ("link_mb_per_s:Q", "link rate, MB/s", ".2f"), ("feasible_share:Q", "feasible share of the draws", ".2f"),
    ("implied_device_utilisation:Q", "implied device utilisation", ".2f"), ("verdict_if_feasible:N", "verdict if feasible"),
    ("verdict_driver_method:N", "network method setting the verdict"), ("verdict_driver_policy:N", "allocation policy setting it"),
    ("verdict_driver_resize_power:N", "resize power setting it"), "verdict:N"
)


def verdict_chart(frame: pl.DataFrame, *, width: int = 370, step: int = 28, label_limit: int = 330,
                  title: str = "R per scenario and basis: dot = deterministic, line = Monte Carlo p05-p95 (dashed: R = 1)",
                  ) -> alt.TopLevelMixin:
    """R with its p05-p95 per row label, one panel per device class, the claim's band shaded, R = 1 dashed.

    A row whose fleet cannot send its traffic (marts.verdict's verdict) is drawn hollow with a faded,
    dashed spread, and the legend names it. A label's method row goes on a second line, its edge design on a third.
    """
    frame = frame.with_columns(feasibility(pl.col("verdict").str.starts_with("infeasible")),
                               pl.col("row_label").str.replace(" [", "\n[", literal=True).str.replace("] ", "]\n", literal=True))
    order = frame.get_column("row_label").unique(maintain_order=True).to_list()
    low, high = claim_bounds(frame)
    base = alt.Chart()
    y = alt.Y("row_label:N", title=None, sort=order, axis=alt.Axis(labelLimit=label_limit, labelExpr=LINES_EXPR))
    y_offset = alt.YOffset("side:N", sort=["compute only", "with communication"])
    sides = alt.Scale(domain=["compute only", "with communication"], range=["#1f77b4", "#d62728"])
    # the legends go above the panels: the page keeps to a 1,366 px window
    colour = alt.Color("side:N", title="R", scale=sides, legend=alt.Legend(orient="top"))
    # the fleet legend's entries look like the dots, filled or hollow (an infeasible fleet), outlined like the
    # spreads, solid or dashed; the spread's fading stays out of the legend, so that the hollow entry reads clearly
    hollow = Swatch("circle", fill_opacity=(1.0, 0.0))
    x = alt.X("p05:Q", title=f"reduction factor R = cloud / edge (log; shaded: the paper's {low:g}-{high:g}x)", scale=alt.Scale(type="log"))
    spread = base.mark_rule(strokeWidth=2).encode(
        x=x, x2="p95:Q", y=y, yOffset=y_offset, color=colour, tooltip=TOOLTIP,
        opacity=feasibility_condition(1.0, 0.4),
        strokeDash=feasibility_channel(alt.StrokeDash, [1, 0], [3, 2], orient="top", swatch=hollow))
    point = base.mark_point(filled=True, size=60, strokeWidth=1.5).encode(
        x="r:Q", y=y, yOffset=y_offset, color=colour, stroke=alt.Stroke("side:N", title="R", scale=sides, legend=alt.Legend(orient="top")),
        fillOpacity=feasibility_channel(alt.FillOpacity, 1.0, 0.0, orient="top", swatch=hollow), tooltip=TOOLTIP)
    band = alt.Chart(values(pl.DataFrame({"low": [low], "high": [high]}))).mark_rect(opacity=0.12, color="#2ca02c").encode(
        x="low:Q", x2="high:Q", tooltip=alt.value(f"the paper's claim: R of {low:g}-{high:g}x"))
    one = alt.Chart(values(pl.DataFrame({"r": [1.0]}))).mark_rule(color="#444", strokeDash=[4, 3]).encode(
        x="r:Q", tooltip=alt.value("R = 1: the edge emits as much as the cloud"))
    return alt.layer(band, one, spread, point).properties(width=width, height=alt.Step(step)).facet(
        column=alt.Column("device_class:N", title=None), data=values(frame)).properties(title=title)


def answer(frame: pl.DataFrame) -> str:
    """One sentence: over the headline rows (with communication), how many fleets reach the claim, and why the others do not."""
    rows = headline_rows(frame)
    low, _ = claim_bounds(frame)
    counts = rows.group_by("verdict").len().sort(["len", "verdict"], descending=[True, False])
    holding = rows.filter(pl.col("verdict").str.starts_with("claim holds")).height
    others = "; ".join(f"{v}: {n}" for v, n in counts.iter_rows() if not v.startswith("claim holds"))
    return (f"The claim (R >= {low:g}) holds for {holding} of {rows.height} fleets (scenario x device class, headline basis, "
            f"with communication): {others}.")


def headline_rows(frame: pl.DataFrame) -> pl.DataFrame:
    """The headline basis of every scenario, with communication: the rows the index's sentence reads
    (one per class: the edge's best design, at the method row that sets the frame's verdict)."""
    return frame.filter(pl.col("is_headline") & (pl.col("side") == "with communication") & pl.col("is_best_design")
                        & (pl.col("network_method") == pl.col("verdict_driver_method"))
                        & (pl.col("embodied_policy") == pl.col("verdict_driver_policy"))
                        & (pl.col("resize_power") == pl.col("verdict_driver_resize_power")))


def _range(low: float | None, high: float | None) -> str:
    """A p05-p95 range, or why there is none."""
    return f"p05-p95 {ratio_text(low)}-{ratio_text(high)}" if low is not None and high is not None else "no feasible draw"


def verdict_sentence(frame: pl.DataFrame) -> str:
    """The index's verdict as HTML, generated from marts.verdict rows (``frame``: the verdict query).

    A sentence counting the verdicts per device class over the scenarios, then one line per
    scenario (accounting frame, headline basis) with R, its p05-p95 and the verdict per class.
    """
    rows = headline_rows(frame)
    n_scenarios = rows.get_column("scenario_id").n_unique()
    per_class = []
    for device in rows.get_column("device_class").unique(maintain_order=True).to_list():
        counts = rows.filter(pl.col("device_class") == device).group_by("verdict", maintain_order=True).len()
        counts = counts.sort("len", descending=True, maintain_order=True)
        parts = [f"{v} in {n}" for v, n in counts.iter_rows()]
        per_class.append(f"{device} fleets: {', '.join(parts)} of {n_scenarios} scenarios")
    summary = ("At each scenario's headline equivalence basis, with its communication: " + "; ".join(per_class) + ".")
    lines = []
    for (scenario, frame_name, basis), group in rows.group_by(["scenario_id", "accounting_frame", "basis"],
                                                            maintain_order=True):
        clauses = [f"{r['device_class']} R = {ratio_text(r['r'])}x ({_range(r['p05'], r['p95'])}, {r['method_row']}, {r['edge_design']}), "
                   f"{r['verdict']}"
                   for r in group.iter_rows(named=True)]
        lines.append(f"<li><b>{html.escape(scenario)}</b> ({html.escape(frame_name)}, {html.escape(basis)} basis): "
                     f"{html.escape('; '.join(clauses))}.</li>")
    return (f'<p class="verdict" id="verdict-sentence">{html.escape(summary)}</p>\n'
            f'<ul class="verdict" id="verdict-lines">{"".join(lines)}</ul>')


def lead(con: duckdb.DuckDBPyConnection) -> Page:
    """The index's lead: a compact verdict chart of the headline bases and the generated verdict sentence."""
    frame = query(con, "verdict").filter(pl.col("is_headline")).with_columns(
        (pl.col("scenario_id") + " [" + pl.col("basis") + ", " + pl.col("method_row") + "]").alias("row_label"))
    low, high = claim_bounds(frame)
    chart = verdict_chart(frame, width=330, step=28, label_limit=280,
                          title="R per scenario at its headline basis: dot = deterministic, line = p05-p95, "
                                f"shaded = the paper's {low:g}-{high:g}x, dashed = R = 1")
    return Page(slug="index", title="Verdict", summary="", answer=answer(frame), tables=[*TABLES, *siting.TABLES[:1]], charts={"verdict": chart},
                extra_html=verdict_sentence(frame) + "\n" + siting.range_html(con))


def build(con: duckdb.DuckDBPyConnection) -> Page:
    """Build the page from marts.verdict."""
    frame = query(con, "verdict")
    realistic = headline_rows(frame).filter(pl.col("accounting_frame") != "as_published")
    lines = [f"{r['scenario_id']}, {r['device_class']}: {r['verdict']}" for r in realistic.iter_rows(named=True)]
    low, high = claim_bounds(frame)
    return Page(
        slug="verdict",
        title="Verdict",
        summary=f"Does training on idle phones and laptops emit {low:g}-{high:g}x less carbon than a cloud GPU? "
                "R per scenario, accounting frame, basis, device class and method row (network method, allocation policy, "
                "resize power), with the spread of the "
                "scenario's own feasible Monte Carlo draws, compute only and with the scenario's named communication "
                "pattern. A fleet that cannot send its traffic over its links is infeasible, whatever its R.",
        tables=TABLES,
        charts={"verdict": verdict_chart(frame)},
        notes=["The paper's scenarios (as_published) keep its inputs and arithmetic; the realistic pair differs only in "
               "the accounting frame. The reasoning is in docs/findings.md.", "; ".join(lines) + "."],
        headline=["verdict"],
        answer=answer(frame),
    )
