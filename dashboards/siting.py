"""Siting page: R for every pair of a cloud zone and an edge zone, where the answer flips, and
how old each hourly intensity is."""

import datetime as dt
import html

import altair as alt
import duckdb
import polars as pl

from dashboards.shell import (
    FEASIBILITY_FIELD,
    FEASIBLE,
    INFEASIBLE,
    Page,
    Swatch,
    claim_of,
    feasibility,
    feasibility_channel,
    feasibility_condition,
    query,
    ratio_text,
    tooltips,
    values,
)

#: The tables the page reads (its "Data:" line); the site asset depends on them.
TABLES = ["marts.siting", "marts.siting_summary"]
#: The heatmap shows the countries with the most electricity demand, plus every hourly zone.
TOP_N = 40
#: The break-even lines run from a carbon-free cloud grid to this intensity, gCO2e/kWh.
MAX_CLOUD_CI = 900.0
KINDS = ["with communication", "compute only"]


def _selectors(scenarios: list[str], classes: list[str], prefix: str) -> tuple[alt.Parameter, alt.Parameter, alt.Parameter]:
    """Frame (a scenario and its accounting frame), device class and compute-only or with-communication; each
    chart's own (``prefix``), as a page's radio buttons of one name form one group across its charts."""
    preferred = [s for s in scenarios if s.startswith("realistic_attributional")]
    scenario = alt.param(name=f"{prefix}_scenario", value=(preferred or scenarios)[0],
                         bind=alt.binding_select(options=scenarios, name="Scenario (frame) "))
    device = alt.param(name=f"{prefix}_class", value=classes[0], bind=alt.binding_select(options=classes, name="Device "))
    kind = alt.param(name=f"{prefix}_kind", value=KINDS[0], bind=alt.binding_radio(options=KINDS, name="R "))
    return scenario, device, kind


def heatmap(frame: pl.DataFrame, claim_low: float) -> alt.TopLevelMixin:
    """R per cloud zone (rows) and edge zone (columns), each sorted by its intensity; diverging at R = 1, R >= the claim's low end marked.

    One row per scenario and pair, each device class's R in columns of its own (``r_<class>``,
    ``r_comm_<class>``): the selected class picks its columns, so the page inlines half the rows.
    """
    classes = sorted(frame.get_column("device_class").unique().to_list())
    scenario, device, kind = _selectors(sorted(frame.get_column("scenario").unique().to_list()), classes, "siting_map")
    wide = frame.pivot(on="device_class", index=["scenario", "cloud_zone", "edge_zone", "cloud_ci", "edge_ci"],
                       values=["r", "r_comm", "infeasible"], aggregate_function=None)
    if len(classes) == 1:  # one class: polars names the columns after the values alone
        wide = wide.rename({"r": f"r_{classes[0]}", "r_comm": f"r_comm_{classes[0]}", "infeasible": f"infeasible_{classes[0]}"})
    # a flag per class as 0 / 1 (lighter on the page than true / false)
    wide = wide.with_columns(pl.col(f"infeasible_{c}").cast(pl.Int8) for c in classes)
    tip = tooltips(("cloud_zone:N", "cloud zone"), ("cloud_ci:Q", "cloud gCO2e/kWh"), ("edge_zone:N", "edge zone"),
                   ("edge_ci:Q", "edge gCO2e/kWh (charging window)"), ("R:Q", "R", ".3g"), ("r:Q", "R compute only", ".3g"),
                   ("r_comm:Q", "R with communication", ".3g"), (f"{FEASIBILITY_FIELD}:N", "fleet"))
    base = (alt.Chart(values(wide))
            .transform_filter(alt.datum.scenario == scenario)
            .transform_calculate(r=f"datum['r_' + {device.name}]", r_comm=f"datum['r_comm_' + {device.name}]")
            .transform_calculate(R=alt.expr.if_(kind == KINDS[0], alt.datum.r_comm, alt.datum.r))
            .transform_calculate(**{FEASIBILITY_FIELD: f"datum['infeasible_' + {device.name}] ? {INFEASIBLE!r} : {FEASIBLE!r}"})
            .transform_filter("isValid(datum.R)"))
    x = alt.X("edge_zone:N", title="edge zone (charging), by intensity", sort=alt.EncodingSortField("edge_ci", op="min"),
              axis=alt.Axis(labelFontSize=8, labelAngle=-90))
    y = alt.Y("cloud_zone:N", title="cloud zone (around the clock), by intensity", sort=alt.EncodingSortField("cloud_ci", op="min"),
              axis=alt.Axis(labelFontSize=8))
    cells = base.mark_rect().encode(
        x=x, y=y, tooltip=tip, opacity=feasibility_channel(alt.Opacity, 1.0, 0.35, swatch=Swatch("square")),
        color=alt.Color("R:Q", title="R (log)", scale=alt.Scale(type="log", scheme="redblue", domainMid=1, domain=[0.01, 100], clamp=True)))
    claim = base.transform_filter(alt.datum.R >= claim_low).mark_point(shape="circle", size=6, filled=True, color="black").encode(
        x=x, y=y, tooltip=tip, opacity=feasibility_condition(1.0, 0.35))
    return (alt.layer(cells, claim).add_params(scenario, device, kind)
            .properties(width=alt.Step(11), height=alt.Step(11),
                        title=f"R per cloud zone x edge zone (blue: the edge emits less, red: more; dot: R >= {claim_low:g}, the claim)"))


