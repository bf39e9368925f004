"""staging.grid_intensity: every parser's quarantine, values of the shipped files, the asset."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path
from typing import Any

import dagster as dg
import polars as pl
import pytest

from pipelines.defs.assets.sources import sources
from pipelines.defs.assets.staging_tables import GRID_INTENSITY
from pipelines.errors import ManifestError, SourceParseError
from pipelines.ingest.manifest import SourceEntry, load_manifest
from pipelines.ingest.parsers.electricitymaps import parse_electricitymaps_payload
from pipelines.ingest.parsers.ember import read_zones
from pipelines.ingest.parsers.uk_carbon_intensity import parse_uk_ci_payload
from pipelines.ingest.quarantine import split_valid
from pipelines.ingest.staging import Staged, parse_entry, validate_parsed
from pipelines.lib.resources import Warehouse
from pipelines.warehouse.database import open_readonly
from schemas.grid_intensity import GridIntensity
from schemas.meta import conform
from tests.helpers import assert_reasons, reject_table, rejects_of, stage_text

PARSERS, TABLE = GRID_INTENSITY.parsers, GRID_INTENSITY.table
grid_intensity = GRID_INTENSITY.asset

UTC = dt.UTC
FETCHED = {"fetched_at": dt.date(2026, 1, 1)}


def utc(*args: int) -> dt.datetime:
    return dt.datetime(*args, tzinfo=UTC)


def stage(tmp_path: Path, kind: str, content: str | bytes, options: dict[str, Any] | None = None, name: str = "f.csv") -> Staged:
    return stage_text(
        tmp_path, name, content, parser=PARSERS[kind], kind=kind, table=TABLE, model=GridIntensity, options={**FETCHED, **(options or {})}
    )


def verdicts(staged: Staged) -> list[tuple[Any, ...]]:
    """(source_row, column, check, value); a row-level check's JSON value is shown as signal/scope."""
    out = []
    for row, column, check, value in rejects_of(staged):
        if column is None and value is not None and value.startswith("{"):
            record = json.loads(value)
            value = f"{record['signal']}/{record['emission_scope']}"
        out.append((row, column, check, value))
    return sorted(out, key=lambda r: (r[0] or 0, r[1] or "", r[2], r[3] or ""))


def reasons(staged: Staged) -> dict[tuple[int, str], str]:
    return {(r["source_row"], r["check_name"]): r["reason"] for r in staged.rejects.iter_rows(named=True)}


def values(staged: Staged, *cols: str) -> list[tuple[Any, ...]]:
    return sorted(staged.frame.select(cols).iter_rows(), key=lambda r: tuple("" if v is None else str(v) for v in r))


# --- Ember -----------------------------------------------------------------------------------

EMBER_YEARLY = "country_or_region,country_code,year,demand_twh,emissions_intensity_gco2_per_kwh\n" + (
    "United Kingdom,GBR,2024,300,210.89\n"  # 2 ok -> GB
    "World,,2024,30000,472.99\n"  # 3 ok -> WORLD (aggregate, no code)
    "Atlantis,ATL,2024,1,100\n"  # 4 unknown ISO3
    "Germany,DEU,2024,500,\n"  # 5 blank intensity
    "France,FRA,twenty,400,44.18\n"  # 6 unreadable year
    "Spain,ESP,2024,250,abc\n"  # 7 unreadable intensity
    "Italy,ITA,2024,300,-5\n"  # 8 negative
    "United Kingdom,GBR,2024,300,211.00\n"  # 9 duplicate of line 2
    "Narnia,,2024,1,5\n"  # 10 unknown aggregate
    "Poland,POL,1850,1,700\n"  # 11 implausible year
    "Norway,NOR,2024,1,nan\n"  # 12 not finite
    "Chad,TCD,2024,1,2500\n"  # 13 above 2000
)


def test_ember_yearly_quarantine(tmp_path: Path) -> None:
    staged = stage(tmp_path, "ember_yearly", EMBER_YEARLY)
    assert values(staged, "source_row", "zone", "zone_name", "country_iso3", "gco2e_per_kwh") == [
        (2, "GB", "United Kingdom", "GBR", 210.89),
        (3, "WORLD", "World", None, 472.99),
    ]
    row = staged.frame.filter(pl.col("zone") == "GB").row(0, named=True)
    assert (row["period_start"], row["period_end"], row["resolution"], row["signal"], row["emission_scope"]) == (
        utc(2024, 1, 1), utc(2025, 1, 1), "P1Y", "annual_average", "lifecycle",
    )
    assert row["fetched_at"] == utc(2026, 1, 1) and row["is_estimated"] is None
    assert verdicts(staged) == reject_table("""
        4 | country_code | unknown_zone | ATL
        5 | emissions_intensity_gco2_per_kwh | missing_value | -
        6 | year | parse | twenty
        7 | emissions_intensity_gco2_per_kwh | parse | abc
        8 | gco2e_per_kwh | greater_than_or_equal_to(0) | -5.0
        9 | - | unique_key | annual_average/lifecycle
        10 | country_or_region | unknown_zone | Narnia
        11 | year | out_of_range | 1850
        12 | emissions_intensity_gco2_per_kwh | parse | nan
        13 | gco2e_per_kwh | less_than_or_equal_to(2000) | 2500.0
    """)
    assert_reasons(reasons(staged), {
        (4, "unknown_zone"): "country_code: ISO3 code 'ATL' (Atlantis) is not in curated/zones.csv; add the country there",
        (5, "missing_value"): "emissions_intensity_gco2_per_kwh is blank: Ember gives no carbon intensity for Germany 2024",
        (9, "unique_key"): (
            "duplicates an earlier row of the same file (same zone, period_start, resolution, signal, emission_scope and factor_id); the first is kept"
        ),
        (10, "unknown_zone"): "country_or_region: 'Narnia' has no country_code and is not an aggregate listed in curated/zones.csv",
    })


