"""marts.uncertainty_distribution, given rows -> expected rows: the histogram of R
(:func:`pipelines.model.uncertainty.distribution_rows` over the Monte Carlo's summary, as the asset
calls it) over the typed paper_text scenario (tests/marts/model_rows.py), no build."""

from __future__ import annotations

import math
from itertools import pairwise

import polars as pl
import pytest

from pipelines.model.uncertainty import BINS_PER_DECADE, distribution_rows
from tests.marts.model_rows import CLOUD, CLOUD_PER_G, LAPTOP, PHONE, monte_carlo_summary, ranged

SEED = 5


def histogram(ranges: dict, n_draws: int) -> pl.DataFrame:
    return distribution_rows(monte_carlo_summary(ranges, n_draws, SEED))


def test_with_every_range_collapsed_all_draws_fall_in_one_bin() -> None:
    frame = histogram({p: None for p in ranged()}, 300)
    assert BINS_PER_DECADE == 20
    # bin k is [10^(k / 20), 10^((k + 1) / 20)): R = 9.504 -> k = floor(20 x 0.9779) = 19; R = 3.099 -> k = 9
    laptop_bin = math.floor(math.log10(CLOUD / LAPTOP) * 20)
    phone_bin = math.floor(math.log10(CLOUD / PHONE) * 20)
    assert (laptop_bin, phone_bin) == (19, 9)
    # only compute only has rows: no draw of a pattern that moves bytes fits its link
    assert frame.select("device_class", "pattern", "draws", "share").rows() == [
        ("laptop", "none", 300, 1.0), ("phone", "none", 300, 1.0)]
    assert frame.get_column("bin_low").to_list() == pytest.approx([10 ** (19 / 20), 10 ** (9 / 20)], rel=1e-12)
    assert frame.get_column("bin_high").to_list() == pytest.approx([10.0, 10 ** (10 / 20)], rel=1e-12)


def test_a_uniform_cloud_grid_spreads_over_the_bins_of_r_by_hand() -> None:
    ranges = {p: None for p in ranged()} | {"cloud_grid_gco2e_per_kwh": (250.0, 480.0, "uniform")}
    laptop = histogram(ranges, 5000).filter(pl.col("device_class") == "laptop")

    def grid_at(r: float) -> float:
        """The cloud grid (g/kWh) where the laptops' R is r: (123.75 + CLOUD_PER_G x g) / LAPTOP = r."""
        return (r * LAPTOP - 123.75) / CLOUD_PER_G

    # R from (123.75 + CLOUD_PER_G x 250) / LAPTOP = 6.53 to 12.38 at 480: bins 16 (6.31-7.08) to 21 (11.2-12.6)
    keys = [round(math.log10(low) * 20) for low in laptop.get_column("bin_low")]
    assert keys == [16, 17, 18, 19, 20, 21]
    assert laptop.get_column("draws").sum() == 5000
    assert laptop.get_column("share").sum() == pytest.approx(1.0, rel=1e-12)
    # each bin's share: the width of the grid values mapping into it over the uniform's 230 g/kWh,
    # e.g. bin 19, R in [8.91, 10): the grid in [343.7, 386.5), 18.6% of the draws
    edges = [250.0, *(grid_at(10 ** (k / 20)) for k in range(17, 22)), 480.0]
    expected = [(high - low) / 230 for low, high in pairwise(edges)]
    assert expected[3] == pytest.approx(0.186, abs=1e-3)
    # binomial standard error of a share near 0.2 from 5000 draws: 0.006
    assert laptop.get_column("share").to_list() == pytest.approx(expected, abs=0.025)
