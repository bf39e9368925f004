"""Property tests for the grid parsers: arbitrary or mutated input never crashes them.

The only exception a parser (and the validation after it) may raise is SourceParseError, and
when a file does parse, every data line or record is accounted for: it gave a row, a reject,
or both. Nothing is silently dropped.
"""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path
from typing import Any

import polars as pl
import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from pipelines.defs.assets.staging_tables import GRID_INTENSITY
from pipelines.errors import SourceParseError
from pipelines.ingest.parsers.electricitymaps import parse_electricitymaps_payload
from pipelines.ingest.parsers.uk_carbon_intensity import parse_uk_ci_payload
from pipelines.ingest.quarantine import split_valid
from pipelines.ingest.staging import Parsed, Staged, parse_entry, validate_parsed
from pipelines.paths import SOURCES_DIR
from schemas.grid_intensity import GridIntensity
from schemas.meta import conform
from tests.helpers import entry_for, examples

PARSERS, TABLE = GRID_INTENSITY.parsers, GRID_INTENSITY.table

FAST = settings(max_examples=examples(100), deadline=None, suppress_health_check=[HealthCheck.too_slow])
FEWER = settings(max_examples=examples(50), deadline=None, suppress_health_check=[HealthCheck.too_slow])

OPTIONS: dict[str, dict[str, Any]] = {
    "ember_yearly": {"fetched_at": dt.date(2026, 11, 29)},
    "ember_monthly": {"fetched_at": dt.date(2026, 11, 29)},
    "ember_us_states": {"fetched_at": dt.date(2026, 11, 29)},
    "neso_csv": {"fetched_at": dt.date(2026, 11, 29)},
    "electricitymaps_csv": {"fetched_at": dt.date(2026, 11, 29), "country_iso3": "DEU"},
    "eia930_csv": {
        "fetched_at": dt.date(2026, 11, 29), "zone": "US-CAL-CISO-PROD", "zone_name": "CISO", "timestamp_marks": "hour_end",
    },
    "uk_ci_json": {"fetched_at": "2023-03-15T12:01:00Z"},
    "electricitymaps_json": {"fetched_at": "2024-12-01T05:44:26Z", "emission_factor_type": "lifecycle"},
}
SAMPLES = {
    "ember_yearly": "grid/ember/api_country_overview_yearly.csv",
    "ember_monthly": "grid/ember/api_country_overview_monthly.csv",
    "ember_us_states": "grid/ember/api_overview_usa_yearly.csv",
    "neso_csv": "grid/neso/neso_2023_national_intensity.csv",
    "electricitymaps_csv": "grid/electricitymaps_hourly/DE_2023_hourly.csv",
    "eia930_csv": "grid/eia930/CISO_NG_avgCI.csv",
}
CSV_KINDS = sorted(SAMPLES)
JSON_KINDS = ["uk_ci_json", "electricitymaps_json"]


def _head(kind: str, lines: int = 7) -> list[str]:
    """The header and the first data lines of the shipped file (LF-terminated, no quotes)."""
    with (SOURCES_DIR / SAMPLES[kind]).open(encoding="utf-8") as handle:
        return [next(handle).rstrip("\r\n") for _ in range(lines)]


HEADS = {kind: _head(kind) for kind in CSV_KINDS}


@pytest.fixture(scope="module")
def workdir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("grid_properties")


def stage_bytes(folder: Path, kind: str, content: bytes) -> Staged | None:
    """Parse and validate like the pipeline; None when the file is rejected as a whole."""
    path = folder / f"{kind}.input"
    path.write_bytes(content)
    entry = entry_for(path, kind=kind, table=TABLE, options=OPTIONS[kind])
    try:
        staged = validate_parsed(TABLE, GridIntensity, [(entry, parse_entry(entry, PARSERS[kind]))], run_id="property")
    except SourceParseError as exc:
        assert str(path) in str(exc)  # the error names the file
        event("whole file rejected")
        return None
    event(f"parsed: {'some' if staged.frame.height else 'no'} rows, {'some' if staged.rejects.height else 'no'} rejects")
    return staged


def validate_payload(parsed: Parsed) -> None:
    """Conform and validate a payload's rows; only SourceParseError may escape."""
    event(f"payload rows: {'some' if parsed.frame.height else 'none'}")
    if parsed.frame.height == 0:
        return
    frame = parsed.frame.with_columns(pl.lit("live").alias("source_id"), pl.lit("live").alias("source_file"))
    try:
        split_valid(GridIntensity, conform(GridIntensity, frame), file="live")
    except pl.exceptions.PolarsError as exc:  # conform failing is reported by validate_parsed as SourceParseError
        raise AssertionError(f"conform failed on parser output: {exc}") from exc


