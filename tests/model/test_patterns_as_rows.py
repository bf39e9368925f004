"""Communication patterns are rows: each pattern's traffic is coefficients of the model's byte and
radio terms on its row of sources/curated/patterns.csv (schemas/patterns.py), read into core.patterns,
and the model reads them from the joined row. The shipped rows reproduce each pattern's documented
formula; a new pattern is one row of the file (and its refreshed sha256), and the build evaluates it
(a copy of the project, built: ``slow``); removing the row takes it out."""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import duckdb
import pandera.errors
import polars as pl
import pytest

from pipelines.ingest.digests import sha256_file
from pipelines.ingest.manifest import load_manifest
from pipelines.model.methods import pattern_rows, reference_tables
from pipelines.paths import PROJECT_ROOT, SOURCES_DIR, SOURCES_ENV
from pipelines.warehouse.tables import install_macros
from schemas.methods import Patterns
from schemas.patterns import (
    COLUMNS,
    PATTERNS_PATH,
    PATTERNS_SOURCE_ID,
    PatternFileError,
    read_pattern_rows,
)
from schemas.vocabulary import COMM_PATTERNS, PATTERN_ROWS, PATTERNS
from tests.helpers import copy_project, touched_files

#: A small case: N = 6 online devices, p = 1e6 parameters of b = 2 bytes, D = 1.2e7 tokens, 1,000
#: tokens a device step, 2 local steps a sync (so 1,000 syncs), hidden 512, activations of 2 bytes,
#: compression 4, S = 3 stages, a 10 MB/s link, a 2 W radio, a 3,600 s window at utilisation 0.5.
CASE = {"n": 6.0, "p": 1e6, "b": 2.0, "tokens": 1.2e7, "tps": 1000.0, "ls": 2.0, "h": 512.0, "a": 2.0, "c": 4.0, "s": 3.0,
        "mbps": 10.0, "radio_w": 2.0, "window_s": 3600.0, "util": 0.5}
#: Each pattern's bytes in the case, worked from its documented formula (sql/model/macros.sql comm_bytes).
HAND_BYTES = {
    "none": 0.0,
    "radio_window": 1000 * 6 * 1e6 * 2 / 4,  # idealized's bytes: N p b per sync
    "idealized": 1000 * 6 * 1e6 * 2 / 4,  # N p b per sync: 3 GB
    "parameter_server": 1000 * 2 * 6 * 1e6 * 2 / 4,  # push and pull, 2 N p b per sync: 6 GB
    "ring_allreduce": 1000 * 2 * 5 * 1e6 * 2 / 4,  # 2 (N - 1) p b per sync: 5 GB
    # activations and their gradients across 2 boundaries, 1.2e7 x 2 x 2 x 512 x 2 B, plus the two
    # 3-stage replicas' all-reduce 1.2e7 x 2 x 1e6 x 2 / (1,000 x 2) x (1 - 3 / 6)
    "pipeline": (1.2e7 * 2 * 2 * 512 * 2 + 1.2e7 * 2 * 1e6 * 2 / 2000 * 0.5) / 4,
    "federated_round": 1000 * 2 * 6 * 1e6 * 2 / 4,  # each client downloads and uploads, 2 N p b per round: 6 GB
    "diloco_allreduce": 1000 * 2 * 5 * 1e6 * 2 / 4,  # ring all-reduce among the nodes, 2 (N - 1) p b per outer step: 5 GB
    # the edge designs' bytes per sync (the model sets a sync to an outer step: its sync_steps)
    "diloco_server": 1000 * 2 * 6 * 1e6 * 2 / 4,  # each device pushes its pseudo-gradient and pulls the parameters: 6 GB
    "diloco_ring": 1000 * 2 * 5 * 1e6 * 2 / 4,  # a ring all-reduce between the devices: 5 GB
    "diloco_pipeline": (1.2e7 * 2 * 2 * 512 * 2 + 1.2e7 * 2 * 1e6 * 2 / 2000 * 0.5) / 4,  # the pipeline's terms
}
BYTES_SQL = ("select comm_bytes($sync_n, $sync_n_minus_1, $activations, $stage_allreduce, $n, $p, $b, $tokens, $tps, $ls, $h, $a, $c, "
             "case when $splits_model then $s end)")
