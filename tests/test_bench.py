"""The benchmark's pieces on a tiny log: the generator's format, and agreement on energy.

No timing is asserted here; ``make bench`` measures speed and memory.
"""

from __future__ import annotations

import datetime as dt
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from bench import nvidia_smi_log
from bench.__main__ import RTOL, current_rss_bytes, peak_rss_bytes
from bench.pandas_baseline import ingest
from pipelines.paths import PROJECT_ROOT

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
    from pipelines.energy import integrate
    from pipelines.parsers.nvidia_smi import parse_nvidia_smi

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


def test_worker_reports_time_memory_and_energy(tiny_log: Path) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "bench", "worker", "pandas", str(tiny_log)],
        cwd=PROJECT_ROOT,
        capture_output=True,
        text=True,
        check=True,
    )
    result = json.loads(proc.stdout.strip().splitlines()[-1])
    assert result["impl"] == "pandas"
    assert result["seconds"] > 0
    assert result["peak_rss"] >= result["rss_after_imports"] > 10_000_000
    expected = reference_energies(tiny_log)
    assert result["energies_j"] == pytest.approx(expected, rel=1e-9)


def test_rss_readings_are_plausible() -> None:
    now, peak = current_rss_bytes(), peak_rss_bytes()
    # the kernel's high-water mark may lag the live counter by a few pages
    assert 10_000_000 < now <= peak + 4_000_000
    assert peak < 64_000_000_000


def test_monte_carlo_worker_agrees_with_the_python_loop(built_warehouse: Path) -> None:
    """The Monte Carlo figure's worker on a small count: the loop's formula matches the SQL."""
    proc = subprocess.run([sys.executable, "-m", "bench", "mc", str(built_warehouse), "2000", "50"],
                          cwd=PROJECT_ROOT, capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stderr[-2000:]
    result = json.loads(proc.stdout.strip().splitlines()[-1])
    assert result["groups"] == 12  # 2 device classes x 6 communication patterns
    assert result["max_rel_diff"] <= 1e-9
    assert result["loop_draws"] == 50 and result["loop_seconds"] > 0 and result["cold_seconds"] > 0
