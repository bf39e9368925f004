"""marts.scenarios, given rows -> expected rows: each scenario with its own pattern and the compute-only one."""

from __future__ import annotations

from schemas.vocabulary import COMPUTE_ONLY
from tests.marts.given_rows import run_mart


def test_each_scenario_offers_its_own_pattern_and_the_one_that_moves_no_bytes() -> None:
    rows = run_mart("marts.scenarios", {"core.scenarios": [{"scenario_id": "b", "comm_pattern": "pipeline"},
                                                           {"scenario_id": "a", "comm_pattern": "radio_window"}]},
                    method_tables=["core.patterns"])
    assert rows == [{"scenario_id": "a", "comm_pattern": "radio_window", "compute_only_pattern": COMPUTE_ONLY},
                    {"scenario_id": "b", "comm_pattern": "pipeline", "compute_only_pattern": COMPUTE_ONLY}]
