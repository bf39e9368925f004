"""Validation page: published training footprints against ours, per case, mode and metric."""

import html
import math

import altair as alt
import duckdb
import polars as pl

from dashboards.shell import Page, query, tooltips, values

#: The tables the page reads (its "Data:" line); the site asset depends on them.
TABLES = ["marts.validation", "marts.validation_headlines"]

#: The ± band drawn around y = x.
BAND = 0.10
SERIES = ["accounting (ours)", "predictive (ours)", "LLMCarbon"]
SERIES_COLOURS = ["#1b9e77", "#d95f02", "#7570b3"]
METRIC_SHAPES = {
    "accelerator_hours": "triangle-up",
    "energy_mwh": "square",
    "operational_tco2e": "circle",
}

TOOLTIP = tooltips(
    ("case_id:N", "case"),
    "model:N",
    "series:N",
    ("metric:N", "metric"),
    "unit:N",
    ("published_value:Q", "published", ",.4g"),
    ("value:Q", "this series", ",.4g"),
    ("relative_error:Q", "relative error", "+.1%"),
    ("computed_value:Q", "ours", ",.4g"),
    ("llmcarbon_value:Q", "LLMCarbon", ",.4g"),
    ("llmcarbon_relative_error:Q", "LLMCarbon error", "+.1%"),
    ("predicted_low:Q", "ours, low", ",.4g"),
    ("predicted_high:Q", "ours, high", ",.4g"),
    ("published_within_interval:N", "published inside ours"),
    ("input_status:N", "weakest input status"),
    "inputs:N",
    ("published_citation:N", "published in"),
)


def series_colour() -> alt.Color:
    return alt.Color(
        "series:N", title="series", scale=alt.Scale(domain=SERIES, range=SERIES_COLOURS)
    )


def reference(frame: pl.DataFrame) -> pl.DataFrame:
    """y = x and the ±BAND band on log-spaced x over the data's range."""
    both = pl.concat([frame.get_column("published_value"), frame.get_column("value")])
    low, high = math.log10(float(both.min()) / 2), math.log10(float(both.max()) * 2)
    xs = [10 ** (low + (high - low) * i / 40) for i in range(41)]
    return pl.DataFrame(
        {"x": xs, "lo": [x * (1 - BAND) for x in xs], "hi": [x * (1 + BAND) for x in xs]}
    )


def scatter(frame: pl.DataFrame) -> alt.LayerChart:
    ref = values(reference(frame))
    axis_x = alt.X(
        "x:Q",
        title="published value (log; accelerator-h, MWh or tCO2e)",
        scale=alt.Scale(type="log"),
    )
    band = (
        alt.Chart(ref)
        .mark_area(opacity=0.18, color="#888")
        .encode(
            x=axis_x,
            y=alt.Y("lo:Q", title="computed value (log)", scale=alt.Scale(type="log")),
            y2="hi:Q",
            tooltip=alt.value(f"within ±{BAND:.0%} of the published value"),
        )
    )
    identity = (
        alt.Chart(ref)
        .mark_line(color="#444", strokeDash=[4, 3])
        .encode(
            x=axis_x,
            y=alt.Y("x:Q", scale=alt.Scale(type="log")),
            tooltip=alt.value("computed = published"),
        )
    )
    points = (
        alt.Chart(values(frame))
        .mark_point(filled=True, size=110, opacity=0.85)
        .encode(
            x=alt.X("published_value:Q", scale=alt.Scale(type="log")),
            y=alt.Y("value:Q", scale=alt.Scale(type="log")),
            color=series_colour(),
            shape=alt.Shape(
                "metric:N",
                title="metric",
                scale=alt.Scale(domain=list(METRIC_SHAPES), range=list(METRIC_SHAPES.values())),
            ),
            tooltip=TOOLTIP,
        )
    )
    ranged = frame.filter(pl.col("predicted_low") < pl.col("predicted_high"))
    intervals = (
        alt.Chart(values(ranged))
        .mark_rule(strokeWidth=2, opacity=0.7)
        .encode(
            x=alt.X("published_value:Q", scale=alt.Scale(type="log")),
            y=alt.Y("predicted_low:Q", scale=alt.Scale(type="log")),
            y2="predicted_high:Q",
            color=series_colour(),
            tooltip=TOOLTIP,
        )
    )
    return alt.layer(band, identity, intervals, points).properties(
        width=700,
        height=460,
        title=f"Computed against published, one point per case x mode x metric (predictive: the point at the "
        f"central MFU and goodput, the bar their ranges); the band is ±{BAND:.0%}",
    )


