"""``edge-carbon scenario remove`` and ``edge-carbon unregister`` undo ``scenario new`` and ``register``.

Each test works in a temporary project: a copy of ``sources/`` and the project's .gitignore in
a git repository of its own (``$EDGE_CARBON_SOURCES`` points at it), so ``git status`` before
and after a round trip can be compared. docs/data.md's examples are run as written.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import tomllib
from collections.abc import Callable
from pathlib import Path

import dagster as dg
import duckdb
import pytest

from pipelines.cli import main
from pipelines.ingest.manifest import load_manifest
from pipelines.paths import PROJECT_ROOT, SOURCES_DIR, SOURCES_ENV, WAREHOUSE_ENV
from tests.ingest.test_register import HOME_FILES, _run

DATA_DOCS = PROJECT_ROOT / "docs" / "data.md"
SHIPPED_LOG = "power/synthetic/table1_gpu_r1.csv"
EDGE_CARBON = ".venv/bin/edge-carbon"


def _git(project: Path, *args: str) -> str:
    return subprocess.run(["git", "-c", "user.name=test", "-c", "user.email=test@example.invalid", "-c", "commit.gpgsign=false",
                           *args], cwd=project, check=True, capture_output=True, text=True).stdout


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A git repository holding a copy of the shipped sources, committed; the current directory."""
    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    root = tmp_path / "project"
    shutil.copytree(SOURCES_DIR, root / "sources")
    shutil.copyfile(PROJECT_ROOT / ".gitignore", root / ".gitignore")
    _git(root, "init", "-q")
    _git(root, "add", "-A")
    _git(root, "commit", "-q", "-m", "shipped")
    monkeypatch.setenv(SOURCES_ENV, str(root / "sources"))
    monkeypatch.chdir(root)
    return root


def _status(project: Path) -> str:
    return _git(project, "status", "--porcelain", "--untracked-files=all")


def _copy_log(project: Path, name: str = "gpu_run.csv") -> Path:
    """The user's copy of a log below sources/ (as docs/data.md's ``cp`` puts it)."""
    target = project / "sources" / "power" / "own" / name
    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(SOURCES_DIR / SHIPPED_LOG, target)
    return target


def _register_log(capsys: pytest.CaptureFixture[str], source_id: str, path: str) -> None:
    code, _, err = _run(capsys, ["register", path, "--id", source_id, "--kind", "nvidia_smi", "--title", source_id,
                                 "--option", "timezone=UTC", "--option", "device_id=nvidia-rtx-a5000",
                                 "--option", f"run_id={source_id}", "--option", "workload=OPT-125M training, mine"])
    assert code == 0, err


