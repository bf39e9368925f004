"""Energy arithmetic: trapezoid, idle baseline, counters, Student t, and the series' CI."""

from __future__ import annotations

import datetime as dt
import math

import polars as pl
import pytest

import pipelines.ingest.energy.integration as energy
from pipelines.errors import ManifestError
from pipelines.ingest.energy.integration import counter_energy, integrate
from pipelines.ingest.energy.runs import runs_from_samples
from pipelines.ingest.energy.student_t import t_quantile, t_two_sided_mass
from pipelines.ingest.options import RunOptions
from pipelines.warehouse.power_logs import series_from_runs

T0 = dt.datetime(2024, 1, 1, 12, 0, tzinfo=dt.UTC)


def samples(rows: list[tuple[str, str, float, float, bool]]) -> pl.DataFrame:
    """(run_id, channel, seconds after T0, W, counts_to_total) -> a power_samples frame."""
    return pl.DataFrame(
        {
            "run_id": [r[0] for r in rows],
            "ts": [T0 + dt.timedelta(seconds=r[2]) for r in rows],
            "channel": [r[1] for r in rows],
            "power_w": [r[3] for r in rows],
            "counts_to_total": [r[4] for r in rows],
        },
        schema_overrides={"ts": pl.Datetime("us", "UTC")},
    )


def one(frame: pl.DataFrame, run_id: str) -> dict:
    return frame.filter(pl.col("run_id") == run_id).row(0, named=True)


def test_trapezoid_by_hand() -> None:
    # 10 W -> 20 W over 1 s, then 20 W for 2 s: 15 + 40 = 55 J over 3 s.
    run = one(integrate(samples([("a", "gpu0", 0, 10, True), ("a", "gpu0", 1, 20, True), ("a", "gpu0", 3, 20, True)])), "a")
    assert run["energy_j"] == pytest.approx(55.0, rel=1e-12)
    assert run["energy_gross_j"] == pytest.approx(55.0, rel=1e-12)
    assert run["duration_s"] == 3.0
    assert run["n_samples"] == 3
    assert run["started_at"] == T0 and run["ended_at"] == T0 + dt.timedelta(seconds=3)
    assert run["idle_baseline_w"] is None


def test_idle_baseline_is_subtracted_over_the_duration() -> None:
    frame = samples([("a", "x", 0, 10, True), ("a", "x", 1, 20, True), ("a", "x", 3, 20, True), ("b", "x", 0, 8, True), ("b", "x", 2, 8, True)])
    flat = integrate(frame, idle_baseline_w=5.0)
    assert one(flat, "a")["energy_j"] == pytest.approx(55.0 - 5.0 * 3, rel=1e-12)
    assert one(flat, "a")["energy_gross_j"] == pytest.approx(55.0, rel=1e-12)
    assert one(flat, "b")["energy_j"] == pytest.approx(16.0 - 10.0, rel=1e-12)
    per_run = integrate(frame, idle_baseline_w={"a": 2.0})
    assert one(per_run, "a")["energy_j"] == pytest.approx(55.0 - 6.0, rel=1e-12)
    assert one(per_run, "a")["idle_baseline_w"] == 2.0
    assert one(per_run, "b")["energy_j"] == pytest.approx(16.0, rel=1e-12)
    assert one(per_run, "b")["idle_baseline_w"] is None


def test_channels_are_summed_and_sub_channels_left_out() -> None:
    frame = samples(
        [
            ("a", "gpu0", 0, 100, True),
            ("a", "gpu1", 0, 50, True),
            ("a", "gpu0", 2, 100, True),
            ("a", "gpu1", 2, 60, True),
            ("a", "cpu", -1, 1000, False),  # not counted, but it extends the run's time span
            ("a", "cpu", 2, 1000, False),
        ]
    )
    run = one(integrate(frame), "a")
    assert run["energy_j"] == pytest.approx(200.0 + 110.0, rel=1e-12)
    assert run["duration_s"] == 3.0
    assert run["n_samples"] == 4
    channels = integrate(frame, per_channel=True).sort("channel")
    assert channels.select("channel", "energy_j", "n_samples").rows() == [("gpu0", 200.0, 2), ("gpu1", 110.0, 2)]


