"""``edge-carbon sql`` as a new user meets it: a missing warehouse (or a folder in its place) is
refused in one line naming the fix, a table that does not exist draws the closest existing names,
schema-qualified, and no output format cuts text (the table wraps it, or prints one block per row)."""

from __future__ import annotations

from pathlib import Path

import duckdb
import polars as pl
import pytest

from pipelines import paths
from pipelines.cli import main
from pipelines.paths import WAREHOUSE_ENV
from pipelines.warehouse.sql_query import (
    NARROWEST_TEXT,
    WAREHOUSE_FILE,
    closest,
    fits,
    missing_relation,
    records_text,
    table_text,
    warehouse_refusal,
)

#: A reason longer than any grid column: 60 distinct words.
LONG = " ".join(f"word{i:02d}" for i in range(60))
#: Twelve short columns and the long reason: too wide for a grid of 100 characters.
WIDE = ("select 'a_value' as column_a, 'b_value' as column_b, 'c_value' as column_c, 'd_value' as column_d, "
        "'e_value' as column_e, 'f_value' as column_f, 'g_value' as column_g, 'h_value' as column_h, 'i_value' as column_i, "
        "'j_value' as column_j, 'k_value' as column_k, 'l_value' as column_l, reason from quarantine.rejected_rows")
#: The relations of the small warehouse below, as DuckDB lists them.
RELATIONS = ["core.verdicts", "marts.claims", "marts.sources", "marts.verdict", "quarantine.rejected_rows", "staging.sources"]