def test_ember_monthly_quarantine(tmp_path: Path) -> None:
    content = "country_or_region,country_code,date,demand_twh,emissions_intensity_gco2_per_kwh\n" + (
        "France,FRA,2024-02-01,40,30.5\n"  # 2 ok
        "EU,,2024-02-01,200,250\n"  # 3 ok aggregate
        "France,FRA,2024-02-15,40,31\n"  # 4 not the first of the month
        "France,FRA,,40,31\n"  # 5 blank date
        "France,FRA,2024-13-01,40,31\n"  # 6 unreadable date
        "Germany,DEU,2024-03-01,40,\n"  # 7 blank intensity
        "Kosovo,XKX,2024-03-01,1,800\n"  # 8 ok (user-assigned XK)
    )
    staged = stage(tmp_path, "ember_monthly", content)
    assert values(staged, "source_row", "zone", "period_start", "period_end", "gco2e_per_kwh") == [
        (2, "FR", utc(2024, 2, 1), utc(2024, 3, 1), 30.5),
        (3, "EU", utc(2024, 2, 1), utc(2024, 3, 1), 250.0),
        (8, "XK", utc(2024, 3, 1), utc(2024, 4, 1), 800.0),
    ]
    assert set(staged.frame.get_column("signal")) == {"monthly_average"}
    assert set(staged.frame.get_column("resolution")) == {"P1M"}
    assert verdicts(staged) == reject_table("""
        4 | date | not_month_start | 2024-02-15
        5 | date | missing_value | -
        6 | date | parse | 2024-13-01
        7 | emissions_intensity_gco2_per_kwh | missing_value | -
    """)


def test_ember_us_states_quarantine(tmp_path: Path) -> None:
    content = "country,state,year,demand_gwh,emissions_ktco2,emissions_intensity_gco2_per_kwh\n" + (
        "United States,California,2024,246511.85,49221.58,199.67\n"  # 2 -> US-CA
        "United States,US Total,2024,4387271.46,1516289.87,345.61\n"  # 3 -> US
        "United States,Washington, D.C.,2024,523.43,82.75,158.09\n"  # 4 unquoted comma: one field too many
        '"United States","Washington, D.C.",2023,523.43,82.75,158.0\n'  # 5 -> US-DC
        "United States,Atlantis,2024,1,1,100\n"  # 6 unknown state
        "Canada,Ontario,2024,1,1,30\n"  # 7 not the US
        "United States,Puerto Rico,2016,0.0,0.0,\n"  # 8 blank intensity
    )
    with pytest.raises(SourceParseError) as err:
        stage(tmp_path, "ember_us_states", content)
    assert "f.csv" in str(err.value)
    content = content.replace("United States,Washington, D.C.,2024,523.43,82.75,158.09\n", "United States,Vermont,2024,2778.17,162.49,58.49\n")
    staged = stage(tmp_path, "ember_us_states", content)
    assert values(staged, "source_row", "zone", "zone_name", "gco2e_per_kwh") == [
        (2, "US-CA", "California", 199.67),
        (3, "US", "United States (total of Ember's state series)", 345.61),
        (4, "US-VT", "Vermont", 58.49),
        (5, "US-DC", "Washington, D.C.", 158.0),
    ]
    assert set(staged.frame.get_column("emission_scope")) == {"unspecified"}
    assert set(staged.frame.get_column("country_iso3")) == {"USA"}
    assert verdicts(staged) == reject_table("""
        6 | state | unknown_zone | Atlantis
        7 | country | unknown_zone | Canada
        8 | emissions_intensity_gco2_per_kwh | missing_value | -
    """)


def test_zone_table_is_strict(tmp_path: Path) -> None:
    path = tmp_path / "zones.csv"
    path.write_text("zone,iso3,name,kind\nGB,GBR,United Kingdom,country\nGB,GGG,Again,country\n", encoding="utf-8")
    with pytest.raises(SourceParseError, match=r"zones.csv, line 3: zone 'GB' is already listed on line 2"):
        read_zones(path)
    path.write_text("zone,iso3,name,kind\nWORLD,WLD,World,aggregate\n", encoding="utf-8")
    with pytest.raises(SourceParseError, match="line 2: aggregate 'WORLD' must have an empty iso3"):
        read_zones(path)
    zones = read_zones(Path(__file__).resolve().parents[2] / "sources" / "curated" / "zones.csv")
    assert zones.countries["GBR"] == ("GB", "United Kingdom") and zones.countries["XKX"][0] == "XK"
    assert zones.aggregates["World"] == "WORLD" and zones.aggregates["North America"] == "NORTH_AMERICA"
    assert len(zones.countries) == 209 and len(zones.aggregates) == 13


# --- NESO CSV ----------------------------------------------------------------------------------

NESO_HEADER = "from,to,forecast,actual,index\n"


