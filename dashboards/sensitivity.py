"""Sensitivity page: a tornado of the reduction factor and a heatmap over device multiplier x hours.

Both read the marts (marts.sensitivity, marts.sensitivity_grid), which evaluate the model's one
formula; the sliders only pick rows of the precomputed grid.
"""

from typing import NamedTuple

import altair as alt
import duckdb
import polars as pl

from dashboards.classes import device_classes
from dashboards.shell import (
    FEASIBILITY_FIELD,
    Page,
    Swatch,
    claim_of,
    feasibility,
    feasibility_channel,
    feasibility_condition,
    feasibility_expr,
    page_patterns,
    query,
    scenario_ids,
    scenario_param,
    tooltips,
    values,
)

#: The tables the page reads (its "Data:" line); the site asset depends on them.
TABLES = ["marts.sensitivity", "marts.sensitivity_grid", "marts.verdict"]


class GridAxes(NamedTuple):
    """The device multipliers m and edge hours per day of marts.sensitivity_grid's rows (their axes are stated once,
    in sql/variants/grid.sql): the sliders step through exactly these."""

    multipliers: list[float]
    multiplier_step: float
    hours_min: int
    hours_max: int


def axes(frame: pl.DataFrame) -> GridAxes:
    """The grid's axes, read from its rows (:func:`grid`): the multipliers in order and their step, the hours' range."""
    multipliers = sorted(set(frame.get_column("device_multiplier").to_list()))
    step = min((b - a for a, b in zip(multipliers, multipliers[1:], strict=False)), default=1.0)
    hours = frame.get_column("hours_per_day")
    return GridAxes(multipliers, round(step, 6), int(hours.min()), int(hours.max()))

#: The heatmap shows compute-only R; the tornado offers the pages' patterns too (dashboards.shell.page_patterns).

GRID_TOOLTIP = tooltips(
    ("scenario_id:N", "scenario"), ("device_class:N", "device"), ("hours_per_day:Q", "edge hours per day"),
    ("device_multiplier:Q", "device multiplier m"), ("devices:Q", "devices per GPU", ",.0f"),
    ("edge_added_kgco2e:Q", "edge kgCO2e", ",.1f"), ("reduction_factor:Q", "R", ".2f"), (f"{FEASIBILITY_FIELD}:N", "fleet")
)
#: Heatmap panels (one per device class) side by side in a row of the page.
PANELS_PER_ROW = 2


def grid(con: duckdb.DuckDBPyConnection, compute_only: str) -> pl.DataFrame:
    """The precomputed R grid over multiplier x hours per day, per scenario and device class (marts.sensitivity_grid)."""
    return query(con, "sensitivity_grid", {"pattern": compute_only})


def grid_for_chart(frame: pl.DataFrame) -> pl.DataFrame:
    """The columns the heatmap draws, rounded to 4 significant digits to keep the page small.

    The cloud GPU's total is left out: it is the same in every cell of a scenario (R = cloud / edge).
    """
    return frame.select(
        "scenario_id", "device_class", "device_multiplier", "hours_per_day",
        *[pl.col(c).round_sig_figs(4) for c in ("devices", "edge_added_kgco2e", "reduction_factor")],
        pl.col("infeasible").cast(pl.Int8),
    )


def tornado(con: duckdb.DuckDBPyConnection, patterns: list[str]) -> pl.DataFrame:
    """One-at-a-time low/high R per scenario, device class, pattern and ranged parameter (marts.sensitivity)."""
    return query(con, "sensitivity_tornado", {"patterns": patterns})


def boundaries(frame: pl.DataFrame, targets: tuple[float, ...]) -> pl.DataFrame:
    """Per hour, the upper edge of the largest grid multiplier at which R still reaches each target.

    Drawn as the R = 1 and R = claim's low end lines over the heatmap (R falls as the multiplier grows).
    """
    half_step = axes(frame).multiplier_step / 2
    parts = []
    for target in targets:
        parts.append(
            frame.filter(pl.col("reduction_factor") >= target)
            .group_by("scenario_id", "device_class", "hours_per_day")
            .agg((pl.col("device_multiplier").max() + half_step).alias("boundary_multiplier"))
            .with_columns(pl.lit(f"R = {target:g}").alias("line"), pl.lit(target).alias("target"))
        )
    return pl.concat(parts).sort("scenario_id", "device_class", "line", "hours_per_day")


