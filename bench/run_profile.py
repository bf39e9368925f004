"""Where a cold ``edge-carbon run``'s seconds go: its steps' durations, read from its Dagster instance.

``python -m bench steps DAGSTER_HOME`` prints, as JSON, the newest run's steps (slowest first)
with their seconds, the sum of the steps and the span of the run's events; the rest of the
command's wall time is the interpreter's start, the imports and the publish before and after.
Run in a subprocess, so the bench's driver never imports Dagster.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any


def step_seconds(dagster_home: Path) -> dict[str, Any]:
    """The newest run of the instance at ``dagster_home``: ``steps`` [[key, seconds]], ``steps_s``, ``run_s``."""
    import dagster as dg

    with dg.DagsterInstance.from_config(str(dagster_home)) as instance:
        runs = instance.get_runs(limit=1)
        if not runs:
            return {"steps": [], "steps_s": 0.0, "run_s": 0.0}
        starts: dict[str, float] = {}
        steps: list[tuple[str, float]] = []
        first = last = None
        for record in instance.all_logs(runs[0].run_id):
            first = record.timestamp if first is None else first
            last = record.timestamp
            event = record.dagster_event
            if event is None or record.step_key is None:
                continue
            if event.event_type_value == "STEP_START":
                starts[record.step_key] = record.timestamp
            elif event.event_type_value in ("STEP_SUCCESS", "STEP_FAILURE") and record.step_key in starts:
                steps.append((record.step_key, record.timestamp - starts[record.step_key]))
    steps.sort(key=lambda item: -item[1])
    return {"steps": [[key, round(seconds, 3)] for key, seconds in steps], "steps_s": round(sum(s for _, s in steps), 3),
            "run_s": round((last or 0.0) - (first or 0.0), 3)}


def main(argv: list[str]) -> int:
    """``python -m bench steps DAGSTER_HOME``."""
    if len(argv) != 1:
        raise SystemExit("usage: python -m bench steps DAGSTER_HOME")
    print(json.dumps(step_seconds(Path(argv[0]))))
    return 0
