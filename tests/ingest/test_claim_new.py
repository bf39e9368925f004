"""``edge-carbon claim new`` and ``edge-carbon claim remove`` on a copy of the sources: a refusal is
one line and writes nothing, a dry run writes nothing, and remove undoes new byte for byte."""

from __future__ import annotations

import hashlib
import shutil
import tomllib
from pathlib import Path

import pytest

from pipelines.cli import main
from pipelines.ingest.registration import refresh
from pipelines.paths import SOURCES_DIR, SOURCES_ENV

CLAIMS = "curated/claims.csv"
PARAMETERS = "curated/claim_parameters.csv"
MANIFEST = "manifest/claims.toml"
WATCHED = (CLAIMS, PARAMETERS, MANIFEST)
#: The line a new claim takes: after the header and every shipped claim (one line each).
LINE = len((SOURCES_DIR / CLAIMS).read_text(encoding="utf-8").splitlines()) + 1
#: A bandwidth_ratio claim on the two shipped INTELLECT-1 cases.
GOOD = ["claim", "new", "example2030_bandwidth_5x", "--paper", "Example et al. 2030", "--title", "A title", "--quantity",
        "bandwidth_ratio", "--value", "5", "--unit", "x", "--quote", "We communicate 5x less.", "--url", "https://example.org/paper",
        "--location", "Abstract", "--case", "intellect1_diloco", "--baseline-case", "intellect1_data_parallel"]