def test_neso_csv_quarantine(tmp_path: Path) -> None:
    content = NESO_HEADER + (
        "2023-01-26 12:30:00+00:00,2023-01-26 13:00:00+00:00,150,148.0,moderate\n"  # 2 ok: both rows
        "2023-01-26 13:00:00+00:00,2023-01-26 13:30:00+00:00,151,,moderate\n"  # 3 blank actual
        "2023-01-31 01:00:00+00:00,2023-01-31 01:30:00+00:00,89,0.0,very low\n"  # 4 zero actual
        "2023-01-31 01:30:00+00:00,2023-01-31 02:00:00+00:00,x9,90.0,low\n"  # 5 unreadable forecast
        "2023-01-26 12:30:00+00:00,2023-01-26 13:00:00+00:00,150,148.0,moderate\n"  # 6 duplicate of line 2
        "2023-02-01 00:30:00+00:00,2023-02-01 00:00:00+00:00,100,99.0,low\n"  # 7 ends before it starts
        "2023-02-01 01:00:00+00:00,2023-02-01 01:30:00+00:00,100,-3.0,low\n"  # 8 negative actual
        "2023-02-01 01:30:00+00:00,2023-02-01 02:00:00+00:00,,95.0,low\n"  # 9 blank forecast
        "2023-02-01 02:00:00+00:00,2023-02-01 02:30:00+00:00,101,97.0,low\n"  # 10 ok
    )
    staged = stage(tmp_path, "neso_csv", content)
    assert values(staged, "source_row", "signal", "gco2e_per_kwh") == [
        (10, "actual", 97.0),
        (10, "forecast", 101.0),
        (2, "actual", 148.0),
        (2, "forecast", 150.0),
        (3, "forecast", 151.0),
        (4, "forecast", 89.0),
        (8, "forecast", 100.0),
        (9, "actual", 95.0),
    ]
    assert set(staged.frame.get_column("zone")) == {"GB"} and set(staged.frame.get_column("emission_scope")) == {"direct"}
    assert verdicts(staged) == reject_table("""
        3 | actual | missing_value | -
        4 | actual | zero_actual | 0.0
        5 | forecast | parse | x9
        6 | - | unique_key | actual/direct
        6 | - | unique_key | forecast/direct
        7 | - | period_end_after_start | actual/direct
        7 | - | period_end_after_start | forecast/direct
        7 | - | period_matches_resolution | actual/direct
        7 | - | period_matches_resolution | forecast/direct
        8 | gco2e_per_kwh | greater_than_or_equal_to(0) | -3.0
        9 | forecast | missing_value | -
    """)
    why = reasons(staged)
    assert why[(4, "zero_actual")] == (
        "0 gCO2/kWh actual is an API glitch (forecast is 89, index 'very low'); treated as missing, the forecast row is kept"
    )
    assert why[(3, "missing_value")] == "actual is blank: NESO published no outturn for this half-hour; the forecast row is kept"
    assert why[(7, "period_end_after_start")] == "period_end must be later than period_start"


def test_neso_csv_without_its_columns_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(SourceParseError, match=r"header lacks column\(s\) \['actual'\]"):
        stage(tmp_path, "neso_csv", "from,to,forecast\n2023-01-01 00:00:00+00:00,2023-01-01 00:30:00+00:00,1\n")


# --- Carbon Intensity API JSON ------------------------------------------------------------------


def _ci_record(start: str, end: str, forecast: Any, actual: Any, index: str = "low") -> dict[str, Any]:
    return {"from": start, "to": end, "intensity": {"forecast": forecast, "actual": actual, "index": index}}


def test_uk_ci_json_quarantine(tmp_path: Path) -> None:
    payload = {
        "data": [
            _ci_record("2023-03-14T12:00Z", "2023-03-14T12:30Z", 99, 101),  # 1 ok
            _ci_record("2023-03-14T12:30Z", "2023-03-14T13:00Z", 100, None),  # 2 no actual yet: forecast only, no reject
            _ci_record("2023-03-14T13:00Z", "2023-03-14T13:30Z", 95, 0, "very low"),  # 3 zero actual
            _ci_record("2023-03-14T13:30Z", "2023-03-14T14:00Z", None, 90),  # 4 no forecast
            "not a record",  # 5
            _ci_record("yesterday", "2023-03-14T14:30Z", 90, 90),  # 6 unreadable time
            _ci_record("2023-03-14T14:30", "2023-03-14T15:00", 90, 90),  # 7 no offset
            _ci_record("2023-03-14T15:00Z", "2023-03-14T15:30Z", "90", 90),  # 8 forecast as text
            _ci_record("2023-03-14T15:30Z", "2023-03-14T16:00Z", -4, 80),  # 9 negative forecast
            {"from": "2023-03-14T16:00Z", "to": "2023-03-14T16:30Z"},  # 10 no intensity object
            _ci_record("2023-03-14T17:30+01:00", "2023-03-14T18:00+01:00", 70, 71),  # 11 offset -> 16:30Z
        ]
    }
    staged = stage(tmp_path, "uk_ci_json", json.dumps(payload), {"fetched_at": "2023-03-15T12:01:00Z"}, name="r.json")
    assert values(staged, "source_row", "signal", "period_start", "gco2e_per_kwh") == [
        (1, "actual", utc(2023, 3, 14, 12), 101.0),
        (1, "forecast", utc(2023, 3, 14, 12), 99.0),
        (11, "actual", utc(2023, 3, 14, 16, 30), 71.0),
        (11, "forecast", utc(2023, 3, 14, 16, 30), 70.0),
        (2, "forecast", utc(2023, 3, 14, 12, 30), 100.0),
        (3, "forecast", utc(2023, 3, 14, 13), 95.0),
        (4, "actual", utc(2023, 3, 14, 13, 30), 90.0),
        (9, "actual", utc(2023, 3, 14, 15, 30), 80.0),
    ]
    assert set(staged.frame.get_column("fetched_at")) == {utc(2023, 3, 15, 12, 1)}
    assert verdicts(staged) == reject_table("""
        3 | intensity.actual | zero_actual | 0
        4 | intensity.forecast | missing_value | -
        5 | - | parse | not a record
        6 | from | parse | yesterday
        7 | from | parse | 2023-03-14T14:30
        8 | intensity.forecast | parse | 90
        9 | gco2e_per_kwh | greater_than_or_equal_to(0) | -4.0
        10 | intensity | parse | -
    """)
    why = reasons(staged)
    assert why[(3, "zero_actual")].startswith("0 gCO2/kWh actual is an API glitch (forecast is 95, index 'very low')")
    assert why[(7, "parse")] == "from: '2023-03-14T14:30' has no UTC offset, so the instant is ambiguous"


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b"<html>rate limited</html>", "not valid JSON"),
        (b"", "not valid JSON"),
        (b'{"data": {"from": "x"}}', 'expected a JSON object with a "data" list'),
        (b"[1, 2]", 'expected a JSON object with a "data" list'),
    ],
)
def test_uk_ci_json_unreadable_files_raise(tmp_path: Path, content: bytes, message: str) -> None:
    with pytest.raises(SourceParseError, match=message) as err:
        stage(tmp_path, "uk_ci_json", content, {"fetched_at": "2023-03-15T12:01:00Z"}, name="bad.json")
    assert err.value.path.endswith("bad.json")


