"""The fleet benchmark's generator and manifest on a tiny fleet (3 logs x 200 samples).

No timing is asserted here, and the pipeline is not run; ``make bench`` measures the fleet.
"""

from __future__ import annotations

import datetime as dt
import json
import re
import subprocess
import sys
from pathlib import Path

import duckdb
import polars as pl
import pytest

from bench import catalog, fleet, fleet_sources
from bench.nvidia_smi_log import na_rows
from pipelines.ingest.digests import sha256_file
from pipelines.ingest.manifest import entries_for, load_manifest, verify
from pipelines.ingest.parsers.registry import SAMPLED_PARSERS
from pipelines.paths import PROJECT_ROOT, SOURCES_DIR, WAREHOUSE_ENV
from pipelines.warehouse import lake

LOGS = 3
SAMPLES = 200


@pytest.fixture
def tiny_fleet(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, list[fleet_sources.FleetLog]]:
    """A sources folder holding a 3-log fleet, all of it in the manifest."""
    # the sha256 cache goes beside the warehouse: keep it out of the checkout
    monkeypatch.setenv(WAREHOUSE_ENV, str(tmp_path / "warehouse" / "edge_carbon.duckdb"))
    directory = fleet_sources.cache_dir(LOGS, SAMPLES, tmp_path / "out")
    logs = fleet_sources.ensure_fleet(directory, LOGS, SAMPLES)
    sources = fleet_sources.make_sources(tmp_path, directory)
    fleet_sources.write_manifest(sources, logs, LOGS)
    return sources, logs


def fleet_entries(sources: Path) -> list:
    return [e for e in entries_for("staging.power_samples", load_manifest(sources)) if e.manifest_file == "manifest/fleet.toml"]


def test_manifest_lists_every_log_with_its_sha256(tiny_fleet: tuple[Path, list[fleet_sources.FleetLog]]) -> None:
    sources, logs = tiny_fleet
    entries = fleet_entries(sources)
    assert [e.id for e in entries] == [log.id for log in logs] == ["fleet_00001", "fleet_00002", "fleet_00003"]
    assert all(re.fullmatch(r"[A-Za-z0-9_]+", e.id) for e in entries)
    assert len({e.sha256 for e in entries}) == LOGS  # different seeds, different logs
    for entry in entries:
        assert entry.file.is_file() and entry.file.parent.name == fleet_sources.FLEET_FOLDER
        assert entry.sha256 == sha256_file(entry.file)
        verify(entry)  # the pipeline's own check
        assert entry.kind == "nvidia_smi" and entry.status in ("derived", "assumed")
        assert entry.url.startswith("http")
        assert entry.options["device_id"] == fleet_sources.DEVICE_ID and entry.options["run_id"] == entry.id
        assert entry.options["timezone"] == "UTC" and entry.options["is_synthetic"] is True


def test_shipped_sources_are_all_there(tiny_fleet: tuple[Path, list[fleet_sources.FleetLog]]) -> None:
    sources, _ = tiny_fleet
    shipped = load_manifest(SOURCES_DIR)
    ours = load_manifest(sources)
    assert len(ours) == len(shipped) + LOGS
    mine = {e.id: e for e in ours}
    for entry in shipped:
        assert mine[entry.id].sha256 == entry.sha256
        assert mine[entry.id].file.is_file()
    assert not (sources / "manifest").is_symlink()
    # every shipped subfolder but manifest/, not a dot file (sources/.manifest.lock: pipelines/ingest/manifest_lock.py)
    assert all((sources / child.name).is_symlink() for child in SOURCES_DIR.iterdir()
               if child.name != "manifest" and not child.name.startswith("."))


def test_one_log_parses_to_its_samples(tiny_fleet: tuple[Path, list[fleet_sources.FleetLog]]) -> None:
    sources, _ = tiny_fleet
    entry = fleet_entries(sources)[0]
    parsed = SAMPLED_PARSERS["nvidia_smi"](entry.verified_file(), entry.options)
    missing = len(set(na_rows(SAMPLES).tolist()))  # the [N/A] cells the generator writes
    assert parsed.frame.height == SAMPLES - missing
    assert len(parsed.rejects) == missing
    assert parsed.frame.get_column("run_id").unique().to_list() == [entry.id]


def test_device_is_a_shipped_device() -> None:
    specs = pl.read_csv(SOURCES_DIR / "curated" / "device_specs.csv", infer_schema_length=0)
    assert fleet_sources.DEVICE_ID in specs.get_column("device_id").to_list()


