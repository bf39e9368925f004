"""marts.uncertainty, given rows -> expected rows: the Monte Carlo's draws, summary and rows
(:mod:`pipelines.model.uncertainty`, as the asset calls them) over the typed paper_text scenario
(tests/marts/model_rows.py), with a few hundred draws, no build."""

from __future__ import annotations

import polars as pl
import pytest

from pipelines.model.uncertainty import uncertainty_rows
from tests.marts.model_rows import CLOUD, CLOUD_PER_G, LAPTOP, PHONE, monte_carlo_summary, ranged

SEED = 11


def monte_carlo(ranges: dict, n_draws: int) -> pl.DataFrame:
    return uncertainty_rows(monte_carlo_summary(ranges, n_draws, SEED), SEED)


def pick(rows: pl.DataFrame, device_class: str, pattern: str, metric: str = "reduction_factor", basis: str = "peak_flops") -> dict:
    picked = rows.filter((pl.col("device_class") == device_class) & (pl.col("pattern") == pattern) & (pl.col("metric") == metric)
                         & (pl.col("basis") == basis) & pl.col("is_headline_method"))
    assert picked.height == 1
    return picked.row(0, named=True)


def test_with_every_range_collapsed_every_quantile_is_the_deterministic_r() -> None:
    rows = monte_carlo({p: None for p in ranged()}, 200)
    for device_class, edge in (("laptop", LAPTOP), ("phone", PHONE)):
        r = pick(rows, device_class, "none")
        assert r["is_headline"] is True  # paper_text states its counts: peak_flops heads
        for column in ("p05", "p50", "p95", "mean", "p05_all_draws", "p50_all_draws", "p95_all_draws"):
            assert r[column] == pytest.approx(CLOUD / edge, rel=1e-12), (device_class, column)
        assert (r["n_draws"], r["n_feasible"], r["share_link_feasible"], r["seed"]) == (200, 200, 1.0, SEED)
        assert pick(rows, device_class, "none", "cloud_total_kgco2e")["p50"] == pytest.approx(CLOUD, rel=1e-12)
        assert pick(rows, device_class, "none", "edge_added_kgco2e")["p95"] == pytest.approx(edge, rel=1e-12)
    # R 9.5 for laptops, 3.1 for phones: only the phones fall below the claim's 4
    assert (pick(rows, "laptop", "none")["share_r_below_4"], pick(rows, "phone", "none")["share_r_below_4"]) == (0.0, 1.0)
    # the measured basis beside the headline: 30 laptops (the GPU's 67 TFLOPS at 6.8 TFLOPS, 8 of 24 h: 29.6 -> 30)
    measured = pick(rows, "laptop", "none", basis="measured_throughput")
    assert (measured["is_headline"], measured["p50"]) == (False, pytest.approx(CLOUD / (2 * LAPTOP), rel=1e-12))


def test_a_draw_over_its_link_counts_as_r_0_in_the_all_draw_band() -> None:
    rows = monte_carlo({p: None for p in ranged()}, 200)
    # the radio window's bytes need 27.7 of a laptop's windows at 10 MB/s: no draw is feasible
    radio = pick(rows, "laptop", "radio_window")
    assert (radio["n_feasible"], radio["share_link_feasible"], radio["p50"], radio["mean"]) == (0, 0.0, None, None)
    assert (radio["p05_all_draws"], radio["p95_all_draws"], radio["share_feasible_r_ge_1"]) == (0.0, 0.0, 0.0)


def test_quantiles_of_a_uniform_cloud_grid_by_hand() -> None:
    # only the cloud grid drawn, uniform on 250-480 g/kWh (the edge grid held at 367, so not coupled):
    # R is linear in it, so R's quantiles are R at the grid's quantiles, 250 + q x 230
    ranges = {p: None for p in ranged()} | {"cloud_grid_gco2e_per_kwh": (250.0, 480.0, "uniform")}
    rows = monte_carlo(ranges, 2000)
    r = pick(rows, "laptop", "none")

    def at(grid: float) -> float:
        return (123.75 + CLOUD_PER_G * grid) / LAPTOP

    for column, q in (("p05", 0.05), ("p50", 0.5), ("p95", 0.95)):
        assert r[column] == pytest.approx(at(250 + q * 230), rel=0.01), column
    assert r["mean"] == pytest.approx(at(365), rel=0.01)
    assert at(250) <= r["p05"] < r["p50"] < r["p95"] <= at(480)
    assert r["share_r_below_4"] == 0.0  # R(250) = 6.5
    cloud = pick(rows, "laptop", "none", "cloud_total_kgco2e")
    assert cloud["p50"] == pytest.approx(123.75 + CLOUD_PER_G * 365, rel=0.01)
    edge = pick(rows, "laptop", "none", "edge_added_kgco2e")
    assert (edge["p05"], edge["p95"]) == pytest.approx((LAPTOP, LAPTOP), rel=1e-12)


