"""Given rows -> expected rows of the Sobol convergence (pipelines.warehouse.sobol_convergence): per base sample size,
the headline indices' distance from the full study's and whether each headline row's top driver is the full study's."""

from __future__ import annotations

import polars as pl
import pytest

from pipelines.warehouse.sobol_convergence import convergence_rows


def study(base_samples: int, rows: list[tuple[str, str, float, float, int]]) -> pl.DataFrame:
    """Rows of one study: (pattern, parameter, s1, st, rank) for scenario s, class laptop."""
    return pl.DataFrame([{"scenario_id": "s", "device_class": "laptop", "pattern": p, "parameter": q, "s1": s1, "st": st,
                          "rank": r, "base_samples": base_samples} for p, q, s1, st, r in rows])


FULL = study(8192, [("none", "a", 0.60, 0.62, 1), ("none", "b", 0.30, 0.31, 2), ("none", "c", 0.05, 0.06, 3),
                    ("none", "d", 0.01, 0.01, 4), ("ring", "a", 0.5, 0.5, 1), ("radio", "a", 0.9, 0.9, 1)])
PATTERNS = pl.DataFrame({"scenario_id": ["s"], "comm_pattern": ["radio"]})


def test_distances_and_top_drivers_by_hand() -> None:
    small = study(64, [("none", "b", 0.50, 0.55, 1), ("none", "a", 0.40, 0.45, 2), ("none", "c", 0.05, 0.06, 3),
                       ("none", "d", 0.20, 0.20, 4), ("radio", "a", 0.9, 0.9, 1), ("ring", "b", 0.9, 0.9, 1)])
    large = study(1024, [("none", "a", 0.601, 0.622, 1), ("none", "b", 0.299, 0.309, 2), ("none", "c", 0.052, 0.061, 3),
                         ("radio", "a", 0.902, 0.899, 1)])
    rows = convergence_rows(pl.concat([small, large]), FULL, PATTERNS).to_dicts()
    # the headline rows: compute only's top three (d is fourth, ring is not the scenario's pattern) and radio's top one
    assert [r["indices_compared"] for r in rows] == [4, 4]
    assert rows[0]["base_samples"] == 64 and rows[0]["max_s1_distance"] == pytest.approx(0.2)
    assert rows[0]["max_st_distance"] == pytest.approx(0.24) and rows[0]["median_st_distance"] == pytest.approx((0.17 + 0.0) / 2)  # of 0.24, 0.17, 0 and 0
    assert rows[0]["top_driver_agrees"] == pytest.approx(0.5) and not rows[0]["second_decimal_stable"]  # none's top is b, not a
    assert rows[1]["max_s1_distance"] == pytest.approx(0.002) and rows[1]["max_st_distance"] == pytest.approx(0.002)
    assert rows[1]["top_driver_agrees"] == 1.0 and rows[1]["second_decimal_stable"]