@pytest.fixture
def small(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A small warehouse file with the names the did-you-mean is tested on, as $EDGE_CARBON_WAREHOUSE."""
    path = tmp_path / WAREHOUSE_FILE
    with duckdb.connect(str(path)) as con:
        for schema in ("staging", "quarantine", "core", "marts"):
            con.execute(f"create schema {schema}")
        con.execute("create table marts.verdict as select 'laptop' as device_class, 0.11 as r")
        con.execute("create table core.verdicts as select 'edge emits more' as verdict")
        con.execute("create table marts.claims as select 1 as claim")
        con.execute("create table staging.sources as select 'boavizta_pcf' as source_id")
        con.execute("create view marts.sources as select * from staging.sources")
        con.execute("create table quarantine.rejected_rows as select $reason as reason, 100 as source_row", {"reason": LONG})
    monkeypatch.setenv(WAREHOUSE_ENV, str(path))
    monkeypatch.setenv("COLUMNS", "100")
    return path


# -- a missing warehouse, or a folder in its place ---------------------------------------------


def test_a_missing_warehouse_is_one_line_naming_make_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                         capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "none" / WAREHOUSE_FILE
    monkeypatch.setenv(WAREHOUSE_ENV, str(path))
    assert main(["sql", "select 1"]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err == (f"edge-carbon sql: no warehouse at {path}; run `make run` first "
                            f"(with {WAREHOUSE_ENV}={path} set, it builds there)\n")
    assert not path.exists() and not path.parent.exists()  # nothing created on the way


def test_the_default_warehouse_missing_names_make_run_alone(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "warehouse" / WAREHOUSE_FILE
    monkeypatch.delenv(WAREHOUSE_ENV, raising=False)
    monkeypatch.setattr(paths, "DEFAULT_WAREHOUSE", path)
    assert main(["sql", "select 1"]) == 2
    assert capsys.readouterr().err == f"edge-carbon sql: no warehouse at {path}; run `make run` first\n"


def test_a_folder_named_as_the_warehouse_says_which_file_was_expected(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                       capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv(WAREHOUSE_ENV, str(tmp_path))
    assert main(["sql", "select 1"]) == 2
    err = capsys.readouterr().err
    assert err == (f"edge-carbon sql: {WAREHOUSE_ENV}={tmp_path} is a folder; it must name the warehouse's DuckDB file, "
                   f"e.g. {WAREHOUSE_ENV}={tmp_path / WAREHOUSE_FILE}\n")
    # the default path a folder: the file it should be, and what to do
    folder = tmp_path / WAREHOUSE_FILE
    folder.mkdir()
    assert warehouse_refusal(folder, overridden=False) == (
        f"{folder} is a folder, where the warehouse's DuckDB file {WAREHOUSE_FILE} was expected; move the folder away, then run `make run`")
    assert warehouse_refusal(tmp_path / "x.duckdb", overridden=False) == f"no warehouse at {tmp_path / 'x.duckdb'}; run `make run` first"


def test_a_file_that_is_no_database_is_one_line_too(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / WAREHOUSE_FILE
    path.write_text("not a database\n", encoding="utf-8")
    monkeypatch.setenv(WAREHOUSE_ENV, str(path))
    assert main(["sql", "select 1"]) == 1
    err = capsys.readouterr().err
    assert err.startswith(f"edge-carbon sql: cannot open the warehouse at {path}: ") and "Traceback" not in err


# -- did you mean: the closest existing names, schema-qualified ------------------------------------


def test_a_misspelt_table_draws_the_closest_existing_names(small: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["sql", "select * from marts.verdicts"]) == 1
    err = capsys.readouterr().err
    assert err == ("query failed: Catalog Error: Table with name verdicts does not exist! "
                   "Did you mean marts.verdict? (also close: core.verdicts)\n")
    # a schema that does not exist
    assert main(["sql", "select * from mart.verdict"]) == 1
    assert capsys.readouterr().err.endswith("Did you mean marts.verdict? (also close: core.verdicts)\n")
    # no schema written: the bare names are compared, the answer is qualified
    assert main(["sql", "select * from verdicts"]) == 1
    assert capsys.readouterr().err.endswith("Did you mean core.verdicts? (also close: marts.verdict)\n")
    # in a join, the table that is missing
    assert main(["sql", "select * from marts.claims as c join staging.source as s on true"]) == 1
    assert capsys.readouterr().err.endswith("Did you mean staging.sources? (also close: marts.sources)\n")
    # nothing close: how to list every table instead of a wild guess
    assert main(["sql", "select * from marts.zzzzqqq"]) == 1
    assert "No table or view has a name close to it; every one: edge-carbon sql" in capsys.readouterr().err


def test_other_errors_keep_duckdbs_words(small: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["sql", "select nope from marts.verdict"]) == 1
    err = capsys.readouterr().err
    assert err.startswith('query failed: Binder Error: Referenced column "nope" not found') and "Did you mean marts" not in err


@pytest.mark.parametrize("schema, name, expected", [
    ("marts", "verdicts", ["marts.verdict", "core.verdicts"]),
    ("main", "verdict", ["marts.verdict", "core.verdicts"]),
    ("", "claim", ["marts.claims"]),
    ("marts", "source", ["marts.sources", "staging.sources"]),
    ("marts", "rejected", ["quarantine.rejected_rows"]),
    ("marts", "zzzzqqq", []),
])
def test_closest_ranks_the_name_then_the_schema(schema: str, name: str, expected: list[str]) -> None:
    assert closest(schema, name, RELATIONS) == expected


@pytest.mark.parametrize("message, expected", [
    ('Catalog Error: Table with name verdicts does not exist!\nDid you mean "core.verdicts"?', ("", "verdicts")),
    ('Catalog Error: Table with name "mart.verdict" does not exist because schema "mart" does not exist.', ("mart", "verdict")),
    ('Catalog Error: Table Function with name duckdb_tabless does not exist!', None),
    ('Binder Error: Referenced column "x" not found in FROM clause!', None),
])
def test_the_missing_name_is_read_from_duckdbs_message(message: str, expected: tuple[str, str] | None) -> None:
    assert missing_relation(message) == expected


# -- no format cuts text -------------------------------------------------------------------------


def test_the_table_wraps_long_text_in_full(small: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["sql", "select reason, source_row from quarantine.rejected_rows"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("shape: (1, 2)\n")
    words = [w for line in out.splitlines() for w in line.replace("│", " ").replace("┆", " ").split() if w.startswith("word")]
    assert words == LONG.split()  # every word, in order, none cut
    assert "…" not in out
    assert max(len(line) for line in out.splitlines()) <= 100


def test_a_result_too_wide_for_a_grid_prints_one_block_per_row(small: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["sql", WIDE]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0] == "shape: (1, 13); one block per row (too wide for a table of 100 characters)"
    assert out[1].startswith("-[ row 1 ]---")
    assert out[2] == "column_a  a_value" and out[13] == "column_l  l_value"
    assert [w for line in out[14:] for w in line.split() if w.startswith("word")] == LONG.split()
    assert max(len(line) for line in out) <= 100


def test_csv_json_and_markdown_keep_long_text_whole(small: Path, capsys: pytest.CaptureFixture[str]) -> None:
    query = "select reason from quarantine.rejected_rows"
    assert main(["sql", query, "--format", "csv"]) == 0
    assert capsys.readouterr().out == f"reason\n{LONG}\n"
    assert main(["sql", query, "--format", "json"]) == 0
    assert capsys.readouterr().out == f'[{{"reason":"{LONG}"}}]\n'
    assert main(["sql", query, "--format", "markdown"]) == 0
    assert capsys.readouterr().out == f"| reason |\n|---|\n| {LONG} |\n"


def test_the_table_says_how_many_rows_it_left_out(small: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["sql", "select range as n from range(100)", "--limit", "10"]) == 0
    captured = capsys.readouterr()
    assert captured.out.startswith("shape: (100, 1)")
    assert captured.err == "(10 of 100 rows; --limit N shows more)\n"


def test_fits_and_records_text() -> None:
    narrow = pl.DataFrame({"name": ["a"], "text": [LONG]})
    assert fits(narrow, 40)  # the text wraps to 16 characters and more
    assert not fits(narrow, 4 + 3 + NARROWEST_TEXT + 3)
    wide = pl.DataFrame({f"column_{i}": ["v"] for i in range(10)})
    assert not fits(wide, 80) and fits(wide, 120)
    assert records_text(pl.DataFrame({"a": [1, None], "long_name": ["x\ny", "z"]}), 30).splitlines() == [
        "-[ row 1 ]--------------------", "a          1", "long_name  x", "           y",
        "-[ row 2 ]--------------------", "a          null", "long_name  z",
    ]
    # polars' grid, every character of a cell longer than polars' default of 32
    text = table_text(pl.DataFrame({"t": ["x" * 70]}), 40, 100)
    assert "x" * 70 in text and "…" not in text
