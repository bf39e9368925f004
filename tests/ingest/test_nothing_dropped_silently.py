"""Nothing a user adds is dropped in silence.

- ``register`` runs the build's row checks on a file before it writes anything: a log the build
  would keep nothing of (every timestamp running backwards, every reading at 1e9 W) and a
  scenario with a row out of its bounds are refused in one line; a log with one bad sample is
  registered with a one-line warning that counts it, and the build quarantines that sample.
- A registered log whose run reaches no mart is named, with the reason, by the marts' check and
  in the summary of ``edge-carbon run``.
- A scenario whose ``factor_ref`` finds no row (its log unregistered) fails the build in one
  line naming the scenario, the parameter and the series; the published warehouse is unchanged.

Every test works on a temporary copy of ``sources/`` (``$EDGE_CARBON_SOURCES``) and its own
warehouse (``$EDGE_CARBON_WAREHOUSE``).
"""

from __future__ import annotations

import hashlib
import shutil
from collections.abc import Iterator
from pathlib import Path

import duckdb
import pytest

from pipelines.cli import main
from pipelines.paths import SOURCES_DIR, SOURCES_ENV, WAREHOUSE_ENV

#: The shipped log of 2,437 samples the backwards, gigawatt and one-sample-back copies are made of.
GPU_LOG = "power/synthetic/table1_gpu_r3.csv"
M2_LOG = "power/synthetic/table1_laptop_r1.txt"
HEADER = "parameter,value,unit,low,high,distribution,status,factor_ref,reasoning\n"
GPU_OPTIONS = ["--kind", "nvidia_smi", "--option", "timezone=UTC", "--option", "device_id=nvidia-rtx-a5000",
               "--option", "workload=OPT-125M training, mine"]


def _logs(sources: Path) -> None:
    """Three copies of the shipped GPU log below sources/power/own/: backwards, at 1e9 W, one sample back."""
    head, *body = (sources / GPU_LOG).read_text(encoding="utf-8").splitlines()
    own = sources / "power" / "own"
    own.mkdir(parents=True, exist_ok=True)
    (own / "backwards.csv").write_text("\n".join([head, *body[::-1]]) + "\n", encoding="utf-8")
    giga = [", ".join([*line.split(", ")[:3], "1000000000.00 W"]) for line in body]
    (own / "gigawatt.csv").write_text("\n".join([head, *giga]) + "\n", encoding="utf-8")
    back = list(body)
    back[1200], back[1201] = back[1201], back[1200]  # line 1203 now steps back from line 1202
    (own / "one_back.csv").write_text("\n".join([head, *back]) + "\n", encoding="utf-8")
    shutil.copyfile(sources / M2_LOG, own / "m2_run.txt")
    (sources / "own").mkdir(exist_ok=True)
    (sources / "own" / "negative.csv").write_text(HEADER + "edge_hours_per_day,6,h/day,,,point,assumed,,x\n"
                                                           "laptop_train_power_w,-15,W,,,point,assumed,,my laptop\n", encoding="utf-8")


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A copy of the shipped sources with the user's files in it; the current directory."""
    sources = tmp_path / "sources"
    shutil.copytree(SOURCES_DIR, sources)
    _logs(sources)
    monkeypatch.setenv(SOURCES_ENV, str(sources))
    monkeypatch.setenv(WAREHOUSE_ENV, str(tmp_path / "wh" / "edge_carbon.duckdb"))
    monkeypatch.chdir(tmp_path)
    yield tmp_path


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _digests(root: Path) -> dict[str, str]:
    """Every file below ``root``, by path: its sha256 (but the manifest lock's, which git ignores)."""
    return {p.relative_to(root).as_posix(): _sha256(p) for p in sorted(root.rglob("*")) if p.is_file() and p.name != ".manifest.lock"}