def test_manifest_grows_and_the_fleet_is_reused(tiny_fleet: tuple[Path, list[fleet_sources.FleetLog]], tmp_path: Path) -> None:
    sources, logs = tiny_fleet
    fleet_sources.write_manifest(sources, logs, 1)
    assert [e.id for e in fleet_entries(sources)] == ["fleet_00001"]
    fleet_sources.write_manifest(sources, logs, 2)
    assert [e.id for e in fleet_entries(sources)] == ["fleet_00001", "fleet_00002"]
    with pytest.raises(ValueError):
        fleet_sources.write_manifest(sources, logs, LOGS + 1)
    directory = fleet_sources.cache_dir(LOGS, SAMPLES, tmp_path / "out")
    stamps = {p.name: p.stat().st_mtime_ns for p in directory.glob("log_*.csv")}
    again = fleet_sources.ensure_fleet(directory, LOGS + 1, SAMPLES)  # one more log: only it is written
    assert again[:LOGS] == logs and again[LOGS].id == "fleet_00004"
    assert {p.name: p.stat().st_mtime_ns for p in directory.glob("log_*.csv") if p.name in stamps} == stamps
    assert fleet_sources.load_fleet(directory) == again


def test_steps() -> None:
    assert fleet.steps_for(2000) == [100, 500, 2000]
    assert fleet.steps_for(500) == [100, 500]
    assert fleet.steps_for(20) == [20]


FAKE_LAUNCH = """
import json, sys, types
from pipelines.ingest.manifest import load_manifest

class Outcome:
    def __init__(self, success):
        self.success, self.run_id, self.failures = success, "fake-run", [] if success else ["step: boom"]

def materialise(*, scope="all", logs=None, workers=1, skip_dashboards=False):
    registered = [e.id for e in load_manifest() if e.id.startswith("fleet_")]
    assert logs is None or set(logs) <= set(registered), (logs, registered)
    print("pipeline chatter on stdout")  # must not reach the protocol stream
    with open(sys.argv[2], "a") as calls:
        calls.write(json.dumps([scope, logs, len(registered), workers, skip_dashboards]) + "\\n")
    return Outcome(scope != sys.argv[3])

launch = types.ModuleType("pipelines.run.launch")
launch.materialise = materialise
sys.modules["pipelines.run.launch"] = launch
from bench.fleet import worker
sys.exit(worker(sys.argv[1]))
"""


@pytest.mark.parametrize("fail", ["", "downstream"])
def test_grow_worker_protocol(tiny_fleet: tuple[Path, list[fleet_sources.FleetLog]], tmp_path: Path, fail: str) -> None:
    """The grow worker against a stand-in ``materialise``: the order of its launches, the manifest
    it registers before each, and its stdout (progress lines, then one JSON object)."""
    sources, logs = tiny_fleet
    directory = fleet_sources.cache_dir(LOGS, SAMPLES, tmp_path / "out")
    calls = tmp_path / "calls.jsonl"
    args = {"mode": "grow", "fleet": str(directory), "steps": [1, 2], "repeats": 1}
    env = fleet.worker_env(sources, tmp_path / "run")
    proc = subprocess.run([sys.executable, "-c", FAKE_LAUNCH, json.dumps(args), str(calls), fail], cwd=PROJECT_ROOT, env=env,
                          capture_output=True, text=True, check=False, timeout=300)
    lines = proc.stdout.strip().splitlines()
    result = json.loads(lines[-1])
    assert not any("chatter" in line for line in lines)
    assert [json.loads(line) for line in calls.read_text().splitlines()] == [
        ["all", None, 1, 1, True],              # the warehouse built at the first step
        ["ingest", ["fleet_00002"], 2, 1, False],  # one log added at 1
        ["ingest", ["fleet_00003"], 3, 1, False],  # and at 2
        ["ingest", None, 3, 1, False],          # every log again
        ["downstream", None, 3, 1, False],
    ]
    if fail:
        assert proc.returncode == 1 and result == {"ok": False, "stage": "downstream refresh", "run_id": "fake-run",
                                                   "failures": ["step: boom"]}
        return
    assert proc.returncode == 0, proc.stderr
    assert result["ok"] and result["full_logs"] == 3
    assert [(m["logs"], len(m["seconds"])) for m in result["marginal"]] == [(1, 1), (2, 1)]
    assert len(result["full_seconds"]) == len(result["downstream_seconds"]) == 1


def test_catalog_commit_baseline_writes_the_same_rows() -> None:
    files = catalog.catalog_files(5)
    assert [f.partition_key for f in files] == [fleet_sources.log_id(n) for n in range(1, 6)]
    now = dt.datetime(2026, 1, 1, tzinfo=dt.UTC)
    tables = []
    for row_by_row in (False, True):
        con = duckdb.connect()
        if row_by_row:
            catalog.commit_row_by_row(con, files, now)
        else:
            lake.commit(con, fleet_sources.TABLE, files, replaces=[], now=now)
        tables.append(con.execute(f"select * from {lake.CATALOG} order by file").fetchall())  # noqa: S608 - constant
    assert tables[0] == tables[1] and len(tables[0]) == 5
    assert tables[0][0][-2:] == (now, None)
