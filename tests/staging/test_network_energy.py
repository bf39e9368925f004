"""staging.network_energy: curated literature values."""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest

from pipelines.defs.assets.staging_tables import NETWORK_ENERGY
from pipelines.ingest.manifest import entries_for
from pipelines.ingest.staging import Staged, parse_entry, validate_parsed
from schemas.network_energy import NetworkEnergy
from tests.helpers import rejects_of, stage_text

PARSERS, TABLE = NETWORK_ENERGY.parsers, NETWORK_ENERGY.table

HEADER = "factor_id,factor_set,frame,quantity,scope,value,unit,low,high,year,region,status,citation,citation_url,notes\n"


def _stage(tmp_path: Path, rows: str) -> Staged:
    """Stage ``rows`` (CSV lines after the header) through the curated parser and the model;
    each test's first row, ``ok``, is the one row kept."""
    staged = stage_text(
        tmp_path, "net.csv", HEADER + rows, parser=PARSERS["curated_network_energy"], kind="curated_network_energy", table=TABLE, model=NetworkEnergy
    )
    assert staged.frame.get_column("factor_id").to_list() == ["ok"]
    return staged


def test_bad_rows_are_quarantined_with_reasons(tmp_path: Path) -> None:
    staged = _stage(tmp_path, "ok,study,any,radio_power,wifi_tx,1.74,W,,,2023,,primary,Study,https://example.org,\n"
        "neg,study,any,radio_power,wifi_rx,-1,W,,,2023,,primary,Study,https://example.org,\n"
        "txt,study,any,network_intensity,fixed,abc,kWh/GB,,,2020,,primary,Study,https://example.org,\n"
        "unit,study,any,network_intensity,fixed,0.03,W,,,2020,,primary,Study,https://example.org,\n")
    assert rejects_of(staged)[:2] == [
        (3, "value", "greater_than(0)", "-1.0"),
        (4, "value", "parse", "abc"),
    ][:2]
    row_check = staged.rejects.filter(staged.rejects["check_name"] == "unit_matches_quantity").row(0, named=True)
    assert (row_check["source_row"], row_check["column_name"]) == (5, None)
    assert '"unit":"W"' in row_check["value"] and row_check["reason"] == "unit matches quantity"


def test_range_and_explanation_checks(tmp_path: Path) -> None:
    staged = _stage(tmp_path, "ok,study,any,network_intensity,mobile,0.14,kWh/GB,0.12,0.2,2020,EU,primary,Study,https://example.org,\n"
        "range,study,any,network_intensity,mobile,0.3,kWh/GB,0.12,0.2,2020,EU,primary,Study,https://example.org,\n"
        "why,study,any,radio_power,wifi_tx,1.7,W,,,2022,,derived,Study,https://example.org,\n"
        "inf,study,any,radio_power,wifi_rx,inf,W,,,2022,,primary,Study,https://example.org,\n")
    assert [r[:3] for r in rejects_of(staged)] == [
        (3, None, "range_contains_value"),
        (4, None, "derived_or_assumed_rows_explain"),
        (5, "value", "parse"),
    ]


def _shipped() -> pl.DataFrame:
    (entry,) = entries_for(TABLE)
    staged = validate_parsed(TABLE, NetworkEnergy, [(entry, parse_entry(entry, PARSERS[entry.kind]))], run_id="test")
    assert staged.rejects.height == 0
    return staged.frame


def test_shipped_literature_values() -> None:
    frame = _shipped()
    value = dict(frame.select("factor_id", "value").iter_rows())
    # Pixel 6a power profile: current (mA) x 3.7 V.
    for factor_id, milliamps in [("pixel6a_wifi_idle", 38), ("pixel6a_wifi_rx", 98), ("pixel6a_wifi_tx", 470)]:
        assert value[factor_id] == pytest.approx(milliamps * 3.7 / 1000, abs=5e-4)
    assert [round(value[f"pixel6a_wifi_{s}"], 2) for s in ("idle", "rx", "tx")] == [0.14, 0.36, 1.74]
    radios = frame.filter(pl.col("factor_id").str.starts_with("pixel6a_"))
    assert radios.select("status", "unit").unique().rows() == [("derived", "W")]
    # Aslan et al.: 0.06 kWh/GB in 2015, halving every 2 years -> 2020.
    assert value["aslan2018_trend_2020"] == pytest.approx(0.06 * 0.5 ** (5 / 2), abs=5e-5)
    assert "0.0065" in frame.filter(pl.col("factor_id") == "aslan2018_trend_2020").item(0, "notes")
    assert (value["eu_ict_impact_2020_fixed"], value["eu_ict_impact_2020_mobile"]) == (0.03, 0.14)
    routers = frame.group_by("quantity").agg(pl.col("value").min().alias("lo"), pl.col("value").max().alias("hi"))
    ranges = {q: (lo, hi) for q, lo, hi in routers.iter_rows()}
    assert ranges["router_embodied"] == (15.6, 21.6)
    assert ranges["router_power"] == (3.54, 6.39)
    assert value["nest_wifi_pro_2022_power"] == pytest.approx(56_000 / 8_760, abs=5e-3)
    assert frame.filter(pl.col("status").is_in(["derived", "assumed"]) & pl.col("notes").is_null()).height == 0
    assert frame.get_column("citation_url").str.starts_with("https://").all()
    # Malmodin 2020's fixed power model: 18 W per line + 0.02 (router and access) + 0.03 (core) W per Mbit/s
    assert (value["malmodin2020_fixed_line_idle"], value["malmodin2020_fixed_cpe_access_marginal"],
            value["malmodin2020_fixed_core_marginal"]) == (18.0, 0.02, 0.03)
    units = dict(frame.select("factor_id", "unit").iter_rows())
    assert units["malmodin2020_fixed_core_marginal"] == "W/(Mbit/s)" and units["malmodin2020_fixed_line_idle"] == "W"
    assert value["aslan2018_trend_2024"] == pytest.approx(0.06 * 0.5 ** (9 / 2), abs=5e-6)