def test_scenario_remove_undoes_scenario_new(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    before = _status(project)
    code, _, err = _run(capsys, ["scenario", "new", "fewer_hours", "--extends", "paper_text", "--set", "edge_hours_per_day=6"])
    assert code == 0, err
    assert _status(project) == before + "?? sources/manifest/local.toml\n?? sources/scenarios/fewer_hours.csv\n"
    code, out, err = _run(capsys, ["scenario", "remove", "fewer_hours", "--delete-file"])
    assert (code, err) == (0, "")
    assert out.splitlines() == ["unregistered scenario_fewer_hours from sources/manifest/local.toml",
                                "removed sources/manifest/local.toml (no entry left)",
                                "deleted sources/scenarios/fewer_hours.csv"]
    assert _status(project) == before
    assert "fewer_hours" not in {str(e.options.get("scenario_id")) for e in load_manifest()}


@pytest.mark.parametrize("kind", ["scenario", "log"])
def test_both_commands_keep_the_file_by_default_and_say_so(kind: str, project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """scenario remove and unregister treat the file alike: kept unless --delete-file, and the
    last line names it and the way to delete it."""
    before = _status(project)
    if kind == "scenario":
        assert _run(capsys, ["scenario", "new", "fewer_hours", "--extends", "paper_text", "--set", "edge_hours_per_day=6"])[0] == 0
        file, argv = project / "sources" / "scenarios" / "fewer_hours.csv", ["scenario", "remove", "fewer_hours"]
    else:
        file = _copy_log(project)
        _register_log(capsys, "my_gpu_run1", "sources/power/own/gpu_run.csv")
        argv = ["unregister", "my_gpu_run1"]
    rel = file.relative_to(project).as_posix()
    code, out, err = _run(capsys, argv)
    assert (code, err) == (0, "")
    assert f"kept {rel}; delete it yourself or pass --delete-file" in out.splitlines()
    assert file.is_file()
    # the manifest is as shipped; the kept file is all that is left (a log below the ignored sources/power/own/)
    assert _status(project) == before + ("" if kind == "log" else f"?? {rel}\n")


def test_removing_one_entry_leaves_the_others_as_written(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """With two entries, removing the first leaves local.toml as registering only the second
    writes it, byte for byte, and the data file is deleted only when asked."""
    for name in ("first", "second"):
        _copy_log(project, f"{name}.csv")
    manifest = project / "sources" / "manifest" / "local.toml"
    _register_log(capsys, "second", "sources/power/own/second.csv")
    only_second = manifest.read_bytes()
    manifest.unlink()
    _register_log(capsys, "first", "sources/power/own/first.csv")
    _register_log(capsys, "second", "sources/power/own/second.csv")
    code, out, _ = _run(capsys, ["unregister", "first", "--delete-file"])
    assert code == 0 and "deleted sources/power/own/first.csv" in out
    assert manifest.read_bytes() == only_second
    assert not (project / "sources" / "power" / "own" / "first.csv").exists()
    assert [e.id for e in load_manifest() if e.manifest_file == "manifest/local.toml"] == ["second"]


def test_dry_run_writes_nothing(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert _run(capsys, ["scenario", "new", "fewer_hours", "--extends", "paper_text", "--set", "edge_hours_per_day=6"])[0] == 0
    after_new = _status(project)
    code, out, _ = _run(capsys, ["scenario", "remove", "fewer_hours", "--dry-run"])
    assert code == 0 and out.startswith("# dry run: scenario_fewer_hours would leave sources/manifest/local.toml")
    assert _status(project) == after_new


@pytest.mark.parametrize(("argv", "line"), [
    (["unregister", "ember_yearly"],
     "unregister: 'ember_yearly' is a shipped source (sources/manifest/grid.toml); only your own sources, "
     "those in sources/manifest/local.toml, can be removed"),
    (["scenario", "remove", "paper_text"],
     "scenario remove: 'scenario_paper_text' is a shipped source (sources/manifest/scenarios.toml); only your own sources, "
     "those in sources/manifest/local.toml, can be removed"),
    (["scenario", "remove", "fewer_hour"],
     "scenario remove: no scenario 'fewer_hour' (did you mean 'fewer_hours'?); scenarios: charging_window, fewer_hours, "
     "fewest_hours, paper_base, paper_figure, paper_text, realistic_attributional, realistic_base, realistic_consequential, "
     "roofline, vendor_fp32"),
    (["unregister", "scenario_fewer_hour"],
     "unregister: no source has the id 'scenario_fewer_hour' (did you mean 'scenario_fewer_hours'?); "
     "your own sources: scenario_fewer_hours, scenario_fewest_hours"),
    (["scenario", "remove", "fewer_hours"],
     "scenario remove: 'scenario_fewer_hours' is still needed by 'scenario_fewest_hours' (extends = fewer_hours, "
     "manifest/local.toml); remove that first"),
    (["unregister", "scenario_fewer_hours"],
     "unregister: 'scenario_fewer_hours' is still needed by 'scenario_fewest_hours' (extends = fewer_hours, "
     "manifest/local.toml); remove that first"),
])
def test_refusals_are_one_line_and_write_nothing(argv: list[str], line: str, project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    for name, parent, hours in (("fewer_hours", "paper_text", "6"), ("fewest_hours", "fewer_hours", "4")):
        assert _run(capsys, ["scenario", "new", name, "--extends", parent, "--set", f"edge_hours_per_day={hours}"])[0] == 0
    before = _status(project)
    assert _run(capsys, argv) == (2, "", line + "\n")
    assert _status(project) == before
    assert tomllib.loads((project / "sources" / "manifest" / "local.toml").read_text(encoding="utf-8"))["source"]


# --- docs/data.md's examples, as written ----------------------------------------------------


def _commands(section: str) -> list[str]:
    """The command lines of the first ``bash`` block of docs/data.md's ``## <section>``, each
    with its continuation lines joined."""
    text = DATA_DOCS.read_text(encoding="utf-8").split(f"\n## {section}\n", 1)[1].split("\n## ", 1)[0]
    block = text.split("```bash\n", 1)[1].split("```", 1)[0]
    return [line.strip() for line in block.replace("\\\n", " ").splitlines() if line.strip()]


def _run_as_written(line: str, project: Path, make_run: Callable[[], None]) -> None:
    """One command line of the docs: ``edge-carbon`` in this process, ``make run`` as ``make_run``, the rest in bash."""
    words = shlex.split(line, comments=True)
    if words[0] == EDGE_CARBON:
        assert main(words[1:]) == 0, line
    elif words == ["make", "run"]:
        make_run()
    else:
        subprocess.run(["bash", "-c", line], cwd=project, check=True)


def test_the_docs_undo_a_scenario_and_a_log_and_the_next_build_passes(project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """docs/data.md: the logs of "A benchmark power log" (registered as documented, without
    --dry-run) and the scenario of "A scenario" are built, the scenario of "Your own log in a
    scenario" reads the built series, then "Taking it out again" runs as written. The logs' partitions leave the Dagster instance and their lake files are retired in the
    published warehouse by unregister itself; the next build (staging/power_samples, the smallest
    that ingests logs and runs the lake's orphan check) passes, and git status is as before."""
    from tests.conftest import build

    warehouse = tmp_path / "wh" / "edge_carbon.duckdb"
    monkeypatch.setenv(WAREHOUSE_ENV, str(warehouse))
    before = _status(project)
    # the docs' `mkdir -p sources/power/own && cp sources/power/examples/gpu_run.csv sources/power/own/`, as written
    setup, *register, _ = _commands("A benchmark power log")
    _run_as_written(setup, project, make_run=lambda: None)
    logs = [project / "sources" / "power" / "own" / name for name in HOME_FILES]
    assert all(log.is_file() for log in logs)
    assert len(register) == len(HOME_FILES) and all(c.startswith(f"{EDGE_CARBON} register") for c in register)
    source_ids = []
    for line in register:
        assert "--dry-run" not in line and main(shlex.split(line)[1:]) == 0, line
        source_ids.append(shlex.split(line)[shlex.split(line).index("--id") + 1])
    source_id = source_ids[0]  # the sampled log whose lake file the round trip follows
    for line in _commands("A scenario"):
        if line.startswith(EDGE_CARBON):
            _run_as_written(line, project, make_run=lambda: None)

    def make_run() -> None:  # with the tables `scenario new --from-series` reads
        result = build(warehouse, only=["staging/power_samples", "staging/benchmark_series", "staging/device_specs",
                                        "staging/training_throughput"])
        assert result.success, [e.step_key for e in result.all_events if e.is_step_failure]
        checks = [e.event_specific_data for e in result.all_events if e.event_type == dg.DagsterEventType.ASSET_CHECK_EVALUATION]
        assert {c.check_name for c in checks} >= {"source_ids_join"} and all(c.passed for c in checks)

    def current(con: duckdb.DuckDBPyConnection) -> list[str]:
        return [r[0] for r in con.execute("select partition_key from meta.lake_files where superseded_at is null "
                                          "and partition_key = $k", {"k": source_id}).fetchall()]

    make_run()
    with duckdb.connect(str(warehouse), read_only=True) as con:
        assert current(con) == [source_id]
    own_log = [line for line in _commands("Your own log in a scenario") if " scenario new " in line]
    assert len(own_log) == 1 and "--from-series my_a40" in own_log[0]
    _run_as_written(own_log[0], project, make_run)
    undo = _commands("Taking it out again")
    assert undo[-1] == "make run"
    assert {shlex.split(line)[2] for line in undo if line.startswith(f"{EDGE_CARBON} unregister")} == set(source_ids)
    for line in undo[:-1]:
        _run_as_written(line, project, make_run)
        if line.startswith(f"{EDGE_CARBON} unregister"):  # the entry goes, and with --delete-file the copy too
            gone = shlex.split(line)[2]
            assert gone in source_ids and gone not in {e.id for e in load_manifest()}
    assert not any(log.exists() for log in logs)
    assert _status(project) == before
    assert not set(source_ids) & {e.id for e in load_manifest()}
    with dg.DagsterInstance.get() as instance:
        assert not set(source_ids) & set(instance.get_dynamic_partitions("power_logs"))
    with duckdb.connect(str(warehouse), read_only=True) as con:
        assert current(con) == []  # retired by unregister, before any build
        assert con.execute("select count(*) from staging.power_samples where source_id = $k", {"k": source_id}).fetchone() == (0,)
        assert con.execute("select count(*) from meta.generations where run_id like 'unregister-%'").fetchone() == (len(source_ids),)
    _run_as_written(undo[-1], project, make_run)
    assert _status(project) == before


# --- docs/data.md verbatim, in a fresh clone -------------------------------------------------

#: What each shell block of docs/data.md adds, in order, and how the test finds it in the clone's
#: warehouse after the block's `make run` (a query that counts it).
ADDED = [
    ("A benchmark power log", "select count(*) from marts.training_energy where series_id = 'my_a40'"),
    ("A communication pattern", "select count(*) from marts.communication where pattern = 'hierarchical_allreduce'"),
    ("A scenario", "select count(*) from core.scenario_parameters where scenario_id = 'fewer_hours'"),
    # the what-if after an edited row: the scenario's verdict at its new hours, from a run of that scenario alone
    ("A scenario", "select count(*) from marts.verdict as v inner join core.scenarios as s using (scenario_id) "
                   "where v.scenario_id = 'fewer_hours' and s.edge_hours_per_day = 5"),
    # the registered A40 series as the cloud GPU's power: the scenario reads it, and its R moves
    ("Your own log in a scenario",
     "select count(*) from marts.verdict as mine inner join marts.verdict as base using (device_class) "
     "inner join core.scenario_parameters as p on p.scenario_id = mine.scenario_id and p.parameter = 'cloud_gpu_power_w' "
     "where mine.scenario_id = 'my_a40_gpu' and base.scenario_id = 'realistic_attributional' and mine.is_answer and base.is_answer "
     "and p.source_id = 'my_a40_run1' and abs(mine.reduction_factor / base.reduction_factor - 1) > 0.05"),
]
UNDO_SECTION = "Taking it out again"


def shell_blocks() -> list[tuple[str, str]]:
    """(section, text) of every ``bash`` block of docs/data.md, in order."""
    text = DATA_DOCS.read_text(encoding="utf-8")
    out = []
    for section in text.split("\n## ")[1:]:
        title = section.split("\n", 1)[0]
        out += [(title, block) for block in re.findall(r"```bash\n(.*?)```", section, re.DOTALL)]
    return out


def test_the_shell_blocks_are_the_ones_the_clone_test_runs() -> None:
    """Every shell block is one the verbatim test below checks, and each copies from a shipped
    sample (nothing from outside the clone: no ~, no absolute path)."""
    blocks = shell_blocks()
    assert [title for title, _ in blocks] == [*(title for title, _ in ADDED), UNDO_SECTION]
    for _, block in blocks:
        assert "~" not in block and not re.search(r"(^|\s)/", block), block
    copied = re.findall(r"\bcp (\S+) sources/power/own/", blocks[0][1])
    assert copied == ["sources/power/examples/gpu_run.csv"] and (PROJECT_ROOT / copied[0]).is_file()
    assert subprocess.run(["git", "check-ignore", "-q", "sources/power/own/gpu_run.csv"], cwd=PROJECT_ROOT).returncode == 0


def _borrowed_venv(clone: Path) -> None:
    """The clone's .venv/: a folder (so .gitignore's ``.venv/`` covers it) of links into this checkout's
    environment. Its ``make`` must not reinstall into the borrowed environment, so the clone's
    pyproject.toml and constraints.txt are given a time before the environment's install stamps."""
    venv = PROJECT_ROOT / ".venv"
    (clone / ".venv").mkdir()
    for item in venv.iterdir():
        (clone / ".venv" / item.name).symlink_to(item)
    stamp = min(p.stat().st_mtime for p in venv.glob(".installed*")) - 60
    for name in ("pyproject.toml", "constraints.txt"):
        os.utime(clone / name, (stamp, stamp))


@pytest.mark.slow  # four full `make run` builds and two what-ifs in a fresh clone
def test_every_shell_block_of_the_data_docs_runs_verbatim_in_a_fresh_clone(tmp_path: Path) -> None:
    """Each bash block of docs/data.md, as written, in `bash -e` at the root of a clone of this
    checkout's HEAD (with ../shared beside it and this checkout's environment): each block's addition
    reaches the warehouse, the user's log leaves the paper's reproduction as it is, and after "Taking it out again" the
    clone's `git status --porcelain` is empty (the pattern's row included) and the additions are gone."""
    clone = tmp_path / "edge-carbon"
    subprocess.run(["git", "clone", "-q", str(PROJECT_ROOT), str(clone)], check=True, capture_output=True)
    shared = PROJECT_ROOT.parent / "shared"
    if shared.is_dir():
        (tmp_path / "shared").symlink_to(shared.resolve())
    _borrowed_venv(clone)
    drop = ("PYTHONPATH", SOURCES_ENV, WAREHOUSE_ENV, "DAGSTER_HOME", "EDGE_CARBON_SITE", "MAKEFLAGS", "MFLAGS")
    # the borrowed environment's editable install points at this checkout: the clone's code goes first
    env = {k: v for k, v in os.environ.items() if k not in drop} | {"PYTHONPATH": str(clone)}
    where = subprocess.run([".venv/bin/python", "-c", "import pipelines, schemas; print(pipelines.__file__, schemas.__file__)"],
                           cwd=clone, env=env, capture_output=True, text=True, check=True).stdout.split()
    assert all(Path(w).is_relative_to(clone) for w in where), where
    installs = {p.name: p.read_bytes() for p in (PROJECT_ROOT / ".venv").glob("lib/python*/site-packages/__editable__*")}

    def query(sql: str) -> list[tuple]:
        with duckdb.connect(str(clone / "warehouse" / "edge_carbon.duckdb"), read_only=True) as con:
            return con.execute(sql).fetchall()

    reproductions = []
    checks = [sql for _, sql in ADDED] + [None]
    for (title, block), check in zip(shell_blocks(), checks, strict=True):
        done = subprocess.run(["bash", "-e", "-o", "pipefail", "-c", block], cwd=clone, env=env, capture_output=True, text=True,
                              timeout=3600, check=False)
        assert done.returncode == 0, f"{title}:\n{block}\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
        reproductions.append(sorted(query("select * from marts.paper_reproduction"), key=repr))
        if check is not None:
            assert query(check)[0][0] > 0, title
    assert title == UNDO_SECTION
    assert subprocess.run(["git", "status", "--porcelain", "--untracked-files=all"], cwd=clone, capture_output=True, text=True,
                          check=True).stdout == ""
    assert all(query(sql)[0][0] == 0 for _, sql in ADDED)
    # the paper's reproduction with the user's log (the first build) is the one with nothing added (the last)
    assert reproductions[-1] == reproductions[0]
    assert {p.name: p.read_bytes() for p in (PROJECT_ROOT / ".venv").glob("lib/python*/site-packages/__editable__*")} == installs