def _register(capsys: pytest.CaptureFixture[str], argv: list[str]) -> tuple[int, str, str]:
    code = main(["register", *argv])
    out, err = capsys.readouterr()
    return code, out, err


REFUSED = {
    "timestamps all backwards": (
        ["sources/power/own/backwards.csv", "--id", "my_backwards", "--title", "backwards", *GPU_OPTIONS],
        "register: sources/power/own/backwards.csv, line 3, column timestamp: 2023-05-19T10:51:08.674000+00:00 steps back in "
        "time from 2023-05-19T10:51:08.774000+00:00 earlier in the log (channel gpu0); a clock change or a misordered line, so "
        "the reading's instant is unknown; the build would keep 1 of its 2,437 samples and integrate no run from them "
        "(duration_s: must be > 0); put the lines in time order, or drop the lines logged before the clock changed, then "
        "register it again; nothing was written",
    ),
    "1e9 W throughout": (
        ["sources/power/own/gigawatt.csv", "--id", "my_gigawatt", "--title", "gigawatt", *GPU_OPTIONS],
        "register: sources/power/own/gigawatt.csv, line 2, column power.draw [W]: the reading is 1e+09 W, above the plausible "
        "460 W (2 x the TDP of nvidia-rtx-a5000 (230 W)); the build would keep none of its 2,437 samples; check the unit of "
        "the power column (watts) and --option device_id (its TDP sets the bound), then register it again; nothing was written",
    ),
    "an idle baseline above the run's power": (
        ["sources/power/own/one_back.csv", "--id", "my_idle", "--title", "idle", *GPU_OPTIONS, "--option", "idle_baseline_w=1000"],
        "register: sources/power/own/one_back.csv: the build would integrate no run from its 2,437 samples (energy_j: must be > 0), "
        "and 1 of them would be quarantined; check the log's options (an idle_baseline_w at or above the run's mean power leaves "
        "no energy), then register it again; nothing was written",
    ),
    "a scenario with a negative power": (
        ["sources/own/negative.csv", "--id", "scenario_negative", "--kind", "scenario", "--title", "negative",
         "--option", "scenario_id=negative", "--option", "extends=paper_text"],
        "register: sources/own/negative.csv, line 3: laptop_train_power_w = -15 W is outside its bounds: laptop_train_power_w "
        "must be > 0 (scenario negative); fix the row, or remove it to inherit paper_text's value; nothing was written",
    ),
}


