"""The verdict at the edge's best admissible design: given rows -> expected rows, each worked by hand.

sql/marts/verdict.sql runs over a few rows of core.model_evaluation and marts.uncertainty typed here (the helpers of
test_verdict_all_draws.py): one scenario s, class laptop, a frame that resizes its fleet, and two or three edge designs
per method row.
"""

from __future__ import annotations

import duckdb
import pytest

from pipelines.paths import sql_text
from pipelines.warehouse.tables import install_macros
from schemas.vocabulary import COMPUTE_ONLY, PATTERN_ROWS, VERDICT_BELOW, VERDICT_EDGE_MORE
from tests.marts.test_verdict_all_draws import COMM, FIRST, SECOND, _mc, _row, _verdict

#: two edge training designs besides the scenario's own (core.patterns edge_design)
OTHER, THIRD = [name for name, row in PATTERN_ROWS.items() if row.edge_design and name != COMM][:2]


def _design(method: str, pattern: str, r: float, **columns: object) -> dict:
    return {**_row(method, pattern, r), **columns}


def _rows(designs: dict[str, tuple[float, dict]]) -> tuple[list[dict], list[dict]]:
    """The model's rows and the Monte Carlo's for both network methods: compute only at R 3.0, and each design at its R
    with its columns; every band 0.1 around its R, every draw feasible."""
    evaluated, mc = [], []
    for m in (FIRST, SECOND):
        evaluated.append(_row(m, COMPUTE_ONLY, 3.0))
        mc.append(_mc(m, COMPUTE_ONLY, (2.9, 3.0, 3.1), (2.9, 3.0, 3.1), 1.0, 1.0, 0.0))
        for pattern, (r, columns) in designs.items():
            evaluated.append(_design(m, pattern, r, **columns))
            mc.append(_mc(m, pattern, (r - 0.1, r, r + 0.1), (r - 0.1, r, r + 0.1), 1.0, 1.0, 0.0))
    return evaluated, mc


def _by_design(frame, method: str = FIRST) -> dict[str, dict]:
    return {r["edge_design"]: r for r in frame.iter_rows(named=True) if r["network_method"] == method}


def test_a_design_that_does_not_fit_memory_is_never_the_answer() -> None:
    """OTHER has the highest R (0.9) but needs 8.8 GB of the 8 GB a device may use: inadmissible, so the best design is
    COMM (0.5, admissible) and the worst THIRD (0.2); OTHER keeps its row with why."""
    evaluated, mc = _rows({COMM: (0.5, {}), OTHER: (0.9, {"training_memory_gb": 8.8, "memory_feasible": False,
                                                           "design_admissible": False}),
                           THIRD: (0.2, {})})
    rows = _by_design(_verdict(evaluated, mc))
    assert {d for d, r in rows.items() if r["is_best_design"]} == {COMM}
    assert {d for d, r in rows.items() if r["is_worst_design"]} == {THIRD}
    assert rows[OTHER]["design_admissible"] is False and not rows[OTHER]["is_answer"]
    assert rows[OTHER]["design_inadmissible_reason"] == "needs 8.80 GB of memory per device, 8.00 GB usable"
    assert rows[COMM]["design_inadmissible_reason"] is None


def test_the_best_admissible_design_sets_the_verdict_and_is_the_answer() -> None:
    """COMM at R 0.5 and OTHER at 1.5 (both admissible; bands 0.4-0.6 and 1.4-1.6): the verdict reads the best design's
    band, 1.4-1.6, so 'below the claim', not 'edge emits more' as the worse design alone would read. Of the two method
    rows, the one whose high end is highest sets the verdict (both 1.6 here: the first by the order of the rows), and
    exactly one row is the answer: the headline basis, the best design, that method row."""
    evaluated, mc = _rows({COMM: (0.5, {}), OTHER: (1.5, {})})
    frame = _verdict(evaluated, mc)
    assert set(frame.get_column("verdict")) == {VERDICT_BELOW}
    answer = frame.filter(frame.get_column("is_answer"))
    assert answer.height == 1
    row = answer.row(0, named=True)
    assert (row["edge_design"], row["is_best_design"], row["reduction_factor_with_comm"]) == (OTHER, True, 1.5)
    assert row["network_method"] == row["verdict_driver_method"]
    # the worse design alone reads 'edge emits more': a verdict against it would be a strawman's
    alone = _verdict(*_rows({COMM: (0.5, {})}))
    assert set(alone.get_column("verdict")) == {VERDICT_EDGE_MORE}


def test_a_draw_picks_its_own_best_design() -> None:
    """The best design's bands come from the per-draw best design (marts.uncertainty best_design rows), not from the
    deterministic best's own draws: COMM's own band is 0.4-0.6 and OTHER's 1.4-1.6, but picking the best in each draw
    gives 1.45-1.7 (a draw where COMM beats OTHER lifts the top), and the best row reads that band."""
    evaluated, mc = _rows({COMM: (0.5, {}), OTHER: (1.5, {})})
    best = [{**_mc(m, COMM, (1.45, 1.5, 1.7), (1.45, 1.5, 1.7), 1.0, 1.0, 0.0), "pattern": None, "best_design": True}
            for m in (FIRST, SECOND)]
    rows = _by_design(_verdict(evaluated, mc + best))
    assert (rows[OTHER]["p05_with_comm"], rows[OTHER]["p95_with_comm"]) == (1.45, 1.7)
    assert (rows[COMM]["p05_with_comm"], rows[COMM]["p95_with_comm"]) == pytest.approx((0.4, 0.6))


def test_a_link_share_above_the_headroom_is_infeasible() -> None:
    """A link carries at most link_headroom (0.9415) of its time in traffic: the model's row at 0.95 is not
    link_feasible, so not admissible. Worked: 0.95 > 0.9415 x (1 + 1e-9). The verdict's row names why."""
    con = duckdb.connect()
    install_macros(con)
    share, headroom = 0.95, 0.9415
    assert not con.execute("select $share <= $headroom * (1 + 1e-9)", {"share": share, "headroom": headroom}).fetchone()[0]
    assert "link_time_share <= coalesce(link_headroom, 1.0) * (1 + 1e-9) as link_feasible" in sql_text("model/model_rows.sql")
    evaluated, mc = _rows({COMM: (0.5, {}), OTHER: (0.9, {"link_time_share": share, "link_feasible": False,
                                                           "design_admissible": False})})
    rows = _by_design(_verdict(evaluated, mc))
    assert rows[OTHER]["design_inadmissible_reason"] == "its traffic needs 95.0% of each link's time, above the 94.15% headroom"
    assert rows[COMM]["is_best_design"] and not rows[OTHER]["is_best_design"]
    # where no design is admissible, the best of them all still marks the row, and the verdict is infeasible
    evaluated, mc = _rows({OTHER: (0.9, {"link_time_share": share, "link_feasible": False, "design_admissible": False})})
    only = _by_design(_verdict(evaluated, mc))[OTHER]
    assert only["is_best_design"] and only["verdict"] == "infeasible at the stated link"
