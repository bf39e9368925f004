"""The benchmark's pieces on small inputs: the log generator's format, agreement on energy, and
the numpy evaluation of the model against the SQL on every scenario.

No timing is asserted here; ``make bench`` measures speed and memory.
"""

from __future__ import annotations

import datetime as dt
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest

from bench import nvidia_smi_log
from bench.baseline import numpy_model
from bench.ingest import RTOL, run_worker
from bench.memory import current_rss_bytes, peak_rss_bytes
from bench.monte_carlo import MC_RTOL, per_draw_difference, summary_difference
from bench.pandas_baseline import ingest
from pipelines.model.uncertainty import Draws, draw_inputs
from pipelines.paths import PROJECT_ROOT
from schemas.vocabulary import ACCOUNTING_FRAMES, HEADLINE_BASES, PATTERNS, POLICIES

SAMPLES = 10_000


@pytest.fixture(scope="module")
def tiny_log(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A 10,000-sample, two-GPU nvidia-smi log."""
    return nvidia_smi_log.write_log(tmp_path_factory.mktemp("bench") / "tiny.csv", SAMPLES)


def reference_energies(path: Path) -> dict[str, float]:
    """Per-GPU trapezoid energy, read line by line with the standard library and numpy."""
    samples: dict[str, list[tuple[float, float]]] = {}
    lines = path.read_text(encoding="ascii").splitlines()
    for line in lines[1:]:
        stamp, index, _, power = line.split(", ")
        if power == "[N/A]":
            continue
        moment = dt.datetime.strptime(stamp, "%Y/%m/%d %H:%M:%S.%f").replace(tzinfo=dt.UTC)
        samples.setdefault(f"gpu{index}", []).append((moment.timestamp(), float(power.removesuffix(" W"))))
    out = {}
    for channel, rows in samples.items():
        t, p = np.array(rows).T
        out[channel] = float(np.sum((p[1:] + p[:-1]) * np.diff(t)) / 2.0)
    return out


def test_generator_writes_the_nvidia_smi_format(tiny_log: Path) -> None:
    lines = tiny_log.read_text(encoding="ascii").splitlines()
    assert lines[0] == "timestamp, index, name, power.draw [W]"
    assert len(lines) == SAMPLES + 1
    rows = [line.split(", ") for line in lines[1:]]
    assert all(len(row) == 4 and row[2] == "NVIDIA RTX A5000" for row in rows)
    assert [row[1] for row in rows[:4]] == ["0", "1", "0", "1"]
    assert rows[0][0] == rows[1][0] == "2023/05/01 12:00:00.000"
    na = [i for i, row in enumerate(rows) if row[3] == "[N/A]"]
    assert na == sorted(nvidia_smi_log.na_rows(SAMPLES).tolist()) and len(na) >= 2
    assert {rows[i][1] for i in na} == {"0", "1"}, "both GPUs have an unavailable reading"
    readings = [row for row in rows if row[3] != "[N/A]"]
    assert all(row[3].endswith(" W") and len(row[3].split(".")[1]) == 4 for row in readings)
    watts = {gpu: [float(row[3].removesuffix(" W")) for row in readings if row[1] == gpu] for gpu in ("0", "1")}
    assert 150 < np.median(watts["0"]) < 260, "GPU 0 trains"
    assert min(watts["1"]) < 40 < max(watts["1"]) < np.median(watts["0"]), "GPU 1 idles, with bursts"


def test_generator_is_deterministic(tmp_path: Path, tiny_log: Path) -> None:
    again = nvidia_smi_log.write_log(tmp_path / "again.csv", SAMPLES)
    assert again.read_bytes() == tiny_log.read_bytes()
    cached = nvidia_smi_log.cached_log(tmp_path, SAMPLES)
    assert cached.read_bytes() == tiny_log.read_bytes()
    assert nvidia_smi_log.cached_log(tmp_path, SAMPLES) == cached


def test_pandas_baseline_matches_a_line_by_line_reading(tiny_log: Path) -> None:
    frame = ingest(tiny_log, "UTC")
    expected = reference_energies(tiny_log)
    assert frame["channel"].tolist() == ["gpu0", "gpu1"]
    assert frame["n_samples"].tolist() == [SAMPLES // 2 - 1, SAMPLES // 2 - 1]
    for channel, energy in zip(frame["channel"], frame["energy_j"], strict=True):
        assert energy == pytest.approx(expected[channel], rel=1e-9)
    # about 205 W and 24-144 W over ~513 s
    assert frame["energy_j"][0] == pytest.approx(205 * frame["duration_s"][0], rel=0.05)


def test_pandas_baseline_converts_local_time(tmp_path: Path) -> None:
    path = tmp_path / "dst.csv"
    path.write_text(
        "timestamp, index, name, power.draw [W]\n"
        "2023/03/12 01:59:59.000, 0, NVIDIA RTX A5000, 100.00 W\n"
        "2023/03/12 03:00:01.000, 0, NVIDIA RTX A5000, 100.00 W\n",
        encoding="ascii",
    )
    # 01:59:59 EST to 03:00:01 EDT is 2 s of real time, not 3,602 s
    frame = ingest(path, "America/New_York")
    assert frame["duration_s"][0] == pytest.approx(2.0)
    assert frame["energy_j"][0] == pytest.approx(200.0)


def test_project_parser_agrees_with_pandas(tiny_log: Path) -> None:
    from pipelines.ingest.energy.integration import integrate
    from pipelines.ingest.parsers.nvidia_smi import parse_nvidia_smi

    parsed = parse_nvidia_smi(tiny_log, {"timezone": "UTC", "run_id": "bench"})
    result = integrate(parsed.frame, per_channel=True)
    project = {str(row["channel"]): float(row["energy_j"]) for row in result.iter_rows(named=True)}
    expected = reference_energies(tiny_log)
    assert sorted(project) == sorted(expected)
    for channel, value in expected.items():
        assert project[channel] == pytest.approx(value, rel=RTOL)
    baseline = ingest(tiny_log, "UTC")
    for channel, value in zip(baseline["channel"], baseline["energy_j"], strict=True):
        assert project[channel] == pytest.approx(value, rel=RTOL)
    assert len(parsed.rejects) == len(nvidia_smi_log.na_rows(SAMPLES)), "each [N/A] cell is one reject"
    total = integrate(parsed.frame)
    assert total["energy_j"][0] == pytest.approx(sum(expected.values()), rel=RTOL)


@pytest.mark.parametrize("impl", ["pandas", "project"])
def test_worker_reports_time_memory_and_energy(tiny_log: Path, impl: str) -> None:
    """Each side of the ingest figure with energies: the project's ingests the log as a power-log
    partition, pandas integrates it in memory."""
    result = run_worker(impl, tiny_log)
    assert result["impl"] == impl
    assert result["seconds"] > 0
    assert result["file_bytes"] == tiny_log.stat().st_size
    assert result["peak_rss"] >= result["rss_after_imports"] > 10_000_000
    assert result["energies_j"] == pytest.approx(reference_energies(tiny_log), rel=1e-9)


def test_the_floor_reads_every_line_into_a_table(tiny_log: Path, tmp_path: Path) -> None:
    import duckdb

    from bench.ingest_workers import duckdb_floor

    assert duckdb_floor(tiny_log, tmp_path)() == {}
    with duckdb.connect(str(tmp_path / "floor.duckdb"), read_only=True) as con:
        assert con.execute("select count(*), count(distinct index) from samples").fetchall() == [(SAMPLES, 2)]


def test_a_subprocess_peak_is_its_own_not_its_parents() -> None:
    """Linux hands a process's ru_maxrss to the programs it starts; the bench's peak is the child's own."""
    ballast = bytearray(400_000_000)  # this process's peak: at least 400 MB
    code = "from bench.memory import peak_rss_bytes; print(peak_rss_bytes())"
    proc = subprocess.run([sys.executable, "-c", code], cwd=PROJECT_ROOT, capture_output=True, text=True, check=True)
    assert len(ballast) and 5_000_000 < int(proc.stdout) < 200_000_000


def test_run_measured_reports_the_childs_cpu_and_peak() -> None:
    from bench.memory import run_measured

    busy = "import time\nx = bytearray(150_000_000)\nstart = time.process_time()\nwhile time.process_time() - start < 0.3: pass\nprint('done')"
    result = run_measured([sys.executable, "-c", busy], cwd=PROJECT_ROOT)
    assert result.returncode == 0 and result.stdout.strip() == "done"
    assert result.cpu_seconds >= 0.3 and result.seconds >= result.cpu_seconds * 0.5
    assert result.peak_rss >= 150_000_000


def test_rss_readings_are_plausible() -> None:
    now, peak = current_rss_bytes(), peak_rss_bytes()
    # the kernel's high-water mark may lag the live counter by a few pages
    assert 10_000_000 < now <= peak + 4_000_000
    assert peak < 64_000_000_000


def test_numpy_macros_match_the_sql_definitions() -> None:
    assert numpy_model.whole_devices(15.000000000001) == 15
    assert numpy_model.whole_devices(15.01) == 16
    assert list(numpy_model.sql_integer(np.array([0.0, 0.49, 0.5, 1.5, 2.0]))) == [0, 0, 1, 2, 2]
    assert numpy_model.memory_floor_devices(1.3e9, 16.0, 80.0, 0.9) == 1
    assert numpy_model.memory_floor_devices(1.3e9, 16.0, 8.0, 0.5) == 6
    # activations cost more than the all-reduce: the fewest stages that hold the state
    assert numpy_model.pipeline_stages(100.0, 24.0, 6.0, 8192.0, 1.0) == 6
    # the all-reduce costs more: one stage per device, at most one per layer
    assert numpy_model.pipeline_stages(10.7, 24.0, 6.0, 1.0, 1e6) == 10
    assert numpy_model.pipeline_stages(100.0, 24.0, 6.0, 1.0, 1e6) == 24
    assert numpy_model.edge_wall_factor(0.8, 0.5, 0.5) == pytest.approx(1.5 / 0.8)


def every_scenario_draws(warehouse: Path, n_draws: int, seed: int) -> tuple[Draws, int]:
    """``n_draws`` draws of every scenario in the warehouse the numpy copy covers (its device classes, no mixed
    fleet: bench/baseline/numpy_model.py), and the number of those scenarios."""
    import polars as pl

    from pipelines.model.formula import scenario_inputs
    from pipelines.warehouse.database import open_readonly
    from pipelines.warehouse.queries import query_pl

    with open_readonly(warehouse) as con:
        outside = query_pl(con, "select distinct scenario_id from core.scenario_devices "
                                "where not list_contains($classes, device_class) or fleet_share is not null",
                           {"classes": list(numpy_model.DEVICE_CLASSES)}).get_column("scenario_id").to_list()
        base = scenario_inputs(con).filter(~pl.col("scenario_id").is_in(outside))
        parameters = query_pl(con, "select * from core.scenario_parameters")
    assert base.height >= 7, "the numpy copy checks the shipped scenarios it covers"
    return draw_inputs(base, parameters, n_draws, seed=seed), base.height


def test_numpy_model_agrees_with_the_sql_for_every_scenario(built_warehouse: Path) -> None:
    """R per draw, class and pattern (headline basis) from numpy and from sql/core/model_evaluation.sql."""
    from pipelines.warehouse.database import open_readonly

    draws, scenarios = every_scenario_draws(built_warehouse, 300, seed=11)
    evaluated = numpy_model.evaluate(draws)
    assert evaluated.height == scenarios * 300 * len(numpy_model.DEVICE_CLASSES) * len(PATTERNS)
    r = evaluated.get_column("reduction_factor").to_numpy()
    assert np.all(np.isfinite(r)) and np.all(r > 0)
    with open_readonly(built_warehouse) as con:
        assert per_draw_difference(con, draws) <= MC_RTOL


def with_varied(draws: Draws, columns: dict[str, pa.Array]) -> Draws:
    """``draws`` with ``columns`` drawn per draw instead of held constant per scenario."""
    table = draws.drawn
    for name, values in columns.items():
        if name in table.column_names:
            table = table.set_column(table.column_names.index(name), name, values)
        else:
            table = table.append_column(name, values)
    return Draws(table, draws.constants.drop([c for c in columns if c in draws.constants.columns]))


def test_numpy_model_agrees_with_the_sql_on_every_branch(built_warehouse: Path) -> None:
    """Headline basis, stated count, GPU variant, accounting frame and embodied policy mixed within one scenario's draws."""
    from pipelines.warehouse.database import open_readonly

    draws, _ = every_scenario_draws(built_warehouse, 240, seed=12)
    v = draws.drawn.column("variant_id").to_numpy()
    stated = np.where(v % 5 == 0, 17.0, 4.0 + v % 7)
    varied = with_varied(draws, {
        "headline_basis": pa.array(np.array(HEADLINE_BASES[1:])[v % 2]),
        "cloud_gpu_variant": pa.array(((v // 2) % 2).astype(np.float64)),
        "edge_embodied_policy": pa.array(np.array(list(POLICIES))[v % len(POLICIES)]),
        "accounting_frame": pa.array(np.array(ACCOUNTING_FRAMES)[(v // 3) % len(ACCOUNTING_FRAMES)]),
        "laptop_devices_per_gpu": pa.array(stated, mask=v % 4 != 0),
        "phone_devices_per_gpu": pa.array(stated * 4, mask=v % 3 != 1),
    })
    with open_readonly(built_warehouse) as con:
        assert per_draw_difference(con, varied) <= MC_RTOL


def test_numpy_summary_matches_the_sql_summary(built_warehouse: Path) -> None:
    """p05/p50/p95 and mean of R per scenario x class x pattern: numpy.quantile against DuckDB's quantile_cont."""
    from pipelines.model.uncertainty import summarize
    from pipelines.warehouse.database import open_readonly

    draws, scenarios = every_scenario_draws(built_warehouse, 1_001, seed=13)
    ours = numpy_model.summarize(draws)
    assert ours.height == scenarios * len(numpy_model.DEVICE_CLASSES) * len(PATTERNS)
    assert (ours.get_column("n_draws") == 1_001).all()
    assert (ours.get_column("p05") <= ours.get_column("p50")).all() and (ours.get_column("p50") <= ours.get_column("p95")).all()
    with open_readonly(built_warehouse) as con:
        assert summary_difference(summarize(con, draws), ours) <= MC_RTOL


def test_monte_carlo_worker_times_sql_and_numpy(built_warehouse: Path) -> None:
    """The Monte Carlo figure's worker on a small count: both paths timed, and they agree."""
    proc = subprocess.run([sys.executable, "-m", "bench", "mc", str(built_warehouse), "2000", "200"],
                          cwd=PROJECT_ROOT, capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stderr[-2000:]
    result = json.loads(proc.stdout.strip().splitlines()[-1])
    assert result["groups"] == result["numpy_groups"] == 12  # 2 device classes x 6 communication patterns
    assert result["max_rel_diff"] <= MC_RTOL and result["summary_max_rel_diff"] <= MC_RTOL
    assert len(result["sql_seconds"]) == len(result["numpy_seconds"]) == 2
    assert min(result["sql_seconds"] + result["numpy_seconds"]) > 0
    assert result["peak_rss"] >= result["rss_before"] > 10_000_000
    from pipelines.warehouse.database import open_readonly
    from pipelines.warehouse.queries import query_pl

    with open_readonly(built_warehouse) as con:
        scenario = query_pl(con, "select * from core.scenarios where scenario_id = $s", {"s": result["scenario"]})
    assert scenario.height == 1 and scenario.item(0, "headline_basis") == "measured_rates"


def test_test_suite_figure_is_the_median_and_a_failure_is_fatal() -> None:
    from bench.cold_run import TARGET_TESTS_S, bench_tests
    from bench.report import Report

    report = Report()
    bench_tests(report, 3, (sys.executable, "-c", "print('3 passed in 0.01s')"))
    [figure] = report.figures
    assert figure.name == "default test suite `make test` (median of 3)" and figure.passed is True
    assert figure.target == f"<= {TARGET_TESTS_S:g} s" and float(figure.value.removesuffix(" s")) < TARGET_TESTS_S
    assert not report.fatal
    failed = Report()
    bench_tests(failed, 3, (sys.executable, "-c", "raise SystemExit(5)"))  # pytest's "no tests collected"
    assert [f.passed for f in failed.figures] == [False] and "exit 5" in failed.fatal[0]
