"""Scaling page (paper Fig. 3): training energy against model size, compute and communication apart."""

import altair as alt
import duckdb
import polars as pl

from dashboards.shell import Page, query, scenario_ids, scenario_param, tooltips, values

#: The tables the page reads (its "Data:" line); the site asset depends on them.
TABLES = ["marts.scaling_energy"]

TOOLTIP = tooltips(
    ("scenario_id:N", "scenario"), ("device_class:N", "device"), ("model_id:N", "model"), ("params_billion:Q", "parameters, billions", ".3f"),
    "component:N", ("kwh:Q", "energy, kWh", ".4g")
)


COMPONENTS = ["total", "compute", "communication"]
#: total solid, compute long dashes, communication dots: told apart without colour.
DASHES = [[1, 0], [8, 4], [2, 3]]


def answer(frame: pl.DataFrame, scenario: str) -> str:
    """One sentence: communication's share of each edge class's energy at the largest model, for ``scenario``."""
    rows = frame.filter((pl.col("scenario_id") == scenario) & (pl.col("params_billion") == pl.col("params_billion").max()))
    kwh = {(r["device_class"], r["component"]): r["kwh"] for r in rows.iter_rows(named=True)}
    shares = [f"{device}s {kwh[(device, 'communication')] / kwh[(device, 'total')]:.0%}"
              for device in sorted({d for d, _ in kwh}) if kwh.get((device, "total")) and (device, "communication") in kwh]
    if rows.is_empty() or not shares:
        return ""
    return (f"At the largest model ({rows.get_column('model_id')[0]}, {scenario}), communication is this share of the "
            f"training energy: {', '.join(shares)}.")


def build(con: duckdb.DuckDBPyConnection) -> Page:
    """Build the page from marts.scaling_energy."""
    frame = query(con, "scaling")
    scenarios = scenario_ids(con)
    scenario = scenario_param(scenarios)
    chart = (
        alt.Chart(values(frame), title="Training energy vs model size (log-log); pick a scenario above")
        .add_params(scenario)
        .transform_filter(alt.datum.scenario_id == scenario)
        .mark_line(point=True)
        .encode(
            x=alt.X("params_billion:Q", title="model parameters, billions (log)", scale=alt.Scale(type="log")),
            y=alt.Y("kwh:Q", title="energy, kWh (log)", scale=alt.Scale(type="log")),
            color=alt.Color("device_class:N", title="device",
                            legend=alt.Legend(symbolType="stroke", symbolStrokeWidth=3, symbolSize=300)),
            strokeDash=alt.StrokeDash("component:N", title="component (line style)",
                                      scale=alt.Scale(domain=COMPONENTS, range=DASHES),
                                      legend=alt.Legend(symbolType="stroke", symbolStrokeColor="#333",
                                                        symbolStrokeWidth=2, symbolSize=600, symbolFillColor="#333")),
            detail="component:N",
            tooltip=TOOLTIP,
        )
        .properties(width=700, height=420)
    )
    return Page.one_chart(
        "scaling", "Scaling (Fig. 3)",
        "Training energy of OPT models from 125M to 66B parameters per device class, with compute and "
        "communication energy drawn as separate lines next to their total.",
        TABLES, chart,
        answer=answer(frame, scenario.param.value),
        notes=["Compute scales the Table 1 OPT-125M energy with the parameter count; communication follows the "
               "paper's idealized model. The cloud GPU has no communication line (zero)."],
    )