def test_passes_hold_at_most_the_pass_rows_and_the_first_holds_the_own_patterns(monkeypatch: pytest.MonkeyPatch) -> None:
    """Patterns go into a pass, in order, while its rows stay within PASS_ROWS (one at least); the first pass also holds
    the sets' own patterns, and a pattern of those it holds anyway adds no rows."""
    import pipelines.model.uncertainty as uncertainty
    from schemas.vocabulary import PATTERNS

    monkeypatch.setattr(uncertainty, "PASS_ROWS", 10)
    assert uncertainty.pattern_passes(dict.fromkeys(PATTERNS, 1)) == [PATTERNS]
    assert uncertainty.pattern_passes(dict.fromkeys(PATTERNS, 5)) == [PATTERNS[i:i + 2] for i in range(0, len(PATTERNS), 2)]
    assert uncertainty.pattern_passes(dict.fromkeys(PATTERNS, 11)) == [(p,) for p in PATTERNS]
    # 8 rows of an own pattern outside PATTERNS: the first pass has room for 2 more; an own pattern it holds adds none
    assert uncertainty.pattern_passes(dict.fromkeys(PATTERNS, 2), {"elsewhere": 8})[0] == PATTERNS[:1]
    assert uncertainty.pattern_passes(dict.fromkeys(PATTERNS, 2), {PATTERNS[0]: 2, "elsewhere": 6})[0] == PATTERNS[:2]


def test_the_rows_of_a_pass_are_counted_before_it_runs() -> None:
    """pass_rows counts each pattern's rows from each scenario's first set: the evaluation of every draw has them."""
    from pipelines.model.draw_tables import draw_tables
    from pipelines.model.formula import model_view, scenario_inputs
    from pipelines.model.uncertainty import draw_inputs, pass_rows
    from pipelines.warehouse.queries import query_pl
    from schemas.vocabulary import PATTERNS
    from tests.marts.model_rows import scenario_connection

    con = scenario_connection(ranges={p: None for p in ranged()} | {"cloud_grid_gco2e_per_kwh": (200.0, 600.0, "uniform")})
    draws = draw_inputs(scenario_inputs(con), query_pl(con, "select * from core.scenario_parameters"), 40, SEED)
    with draw_tables(con, draws.drawn, draws.constants) as (sets, devices):
        pattern_rows, own_rows = pass_rows(con, sets, devices, draws)
        with model_view(con, sets, devices=devices, patterns=PATTERNS, basis_filter="headline_and_measured", methods="all"):
            evaluated = dict(con.execute("select pattern, count(*) from model_evaluation group by all").fetchall())
    assert {p: pattern_rows[p] for p in PATTERNS} == evaluated
    own = draws.constants.item(0, "comm_pattern")
    assert own_rows == {own: evaluated[own]}
    assert min(evaluated.values()) > 40  # two device classes: more than a row per draw


def test_a_summary_in_passes_over_the_patterns_is_the_one_query_summary(monkeypatch: pytest.MonkeyPatch) -> None:
    """A large sample is summarised a few patterns at a time (exact quantiles hold every draw of a group); the
    passes' rows are the single query's, row for row."""
    import pipelines.model.uncertainty as uncertainty
    from schemas.vocabulary import PATTERNS

    ranges = {p: None for p in ranged()} | {"cloud_grid_gco2e_per_kwh": (200.0, 600.0, "uniform")}
    whole = monte_carlo_summary(ranges, 300, SEED)
    monkeypatch.setattr(uncertainty, "PASS_ROWS", 1)  # one pattern a pass
    calls: list[tuple[str, ...]] = []
    original = uncertainty.pattern_passes
    monkeypatch.setattr(uncertainty, "pattern_passes", lambda *a: calls.extend(original(*a)) or original(*a))
    passes = monte_carlo_summary(ranges, 300, SEED)
    assert calls == [(p,) for p in PATTERNS]
    assert whole.height > len(PATTERNS)
    assert passes.equals(whole)
