"""Power backends: where the capture command reads power from, each detected at run time.

Every backend writes its log in the device's native format, the one the warehouse's parser
for that format reads unchanged:

========== ============================================== =========================================
backend    reads                                          writes (manifest ``kind``)
========== ============================================== =========================================
nvml       NVIDIA driver (nvidia-ml-py): the total-energy ``nvidia_smi`` CSV, local timestamps
           counter (mJ) where the GPU has one, else the    (``timestamp, index, name, power.draw [W]``)
           power reading
rapl       ``/sys/class/powercap/intel-rapl:*/energy_uj``  ``rapl`` CSV (``timestamp_ns,domain,
                                                          energy_uj,max_energy_range_uj``)
powermetrics ``sudo -n powermetrics --samplers              ``powermetrics`` text, as printed
           cpu_power,gpu_power -i <ms>`` (macOS)
android    ``/sys/class/power_supply/battery/{current_now, ``android_sysfs`` CSV (``timestamp_ms,
           voltage_now}``, locally or ``adb shell cat``   current_now,voltage_now``)
fake       nothing: a constant power, for tests only       ``nvidia_smi`` CSV, device name
                                                          ``FAKE ... NOT A MEASUREMENT``
========== ============================================== =========================================

A backend is never invented: :func:`detect` returns the first available one of the
requested, or raises :class:`NoBackendError` listing each backend tried and why it is
unavailable. ``fake`` is only used when asked for by name.
"""

from __future__ import annotations

import os
import platform
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import IO, Any
from zoneinfo import ZoneInfo

from tools.capture.recording import (
    ANDROID_HEADER,
    NVIDIA_SMI_HEADER,
    RAPL_HEADER,
    Backend,
    FakeBackend,
    NoBackendError,
    PolledRecording,
    Recording,
    local_zone,
    nvidia_smi_time,
)

#: Backends tried by ``--backend auto``, in order (``fake`` is never tried automatically).
AUTO_ORDER = ("nvml", "rapl", "powermetrics", "android")
POWERCAP = Path("/sys/class/powercap")
BATTERY = "/sys/class/power_supply/battery"


# --- fake (tests only) ---------------------------------------------------------------------


# --- NVML ----------------------------------------------------------------------------------


