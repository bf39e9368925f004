"""What ``edge-carbon run`` (``make run``) shows: on success it ends with the headline verdict and
next commands that run as typed; a failure ends with the file, row, column and fix, with no
stack trace (Dagster's log goes to a file under the warehouse's folder); Ctrl-C says it was
interrupted; a folder named as the warehouse is refused before anything is written."""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import duckdb
import polars as pl
import pytest

from dashboards.shell import ratio_text
from pipelines.cli import INTERRUPTED, INTERRUPTED_STATUS, main
from pipelines.ingest.digests import sha256_file
from pipelines.paths import PROJECT_ROOT, SOURCES_DIR, SOURCES_ENV, WAREHOUSE_ENV
from pipelines.run import console
from pipelines.run.fixes import fix_for
from pipelines.run.report import verdict_lines
from pipelines.warehouse.database import open_readonly
from pipelines.warehouse.queries import query_pl

#: What no console line may show without --verbose: a Python or Dagster stack trace.
TRACES = ("Traceback", "Stack Trace", 'File "')


def cli(env: dict[str, str], *args: str, timeout: float = 900) -> subprocess.CompletedProcess[str]:
    """``edge-carbon ARGS`` in a subprocess from the repository root."""
    return subprocess.run([sys.executable, "-m", "pipelines.cli", *args], cwd=PROJECT_ROOT, env=env, capture_output=True, text=True,
                          timeout=timeout, check=False)


def without_venv_on_path(env: dict[str, str]) -> dict[str, str]:
    """``env`` with this virtual environment's bin folder off PATH (a fresh shell after ``make run``)."""
    venv_bin = str(Path(os.path.abspath(sys.executable)).parent)
    path = os.pathsep.join(p for p in env.get("PATH", "").split(os.pathsep) if p and p != venv_bin)
    return {key: value for key, value in {**env, "PATH": path}.items() if key != "VIRTUAL_ENV"}


@pytest.fixture
def sources(tmp_path: Path) -> Path:
    """A private copy of the shipped sources (a test may break one file)."""
    copied = tmp_path / "sources"
    shutil.copytree(SOURCES_DIR, copied)
    return copied


def headline(published: Path) -> pl.DataFrame:
    """marts.verdict's rows that set each realistic headline verdict at the edge's best design, filtered here in polars
    (the rows is_answer marks)."""
    with open_readonly(published) as con:
        frame = query_pl(con, "select * from marts.verdict")
    rows = frame.filter(
        pl.col("is_headline") & (pl.col("accounting_frame") != "as_published") & pl.col("is_best_design")
        & (pl.col("network_method") == pl.col("verdict_driver_method")) & (pl.col("embodied_policy") == pl.col("verdict_driver_policy"))
        & (pl.col("resize_power") == pl.col("verdict_driver_resize_power"))
    ).sort("scenario_id", "device_class")
    assert rows.equals(frame.filter(pl.col("is_answer")).sort("scenario_id", "device_class"))
    return rows


def test_verdict_lines_are_the_headline_rows(built_warehouse: Path) -> None:
    rows = headline(built_warehouse)
    assert rows.height == 4 and rows.select("scenario_id", "device_class").unique().height == 4
    with open_readonly(built_warehouse) as con:
        lines = verdict_lines(con)
    assert lines[0].startswith("Does the claim hold?") and "4-8" in lines[0]
    assert lines[1].split() == ["scenario", "device", "best", "design", "R", "edge/cloud", "p05-p95,", "all", "draws", "worst",
                                "design:", "R", "verdict"]
    worst = frame_of_worst(built_warehouse)
    for line, row in zip(lines[2:], rows.iter_rows(named=True), strict=True):
        r = row["reduction_factor_with_comm"]
        low = worst[(row["scenario_id"], row["device_class"], row["network_method"], row["embodied_policy"], row["resize_power"])]
        expected = [row["scenario_id"], row["device_class"], row["edge_design"], ratio_text(r), f"{1 / r:.1f}x" if r < 1 else "-",
                    f"{ratio_text(row['p05_with_comm_all_draws'])}-{ratio_text(row['p95_with_comm_all_draws'])}", f"{low[0]}:",
                    ratio_text(low[1]),
                    *row["verdict"].split()]
        assert line.split() == expected