RADIO_SQL = "select radio_kwh($radio_per_window, $radio_per_byte, $bytes, $mbps, $radio_w, $n, $window_s, $util)"


def _bound(sql: str, row: dict, **values: float) -> dict:
    """The case's values and the row's coefficients that ``sql`` names."""
    merged = {**CASE, **row, **values}
    return {key: value for key, value in merged.items() if re.search(rf"\${key}\b", sql)}


def test_every_vocabulary_of_patterns_is_read_from_the_rows() -> None:
    assert PATTERNS == ("none", "radio_window", "idealized", "parameter_server", "ring_allreduce", "pipeline")
    # the claims' patterns are rows too, evaluated only for a scenario that names them
    assert tuple(PATTERN_ROWS) == (*PATTERNS, "federated_round", "diloco_allreduce", "diloco_server", "diloco_ring", "diloco_pipeline")
    # the edge training designs a scenario whose frame resizes its fleet is read on
    assert [name for name, row in PATTERN_ROWS.items() if row.edge_design] == ["pipeline", "diloco_server", "diloco_ring",
                                                                                "diloco_pipeline"]
    assert PATTERN_ROWS == read_pattern_rows(SOURCES_DIR / PATTERNS_PATH)  # the vocabulary is the file's rows
    assert COMM_PATTERNS == tuple(PATTERN_ROWS)[1:]
    rows = pl.from_arrow(pattern_rows())
    Patterns.validate(rows.rename({"name": "pattern"}))
    assert rows.filter(~pl.col("moves_bytes")).get_column("name").to_list() == ["none"]
    assert rows.filter(pl.col("splits_model")).get_column("name").to_list() == ["pipeline", "diloco_pipeline"]


def test_the_shipped_rows_reproduce_each_patterns_formula() -> None:
    con = duckdb.connect()
    install_macros(con)
    rows = {row["name"]: row for row in pl.from_arrow(pattern_rows()).iter_rows(named=True)}
    assert set(rows) == set(HAND_BYTES)
    for pattern, expected in HAND_BYTES.items():
        moved = con.execute(BYTES_SQL, _bound(BYTES_SQL, rows[pattern])).fetchone()[0]
        assert moved == pytest.approx(expected, rel=1e-15), pattern
        radio = con.execute(RADIO_SQL, _bound(RADIO_SQL, rows[pattern], bytes=moved)).fetchone()[0]
        # the paper's window: 6 radios x 3,600 s x 0.5 x 2 W; a byte pattern: its bytes at 10 MB/s x 2 W (none
        # between data centres)
        hand = {"none": 0.0, "radio_window": 6 * 3600 * 0.5 * 2 / 3.6e6, "diloco_allreduce": 0.0}.get(pattern, expected / 10e6 * 2 / 3.6e6)
        assert radio == pytest.approx(hand, rel=1e-15), pattern
    assert HAND_BYTES["pipeline"] == pytest.approx(1.5288e10) and HAND_BYTES["ring_allreduce"] == 5e9


def test_a_row_of_new_coefficients_is_the_same_combination_of_the_shipped_bytes() -> None:
    """0.5 N p b + (N - 1) p b per sync moves a quarter of the parameter server's bytes and half the ring's."""
    con = duckdb.connect()
    install_macros(con)
    row = {"sync_n": 0.5, "sync_n_minus_1": 1.0, "activations": 0.0, "stage_allreduce": 0.0, "splits_model": False}
    moved = con.execute(BYTES_SQL, _bound(BYTES_SQL, row)).fetchone()[0]
    assert moved == pytest.approx(0.25 * HAND_BYTES["parameter_server"] + 0.5 * HAND_BYTES["ring_allreduce"], rel=1e-15) == 4e9


