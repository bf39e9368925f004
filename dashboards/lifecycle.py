"""Lifecycle page (paper Fig. 4): embodied and operational carbon stacked per device class."""

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


def build(con: duckdb.DuckDBPyConnection) -> Page:
    """Build the page from marts.lifecycle_carbon."""
    frame = query(con, "lifecycle")
    scenarios = scenario_ids(con)
    scenario = scenario_param(scenarios)
    order = ["cloud_gpu", *[c for c in device_classes(frame) if c != "cloud_gpu"]]
    base = alt.Chart(values(frame)).transform_filter(alt.datum.scenario_id == scenario)
    bars = base.mark_bar().encode(
        y=alt.Y("device_class:N", title=None, sort=order),
        x=alt.X("kgco2e:Q", title="kgCO2e over the horizon", stack="zero",
                scale=alt.Scale(domain=[0, 1.15 * float(frame.get_column("total_kgco2e").max())])),
        color=alt.Color("part:N", title="part", scale=alt.Scale(domain=["embodied", "operational"],
                                                                 range=["#a6761d", "#66a61e"])),
        tooltip=TOOLTIP,
    ).add_params(scenario)
    totals = base.transform_filter(alt.datum.part == "operational").mark_text(align="left", dx=6).encode(
        y=alt.Y("device_class:N", sort=order),
        x="total_kgco2e:Q",
        text=alt.Text("total_kgco2e:Q", format=",.1f"),
        tooltip=TOOLTIP,
    )
    chart = alt.layer(bars, totals).properties(
        width=700, height=alt.Step(60), title="Lifecycle carbon per device over the horizon; label = total kgCO2e")
    shown = frame.filter((pl.col("scenario_id") == scenario.param.value) & (pl.col("part") == "embodied"))
    shares = ", ".join(f"{r['device_class']} {r['share']:.0%}" for r in shown.sort("device_class").iter_rows(named=True))
    return Page.one_chart(
        "lifecycle", "Lifecycle (Fig. 4)",
        "Embodied and operational kgCO2e of one cloud GPU and one device of each edge device class over the horizon, "
        "stacked, with each device's total.",
        TABLES, chart,
        answer=f"Embodied carbon's share of each device's total over the horizon ({scenario.param.value}): {shares}." if shares else "")