def errors(frame: pl.DataFrame) -> alt.LayerChart:
    order = frame.unique("row_label", maintain_order=True).get_column("row_label").to_list()
    base = alt.Chart(values(frame))
    points = base.mark_point(filled=True, size=90).encode(
        x=alt.X(
            "relative_error:Q",
            title="relative error, (computed - published) / published (symlog)",
            scale=alt.Scale(type="symlog", constant=0.01),
            axis=alt.Axis(format="+.0%"),
        ),
        y=alt.Y("row_label:N", title=None, sort=order, axis=alt.Axis(labelLimit=0)),
        color=series_colour(),
        tooltip=TOOLTIP,
    )
    rules = alt.Chart(
        values(
            pl.DataFrame(
                {
                    "at": [-0.082, -0.02, 0.0, 0.02, 0.082],
                    "what": [
                        "-8.2% (LLMCarbon's bound)",
                        "-2% (accounting target)",
                        "0",
                        "+2% (accounting target)",
                        "+8.2% (LLMCarbon's bound)",
                    ],
                }
            )
        )
    )
    marks = rules.mark_rule(color="#999", strokeDash=[2, 2]).encode(
        x="at:Q", tooltip=alt.Tooltip("what:N", title="line")
    )
    return alt.layer(marks, points).properties(
        width=600,
        height=alt.Step(22),
        title="Relative error per case and metric (lines: ±2% accounting target, ±8.2% LLMCarbon's bound)",
    )


def headlines_html(con: duckdb.DuckDBPyConnection) -> str:
    """The published headlines that give no inputs, as a list under the charts."""
    rows = query(con, "validation_headlines")
    if rows.is_empty():
        return ""
    items = "\n".join(
        f"<li><b>{html.escape(r['model'])}</b>: {html.escape(r['headline'])} "
        f'(<a href="{html.escape(r["published_url"])}">{html.escape(r["published_citation"])}</a>). '
        f'<span class="note">{html.escape(r["notes"])}</span></li>'
        for r in rows.iter_rows(named=True)
    )
    return (
        f"<h2>Published headlines without the inputs to recompute them</h2>\n<ul>\n{items}\n</ul>"
    )


def build(con: duckdb.DuckDBPyConnection) -> Page:
    """Build the page from marts.validation and marts.validation_headlines."""
    frame = query(con, "validation")
    ours = frame.filter(pl.col("series") != "LLMCarbon")
    accounting = (
        ours.filter(pl.col("series") == "accounting (ours)").get_column("relative_error").abs()
    )
    covered = ours.filter(
        (pl.col("series") == "predictive (ours)") & pl.col("llmcarbon_value").is_not_null()
    )
    facts = []
    if accounting.len():
        facts.append(f"accounting within {accounting.max():.1%} on {accounting.len()} values")
    if covered.height:
        facts.append(
            f"predictive carbon within {covered.get_column('relative_error').abs().max():.1%} "
            f"on the {covered.height} cases LLMCarbon covers"
        )
    return Page(
        slug="validation",
        title="Validation",
        summary="Published training footprints (Patterson et al. 2021, BLOOM, OPT-175B) against the same footprints computed by "
        "this project's formulas, from the publication's own inputs (accounting) and from training FLOPs at a "
        f"sourced utilisation (predictive): {'; '.join(facts) or 'no cases'}.",
        tables=TABLES,
        charts={"validation": scatter(frame), "errors": errors(frame)},
        notes=[
            "Accounting checks that the energy and carbon formulas give what the publication computed from its own "
            "inputs; predictive checks the FLOPs-based estimate, LLMCarbon's method, over the goodput (the share of "
            "elapsed accelerator time that trains). Its point takes the central MFU and goodput, and a vertical bar "
            "spans their ranges where a case gives them. Hover a point for its inputs, its interval "
            "and LLMCarbon's error. Training FLOPs are 6 x N x D, except for a case declared an encoder-decoder "
            "(T5): its input tokens pass the encoder (N/2) and its targets, 114 per 512 inputs, the decoder "
            "(N/2) (docs/validation.md)."
        ],
        extra_html=headlines_html(con),
        headline=["validation"],
        answer=f"This project's formulas give the published training footprints back: {'; '.join(facts) or 'no cases'}.",
    )