def curves(frame: pl.DataFrame, claim_low: float) -> alt.TopLevelMixin:
    """R against the cloud's intensity for the hourly edge zones and the scenario's own edge mix, with R = 1 and the claim's low end dashed."""
    scenario, device, kind = _selectors(sorted(frame.get_column("scenario").unique().to_list()),
                                        sorted(frame.get_column("device_class").unique().to_list()), "siting_lines")
    frame = frame.with_columns(feasibility(pl.col("infeasible"))).drop("infeasible")
    lines = (alt.Chart(values(frame))
             .transform_filter((alt.datum.scenario == scenario) & (alt.datum.device_class == device) & (alt.datum.r_kind == kind))
             .mark_line()
             .encode(x=alt.X("cloud_ci:Q", title="cloud intensity, gCO2e/kWh"),
                     y=alt.Y("r:Q", title="R = cloud / edge"),
                     color=alt.Color("edge_zone:N", title="edge zone"),
                     strokeDash=feasibility_channel(alt.StrokeDash, [1, 0], [6, 3], swatch=Swatch("stroke")),
                     tooltip=tooltips(("edge_zone:N", "edge zone"), ("edge_ci:Q", "edge gCO2e/kWh"), (f"{FEASIBILITY_FIELD}:N", "fleet"),
                                      ("cloud_gco2e_per_kwh_for_r1:Q", "cloud intensity for R = 1", ".0f"),
                                      ("cloud_gco2e_per_kwh_for_r4:Q", "cloud intensity for R = 4", ".0f"))))
    marks = pl.DataFrame({"r": [1.0, claim_low], "label": ["R = 1", f"R = {claim_low:g}"]})
    rules = alt.Chart(values(marks)).mark_rule(strokeDash=[4, 3], color="#444").encode(y="r:Q", tooltip="label:N")
    return (alt.layer(rules, lines).add_params(scenario, device, kind)
            .properties(width=700, height=280, title="Break-even: R against the cloud's intensity for the hourly edge zones and the scenario's edge mix"))


def winning_sentences(frame: pl.DataFrame, claim_low: float) -> list[str]:
    """'Edge training beats a cloud job in Z only where ...', per scenario and class, at the scenario's own cloud zone."""
    out = []
    for r in frame.iter_rows(named=True):
        head = (f"{r['scenario_id']} ({r['accounting_frame']}), {r['device_class']}s with communication: edge training beats a "
                f"cloud job in {r['cloud_zone']} ({r['cloud_ci']:.0f} gCO2e/kWh, {r['intensity_basis']}) ")
        if not r["edge_zones_r_ge_1"]:
            out.append(head + f"in none of the {r['edge_zones']} edge zones (R {ratio_text(r['r_min'])}-{ratio_text(r['r_max'])})." + mix_sentence(r))
            continue
        zones = (r["winning_edge_zones"] or "").split(", ")
        listed = ", ".join(zones[:8]) + (", ..." if len(zones) > 8 else "")
        below = (f", and loses from {r['cleanest_losing_edge_ci']:.0f}" if r["cleanest_losing_edge_ci"] is not None else "")
        out.append(head + f"only where the devices charge on grids of at most {r['dirtiest_winning_edge_ci']:.0f} gCO2e/kWh{below}: "
                   f"{r['edge_zones_r_ge_1']} of {r['edge_zones']} edge zones ({listed}); R >= {claim_low:g} in "
                   f"{r['edge_zones_r_ge_4']} of them." + mix_sentence(r))
    return out


