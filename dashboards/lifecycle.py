"""Lifecycle page (paper Fig. 4): embodied and operational carbon per device class, as shares of each device's total."""

import altair as alt
import duckdb
import polars as pl

from dashboards.classes import device_classes
from dashboards.shell import Page, query, scenario_ids, scenario_param, tooltips, values

#: The tables the page reads (its "Data:" line); the site asset depends on them.
TABLES = ["marts.lifecycle_carbon"]

TOOLTIP = tooltips(
    ("scenario_id:N", "scenario"), ("device_class:N", "device"), "part:N", ("kgco2e:Q", "kgCO2e", ",.1f"), ("share:Q", "share of total", ".1%"),
    ("total_kgco2e:Q", "total kgCO2e", ",.1f"), ("embodied_rule:N", "embodied rule")
)
#: The bars' width in pixels: every device's bar spans it (100% of that device's total).
WIDTH = 640
#: The stacking order of the parts, left to right, and their colours.
PARTS = ["embodied", "operational"]
PART_COLOURS = ["#a6761d", "#66a61e"]
#: A part's share is printed on its segment from this share up (a narrower segment has no room for it).
LABEL_MIN_SHARE = 0.08


def lifecycle_chart(frame: pl.DataFrame, scenarios: list[str]) -> alt.TopLevelMixin:
    """Per device class, one bar of its lifecycle kgCO2e split into embodied and operational, as shares of its total.

    A cloud GPU's total is tens of times an edge device's, so on one kgCO2e axis the edge's bars are slivers:
    each bar spans the width instead, its segments its parts' shares (printed on them), its total in kgCO2e
    beside it. ``scenarios``: the selector's options.
    """
    scenario = scenario_param(scenarios)
    order = ["cloud_gpu", *[c for c in device_classes(frame) if c != "cloud_gpu"]]
    frame = frame.with_columns(pl.col("part").replace_strict(PARTS, list(range(len(PARTS))), default=len(PARTS)).alias("part_order"))
    base = alt.Chart(values(frame)).transform_filter(alt.datum.scenario_id == scenario).transform_stack(
        stack="share", groupby=["scenario_id", "device_class"], as_=["share_from", "share_to"],
        sort=[alt.SortField("part_order")]).transform_calculate(share_mid="(datum.share_from + datum.share_to) / 2")
    y = alt.Y("device_class:N", title=None, sort=order)
    bars = base.mark_bar().encode(
        y=y,
        x=alt.X("share_from:Q", title="share of the device's lifecycle kgCO2e over the horizon",
                scale=alt.Scale(domain=[0, 1], nice=False), axis=alt.Axis(format="%", values=[i / 10 for i in range(11)])),
        x2="share_to:Q",
        # the legend goes above the bars: right of them are the totals
        color=alt.Color("part:N", title="part", scale=alt.Scale(domain=PARTS, range=PART_COLOURS),
                        legend=alt.Legend(orient="top", direction="horizontal")),
        tooltip=TOOLTIP,
    ).add_params(scenario)
    shares = base.transform_filter(alt.datum.share >= LABEL_MIN_SHARE).mark_text(color="white", fontWeight="bold").encode(
        y=y, x="share_mid:Q", text=alt.Text("share:Q", format=".0%"), tooltip=TOOLTIP)
    totals = base.transform_filter(alt.datum.part == PARTS[-1]).transform_calculate(
        label="format(datum.total_kgco2e, ',.1f') + ' kgCO2e'").mark_text(align="left", dx=6).encode(
        y=y, x=alt.value(WIDTH), text="label:N", tooltip=TOOLTIP)
    return alt.layer(bars, shares, totals).properties(
        width=WIDTH, height=alt.Step(60),
        title="Lifecycle carbon of one device over the horizon: embodied vs operational as shares of each device's total "
              "(every bar = 100%; right: its total kgCO2e)")


def cloud_multiples(frame: pl.DataFrame) -> tuple[float, float]:
    """The least and the greatest ratio of a cloud GPU's total to an edge device's, over the scenarios and edge classes."""
    totals = frame.filter(pl.col("part") == PARTS[0]).select("scenario_id", "device_class", "total_kgco2e")
    cloud = totals.filter(pl.col("device_class") == "cloud_gpu").select("scenario_id", pl.col("total_kgco2e").alias("cloud"))
    ratios = totals.filter(pl.col("device_class") != "cloud_gpu").join(cloud, on="scenario_id").select(
        pl.col("cloud") / pl.col("total_kgco2e")).to_series()
    return float(ratios.min()), float(ratios.max())


def build(con: duckdb.DuckDBPyConnection) -> Page:
    """Build the page from marts.lifecycle_carbon."""
    frame = query(con, "lifecycle")
    scenarios = scenario_ids(con)
    chart = lifecycle_chart(frame, scenarios)
    default = scenario_param(scenarios).param.value
    shown = frame.filter((pl.col("scenario_id") == default) & (pl.col("part") == "embodied"))
    shares = ", ".join(f"{r['device_class']} {r['share']:.0%}" for r in shown.sort("device_class").iter_rows(named=True))
    low, high = cloud_multiples(frame)
    return Page.one_chart(
        "lifecycle", "Lifecycle (Fig. 4)",
        "Embodied and operational kgCO2e of one cloud GPU and one device of each edge device class over the horizon, "
        f"as shares of each device's total, with each device's total beside its bar (a cloud GPU's is {low:.0f}-{high:.0f} "
        "times an edge device's: on one kgCO2e axis the edge's split would not show).",
        TABLES, chart,
        answer=f"Embodied carbon's share of each device's total over the horizon ({default}): {shares}." if shares else "")