def frame_of_worst(published: Path) -> dict[tuple, tuple[str, float]]:
    """The worst admissible design of each headline method row: (scenario, class, method row) -> (design, R with comm)."""
    with open_readonly(published) as con:
        frame = query_pl(con, "select * from marts.verdict where is_headline and is_worst_design")
    return {(r["scenario_id"], r["device_class"], r["network_method"], r["embodied_policy"], r["resize_power"]):
            (r["edge_design"], r["reduction_factor_with_comm"]) for r in frame.iter_rows(named=True)}


def test_a_build_without_the_verdict_says_so_in_one_line() -> None:
    """`edge-carbon run --only marts/training_energy` publishes no marts.verdict: its summary says so, never fails."""
    with duckdb.connect() as con:
        con.execute("create schema marts; create table marts.training_energy (x integer)")
        assert verdict_lines(con) == ["Does the claim hold? this build did not include marts.verdict; a full build "
                                      "(make run, or edge-carbon run without --only) ends with the verdict"]


def test_the_command_is_spelled_as_typed_from_here(monkeypatch: pytest.MonkeyPatch) -> None:
    """Off PATH (a fresh shell), edge-carbon is this environment's script, relative to the current folder."""
    monkeypatch.setenv("PATH", without_venv_on_path(dict(os.environ))["PATH"])
    monkeypatch.chdir(PROJECT_ROOT)
    script = Path(os.path.abspath(sys.executable)).parent / "edge-carbon"
    assert console.command() == os.path.relpath(script, PROJECT_ROOT)
    monkeypatch.setenv("PATH", f"{script.parent}{os.pathsep}{os.environ['PATH']}")
    assert console.command() == "edge-carbon"


@pytest.mark.parametrize(("failure", "fix"), [
    ("staging__sources: pipelines.errors.SourceIntegrityError: /x/sources/curated/a.csv: source 'a' is listed in manifest/specs.toml "
     "but the file is missing", "fix: put /x/sources/curated/a.csv back from where you copied it, or, for a file you registered, "
     "remove its entry: ec unregister a"),
    ("core.scenario_parameters: parameters_in_bounds\n  sources/scenarios/mine.csv, line 4: horizon_years (low end of its range) = -2 year "
     "is outside its bounds: horizon_years must be > 0 (scenario mine)",
     "fix: in sources/scenarios/mine.csv, row 4, column low: set horizon_years within its bounds, then ec register --refresh <its source id>"),
    ("staging__power_samples: pipelines.errors.SourceParseError: /x/gpu.csv, line 1: header repeats column(s) ['name']",
     "fix: correct /x/gpu.csv at row 1 as the line above says, then ec register --refresh <its source id>"),
])
def test_a_failure_gets_its_fix(failure: str, fix: str) -> None:
    assert fix_for([failure], "ec", "log.txt") == fix


def test_an_unknown_failure_points_at_the_log() -> None:
    assert fix_for(["monte_carlo: _duckdb.BinderException: no"], "ec", "w/.logs/run.log").endswith("w/.logs/run.log has every step's output")


def tree(root: Path) -> list[tuple[str, int]]:
    """Every path below ``root`` with its size (0 for a folder)."""
    return sorted((str(p.relative_to(root)), p.stat().st_size if p.is_file() else 0) for p in root.rglob("*"))