class NvmlBackend(Backend):
    """NVIDIA GPUs through NVML: power from the total-energy counter where available."""

    name = "nvml"
    kind = "nvidia_smi"
    trains_on = ("cuda",)
    measures = "an NVIDIA GPU"

    def __init__(self, gpu_index: int = 0, timezone: str | None = None) -> None:
        import pynvml

        self.nvml = pynvml
        pynvml.nvmlInit()
        self.index = gpu_index
        self.handle = pynvml.nvmlDeviceGetHandleByIndex(gpu_index)
        self.gpu_name = _text(pynvml.nvmlDeviceGetName(self.handle))
        self.driver = _text(pynvml.nvmlSystemGetDriverVersion())
        self.timezone = timezone or local_zone()
        self.zone = ZoneInfo(self.timezone)
        try:
            pynvml.nvmlDeviceGetTotalEnergyConsumption(self.handle)
            self.method = "total_energy_counter"
        except pynvml.NVMLError:
            self.method = "power_usage"

    @classmethod
    def unavailable(cls) -> str | None:
        try:
            import pynvml
        except ImportError:
            return "nvidia-ml-py is not installed (pip install 'edge-carbon[capture]')"
        try:
            pynvml.nvmlInit()
        except pynvml.NVMLError as exc:
            return f"NVML did not initialise (no NVIDIA driver or GPU?): {exc}"
        try:
            count = pynvml.nvmlDeviceGetCount()
        finally:
            pynvml.nvmlShutdown()
        return None if count else "NVML found no GPU"

    def describe(self) -> dict[str, Any]:
        info: dict[str, Any] = {
            "backend": self.name,
            "gpu_index": self.index,
            "device_name": self.gpu_name,
            "driver_version": self.driver,
            "nvml_version": _text(self.nvml.nvmlSystemGetNVMLVersion()),
            "method": self.method,
            "method_note": (
                "power.draw = increment of nvmlDeviceGetTotalEnergyConsumption (mJ) / interval, stamped at the interval's end"
                if self.method == "total_energy_counter"
                else "power.draw = nvmlDeviceGetPowerUsage (mW), the driver's power reading"
            ),
        }
        try:
            info["power_limit_w"] = self.nvml.nvmlDeviceGetEnforcedPowerLimit(self.handle) / 1000.0
        except self.nvml.NVMLError:
            pass
        return info

    def register_options(self) -> dict[str, str]:
        return {"timezone": self.timezone}

    def record(self, path: Path, period_s: float) -> Recording:
        handle = path.open("w", encoding="utf-8", newline="\n")
        handle.write(NVIDIA_SMI_HEADER + "\n")
        nvml, gpu, index, name, zone = self.nvml, self.handle, self.index, self.gpu_name, self.zone
        previous: list[tuple[float, int]] = []
        extra: dict[str, Any] = {}

        def read() -> list[str]:
            now = time.time()
            if self.method == "power_usage":
                watts = nvml.nvmlDeviceGetPowerUsage(gpu) / 1000.0
            else:
                energy_mj = nvml.nvmlDeviceGetTotalEnergyConsumption(gpu)
                last = previous[-1] if previous else None
                previous[:] = [(now, energy_mj)]
                first = extra.setdefault("first", (now, energy_mj))
                extra["nvml_counter_energy_j"] = (energy_mj - first[1]) / 1000.0
                extra["nvml_counter_span_s"] = now - first[0]
                if last is None or now <= last[0]:
                    return []
                watts = (energy_mj - last[1]) / 1000.0 / (now - last[0])
            return [f"{nvidia_smi_time(now, zone)}, {index}, {name}, {watts:.3f} W"]

        recording = PolledRecording(handle, read, period_s)
        recording.extra = extra
        return recording

    def close(self) -> None:
        self.nvml.nvmlShutdown()


def _text(value: str | bytes) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


# --- Linux RAPL ----------------------------------------------------------------------------