@pytest.fixture
def sources(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A copy of the sources (the registry files as the checkout has them, their sha256 recorded); the current directory."""
    root = tmp_path / "sources"
    shutil.copytree(SOURCES_DIR, root, ignore=shutil.ignore_patterns("own"))
    monkeypatch.setenv(SOURCES_ENV, str(root))
    monkeypatch.chdir(tmp_path)
    refresh("curated_claims")
    refresh("curated_claim_parameters")
    return root


def _bytes(sources: Path) -> dict[str, bytes]:
    return {name: (sources / name).read_bytes() for name in WATCHED}


def _run(capsys: pytest.CaptureFixture[str], argv: list[str]) -> tuple[int, str, str]:
    code = main(argv)
    out, err = capsys.readouterr()
    return code, out, err


def _with(argv: list[str], flag: str, value: str | None) -> list[str]:
    """``argv`` with ``flag``'s value replaced (``value`` None: the flag left out), or the flag added."""
    if flag not in argv:
        return [*argv, flag, value] if value is not None else argv
    i = argv.index(flag)
    return [*argv[:i], *([flag, value] if value is not None else []), *argv[i + 2:]]


def _recorded(sources: Path, source_id: str) -> str:
    data = tomllib.loads((sources / MANIFEST).read_text(encoding="utf-8"))
    return next(raw["sha256"] for raw in data["source"] if raw["id"] == source_id)


def test_a_dry_run_prints_the_row_and_writes_nothing(sources: Path, capsys: pytest.CaptureFixture[str]) -> None:
    before = _bytes(sources)
    code, out, err = _run(capsys, [*GOOD, "--dry-run"])
    assert (code, err) == (0, "")
    first, header, row = out.splitlines()
    assert first.startswith("# dry run: this row would be appended to sources/curated/claims.csv") and first.endswith("nothing was written")
    assert header == (sources / CLAIMS).read_text(encoding="utf-8").splitlines()[0]
    assert row.startswith("example2030_bandwidth_5x,Example et al. 2030,A title,https://example.org/paper,We communicate 5x less.,Abstract,"
                          "bandwidth_ratio,x,5,5,5x,0.05,intellect1_diloco,intellect1_data_parallel,")
    assert _bytes(sources) == before


REFUSALS = {
    "a url that is no link": (("--url", "ftp://example.org"), f"line {LINE}, column citation_url: failed check str_startswith('http')"),
    "a negative tolerance": (("--tolerance", "-1"), f"line {LINE}, column tolerance: must be >= 0"),
    "an id in capitals": (("new", None), None),  # replaced below: the id is positional
    "an unknown quantity": (("--quantity", "bandwidth"), f"line {LINE}, column quantity: must be one of"),
    "a range upside down": (("--value", None), None),  # replaced below: --low 9 --high 3
    "a number that is none": (("--value", "five"), "claim new: --value 'five' is not a number"),
    "a case with no rows": (("--case", "intellect2_diloco"), "claim new: case 'intellect2_diloco' has no rows in "
                                                              "sources/curated/claim_parameters.csv (did you mean 'intellect1_diloco'?)"),
    "a case without a pattern": (("--case", "wiesner2026_curtailment"), "case 'wiesner2026_curtailment' of "
                                                                         "sources/curated/claim_parameters.csv has no comm_pattern"),
    "no baseline": (("--baseline-case", None), "give --baseline-case CASE"),
    "a line break": (("--quote", "two\nlines"), "claim new: column quote: the value has a line break"),
}


def _refused_argv(name: str) -> tuple[list[str], str]:
    (flag, value), expected = REFUSALS[name]
    if name == "an id in capitals":
        return [*GOOD[:2], "Example2030", *GOOD[3:]], f"line {LINE}, column claim_id: must match '^[a-z][a-z0-9_]*$'"
    if name == "a range upside down":
        return [*_with(GOOD, "--value", None), "--low", "9", "--high", "3"], f"line {LINE}, check ordered_bounds: published_low <= published_high"
    assert expected is not None
    return _with(GOOD, flag, value), expected


@pytest.mark.parametrize("name", list(REFUSALS))
def test_a_bad_claim_is_refused_in_one_line_and_nothing_is_written(name: str, sources: Path, capsys: pytest.CaptureFixture[str]) -> None:
    argv, expected = _refused_argv(name)
    before = _bytes(sources)
    for dry in ([], ["--dry-run"]):
        code, out, err = _run(capsys, [*argv, *dry])
        assert (code, out) == (2, ""), err
        assert err.count("\n") == 1 and err.startswith("claim new: ") and expected in err, err
    assert _bytes(sources) == before


def test_an_existing_id_and_a_scenario_that_is_none_are_refused(sources: Path, capsys: pytest.CaptureFixture[str]) -> None:
    before = _bytes(sources)
    code, _, err = _run(capsys, [*GOOD[:2], "jaghouar2024_bandwidth_400x", *GOOD[3:]])
    assert code == 2 and err == ("claim new: claim 'jaghouar2024_bandwidth_400x' already exists in sources/curated/claims.csv; choose "
                                 "another ID (or edit that row, then run edge-carbon register --refresh curated_claims)\n")
    reduction = [*_with(_with(GOOD, "--quantity", "reduction_factor"), "--baseline-case", None)]
    code, _, err = _run(capsys, _with(reduction, "--case", "paper_txt"))
    assert code == 2 and err.startswith("claim new: --case paper_txt: a reduction_factor claim is recomputed on a registered scenario, "
                                        "and 'paper_txt' is none (did you mean 'paper_text'?)")
    assert _bytes(sources) == before


def test_new_then_remove_leaves_the_files_byte_for_byte(sources: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """new appends one line and records the file's sha256; remove takes the line out and records the old sha256 again."""
    before = _bytes(sources)
    code, out, err = _run(capsys, GOOD)
    assert (code, err) == (0, ""), err
    assert out.startswith(f"added claim example2030_bandwidth_5x to sources/curated/claims.csv (line {LINE}); curated_claims: sha256 ")
    after = (sources / CLAIMS).read_bytes()
    assert after.startswith(before[CLAIMS]) and after[len(before[CLAIMS]):].count(b"\n") == 1
    assert _recorded(sources, "curated_claims") == hashlib.sha256(after).hexdigest()
    code, out, err = _run(capsys, ["claim", "remove", "example2030_bandwidth_5x", "--dry-run"])
    assert (code, err) == (0, "") and out.startswith("# dry run: would remove claim example2030_bandwidth_5x")
    assert (sources / CLAIMS).read_bytes() == after
    code, out, err = _run(capsys, ["claim", "remove", "example2030_bandwidth_5x"])
    assert (code, err) == (0, ""), err
    assert _bytes(sources) == before


def test_remove_with_parameters_takes_the_cases_rows_no_other_claim_names(sources: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Two cases appended by hand (as docs/claims.md does), a claim on them, then remove --with-parameters: both
    files and the manifest as before. Cases another claim still names stay."""
    before = _bytes(sources)
    shipped = (sources / PARAMETERS).read_text(encoding="utf-8")
    rows = [line.replace("intellect1_", "example_") for line in shipped.splitlines(keepends=True) if line.startswith("intellect1_")]
    with (sources / PARAMETERS).open("a", encoding="utf-8", newline="") as handle:
        handle.write("".join(rows))
    code, _, err = _run(capsys, _with(GOOD, "--case", "example_diloco"))
    assert code == 2 and "has changed since manifest/claims.toml recorded its sha256" in err and "--refresh curated_claim_parameters" in err
    refresh("curated_claim_parameters")
    edited = _bytes(sources)
    assert _run(capsys, _with(_with(GOOD, "--case", "example_diloco"), "--baseline-case", "example_data_parallel"))[0] == 0
    code, out, _ = _run(capsys, ["claim", "remove", "example2030_bandwidth_5x"])  # without: the rows stay
    assert code == 0 and _bytes(sources) == edited
    assert _run(capsys, _with(_with(GOOD, "--case", "example_diloco"), "--baseline-case", "intellect1_data_parallel"))[0] == 0
    code, out, err = _run(capsys, ["claim", "remove", "example2030_bandwidth_5x", "--with-parameters"])
    assert (code, err) == (0, "")
    assert f"removed {len(rows) // 2} parameter row(s) of example_diloco from sources/curated/claim_parameters.csv" in out
    assert (sources / PARAMETERS).read_text(encoding="utf-8") == shipped + "".join(r for r in rows if r.startswith("example_data_parallel"))
    assert _run(capsys, _with(GOOD, "--baseline-case", "example_data_parallel"))[0] == 0
    assert _run(capsys, ["claim", "remove", "example2030_bandwidth_5x", "--with-parameters"])[0] == 0
    assert _bytes(sources) == before  # intellect1_diloco stays: jaghouar2024_bandwidth_400x names it


def test_a_bad_parameter_row_is_refused_by_claim_new(sources: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A row appended by hand with a status that is none: claim new names the file, line and column."""
    shipped = (sources / PARAMETERS).read_text(encoding="utf-8")
    line = len(shipped.splitlines()) + 1
    with (sources / PARAMETERS).open("a", encoding="utf-8", newline="") as handle:
        handle.write("example_diloco,comm_pattern,,diloco_allreduce,,,name,,guessed,mine,,why\n")
    refresh("curated_claim_parameters")
    before = _bytes(sources)
    code, out, err = _run(capsys, _with(GOOD, "--case", "example_diloco"))
    assert (code, out) == (2, "")
    assert err.startswith(f"claim new: sources/curated/claim_parameters.csv, line {line}, column status: ") and err.count("\n") == 1
    assert _bytes(sources) == before


def test_remove_refuses_an_unknown_claim_in_one_line(sources: Path, capsys: pytest.CaptureFixture[str]) -> None:
    before = _bytes(sources)
    code, out, err = _run(capsys, ["claim", "remove", "jaghouar2024_bandwidth_40x"])
    assert (code, out) == (2, "") and err.count("\n") == 1
    assert err.startswith("claim remove: no claim 'jaghouar2024_bandwidth_40x' in sources/curated/claims.csv "
                          "(did you mean 'jaghouar2024_bandwidth_400x'?)")
    assert _bytes(sources) == before
