"""The synthesised Table 1 logs: reproducible byte for byte, and centred on the paper's (P, t).

Energies are checked twice: with a small trapezoid reader written here, independent of the
project's parsers, and with the project's parsers and ``pipelines.ingest.energy.integration.integrate``.
"""

from __future__ import annotations

import datetime as dt
import re
from collections import defaultdict
from pathlib import Path

import numpy as np
import pytest

from pipelines.ingest.digests import sha256_file
from pipelines.ingest.manifest import SourceEntry, load_manifest
from pipelines.paths import MANIFEST_DIR
from tools import synthetic

PAPER_KJ = {"table1_phone": 35.1, "table1_laptop": 7.2, "table1_gpu": 55.0}
PAPER_W = {"table1_phone": 10.0, "table1_laptop": 15.0, "table1_gpu": 220.0}
PAPER_S = {"table1_phone": 3510.0, "table1_laptop": 480.0, "table1_gpu": 250.0}
KINDS = {"table1_phone": "android_sysfs", "table1_laptop": "powermetrics", "table1_gpu": "nvidia_smi"}
DEVICE_IDS = {"table1_phone": "qualcomm-sd888", "table1_laptop": "apple-m2-pro", "table1_gpu": "nvidia-rtx-a5000"}
MANIFEST_NAME = "power_synthetic.toml"


@pytest.fixture(scope="module")
def entries() -> list[SourceEntry]:
    """The manifest entries of the synthesised logs."""
    found = [e for e in load_manifest() if e.manifest_file == f"manifest/{MANIFEST_NAME}"]
    assert found, "sources/manifest/power_synthetic.toml lists no sources"
    return found


# --- an independent reader: (t in s, P in W) per file -------------------------------------


def read_android_sysfs(path: Path) -> tuple[np.ndarray, np.ndarray]:
    """Epoch ms, microamps, microvolts -> seconds from start, watts."""
    rows = np.loadtxt(path, delimiter=",", skiprows=1, dtype=np.float64)
    t = (rows[:, 0] - rows[0, 0]) / 1000.0
    return t, np.abs(rows[:, 1]) * rows[:, 2] / 1e12


def read_powermetrics(path: Path) -> tuple[np.ndarray, np.ndarray]:
    """Block times from the elapsed intervals (the first block at 0); Combined power in W."""
    text = path.read_text(encoding="ascii")
    elapsed = [float(x) for x in re.findall(r"^\*\*\* Sampled system activity \(.*?\) \(([\d.]+)ms elapsed\) \*\*\*$", text, re.M)]
    combined = [float(x) for x in re.findall(r"^Combined Power \(CPU \+ GPU \+ ANE\): (\d+) mW$", text, re.M)]
    assert len(elapsed) == len(combined) > 1
    t = np.concatenate([[0.0], np.cumsum(elapsed[1:])]) / 1000.0
    return t, np.array(combined) / 1000.0


def read_nvidia_smi(path: Path) -> tuple[np.ndarray, np.ndarray]:
    """Local timestamps (no DST change inside a run) -> seconds from start; ``W`` stripped."""
    lines = path.read_text(encoding="ascii").splitlines()
    assert lines[0] == "timestamp, index, name, power.draw [W]"
    stamps, watts = [], []
    for line in lines[1:]:
        stamp, index, name, power = line.split(", ")
        assert (index, name) == ("0", "NVIDIA RTX A5000")
        stamps.append(dt.datetime.strptime(stamp, "%Y/%m/%d %H:%M:%S.%f"))
        watts.append(float(power.removesuffix(" W")))
    t = np.array([(s - stamps[0]).total_seconds() for s in stamps])
    return t, np.array(watts)


READERS = {"android_sysfs": read_android_sysfs, "powermetrics": read_powermetrics, "nvidia_smi": read_nvidia_smi}


def trapezoid_j(t: np.ndarray, p: np.ndarray) -> float:
    """Trapezoid integral of power over time, in joules."""
    return float(np.sum((p[1:] + p[:-1]) * np.diff(t)) / 2.0)