def test_uk_ci_payload_core_takes_a_decoded_object() -> None:
    payload = {"data": [_ci_record("2024-05-01T00:00Z", "2024-05-01T00:30Z", 120, None)]}
    parsed = parse_uk_ci_payload(payload, "https://api.carbonintensity.org.uk/intensity", {"fetched_at": "2024-05-01T00:05:00+00:00"})
    assert parsed.rejects == []
    assert parsed.frame.select("zone", "signal", "gco2e_per_kwh", "source_row", "fetched_at").rows() == [
        ("GB", "forecast", 120.0, 1, utc(2024, 5, 1, 0, 5))
    ]
    regional = parse_uk_ci_payload(payload, "live", {"fetched_at": "2024-05-01T00:05:00Z", "zone": "GB-SCOTLAND", "zone_name": "North Scotland"})
    assert regional.frame.select("zone", "zone_name").row(0) == ("GB-SCOTLAND", "North Scotland")
    with pytest.raises(SourceParseError, match=r"^live: expected a JSON object"):
        parse_uk_ci_payload({"error": "x"}, "live", {"fetched_at": "2024-05-01T00:05:00Z"})
    with pytest.raises(ManifestError, match="options.fetched_at"):
        parse_uk_ci_payload(payload, "live", {})


# --- Electricity Maps ---------------------------------------------------------------------------


def _em_record(when: str, value: Any, estimated: Any = False, factor: Any = "lifecycle", **extra: Any) -> dict[str, Any]:
    return {"zone": "US-MIDW-MISO", "carbonIntensity": value, "datetime": when, "emissionFactorType": factor, "isEstimated": estimated, **extra}


def test_electricitymaps_json_quarantine(tmp_path: Path) -> None:
    payload = {
        "zone": "US-MIDW-MISO",
        "history": [
            _em_record("2024-11-30T06:00:00.000Z", 501, True, estimationMethod="TIME_SLICER_AVERAGE"),  # 1 ok
            _em_record("2024-11-30T07:00:00.000Z", None),  # 2 no value
            _em_record("2024-11-30T08:00:00.000Z", 416, factor="marginal"),  # 3 unknown factor type
            _em_record("2024-11-30T09:00:00.000Z", 419, estimated="yes"),  # 4 not a boolean
            _em_record("30/11/2024 10:00", 431),  # 5 unreadable time
            _em_record("2024-11-30T06:00:00.000Z", 500),  # 6 duplicate of 1
            _em_record("2024-11-30T06:00:00.000Z", 380, factor="direct"),  # 7 ok: another scope
            [1, 2],  # 8 not a record
            _em_record("2024-11-30T11:00:00.000Z", 3000),  # 9 above 2000
        ],
    }
    options = {"fetched_at": "2024-12-01T05:44:26Z", "zone_name": "MISO", "country_iso3": "USA"}
    staged = stage(tmp_path, "electricitymaps_json", json.dumps(payload), options, name="h.json")
    assert values(staged, "source_row", "zone", "emission_scope", "is_estimated", "gco2e_per_kwh") == [
        (1, "US-MIDW-MISO", "lifecycle", True, 501.0),
        (7, "US-MIDW-MISO", "direct", False, 380.0),
    ]
    row = staged.frame.filter(pl.col("source_row") == 1).row(0, named=True)
    assert (row["period_start"], row["period_end"], row["resolution"], row["signal"], row["zone_name"], row["country_iso3"]) == (
        utc(2024, 11, 30, 6), utc(2024, 11, 30, 7), "PT1H", "actual", "MISO", "USA",
    )
    assert verdicts(staged) == reject_table("""
        2 | carbonIntensity | missing_value | -
        3 | emissionFactorType | parse | marginal
        4 | isEstimated | parse | yes
        5 | datetime | parse | 30/11/2024 10:00
        6 | - | unique_key | actual/lifecycle
        8 | - | parse | [1, 2]
        9 | gco2e_per_kwh | less_than_or_equal_to(2000) | 3000.0
    """)


def test_electricitymaps_payload_core_and_bad_shapes() -> None:
    record = {"carbonIntensity": 300, "datetime": "2024-01-01T00:00:00Z"}
    parsed = parse_electricitymaps_payload({"zone": "DE", "history": [record]}, "live", {"fetched_at": "2024-01-01T01:00:00Z", "emission_factor_type": "direct"})
    assert parsed.frame.select("zone", "zone_name", "emission_scope", "is_estimated").row(0) == ("DE", "DE", "direct", None)
    unspecified = parse_electricitymaps_payload({"zone": "DE", "history": [record]}, "live", {"fetched_at": "2024-01-01T01:00:00Z"})
    assert unspecified.frame.get_column("emission_scope").to_list() == ["unspecified"]
    for bad in ({"zone": "DE"}, {"history": "x"}, None, [record]):
        with pytest.raises(SourceParseError, match='"history" list'):
            parse_electricitymaps_payload(bad, "live", {"fetched_at": "2024-01-01T01:00:00Z"})