def test_order_and_slicing_do_not_change_the_integral(monkeypatch: pytest.MonkeyPatch) -> None:
    rows = [("a", f"gpu{i % 2}", i // 2 * 0.5, 10.0 + (i * 7) % 13, True) for i in range(40)]
    expected = integrate(samples(rows))
    shuffled = samples(rows[::-1])
    assert one(integrate(shuffled), "a")["energy_j"] == pytest.approx(one(expected, "a")["energy_j"], rel=1e-12)
    monkeypatch.setattr(energy, "SLICE_ROWS", 3)
    assert one(integrate(samples(rows)), "a")["energy_j"] == pytest.approx(one(expected, "a")["energy_j"], rel=1e-12)
    assert one(integrate(shuffled), "a")["energy_j"] == pytest.approx(one(expected, "a")["energy_j"], rel=1e-12)
    by_hand = 0.0
    for channel in ("gpu0", "gpu1"):
        points = sorted((t, w) for _, c, t, w, _ in rows if c == channel)
        by_hand += sum((w0 + w1) / 2 * (t1 - t0) for (t0, w0), (t1, w1) in zip(points, points[1:], strict=False))
    assert one(expected, "a")["energy_j"] == pytest.approx(by_hand, rel=1e-12)


def test_many_runs_are_integrated_separately() -> None:
    rows = [(f"r{k}", "x", t, float(k), True) for k in range(1, 12) for t in (0, 1)]
    result = integrate(samples(rows))
    assert result.height == 11
    assert dict(result.select("run_id", "energy_j").rows()) == {f"r{k}": float(k) for k in range(1, 12)}


def test_counter_energy_sums_power_times_interval() -> None:
    frame = samples([("a", "package-0", 1, 10, True), ("a", "dram", 1, 2, True), ("a", "core", 1, 4, False), ("a", "package-0", 3, 15, True)])
    frame = frame.with_columns(pl.Series("interval_s", [1.0, 1.0, 1.0, 2.0]))
    run = one(counter_energy(frame), "a")
    assert run["energy_j"] == pytest.approx(10 + 2 + 30, rel=1e-12)
    assert run["started_at"] == T0 and run["duration_s"] == 3.0
    assert run["n_samples"] == 3


def test_runs_from_samples_carries_the_options() -> None:
    frame = samples([("r1", "battery", 0, 8, True), ("r1", "battery", 4, 12, True)])
    options = RunOptions(run_id="r1", device_id="phone", model="OPT-125M", workload="w", series_id="s", idle_baseline_w=1.0, is_synthetic=True)
    run = runs_from_samples(frame, options, log_format="android_sysfs").row(0, named=True)
    assert run["energy_gross_j"] == pytest.approx(40.0) and run["energy_j"] == pytest.approx(36.0)
    assert run["mean_power_w"] == pytest.approx(9.0)
    assert (run["device_id"], run["model"], run["workload"], run["series_id"]) == ("phone", "OPT-125M", "w", "s")
    assert (run["energy_method"], run["log_format"], run["is_synthetic"]) == ("trapezoid", "android_sysfs", True)


@pytest.mark.parametrize(
    ("df", "table_value"),
    [(1, 12.706204736), (2, 4.302652730), (3, 3.182446305), (4, 2.776445105), (9, 2.262157163), (30, 2.042272456), (100, 1.983971519)],
)
def test_t_quantile_matches_the_t_table(df: int, table_value: float) -> None:
    assert t_quantile(df) == pytest.approx(table_value, abs=2e-9)


def test_t_quantile_tends_to_the_normal_quantile() -> None:
    # t(0.975, 1e5) = z + (z^3 + z) / (4 df) + O(df^-2) with z = 1.959963985.
    assert t_quantile(100000) == pytest.approx(1.959963985 + (1.959963985**3 + 1.959963985) / 4e5, abs=1e-9)
    # Above 20000 df the expansion is used; the exact distribution confirms it.
    assert t_two_sided_mass(t_quantile(20001), 20001) == pytest.approx(0.95, abs=1e-12)
    assert t_two_sided_mass(t_quantile(100000), 100000) == pytest.approx(0.95, abs=1e-12)
    assert t_quantile(4, confidence=0.99) == pytest.approx(4.604094871, abs=1e-8)


def _runs(energies: list[float], series: str = "s", **extra: object) -> pl.DataFrame:
    n = len(energies)
    return pl.DataFrame(
        {
            "run_id": [f"{series}{i}" for i in range(n)],
            "series_id": [series] * n,
            "device_id": extra.get("device_id", ["d"] * n),
            "model": ["m"] * n,
            "workload": ["w"] * n,
            "started_at": [T0 + dt.timedelta(days=n - i) for i in range(n)],
            "duration_s": [100.0] * n,
            "energy_j": energies,
            "mean_power_w": [e / 100.0 for e in energies],
            "is_synthetic": [False] * n,
            "source_id": [f"src{i}" for i in range(n)],
            "source_file": [f"f{i}.csv" for i in range(n)],
        },
        schema_overrides={"started_at": pl.Datetime("us", "UTC")},
    )


def test_series_ci_against_a_hand_computation() -> None:
    series = series_from_runs(_runs([10.0, 12.0, 14.0])).row(0, named=True)
    # mean 12, sample sd 2, t(0.975, 2) = 4.302652729911275 (t table), n = 3.
    half = 4.302652729911275 * 2.0 / math.sqrt(3)
    assert series["n_runs"] == 3
    assert series["energy_j_mean"] == pytest.approx(12.0)
    assert series["energy_j_sd"] == pytest.approx(2.0)
    assert series["ci95_t"] == pytest.approx(4.302652729911275, abs=1e-9)
    assert series["energy_j_ci95_low"] == pytest.approx(12.0 - half, rel=1e-9)
    assert series["energy_j_ci95_high"] == pytest.approx(12.0 + half, rel=1e-9)
    assert series["duration_s_mean"] == 100.0 and series["mean_power_w_mean"] == pytest.approx(0.12)
    # The series' source is its first run's (earliest started_at): run 2 started first.
    assert (series["source_id"], series["source_file"], series["source_row"]) == ("src2", "f2.csv", None)


def test_single_run_series_has_no_interval_and_unseriesed_runs_are_left_out() -> None:
    runs = pl.concat([_runs([5.0], series="one"), _runs([1.0, 3.0], series="two")])
    runs = pl.concat([runs, _runs([7.0], series="x").with_columns(pl.lit(None, dtype=pl.String).alias("series_id"))])
    out = series_from_runs(runs)
    assert out.get_column("series_id").to_list() == ["one", "two"]
    single = out.row(0, named=True)
    assert single["energy_j_sd"] is None and single["energy_j_ci95_low"] is None and single["ci95_t"] is None
    pair = out.row(1, named=True)
    # energies 1 and 3: mean 2, sd sqrt(2), n 2, t(0.975, 1) = 12.706204736.
    assert pair["energy_j_ci95_high"] == pytest.approx(2.0 + 12.706204736 * math.sqrt(2) / math.sqrt(2), rel=1e-8)
    assert pair["energy_j_ci95_low"] == pytest.approx(2.0 - 12.706204736, rel=1e-8)


def test_a_series_mixing_devices_is_refused() -> None:
    with pytest.raises(ManifestError, match="series 's' mixes"):
        series_from_runs(_runs([1.0, 2.0], device_id=["a", "b"]))


def _sourced(runs: pl.DataFrame, prefix: str) -> pl.DataFrame:
    return runs.with_columns((pl.lit(prefix) + pl.col("source_id")).alias("source_id"))


def test_series_of_one_device_and_workload_coexist_and_only_the_marked_one_reproduces() -> None:
    paper, mine = _sourced(_runs([10.0, 12.0], series="paper"), "paper_"), _sourced(_runs([11.0], series="mine"), "mine_")
    out = series_from_runs(pl.concat([paper, mine]), {"paper_src0": "T1_laptop_energy", "paper_src1": "T1_laptop_energy"})
    assert out.select("series_id", "device_id", "workload", "n_runs", "energy_j_mean", "reproduces").rows() == [
        ("mine", "d", "w", 1, 11.0, None), ("paper", "d", "w", 2, 11.0, "T1_laptop_energy")]


def test_a_claim_is_reproduced_by_one_series() -> None:
    paper, mine = _sourced(_runs([10.0, 12.0], series="paper"), "paper_"), _sourced(_runs([11.0], series="mine"), "mine_")
    claims = {"paper_src0": "T1_laptop_energy", "paper_src1": "T1_laptop_energy", "mine_src0": "T1_laptop_energy"}
    with pytest.raises(ManifestError, match=r"claim 'T1_laptop_energy' is reproduced by the series 'mine' \(source mine_src0\) and "
                                            r"'paper' \(sources paper_src0, paper_src1\); .*drop the option reproduces from the others"):
        series_from_runs(pl.concat([paper, mine]), claims)
    # a run added to the paper's series without the mark mixes it
    with pytest.raises(ManifestError, match=r"series 'paper' mixes reproduces 'T1_laptop_energy' \(source paper_src0\) and none "
                                            r"\(source paper_src1\); .*give the other runs a series_id of their own"):
        series_from_runs(paper, {"paper_src0": "T1_laptop_energy"})