@pytest.fixture(scope="module")
def independent(entries: list[SourceEntry]) -> dict[str, list[tuple[float, float, float]]]:
    """series_id -> [(energy J, duration s, mean power W)] per run, from the reader above."""
    out: dict[str, list[tuple[float, float, float]]] = defaultdict(list)
    for entry in entries:
        t, p = READERS[entry.kind](entry.verified_file())
        energy = trapezoid_j(t, p)
        out[entry.options["series_id"]].append((energy, float(t[-1]), energy / float(t[-1])))
    return dict(out)


# --- reproducibility and manifest ---------------------------------------------------------


def test_generator_reproduces_every_shipped_file(tmp_path: Path, entries: list[SourceEntry]) -> None:
    files = synthetic.generate(tmp_path)
    by_name = {f.path.name: f for f in files}
    assert sorted(by_name) == sorted(Path(e.path).name for e in entries)
    for entry in entries:
        regenerated = tmp_path / Path(entry.path).name
        assert sha256_file(regenerated) == entry.sha256, f"{entry.id}: regenerated file differs from the shipped one"
        assert sha256_file(entry.file) == entry.sha256, f"{entry.id}: shipped file does not match its manifest hash"
    shipped = (MANIFEST_DIR / MANIFEST_NAME).read_text(encoding="utf-8")
    assert synthetic.manifest_text(files) == shipped


def test_two_invocations_write_identical_bytes(tmp_path: Path) -> None:
    first = {f.path.name: f.sha256 for f in synthetic.generate(tmp_path / "a")}
    second = {f.path.name: f.sha256 for f in synthetic.generate(tmp_path / "b")}
    assert first == second
    assert len(set(first.values())) == len(first), "every run must be a different file"


def test_manifest_entries_say_synthetic(entries: list[SourceEntry]) -> None:
    series = defaultdict(list)
    for entry in entries:
        opts = entry.options
        series[opts["series_id"]].append(entry)
        assert entry.status == "derived"
        assert entry.table == "staging.power_samples"
        assert entry.license == "CC-BY-4.0"
        assert entry.url == "https://arxiv.org/abs/2507.01803"
        assert entry.notes == "Synthesised from the paper's Table 1 summary (P, t); not a measurement."
        assert opts["is_synthetic"] is True
        assert opts["model"] == "OPT-125M"
        assert opts["workload"] == "OPT-125M training, paper Table 1"
        assert entry.kind == KINDS[opts["series_id"]]
        assert opts["device_id"] == DEVICE_IDS[opts["series_id"]]
        assert entry.id == f"synthetic_{opts['run_id']}"
    assert sorted(series) == sorted(PAPER_KJ)
    assert all(len(runs) >= 5 for runs in series.values())
    gpu = [e for e in entries if e.kind == "nvidia_smi"]
    assert all(e.options["timezone"] == "America/New_York" for e in gpu)


def test_shipped_size_is_modest(entries: list[SourceEntry]) -> None:
    assert sum(e.file.stat().st_size for e in entries) < 4_000_000


# --- values, read independently -----------------------------------------------------------


@pytest.mark.parametrize("series_id", sorted(PAPER_KJ))
def test_mean_energy_is_the_paper_value(series_id: str, independent: dict[str, list[tuple[float, float, float]]]) -> None:
    runs = independent[series_id]
    assert len(runs) >= 5
    energies = np.array([r[0] for r in runs]) / 1000.0
    assert abs(energies.mean() / PAPER_KJ[series_id] - 1.0) < 0.02
    # the runs differ from each other (about +-2-3 % in t and P) but stay near the centre
    cv = energies.std(ddof=1) / energies.mean()
    assert 0.01 < cv < 0.06
    durations = np.array([r[1] for r in runs])
    assert abs(durations.mean() / PAPER_S[series_id] - 1.0) < 0.002
    assert np.all(np.abs(durations / PAPER_S[series_id] - 1.0) < 0.04)
    powers = np.array([r[2] for r in runs])
    assert np.all(np.abs(powers / PAPER_W[series_id] - 1.0) < 0.05)


