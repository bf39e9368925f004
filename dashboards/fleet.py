"""Fleet page (paper Fig. 5): one cloud GPU's lifecycle total against the edge fleets that match it."""

import html

import altair as alt
import duckdb
import polars as pl

from dashboards.classes import device_classes
from dashboards.shell import (
    FEASIBILITY_FIELD,
    INFEASIBLE,
    Page,
    Swatch,
    feasibility,
    feasibility_channel,
    query,
    ratio_text,
    scenario_ids,
    scenario_param,
    tooltips,
    values,
)

#: The tables the page reads (its "Data:" line); the site asset depends on them.
TABLES = ["marts.fleet_equivalence"]

TOOLTIP = tooltips(
    ("scenario_id:N", "scenario"), ("basis_label:N", "equivalence basis"), ("count_label:N", "devices"),
    ("devices_memory_floor:Q", "memory floor (devices, not a basis)", ",.0f"),
    ("kgco2e:Q", "edge kgCO2e over the horizon", ",.1f"), ("comm_kgco2e:Q", "communication kgCO2e", ",.1f"),
    ("cloud_total_kgco2e:Q", "one cloud GPU, kgCO2e", ",.1f"), ("reduction_factor:Q", "R = cloud / edge", ".2f"),
    ("reduction_factor_with_comm:Q", "R with communication", ".2f"), ("comm_pattern:N", "communication pattern"),
    (f"{FEASIBILITY_FIELD}:N", "fleet"),
)
#: Colours of the edge device classes, in the order :func:`dashboards.classes.device_classes` gives
#: them (a scenario may add any class, and a mixed fleet its 'fleet' row).
DEVICE_COLOURS = ["#f58518", "#e45756", "#54a24b", "#b279a2", "#9d755d", "#72b7b2", "#eeca3b", "#ff9da6"]

#: Plot width in pixels; the labels (device count and R) sit in a column to its right.
WIDTH = 520


def fleet_chart(frame: pl.DataFrame, scenarios: list[str]) -> alt.TopLevelMixin:
    """Per basis (headline first, bold), each edge device class's fleet kgCO2e; the cloud GPU's total as a rule."""
    scenario = scenario_param(scenarios)
    devices = device_classes(frame)
    base = alt.Chart(values(frame)).transform_filter(alt.datum.scenario_id == scenario)
    x = alt.X("kgco2e:Q", title="kgCO2e over the horizon (bars: the edge fleet's added devices; rule: one cloud GPU)")
    y = alt.Y("basis_label:N", title="equivalence basis", sort=None, axis=alt.Axis(
        labelFontWeight=alt.ExprRef("indexof(datum.label, '(headline)') >= 0 ? 'bold' : 'normal'"), labelLimit=220))
    y_offset = alt.YOffset("device_class:N", sort=devices)
    classes = alt.Scale(domain=devices, range=DEVICE_COLOURS[:len(devices)])
    bars = base.mark_bar(strokeWidth=1.5).encode(
        y=y, yOffset=y_offset, x=x,
        color=alt.Color("device_class:N", title="device", scale=classes, legend=alt.Legend(orient="top", direction="horizontal")),
        stroke=alt.Stroke("device_class:N", title="device", scale=classes, legend=alt.Legend(orient="top", direction="horizontal")),
        opacity=feasibility_channel(alt.Opacity, 1.0, 0.3, orient="top", swatch=Swatch("square")),
        tooltip=TOOLTIP,
    ).add_params(scenario)
    labels = base.transform_calculate(
        label="datum.count_label + ', R = ' + format(datum.reduction_factor, '.2f') + 'x'"
    ).mark_text(align="left", fontSize=10).encode(y=y, yOffset=y_offset, x=alt.value(WIDTH + 8), text="label:N",
                                                   tooltip=TOOLTIP)
    cloud = base.transform_aggregate(
        cloud_total_kgco2e="max(cloud_total_kgco2e)", groupby=["scenario_id"]
    ).transform_calculate(label="'one cloud GPU: ' + format(datum.cloud_total_kgco2e, ',.0f') + ' kgCO2e'")
    cloud_tooltip = tooltips(("scenario_id:N", "scenario"), ("cloud_total_kgco2e:Q", "one cloud GPU, kgCO2e", ",.1f"))
    rule = cloud.mark_rule(color="#4c78a8", strokeWidth=2, strokeDash=[6, 3]).encode(
        x="cloud_total_kgco2e:Q", tooltip=cloud_tooltip)
    rule_label = cloud.mark_text(align="left", dx=4, y=-6, color="#4c78a8", fontWeight="bold").encode(
        x="cloud_total_kgco2e:Q", text="label:N", tooltip=cloud_tooltip)
    return alt.layer(bars, labels, rule, rule_label).properties(
        width=WIDTH, height=alt.Step(14),
        title="Edge fleets that match one cloud GPU's throughput, per basis (bold: the scenario's headline basis); "
              "right: device count and R")


