"""Uncertainty page: marts.uncertainty is not built yet, so this shows the Table 1 confidence intervals."""

import altair as alt
import duckdb

from dashboards.shell import Page, query, values

TOOLTIP = [
    alt.Tooltip("series_id:N", title="series"),
    alt.Tooltip("device_label:N", title="device"),
    alt.Tooltip("n_runs:Q", title="runs"),
    alt.Tooltip("energy_kj:Q", title="mean, kJ", format=".2f"),
    alt.Tooltip("ci95_low_kj:Q", title="95% CI low, kJ", format=".2f"),
    alt.Tooltip("ci95_high_kj:Q", title="95% CI high, kJ", format=".2f"),
    alt.Tooltip("ci95_half_width_rel:Q", title="CI half-width / mean", format=".1%"),
]


def build(con: duckdb.DuckDBPyConnection) -> Page:
    """Build the page from marts.training_energy (and say whether marts.uncertainty exists)."""
    present = bool(query(con, "uncertainty_check").item(0, "present"))
    frame = query(con, "training_energy")
    base = alt.Chart(values(frame)).encode(y=alt.Y("device_label:N", title=None))
    bars = base.mark_bar(color="#fc8d62").encode(
        x=alt.X("ci95_half_width_rel:Q", title="95% CI half-width as a share of the mean", axis=alt.Axis(format="%")),
        tooltip=TOOLTIP)
    labels = base.mark_text(align="left", dx=4).encode(
        x="ci95_half_width_rel:Q", text=alt.Text("ci95_half_width_rel:Q", format=".1%"), tooltip=TOOLTIP)
    chart = alt.layer(bars, labels).properties(width=650, height=alt.Step(50),
                                                title="Relative 95% CI of the mean energy per run (Table 1 series)")
    if present:
        status = ("marts.uncertainty exists in this warehouse but has no dashboard yet; the chart below shows the "
                  "Table 1 confidence intervals only.")
    else:
        status = ("marts.uncertainty does not exist yet: no Monte Carlo distribution has been computed, so none is "
                  "shown. The chart below shows only the 95% confidence intervals of the Table 1 series over "
                  "repeated runs.")
    return Page(
        slug="uncertainty",
        title="Uncertainty",
        summary="What is known about uncertainty today: the 95% confidence interval of each Table 1 energy series.",
        tables=["marts.training_energy"],
        charts={"ci": chart},
        notes=[status],
    )