EM_HEADER = (
    "Datetime (UTC),Country,Zone Name,Zone Id,Carbon Intensity gCO\u2082eq/kWh (direct),Carbon Intensity gCO\u2082eq/kWh (LCA),"
    "Low Carbon Percentage,Renewable Percentage,Data Source,Data Estimated,Data Estimation Method\n"
)


def test_electricitymaps_csv_quarantine(tmp_path: Path) -> None:
    content = EM_HEADER + (
        "2023-01-01 00:00:00,Germany,Germany,DE,152.03,199.59,82.97,77.71,entsoe.eu,false,\n"  # 2 ok, two rows
        "2023-01-01 01:00:00,Germany,Germany,DE,,198.38,83.24,78.35,entsoe.eu,false,\n"  # 3 blank direct
        "2023-01-01 02:00:00,Germany,Germany,DE,150,197,83,78,entsoe.eu,maybe,\n"  # 4 unreadable flag
        "2023-01-01 03:00,Germany,Germany,DE,150,197,83,78,entsoe.eu,false,\n"  # 5 unreadable time
        "2023-01-01 04:00:00,Germany,Germany,DE,149,2100,83,78,entsoe.eu,true,ESTIMATED_TIME_SLICER_AVERAGE\n"  # 6 LCA too high
        "2023-01-01 00:00:00,Germany,Germany,DE,152.03,199.59,82.97,77.71,entsoe.eu,false,\n"  # 7 duplicate of 2
        "2023-01-01 05:00:00,Germany,Germany,,150,197,83,78,entsoe.eu,false,\n"  # 8 blank zone
    )
    staged = stage(tmp_path, "electricitymaps_csv", content.encode("utf-8"), {"country_iso3": "DEU"})
    assert values(staged, "source_row", "emission_scope", "is_estimated", "gco2e_per_kwh") == [
        (2, "direct", False, 152.03),
        (2, "lifecycle", False, 199.59),
        (3, "lifecycle", False, 198.38),
        (6, "direct", True, 149.0),
    ]
    assert set(staged.frame.select("zone", "zone_name", "country_iso3", "resolution", "signal").rows()) == {("DE", "Germany", "DEU", "PT1H", "actual")}
    assert verdicts(staged) == reject_table("""
        3 | Carbon Intensity gCO₂eq/kWh (direct) | missing_value | -
        4 | Data Estimated | parse | maybe
        5 | Datetime (UTC) | parse | 2023-01-01 03:00
        6 | gco2e_per_kwh | less_than_or_equal_to(2000) | 2100.0
        7 | - | unique_key | actual/direct
        7 | - | unique_key | actual/lifecycle
        8 | Zone Id | missing_value | -
    """)
    assert reasons(staged)[(3, "missing_value")] == "Carbon Intensity gCO\u2082eq/kWh (direct) is blank: the hour's other row is kept"


def test_electricitymaps_csv_later_layout_and_missing_columns(tmp_path: Path) -> None:
    later = (
        "\ufeffDatetime (UTC),Country,Zone name,Zone id,Carbon intensity gCO\u2082eq/kWh (direct),"
        "Carbon intensity gCO\u2082eq/kWh (Life cycle),Carbon-free energy percentage (CFE%)\r\n"
        "2024-01-01 00:00:00,France,France,FR,20.5,40.25,95\r\n"
    )
    staged = stage(tmp_path, "electricitymaps_csv", later.encode("utf-8"))
    assert values(staged, "zone", "emission_scope", "gco2e_per_kwh", "is_estimated") == [("FR", "direct", 20.5, None), ("FR", "lifecycle", 40.25, None)]
    with pytest.raises(SourceParseError, match=r"lacks the Electricity Maps column\(s\) for \['lifecycle'\]"):
        stage(tmp_path, "electricitymaps_csv", "Datetime (UTC),Zone Id,Carbon Intensity gCO2eq/kWh (direct)\n2024-01-01 00:00:00,FR,20\n")


# --- EIA-930 ------------------------------------------------------------------------------------

EIA_OPTIONS = {"zone": "US-CAL-CISO-PROD", "zone_name": "CISO (production)", "country_iso3": "USA", "timestamp_marks": "hour_end"}
EIA_HEADER = "timestamp,WND,SUN,WAT,OIL,NG,COL,NUC,OTH,avg_CI\n"