def test_the_stage_count_weighs_each_term_by_its_coefficient() -> None:
    """comm_stages: the fewest stages that hold the state where a boundary's activations outweigh a
    device's share of the all-reduce (a > d / N), else one stage per device, at most one per layer."""
    con = duckdb.connect()
    install_macros(con)
    sql = "select comm_stages($n, $p, $b, $tps, $ls, $h, $a, 24, 2, $activations, $stage_allreduce)"
    # a = 2 x 512 x 2 = 2,048 B per token; d / N = 2 x 1e6 x 2 / 2,000 / 6 = 333 B per token
    assert con.execute(sql, _bound(sql, {"activations": 1.0, "stage_allreduce": 1.0})).fetchone()[0] == 2
    # the all-reduce 10 times heavier: 3,333 B > 2,048 B, so one stage per device
    assert con.execute(sql, _bound(sql, {"activations": 1.0, "stage_allreduce": 10.0})).fetchone()[0] == 6


@pytest.mark.parametrize("pattern, change, check", [
    ("none", {"moves_bytes": True}, "moves_bytes_from_coefficients"),
    ("idealized", {"activations": 1.0}, "stages_where_split"),
    ("idealized", {"resizable": True, "splits_model": True}, "resizable_without_sync_terms"),
    ("idealized", {"sync_n": 0.0, "moves_bytes": False}, "one_compute_only"),
])
def test_the_contract_refuses_a_row_the_model_cannot_evaluate(pattern: str, change: dict, check: str) -> None:
    """A flag that disagrees with the coefficients, stage terms without stages, a resizable pattern
    with per-sync terms, a second pattern that moves nothing."""
    rows = pl.from_arrow(pattern_rows()).rename({"name": "pattern"})
    changed = rows.with_columns(*(pl.when(pl.col("pattern") == pattern).then(pl.lit(v)).otherwise(pl.col(k)).alias(k)
                                  for k, v in change.items()))
    with pytest.raises(pandera.errors.SchemaErrors) as raised:
        Patterns.validate(changed, lazy=True)
    assert check in str(raised.value.failure_cases.get_column("check").to_list())


def test_the_file_is_a_source_of_the_manifest() -> None:
    """sources/curated/patterns.csv is a manifest entry (its sha256 checked like every source's), with the
    attribution columns of a curated source, and every row names where its formula comes from."""
    (entry,) = (e for e in load_manifest() if e.id == PATTERNS_SOURCE_ID)
    assert (entry.path, entry.kind, entry.table) == (PATTERNS_PATH, "curated_patterns", "core.patterns")
    assert entry.verified_file() == SOURCES_DIR / PATTERNS_PATH
    header = (SOURCES_DIR / PATTERNS_PATH).read_text(encoding="utf-8").splitlines()[0]
    assert tuple(header.split(",")) == COLUMNS and COLUMNS[-4:] == ("status", "citation", "citation_url", "notes")


def _copy_of_sources(tmp_path: Path) -> Path:
    sources = tmp_path / "sources"
    shutil.copytree(SOURCES_DIR, sources, ignore=shutil.ignore_patterns("own"))
    return sources


#: Run with $EDGE_CARBON_SOURCES set: the names every layer validates against, as Python reads them.
NAMES_SCRIPT = ("import json; from schemas.vocabulary import PATTERNS, COMM_PATTERNS; from schemas.parameter_bounds import refusal; "
                "print(json.dumps([PATTERNS, COMM_PATTERNS, refusal('comm_pattern', 'hierarchical_allreduce')]))")


def _names(sources: Path) -> list:
    env = {**os.environ, SOURCES_ENV: str(sources)}
    done = subprocess.run([sys.executable, "-c", NAMES_SCRIPT], cwd=PROJECT_ROOT, env=env, capture_output=True, text=True,
                          timeout=120, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout)