def rapl_zones(root: Path = POWERCAP) -> list[tuple[str, Path]]:
    """(domain name, zone folder) of every RAPL zone whose ``energy_uj`` is readable."""
    zones = []
    for folder in sorted(root.glob("intel-rapl:*")):
        try:
            name = (folder / "name").read_text(encoding="utf-8").strip()
            int((folder / "energy_uj").read_text(encoding="utf-8"))
            int((folder / "max_energy_range_uj").read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        zones.append((name, folder))
    return zones


class RaplBackend(Backend):
    """Linux powercap RAPL energy counters (CPU packages, DRAM...)."""

    name = "rapl"
    kind = "rapl"
    trains_on = ("cpu",)
    measures = "the CPU package (RAPL)"

    def __init__(self, root: Path = POWERCAP) -> None:
        zones = rapl_zones(root)
        seen: set[str] = set()
        self.zones = []
        for domain, folder in zones:
            if domain in seen:
                # The parser keys counters by domain: a second zone of the same name (e.g. the
                # dram of socket 1) would collide, so it is left out and reported.
                continue
            seen.add(domain)
            self.zones.append((domain, folder))
        self.skipped = [str(folder) for domain, folder in zones if (domain, folder) not in self.zones]

    @classmethod
    def unavailable(cls) -> str | None:
        if not sys.platform.startswith("linux"):
            return "not Linux"
        if not list(POWERCAP.glob("intel-rapl:*")):
            return f"no {POWERCAP}/intel-rapl:* zones (no RAPL on this CPU, or powercap not loaded)"
        if not rapl_zones():
            return f"{POWERCAP}/intel-rapl:*/energy_uj is not readable by this user (root only since Linux 5.10; run with sudo or grant read access)"
        return None

    def describe(self) -> dict[str, Any]:
        return {
            "backend": self.name,
            "device_name": platform.processor() or platform.machine(),
            "zones": {domain: str(folder) for domain, folder in self.zones},
            "zones_skipped_duplicate_name": self.skipped,
            "method": "cumulative energy counters (energy_uj); the parser sums package-* and dram increments",
        }

    def record(self, path: Path, period_s: float) -> Recording:
        handle = path.open("w", encoding="utf-8", newline="\n")
        handle.write(RAPL_HEADER + "\n")
        ranges = {domain: int((folder / "max_energy_range_uj").read_text(encoding="utf-8")) for domain, folder in self.zones}

        def read() -> list[str]:
            lines = []
            for domain, folder in self.zones:
                stamp = time.time_ns()
                energy = int((folder / "energy_uj").read_text(encoding="utf-8"))
                lines.append(f"{stamp},{domain},{energy},{ranges[domain]}")
            return lines

        return PolledRecording(handle, read, period_s)


# --- macOS powermetrics --------------------------------------------------------------------


class PowermetricsBackend(Backend):
    """macOS ``powermetrics`` (needs passwordless sudo), its text output kept as printed."""

    name = "powermetrics"
    kind = "powermetrics"
    trains_on = ("cpu", "mps")
    measures = "the Mac's CPU and GPU (powermetrics)"
    suffix = ".txt"
    min_period_s = 0.1

    @classmethod
    def unavailable(cls) -> str | None:
        if sys.platform != "darwin":
            return "not macOS"
        if shutil.which("powermetrics") is None:
            return "the powermetrics command is not on PATH"
        if os.geteuid() != 0:
            check = subprocess.run(["sudo", "-n", "true"], capture_output=True, check=False)
            if check.returncode != 0:
                return "powermetrics needs root: run 'sudo -v' first (sudo -n must work without a password prompt)"
        return None

    def describe(self) -> dict[str, Any]:
        return {
            "backend": self.name,
            "device_name": platform.machine(),
            "macos_version": platform.mac_ver()[0],
            "method": "powermetrics --samplers cpu_power,gpu_power (Combined Power = CPU + GPU + ANE)",
        }

    def record(self, path: Path, period_s: float) -> Recording:
        period_ms = max(int(round(period_s * 1000)), 1)
        command = ["powermetrics", "--samplers", "cpu_power,gpu_power", "-i", str(period_ms)]
        if os.geteuid() != 0:
            command = ["sudo", "-n", *command]
        handle = path.open("w", encoding="utf-8")
        process = subprocess.Popen(command, stdout=handle, stderr=subprocess.PIPE)
        return _ProcessRecording(process, handle, path, period_s)


class _ProcessRecording(Recording):
    """A subprocess writing the log; stopped with SIGTERM after one more period."""

    def __init__(self, process: subprocess.Popen[bytes], handle: IO[str], path: Path, period_s: float) -> None:
        self.process, self.handle, self.path, self.period_s = process, handle, path, period_s
        self.extra = {}
        # powermetrics prints its first sample one period after it starts.
        time.sleep(period_s)

    def stop(self) -> int:
        time.sleep(self.period_s)  # let the sample that covers the end of the window be printed
        self.process.terminate()
        try:
            _, err = self.process.communicate(timeout=10)
        finally:
            self.handle.close()
        text = self.path.read_text(encoding="utf-8", errors="replace")
        blocks = text.count("*** Sampled system activity")
        if blocks == 0:
            raise RuntimeError(f"powermetrics wrote no sample: {err.decode(errors='replace').strip()}")
        return blocks


# --- Android battery fuel gauge ------------------------------------------------------------


class AndroidBackend(Backend):
    """The battery's current and voltage from sysfs: read locally (this command on the phone) or over adb."""

    name = "android"
    kind = "android_sysfs"
    measures = "the phone's battery"

    def __init__(self) -> None:
        self.local = _local_battery()
        self.serial = None if self.local else _adb_device()

    @classmethod
    def unavailable(cls) -> str | None:
        if _local_battery():
            return None
        if shutil.which("adb") is None:
            return f"{BATTERY}/current_now is not readable here and adb is not on PATH"
        if _adb_device() is None:
            return "adb found no single attached device in state 'device' (authorise USB debugging; attach exactly one)"
        return None

    def describe(self) -> dict[str, Any]:
        info: dict[str, Any] = {"backend": self.name, "reader": "local sysfs" if self.local else "adb shell cat", "paths": f"{BATTERY}/{{current_now,voltage_now}}"}
        if self.serial:
            info["adb_serial"] = self.serial
            info["device_name"] = _adb(["shell", "getprop", "ro.product.model"]).strip()
            info["android_version"] = _adb(["shell", "getprop", "ro.build.version.release"]).strip()
            info["note"] = "adb mode measures the attached phone: the training must run on that phone, not on this host"
        return info

    def register_options(self) -> dict[str, str]:
        return {"sign": "auto", "current_unit": "uA", "voltage_unit": "uV"}

    def record(self, path: Path, period_s: float) -> Recording:
        handle = path.open("w", encoding="utf-8", newline="\n")
        handle.write(ANDROID_HEADER + "\n")

        def read() -> list[str]:
            stamp = time.time_ns() // 1_000_000
            if self.local:
                current = Path(BATTERY, "current_now").read_text(encoding="utf-8").strip()
                voltage = Path(BATTERY, "voltage_now").read_text(encoding="utf-8").strip()
            else:
                out = _adb(["shell", "cat", f"{BATTERY}/current_now", f"{BATTERY}/voltage_now"]).split()
                if len(out) != 2:
                    raise RuntimeError(f"unexpected adb output {out!r}")
                current, voltage = out
            return [f"{stamp},{current},{voltage}"]

        return PolledRecording(handle, read, period_s)


def _local_battery() -> bool:
    try:
        int(Path(BATTERY, "current_now").read_text(encoding="utf-8"))
        int(Path(BATTERY, "voltage_now").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    return True


def _adb(args: list[str]) -> str:
    done = subprocess.run(["adb", *args], capture_output=True, text=True, timeout=10, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"adb {' '.join(args)} failed: {done.stderr.strip()}")
    return done.stdout


def _adb_device() -> str | None:
    if shutil.which("adb") is None:
        return None
    try:
        out = _adb(["devices"])
    except (RuntimeError, subprocess.TimeoutExpired):
        return None
    serials = [line.split()[0] for line in out.splitlines()[1:] if line.strip().endswith("\tdevice")]
    return serials[0] if len(serials) == 1 else None


# --- detection -----------------------------------------------------------------------------

BACKENDS: dict[str, type[Backend]] = {
    "nvml": NvmlBackend,
    "rapl": RaplBackend,
    "powermetrics": PowermetricsBackend,
    "android": AndroidBackend,
    "fake": FakeBackend,
}


def detect(requested: str, **settings: Any) -> Backend:
    """The backend ``requested`` (a name, or ``auto`` for the first available of :data:`AUTO_ORDER`).

    ``settings`` are passed to the backends that take them (``gpu_index``, ``timezone``,
    ``power_w``). Raises :class:`NoBackendError` naming each backend tried and why it is
    unavailable.
    """
    if requested != "auto" and requested not in BACKENDS:
        raise ValueError(f"unknown backend {requested!r}; choose from auto, {', '.join(BACKENDS)}")
    names = AUTO_ORDER if requested == "auto" else (requested,)
    reasons: dict[str, str] = {}
    for name in names:
        cls = BACKENDS[name]
        try:
            why = cls.unavailable()
        except Exception as exc:
            why = f"probe failed: {exc}"
        if why is not None:
            reasons[name] = why
            continue
        if name == "nvml":
            return NvmlBackend(gpu_index=settings.get("gpu_index", 0), timezone=settings.get("timezone"))
        if name == "fake":
            return FakeBackend(power_w=settings.get("power_w", 100.0), timezone=settings.get("timezone") or "UTC")
        return cls()
    raise NoBackendError(reasons)
