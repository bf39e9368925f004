"""Marginal emission factors: the curated file, its rows in staging.grid_intensity, the
consequential scenario's grid parameters that reference them, and a scenario whose two sides
read different margins."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import duckdb
import numpy as np
import polars as pl
import pytest

from pipelines.ingest.manifest import load_manifest
from pipelines.ingest.parsers.marginal import parse_marginal_factors
from pipelines.ingest.scenarios import Ref, parse_ref, parse_scenario, resolve
from pipelines.ingest.staging import parse_entry, validate_parsed
from pipelines.model.uncertainty import draw_stream, independent, ranged_parameters, to_values
from pipelines.warehouse.database import open_readonly
from pipelines.warehouse.queries import query_pl
from schemas.grid_intensity import GridIntensity
from tests.helpers import entry_for, reject_table, rejects_of, stage_text

TABLE = "staging.grid_intensity"
KIND = "curated_marginal_factors"
HEADER = ("factor_id,zone,zone_name,country_iso3,year,data_first_year,data_last_year,gco2e_per_kwh,low_gco2e_per_kwh,"
          "high_gco2e_per_kwh,marginal_kind,emission_scope,status,citation,citation_url,notes\n")
LB_TO_G = 453.59237


def _shipped() -> dict[str, dict]:
    entry = next(e for e in load_manifest() if e.id == "marginal_emission_factors")
    assert (entry.kind, entry.table, entry.path) == (KIND, TABLE, "grid/marginal/marginal_emission_factors.csv")
    staged = validate_parsed(TABLE, GridIntensity, [(entry, parse_entry(entry, parse_marginal_factors))], run_id="test-run")
    assert staged.rejects.height == 0
    return {row["factor_id"]: row for row in staged.frame.iter_rows(named=True)}


def test_shipped_marginal_factors_parse_with_citation_and_status() -> None:
    rows = _shipped()
    assert sorted(rows) == ["avert_us_2023_srmer", "hawkes2014_gb_lrmef", "na_europe_marginal_mean"]
    for row in rows.values():
        assert (row["signal"], row["resolution"], row["emission_scope"]) == ("marginal", "P1Y", "direct")
        assert row["period_end"].year == row["period_start"].year + 1 and row["period_start"].month == 1
        assert row["citation"] and row["citation_url"].startswith("https://") and row["notes"]
        # every factor has a range and rests on data (or projects years) from 2014 on
        assert row["low_gco2e_per_kwh"] <= row["gco2e_per_kwh"] <= row["high_gco2e_per_kwh"]
        assert 2014 <= row["data_first_year"] <= row["data_last_year"]
    us, gb_lr, combined = (rows[k] for k in ("avert_us_2023_srmer", "hawkes2014_gb_lrmef", "na_europe_marginal_mean"))
    # EPA AVERT, 2023 data (April 2024 workbook, sheet 2023): Portfolio EE 1,454.68 lb CO2/MWh national,
    # 1,058.02 (California) to 1,816.68 (Rocky Mountains) over the regions -> g/kWh
    assert (us["zone"], us["period_start"].year, us["marginal_kind"], us["status"]) == ("US", 2023, "short_run_operating", "derived")
    assert (us["data_first_year"], us["data_last_year"]) == (2023, 2023)
    assert us["gco2e_per_kwh"] == pytest.approx(1454.68 * LB_TO_G / 1000, abs=0.005)
    assert us["low_gco2e_per_kwh"] == pytest.approx(1058.02 * LB_TO_G / 1000, abs=0.005)
    assert us["high_gco2e_per_kwh"] == pytest.approx(1816.68 * LB_TO_G / 1000, abs=0.005)
    assert "AVERT" in us["citation"] and all(f in us["citation"] for f in ("1,454.68", "1,058.02", "1,816.68", "'2023'"))
    # Hawkes 2014: long-run 0.26-0.53 kg/kWh for the decade it projects from 2014, the midpoint as the value
    assert (gb_lr["marginal_kind"], gb_lr["status"]) == ("long_run", "derived")
    assert (gb_lr["low_gco2e_per_kwh"], gb_lr["gco2e_per_kwh"], gb_lr["high_gco2e_per_kwh"]) == pytest.approx((260, 395, 530))
    assert (gb_lr["data_first_year"], gb_lr["data_last_year"]) == (2014, 2023)
    assert "Applied Energy 125" in gb_lr["citation"]
    # the paper's region: the mean of the current short-run factors (the US one alone), the range over its inputs
    short_run = [r for k, r in rows.items() if r["marginal_kind"] == "short_run_operating" and k != "na_europe_marginal_mean"]
    assert combined["status"] == "derived" and combined["country_iso3"] is None
    assert combined["marginal_kind"] == "short_run_operating"
    assert combined["gco2e_per_kwh"] == pytest.approx(sum(r["gco2e_per_kwh"] for r in short_run) / len(short_run), abs=0.005)
    assert combined["low_gco2e_per_kwh"] == min(us["low_gco2e_per_kwh"], gb_lr["low_gco2e_per_kwh"]) == 260
    assert combined["high_gco2e_per_kwh"] == max(us["high_gco2e_per_kwh"], gb_lr["high_gco2e_per_kwh"])
    assert (combined["data_first_year"], combined["data_last_year"]) == (
        min(us["data_first_year"], gb_lr["data_first_year"]), max(us["data_last_year"], gb_lr["data_last_year"]))


def test_marginal_rows_are_checked(tmp_path: Path) -> None:
    cite = '"Study (2020), Table 1",https://example.org/study'
    gb = "GB,Great Britain,GBR"
    body = (
        f"ok_sr,{gb},2021,2019,2021,450,400,500,short_run_operating,direct,primary,{cite},\n"  # 2 ok
        f"no_cite,{gb},2022,2022,2022,450,400,500,long_run,direct,primary,,,\n"  # 3 no citation
        f"out_of_range,{gb},2023,2023,2023,450,460,500,long_run,direct,primary,{cite},\n"  # 4 value below its low
        f"derived_bare,{gb},2024,2024,2024,450,400,500,long_run,direct,derived,{cite},\n"  # 5 derived without arithmetic
        f"ok_sr,{gb},2025,2025,2025,450,400,500,long_run,direct,primary,{cite},\n"  # 6 factor_id repeated
        f"bad_kind,{gb},2026,2026,2026,450,400,500,medium_run,direct,primary,{cite},\n"  # 7 unknown kind
        f"bad_year,{gb},twenty,2020,2020,450,400,500,long_run,direct,primary,{cite},\n"  # 8 unreadable year
        f"ok_lr,{gb},2021,2021,2030,300,200,400,long_run,direct,assumed,{cite},Assumed for the test.\n"  # 9 ok: second study, same year
        f"no_range,{gb},2021,2021,2021,300,,,long_run,direct,primary,{cite},\n"  # 10 no range
        f"no_high,{gb},2021,2021,2021,300,200,,short_run_operating,direct,primary,{cite},\n"  # 11 half a range
        f"no_years,{gb},2021,,,300,200,400,long_run,direct,primary,{cite},\n"  # 12 no period
        f"years_reversed,{gb},2021,2023,2015,300,200,400,long_run,direct,primary,{cite},\n"  # 13 period ends before it starts
        f"bad_first_year,{gb},2021,soon,2021,300,200,400,long_run,direct,primary,{cite},\n"  # 14 unreadable data year
    )
    staged = stage_text(tmp_path, "marginal.csv", HEADER + body, parser=parse_marginal_factors, kind=KIND, table=TABLE,
                        model=GridIntensity, options={"fetched_at": dt.date(2026, 12, 1)})
    assert sorted(staged.frame.get_column("factor_id").to_list()) == ["ok_lr", "ok_sr"]
    kept = {r["factor_id"]: (r["data_first_year"], r["data_last_year"]) for r in staged.frame.iter_rows(named=True)}
    assert kept == {"ok_sr": (2019, 2021), "ok_lr": (2021, 2030)}
    got = {(row, check) for row, _column, check, _value in rejects_of(staged)}
    period = "marginal_factor_has_range_and_period"
    assert got == {(3, "annual_marginal_is_curated"), (4, "range_contains_value"), (5, "derived_or_assumed_rows_explain"),
                   (6, "factor_id_unique"), (7, "isin(['short_run_operating', 'long_run'])"), (8, "parse"),
                   (10, period), (11, period), (12, period), (13, period), (14, "parse")}
    assert [r for r in rejects_of(staged) if r[0] in (8, 14)] == reject_table(
        "8 | year | parse | twenty\n14 | data_first_year | parse | soon")


def test_factor_ref_may_name_a_grid_factor() -> None:
    assert parse_ref("grid_intensity.factor_id=na_europe_marginal_mean.gco2e_per_kwh") == Ref(
        "staging.grid_intensity", "factor_id", "na_europe_marginal_mean", "gco2e_per_kwh")
    with pytest.raises(ValueError, match="not a key"):
        parse_ref("grid_intensity.zone=GB.gco2e_per_kwh")  # the time series have no single row per key


def test_consequential_grid_is_marginal_attributional_average(built_warehouse: Path) -> None:
    with open_readonly(built_warehouse) as con:
        rows = query_pl(con, """
            select p.scenario_id, p.parameter, p.value, p.low, p.high, p.status, p.factor_ref,
                   g.signal, g.marginal_kind, g.gco2e_per_kwh, g.factor_id
            from core.scenario_parameters as p
            left join staging.grid_intensity as g
              on g.source_id = p.source_id and g.source_row = p.source_row and g.factor_id is not null
            where p.parameter in ('cloud_grid_gco2e_per_kwh', 'edge_grid_gco2e_per_kwh', 'grid_shared')
              and p.scenario_id in ('realistic_consequential', 'realistic_attributional')
            order by p.scenario_id, p.parameter
        """, {}).rows(named=True)
    by = {(r["scenario_id"], r["parameter"]): r for r in rows}
    with open_readonly(built_warehouse) as con:
        combined = query_pl(con, "select gco2e_per_kwh, low_gco2e_per_kwh, high_gco2e_per_kwh from staging.grid_intensity "
                                 "where factor_id = 'na_europe_marginal_mean'", {}).row(0)
    for side in ("cloud_grid_gco2e_per_kwh", "edge_grid_gco2e_per_kwh"):
        cons = by[("realistic_consequential", side)]
        assert cons["factor_ref"] == "grid_intensity.factor_id=na_europe_marginal_mean.gco2e_per_kwh"
        assert (cons["signal"], cons["marginal_kind"], cons["factor_id"]) == ("marginal", "short_run_operating", "na_europe_marginal_mean")
        # the combined row's value: EPA AVERT 2023, Portfolio EE 1,454.68 lb/MWh, the one current short-run factor
        assert cons["value"] == cons["gco2e_per_kwh"] == pytest.approx(1454.68 * LB_TO_G / 1000, abs=0.005)
        # the scenario's range is the combined row's: the GB long-run low to the highest AVERT region
        assert (cons["value"], cons["low"], cons["high"]) == combined and cons["status"] == "derived"
        assert cons["low"] == 260 and cons["high"] == pytest.approx(1816.68 * LB_TO_G / 1000, abs=0.005)
        attr = by[("realistic_attributional", side)]
        assert (attr["value"], attr["low"], attr["high"], attr["factor_ref"], attr["signal"]) == (367, 250, 480, None, None)
    # both sides still one draw
    assert by[("realistic_consequential", "grid_shared")]["value"] == by[("realistic_attributional", "grid_shared")]["value"] == 1


def _scenario_with_margins(tmp_path: Path, con: duckdb.DuckDBPyConnection, grid_shared: int) -> pl.DataFrame:
    """A scenario whose cloud reads the US short-run margin and whose edge reads the GB long-run one,
    resolved against the shipped marginal rows; each side's range is its own factor's."""
    short, long_ = (_shipped()[k] for k in ("avert_us_2023_srmer", "hawkes2014_gb_lrmef"))
    lines = [
        "parameter,value,unit,low,high,distribution,status,factor_ref,reasoning",
        f"cloud_grid_gco2e_per_kwh,,gCO2e/kWh,{short['low_gco2e_per_kwh']},{short['high_gco2e_per_kwh']},split_triangular,derived,"
        "grid_intensity.factor_id=avert_us_2023_srmer.gco2e_per_kwh,short-run margin",
        f"edge_grid_gco2e_per_kwh,,gCO2e/kWh,{long_['low_gco2e_per_kwh']},{long_['high_gco2e_per_kwh']},split_triangular,derived,"
        "grid_intensity.factor_id=hawkes2014_gb_lrmef.gco2e_per_kwh,long-run margin",
        f"grid_shared,{grid_shared},code,,,point,assumed,,one draw for both sides or one each",
    ]
    path = tmp_path / f"margins_{grid_shared}.csv"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    entry = entry_for(path, kind="scenario", table="core.scenario_parameters", options={"scenario_id": "margins"},
                      source_id="scenario_margins")
    frame, rejects = resolve(con, {"margins": (entry, parse_entry(entry, parse_scenario).frame)})
    assert rejects == []
    return frame


def test_cloud_and_edge_may_read_different_margins(tmp_path: Path) -> None:
    """The cloud on the short-run row and the edge on the long-run row: two parameters, each with its
    own factor_ref, value and source line, drawn from two streams when grid_shared is 0."""
    entry = next(e for e in load_manifest() if e.id == "marginal_emission_factors")
    staged = validate_parsed(TABLE, GridIntensity, [(entry, parse_entry(entry, parse_marginal_factors))], run_id="test-run")
    con = duckdb.connect()
    con.execute("create schema staging")
    con.register("staged", staged.frame.to_arrow())
    con.execute("create table staging.grid_intensity as select * from staged")
    rows = _shipped()
    short, long_ = rows["avert_us_2023_srmer"], rows["hawkes2014_gb_lrmef"]

    frame = _scenario_with_margins(tmp_path, con, grid_shared=0)
    separate = {r["parameter"]: r for r in frame.iter_rows(named=True)}
    cloud, edge = separate["cloud_grid_gco2e_per_kwh"], separate["edge_grid_gco2e_per_kwh"]
    assert (cloud["value"], cloud["source_row"]) == (short["gco2e_per_kwh"], short["source_row"])
    assert (edge["value"], edge["source_row"]) == (long_["gco2e_per_kwh"], long_["source_row"])
    assert cloud["source_id"] == edge["source_id"] == "marginal_emission_factors"

    drawn = {p.parameter: p for p in ranged_parameters(frame)}
    assert [p.parameter for p in independent(list(drawn.values()))] == ["cloud_grid_gco2e_per_kwh", "edge_grid_gco2e_per_kwh"]
    assert drawn["cloud_grid_gco2e_per_kwh"].stream != drawn["edge_grid_gco2e_per_kwh"].stream
    draws = {}
    for name, p in drawn.items():
        unit = np.empty(20_000)
        draw_stream(1, "margins", p.stream).random(out=unit)
        draws[name] = to_values(unit, p)
    for name, row in (("cloud_grid_gco2e_per_kwh", short), ("edge_grid_gco2e_per_kwh", long_)):
        values = draws[name]
        assert row["low_gco2e_per_kwh"] <= values.min() and values.max() <= row["high_gco2e_per_kwh"]
        assert np.median(values) == pytest.approx(row["gco2e_per_kwh"], rel=0.02)  # split_triangular: the value is the median
    # independent draws: the two sides' samples are uncorrelated
    assert abs(np.corrcoef(draws["cloud_grid_gco2e_per_kwh"], draws["edge_grid_gco2e_per_kwh"])[0, 1]) < 0.05

    # grid_shared = 1: one draw for both sides, the edge following the cloud's sample
    shared = {p.parameter: p for p in ranged_parameters(_scenario_with_margins(tmp_path, con, grid_shared=1))}
    assert shared["edge_grid_gco2e_per_kwh"].follows == "cloud_grid_gco2e_per_kwh"
    assert shared["edge_grid_gco2e_per_kwh"].stream == shared["cloud_grid_gco2e_per_kwh"].stream == "grid_shared"