def test_eia930_csv_quarantine(tmp_path: Path) -> None:
    content = EIA_HEADER + (
        "2022-01-05 09:00:00+00:00,3130.0,1367.0,2304.0,44.0,6764.0,19.0,2265.0,189.0,222.3\n"  # 2 ok
        "2022-01-05 10:00:00+00:00,,,,,,,,,\n"  # 3 every value blank
        "2022-01-05 11:00:00+00:00,3013.0,0.0,2723.0,42.0,8603.0,19.0,2265.0,1159.0,\n"  # 4 blank avg_CI only
        "2022-01-05 12:00,3013.0,0.0,2723.0,42.0,8603.0,19.0,2265.0,1159.0,260.9\n"  # 5 unreadable time
        "2022-01-05 13:00:00+00:00,3013.0,0.0,2723.0,42.0,8603.0,19.0,2265.0,1159.0,n/a\n"  # 6 unreadable value
        "2022-01-05 09:00:00+00:00,3130.0,1367.0,2304.0,44.0,6764.0,19.0,2265.0,189.0,222.3\n"  # 7 duplicate of 2
        "2022-01-05 14:00:00+00:00,3013.0,0.0,2723.0,42.0,8603.0,19.0,2265.0,1159.0,250.5\n"  # 8 ok
    )
    staged = stage(tmp_path, "eia930_csv", content, EIA_OPTIONS)
    assert values(staged, "source_row", "period_start", "period_end", "gco2e_per_kwh") == [
        (2, utc(2022, 1, 5, 8), utc(2022, 1, 5, 9), 222.3),
        (8, utc(2022, 1, 5, 13), utc(2022, 1, 5, 14), 250.5),
    ]
    assert set(staged.frame.select("zone", "emission_scope", "signal", "resolution").rows()) == {("US-CAL-CISO-PROD", "lifecycle", "actual", "PT1H")}
    assert verdicts(staged) == reject_table("""
        3 | avg_CI | missing_value | -
        4 | avg_CI | missing_value | -
        5 | timestamp | parse | 2022-01-05 12:00
        6 | avg_CI | parse | n/a
        7 | - | unique_key | actual/lifecycle
    """)
    why = reasons(staged)
    assert why[(3, "missing_value")] == "every value of the hour 2022-01-05 10:00:00+00:00 is blank: the file has no data for it"
    assert why[(4, "missing_value")] == "avg_CI is blank for the hour 2022-01-05 11:00:00+00:00 although the generation mix is given"
    hour_start = stage(tmp_path, "eia930_csv", content, {**EIA_OPTIONS, "timestamp_marks": "hour_start"})
    assert hour_start.frame.sort("source_row").get_column("period_start").to_list() == [utc(2022, 1, 5, 9), utc(2022, 1, 5, 14)]


def test_eia930_options_are_required(tmp_path: Path) -> None:
    with pytest.raises(ManifestError, match="timestamp_marks must be one of"):
        stage(tmp_path, "eia930_csv", EIA_HEADER, {**EIA_OPTIONS, "timestamp_marks": "middle"})
    with pytest.raises(ManifestError, match="options.zone "):
        stage(tmp_path, "eia930_csv", EIA_HEADER, {k: v for k, v in EIA_OPTIONS.items() if k != "zone"})


# --- The model's own checks --------------------------------------------------------------------


def _model_rows(*rows: tuple[str, str, dt.datetime, dt.datetime]) -> pl.DataFrame:
    """Rows of the model from (signal, resolution, period_start, period_end); the curated columns null."""
    n = len(rows)
    return conform(GridIntensity, pl.DataFrame(
        {
            "zone": ["GB"] * n, "zone_name": ["Great Britain"] * n, "country_iso3": ["GBR"] * n,
            "period_start": [r[2] for r in rows], "period_end": [r[3] for r in rows], "resolution": [r[1] for r in rows],
            "gco2e_per_kwh": [100.0] * n, "signal": [r[0] for r in rows], "emission_scope": ["direct"] * n,
            "is_estimated": [None] * n, "fetched_at": [utc(2026, 1, 1)] * n, "source_id": ["s"] * n, "source_file": ["f"] * n,
            "source_row": list(range(1, n + 1)),
        },
        schema_overrides={"is_estimated": pl.Boolean},
    ))


def test_model_checks_pass_and_fail() -> None:
    good = _model_rows(
        ("annual_average", "P1Y", utc(2024, 1, 1), utc(2025, 1, 1)),
        ("monthly_average", "P1M", utc(2024, 2, 1), utc(2024, 3, 1)),
        ("forecast", "PT30M", utc(2024, 2, 1), utc(2024, 2, 1, 0, 30)),
        ("actual", "PT30M", utc(2024, 2, 1), utc(2024, 2, 1, 0, 30)),
        ("marginal", "PT1H", utc(2024, 2, 1), utc(2024, 2, 1, 1)),
    )
    GridIntensity.validate(good)
    bad = _model_rows(
        ("annual_average", "PT1H", utc(2024, 1, 1), utc(2024, 1, 1, 1)),  # 1 an annual average must be P1Y
        ("monthly_average", "P1M", utc(2024, 2, 1), utc(2024, 3, 2)),  # 2 not one month long
        ("actual", "PT30M", utc(2024, 2, 1), utc(2024, 2, 1)),  # 3 empty period
        ("actual", "PT30M", utc(2024, 2, 1, 1), utc(2024, 2, 1, 1, 30)),  # 4 ok
        ("actual", "PT30M", utc(2024, 2, 1, 1), utc(2024, 2, 1, 1, 30)),  # 5 repeat of 4
    )
    valid, rejects = split_valid(GridIntensity, bad, file="f")
    assert valid.get_column("source_row").to_list() == [4]
    assert sorted((r.source_row, r.check_name) for r in rejects) == [
        (1, "signal_matches_resolution"),
        (2, "period_matches_resolution"),
        (3, "period_end_after_start"),
        (3, "period_matches_resolution"),
        (5, "unique_key"),
    ]


# --- The shipped files ------------------------------------------------------------------------------

GRID_ENTRIES = {e.id: e for e in load_manifest() if e.manifest_file == "manifest/grid.toml"}


def _stage_entry(entry: SourceEntry) -> Staged:
    return validate_parsed(TABLE, GridIntensity, [(entry, parse_entry(entry, PARSERS[entry.kind]))], run_id="test")


@pytest.fixture(scope="module")
def shipped() -> dict[str, Staged]:
    return {sid: _stage_entry(e) for sid, e in GRID_ENTRIES.items() if e.table == TABLE}


def _value(frame: pl.DataFrame, **where: Any) -> float:
    hits = frame.filter(pl.all_horizontal([pl.col(k) == v for k, v in where.items()]))
    assert hits.height == 1, (where, hits)
    return hits.item(0, "gco2e_per_kwh")


