"""Uncertainty page: the Monte Carlo distribution of R, its p05/p50/p95, and the variance ranking."""

import altair as alt
import duckdb
import polars as pl

from dashboards.shell import (
    FEASIBILITY_FIELD,
    Page,
    Swatch,
    claim_of,
    feasibility_channel,
    feasibility_expr,
    page_patterns,
    query,
    ratio_text,
    scenario_ids,
    scenario_param,
    tooltips,
    values,
)

#: The tables the page reads (its "Data:" line); the site asset depends on them.
TABLES = ["marts.uncertainty", "marts.uncertainty_distribution", "marts.uncertainty_drivers", "marts.training_energy",
          "marts.verdict"]

TOP = 10
#: Height of the distribution chart, and where its p05 / p50 / p95 labels go: one row each from the top, in pixels.
HEIGHT = 320
LABEL_TOP, LABEL_ROW = 8, 13

CI_TOOLTIP = tooltips(
    ("series_id:N", "series"), ("device_label:N", "device"), ("n_runs:Q", "runs"),
    ("energy_kj:Q", "mean, kJ", ".2f"), ("ci95_low_kj:Q", "95% CI low, kJ", ".2f"),
    ("ci95_high_kj:Q", "95% CI high, kJ", ".2f"), ("ci95_half_width_rel:Q", "CI half-width / mean", ".1%")
)


def pattern_param(patterns: list[str]) -> alt.Parameter:
    """A ``pattern`` parameter bound to a select over the communication patterns shown (compute only first)."""
    return alt.param(name="pattern", value=patterns[0], bind=alt.binding_select(options=patterns, name="Communication pattern "))


def distribution_chart(con: duckdb.DuckDBPyConnection, scenarios: list[str]) -> alt.TopLevelMixin:
    """The distribution of R per device class (percentiles 1-99) with p05, p50 and p95 marked."""
    patterns = page_patterns(con)
    scenario, pattern = scenario_param(scenarios), pattern_param(patterns)
    picked = (alt.datum.scenario_id == scenario) & (alt.datum.pattern == pattern)
    bins = query(con, "uncertainty_distribution", {"patterns": patterns})
    bins = bins.with_columns(pl.col("infeasible").cast(pl.Int8))
    curve = alt.Chart(values(bins)).transform_filter(picked).transform_calculate(
        **{FEASIBILITY_FIELD: feasibility_expr()}).mark_rect().encode(
        x=alt.X("bin_low:Q", title="reduction factor R (log)", scale=alt.Scale(type="log")),
        x2="bin_high:Q",
        y=alt.Y("share:Q", title="share of draws", axis=alt.Axis(format="%")),
        y2=alt.datum(0),
        color=alt.Color("device_class:N", title="device"),
        opacity=feasibility_channel(alt.Opacity, 0.6, 0.2, swatch=Swatch("square")),
        tooltip=tooltips(
            ("device_class:N", "device"), (f"{FEASIBILITY_FIELD}:N", "fleet"), ("bin_low:Q", "R from", ".3g"), ("bin_high:Q", "R to", ".3g"), ("draws:Q", "draws", ","),
            ("share:Q", "share of draws", ".2%")
        ),
    ).add_params(scenario, pattern)
    quantiles = query(con, "uncertainty_quantiles", {"patterns": patterns})
    # each label in a row of its own (class, then quantile), from the top: p05, p50 and p95 may lie close together
    classes = sorted(quantiles.get_column("device_class").unique().to_list())
    names = sorted(quantiles.get_column("quantile").unique().to_list())
    quantiles = quantiles.with_columns(
        (LABEL_TOP + LABEL_ROW * (pl.col("device_class").replace_strict(classes, list(range(len(classes)))) * len(names)
                                  + pl.col("quantile").replace_strict(names, list(range(len(names)))))).alias("label_y"))
    marks = alt.Chart(values(quantiles)).transform_filter(picked)
    low = claim_of(con)[0]
    tooltip = tooltips(
        ("device_class:N", "device"), "quantile:N", ("reduction_factor:Q", "R", ".3g"), ("n_draws:Q", "draws", ","),
        ("share_r_below_1:Q", "share of draws with R < 1", ".1%"),
        ("share_r_below_4:Q", f"share of draws with R < {low:g}", ".1%")
    )
    rules = marks.mark_rule(strokeDash=[4, 3]).encode(x="reduction_factor:Q", color="device_class:N", tooltip=tooltip)
    labels = marks.mark_text(align="left", baseline="middle", dx=3, fontSize=10).encode(
        x="reduction_factor:Q", y=alt.Y("label_y:Q", axis=None, scale=alt.Scale(domain=[HEIGHT, 0], nice=False, zero=False)),
        text="quantile:N", color="device_class:N", tooltip=tooltip)
    targets = alt.Chart(values(pl.DataFrame({"r": [1.0, low], "label": ["R = 1", f"R = {low:g}"]}))).mark_rule(
        color="#c00", strokeWidth=1.5).encode(x="r:Q", tooltip=[alt.Tooltip("label:N")])
    return alt.layer(curve, rules, labels, targets).resolve_scale(y="independent").properties(
        width=700, height=HEIGHT, title=f"Distribution of R over the Monte Carlo draws, 20 bins per decade (dashed: p05, p50, p95; red: R = 1 and R = {low:g})")


