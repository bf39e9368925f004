"""Property tests: the device_pcf, device_specs and network_energy parsers on arbitrary input.

Whatever bytes or text a file holds, parsing and validating it either succeeds (valid rows
plus quarantined rejects) or raises :class:`SourceParseError` naming the file. No other
exception may escape.
"""

from __future__ import annotations

import datetime as dt
import tempfile
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from pipelines.defs.assets.staging_tables import DEVICE_PCF, DEVICE_SPECS, NETWORK_ENERGY
from pipelines.errors import SourceParseError
from pipelines.ingest.parsers.boavizta import BOAVIZTA_COLUMNS, assign_device_ids, parse_report_date
from schemas.device_pcf import DevicePcf
from schemas.device_specs import DeviceSpecs
from schemas.meta import columns
from schemas.network_energy import NetworkEnergy
from tests.helpers import examples, stage_text

PCF_PARSERS, PCF_TABLE = DEVICE_PCF.parsers, DEVICE_PCF.table
SPEC_PARSERS, SPEC_TABLE = DEVICE_SPECS.parsers, DEVICE_SPECS.table
NET_PARSERS, NET_TABLE = NETWORK_ENERGY.parsers, NETWORK_ENERGY.table

SETTINGS = settings(max_examples=examples(100), deadline=None)

KINDS = {
    "boavizta_pcf": (PCF_PARSERS["boavizta_pcf"], PCF_TABLE, DevicePcf),
    "curated_device_pcf": (PCF_PARSERS["curated_device_pcf"], PCF_TABLE, DevicePcf),
    "curated_device_specs": (SPEC_PARSERS["curated_device_specs"], SPEC_TABLE, DeviceSpecs),
    "curated_network_energy": (NET_PARSERS["curated_network_energy"], NET_TABLE, NetworkEnergy),
}


def own_columns(model: type) -> list[str]:
    return [c for c in columns(model) if c not in ("source_id", "source_file", "source_row", "shares_sum")]


HEADERS = {
    "boavizta_pcf": list(BOAVIZTA_COLUMNS),
    "curated_device_pcf": own_columns(DevicePcf),
    "curated_device_specs": own_columns(DeviceSpecs),
    "curated_network_energy": own_columns(NetworkEnergy),
}

#: Cell text that looks like the real thing often enough to reach the later stages.
CELLS = st.one_of(
    st.text(max_size=12),
    st.sampled_from(["", "0", "1", "-1", "0.5", "1e400", "nan", "inf", "2021", "November 2020", "2023-01-17", "26/07/2019", "Apple", "HP", "Workplace", "datacenter", "primary", "W", "https://x.org", "radio_power"]),
    st.floats(allow_nan=True, allow_infinity=True).map(repr),
)


def stage(kind: str, content: str | bytes) -> None:
    parser, table, model = KINDS[kind]
    with tempfile.TemporaryDirectory() as folder:
        try:
            stage_text(Path(folder), "input.csv", content, parser=parser, kind=kind, table=table, model=model)
        except SourceParseError:
            pass


def csv_line(cells: list[str]) -> str:
    return ",".join('"' + c.replace('"', '""').replace("\r", " ").replace("\n", " ") + '"' for c in cells)


@st.composite
def table_text(draw: st.DrawFn, kind: str) -> str:
    """A header of the kind's columns (sometimes shuffled or cut) and rows of arbitrary cells."""
    header = list(HEADERS[kind])
    if draw(st.booleans()):
        header = draw(st.permutations(header))
    if draw(st.integers(0, 4)) == 0:
        header = header[: draw(st.integers(0, len(header)))]
    rows = draw(st.lists(st.lists(CELLS, min_size=len(header), max_size=len(header)), max_size=5))
    return "\n".join([",".join(header), *(csv_line(r) for r in rows)]) + "\n"


@SETTINGS
@given(content=st.binary(max_size=400), kind=st.sampled_from(sorted(KINDS)))
def test_arbitrary_bytes_raise_only_source_parse_errors(content: bytes, kind: str) -> None:
    stage(kind, content)


@SETTINGS
@given(content=st.text(max_size=400), kind=st.sampled_from(sorted(KINDS)))
def test_arbitrary_text_raises_only_source_parse_errors(content: str, kind: str) -> None:
    stage(kind, content)


@SETTINGS
@given(data=st.data())
def test_boavizta_shaped_rows_raise_only_source_parse_errors(data: st.DataObject) -> None:
    stage("boavizta_pcf", data.draw(table_text("boavizta_pcf")))


@SETTINGS
@given(data=st.data(), kind=st.sampled_from(["curated_device_pcf", "curated_device_specs", "curated_network_energy"]))
def test_curated_shaped_rows_raise_only_source_parse_errors(data: st.DataObject, kind: str) -> None:
    stage(kind, data.draw(table_text(kind)))


@SETTINGS
@given(text=st.one_of(st.none(), st.text(max_size=30)))
def test_report_date_never_raises(text: str | None) -> None:
    parsed = parse_report_date(text)
    if parsed is not None:
        date, precision = parsed
        assert 1980 <= date.year <= 2100
        assert precision in ("day", "month", "year")
        if precision != "day":
            assert date.day == 1


@SETTINGS
@given(day=st.dates(min_value=dt.date(1980, 1, 1), max_value=dt.date(2100, 12, 31)))
def test_report_date_round_trips(day: dt.date) -> None:
    assert parse_report_date(f"{day:%B} {day.day} {day.year}") == (day, "day")
    assert parse_report_date(f"{day.year}-{day.month}-{day.day}") == (day, "day")
    assert parse_report_date(f"{day.day:02d}/{day.month:02d}/{day.year}") == (day, "day")
    assert parse_report_date(f"{day:%b} {day.year}") == (day.replace(day=1), "month")
    assert parse_report_date(str(day.year)) == (dt.date(day.year, 1, 1), "year")


@SETTINGS
@given(bases=st.lists(st.sampled_from(["a", "b", "a-dup2", "c-dup3", "c"]), max_size=12))
def test_device_ids_are_unique_and_keep_first_base(bases: list[str]) -> None:
    ids = assign_device_ids(bases)
    assert len(ids) == len(bases) and len(set(ids)) == len(ids)
    for base in set(bases):
        assert ids[bases.index(base)] == base
        assert all(i == base or i.startswith(f"{base}-dup") for i, b in zip(ids, bases, strict=True) if b == base)
