"""Property tests: whatever bytes a power-log file holds, a parser either reads it (bad rows
quarantined) or raises SourceParseError naming the file; no other exception escapes."""

from __future__ import annotations

import itertools
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pipelines.errors import SourceParseError
from pipelines.ingest.energy.runs import runs_from_samples
from pipelines.ingest.options import run_options
from pipelines.ingest.parsers.android_sysfs import parse_android_sysfs
from pipelines.ingest.parsers.codecarbon import parse_codecarbon
from pipelines.ingest.parsers.monsoon import parse_monsoon
from pipelines.ingest.parsers.nvidia_smi import parse_nvidia_smi
from pipelines.ingest.parsers.powermetrics import parse_powermetrics
from pipelines.ingest.parsers.rapl import parse_rapl
from pipelines.ingest.parsers.zeus import parse_zeus_power
from pipelines.ingest.staging import Parsed, Parser, parse_entry, validate_parsed
from schemas.benchmark_runs import BenchmarkRuns
from schemas.power_samples import PowerSamples
from tests.helpers import entry_for, examples

FIXTURES = Path(__file__).parents[1] / "fixtures" / "power"
SOURCES = Path(__file__).resolve().parents[2] / "sources" / "power"


def _head(path: Path, lines: int) -> str:
    with path.open(encoding="utf-8") as handle:
        return "".join(itertools.islice(handle, lines))


def _valid_logs() -> dict[str, tuple[Parser, str, dict[str, Any], str]]:
    """kind -> (parser, table, options, a small valid file)."""
    return {
        "nvidia_smi": (
            parse_nvidia_smi,
            "staging.power_samples",
            {"timezone": "Europe/London"},
            "timestamp, index, name, power.draw [W]\n"
            "2023/03/26 00:59:59.500, 0, NVIDIA RTX A5000, 100.00 W\n"
            "2023/03/26 00:59:59.500, 1, NVIDIA RTX A5000, 50.00 W\n"
            "2023/03/26 02:00:00.000, 0, NVIDIA RTX A5000, [N/A]\n"
            "2023/03/26 02:00:00.100, 1, NVIDIA RTX A5000, 51.25 W\n"
            "2023/03/26 02:00:00.200, 0, NVIDIA RTX A5000, 102.00 W\n",
        ),
        "powermetrics": (parse_powermetrics, "staging.power_samples", {}, (FIXTURES / "powermetrics_m1.txt").read_text(encoding="utf-8")),
        "monsoon": (
            parse_monsoon,
            "staging.power_samples",
            {"started_at": "2024-01-01T00:00:00Z"},
            "Time(ms),Main(mA),Main Voltage(V),\n0,1000,4.0,\n0.2,1010,4.0,\n0.4,990,3.99,\n0.6,1200,3.98,\n",
        ),
        "android_sysfs": (
            parse_android_sysfs,
            "staging.power_samples",
            {},
            "timestamp_ms,current_now,voltage_now\n1700000000000,-2000000,4000000\n1700000001000,-2500000,3990000\n"
            "1700000002000,300000,3980000\n1700000003000,-2200000,3970000\n",
        ),
        "rapl": (
            parse_rapl,
            "staging.power_samples",
            {},
            "timestamp_ns,domain,energy_uj,max_energy_range_uj\n"
            "1700000000000000000,package-0,262143000000,262143328850\n1700000000000000000,dram,1000000,65712999613\n"
            "1700000001000000000,package-0,9671150,262143328850\n1700000001000000000,dram,3000000,65712999613\n"
            "1700000002000000000,package-0,19671150,262143328850\n1700000002000000000,core,5,262143328850\n",
        ),
        "codecarbon": (parse_codecarbon, "staging.benchmark_runs", {}, _head(SOURCES / "codecarbon" / "emissions_example_apple-m1.csv", 12)),
        "zeus_power": (parse_zeus_power, "staging.benchmark_runs", {"device_id": "nvidia-v100"}, _head(SOURCES / "zeus" / "summary_power_v100.csv", 8)),
    }


LOGS = _valid_logs()
KINDS = sorted(LOGS)
MODELS = {"staging.power_samples": PowerSamples, "staging.benchmark_runs": BenchmarkRuns}