def drivers_chart(con: duckdb.DuckDBPyConnection, scenarios: list[str]) -> alt.TopLevelMixin:
    """Share of the variance of R per parameter (total Sobol index), the top ten per device class."""
    scenario = alt.param(name="drivers_scenario", value="paper_text" if "paper_text" in scenarios else scenarios[0],
                         bind=alt.binding_select(options=scenarios, name="Variance scenario "))
    patterns = page_patterns(con)
    pattern = alt.param(name="drivers_pattern", value=patterns[0], bind=alt.binding_select(options=patterns, name="Variance pattern "))
    frame = query(con, "uncertainty_drivers", {"patterns": patterns, "top": TOP})
    tooltip = tooltips(
        ("device_class:N", "device"), "parameter:N", ("st_share_of_sum:Q", "ST / sum of ST", ".1%"),
        ("st:Q", "total Sobol index ST", ".3f"), ("st_ci95:Q", "ST 95% CI +/-", ".3f"),
        ("s1:Q", "first-order S1", ".3f"), "rank:Q"
    )
    return alt.Chart(values(frame)).transform_filter(
        (alt.datum.scenario_id == scenario) & (alt.datum.pattern == pattern),
    ).mark_bar().encode(
        y=alt.Y("parameter:N", title=None, sort=alt.EncodingSortField("st_share_of_sum", op="max", order="descending")),
        yOffset="device_class:N",
        x=alt.X("st_share_of_sum:Q", title="total Sobol index of log R / sum over inputs", axis=alt.Axis(format="%")),
        color=alt.Color("device_class:N", title="device"), tooltip=tooltip,
    ).add_params(scenario, pattern).properties(width=650, height=alt.Step(24),
                                               title=f"What drives the uncertainty of R: top {TOP} parameters (SALib Sobol indices)")


def ci_chart(con: duckdb.DuckDBPyConnection) -> alt.TopLevelMixin:
    """Relative 95% CI of the Table 1 energy series (the measured uncertainty that enters the draws)."""
    frame = query(con, "training_energy")
    base = alt.Chart(values(frame)).encode(y=alt.Y("device_label:N", title=None,
                                                   axis=alt.Axis(labelLimit=0, labelExpr="split(datum.label, ', ')")))
    bars = base.mark_bar(color="#fc8d62").encode(
        x=alt.X("ci95_half_width_rel:Q", title="95% CI half-width as a share of the mean", axis=alt.Axis(format="%")),
        tooltip=CI_TOOLTIP)
    labels = base.mark_text(align="left", dx=4).encode(
        x="ci95_half_width_rel:Q", text=alt.Text("ci95_half_width_rel:Q", format=".1%"), tooltip=CI_TOOLTIP)
    return alt.layer(bars, labels).properties(width=650, height=alt.Step(50),
                                              title="Relative 95% CI of the mean energy per run (Table 1 series)")


def build(con: duckdb.DuckDBPyConnection) -> Page:
    """Build the page from marts.uncertainty, marts.uncertainty_distribution, marts.uncertainty_drivers."""
    scenarios = scenario_ids(con)
    patterns = page_patterns(con)
    quantiles = query(con, "uncertainty_quantiles", {"patterns": patterns}).filter(
        (pl.col("scenario_id") == "paper_text") & (pl.col("pattern") == patterns[0]))
    spread = {(r["device_class"], r["quantile"]): r["reduction_factor"] for r in quantiles.iter_rows(named=True)}
    ranges = ", ".join(f"{d}s {ratio_text(spread[(d, 'p05')])}-{ratio_text(spread[(d, 'p95')])}" for d in sorted({d for d, _ in spread})
                       if (d, "p05") in spread and (d, "p95") in spread)
    answer = f"For paper_text (compute only), 90% of the Monte Carlo draws put R within: {ranges}." if ranges else ""
    return Page(
        slug="uncertainty",
        title="Uncertainty",
        summary="The Monte Carlo distribution of the reduction factor R per device class, with p05, p50 and p95 "
                "marked, and the parameters that drive its variance.",
        tables=TABLES,
        charts={"distribution": distribution_chart(con, scenarios), "drivers": drivers_chart(con, scenarios), "ci": ci_chart(con)},
        notes=["Every parameter with a range is drawn from its distribution (50,000 draws per scenario by default); "
               "the Table 1 powers carry the 95% CI of their repeated runs (last chart).",
               "Variance shares are total Sobol indices (SALib), normalised to sum to 1; the tooltip gives the index "
               "and its bootstrap 95% CI."],
        headline=["distribution"],
        answer=answer,
    )