@pytest.mark.parametrize("rebuild", [False, True])
def test_a_folder_named_as_the_warehouse_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                    capsys: pytest.CaptureFixture[str], rebuild: bool) -> None:
    """EDGE_CARBON_WAREHOUSE naming a folder: run and run --rebuild refuse in one line (exit 2), and
    nothing in the folder or beside it is renamed or written."""
    folder = tmp_path / "mine"
    folder.mkdir()
    (folder / "marker.txt").write_text("the user's own file\n", encoding="utf-8")
    monkeypatch.setenv(WAREHOUSE_ENV, str(folder))
    before = tree(tmp_path)
    assert main(["run", "--skip-dashboards", *(["--rebuild"] if rebuild else [])]) == 2
    out, err = capsys.readouterr()
    assert out == ""
    [line] = err.strip().splitlines()
    assert "name a file" in line and str(folder) in line
    assert tree(tmp_path) == before


@pytest.mark.slow  # a whole `edge-carbon run` at the defaults of `make run`, then the commands it prints
def test_a_run_ends_with_the_verdict_and_commands_that_run_as_typed(tmp_path: Path) -> None:
    published = tmp_path / "wh" / "edge_carbon.duckdb"
    env = without_venv_on_path({**os.environ, WAREHOUSE_ENV: str(published)})
    done = cli(env, "run", "--skip-dashboards")
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert [t for t in TRACES if t in done.stdout + done.stderr] == []
    lines = done.stdout.rstrip("\n").splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("Does the claim hold?"))
    rows = headline(published)
    assert rows.height == 4
    shown = lines[start + 2:start + 6]
    for line, row in zip(shown, rows.iter_rows(named=True), strict=True):
        assert line.split()[:4] == [row["scenario_id"], row["device_class"], row["edge_design"], ratio_text(row["reduction_factor_with_comm"])]
        assert line.endswith(row["verdict"])
    assert lines[start + 6] == "next, from this folder:"
    commands = [line.strip() for line in lines[start + 7:]]
    assert len(commands) >= 2 and len(lines) - start <= 12, "the verdict and the commands are the last lines"
    assert any(c.startswith(". ") and c.split()[1].endswith("activate") for c in commands)
    for command in commands:
        ran = subprocess.run(["bash", "-c", command], cwd=PROJECT_ROOT, env=env, capture_output=True, text=True, timeout=120, check=False)
        assert ran.returncode == 0, f"{command}: {ran.stderr[-2000:]}"
        if " sql " in command and not command.startswith(". "):
            assert "verdict" in ran.stdout, ran.stdout[-2000:]  # a column of the first query, a table of the second
    count = 'edge-carbon sql "select count(*) as n from marts.verdict" --format csv'
    activate = next(c for c in commands if c.startswith(". ")).split("#")[0].strip()  # the command, without its comment
    activated = subprocess.run(["bash", "-c", f"{activate} && {count}"],
                               cwd=PROJECT_ROOT, env=env, capture_output=True, text=True, timeout=120, check=False)
    with open_readonly(published) as con:
        assert activated.stdout.split() == ["n", str(con.execute("select count(*) from marts.verdict").fetchone()[0])], activated.stderr
    [log] = (published.parent / console.LOGS_DIR).glob("run-*.log")
    assert "staging__sources" in log.read_text(encoding="utf-8"), "Dagster's log is in the file"


def break_source(sources: Path, kind: str) -> str:
    """Break one source file of ``sources`` the way ``kind`` says (its sha256 refreshed where it
    stays registered); returns the file's name, which the failure must name."""
    from pipelines.ingest.registration import refresh

    if kind == "missing file":
        (sources / "curated" / "device_specs.csv").unlink()
        return "device_specs.csv"
    if kind == "malformed power log":
        path = sources / "power" / "synthetic" / "table1_gpu_r1.csv"
        lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
        path.write_text("timestamp, index, name, name\n" + "".join(lines[1:]), encoding="utf-8")
        refresh("synthetic_table1_gpu_r1")
        return "table1_gpu_r1.csv"
    path = sources / "scenarios" / "paper_base.csv"  # a value and a range end out of bounds, consistent with each other
    text = path.read_text(encoding="utf-8")
    assert "\nhorizon_years,3,year,2,5," in text
    path.write_text(text.replace("\nhorizon_years,3,year,2,5,", "\nhorizon_years,-1,year,-2,5,"), encoding="utf-8")
    refresh("scenario_paper_base")
    return "paper_base.csv"


