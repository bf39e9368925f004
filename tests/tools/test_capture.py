"""edge-carbon-capture: the model, the backends, the protocol, and a captured log ingested end to end."""

from __future__ import annotations

import csv
import datetime as dt
import json
import math
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import duckdb
import pytest

torch = pytest.importorskip("torch", reason="needs the capture extra: make test EXTRAS=dev,capture")

from pipelines.cli import main as edge_carbon
from pipelines.paths import PROJECT_ROOT, SOURCES_DIR, SOURCES_ENV
from tools.capture import backends
from tools.capture.backends import RaplBackend
from tools.capture.cli import EXIT_NO_BACKEND, main
from tools.capture.model import CONFIGS, CausalLM, parameter_count
from tools.capture.protocol import software_versions
from tools.capture.recording import NVIDIA_SMI_HEADER, RAPL_HEADER
from tools.capture.registration import _type_options, rate_id, read_back

FAKE_W = 123.0
IDLE_S = 0.15
REPEATS = 5
STEPS = 10  # measured steps per repeat: enough samples at 0.02 s, and a fast suite
SERIES = "capture_test_series"
CAPTURE_ARGS = [
    "run", "--backend", "fake", "--config", "tiny", "--repeats", str(REPEATS), "--steps", str(STEPS), "--warmup-steps", "2",
    "--batch", "2", "--seq", "16", "--idle-s", str(IDLE_S), "--period-s", "0.02", "--fake-power-w", str(FAKE_W),
    "--series-id", SERIES, "--timezone", "Europe/London",
]  # fmt: skip
LINE = re.compile(r"^\d{4}/\d{2}/\d{2} \d{2}:\d{2}:\d{2}\.\d{3}, 0, FAKE backend NOT A MEASUREMENT, 123\.00 W$")


def _utc(text: str) -> dt.datetime:
    return dt.datetime.fromisoformat(text)


def _log_times(path: Path, zone: str) -> list[dt.datetime]:
    from zoneinfo import ZoneInfo

    lines = path.read_text(encoding="utf-8").splitlines()[1:]
    return [dt.datetime.strptime(line.split(",")[0], "%Y/%m/%d %H:%M:%S.%f").replace(tzinfo=ZoneInfo(zone)) for line in lines]


