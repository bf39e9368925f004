"""A failed build ends with what failed: the table, the column, the rule and a few failing rows
(with the scenario or source that fed them), not with stack traces."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pandera.polars as pa
import polars as pl
import pytest

from pipelines.cli import main
from pipelines.lib.checks import pandera_summary
from pipelines.paths import PROJECT_ROOT, SOURCES_DIR, SOURCES_ENV, WAREHOUSE_ENV
from schemas.marts import LifecycleCarbon
from schemas.meta import empty_frame

#: What a failed build's last lines may not show: a Python or Dagster stack trace.
TRACES = ("Traceback", "Stack Trace", 'File "')


def test_pandera_summary_names_table_column_rule_and_rows() -> None:
    row = {"scenario_id": "zero_grid", "device_class": "laptop", "horizon_years": 3.0, "embodied_kgco2e": 0.0,
           "operational_kgco2e": 0.0, "total_kgco2e": 0.0, "embodied_share": 0.0, "operational_share": 1.0, "embodied_rule": "x"}
    ok = {**row, "device_class": "phone", "total_kgco2e": 2.0, "embodied_share": 0.5, "operational_share": 0.5}
    frame = pl.concat([empty_frame(LifecycleCarbon), pl.DataFrame([row, ok], schema=empty_frame(LifecycleCarbon).schema)])
    with pytest.raises(pa.errors.SchemaErrors) as caught:
        LifecycleCarbon.validate(frame, lazy=True)
    assert pandera_summary("marts.lifecycle_carbon", LifecycleCarbon, frame, caught.value.failure_cases) == [
        "marts.lifecycle_carbon: 1 rule(s) of LifecycleCarbon fail on 1 row(s)",
        "  column total_kgco2e, rule greater_than(0) (must be > 0): 1 row(s)",
        "  failing rows of marts.lifecycle_carbon (1 of 1):",
        "    scenario_id=zero_grid, device_class=laptop, total_kgco2e=0",
    ]


def test_pandera_summary_caps_rules_and_rows_and_names_keys() -> None:
    """Many rules and rows: at most 5 of each, the rest counted; a repeated key names its columns."""
    rows = [{"scenario_id": f"s{i}", "device_class": "laptop", "horizon_years": -1.0, "embodied_kgco2e": -1.0,
             "operational_kgco2e": -1.0, "total_kgco2e": -2.0, "embodied_share": 2.0, "operational_share": 2.0, "embodied_rule": "x"}
            for i in range(7)]
    rows.append({**rows[0]})
    frame = pl.DataFrame(rows, schema=empty_frame(LifecycleCarbon).schema)
    with pytest.raises(pa.errors.SchemaErrors) as caught:
        LifecycleCarbon.validate(frame, lazy=True)
    lines = pandera_summary("marts.lifecycle_carbon", LifecycleCarbon, frame, caught.value.failure_cases)
    assert lines[0] == "marts.lifecycle_carbon: 8 rule(s) of LifecycleCarbon fail on 8 row(s)"
    assert lines[1] == "  column scenario_id, device_class, rule multiple_fields_uniqueness (duplicates another row): 2 row(s)"
    assert lines[6:8] == ["  ... and 3 more rule(s), in the check's metadata (sample)", "  failing rows of marts.lifecycle_carbon (5 of 8):"]
    assert lines[8] == ("    scenario_id=s0, device_class=laptop, horizon_years=-1, embodied_kgco2e=-1, operational_kgco2e=-1, "
                        "total_kgco2e=-2, embodied_share=2, operational_share=2")
    assert len(lines) == 13


@pytest.mark.slow  # a whole `edge-carbon run`, which stops at the marts' blocking checks
def test_a_failed_check_ends_the_cli_with_table_column_rule_and_a_row(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A scenario whose edge side emits nothing (a zero-carbon grid and a laptop with no footprint,
    each within its bounds): the lifecycle and fleet marts' pandera checks refuse its rows (a
    total of 0, an infinite ratio). The CLI's last 10 lines name the table, the column, the rule
    and a failing row with its scenario, and the last says how to fix it; no stack trace."""
    sources = tmp_path / "sources"
    shutil.copytree(SOURCES_DIR, sources)
    monkeypatch.setenv(SOURCES_ENV, str(sources))
    monkeypatch.chdir(tmp_path)
    assert main(["scenario", "new", "zero_grid", "--extends", "paper_text", "--set", "edge_grid_gco2e_per_kwh=0",
                 "--set", "laptop_embodied_kgco2e=0"]) == 0
    env = {**os.environ, SOURCES_ENV: str(sources), WAREHOUSE_ENV: str(tmp_path / "wh" / "edge_carbon.duckdb")}
    proc = subprocess.run([sys.executable, "-m", "pipelines.cli", "run", "--skip-dashboards"], cwd=PROJECT_ROOT, env=env,
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=900)
    assert proc.returncode == 1, proc.stdout[-3000:]
    last = proc.stdout.splitlines()[-10:]
    text = "\n".join(last)
    assert last[-1].startswith("fix: scenario zero_grid "), text  # the fix is the last line
    assert any(line.startswith("build failed after ") for line in proc.stdout.splitlines()), proc.stdout[-3000:]
    assert [t for t in TRACES if t in text] == [], text
    shown = [line.strip() for line in last]
    assert any(line.startswith("failing rows of marts.") for line in shown), text  # the table
    assert any(line.startswith("column ") and ", rule " in line for line in shown), text  # the column and the rule
    assert any(line.startswith("scenario_id=zero_grid, device_class=laptop") for line in shown), text  # a failing row
    assert not (tmp_path / "wh" / "edge_carbon.duckdb").exists()