#: Per failure kind: a row number and a column name the last lines must hold (None: the kind has none).
EXPECTED = {
    "missing file": (None, None),
    "malformed power log": ("row 1", "name"),
    "scenario out of bounds": ("row 2", "low"),
}


@pytest.mark.slow  # an `edge-carbon run` per kind, each stopped by the broken file
@pytest.mark.parametrize("kind", list(EXPECTED))
def test_a_failed_build_ends_with_file_row_column_and_fix(kind: str, sources: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(SOURCES_ENV, str(sources))
    name = break_source(sources, kind)
    published = tmp_path / "wh" / "edge_carbon.duckdb"
    done = cli({**os.environ, SOURCES_ENV: str(sources), WAREHOUSE_ENV: str(published)}, "run", "--skip-dashboards")
    assert done.returncode == 1, done.stdout[-3000:] + done.stderr[-3000:]
    assert [t for t in TRACES if t in done.stdout + done.stderr] == [], done.stderr[-3000:]
    last = "\n".join(done.stderr.rstrip("\n").splitlines()[-3:])
    assert name in last, last
    assert re.search(r"^fix: ", last, re.MULTILINE), last
    row, column = EXPECTED[kind]
    if row:
        assert row in last and column in last, last
    assert not published.exists()
    [log] = (published.parent / console.LOGS_DIR).glob("run-*.log")
    assert "STEP_FAILURE" in log.read_text(encoding="utf-8")


@pytest.mark.slow  # an `edge-carbon run` interrupted part-way
def test_ctrl_c_says_interrupted_and_leaves_the_warehouse(tmp_path: Path, built_warehouse: Path) -> None:
    from tests.warehouse.test_lake import copy_warehouse

    published = copy_warehouse(built_warehouse, tmp_path / "wh" / "edge_carbon.duckdb")
    before = sha256_file(published)
    env = {**os.environ, WAREHOUSE_ENV: str(published), "PYTHONUNBUFFERED": "1"}
    proc = subprocess.Popen([sys.executable, "-m", "pipelines.cli", "run", "--skip-dashboards"], cwd=PROJECT_ROOT, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    logs = published.parent / console.LOGS_DIR
    deadline = time.time() + 300
    while not any("staging__" in log.read_text(encoding="utf-8") for log in logs.glob("run-*.log")):  # steps are running
        assert proc.poll() is None and time.time() < deadline, "the run ended before it could be interrupted"
        time.sleep(0.2)
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=300)
    assert proc.returncode == INTERRUPTED_STATUS, out[-2000:] + err[-2000:]
    assert err.rstrip("\n").splitlines()[-1] == INTERRUPTED
    assert [t for t in TRACES if t in out + err] == [] and "DagsterExecutionInterruptedError" not in out + err
    assert sha256_file(published) == before


def test_an_interrupt_that_duckdb_rewraps_counts_as_an_interrupt() -> None:
    """Ctrl-C while DuckDB reads a Python object surfaces as DuckDB's own error naming the interrupt: the run was
    interrupted, not failed; an error that merely mentions no interrupt is a failure."""
    from types import SimpleNamespace

    from pipelines.run.launch import interrupted

    def event(cls_name: str, message: str) -> SimpleNamespace:
        error = SimpleNamespace(cls_name=cls_name, message=message, cause=None, context=None)
        return SimpleNamespace(event_specific_data=SimpleNamespace(error=error))

    rewrapped = ("Invalid Input Error: exporting a stream from the object registered as '_staged' failed: "
                 "DagsterExecutionInterruptedError: ")
    assert interrupted([event("InvalidInputException", rewrapped)])
    assert interrupted([event("DagsterExecutionInterruptedError", "")])
    assert not interrupted([event("InvalidInputException", "Invalid Input Error: a column is missing")])