@pytest.fixture(scope="module")
def scratch(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("power_properties")


def parse_only(scratch: Path, kind: str, content: bytes) -> Parsed | None:
    """Run the parser alone; None if it refused the file with SourceParseError."""
    parser, _, options, _ = LOGS[kind]
    path = scratch / f"{kind}.log"
    path.write_bytes(content)
    try:
        return parser(path, options)
    except SourceParseError as exc:
        assert exc.path == str(path)
        return None


def stage_fully(scratch: Path, kind: str, content: bytes) -> None:
    """Parse, conform and validate as the pipeline does, then integrate the run."""
    parser, table, options, _ = LOGS[kind]
    path = scratch / f"{kind}_full.log"
    path.write_bytes(content)
    entry = entry_for(path, kind=kind, table=table, options=options)
    try:
        parsed = parse_entry(entry, parser)
        staged = validate_parsed(table, MODELS[table], [(entry, parsed)], run_id="prop")
    except SourceParseError as exc:
        assert exc.path == str(path)
        return
    loaded = set(parsed.frame.get_column("source_row").to_list())
    rejected = {r.source_row for r in parsed.rejects}
    assert not loaded & rejected, f"rows both loaded and rejected: {sorted(loaded & rejected)}"
    if table == "staging.power_samples":
        runs = runs_from_samples(staged.frame, run_options(path, options), log_format=kind)
        assert runs.height <= 1


def mutate(text: str, edits: list[tuple[str, int, int]]) -> bytes:
    """Apply (operation, line, position) edits: truncate, drop a field, delete or repeat a line, splice garbage."""
    lines = text.split("\n")
    for operation, line, position in edits:
        i = line % len(lines)
        if operation == "truncate_file":
            joined = "\n".join(lines)
            lines = joined[: position % (len(joined) + 1)].split("\n")
        elif operation == "truncate_line":
            lines[i] = lines[i][: position % (len(lines[i]) + 1)]
        elif operation == "drop_field":
            fields = lines[i].split(",")
            del fields[position % len(fields)]
            lines[i] = ",".join(fields)
        elif operation == "delete_line" and len(lines) > 1:
            del lines[i]
        elif operation == "repeat_line":
            lines.insert(i, lines[i])
        elif operation == "splice":
            cut = position % (len(lines[i]) + 1)
            lines[i] = lines[i][:cut] + ["\x00", "[N/A]", "-1", "nan", "1e400", ",", '"', "\r", "\u00e9", "99999999999999999999"][position % 10] + lines[i][cut:]
    return "\n".join(lines).encode("utf-8")


EDITS = st.lists(
    st.tuples(
        st.sampled_from(["truncate_file", "truncate_line", "drop_field", "delete_line", "repeat_line", "splice"]),
        st.integers(0, 10_000),
        st.integers(0, 10_000),
    ),
    min_size=1,
    max_size=4,
)
FAST = settings(max_examples=examples(100), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
HALF = settings(max_examples=examples(50), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
FULL = settings(max_examples=examples(40), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])


@pytest.mark.parametrize("kind", KINDS)
def test_valid_example_loads(scratch: Path, kind: str) -> None:
    parsed = parse_only(scratch, kind, LOGS[kind][3].encode())
    assert parsed is not None and parsed.frame.height > 0
    stage_fully(scratch, kind, LOGS[kind][3].encode())


@pytest.mark.parametrize("kind", KINDS)
@FAST
@given(text=st.text(max_size=600))
def test_arbitrary_text(scratch: Path, kind: str, text: str) -> None:
    parse_only(scratch, kind, text.encode("utf-8"))


@pytest.mark.parametrize("kind", KINDS)
@FAST
@given(data=st.binary(max_size=600))
def test_arbitrary_bytes(scratch: Path, kind: str, data: bytes) -> None:
    parse_only(scratch, kind, data)


@pytest.mark.parametrize("kind", KINDS)
@HALF
@given(header_and_text=st.tuples(st.booleans(), st.text(alphabet=st.characters(codec="utf-8"), max_size=300)))
def test_valid_header_then_arbitrary_text(scratch: Path, kind: str, header_and_text: tuple[bool, str]) -> None:
    keep_first_row, tail = header_and_text
    lines = LOGS[kind][3].split("\n")
    head = "\n".join(lines[: 2 if keep_first_row else 1])
    parse_only(scratch, kind, (head + "\n" + tail).encode("utf-8"))


@pytest.mark.parametrize("tail", [b"x^0", "x^\U000c6100".encode(), b"\x1f\x8b1", b"x\x9c1", b"x\xda1"])
def test_lines_that_start_like_compressed_data_are_read_as_text(scratch: Path, tail: bytes) -> None:
    """Found by the property above: a block starting with a zlib or gzip header (``x^``) was
    decompressed by the CSV reader. Now its line is read as text and quarantined."""
    head = LOGS["nvidia_smi"][3].split("\n")[0]
    parsed = parse_only(scratch, "nvidia_smi", head.encode("utf-8") + b"\n" + tail)
    assert parsed is not None and parsed.frame.height == 0
    assert [r.source_row for r in parsed.rejects] and {r.source_row for r in parsed.rejects} == {2}


@pytest.mark.parametrize("kind", KINDS)
@FULL
@given(edits=EDITS)
def test_mutated_valid_file(scratch: Path, kind: str, edits: list[tuple[str, int, int]]) -> None:
    stage_fully(scratch, kind, mutate(LOGS[kind][3], edits))


def test_mutations_do_change_the_file() -> None:
    text = LOGS["monsoon"][3]
    assert mutate(text, [("drop_field", 1, 0)]).decode().split("\n")[1] == "1000,4.0,"
    assert mutate(text, [("truncate_file", 0, 10)]).decode() == text[:10]
    assert mutate(text, [("splice", 2, 3)]).decode().split("\n")[2] == "0.2nan,1010,4.0,"