def test_phone_log_is_qualcomm_like_and_throttles(entries: list[SourceEntry]) -> None:
    for entry in (e for e in entries if e.kind == "android_sysfs"):
        rows = np.loadtxt(entry.file, delimiter=",", skiprows=1, dtype=np.int64)
        assert np.all(rows[:, 1] < 0), "discharge is reported as negative current_now"
        volts = rows[:, 2] / 1e6
        assert 3.6 < volts.min() and volts.max() < 4.2
        assert volts[:600].mean() > volts[-600:].mean() + 0.1, "the battery voltage sags over the run"
        t, p = read_android_sysfs(entry.file)
        assert np.all(np.diff(t) > 0.9) and np.all(np.diff(t) < 1.1)
        assert p[:5].mean() < 0.5 * p.mean(), "the run starts with a warm-up ramp"
        hot = p[(t > 120) & (t < 240)].mean()
        late = p[t > t[-1] - 600].mean()
        assert late < 0.9 * hot, "power sags once the phone throttles"


def test_laptop_combined_is_the_sum_of_its_parts(entries: list[SourceEntry]) -> None:
    pattern = re.compile(r"^CPU Power: (\d+) mW\nGPU Power: (\d+) mW\nANE Power: (\d+) mW\nCombined Power \(CPU \+ GPU \+ ANE\): (\d+) mW$", re.M)
    for entry in (e for e in entries if e.kind == "powermetrics"):
        text = entry.file.read_text(encoding="ascii")
        parts = np.array(pattern.findall(text), dtype=np.int64)
        assert parts.shape[0] == text.count("*** Sampled system activity")
        assert np.all(np.abs(parts[:, :3].sum(axis=1) - parts[:, 3]) <= 1)
        assert text.count("GPU Power:") == 2 * parts.shape[0], "GPU Power appears in both sections"


def test_gpu_log_samples_every_100_ms(entries: list[SourceEntry]) -> None:
    for entry in (e for e in entries if e.kind == "nvidia_smi"):
        t, p = read_nvidia_smi(entry.file)
        steps = np.diff(t)
        assert abs(np.median(steps) - 0.1) < 0.003 and steps.min() > 0.09
        assert 180 < np.median(p) < 240


# --- values, through the project's parsers ------------------------------------------------


def _parser_energy_j(entry: SourceEntry) -> float:
    """Energy of one log by the project's parser and ``pipelines.ingest.energy.integration.integrate``."""
    from pipelines.ingest.energy.integration import integrate
    from pipelines.ingest.parsers.android_sysfs import parse_android_sysfs
    from pipelines.ingest.parsers.nvidia_smi import parse_nvidia_smi
    from pipelines.ingest.parsers.powermetrics import parse_powermetrics

    parsers = {"android_sysfs": parse_android_sysfs, "powermetrics": parse_powermetrics, "nvidia_smi": parse_nvidia_smi}
    parsed = parsers[entry.kind](entry.verified_file(), entry.options)
    assert not parsed.rejects, f"{entry.id}: {parsed.rejects[:3]}"
    result = integrate(parsed.frame)
    assert result.height == 1, f"{entry.id}: one run, one channel expected, got {result}"
    return float(result["energy_j"][0])


def test_parsed_energy_matches_the_paper(entries: list[SourceEntry], independent: dict[str, list[tuple[float, float, float]]]) -> None:
    by_series: dict[str, list[float]] = defaultdict(list)
    for entry in entries:
        by_series[entry.options["series_id"]].append(_parser_energy_j(entry))
    for series_id, energies in by_series.items():
        assert len(energies) >= 5
        mean_kj = float(np.mean(energies)) / 1000.0
        assert abs(mean_kj / PAPER_KJ[series_id] - 1.0) < 0.02, f"{series_id}: {mean_kj:.3f} kJ"
        reference = sorted(r[0] for r in independent[series_id])
        assert np.allclose(sorted(energies), reference, rtol=0.005), series_id