def accounted_lines(staged: Staged) -> set[int]:
    rows = set(staged.frame.get_column("source_row").to_list())
    return rows | {r for r in staged.rejects.get_column("source_row").to_list() if r is not None}


# --- Arbitrary input ----------------------------------------------------------------------------


@FAST
@given(kind=st.sampled_from(CSV_KINDS + JSON_KINDS), content=st.binary(max_size=400))
def test_arbitrary_bytes_only_raise_source_parse_error(workdir: Path, kind: str, content: bytes) -> None:
    stage_bytes(workdir, kind, content)


CELL_TEXT = st.text(alphabet=st.characters(codec="utf-8", exclude_characters="\r"), max_size=300)


@FEWER
@given(kind=st.sampled_from(CSV_KINDS), body=CELL_TEXT)
def test_valid_header_then_arbitrary_text(workdir: Path, kind: str, body: str) -> None:
    stage_bytes(workdir, kind, (HEADS[kind][0] + "\n" + body).encode("utf-8"))


# --- Mutations of valid files -------------------------------------------------------------------

NASTY = ["", " ", "nan", "-inf", "inf", "1e309", "-1", "0", "0.0", "2001", "abc", "NULL", "true", "TRUE", "\u0662\u0660",
         "2023-02-30 00:00:00+00:00", "2023-01-01 00:00:00+14:00", "2023-01-01T00:00Z", "9999-12-31 23:59:59+00:00",
         "0001-01-01 00:00:00-01:00", "2023-01-01 00:00:00", "GBR", "XXX", "World", "US Total", "1.5e3", "+7", "7 ",
         "\u00a0", "\ufeff", "source_row"]  # fmt: skip
CELL = st.one_of(st.sampled_from(NASTY), st.text(alphabet=st.characters(codec="utf-8", exclude_characters=',"\r\n'), max_size=12))


@st.composite
def mutated(draw: st.DrawFn, kind: str) -> str:
    """The sample file with a few cells replaced, lines duplicated, dropped, swapped or cut short."""
    header, *lines = HEADS[kind]
    rows = [line.split(",") for line in lines]
    for _ in range(draw(st.integers(1, 6))):
        op = draw(st.sampled_from(["cell", "cell", "cell", "dup", "drop", "swap", "short", "long", "header"]))
        i = draw(st.integers(0, len(rows) - 1)) if rows else 0
        if op == "cell" and rows:
            rows[i][draw(st.integers(0, len(rows[i]) - 1))] = draw(CELL)
        elif op == "dup" and rows:
            rows.insert(draw(st.integers(0, len(rows))), list(rows[i]))
        elif op == "drop" and rows:
            rows.pop(i)
        elif op == "swap" and len(rows) > 1:
            j = draw(st.integers(0, len(rows) - 1))
            rows[i], rows[j] = rows[j], rows[i]
        elif op == "short" and rows:
            rows[i] = rows[i][: draw(st.integers(1, len(rows[i])))]
        elif op == "long" and rows:
            rows[i] = [*rows[i], draw(CELL)]
        elif op == "header":
            cells = header.split(",")
            cells[draw(st.integers(0, len(cells) - 1))] = draw(CELL)
            header = ",".join(cells)
    return "\n".join([header, *(",".join(r) for r in rows)]) + "\n"


@FAST
@given(data=st.data())
def test_mutated_files_account_for_every_line(workdir: Path, data: st.DataObject) -> None:
    kind = data.draw(st.sampled_from(CSV_KINDS))
    content = data.draw(mutated(kind))
    staged = stage_bytes(workdir, kind, content.encode("utf-8"))
    if staged is None:
        return
    data_lines = set(range(2, content.count("\n") + 1))
    assert accounted_lines(staged) == data_lines
    GridIntensity.validate(staged.frame)  # what is kept is valid


# --- JSON payloads ---------------------------------------------------------------------------------

JSON_SCALAR = st.one_of(
    st.none(), st.booleans(), st.integers(min_value=-(10**30), max_value=10**30), st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=30), st.sampled_from(["2023-03-14T12:00Z", "2024-11-30T06:00:00.000Z", "0001-01-01T00:00-05:00", "lifecycle", "direct"]),
)
JSON_ANY = st.recursive(JSON_SCALAR, lambda kids: st.lists(kids, max_size=4) | st.dictionaries(st.text(max_size=8), kids, max_size=4), max_leaves=20)