def heatmap_chart(frame: pl.DataFrame, lines: pl.DataFrame, scenarios: list[str]) -> alt.TopLevelMixin:
    """Heatmaps per device class with the R = 1 / R = claim's low end lines, the slider-picked cell and its value
    (with the fleet's feasibility: an infeasible fleet's cells are faded)."""
    default = frame.filter(pl.col("is_scenario_point") & (pl.col("scenario_id") == "paper_text"))
    hours_default = float(default.get_column("hours_per_day")[0]) if default.height else 8.0
    scenario = scenario_param(scenarios)
    grid_axes = axes(frame)
    multipliers, step = grid_axes.multipliers, grid_axes.multiplier_step
    hours = alt.param(name="hours", value=hours_default,
                      bind=alt.binding_range(min=grid_axes.hours_min, max=grid_axes.hours_max, step=1, name="Edge hours per day "))
    multiplier = alt.param(name="multiplier", value=1.0,
                           bind=alt.binding_range(min=multipliers[0], max=multipliers[-1], step=step,
                                                  name="Device multiplier "))
    picked = (alt.datum.scenario_id == scenario) & (alt.datum.hours_per_day == hours) & (
        alt.datum.device_multiplier == multiplier)
    data, line_data = values(grid_for_chart(frame)), values(lines)
    panels = []
    for device in device_classes(frame):
        base = alt.Chart(data).transform_filter(
            (alt.datum.scenario_id == scenario) & (alt.datum.device_class == device),
        ).transform_calculate(h0="datum.hours_per_day - 0.5", h1="datum.hours_per_day + 0.5",
                              m0=f"datum.device_multiplier - {step / 2}",
                              m1=f"datum.device_multiplier + {step / 2}",
                              **{FEASIBILITY_FIELD: feasibility_expr()})
        cells = base.mark_rect().encode(
            x=alt.X("h0:Q", title="edge hours per day", scale=alt.Scale(domain=[0.5, grid_axes.hours_max + 0.5], nice=False)),
            x2="h1:Q",
            y=alt.Y("m0:Q", title="device multiplier m (x the scenario's count)",
                    scale=alt.Scale(domain=[multipliers[0] - step / 2, multipliers[-1] + step / 2],
                                    nice=False)),
            y2="m1:Q",
            color=alt.Color("reduction_factor:Q", title="R", scale=alt.Scale(type="log", scheme="viridis")),
            opacity=feasibility_channel(alt.Opacity, 1.0, 0.35, swatch=Swatch("square")),
            tooltip=GRID_TOOLTIP,
        )
        cell = base.transform_filter(picked).mark_rect(fill=None, stroke="red", strokeWidth=2.5).encode(
            x="h0:Q", x2="h1:Q", y="m0:Q", y2="m1:Q", opacity=feasibility_condition(1.0, 0.35), tooltip=GRID_TOOLTIP)
        line = alt.Chart(line_data).transform_filter(
            (alt.datum.scenario_id == scenario) & (alt.datum.device_class == device)
        ).mark_line(color="white", strokeWidth=2, interpolate="step").encode(
            x="hours_per_day:Q", y="boundary_multiplier:Q",
            strokeDash=alt.StrokeDash("line:N", title="boundary", sort=lines.sort("target").get_column("line").unique(maintain_order=True).to_list(),
                                      legend=alt.Legend(symbolStrokeColor="black")),
            detail="line:N",
            tooltip=tooltips(
                ("line:N", "boundary"), ("hours_per_day:Q", "hours per day"),
                ("boundary_multiplier:Q", "R reached up to m")
            ),
        )
        panels.append(alt.layer(cells, line, cell).properties(width=420, height=300, title=f"{device}: R over m x hours"))
    highlight = (
        alt.Chart(data)
        .transform_filter(picked)
        .transform_calculate(**{FEASIBILITY_FIELD: feasibility_expr()})
        .transform_calculate(label="datum.device_class + ': R = ' + format(datum.reduction_factor, '.2f') + 'x at '"
                                   " + datum.hours_per_day + ' h/day, ' + format(datum.devices, ',.0f') + ' devices, '"
                                   f" + datum.{FEASIBILITY_FIELD}")
        .mark_text(align="left", fontSize=15, fontWeight="bold")
        .encode(x=alt.value(0), y=alt.Y("device_class:N", title=None, axis=None), text="label:N", tooltip=GRID_TOOLTIP)
        .properties(width=860, height=50, name="highlight", title="Reduction factor at the slider values")
    )
    # two panels a row, so the page fits a laptop window whatever the number of device classes
    return alt.vconcat(highlight, alt.concat(*panels, columns=PANELS_PER_ROW)).add_params(scenario, hours, multiplier).resolve_scale(
        color="independent")


