"""docs/model.md states what a reader needs to recompute the model's numbers: twelve quantities, each under its own
name with the formula or rule the SQL applies, and no contradiction with the SQL on the line hours and the waiting
devices."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
MODEL_MD = ROOT / "docs" / "model.md"

#: Each quantity's bold name in docs/model.md, and the phrases that state it (the formula or the rule the SQL applies).
QUANTITIES: dict[str, tuple[str, ...]] = {
    "The horizon cap, min(T / lifetime, 1).": ("min(T / lifetime, 1)", "charged the device once"),
    "The extra charge cycles.": ("battery_throughput_share x training power x h x s x 365 x T / battery Wh",
                                 "ceil(cycles / C) - 1", "battery_embodied_kgco2e_per_kwh"),
    "The device-replacement branch.": ("min(C / O, lifetime)", "C / (O + cycles / T)", "min(lost / lifetime, 1)",
                                       "device_replacement_share"),
    "Both radios through the wall factor.": ("multiplied by the wall factor", "receiving device's radio"),
    "Training hours for `time` and W per line.": ("training hours, not", "network_w_per_line"),
    "A resize's fixed global batch.": ("kp x (n / s - 1)", "the number of syncs is fixed"),
    "N in the byte terms: the devices training at once.": ("N x a", "N' x s"),
    "Rounding of N, and the tie rule for S.": ("ceil(x - 1e-9)", "ties", "the fewest stages"),
    "The fleet kept when no stage count carries the traffic.": ("the fleet stays as counted", "link_feasible"),
    "The deterministic R when no draw is feasible.": ("reduction_factor_with_comm", "stands in"),
    "The driver's tie rule.": ("arg_max / arg_min", "tie-breaker"),
    "The memory floor's rounding, and where the device multiplier applies.": (
        "ceil(params x training_bytes_per_param / (memory x usable fraction) - 1e-9)", "device_multiplier",
        "devices_memory_floor"),
}


def section() -> str:
    text = MODEL_MD.read_text()
    start = text.index("## Quantities a reader can recompute")
    return re.sub(r"\s+", " ", text[start:])


def test_twelve_quantities_are_stated() -> None:
    items = re.findall(r"^\d+\. \*\*(.+?)\*\*", MODEL_MD.read_text(), flags=re.MULTILINE)
    assert items == list(QUANTITIES)


@pytest.mark.parametrize("name", list(QUANTITIES))
def test_each_quantity_states_its_rule(name: str) -> None:
    text = section()
    start = text.index(f"**{name}**")
    following = [text.index(f"**{other}**") for other in QUANTITIES if text.index(f"**{other}**") > start]
    body = text[start:min(following, default=len(text))]
    for phrase in QUANTITIES[name]:
        assert phrase in body, (name, phrase)


def test_line_hours_and_waiting_devices_agree_with_the_sql() -> None:
    """The network's W per line divides by training hours (the devices training at once, N' a^S), as the SQL does,
    not by online hours; and the waiting devices draw idle power under every resize-power row."""
    text = re.sub(r"\s+", " ", MODEL_MD.read_text())
    assert "each online device its line for its window" not in text
    assert "training hours, not online hours" in text
    sql = (ROOT / "sql" / "model" / "model_rows.sql").read_text()
    assert "devices_online * window_s / 3600 as line_hours" in sql
    assert "devices_pattern * training_share(online_fraction, splits_model, stages_pattern) as devices_online" in sql
    assert "each online device its line" not in sql
    assert "waiting_device_hours" in text and "under every resize-power row" in text
    assert "+ waiting_idle_kgco2e as edge_operational_kgco2e" in sql
