"""Energy page (paper Table 1): energy per training run with its 95% CI and the ratio to the GPU."""

import altair as alt
import duckdb

from dashboards.shell import Page, query, values

TOOLTIP = [
    alt.Tooltip("device_id:N", title="device"),
    alt.Tooltip("device_class:N", title="class"),
    alt.Tooltip("workload:N"),
    alt.Tooltip("n_runs:Q", title="runs"),
    alt.Tooltip("energy_kj:Q", title="mean energy, kJ", format=".2f"),
    alt.Tooltip("ci95_low_kj:Q", title="95% CI low, kJ", format=".2f"),
    alt.Tooltip("ci95_high_kj:Q", title="95% CI high, kJ", format=".2f"),
    alt.Tooltip("mean_power_w_mean:Q", title="mean power, W", format=".1f"),
    alt.Tooltip("duration_s_mean:Q", title="mean duration, s", format=".0f"),
    alt.Tooltip("energy_ratio_vs_cloud_gpu:Q", title="GPU energy / this", format=".2f"),
    alt.Tooltip("reference_device_id:N", title="reference GPU"),
    alt.Tooltip("is_synthetic:N", title="synthesised logs"),
]


def build(con: duckdb.DuckDBPyConnection) -> Page:
    """Build the page from marts.training_energy."""
    frame = query(con, "training_energy")
    data = values(frame)
    order = frame.get_column("device_label").to_list()  # largest energy first (the query's order)
    base = alt.Chart(data).encode(y=alt.Y("device_label:N", title=None, sort=order))
    bars = base.mark_bar(color="#8da0cb").encode(
        x=alt.X("energy_kj:Q", title="energy per run, kJ (mean, 95% CI)",
                scale=alt.Scale(domain=[0, 1.15 * float(frame.get_column("ci95_high_kj").max())])),
        tooltip=TOOLTIP)
    errors = base.mark_errorbar(ticks=True, color="#222").encode(
        x=alt.X("ci95_low_kj:Q", title="energy per run, kJ (mean, 95% CI)"), x2="ci95_high_kj:Q", tooltip=TOOLTIP)
    labels = base.transform_calculate(
        label="format(datum.energy_ratio_vs_cloud_gpu, '.2f') + 'x'"
    ).mark_text(align="left", dx=6).encode(x="ci95_high_kj:Q", text="label:N", tooltip=TOOLTIP)
    chart = alt.layer(bars, errors, labels).properties(
        width=700, height=alt.Step(50),
        title="Energy per OPT-125M training run; label = reference GPU energy / device energy")
    synthetic = frame.get_column("is_synthetic").any()
    notes = ["Ratio > 1 means the device uses less energy than the reference GPU for the same workload."]
    if synthetic:
        notes.append("Some series are synthesised from the paper's stated power and time, not measured "
                     "(is_synthetic in marts.training_energy): they agree with Table 1 by construction.")
    return Page(
        slug="energy",
        title="Energy (Table 1)",
        summary="Mean energy per training run for each device with its 95% confidence interval over repeated "
                "runs, and the ratio to the reference GPU.",
        tables=["marts.training_energy"],
        charts={"energy": chart},
        notes=notes,
        headline=["energy"],
    )