def tornado_chart(frame: pl.DataFrame, scenarios: list[str], targets: tuple[float, ...], patterns: list[str]) -> alt.TopLevelMixin:
    """Bars from R at the parameter's low to R at its high, per device class, largest swing first
    (an infeasible fleet's bar faint with a dashed outline, its tick faded)."""
    scenario = alt.param(name="tornado_scenario", value="paper_text" if "paper_text" in scenarios else scenarios[0],
                         bind=alt.binding_select(options=scenarios, name="Tornado scenario "))
    pattern = alt.param(name="tornado_pattern", value=patterns[0],
                        bind=alt.binding_select(options=patterns, name="Communication pattern "))
    tooltip = tooltips(
        ("scenario_id:N", "scenario"), ("device_class:N", "device"), ("pattern:N", "communication"), "parameter:N", ("value_low:Q", "low", ".4g"),
        ("value_high:Q", "high", ".4g"), ("reduction_factor_at_low:Q", "R at low", ".2f"),
        ("reduction_factor_at_high:Q", "R at high", ".2f"),
        ("baseline_reduction_factor:Q", "R at the scenario's values", ".2f"), (f"{FEASIBILITY_FIELD}:N", "fleet")
    )
    numbers = ["value_low", "value_high", "reduction_factor_at_low", "reduction_factor_at_high", "reduction_factor_min",
               "reduction_factor_max", "baseline_reduction_factor", "swing"]
    shown = frame.filter(pl.col("swing") > 0).select(
        "scenario_id", "device_class", "pattern", "parameter", *[pl.col(c).round_sig_figs(4) for c in numbers],
        feasibility(pl.col("infeasible")))
    base = alt.Chart(values(shown)).transform_filter(
        (alt.datum.scenario_id == scenario) & (alt.datum.pattern == pattern))
    y = alt.Y("parameter:N", title=None, sort=alt.EncodingSortField("swing", op="max", order="descending"))
    x_scale = alt.Scale(type="log")
    # an infeasible fleet's bar is faint with a dashed outline, and so is its legend entry
    faint = Swatch("square", fill_opacity=(1.0, 0.15))
    bars = base.mark_bar(height=8, strokeWidth=1.5).encode(
        y=y, yOffset="device_class:N",
        x=alt.X("reduction_factor_min:Q", title="reduction factor R (log)", scale=x_scale),
        x2="reduction_factor_max:Q", color=alt.Color("device_class:N", title="device"),
        stroke=alt.Stroke("device_class:N", title="device"), fillOpacity=feasibility_channel(alt.FillOpacity, 1.0, 0.15, swatch=faint),
        strokeDash=feasibility_channel(alt.StrokeDash, [1, 0], [3, 2], swatch=faint),
        tooltip=tooltip,
    ).add_params(scenario, pattern)
    baseline = base.mark_tick(color="black", thickness=2, size=10).encode(
        y=y, yOffset="device_class:N", x="baseline_reduction_factor:Q", tooltip=tooltip,
        opacity=feasibility_condition(1.0, 0.4))
    rules = alt.Chart(values(pl.DataFrame({"r": list(targets), "label": [f"R = {t:g}" for t in targets]}))).mark_rule(
        strokeDash=[5, 3], color="#c00").encode(x="r:Q", tooltip=[alt.Tooltip("label:N")])
    return alt.layer(bars, baseline, rules).properties(
        width=700, height=alt.Step(26),
        title=f"Tornado: R at each ranged parameter's low and high (tick = scenario value; dashed: R = {targets[0]:g}, R = {targets[1]:g}; "
              "parameters that do not move R are left out)")


def build(con: duckdb.DuckDBPyConnection) -> Page:
    """Build the page from marts.sensitivity and marts.sensitivity_grid."""
    scenarios = scenario_ids(con)
    patterns = page_patterns(con)
    frame = grid(con, patterns[0])
    grid_axes = axes(frame)
    torn = tornado(con, patterns)
    # R = 1 (no saving) and the claim's low end
    targets = (1.0, claim_of(con)[0])
    top = torn.filter((pl.col("scenario_id") == "paper_text") & (pl.col("pattern") == patterns[0]) & (pl.col("swing") > 0)).sort("swing", descending=True)
    answer = ("" if top.is_empty() else
              f"For paper_text (compute only), {top['parameter'][0]} moves R the most: {top['device_class'][0]} R from "
              f"{top['reduction_factor_min'][0]:.2f} to {top['reduction_factor_max'][0]:.2f} over its range.")
    return Page(
        slug="sensitivity",
        title="Sensitivity",
        summary="How the reduction factor R moves: a tornado of one-at-a-time parameter ranges and a heatmap of R "
                f"over device multiplier x edge hours per day, with the R = 1 and R = {targets[1]:g} lines.",
        tables=TABLES,
        charts={"heatmap": heatmap_chart(frame, boundaries(frame, targets), scenarios),
                "tornado": tornado_chart(torn, scenarios, targets, patterns)},
        notes=[
            "Fewer training hours a day need proportionally more devices for the GPU's work (N = F_gpu x h_gpu / "
            "(F_dev x h_dev)), so the hours barely move R (only through whole-device rounding, and through the "
            "embodied allocation under the per-use-hour policy); the device multiplier decides it. The heatmap "
            "shows R without communication; the tornado offers communication patterns too.",
            "Sliders and selectors only pick rows of the precomputed grid "
            f"(m = {grid_axes.multipliers[0]:g}-{grid_axes.multipliers[-1]:g} in steps of {grid_axes.multiplier_step:g}, "
            f"hours {grid_axes.hours_min}-{grid_axes.hours_max}). At m = 1 and the scenario's hours the value equals the scenario's "
            "headline row of marts.fleet_equivalence.",
        ],
        headline=["heatmap"],
        answer=answer,
    )