@FAST
@given(obj=JSON_ANY)
def test_arbitrary_json_objects(obj: Any) -> None:
    for parse in (parse_uk_ci_payload, parse_electricitymaps_payload):
        try:
            parsed = parse(obj, "live", OPTIONS["uk_ci_json"])
        except SourceParseError:
            continue
        validate_payload(parsed)


# Mostly well-formed fields, so that many records reach validation (ranges, periods, duplicates).
def mostly(good: st.SearchStrategy[Any], other: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    """``good`` four times in five, else ``other``."""
    return st.integers(0, 4).flatmap(lambda i: good if i else other)


VALID_TIME = st.sampled_from(["2023-03-14T12:00Z", "2023-03-14T12:30Z", "2023-03-14T13:00Z", "2023-03-14T12:00:00+00:00"])
TIME = mostly(VALID_TIME, JSON_SCALAR)
NUMBER = mostly(st.integers(-50, 2500) | st.floats(0, 2000), JSON_SCALAR)
UK_RECORD = st.fixed_dictionaries(
    {"from": TIME, "to": TIME},
    optional={
        "intensity": mostly(st.fixed_dictionaries({"forecast": NUMBER}, optional={"actual": NUMBER, "index": JSON_SCALAR}), JSON_ANY),
    },
)
EM_RECORD = st.fixed_dictionaries(
    {"carbonIntensity": NUMBER, "datetime": TIME},
    optional={
        "zone": mostly(st.sampled_from(["US-MIDW-MISO", "DE", "de", ""]), JSON_SCALAR),
        "isEstimated": mostly(st.booleans(), JSON_SCALAR),
        "emissionFactorType": mostly(st.sampled_from(["lifecycle", "direct"]), JSON_SCALAR),
    },
)


def _records_accounted(parsed: Parsed, count: int) -> None:
    seen = set(parsed.frame.get_column("source_row").to_list()) | {r.source_row for r in parsed.rejects}
    assert seen == set(range(1, count + 1))


@FAST
@given(records=st.lists(mostly(UK_RECORD, JSON_SCALAR), max_size=6))
def test_near_valid_carbon_intensity_payloads(records: list[Any]) -> None:
    parsed = parse_uk_ci_payload({"data": records}, "live", OPTIONS["uk_ci_json"])
    _records_accounted(parsed, len(records))
    validate_payload(parsed)


@FAST
@given(records=st.lists(mostly(EM_RECORD, JSON_SCALAR), max_size=6), zone=mostly(st.just("US-MIDW-MISO"), JSON_SCALAR))
def test_near_valid_electricitymaps_payloads(records: list[Any], zone: Any) -> None:
    parsed = parse_electricitymaps_payload({"zone": zone, "history": records}, "live", OPTIONS["electricitymaps_json"])
    _records_accounted(parsed, len(records))
    validate_payload(parsed)


UK_SAMPLE = json.loads((SOURCES_DIR / "grid/uk_api_recorded/national_pt24h_2023-03-15T1201Z.json").read_text(encoding="utf-8"))
EM_SAMPLE = json.loads(
    (SOURCES_DIR / "grid/electricitymaps_recorded/carbon-intensity-history_US-MIDW-MISO_2024-11-30.json").read_text(encoding="utf-8")
)


@settings(max_examples=examples(30), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_mutated_recorded_responses(workdir: Path, data: st.DataObject) -> None:
    for kind, sample, key in (("uk_ci_json", UK_SAMPLE, "data"), ("electricitymaps_json", EM_SAMPLE, "history")):
        obj = json.loads(json.dumps(sample))
        records = obj[key][:8]
        for _ in range(data.draw(st.integers(1, 5))):
            i = data.draw(st.integers(0, len(records) - 1))
            record = records[i]
            nested = kind == "uk_ci_json" and isinstance(record.get("intensity"), dict) and record["intensity"]
            target = record["intensity"] if nested and data.draw(st.booleans()) else record
            field = data.draw(st.sampled_from(sorted(target)))
            target[field] = data.draw(JSON_SCALAR)
            if data.draw(st.booleans()):
                records.insert(i, json.loads(json.dumps(record)))  # a duplicate record
        obj[key] = records
        staged = stage_bytes(workdir, kind, json.dumps(obj).encode("utf-8"))
        assert staged is not None  # the envelope is intact, so the file parses
        assert accounted_lines(staged) == set(range(1, len(records) + 1))
