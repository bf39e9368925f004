"""Marginal emission factors: the curated file, its rows in staging.grid_intensity, and the
consequential scenario's grid parameters that reference them."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest

from pipelines.ingest.manifest import load_manifest
from pipelines.ingest.parsers.marginal import parse_marginal_factors
from pipelines.ingest.scenarios import Ref, parse_ref
from pipelines.ingest.staging import parse_entry, validate_parsed
from pipelines.warehouse.database import open_readonly
from pipelines.warehouse.queries import query_pl
from schemas.grid_intensity import GridIntensity
from tests.helpers import reject_table, rejects_of, stage_text

TABLE = "staging.grid_intensity"
KIND = "curated_marginal_factors"
HEADER = ("factor_id,zone,zone_name,country_iso3,year,gco2e_per_kwh,low_gco2e_per_kwh,high_gco2e_per_kwh,marginal_kind,"
          "emission_scope,status,citation,citation_url,notes\n")
LB_TO_G = 453.59237


def _shipped() -> dict[str, dict]:
    entry = next(e for e in load_manifest() if e.id == "marginal_emission_factors")
    assert (entry.kind, entry.table, entry.path) == (KIND, TABLE, "grid/marginal/marginal_emission_factors.csv")
    staged = validate_parsed(TABLE, GridIntensity, [(entry, parse_entry(entry, parse_marginal_factors))], run_id="test-run")
    assert staged.rejects.height == 0
    return {row["factor_id"]: row for row in staged.frame.iter_rows(named=True)}


def test_shipped_marginal_factors_parse_with_citation_and_status() -> None:
    rows = _shipped()
    assert sorted(rows) == ["avert_us_2019_srmer", "hawkes2010_gb_srmef", "hawkes2014_gb_lrmef", "na_europe_marginal_mean"]
    for row in rows.values():
        assert (row["signal"], row["resolution"], row["emission_scope"]) == ("marginal", "P1Y", "direct")
        assert row["period_end"].year == row["period_start"].year + 1 and row["period_start"].month == 1
        assert row["citation"] and row["citation_url"].startswith("https://") and row["notes"]
    us, gb_sr, gb_lr, combined = (rows[k] for k in ("avert_us_2019_srmer", "hawkes2010_gb_srmef", "hawkes2014_gb_lrmef",
                                                     "na_europe_marginal_mean"))
    # EPA AVERT, 2019 data: 1,562.4 lb CO2/MWh delivered -> g/kWh
    assert (us["zone"], us["period_start"].year, us["marginal_kind"], us["status"]) == ("US", 2019, "short_run_operating", "derived")
    assert us["gco2e_per_kwh"] == pytest.approx(1562.4 * LB_TO_G / 1000, abs=0.005)
    assert "AVERT" in us["citation"] and "1,562.4" in us["citation"]
    # Hawkes 2010: 0.69 kg/kWh for GB 2002-2009, +/-10%
    assert (gb_sr["zone"], gb_sr["marginal_kind"], gb_sr["status"]) == ("GB", "short_run_operating", "primary")
    assert (gb_sr["gco2e_per_kwh"], gb_sr["low_gco2e_per_kwh"], gb_sr["high_gco2e_per_kwh"]) == pytest.approx((690, 621, 759))
    assert "Energy Policy 38(10)" in gb_sr["citation"]
    # Hawkes 2014: long-run 0.26-0.53 kg/kWh, the midpoint as the value
    assert (gb_lr["marginal_kind"], gb_lr["status"]) == ("long_run", "derived")
    assert (gb_lr["low_gco2e_per_kwh"], gb_lr["gco2e_per_kwh"], gb_lr["high_gco2e_per_kwh"]) == pytest.approx((260, 395, 530))
    assert "Applied Energy 125" in gb_lr["citation"]
    # the paper's region: the mean of the two short-run factors, the range over all three rows
    assert combined["status"] == "derived" and combined["country_iso3"] is None
    assert combined["gco2e_per_kwh"] == pytest.approx((us["gco2e_per_kwh"] + gb_sr["gco2e_per_kwh"]) / 2, abs=0.005)
    assert combined["low_gco2e_per_kwh"] == min(gb_sr["low_gco2e_per_kwh"], gb_lr["low_gco2e_per_kwh"]) == 260
    assert combined["high_gco2e_per_kwh"] == max(gb_sr["high_gco2e_per_kwh"], gb_lr["high_gco2e_per_kwh"]) == 759


def test_marginal_rows_are_checked(tmp_path: Path) -> None:
    cite = '"Study (2020), Table 1",https://example.org/study'
    body = (
        f"ok_sr,GB,Great Britain,GBR,2021,450,400,500,short_run_operating,direct,primary,{cite},\n"  # 2 ok
        f"no_cite,GB,Great Britain,GBR,2022,450,,,long_run,direct,primary,,,\n"  # 3 no citation
        f"out_of_range,GB,Great Britain,GBR,2023,450,460,500,long_run,direct,primary,{cite},\n"  # 4 value below its low
        f"derived_bare,GB,Great Britain,GBR,2024,450,,,long_run,direct,derived,{cite},\n"  # 5 derived without arithmetic
        f"ok_sr,GB,Great Britain,GBR,2025,450,,,long_run,direct,primary,{cite},\n"  # 6 factor_id repeated
        f"bad_kind,GB,Great Britain,GBR,2026,450,,,medium_run,direct,primary,{cite},\n"  # 7 unknown kind
        f"bad_year,GB,Great Britain,GBR,twenty,450,,,long_run,direct,primary,{cite},\n"  # 8 unreadable year
        f"ok_lr,GB,Great Britain,GBR,2021,300,,,long_run,direct,assumed,{cite},Assumed for the test.\n"  # 9 ok: second study, same year
    )
    staged = stage_text(tmp_path, "marginal.csv", HEADER + body, parser=parse_marginal_factors, kind=KIND, table=TABLE,
                        model=GridIntensity, options={"fetched_at": dt.date(2026, 12, 1)})
    assert sorted(staged.frame.get_column("factor_id").to_list()) == ["ok_lr", "ok_sr"]
    got = {(row, check) for row, _column, check, _value in rejects_of(staged)}
    assert got == {(3, "annual_marginal_is_curated"), (4, "range_contains_value"), (5, "derived_or_assumed_rows_explain"),
                   (6, "factor_id_unique"), (7, "isin(['short_run_operating', 'long_run'])"), (8, "parse")}
    assert [r for r in rejects_of(staged) if r[0] == 8] == reject_table("8 | year | parse | twenty")


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
    for side in ("cloud_grid_gco2e_per_kwh", "edge_grid_gco2e_per_kwh"):
        cons = by[("realistic_consequential", side)]
        assert cons["factor_ref"] == "grid_intensity.factor_id=na_europe_marginal_mean.gco2e_per_kwh"
        assert (cons["signal"], cons["marginal_kind"], cons["factor_id"]) == ("marginal", "short_run_operating", "na_europe_marginal_mean")
        assert cons["value"] == cons["gco2e_per_kwh"] == pytest.approx(699.35)
        assert (cons["low"], cons["high"], cons["status"]) == (260, 759, "derived")
        attr = by[("realistic_attributional", side)]
        assert (attr["value"], attr["low"], attr["high"], attr["factor_ref"], attr["signal"]) == (367, 250, 480, None, None)
    # both sides still one draw
    assert by[("realistic_consequential", "grid_shared")]["value"] == by[("realistic_attributional", "grid_shared")]["value"] == 1
