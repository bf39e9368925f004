"""What every power backend shares: the native log headers, the :class:`Backend` interface, a
recording (polled by a thread, or a child process's output) and the ``fake`` backend for tests.
The backends that read real hardware are :mod:`tools.capture.backends`."""

from __future__ import annotations

import datetime as dt
import os
import threading
import time
from abc import ABC, abstractmethod
from pathlib import Path
from typing import IO, Any
from zoneinfo import ZoneInfo

NVIDIA_SMI_HEADER = "timestamp, index, name, power.draw [W]"
RAPL_HEADER = "timestamp_ns,domain,energy_uj,max_energy_range_uj"
ANDROID_HEADER = "timestamp_ms,current_now,voltage_now"


class NoBackendError(RuntimeError):
    """No requested power backend is available; the message lists why for each."""

    def __init__(self, reasons: dict[str, str]) -> None:
        self.reasons = reasons
        lines = "\n".join(f"  - {name}: {why}" for name, why in reasons.items())
        super().__init__(
            "no power backend is available, so nothing was measured and no log was written. Tried:\n" + lines
        )


def local_zone() -> str:
    """The IANA name of this machine's time zone (``$TZ``, ``/etc/timezone`` or the ``/etc/localtime`` link), else UTC."""
    candidates: list[str] = []
    if os.environ.get("TZ"):
        candidates.append(os.environ["TZ"].lstrip(":"))
    try:
        candidates.append(Path("/etc/timezone").read_text(encoding="utf-8").strip())
    except OSError:
        pass
    try:
        target = os.readlink("/etc/localtime")
        if "zoneinfo/" in target:
            candidates.append(target.split("zoneinfo/", 1)[1])
    except OSError:
        pass
    for name in candidates:
        try:
            ZoneInfo(name)
        except (ValueError, KeyError, OSError):
            continue
        return name
    return "UTC"


def nvidia_smi_time(epoch_s: float, zone: ZoneInfo) -> str:
    """``YYYY/MM/DD HH:MM:SS.fff`` local time in ``zone``, as nvidia-smi prints it."""
    moment = dt.datetime.fromtimestamp(epoch_s, zone)
    return moment.strftime("%Y/%m/%d %H:%M:%S.") + f"{moment.microsecond // 1000:03d}"


class Backend(ABC):
    """One source of power readings and the native log format it writes."""

    #: Backend name (``--backend``).
    name: str = ""
    #: Manifest ``kind`` of the logs it writes (the parser that reads them).
    kind: str = ""
    #: File suffix of its logs.
    suffix: str = ".csv"
    #: False only for the fake backend: its logs are not measurements.
    is_measurement: bool = True
    #: Shortest sampling period it supports (s).
    min_period_s: float = 0.0
    #: Torch device types whose work this backend measures: training anywhere else would
    #: measure an idle device, so the capture refuses it before the first phase.
    trains_on: tuple[str, ...] = ("cpu",)
    #: What the backend measures, in words (for that refusal).
    measures: str = "this machine"

    @classmethod
    @abstractmethod
    def unavailable(cls) -> str | None:
        """None if the backend can be used here, else why not (one line)."""

    @abstractmethod
    def describe(self) -> dict[str, Any]:
        """The measured device and how it is read (for the run manifest)."""

    def register_options(self) -> dict[str, str]:
        """Parser options the log needs besides the run's (timezone, sign...)."""
        return {}

    @abstractmethod
    def record(self, path: Path, period_s: float) -> Recording:
        """Start writing a log to ``path``; the returned recording is stopped by the caller."""

    def close(self) -> None:  # noqa: B027 - optional hook
        """Release the device handle (if any)."""


class Recording(ABC):
    """A log being written.

    ``extra`` holds what the backend knows besides the log (e.g. the NVML energy counter's
    increment over the whole recording), copied into the run manifest.
    """

    extra: dict[str, Any]

    @abstractmethod
    def stop(self) -> int:
        """Stop, write the last reading, close the file; the number of readings taken."""


class PolledRecording(Recording):
    """Reads the backend every period on a background thread; the first reading is taken at start, the last at stop."""

    def __init__(self, handle: IO[str], read: Any, period_s: float) -> None:
        self.handle = handle
        self.read = read
        self.period_s = period_s
        self.readings = 0
        self.error: BaseException | None = None
        self.extra = {}
        self._last_stamps: list[str] = []
        self._stop = threading.Event()
        self._take()
        self._thread = threading.Thread(target=self._loop, name="power-sampler", daemon=True)
        self._thread.start()

    def _take(self) -> None:
        lines = self.read()
        if lines:
            # A reading stamped with the same instant as the last one (the closing reading can
            # follow the last poll within the log's time resolution) adds nothing: skip it.
            stamps = [line.split(",", 1)[0] for line in lines]
            if stamps == self._last_stamps:
                return
            self._last_stamps = stamps
            self.handle.write("".join(line + "\n" for line in lines))
        self.readings += 1

    def _loop(self) -> None:
        deadline = time.monotonic()
        try:
            while True:
                deadline += self.period_s
                if self._stop.wait(max(0.0, deadline - time.monotonic())):
                    return
                self._take()
        except BaseException as exc:
            self.error = exc

    def stop(self) -> int:
        self._stop.set()
        self._thread.join()
        try:
            if self.error is not None:
                raise RuntimeError(f"the power sampler failed: {self.error}") from self.error
            self._take()
        finally:
            self.handle.close()
        return self.readings


class FakeBackend(Backend):
    """A constant power written as an nvidia-smi log. For tests only: NOT a measurement."""

    name = "fake"
    kind = "nvidia_smi"
    is_measurement = False
    trains_on = ("cpu", "cuda", "mps")
    measures = "nothing (a constant power)"
    DEVICE_NAME = "FAKE backend NOT A MEASUREMENT"

    def __init__(self, power_w: float = 100.0, timezone: str = "UTC") -> None:
        self.power_w = power_w
        self.timezone = timezone
        self.zone = ZoneInfo(timezone)

    @classmethod
    def unavailable(cls) -> str | None:
        return None

    def describe(self) -> dict[str, Any]:
        return {
            "backend": self.name,
            "device_name": self.DEVICE_NAME,
            "constant_power_w": self.power_w,
            "note": "fake backend for tests: a constant power, not a measurement",
        }

    def register_options(self) -> dict[str, str]:
        return {"timezone": self.timezone}

    def record(self, path: Path, period_s: float) -> Recording:
        handle = path.open("w", encoding="utf-8", newline="\n")
        handle.write(NVIDIA_SMI_HEADER + "\n")

        def read() -> list[str]:
            return [f"{nvidia_smi_time(time.time(), self.zone)}, 0, {self.DEVICE_NAME}, {self.power_w:.2f} W"]

        return PolledRecording(handle, read, period_s)