def test_a_row_adds_a_pattern_and_removing_it_takes_it_out(tmp_path: Path) -> None:
    """The documented row, appended to a copy of the file: the loader, core.patterns and the names a
    scenario's comm_pattern is checked against (read at import, in a process of its own) all have it;
    the file as shipped again, they are as before."""
    sources = _copy_of_sources(tmp_path)
    shipped = (sources / PATTERNS_PATH).read_bytes()
    _with_row(sources, documented_row())
    rows = read_pattern_rows(sources / PATTERNS_PATH)
    assert tuple(rows) == (*PATTERN_ROWS, NEW_PATTERN)
    assert rows[NEW_PATTERN]._asdict() == {"home_ends": 2, "server_ends": 0, "sync_n": 0.5, "sync_n_minus_1": 1.0, "activations": 0.0,
                                           "stage_allreduce": 0.0, "radio_per_window": 0.0, "radio_per_byte": 1.0,
                                           "splits_model": False, "resizable": False, "every_scenario": True,
                                           "edge_design": False, "outer_sync": False, "lean_state": False}
    table = pl.from_arrow(reference_tables(rows)["core.patterns"])
    Patterns.validate(table)
    assert table.filter(pl.col("pattern") == NEW_PATTERN).get_column("moves_bytes").to_list() == [True]
    patterns, comm, refused = _names(sources)
    assert (tuple(patterns), tuple(comm), refused) == ((*PATTERNS, NEW_PATTERN), (*COMM_PATTERNS, NEW_PATTERN), None)

    (sources / PATTERNS_PATH).write_bytes(shipped)
    assert read_pattern_rows(sources / PATTERNS_PATH) == PATTERN_ROWS
    patterns, comm, refused = _names(sources)
    assert (tuple(patterns), tuple(comm)) == (PATTERNS, COMM_PATTERNS)
    assert "hierarchical_allreduce" in refused and "core.patterns" in refused


@pytest.mark.parametrize(("line", "expected"), [
    ("hierarchical_allreduce,2,0,half,1,0,0,0,1,false,false,true,false,false,false,assumed,mine,,notes\n", "line 13, column sync_n: 'half' is not a number"),
    ("hierarchical_allreduce,2,0,0.5,1,0,0,0,1,no,false,true,false,false,false,assumed,mine,,notes\n", "line 13, column splits_model: 'no' is not true or false"),
    ("hierarchical_allreduce,2,0,0.5,1,0,0,0,1,false,false,true,false,false,false,guessed,mine,,notes\n", "line 13, column status: 'guessed' fails isin"),
    ("pipeline,2,0,0.5,1,0,0,0,1,false,false,true,false,false,false,assumed,mine,,notes\n", "column pattern: 'pipeline' fails field_uniqueness"),
    ("hierarchical_allreduce,2,0,0.5,1\n", "line 13: 19 cells expected"),
])
def test_a_bad_row_is_one_line_naming_the_file_line_and_column(line: str, expected: str, tmp_path: Path) -> None:
    path = tmp_path / "patterns.csv"
    path.write_text((SOURCES_DIR / PATTERNS_PATH).read_text(encoding="utf-8") + line, encoding="utf-8")
    with pytest.raises(PatternFileError) as raised:
        read_pattern_rows(path)
    message = str(raised.value)
    assert message.startswith(f"{path}: ") and expected in message and "\n" not in message


def test_a_command_refuses_a_bad_row_in_one_line(tmp_path: Path) -> None:
    """A bad row (here a flag that is not one) is read when a command first needs the vocabulary: the
    command stops with the file's one line and exit status 2, no traceback, and writes nothing."""
    sources = _copy_of_sources(tmp_path)
    row = documented_row().replace(",false,false,", ",no,false,")
    csv_file = sources / PATTERNS_PATH
    csv_file.write_text(csv_file.read_text(encoding="utf-8") + row, encoding="utf-8")
    manifest = (sources / "manifest" / "patterns.toml").read_bytes()
    env = {**os.environ, SOURCES_ENV: str(sources)}
    for argv in (["register", "--refresh", PATTERNS_SOURCE_ID], ["scenario", "new", "x", "--extends", "paper_text", "--set",
                                                                 "edge_hours_per_day=6", "--dry-run"]):
        done = subprocess.run([sys.executable, "-c", "import sys; from pipelines.cli import main; sys.exit(main(sys.argv[1:]))", *argv],
                              cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300, check=False)
        assert done.returncode == 2, (argv, done.stderr[-2000:])
        assert done.stderr == f"{csv_file}: line 13, column splits_model: 'no' is not true or false; write true or false\n", argv
    assert (sources / "manifest" / "patterns.toml").read_bytes() == manifest