@pytest.fixture(scope="module")
def captured(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """A copy of sources/ and the run manifest of a fake capture written below it."""
    root = tmp_path_factory.mktemp("capture")
    sources = root / "sources"
    shutil.copytree(SOURCES_DIR, sources)
    out = sources / "power" / "own" / SERIES
    assert main([*CAPTURE_ARGS, "--out", str(out)]) == 0
    return sources, out / f"{SERIES}.capture.json"


# --- model ------------------------------------------------------------------------------------


def test_opt_125m_shape_has_the_published_parameter_count() -> None:
    with torch.device("meta"):
        model = CausalLM(CONFIGS["opt-125m"])
    assert parameter_count(model) == 125_239_296
    assert model.embed_positions.num_embeddings == 2048 + 2
    assert len(model.blocks) == 12


def test_tiny_model_is_causal_and_tied() -> None:
    torch.manual_seed(0)
    model = CausalLM(CONFIGS["tiny"]).eval()
    tokens = torch.randint(0, 512, (1, 10))
    changed = tokens.clone()
    changed[0, 7:] = (changed[0, 7:] + 1) % 512
    with torch.no_grad():
        a, b = model(tokens), model(changed)
    assert a.shape == (1, 10, 512)
    assert torch.allclose(a[0, :7], b[0, :7], atol=1e-6)  # earlier positions do not see later tokens
    assert not torch.allclose(a[0, 7:], b[0, 7:])
    assert not any(name.startswith("lm_head") for name, _ in model.named_parameters())


# --- capture with the fake backend ---------------------------------------------------------------


def test_fake_capture_runs_the_protocol(captured: tuple[Path, Path]) -> None:
    _, manifest_path = captured
    manifest: dict[str, Any] = json.loads(manifest_path.read_text(encoding="utf-8"))
    folder = manifest_path.parent
    assert manifest["is_measurement"] is False and "NOT measurements" in manifest["warning"]
    assert manifest["status"] == "complete" and manifest["ended_at"]
    assert manifest["software"]["torch_build"] == "cpu" and manifest["workload"]["torch_device"] == "cpu"
    assert manifest["workload"]["precision"] == "fp32" and manifest["peak"]["tflops"] is None
    assert manifest["backend"]["backend"] == "fake" and manifest["backend"]["kind"] == "nvidia_smi"
    assert manifest["software"]["torch"] == torch.__version__ and manifest["software"]["python"]
    assert manifest["workload"]["parameters"] == parameter_count(CausalLM(CONFIGS["tiny"]))
    assert manifest["workload"]["tokens_per_measured_run"] == 2 * 16 * STEPS
    protocol = manifest["protocol"]
    assert (protocol["repeats"], protocol["warmup_steps"], protocol["steps"], protocol["period_s"]) == (REPEATS, 2, STEPS, 0.02)
    assert protocol["phases"] == ["idle_before", "warmup", "measured", "idle_after"]
    assert any("idle baselines of 0.15 s" in d for d in protocol["deviations"])
    assert [r["run_id"] for r in manifest["repeats"]] == [f"{SERIES}_r{k}" for k in range(1, REPEATS + 1)]
    for repeat in manifest["repeats"]:
        phases = repeat["phases"]
        for name in ("idle_before", "idle_after"):
            assert phases[name]["duration_s"] >= IDLE_S
            assert phases[name]["check"]["mean_power_w"] == pytest.approx(FAKE_W)
        assert repeat["idle_power_w"]["mean"] == pytest.approx(FAKE_W)
        # phases in order, warm-up strictly before the measured window
        order = [phases[n] for n in protocol["phases"]]
        assert all(_utc(a["ended_at"]) <= _utc(b["started_at"]) for a, b in zip(order, order[1:], strict=False))
        log = folder / repeat["log"]
        assert log.name == f"{repeat['run_id']}.csv"
        lines = log.read_text(encoding="utf-8").splitlines()
        assert lines[0] == NVIDIA_SMI_HEADER
        assert all(LINE.match(line) for line in lines[1:]), lines[:3]
        times = _log_times(log, "Europe/London")
        window = repeat["measured_window"]
        warm_end = _utc(repeat["warmup_window"]["ended_at"])
        ms = dt.timedelta(milliseconds=1)  # nvidia-smi timestamps have ms resolution
        assert min(times) >= warm_end - ms  # no warm-up sample in the measured log
        assert _utc(window["started_at"]) - ms <= min(times) and max(times) <= _utc(window["ended_at"]) + ms
        check = phases["measured"]["check"]
        assert (max(times) - min(times)).total_seconds() == pytest.approx(check["duration_s"], abs=1e-6)
        assert check["duration_s"] <= window["duration_s"] + 0.002
        assert check["samples"] == len(lines) - 1 >= 2
        assert check["energy_j"] == pytest.approx(FAKE_W * check["duration_s"], rel=1e-9)
        # the standard library's reading is the warehouse parser's
        again = read_back(log, "nvidia_smi", dict(repeat["register_options"]))
        assert again["rejected_rows"] == 0 and again["samples"] == check["samples"]
        assert again["duration_s"] == pytest.approx(check["duration_s"], abs=1e-9)
        assert again["energy_j"] == pytest.approx(check["energy_j"], rel=1e-9)
        # the measured window's rate: tokens over training seconds, 6N TFLOPS, no MFU without a peak
        tokens = 2 * 16 * STEPS
        assert repeat["tokens_per_s"] == pytest.approx(tokens / repeat["train_s"], rel=1e-12)
        assert repeat["train_s"] <= window["duration_s"]
        assert repeat["achieved_tflops"] == pytest.approx(6 * manifest["workload"]["parameters"] * repeat["tokens_per_s"] / 1e12, rel=1e-12)
        assert repeat["mfu"] is None and "no row in device_specs.csv" in repeat["mfu_reason"]
        assert repeat["register_command"].startswith(f"edge-carbon register {log}")
        assert "--option is_synthetic=true" in repeat["register_command"]
        assert repeat["register_options"]["timezone"] == "Europe/London"
        for name in ("idle_before", "warmup", "idle_after"):
            assert (folder / f"{repeat['run_id']}.{name}.csv").is_file()


def test_no_backend_refuses_and_says_why(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    reasons = {"nvml": "no NVIDIA driver here", "rapl": "energy_uj not readable", "powermetrics": "not macOS", "android": "adb not on PATH"}
    for name, why in reasons.items():
        monkeypatch.setattr(backends.BACKENDS[name], "unavailable", classmethod(lambda cls, why=why: why))
    out = tmp_path / "out"
    code = main(["run", "--config", "tiny", "--out", str(out)])
    err = capsys.readouterr().err
    assert code == EXIT_NO_BACKEND != 0
    assert "no power backend is available" in err and "nothing was measured" in err
    assert err.strip().endswith("To try the capture without measuring anything: --backend fake")
    for name, why in reasons.items():
        assert f"{name}: {why}" in err
    assert not out.exists()


def test_protocol_needs_five_repeats_and_fast_sampling(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["run", "--backend", "fake", "--config", "tiny", "--repeats", "4", "--out", str(tmp_path)]) == 2
    assert "repeats must be >= 5" in capsys.readouterr().err
    assert main(["run", "--backend", "fake", "--config", "tiny", "--period-s", "0.5", "--out", str(tmp_path)]) == 2
    assert "sampling period" in capsys.readouterr().err
    assert not list(tmp_path.iterdir())


def test_rapl_backend_writes_counters_the_parser_reads(tmp_path: Path) -> None:
    zone = tmp_path / "intel-rapl:0"
    zone.mkdir()
    (zone / "name").write_text("package-0\n")
    (zone / "max_energy_range_uj").write_text("262143328850\n")
    (zone / "energy_uj").write_text("1000000\n")
    backend = RaplBackend(root=tmp_path)
    log = tmp_path / "run.csv"
    recording = backend.record(log, period_s=0.05)
    time.sleep(0.2)
    (zone / "counter.tmp").write_text("8500000\n")  # 7.5 J later, swapped in whole as sysfs would show it
    (zone / "counter.tmp").replace(zone / "energy_uj")
    # let a periodic poll read the new counter, so the 7.5 J span one polling period (about 150 W, a
    # plausible package power), not the few microseconds between the last poll and the closing reading
    time.sleep(0.2)
    recording.stop()
    lines = log.read_text().splitlines()
    assert lines[0] == RAPL_HEADER and lines[1].split(",")[1:] == ["package-0", "1000000", "262143328850"]
    assert lines[-1].split(",")[1:] == ["package-0", "8500000", "262143328850"]
    assert read_back(log, "rapl", {"run_id": "r"})["energy_j"] == pytest.approx(7.5)


class _StubNvml:
    """Stand-in for the pynvml module: a GPU drawing a constant 250 W, read from its energy counter."""

    class NVMLError(Exception):
        pass

    def __init__(self) -> None:
        self.t0 = time.time()

    def nvmlInit(self) -> None: ...
    def nvmlShutdown(self) -> None: ...
    def nvmlDeviceGetCount(self) -> int:
        return 1
    def nvmlDeviceGetHandleByIndex(self, index: int) -> int:
        return index
    def nvmlDeviceGetName(self, handle: int) -> bytes:
        return b"NVIDIA H200"
    def nvmlSystemGetDriverVersion(self) -> str:
        return "570.00"
    def nvmlSystemGetNVMLVersion(self) -> str:
        return "12.570.00"
    def nvmlDeviceGetEnforcedPowerLimit(self, handle: int) -> int:
        return 700_000
    def nvmlDeviceGetTotalEnergyConsumption(self, handle: int) -> int:
        return 10**9 + int((time.time() - self.t0) * 250_000)  # mJ


def test_nvml_backend_turns_the_energy_counter_into_an_nvidia_smi_log(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "pynvml", _StubNvml())
    backend = backends.detect("nvml", gpu_index=0, timezone="America/New_York")
    assert isinstance(backend, backends.NvmlBackend) and backend.method == "total_energy_counter"
    assert software_versions(backend)["driver_version"] == "570.00"
    log = tmp_path / "gpu.csv"
    recording = backend.record(log, period_s=0.05)
    time.sleep(0.4)
    recording.stop()
    lines = log.read_text(encoding="utf-8").splitlines()
    assert lines[0] == NVIDIA_SMI_HEADER and len(lines) >= 4
    assert all(re.match(r"^\d{4}/\d{2}/\d{2} \d{2}:\d{2}:\d{2}\.\d{3}, 0, NVIDIA H200, \d+\.\d{3} W$", line) for line in lines[1:])
    check = read_back(log, "nvidia_smi", {"run_id": "g", **backend.register_options()})
    assert check["rejected_rows"] == 0 and check["mean_power_w"] == pytest.approx(250.0, rel=0.03)
    assert recording.extra["nvml_counter_energy_j"] == pytest.approx(250.0 * recording.extra["nvml_counter_span_s"], rel=1e-3)


# --- registered and ingested by the warehouse --------------------------------------------------


def test_register_dry_run_as_a_module_with_idle_baseline(captured: tuple[Path, Path]) -> None:
    _, manifest_path = captured
    env = {k: v for k, v in os.environ.items() if k != SOURCES_ENV}
    args = [sys.executable, "-m", "tools.capture", "register", str(manifest_path), "--dry-run", "--copy", "--subtract-idle"]
    done = subprocess.run(args, capture_output=True, text=True, cwd=PROJECT_ROOT, env=env, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    # the fake device has no specs row here: the dry run says register would refuse it, and goes on
    assert "register would refuse this: device_id 'fake-backend-not-a-measurement' is not in" in done.stderr
    out = done.stdout.splitlines()
    read = [line for line in out if line.startswith("read back ")]
    assert len(read) == REPEATS and all(re.search(r": \d+ samples, [\d.]+ J over [\d.]+ s$", line) for line in read)
    lines = [line for line in out if line.startswith("edge-carbon register ")]
    assert len(lines) == REPEATS
    target = SOURCES_DIR / "power" / "own" / SERIES / f"{SERIES}_r1.csv"
    assert lines[0].startswith(f"edge-carbon register {target} --id {SERIES}_r1 --kind nvidia_smi --table staging.power_samples")
    assert all("--option idle_baseline_w=123.0 " in line and "--option is_synthetic=true" in line for line in lines)
    rate = [line for line in out if line.startswith("then the rate row ")]
    assert len(rate) == 1 and f"--id {SERIES}_rate --kind curated_training_throughput --table staging.training_throughput" in rate[0]
    assert not target.exists()  # a dry run copies and registers nothing
    assert not (SOURCES_DIR / "power" / "own" / SERIES).exists()


def test_typed_options_are_written_as_toml_values(tmp_path: Path) -> None:
    import tomllib

    toml = tmp_path / "local.toml"
    block = '[[source]]\nid = "{id}"\n\n[source.options]\nrun_id = "{id}"\nis_synthetic = "true"\nidle_baseline_w = "12.5"\n'
    toml.write_text(block.format(id="a") + "\n" + block.format(id="b"), encoding="utf-8")
    _type_options(toml, "b", {"run_id": "b", "is_synthetic": True, "idle_baseline_w": 12.5})
    a, b = tomllib.loads(toml.read_text(encoding="utf-8"))["source"]
    assert a["options"] == {"run_id": "a", "is_synthetic": "true", "idle_baseline_w": "12.5"}  # other entries untouched
    assert b["options"] == {"run_id": "b", "is_synthetic": True, "idle_baseline_w": 12.5}


def _add_device(sources: Path, device_id: str) -> None:
    """A row of the device specs for the fake backend's device, added the documented way
    (docs/data.md, "A device"): appended, then the file re-registered."""
    specs = sources / "curated" / "device_specs.csv"
    with specs.open(encoding="utf-8", newline="") as handle:
        header = next(csv.reader(handle))
    row = dict.fromkeys(header, "") | {
        "device_id": device_id, "base_device_id": device_id, "device_class": "workstation_gpu", "vendor": "none",
        "model": "FAKE capture backend", "accelerator": "none (NOT A MEASUREMENT)", "fp32_tflops": "1", "year": "2026",
        "status": "assumed", "citation": "edge-carbon-capture's fake backend (tools/capture/backends.py)",
        "citation_url": "https://example.invalid/fake-backend",
        "notes": "A test device: the fake backend writes a constant power and measures no hardware; no bandwidth, memory or TDP.",
    }
    with specs.open("a", encoding="utf-8", newline="") as handle:
        csv.DictWriter(handle, fieldnames=header, lineterminator="\n").writerow(row)
    assert edge_carbon(["register", "--refresh", "curated_device_specs"]) == 0


def test_registered_capture_is_ingested(captured: tuple[Path, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                        capsys: pytest.CaptureFixture[str]) -> None:
    from tests.conftest import build

    sources, manifest_path = captured
    manifest = json.loads(manifest_path.read_text(encoding="utf-8"))
    monkeypatch.setenv(SOURCES_ENV, str(sources))
    # the fake backend's device has no row in the device specs: its class would be unknown, so nothing is registered
    capsys.readouterr()
    assert main(["register", str(manifest_path)]) == 2
    assert f"register: device_id {manifest['device_id']!r} is not in sources/curated/device_specs.csv" in capsys.readouterr().err
    assert not (sources / "manifest" / "local.toml").exists()
    _add_device(sources, manifest["device_id"])
    assert main(["register", str(manifest_path)]) == 0
    local = (sources / "manifest" / "local.toml").read_text(encoding="utf-8")
    assert local.count("[[source]]") == REPEATS + 1 and "is_synthetic = true" in local  # the logs and the rate
    assert f'id = "{SERIES}_rate"' in local and 'kind = "curated_training_throughput"' in local
    # registering the same series twice is refused before anything is written
    assert main(["register", str(manifest_path)]) == 2
    assert (sources / "manifest" / "local.toml").read_text(encoding="utf-8") == local

    warehouse = tmp_path / "wh" / "edge_carbon.duckdb"
    result = build(warehouse, only=["marts/training_energy", "staging/training_throughput"])
    assert result.success, [e.step_key for e in result.all_events if e.is_step_failure]
    expected = {r["run_id"]: r["phases"]["measured"] for r in manifest["repeats"]}
    with duckdb.connect(str(warehouse), read_only=True) as con:
        runs = con.execute(
            "select run_id, series_id, device_id, duration_s, energy_j, n_samples, log_format, is_synthetic "
            "from staging.benchmark_runs where series_id = ? order by run_id",
            [SERIES],
        ).fetchall()
        mart = con.execute(
            "select device_id, n_runs, energy_j_mean, mean_power_w_mean, is_synthetic from marts.training_energy where series_id = ?", [SERIES]
        ).fetchall()
        rate = con.execute(
            "select throughput_id, device_id, device_class, model_params, precision, method, batch_size, sequence_length, devices, "
            "tokens_per_s, achieved_tflops, mfu, status, series_id, is_synthetic, citation, power_w, power_boundary "
            "from staging.training_throughput "
            "where source_id = ?", [f"{SERIES}_rate"]
        ).fetchall()
    assert [r[0] for r in runs] == sorted(expected)
    for run_id, series_id, device_id, duration_s, energy_j, n_samples, log_format, synthetic in runs:
        phase = expected[run_id]
        assert (series_id, device_id, log_format, synthetic) == (SERIES, manifest["device_id"], "nvidia_smi", True)
        assert duration_s == pytest.approx(phase["check"]["duration_s"], abs=1e-6)
        assert energy_j == pytest.approx(FAKE_W * duration_s, rel=1e-9)
        assert n_samples == phase["check"]["samples"]
    assert len(mart) == 1
    device_id, n_runs, energy_mean, power_mean, synthetic = mart[0]
    assert (device_id, n_runs, synthetic) == (manifest["device_id"], REPEATS, True)
    assert energy_mean == pytest.approx(FAKE_W * sum(p["check"]["duration_s"] for p in expected.values()) / REPEATS, rel=1e-9)
    assert power_mean == pytest.approx(FAKE_W)
    # the capture's rate: one measured row, marked synthetic, the mean of the repeats' rates
    assert len(rate) == 1
    (throughput_id, device_id, device_class, params, precision, method, batch, seq, devices, tokens_per_s, achieved, mfu, status,
     series_id, synthetic, citation, power_w, boundary) = rate[0]
    assert (throughput_id, device_id, device_class, precision, method, batch, seq, devices) == (
        rate_id(SERIES), manifest["device_id"], "workstation_gpu", "fp32", "full", 2, 16, 1)
    assert (status, series_id, synthetic, mfu) == ("measured", SERIES, True, None)
    assert params == manifest["workload"]["parameters"] and f"{SERIES}.capture.json" in citation
    mean_rate = sum(r["tokens_per_s"] for r in manifest["repeats"]) / REPEATS
    assert tokens_per_s == pytest.approx(mean_rate, rel=1e-9)
    assert achieved == pytest.approx(6 * params * mean_rate / 1e12, rel=1e-9)
    assert (power_w, boundary) == (pytest.approx(FAKE_W), "board")  # the same job's power, as NVML's board power


def test_a_reading_at_the_same_instant_is_not_written_twice(tmp_path: Path) -> None:
    import io

    from tools.capture.recording import PolledRecording

    stamps = iter(["2026/01/01 00:00:00.000", "2026/01/01 00:00:00.000", "2026/01/01 00:00:00.001"])
    handle = io.StringIO()
    recording = PolledRecording(handle, lambda: [f"{next(stamps, '2026/01/01 00:00:00.001')}, 0, GPU, 1.00 W"], period_s=3600)
    recording._take()  # same instant as the first reading: skipped
    recording._take()  # one millisecond later: written
    recording._stop.set()
    recording._thread.join()
    assert handle.getvalue().splitlines() == [
        "2026/01/01 00:00:00.000, 0, GPU, 1.00 W",
        "2026/01/01 00:00:00.001, 0, GPU, 1.00 W",
    ]


# --- where the GPU is: only torch, the backend's bindings and the standard library ------------

#: Packages of the warehouse that a capture must not need (top-level names).
WAREHOUSE_PACKAGES = ("polars", "pandera", "duckdb", "dagster", "pyarrow", "altair", "pipelines", "schemas")
BLOCKING_RUNNER = """
import runpy, sys
class Blocked:
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in {blocked!r}:
            raise ImportError("blocked in this test: " + name)
        return None
sys.meta_path.insert(0, Blocked())
sys.argv = ["edge-carbon-capture", *sys.argv[1:]]
runpy.run_module("tools.capture", run_name="__main__")
"""


def _capture_env() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if k not in (SOURCES_ENV, "PYTHONPATH")}


def _blocked_capture(args: list[str], cwd: Path, **kwargs: Any) -> subprocess.Popen[str]:
    """``python -m tools.capture ARGS`` with every warehouse package unimportable, from a folder
    that holds only a link to this checkout's tools/."""
    if not (cwd / "tools").exists():
        (cwd / "tools").symlink_to(PROJECT_ROOT / "tools", target_is_directory=True)
    runner = BLOCKING_RUNNER.format(blocked=WAREHOUSE_PACKAGES)
    return subprocess.Popen([sys.executable, "-c", runner, *args], cwd=cwd, env=_capture_env(), text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, **kwargs)


@pytest.mark.slow  # over 10 s on 2 cores: CI runs it (MARKERS=all)
def test_the_capture_runs_with_torch_and_the_standard_library_only(tmp_path: Path) -> None:
    """The documented command, tiny at its own defaults, in a process where polars, pandera, duckdb,
    dagster and the project's other packages cannot be imported: a complete manifest and every log."""
    out = tmp_path / "out"
    done = _blocked_capture(["run", "--backend", "fake", "--config", "tiny", "--repeats", "5", "--idle-s", "1",
                             "--series-id", "bare", "--out", str(out)], tmp_path)
    stdout, stderr = done.communicate(timeout=900)
    assert done.returncode == 0, stderr[-3000:]
    manifest = json.loads((out / "bare.capture.json").read_text(encoding="utf-8"))
    assert manifest["status"] == "complete" and len(manifest["repeats"]) == 5
    assert (manifest["workload"]["seq"], manifest["workload"]["batch"], manifest["workload"]["steps"]) == (64, 8, 100)
    logs = sorted(p.name for p in out.glob("bare_r*.csv"))
    assert len(logs) == 5 * 4  # idle before, warm-up, measured, idle after
    for repeat in manifest["repeats"]:
        assert repeat["tokens_per_s"] > 0 and repeat["achieved_tflops"] > 0 and repeat["mfu"] is None and repeat["mfu_reason"]
        assert repeat["idle_power_w"]["mean"] == pytest.approx(100.0)
        assert repeat["register_command"].startswith(f"edge-carbon register {out / repeat['log']} --id bare_r")
    assert "register the logs and the rate" in stdout and "blocked in this test" not in stderr


@pytest.mark.slow  # over 10 s on 2 cores: CI runs it (MARKERS=all)
def test_a_capture_killed_in_its_third_repeat_registers_the_first_two(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                       capsys: pytest.CaptureFixture[str]) -> None:
    sources = tmp_path / "sources"
    shutil.copytree(SOURCES_DIR, sources)
    out = sources / "power" / "own" / "killed"
    args = ["run", "--backend", "fake", "--config", "tiny", "--repeats", "5", "--steps", "5", "--warmup-steps", "1", "--batch", "2",
            "--seq", "16", "--idle-s", "0.3", "--period-s", "0.02", "--series-id", "killed", "--out", str(out)]
    process = _blocked_capture(args, tmp_path)
    manifest_path = out / "killed.capture.json"
    deadline = time.monotonic() + 600
    try:
        while not (out / "killed_r3.idle_before.csv").exists():  # the third repeat has begun
            assert process.poll() is None and time.monotonic() < deadline, process.communicate()[1][-2000:]
            time.sleep(0.01)
    finally:
        process.kill()
        process.communicate()
    manifest = json.loads(manifest_path.read_text(encoding="utf-8"))
    assert manifest["status"] == "running" and [r["repeat"] for r in manifest["repeats"]] == [1, 2]
    monkeypatch.setenv(SOURCES_ENV, str(sources))
    _add_device(sources, manifest["device_id"])
    capsys.readouterr()
    assert main(["register", str(manifest_path)]) == 0
    said = capsys.readouterr()
    assert "the capture is running with 2 finished repeat(s) (the protocol asks for 5); registering those" in said.err
    local = (sources / "manifest" / "local.toml").read_text(encoding="utf-8")
    assert 'id = "killed_r1"' in local and 'id = "killed_r2"' in local and "killed_r3" not in local
    assert 'id = "killed_rate"' in local


class _StubGpuBackend(backends.Backend):
    """An NVML-like backend that measures a GPU and records nothing (it must never be asked to)."""

    name = "nvml"
    kind = "nvidia_smi"
    trains_on = ("cuda",)
    measures = "an NVIDIA GPU"

    @classmethod
    def unavailable(cls) -> str | None:
        return None

    def describe(self) -> dict[str, Any]:
        return {"backend": self.name, "device_name": "NVIDIA H100 80GB HBM3"}

    def record(self, path: Path, period_s: float) -> Any:
        raise AssertionError("no phase may start")


@pytest.mark.skipif(torch.cuda.is_available(), reason="needs a torch without CUDA")
def test_a_gpu_backend_with_a_cpu_torch_refuses_before_any_phase(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                  capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setattr("tools.capture.cli.detect", lambda *a, **k: _StubGpuBackend())
    out = tmp_path / "out"
    assert main(["run", "--backend", "nvml", "--config", "tiny", "--out", str(out)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert 1 <= len(err) <= 3, err
    assert f"torch {torch.__version__} is a cpu build" in err[0] and "NVIDIA H100 80GB HBM3" in err[0]
    assert "would train on the CPU while the idle GPU is measured" in err[0]
    assert err[-1].startswith("Install a CUDA build: pip install torch --index-url https://download.pytorch.org/whl/")
    assert not out.exists()
    # naming the CPU explicitly is refused too
    assert main(["run", "--backend", "nvml", "--config", "tiny", "--torch-device", "cpu", "--out", str(out)]) == 2
    assert "is a cpu build that cannot train on it" in capsys.readouterr().err
    assert not out.exists()


@pytest.mark.parametrize(("args", "message"), [
    (["--seq", "129"], "--seq 129 exceeds the context of tiny (128 tokens); use --seq 128 or less"),
    (["--precision", "tf32"], "tf32 is a CUDA tensor-core format; torch device cpu trains in fp32, bf16 or fp16"),
])
def test_settings_the_model_cannot_run_are_refused_in_one_line(args: list[str], message: str, tmp_path: Path) -> None:
    out = tmp_path / "out"
    done = subprocess.run([sys.executable, "-m", "tools.capture", "run", "--backend", "fake", "--config", "tiny", *args,
                           "--out", str(out)], cwd=PROJECT_ROOT, env=_capture_env(), capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 2
    assert done.stderr.strip().splitlines() == [f"edge-carbon-capture: {message}"]
    assert "Traceback" not in done.stderr and not out.exists()


def test_bf16_trains_under_autocast_and_is_recorded(tmp_path: Path) -> None:
    out = tmp_path / "out"
    assert main([*CAPTURE_ARGS[:-4], "--precision", "bf16", "--series-id", "bf16", "--idle-s", "0.05", "--out", str(out)]) == 0
    manifest = json.loads((out / "bf16.capture.json").read_text(encoding="utf-8"))
    assert (manifest["workload"]["precision"], manifest["workload"]["warehouse_precision"]) == ("bf16", "bf16")
    assert "autocast(bfloat16)" in manifest["protocol"]["precision_note"] and "fp32" not in manifest["workload"]["description"]
    assert manifest["peak"]["column"] == "bf16_tensor_tflops"
    assert all(math.isfinite(r["loss"]["after_measured"]) for r in manifest["repeats"])


def test_the_opt_1_3b_shape_has_the_published_parameter_count() -> None:
    with torch.device("meta"):
        model = CausalLM(CONFIGS["opt-1.3b"])
    assert parameter_count(model) == 1_315_758_080  # OPT-1.3B (Zhang et al. 2022; the Hugging Face checkpoint's count)


def test_mfu_is_against_the_device_peak_at_the_precision() -> None:
    from tools.capture.rates import Peak, device_id_for, device_peak, rates

    assert device_id_for("NVIDIA H100 80GB HBM3") == "nvidia-h100-sxm" and device_id_for("NVIDIA A40") == "nvidia-a40"
    assert device_peak("nvidia-h100-sxm", "bf16") == Peak(989.5, "bf16_tensor_tflops", None)
    assert device_peak("nvidia-h100-sxm", "fp32").tflops == 67.0
    assert device_peak("nvidia-p100", "bf16").reason == "nvidia-p100's row in device_specs.csv gives no bf16_tensor_tflops"
    # the H100 walk-through: OPT-125M in bf16 at 124,000 tokens/s
    rate = rates(tokens=124_000, seconds=1.0, params=125_239_296, peak=device_peak("nvidia-h100-sxm", "bf16"))
    assert rate["achieved_tflops"] == pytest.approx(6 * 125_239_296 * 124_000 / 1e12)
    assert rate["mfu"] == pytest.approx(rate["achieved_tflops"] / 989.5) and rate["mfu_reason"] is None


def test_without_torch_run_says_how_to_install_it_and_register_does_not_need_it(monkeypatch: pytest.MonkeyPatch,
                                                                               capsys: pytest.CaptureFixture[str]) -> None:
    import importlib.util

    import tools.capture as capture

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "torch" else real(name, *a))
    assert capture.main(["run", "--backend", "fake"]) == 2
    err = capsys.readouterr().err
    assert "pip install -c constraints.txt -e '.[capture]'" in err and "--index-url https://download.pytorch.org/whl/" in err
    assert capture.main(["register", "missing.capture.json", "--dry-run"]) == 2  # refused for its manifest, not for torch
    assert "cannot read run manifest missing.capture.json" in capsys.readouterr().err