def test_ember_shipped_values(shipped: dict[str, Staged]) -> None:
    yearly = shipped["ember_yearly"]
    assert yearly.frame.height == 5372 and yearly.rejects.height == 0
    y2024 = {"period_start": utc(2024, 1, 1), "signal": "annual_average"}
    expected = {"GB": 210.89, "WORLD": 472.99, "EU": 213.31, "US": 383.55, "FR": 44.18, "DE": 344.14, "IN": 708.32, "CN": 559.51}
    assert {zone: _value(yearly.frame, zone=zone, **y2024) for zone in expected} == expected
    assert yearly.frame.filter(pl.col("zone") == "GB").get_column("zone_name").unique().to_list() == ["United Kingdom"]
    monthly = shipped["ember_monthly"]
    assert monthly.frame.height == 10973 and monthly.rejects.height == 0
    assert monthly.frame.get_column("period_start").dt.day().unique().to_list() == [1]
    states = shipped["ember_us_states"]
    assert states.frame.height == 1256
    assert verdicts(states) == [(914, "emissions_intensity_gco2_per_kwh", "missing_value", None)]
    assert _value(states.frame, zone="US-CA", **y2024) == 199.67 and _value(states.frame, zone="US", **y2024) == 345.61
    assert states.frame.get_column("zone").n_unique() == 53


def test_neso_shipped_values(shipped: dict[str, Staged]) -> None:
    staged = shipped["neso_2023_national"]
    forecast = staged.frame.filter(pl.col("signal") == "forecast")
    actual = staged.frame.filter(pl.col("signal") == "actual")
    assert forecast.height == 17430 and actual.height == 17430 - 5 - 5
    assert actual.get_column("gco2e_per_kwh").mean() == pytest.approx(152.17, abs=0.01)
    assert (actual.get_column("gco2e_per_kwh").min(), actual.get_column("gco2e_per_kwh").max()) == (26.0, 309.0)
    assert (forecast.get_column("gco2e_per_kwh").min(), forecast.get_column("gco2e_per_kwh").max()) == (23.0, 346.0)
    assert verdicts(staged) == [(line, "actual", "missing_value", None) for line in range(1230, 1235)] + [
        (line, "actual", "zero_actual", "0.0") for line in (1445, 7558, 7559, 7560, 7561)
    ]
    starts = forecast.get_column("period_start")
    assert (starts.min(), starts.max()) == (utc(2022, 12, 31, 23, 30), utc(2023, 12, 31, 23, 30))
    # Times are UTC, so both UK clock-change days have 48 half-hours.
    for day in (dt.date(2023, 3, 26), dt.date(2023, 10, 29)):
        assert forecast.filter(pl.col("period_start").dt.date() == day).height == 48
    # The upstream gap is kept as a gap: 91 half-hours, none invented.
    gap = forecast.filter(pl.col("period_start").is_between(utc(2023, 10, 20, 22), utc(2023, 10, 22, 19)))
    assert gap.height == 0
    span = int((starts.max() - starts.min()) / dt.timedelta(minutes=30)) + 1
    assert span - forecast.height == 91


def test_uk_api_shipped_values(shipped: dict[str, Staged]) -> None:
    pt24h = shipped["uk_ci_national_pt24h_20230315"].frame
    assert pt24h.filter(pl.col("signal") == "forecast").height == 48
    assert pt24h.filter(pl.col("signal") == "actual").height == 47
    assert _value(pt24h, signal="actual", period_start=utc(2023, 3, 14, 12)) == 101.0
    assert set(pt24h.get_column("fetched_at")) == {utc(2023, 3, 15, 12, 1)}
    fw48h = shipped["uk_ci_national_fw48h_20230315"]
    assert fw48h.frame.get_column("signal").to_list() == ["forecast"] * 96 and fw48h.rejects.height == 0


def test_electricitymaps_shipped_values(shipped: dict[str, Staged]) -> None:
    expected = {  # zone: (mean direct, mean LCA, estimated hours), from SOURCE.md
        "electricitymaps_de_2023_hourly": ("DE", 329.26, 395.09, 3),
        "electricitymaps_fr_2023_hourly": ("FR", 30.43, 49.37, 5),
        "electricitymaps_us_cal_ciso_2023_hourly": ("US-CAL-CISO", 193.46, 261.16, 3),
        "electricitymaps_in_we_2023_hourly": ("IN-WE", 691.53, 749.59, 8760),
    }
    for source_id, (zone, direct, lca, estimated) in expected.items():
        staged = shipped[source_id]
        assert staged.rejects.height == 0
        for scope, mean in (("direct", direct), ("lifecycle", lca)):
            rows = staged.frame.filter(pl.col("emission_scope") == scope)
            assert rows.height == 8760 and set(rows.get_column("zone")) == {zone}
            assert rows.get_column("gco2e_per_kwh").mean() == pytest.approx(mean, abs=0.01), (source_id, scope)
            assert rows.get_column("is_estimated").sum() == estimated
    recorded = shipped["electricitymaps_history_us_midw_miso_20241130"].frame
    assert recorded.height == 24 and recorded.get_column("is_estimated").sum() == 8
    assert _value(recorded, period_start=utc(2024, 11, 30, 6)) == 501.0
    assert set(recorded.get_column("emission_scope")) == {"lifecycle"}


def test_eia930_shipped_values(shipped: dict[str, Staged]) -> None:
    staged = shipped["eia930_ciso_2022_hourly"]
    values_ = staged.frame.get_column("gco2e_per_kwh")
    assert staged.frame.height == 8757
    assert values_.mean() == pytest.approx(256.19, abs=0.01)
    assert (round(values_.min(), 2), round(values_.max(), 2)) == (74.10, 449.03)
    assert verdicts(staged) == [(line, "avg_CI", "missing_value", None) for line in (108, 3284, 3932)]
    # hour-ending: the row stamped 2022-01-01 00:00 covers the last hour of 2021.
    assert staged.frame.get_column("period_start").min() == utc(2021, 12, 31, 23)