#: docs/data.md's section on adding a pattern, whose example row the copy adds as written.
DATA_DOCS_SECTION = "## A communication pattern"


def documented_row() -> str:
    """The example row of docs/data.md's :data:`DATA_DOCS_SECTION`: the text its ``bash`` block's ``echo``
    appends to sources/curated/patterns.csv."""
    text = (PROJECT_ROOT / "docs" / "data.md").read_text(encoding="utf-8")
    section = text[text.index(DATA_DOCS_SECTION):]
    section = section[:section.index("\n## ")]
    blocks = re.findall(r"```bash\n(.*?)```", section, re.DOTALL)
    assert len(blocks) == 1, f"one bash block in docs/data.md {DATA_DOCS_SECTION}"
    echo = [line for line in blocks[0].splitlines() if line.startswith("echo ")]
    assert len(echo) == 1 and echo[0].endswith(f" >> sources/{PATTERNS_PATH}")
    words = shlex.split(echo[0])
    assert words[0] == "echo" and words[2:] == [">>", f"sources/{PATTERNS_PATH}"]
    return words[1] + "\n"


def _with_row(sources: Path, row: str) -> None:
    """``row`` appended to the patterns' file of ``sources``, and its manifest entry's sha256 refreshed."""
    csv_file = sources / PATTERNS_PATH
    csv_file.write_text(csv_file.read_text(encoding="utf-8") + row, encoding="utf-8")
    manifest = sources / "manifest" / "patterns.toml"
    text = manifest.read_text(encoding="utf-8")
    old = next(e.sha256 for e in load_manifest(sources) if e.id == PATTERNS_SOURCE_ID)
    manifest.write_text(text.replace(old, sha256_file(csv_file)), encoding="utf-8")


#: The documented row: devices all-reduce with each other (two home ends) and also send half the
#: parameters once per sync, so per sync 0.5 N p b + (N - 1) p b: a quarter of the parameter
#: server's bytes and half the ring's.
NEW_PATTERN = "hierarchical_allreduce"
#: Run in the copy: build the two marts that report every pattern and print their rows.
BUILD_SCRIPT = textwrap.dedent("""
    import json, sys
    from pathlib import Path

    import duckdb

    from tests.conftest import build

    path = Path(sys.argv[1])
    result = build(path, only=["marts/distributed_training_energy", "marts/communication"])
    assert result.success, [e.step_key for e in result.all_events if e.is_step_failure]
    with duckdb.connect(str(path), read_only=True) as con:
        out = {name: con.sql(sql).pl().to_dicts() for name, sql in {
            "patterns": "select * from core.patterns",
            "table2": "select scenario_id, device_class, pattern, comm_gb, comm_kwh from marts.distributed_training_energy",
            "communication": "select scenario_id, device_class, model_id, pattern, devices, comm_gb, comm_kwh, "
                             "link_time_share, link_feasible, memory_feasible, cloud_total_kgco2e, edge_added_kgco2e, comm_kgco2e, "
                             "reduction_factor from marts.communication",
        }.items()}
    print(json.dumps(out, default=str))
""")
def by(rows: list[dict], *keys: str) -> dict[tuple, dict]:
    return {tuple(r[k] for k in keys): r for r in rows}


