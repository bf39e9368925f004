"""docs/claims.md as written, on a copy of this checkout's sources (the working tree, not HEAD): a shipped claim
taken out and added again by rows alone leaves the registry's files byte for byte as shipped and reaches
marts.claims with the value worked by hand, the other claims' rows as they were; taking it out again leaves
the files and the mart as after the first removal."""

from __future__ import annotations

import re
import shlex
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path

import duckdb
import pytest

from pipelines.cli import main
from pipelines.paths import PROJECT_ROOT, SOURCES_DIR, SOURCES_ENV, WAREHOUSE_ENV

CLAIMS_DOCS = PROJECT_ROOT / "docs" / "claims.md"
EDGE_CARBON = ".venv/bin/edge-carbon"
#: The sections with a bash block, in order: read-only queries, the example's addition, its removal.
SECTIONS = ["Auditing a claim", "Adding a claim", "Taking it out again"]
NEW_CLAIM = "douillard2023_bandwidth_500x"
#: What the copy's files must be again after "Taking it out again".
WATCHED = ("curated/claims.csv", "curated/claim_parameters.csv", "manifest/claims.toml")


def shell_blocks() -> list[tuple[str, str]]:
    """(section, text) of every ``bash`` block of docs/claims.md, in order."""
    out = []
    for section in CLAIMS_DOCS.read_text(encoding="utf-8").split("\n## ")[1:]:
        title, _, body = section.partition("\n")
        out += [(title, block) for block in body.split("```bash\n")[1:]]
    return [(title, block.split("```", 1)[0]) for title, block in out]


def commands(block: str) -> list[str]:
    """A block's commands: a here-document whole (to its ``EOF``), other lines with their continuations joined."""
    lines, out, i = block.splitlines(), [], 0
    while i < len(lines):
        line = lines[i]
        if "<<'EOF'" in line:
            end = lines.index("EOF", i + 1)
            out.append("\n".join(lines[i:end + 1]) + "\n")
            i = end + 1
            continue
        while line.endswith("\\"):
            i += 1
            line = line[:-1].rstrip() + " " + lines[i].strip()
        if line.strip():
            out.append(line.strip())
        i += 1
    return out


def run_as_written(command: str, project: Path, make_run: Callable[[], None]) -> None:
    """``edge-carbon`` in this process (status 0), ``make run`` as ``make_run``, anything else in ``bash -e`` at the project root."""
    if command.startswith(EDGE_CARBON + " "):
        assert main(shlex.split(command)[1:]) == 0, command
    elif command == "make run":
        make_run()
    else:
        subprocess.run(["bash", "-e", "-o", "pipefail", "-c", command], cwd=project, check=True)


def test_the_blocks_are_the_ones_the_test_runs() -> None:
    """Three blocks: queries that change nothing, the addition (rows, refresh, claim new, build, query), the removal."""
    blocks = shell_blocks()
    assert [title for title, _ in blocks] == SECTIONS
    audit, add, undo = (commands(block) for _, block in blocks)
    assert all(c.startswith(f"{EDGE_CARBON} sql ") for c in audit)
    remove = f"{EDGE_CARBON} claim remove {NEW_CLAIM} --with-parameters"
    assert add[0] == remove
    assert [c.split(" ", 2)[:2] for c in add[2:4]] == [[EDGE_CARBON, "register"], [EDGE_CARBON, "claim"]]
    assert add[1].startswith("cat >> sources/curated/claim_parameters.csv <<'EOF'\n") and add[4] == "make run"
    assert undo == [remove, "make run"]
    for command in [*audit, add[0], *add[2:], *undo]:  # no path outside the project: no ~, no absolute path
        assert not re.search(r"(^|\s)[~/]", command), command


def _claims(warehouse: Path) -> dict[str, dict]:
    with duckdb.connect(str(warehouse), read_only=True) as con:
        frame = con.execute("select * from marts.claims order by claim_id")
        names = [d[0] for d in frame.description]
        return {row[0]: dict(zip(names, row, strict=True)) for row in frame.fetchall()}


@pytest.mark.slow  # four builds of marts.claims and what it reads (about 30 s each)
def test_the_claims_docs_run_as_written_and_add_a_claim_by_rows_alone(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """docs/claims.md's blocks in order, in a copy of sources/, ``make run`` as a build of marts.claims: the shipped
    DiLoCo claim taken out and added again as the docs write it gives the shipped files back, byte for byte.

    The added claim, worked by hand: both cases are the diloco_allreduce ring all-reduce, 2 (N - 1) p b /
    compression per synchronisation = 2 x 7 x 150,000,000 x 4 B / 1 = 8.4e9 B. DiLoCo synchronises
    tokens / (N x tokens per step x local steps) = 268,435,456,000 / (8 x 524,288 x 500) = 128 times:
    1.0752e12 B = 1.0752 TB; the synchronous baseline, one step per synchronisation, 64,000 times:
    5.376e14 B = 537.6 TB. The bandwidth ratio is 537.6 / 1.0752 = 500 exactly, at every range end (no row
    has a range), against a published 500x: relative error 0, reproduced within the 1% tolerance.
    """
    from tests.conftest import build

    project = tmp_path / "project"
    shutil.copytree(SOURCES_DIR, project / "sources", ignore=shutil.ignore_patterns("own"))
    warehouse = tmp_path / "wh" / "edge_carbon.duckdb"
    monkeypatch.setenv(SOURCES_ENV, str(project / "sources"))
    monkeypatch.setenv(WAREHOUSE_ENV, str(warehouse))
    monkeypatch.chdir(project)
    shipped = {name: (project / "sources" / name).read_bytes() for name in WATCHED}

    def make_run() -> None:
        result = build(warehouse, only=["marts/claims"])
        assert result.success, [e.step_key for e in result.all_events if e.is_step_failure]

    make_run()
    before = _claims(warehouse)
    assert NEW_CLAIM in before
    (_, audit), (_, add), (_, undo) = shell_blocks()
    for command in commands(audit):
        run_as_written(command, project, make_run)
    removal, *replay = commands(add)
    run_as_written(removal, project, make_run)
    removed = {name: (project / "sources" / name).read_bytes() for name in WATCHED}
    assert removed != shipped
    for command in replay:
        run_as_written(command, project, make_run)
    assert {name: (project / "sources" / name).read_bytes() for name in WATCHED} == shipped  # as shipped, byte for byte

    after = _claims(warehouse)
    assert after == before
    row = after.pop(NEW_CLAIM)
    assert (row["quantity"], row["published_low"], row["published_high"], row["case_id"]) == ("bandwidth_ratio", 500.0, 500.0,
                                                                                             "douillard2023_diloco")
    assert row["recomputed_value"] == pytest.approx(500.0, rel=1e-12)
    assert (row["recomputed_low"], row["recomputed_high"]) == (pytest.approx(500.0, rel=1e-12), pytest.approx(500.0, rel=1e-12))
    assert row["relative_error"] == pytest.approx(0.0, abs=1e-12) and row["status"] == "reproduced"
    with duckdb.connect(str(warehouse), read_only=True) as con:
        tb = dict(con.execute("select scenario_id, any_value(wan_tb) from marts.claim_traffic where range_end = 'central' "
                              "and scenario_id like 'douillard2023_%' group by all").fetchall())
    assert tb == {"douillard2023_diloco": pytest.approx(1.0752), "douillard2023_synchronous": pytest.approx(537.6)}

    for command in commands(undo):
        run_as_written(command, project, make_run)
    assert {name: (project / "sources" / name).read_bytes() for name in WATCHED} == removed
    assert _claims(warehouse) == after  # every other claim's row as it was