def test_time_shifted_fixture_is_not_staged() -> None:
    """The 2024-12-01 response is the 2024-11-30 one moved by a day, so it is registered but not loaded."""
    entry = GRID_ENTRIES["electricitymaps_history_us_midw_miso_20241201"]
    assert entry.table != TABLE and entry.status == "derived"
    first = json.loads(GRID_ENTRIES["electricitymaps_history_us_midw_miso_20241130"].verified_file().read_text())["history"]
    second = json.loads(entry.verified_file().read_text())["history"]
    shifted = first[1:] + first[:1]
    assert [r["carbonIntensity"] for r in second] == [r["carbonIntensity"] for r in shifted]
    assert [r["createdAt"] for r in second] == [r["createdAt"] for r in shifted]


def test_grid_manifest_is_consistent() -> None:
    staged_kinds = {e.kind for e in GRID_ENTRIES.values() if e.table == TABLE}
    assert staged_kinds == set(PARSERS)
    for entry in GRID_ENTRIES.values():
        if entry.kind == "curated_marginal_factors":  # typed in from the sources after the downloads
            assert entry.retrieved_on == dt.date(2026, 12, 3) and entry.options["fetched_at"] == entry.retrieved_on
            continue
        assert entry.retrieved_on == dt.date(2026, 11, 29)
        if entry.kind in ("uk_ci_json", "electricitymaps_json"):
            assert isinstance(entry.options["fetched_at"], dt.datetime), entry.id  # a capture time
        elif entry.kind != "zones":
            assert entry.options["fetched_at"] == entry.retrieved_on, entry.id  # downloaded: retrieved_on
    zones = [e for e in GRID_ENTRIES.values() if e.kind == "zones"]
    assert [(e.path, e.table) for e in zones] == [("curated/zones.csv", "reference.zones")]


# --- The asset --------------------------------------------------------------------------------------


def test_timestamps_come_back_as_utc() -> None:
    """A UTC timestamp written to DuckDB reads back through open_readonly + query_pl as tz 'UTC'."""
    import tempfile

    import duckdb

    from pipelines.warehouse.queries import query_pl

    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "tz.duckdb"
        with duckdb.connect(str(path)) as con:
            con.execute("create table t as select timestamptz '2024-01-01 00:00:00+00' as ts")
        with open_readonly(path) as con:
            assert query_pl(con, "select ts from t").schema["ts"] == pl.Datetime("us", "UTC")


def test_materialise_grid_intensity(tmp_path: Path) -> None:
    path = tmp_path / "wh.duckdb"
    result = dg.materialize([sources, grid_intensity], resources={"warehouse": Warehouse(path=str(path))})
    assert result.success
    meta = result.asset_materializations_for_node("staging__grid_intensity")[0].metadata
    assert meta["dagster/row_count"].value == 131503 + 3  # the series rows + 3 curated marginal factors
    assert "| DE | actual | direct | PT1H | 8760 | 2023-01-01 00:00 | 2023-12-31 23:00 | 329.26 |" in meta["rows_by_zone"].value
    with open_readonly(path) as con:
        counts = dict(
            ((zone, source), n)
            for zone, source, n in con.execute(
                "select zone, source_id, count(*) from staging.grid_intensity group by all"
            ).fetchall()
        )
        rejected = con.execute(
            "select source_id, count(*) from quarantine.rejected_rows where table_name = ? group by all order by 1", [TABLE]
        ).fetchall()
        ordered = con.execute("select zone, period_start from staging.grid_intensity limit 2").fetchall()
        utc_hours = con.execute(
            "select count(*) from staging.grid_intensity where source_id = 'neso_2023_national' and signal = 'forecast' "
            "and timezone('UTC', period_start)::date = date '2023-03-26'"
        ).fetchone()[0]
    assert counts[("GB", "neso_2023_national")] == 34850
    assert counts[("GB", "uk_ci_national_pt24h_20230315")] == 95
    assert counts[("GB", "uk_ci_national_fw48h_20230315")] == 96
    assert counts[("GB", "ember_yearly")] == 25
    assert counts[("DE", "electricitymaps_de_2023_hourly")] == 17520
    assert counts[("IN-WE", "electricitymaps_in_we_2023_hourly")] == 17520
    assert counts[("US-CAL-CISO", "electricitymaps_us_cal_ciso_2023_hourly")] == 17520
    assert counts[("US-CAL-CISO-PROD", "eia930_ciso_2022_hourly")] == 8757
    assert counts[("US-MIDW-MISO", "electricitymaps_history_us_midw_miso_20241130")] == 24
    assert ("US-MIDW-MISO", "electricitymaps_history_us_midw_miso_20241201") not in counts
    assert rejected == [("eia930_ciso_2022_hourly", 3), ("ember_us_states", 1), ("neso_2023_national", 10)]
    assert ordered[0][0] == "AE"  # sorted by zone first
    assert utc_hours == 48


def test_grid_intensity_blocking_checks_pass(tmp_path: Path) -> None:
    result = dg.materialize(
        [sources, grid_intensity],
        resources={"warehouse": Warehouse(path=str(tmp_path / "wh.duckdb"))},
        raise_on_error=False,
    )
    checks = {(e.asset_key.path[-1], e.check_name): e.passed for e in result.get_asset_check_evaluations()}
    assert checks == {("sources", "pandera_schema"): True, ("grid_intensity", "pandera_schema"): True,
                      ("grid_intensity", "source_ids_join"): True}
    assert result.success
