"""Energy page (paper Table 1): energy per training run with its 95% CI and the ratio to the GPU."""

import altair as alt
import duckdb
import polars as pl

from dashboards.shell import Page, query, tooltips, values

#: The tables the page reads (its "Data:" line); the site asset depends on them.
TABLES = ["marts.training_energy"]

TOOLTIP = tooltips(
    ("device_id:N", "device"), ("device_class:N", "class"), "workload:N", ("n_runs:Q", "runs"),
    ("energy_kj:Q", "mean energy, kJ", ".2f"), ("ci95_low_kj:Q", "95% CI low, kJ", ".2f"),
    ("ci95_high_kj:Q", "95% CI high, kJ", ".2f"), ("mean_power_w_mean:Q", "mean power, W", ".1f"),
    ("duration_s_mean:Q", "mean duration, s", ".0f"),
    ("energy_ratio_vs_cloud_gpu:Q", "GPU energy / this", ".2f"), ("reference_device_id:N", "reference GPU"),
    ("is_synthetic:N", "synthesised logs")
)


def build(con: duckdb.DuckDBPyConnection) -> Page:
    """Build the page from marts.training_energy."""
    frame = query(con, "training_energy")
    data = values(frame)
    order = frame.get_column("device_label").to_list()  # largest energy first (the query's order)
    # a label names the series after a comma (your own power logs): it goes on a second line, never cut
    base = alt.Chart(data).encode(y=alt.Y("device_label:N", title=None, sort=order,
                                          axis=alt.Axis(labelLimit=0, labelExpr="split(datum.label, ', ')")))
    bars = base.mark_bar(color="#8da0cb").encode(
        x=alt.X("energy_kj:Q", title="energy per run, kJ (mean, 95% CI)",
                scale=alt.Scale(domain=[0, 1.15 * float(frame.get_column("ci95_high_kj").max())])),
        tooltip=TOOLTIP)
    errors = base.mark_errorbar(ticks=True, color="#222").encode(
        x=alt.X("ci95_low_kj:Q", title="energy per run, kJ (mean, 95% CI)"), x2="ci95_high_kj:Q", tooltip=TOOLTIP)
    labels = base.transform_calculate(
        # a series of a workload the reference GPU never ran has no ratio: said so, never drawn as 0.00x
        label="isValid(datum.energy_ratio_vs_cloud_gpu) ? format(datum.energy_ratio_vs_cloud_gpu, '.2f') + 'x' "
              ": 'no ratio'"
    ).mark_text(align="left", dx=6).encode(x="ci95_high_kj:Q", text="label:N", tooltip=TOOLTIP)
    chart = alt.layer(bars, errors, labels).properties(
        width=700, height=alt.Step(50),
        title="Energy per training run; label = reference GPU energy / device energy, same workload")
    synthetic = frame.get_column("is_synthetic").any()
    reference = frame.get_column("reference_device_id")[0]
    others = frame.filter(pl.col("device_id") != pl.col("reference_device_id"))
    compared = others.filter(pl.col("energy_ratio_vs_cloud_gpu").is_not_null())
    unmatched = others.filter(pl.col("energy_ratio_vs_cloud_gpu").is_null())
    # one sentence: the ratios, then (after a semicolon) the series of a workload the reference never ran
    clauses = []
    if compared.height:
        ratios = ", ".join(f"{r['device_label']} {r['energy_ratio_vs_cloud_gpu']:.2f}x ({r['workload']})"
                           for r in compared.iter_rows(named=True))
        clauses.append(f"For the same training workload the reference GPU ({reference}) uses this many times the energy "
                       f"of each device: {ratios}")
    if unmatched.height:
        names = ", ".join(f"{r['device_label']} ({r['workload']})" for r in unmatched.iter_rows(named=True))
        clauses.append(f"{'no' if clauses else 'No'} ratio for {names}, as {reference} has no run of that workload")
    answer = "; ".join(clauses) + "." if clauses else ""
    notes = ["Ratio > 1 means the device uses less energy than the reference GPU for the same workload."]
    if synthetic:
        notes.append("Some series are synthesised from the paper's stated power and time, not measured "
                     "(is_synthetic in marts.training_energy): they agree with Table 1 by construction.")
    return Page.one_chart(
        "energy", "Energy (Table 1)",
        "Mean energy per training run for each device with its 95% confidence interval over repeated runs, and the "
        "ratio to the reference GPU.",
        TABLES, chart, notes=notes, headline=["energy"], answer=answer)
