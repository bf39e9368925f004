"""One formula: the marts call the model's macros (sql/model/macros.sql) instead of restating them."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from pipelines.paths import SOURCES_DIR, sql_text

MARTS = sorted((Path(__file__).resolve().parents[2] / "sql" / "marts").glob("*.sql"))
#: Bare model constants a mart must not restate: J per kWh, days a year, rounding a device count.
BARE = {"3.6e6 (J per kWh: kwh_of_joules)": r"3\.6e6", "365 (days a year: the carbon macros)": r"\b365\b",
        "ceil( (a device count: whole_devices)": r"\bceil\s*\("}


def code_of(sql: str) -> str:
    """The SQL without its comments and string literals."""
    sql = re.sub(r"'(?:[^']|'')*'", "''", sql)
    return re.sub(r"--[^\n]*", "", sql)


def test_strip_leaves_code_only() -> None:
    assert code_of("select 365 -- 365 days\n, 'ceil(x) x 365' as t") == "select 365 \n, '' as t"


@pytest.mark.parametrize("path", MARTS, ids=[p.name for p in MARTS])
def test_marts_restate_no_model_constant(path: Path) -> None:
    code = code_of(path.read_text())
    found = [name for name, pattern in BARE.items() if re.search(pattern, code)]
    assert not found, f"{path.name} restates {found}; call the macro instead"


def test_a_restated_constant_is_caught(tmp_path: Path) -> None:
    leak = "select devices * power_w * hours * 365 * years as kwh from x"
    assert re.search(BARE["365 (days a year: the carbon macros)"], code_of(leak))


def test_the_model_names_no_device_class() -> None:
    """Devices are rows: evaluate.sql reads one row per edge device class (model_devices), so
    no class (laptop, phone, ...) appears in it, and a class's fields never shadow a parameter."""
    from schemas.vocabulary import DEVICE_FIELDS, EDGE_DEVICE_CLASSES

    code = code_of(sql_text("model/evaluate.sql"))
    for device_class in EDGE_DEVICE_CLASSES:
        assert not re.search(rf"\b{device_class}\w*", code), device_class
    parameters = {line.split(",", 1)[0] for line in (SOURCES_DIR / "scenarios" / "paper_base.csv").read_text("utf-8").splitlines()}
    assert not set(DEVICE_FIELDS.values()) & parameters