@pytest.mark.slow
def test_a_new_communication_pattern_by_rows_only(tmp_path: Path) -> None:
    root = tmp_path / "project"
    copy_project(root)
    row = documented_row()
    assert row.startswith(f"{NEW_PATTERN},")
    _with_row(root / "sources", row)
    assert touched_files(root) == [f"sources/{PATTERNS_PATH}", "sources/manifest/patterns.toml"]  # a row and its sha256

    env = {k: v for k, v in os.environ.items() if k != SOURCES_ENV} | {"PYTHONPATH": str(root)}
    done = subprocess.run([sys.executable, "-c", BUILD_SCRIPT, str(root / "wh" / "edge_carbon.duckdb")], cwd=root, env=env,
                          capture_output=True, text=True, timeout=600, check=False)
    assert done.returncode == 0, done.stderr[-4000:]
    out = json.loads(done.stdout.strip().splitlines()[-1])

    patterns = by(out["patterns"], "pattern")
    assert patterns[(NEW_PATTERN,)] == {
        "pattern": NEW_PATTERN, "home_ends": 2, "server_ends": 0, "sync_n": 0.5, "sync_n_minus_1": 1.0, "activations": 0.0,
        "stage_allreduce": 0.0, "radio_per_window": 0.0, "radio_per_byte": 1.0, "splits_model": False, "resizable": False,
        "every_scenario": True, "edge_design": False, "outer_sync": False, "lean_state": False, "moves_bytes": True}

    # paper Table 2's estimate: the new pattern's bytes are 0.25 x the parameter server's + 0.5 x the ring's; its
    # energy per GB is the ring's (the same ends: a device receives each byte), and where no receiving radio is
    # charged (the paper's frame) the parameter server's too, so there its energy is the same combination
    table2 = by(out["table2"], "scenario_id", "device_class", "pattern")
    new_rows = [k for k in table2 if k[2] == NEW_PATTERN]
    assert len(new_rows) == len([k for k in table2 if k[2] == "ring_allreduce"]) >= 7
    receivers_charged = set()
    for scenario, device_class, _ in new_rows:
        ps, ring, new = (table2[(scenario, device_class, p)] for p in ("parameter_server", "ring_allreduce", NEW_PATTERN))
        assert new["comm_gb"] == pytest.approx(0.25 * ps["comm_gb"] + 0.5 * ring["comm_gb"], rel=1e-12)
        assert new["comm_kwh"] / new["comm_gb"] == pytest.approx(ring["comm_kwh"] / ring["comm_gb"], rel=1e-9)
        if ring["comm_kwh"] / ring["comm_gb"] == pytest.approx(ps["comm_kwh"] / ps["comm_gb"], rel=1e-9):
            assert new["comm_kwh"] == pytest.approx(0.25 * ps["comm_kwh"] + 0.5 * ring["comm_kwh"], rel=1e-12)
        else:  # the receiving device's radio: more energy per GB than the parameter server's, whose bytes end at a server
            assert ring["comm_kwh"] / ring["comm_gb"] > ps["comm_kwh"] / ps["comm_gb"]
            receivers_charged.add(scenario)
    assert receivers_charged == {"realistic_attributional", "realistic_consequential"}

    # the model (marts.communication, every pattern): the same fleet moves the same combination, its
    # link and R follow, and its energy per GB is the ring's (the same radio per byte and ends)
    rows = by(out["communication"], "scenario_id", "device_class", "model_id", "pattern")
    new_rows = [k for k in rows if k[3] == NEW_PATTERN]
    assert len(new_rows) == len([k for k in rows if k[3] == "ring_allreduce"]) >= 50
    feasible = set()
    for scenario, device_class, model_id, _ in new_rows:
        ps, ring, none, new = (rows[(scenario, device_class, model_id, p)] for p in ("parameter_server", "ring_allreduce", "none", NEW_PATTERN))
        assert new["devices"] == ring["devices"] == ps["devices"]
        assert new["comm_gb"] == pytest.approx(0.25 * ps["comm_gb"] + 0.5 * ring["comm_gb"], rel=1e-12)
        assert new["link_time_share"] == pytest.approx(0.25 * ps["link_time_share"] + 0.5 * ring["link_time_share"], rel=1e-12)
        assert new["link_feasible"] == (new["link_time_share"] <= 1 + 1e-9)
        assert new["memory_feasible"] == ring["memory_feasible"]  # every device holds the whole state, as in a ring
        if ring["comm_gb"] > 0:  # the radio at the link rate and the network per GB at the ring's ends
            assert new["comm_kwh"] / new["comm_gb"] == pytest.approx(ring["comm_kwh"] / ring["comm_gb"], rel=1e-9)
        assert new["reduction_factor"] == pytest.approx(none["cloud_total_kgco2e"] / (none["edge_added_kgco2e"] + new["comm_kgco2e"]),
                                                        rel=1e-12)
        feasible.add(new["link_feasible"])
    assert feasible == {True, False}, "the new pattern is feasible on some fleets' links and not on others"