def floor_table(frame: pl.DataFrame) -> str:
    """The memory floor per scenario and device class as a small HTML table (it is not an equivalence basis)."""
    floors = frame.select("scenario_id", "device_class", "devices_memory_floor").unique().pivot(
        on="device_class", index="scenario_id", values="devices_memory_floor").sort("scenario_id")
    # a class with no floor anywhere (a mixed fleet's whole row) has no column
    devices = [d for d in device_classes(frame) if d in floors.columns and floors.get_column(d).is_not_null().any()]
    head = "".join(f"<th>{html.escape(d)}</th>" for d in devices)
    rows = "".join(
        f"<tr><td><code>{html.escape(r['scenario_id'])}</code></td>"
        + "".join(f"<td>{'' if r[d] is None else f'{r[d]:,.0f}'}</td>" for d in devices) + "</tr>"
        for r in floors.iter_rows(named=True))
    return ('<h2>Memory floor</h2>\n<p class="note">The fewest devices whose memory can hold the training state '
            "(<code>devices_memory_floor</code>): a lower bound on any fleet, not an equivalence basis, so it "
            "has no R of its own.</p>\n"
            f'<table id="memory-floor"><thead><tr><th>scenario</th>{head}</tr></thead><tbody>{rows}</tbody></table>')


def answer(frame: pl.DataFrame) -> str:
    """One sentence: how many fleets cannot carry their traffic, and paper_text's headline fleets with their R."""
    infeasible = frame.filter(pl.col(FEASIBILITY_FIELD) == INFEASIBLE).height
    headline = frame.filter(pl.col("is_headline") & (pl.col("scenario_id") == "paper_text"))
    fleets = ", ".join(f"{r['count_label']} at R = {ratio_text(r['reduction_factor'])}x" for r in headline.iter_rows(named=True))
    return (f"{infeasible} of the {frame.height} fleets (scenario x basis x device class) cannot send their traffic over their link"
            + (f"; one cloud GPU's work takes {fleets} (paper_text, headline basis)." if fleets else "."))


def build(con: duckdb.DuckDBPyConnection) -> Page:
    """Build the page from marts.fleet_equivalence."""
    frame = query(con, "fleet")
    frame = frame.with_columns(feasibility(pl.col("infeasible"))).drop("infeasible")
    scenarios = scenario_ids(con)
    return Page(
        slug="fleet",
        title="Fleet (Fig. 5)",
        summary="The carbon of one cloud GPU over the horizon against the carbon its equivalent edge fleets (one per "
                "device class) add, per scenario and equivalence basis, with the device counts.",
        tables=TABLES,
        charts={"fleet": fleet_chart(frame, scenarios)},
        notes=["'stated' counts are the paper's own; 'formula' counts come from "
               "N = ceil(F_gpu x h_gpu / (F_dev x h_dev)). The headline basis is the one each scenario names "
               "(is_headline); the others show how the count and R move with the basis."],
        extra_html=floor_table(frame),
        headline=["fleet"],
        answer=answer(frame),
    )