def mix_sentence(r: dict) -> str:
    """The scenario's own edge mix at its own cloud zone, and the cloud intensity below which the mix loses."""
    if r["edge_mix"] is None:
        return ""
    flips = r["mix_cloud_ci_for_r1"]
    where = ("" if flips is None else
             "; the mix wins on any cloud grid" if flips < 0 else f"; the mix loses where the cloud's grid is below {flips:.0f} gCO2e/kWh")
    return f" The scenario's own edge mix ({r['edge_mix']}, {r['mix_ci']:.0f} gCO2e/kWh in its windows): R {r['r_mix']:.3g}{where}."


def range_html(con: duckdb.DuckDBPyConnection) -> str:
    """The index's siting line: the range of R with communication over every pair of zones, per scenario and class."""
    frame = query(con, "siting_range")
    items = [f"{r['scenario_id']} {r['device_class']} ({r['basis']}, {r['edge_design']}): R {ratio_text(r['r_min'])}-{ratio_text(r['r_max'])} over "
             f"{r['cloud_zones']} x {r['edge_zones']} zones, R >= 1 in {r['share_r_ge_1']:.0%} of pairs" for r in frame.iter_rows(named=True)]
    return ('<p class="verdict" id="siting-range">Where it trains (marts.siting, with communication, on the verdict\'s basis and '
            f'best edge design): {html.escape("; ".join(items))}. <a href="siting.html">Siting</a></p>')


def answer(con: duckdb.DuckDBPyConnection, cells: pl.DataFrame) -> str:
    """One sentence: where the edge beats the cloud, over every pair of zones (marts.siting, with communication);
    a fleet that cannot carry its traffic (``cells``' flag) is named so."""
    infeasible = {(s.split(" (")[0], d) for s, d in cells.filter(pl.col("infeasible")).select("scenario", "device_class").unique().iter_rows()}
    parts = [f"{r['scenario_id']} {r['device_class']}s in {r['share_r_ge_1']:.0%}"
             + (" (an infeasible fleet)" if (r["scenario_id"], r["device_class"]) in infeasible else "")
             for r in query(con, "siting_range").iter_rows(named=True)]
    return f"With communication, training on the edge emits less than the cloud (R >= 1) only in this share of cloud x edge zone pairs: {'; '.join(parts)}."


def build(con: duckdb.DuckDBPyConnection) -> Page:
    """Build the page from marts.siting and marts.siting_summary."""
    cells = query(con, "siting_heatmap", {"top_n": TOP_N})
    lines = query(con, "siting_curves", {"max_ci": MAX_CLOUD_CI})
    claim_low, _ = claim_of(con)
    named = query(con, "siting_cloud_zone", {"claim_low": claim_low})
    ages = query(con, "siting_ages")
    now = dt.datetime.now(dt.UTC)
    age_text = "; ".join(f"{r['zone']} ({r['intensity_basis']}): data through {r['data_through']:%Y-%m-%d %H:%M} UTC, "
                         f"{(now - r['data_through']).days} days ago, fetched {r['fetched_at']:%Y-%m-%d}" for r in ages.iter_rows(named=True))
    return Page(
        slug="siting",
        title="Siting",
        summary="Where it trains: R for every pair of a cloud zone (around the clock) and an edge zone (charging 23:00-07:00 "
                "local time), from hourly series where a zone has one, else monthly or annual means, read as the verdict reads "
                "its answer: each scenario's headline basis and best admissible edge design (marts.siting basis, edge_design). "
                f"Shown: the {TOP_N} countries with the most electricity demand and every hourly zone; the full table is "
                "marts.siting.",
        tables=TABLES,
        charts={"heatmap": heatmap(cells, claim_low), "break_even": curves(lines, claim_low)},
        notes=[*winning_sentences(named, claim_low), f"How old each hourly intensity is: {age_text}."],
        headline=["heatmap"],
        answer=answer(con, cells),
    )
