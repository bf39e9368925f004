"""Fleet page (paper Fig. 5): one cloud GPU's lifecycle total against the edge fleets that match it."""

import altair as alt
import duckdb

from dashboards.shell import Page, query, scenario_param, values

TOOLTIP = [
    alt.Tooltip("scenario_id:N", title="scenario"),
    alt.Tooltip("basis:N"),
    alt.Tooltip("side:N"),
    alt.Tooltip("count_label:N", title="devices"),
    alt.Tooltip("kgco2e:Q", title="kgCO2e over the horizon", format=",.1f"),
    alt.Tooltip("comm_kgco2e:Q", title="communication kgCO2e", format=",.1f"),
    alt.Tooltip("reduction_factor:Q", title="R = cloud / edge", format=".2f"),
    alt.Tooltip("reduction_factor_with_comm:Q", title="R with communication", format=".2f"),
    alt.Tooltip("comm_pattern:N", title="communication pattern"),
]


def build(con: duckdb.DuckDBPyConnection) -> Page:
    """Build the page from marts.fleet_equivalence."""
    frame = query(con, "fleet")
    scenarios = query(con, "scenario_ids").get_column("scenario_id").to_list()
    scenario = scenario_param(scenarios)
    base = alt.Chart(values(frame)).transform_filter(alt.datum.scenario_id == scenario)
    y = alt.Y("bar_label:N", title=None, sort=None)
    bars = base.mark_bar().encode(
        y=y, x=alt.X("kgco2e:Q", title="kgCO2e over the horizon",
                     scale=alt.Scale(domain=[0, 1.3 * float(frame.get_column("kgco2e").max())])),
        color=alt.Color("device_class:N", title="side"), tooltip=TOOLTIP,
    ).add_params(scenario)
    labels = base.transform_calculate(
        label="datum.count_label + (datum.device_class == 'cloud_gpu' ? '' : ', R = ' + format(datum.reduction_factor, '.2f') + 'x')"
    ).mark_text(align="left", dx=6).encode(y=y, x="kgco2e:Q", text="label:N", tooltip=TOOLTIP)
    chart = alt.layer(bars, labels).properties(
        width=650, height=alt.Step(45),
        title="One cloud GPU vs the edge fleets that match its throughput; label = device count and R")
    return Page(
        slug="fleet",
        title="Fleet (Fig. 5)",
        summary="The carbon of one cloud GPU over the horizon against the carbon its equivalent laptop and phone "
                "fleets add, per scenario and equivalence basis, with the device counts.",
        tables=["marts.fleet_equivalence"],
        charts={"fleet": chart},
        notes=["'stated' counts are the paper's own; 'formula' counts come from "
               "N = ceil(F_gpu x h_gpu / (F_dev x h_dev))."],
        headline=["fleet"],
    )