@pytest.mark.parametrize("case", sorted(REFUSED))
def test_register_refuses_what_the_build_would_keep_nothing_of_and_writes_nothing(
        case: str, project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from pipelines.cli import dagster_instance

    argv, line = REFUSED[case]
    before = _digests(project / "sources")
    code, out, err = _register(capsys, argv)
    assert (code, out, err) == (2, "", line + "\n")
    assert _digests(project / "sources") == before  # no manifest written, no file copied or changed
    with dagster_instance() as instance:  # nor a partition of the power logs
        assert argv[2] not in instance.get_dynamic_partitions("power_logs")


def test_register_warns_with_a_count_of_the_samples_the_build_will_quarantine(project: Path,
                                                                               capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = _register(capsys, ["sources/power/own/one_back.csv", "--id", "my_one_back", "--title", "one back", *GPU_OPTIONS])
    assert code == 0 and out.startswith("registered my_one_back in sources/manifest/local.toml")
    assert err == ("register: warning: sources/power/own/one_back.csv: the build will quarantine 1 of its 2,437 samples and "
                   "load the other 2,436 (e.g. line 1203, column timestamp: 2023-05-19T10:49:05.179000+00:00 steps back in time "
                   "from 2023-05-19T10:49:05.277000+00:00 earlier in the log (channel gpu0); a clock change or a misordered line, "
                   "so the reading's instant is unknown)\n")


def test_a_scenario_reference_to_a_missing_row_is_one_line_naming_it(tmp_path: Path) -> None:
    """Without a build: staging the scenario rows against a warehouse that lacks the series."""
    from pipelines.errors import UnresolvedRow
    from pipelines.ingest.scenarios import stage_scenarios
    from tests.helpers import entry_for

    con = duckdb.connect()
    con.execute("create schema staging")
    con.execute("create table staging.benchmark_series as select 'table1_laptop' as series_id, 15.0 as mean_power_w_mean, "
                "'logs' as source_id, 'power/x.txt' as source_file, cast(null as bigint) as source_row")
    parent = tmp_path / "parent.csv"
    parent.write_text(HEADER + "laptop_train_power_w,15,W,,,point,paper,,the paper\n", encoding="utf-8")
    mine = tmp_path / "mine.csv"
    mine.write_text(HEADER + "laptop_train_power_w,,W,,,point,primary,benchmark_series.series_id=my_m2pro.mean_power_w_mean,"
                             "my laptop\n", encoding="utf-8")
    entries = [entry_for(parent, kind="scenario", table="core.scenario_parameters", options={"scenario_id": "parent"}, source_id="p"),
               entry_for(mine, kind="scenario", table="core.scenario_parameters", options={"scenario_id": "mine", "extends": "parent"},
                         source_id="m")]
    with pytest.raises(UnresolvedRow) as raised:
        stage_scenarios(con, entries, run_id="run-1")
    assert str(raised.value) == (
        "sources/mine.csv, line 2: scenario mine, parameter laptop_train_power_w: factor_ref "
        "benchmark_series.series_id=my_m2pro.mean_power_w_mean finds no row (no single row with series_id = 'my_m2pro' and a "
        "mean_power_w_mean value in staging.benchmark_series); register the power log(s) of series my_m2pro (edge-carbon "
        "register ... --option series_id=my_m2pro) or point the reference at a registered series, or remove the row to inherit "
        "parent's value")


@pytest.mark.parametrize(("row", "says"), [
    ("horizon_years,-3,year,2,5,point,assumed,,my horizon\n", "parameter horizon_years: low <= value <= high"),  # outside its low-high
    ("horizon_years,three,year,,,point,assumed,,my horizon\n", "column value"),  # not a number
])
def test_a_scenario_row_the_contract_refuses_stops_the_build_instead_of_inheriting(tmp_path: Path, row: str, says: str) -> None:
    """A scenario row that fails to parse or fails its contract is never quarantined: leaving it out
    would give the scenario its parent's value (or no value) under the user's name."""
    from pipelines.errors import UnresolvedRow
    from pipelines.ingest.scenarios import stage_scenarios
    from tests.helpers import entry_for

    parent = tmp_path / "parent.csv"
    parent.write_text(HEADER + "horizon_years,3,year,2,5,point,paper,,the paper\n", encoding="utf-8")
    mine = tmp_path / "mine.csv"
    mine.write_text(HEADER + row, encoding="utf-8")
    entries = [entry_for(parent, kind="scenario", table="core.scenario_parameters", options={"scenario_id": "parent"}, source_id="p"),
               entry_for(mine, kind="scenario", table="core.scenario_parameters", options={"scenario_id": "mine", "extends": "parent"},
                         source_id="m")]
    with pytest.raises(UnresolvedRow) as raised:
        stage_scenarios(duckdb.connect(), entries, run_id="run-1")
    message = str(raised.value)
    assert message.startswith("sources/mine.csv, line 2: scenario mine") and "\n" not in message, message
    assert says in message and message.endswith("fix the row, or remove the row to inherit parent's value"), message


def test_a_log_that_reaches_no_mart_is_named_with_the_reason() -> None:
    """The query and its lines over a warehouse of four logs: one in a series, one without a
    series_id (one sample quarantined), one whose run was quarantined, one never ingested."""
    from pipelines.warehouse.reach import unreached_lines

    con = duckdb.connect()
    for schema in ("staging", "marts", "quarantine"):
        con.execute(f"create schema {schema}")
    con.execute("create table staging.sources as select * from (values "
                "('in_series', 'power/own/a.csv', 'manifest/local.toml', 'staging.power_samples'), "
                "('no_series', 'power/own/b.csv', 'manifest/local.toml', 'staging.power_samples'), "
                "('quarantined', 'power/own/c.csv', 'manifest/local.toml', 'staging.power_samples'), "
                "('per_run', 'power/own/d.csv', 'manifest/local.toml', 'staging.benchmark_runs')) "
                "as t(source_id, path, manifest_file, table_name)")
    con.execute("create table staging.benchmark_runs as select * from (values ('in_series', 'my_series'), ('no_series', null), "
                "('per_run', null)) as t(source_id, series_id)")
    con.execute("create table marts.training_energy as select 'my_series' as series_id")
    con.execute("create table quarantine.rejected_rows as select * from (values "
                "('staging.power_samples', 'no_series', 1203, 'time_step_back', 'timestamp: steps back'), "
                "('staging.benchmark_runs', 'quarantined', cast(null as bigint), 'no_samples', "
                "'no valid power samples in power/own/c.csv (counted channels): run c cannot be integrated')) "
                "as t(table_name, source_id, source_row, check_name, reason)")
    assert unreached_lines(con) == [
        "log no_series (sources/power/own/b.csv) reached no mart: its run has no series_id, and the marts read runs only as "
        "series; 1 of its samples was quarantined (steps back in time); add series_id = \"NAME\" under its [source.options] "
        "in sources/manifest/local.toml",
        "log quarantined (sources/power/own/c.csv) reached no mart: its run was quarantined (no valid power samples in "
        "power/own/c.csv (counted channels): run c cannot be integrated); fix the log and run "
        "`edge-carbon register --refresh quarantined`",
    ]
    con.execute("drop table marts.training_energy")
    assert unreached_lines(con) == []  # a build that stopped before the marts says nothing of them


def _check_summary(result, name: str) -> list[str] | None:  # type: ignore[no-untyped-def]
    """The summary lines of the check ``name`` in a build's events (None if it passed)."""
    from pipelines.lib.checks import SUMMARY_KEY

    for event in result.all_events:
        data = event.event_specific_data
        if event.event_type_value == "ASSET_CHECK_EVALUATION" and data.check_name == name:
            return None if data.passed else str(data.metadata[SUMMARY_KEY].value).splitlines()
    raise AssertionError(f"check {name} was not evaluated")


@pytest.mark.slow  # builds the staging tables and marts.training_energy from the copy, and runs edge-carbon run's summary
def test_a_log_with_a_bad_sample_and_no_series_is_quarantined_as_today_and_named_in_the_summary(
        project: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    from pipelines.run import launch
    from tests.conftest import build

    code, _, err = _register(capsys, ["sources/power/own/one_back.csv", "--id", "my_one_back", "--title", "one back", *GPU_OPTIONS])
    assert code == 0 and "the build will quarantine 1 of its 2,437 samples" in err
    warehouse = project / "wh" / "edge_carbon.duckdb"
    result = build(warehouse, only=["marts/training_energy"])
    assert result.success, [e.step_key for e in result.all_events if e.is_step_failure]
    line = ("log my_one_back (sources/power/own/one_back.csv) reached no mart: its run has no series_id, and the marts read runs "
            "only as series; 1 of its samples was quarantined (steps back in time); add series_id = \"NAME\" under its "
            "[source.options] in sources/manifest/local.toml")
    assert _check_summary(result, "every_log_reaches_a_mart") == [line]
    with duckdb.connect(str(warehouse), read_only=True) as con:
        rejected = con.execute("select source_row, column_name, check_name from quarantine.rejected_rows "
                               "where source_id = 'my_one_back'").fetchall()
        kept = con.execute("select count(*) from staging.power_samples where source_id = 'my_one_back'").fetchone()[0]
        run = con.execute("select n_samples, series_id from staging.benchmark_runs where source_id = 'my_one_back'").fetchall()
    assert rejected == [(1203, "timestamp", "time_step_back")]  # quarantined as before, the other samples kept
    assert kept == 2436 and run == [(2436, None)]
    # edge-carbon run's summary, read from the published warehouse, names the log after its table
    monkeypatch.setattr(launch, "materialise", lambda **_: launch.Outcome(success=True, run_ids=["r"]))
    assert main(["run", "--skip-dashboards"]) == 0
    out = capsys.readouterr().out.splitlines()
    # the built line (tables, and the rows rejected into quarantine), then the log that reached no mart;
    # a partial build says it has no verdict
    built = next(i for i, o in enumerate(out) if o.startswith("built "))
    assert "rows rejected into quarantine.rejected_rows: " in out[built] and out[built + 1] == line, out
    assert "Does the claim hold? this build did not include marts.verdict" in "\n".join(out)


@pytest.mark.slow  # two builds of the staging tables and the scenario parameters from the copy
def test_unregistering_the_log_a_scenario_reads_fails_the_build_in_one_line(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from pipelines.run.launch import _failures
    from tests.conftest import build

    code, _, err = _register(capsys, ["sources/power/own/m2_run.txt", "--id", "my_m2pro_run1", "--kind", "powermetrics",
                                      "--title", "my M2 Pro", "--option", "device_id=apple-m2-pro", "--option", "series_id=my_m2pro",
                                      "--option", "workload=OPT-125M training, mine"])
    assert (code, err) == (0, ""), err
    (project / "sources" / "scenarios" / "mine.csv").write_text(
        HEADER + "laptop_train_power_w,,W,,,point,primary,benchmark_series.series_id=my_m2pro.mean_power_w_mean,my M2 Pro\n",
        encoding="utf-8")
    code, _, err = _register(capsys, ["sources/scenarios/mine.csv", "--id", "scenario_mine", "--kind", "scenario", "--title", "mine",
                                      "--option", "scenario_id=mine", "--option", "extends=paper_text"])
    assert (code, err) == (0, ""), err
    warehouse = project / "wh" / "edge_carbon.duckdb"
    result = build(warehouse, only=["core/scenario_parameters"])
    assert result.success, [e.step_key for e in result.all_events if e.is_step_failure]
    with duckdb.connect(str(warehouse), read_only=True) as con:
        mine = con.execute("select value from core.scenario_parameters where scenario_id = 'mine' "
                           "and parameter = 'laptop_train_power_w'").fetchone()[0]
        measured = con.execute("select mean_power_w_mean from staging.benchmark_series where series_id = 'my_m2pro'").fetchone()[0]
    assert mine == measured and mine != 15  # the user's measured power, not the parent's 15 W

    assert main(["unregister", "my_m2pro_run1"]) == 0
    capsys.readouterr()
    published = (_sha256(warehouse), warehouse.stat().st_mtime_ns)
    result = build(warehouse, only=["core/scenario_parameters"])
    assert not result.success
    failures = _failures(result.all_events)  # what edge-carbon run prints: one line
    assert len(failures) == 1 and failures[0].startswith("core__scenario_parameters: ") and "\n" not in failures[0]
    assert failures[0].endswith(
        "sources/scenarios/mine.csv, line 2: scenario mine, parameter laptop_train_power_w: factor_ref "
        "benchmark_series.series_id=my_m2pro.mean_power_w_mean finds no row (no single row with series_id = 'my_m2pro' and a "
        "mean_power_w_mean value in staging.benchmark_series); register the power log(s) of series my_m2pro (edge-carbon "
        "register ... --option series_id=my_m2pro) or point the reference at a registered series, or remove the row to inherit "
        "paper_text's value")
    assert (_sha256(warehouse), warehouse.stat().st_mtime_ns) == published  # nothing published
