"""Grid page: carbon intensity over time per zone, and the daily profile where hourly data exists."""

import altair as alt
import duckdb
import polars as pl

from dashboards.shell import Page, query, values, zone_scale

#: The tables the page reads (its "Data:" line); the site asset depends on them.
TABLES = ["marts.grid_daily", "marts.grid_profiles", "marts.grid_annual"]

#: Zones shown in the long-run annual chart (Ember lifecycle annual averages).
ANNUAL_ZONES = ["WORLD", "US", "DE", "GB", "FR", "IN"]


def build(con: duckdb.DuckDBPyConnection) -> Page:
    """Build the page from marts.grid_daily, marts.grid_profiles and marts.grid_annual."""
    daily = query(con, "grid_daily", {"min_periods_per_day": 12, "min_days": 28})
    profile = query(con, "grid_profile", {"min_periods_per_hour": 20})
    annual = query(con, "grid_annual", {"zones": ANNUAL_ZONES})
    all_zones = sorted({z for f in (daily, profile, annual) for z in f.get_column("zone").to_list()})

    def zone_colour(frame: pl.DataFrame, **legend: alt.Legend) -> alt.Color:
        """Colour by zone on the site's one zone -> colour scale."""
        return alt.Color("zone:N", title="zone", scale=zone_scale(frame.get_column("zone").unique().to_list(), all_zones),
                         **legend)

    zone_pick = alt.selection_point(fields=["zone"], bind="legend")
    over_time = (
        alt.Chart(values(daily), title="Daily mean intensity from hourly / half-hourly data (click a legend entry)")
        .mark_line(strokeWidth=1)
        .encode(
            x=alt.X("day:T", title="day (UTC)"),
            y=alt.Y("gco2e_per_kwh:Q", title="gCO2e/kWh"),
            color=zone_colour(daily),
            opacity=alt.condition(zone_pick, alt.value(1), alt.value(0.15)),
            tooltip=[alt.Tooltip("zone:N"), alt.Tooltip("emission_scope:N", title="scope"),
                     alt.Tooltip("day:T", title="day"), alt.Tooltip("gco2e_per_kwh:Q", title="gCO2e/kWh", format=".1f"),
                     alt.Tooltip("periods:Q", title="periods averaged")],
        )
        .add_params(zone_pick)
        .properties(width=850, height=300)
    )
    profile_chart = (
        alt.Chart(values(profile), title="Daily profile: mean intensity by hour of day (UTC), band = min-max")
        .encode(x=alt.X("hour_utc:Q", title="hour of day (UTC)", scale=alt.Scale(domain=[0, 23])))
    )
    tooltip = [alt.Tooltip("zone:N"), alt.Tooltip("emission_scope:N", title="scope"), alt.Tooltip("hour_utc:Q", title="hour"),
               alt.Tooltip("mean_gco2e_per_kwh:Q", title="mean gCO2e/kWh", format=".1f"),
               alt.Tooltip("min_gco2e_per_kwh:Q", title="min", format=".1f"),
               alt.Tooltip("max_gco2e_per_kwh:Q", title="max", format=".1f"), alt.Tooltip("periods:Q")]
    # one legend for the band and the line (a layer without it would drop it from both), its entries drawn
    # like the line's dots rather than the faint band
    zones_legend = alt.Legend(symbolOpacity=1)
    profile_chart = alt.layer(
        profile_chart.mark_area(opacity=0.12).encode(y=alt.Y("min_gco2e_per_kwh:Q", title="gCO2e/kWh"),
                                                     y2="max_gco2e_per_kwh:Q", color=zone_colour(profile, legend=zones_legend),
                                                     tooltip=tooltip),
        profile_chart.mark_line(point=True).encode(y="mean_gco2e_per_kwh:Q", color=zone_colour(profile, legend=zones_legend),
                                                   tooltip=tooltip),
    ).properties(width=850, height=300)
    annual_chart = (
        alt.Chart(values(annual), title="Annual average intensity (Ember, lifecycle)")
        .mark_line(point=True)
        .encode(x=alt.X("year:O", title="year"), y=alt.Y("gco2e_per_kwh:Q", title="gCO2e/kWh"),
                color=zone_colour(annual),
                tooltip=[alt.Tooltip("zone:N"), alt.Tooltip("zone_name:N", title="name"), alt.Tooltip("year:O"),
                         alt.Tooltip("gco2e_per_kwh:Q", title="gCO2e/kWh", format=".1f"), alt.Tooltip("source_id:N")])
        .properties(width=850, height=280)
    )
    zones = ", ".join(sorted(profile.get_column("zone").unique().to_list()))
    latest = annual.filter(pl.col("year") == annual.get_column("year").max()).sort("gco2e_per_kwh")
    answer = ("" if latest.is_empty() else
              f"In {latest['year'][0]} the annual grid intensity runs from {latest['zone'][0]} at {latest['gco2e_per_kwh'][0]:.0f} "
              f"to {latest['zone'][-1]} at {latest['gco2e_per_kwh'][-1]:.0f} gCO2e/kWh among the zones shown.")
    return Page(
        slug="grid",
        title="Grid",
        summary="Electricity carbon intensity over time per zone (daily means of the hourly series and annual "
                "averages), and the mean daily profile by hour where hourly data exists.",
        tables=TABLES,
        charts={"over_time": over_time, "profile": profile_chart, "annual": annual_chart},
        notes=[f"Zones with sub-daily actual data: {zones}. Lifecycle scope where a zone has it, else direct."],
        answer=answer,
    )
