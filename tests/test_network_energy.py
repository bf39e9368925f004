"""staging.network_energy: curated literature values."""

from __future__ import annotations

from pathlib import Path

from pipelines.assets.network_energy import PARSERS, TABLE
from schemas.network_energy import NetworkEnergy
from tests.helpers import rejects_of, stage_text

HEADER = "factor_id,quantity,scope,value,unit,low,high,year,region,status,citation,citation_url,notes\n"


def test_bad_rows_are_quarantined_with_reasons(tmp_path: Path) -> None:
    content = HEADER + (
        "ok,radio_power,wifi_tx,1.74,W,,,2023,,primary,Study,https://example.org,\n"
        "neg,radio_power,wifi_rx,-1,W,,,2023,,primary,Study,https://example.org,\n"
        "txt,network_intensity,fixed,abc,kWh/GB,,,2020,,primary,Study,https://example.org,\n"
        "unit,network_intensity,fixed,0.03,W,,,2020,,primary,Study,https://example.org,\n"
    )
    staged = stage_text(
        tmp_path, "net.csv", content, parser=PARSERS["curated_network_energy"], kind="curated_network_energy", table=TABLE, model=NetworkEnergy
    )
    assert staged.frame.get_column("factor_id").to_list() == ["ok"]
    assert rejects_of(staged)[:2] == [
        (3, "value", "greater_than(0)", "-1.0"),
        (4, "value", "parse", "abc"),
    ][:2]
    row_check = staged.rejects.filter(staged.rejects["check_name"] == "unit_matches_quantity").row(0, named=True)
    assert (row_check["source_row"], row_check["column_name"]) == (5, None)
    assert '"unit":"W"' in row_check["value"] and row_check["reason"] == "failed check unit_matches_quantity"
