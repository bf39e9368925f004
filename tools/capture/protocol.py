"""The measurement protocol: what one capture does, in which order, and what it records.

For each of ``repeats`` runs (at least 5), with a power recording of its own per phase:

1. **idle before** - ``idle_s`` seconds with nothing running (log ``<run_id>.idle_before``);
2. **warm-up** - a freshly, seed-identically initialised model trains ``warmup_steps`` steps
   (log ``<run_id>.warmup``): allocator, kernel selection and clocks settle; excluded;
3. **measured** - the same model trains the next ``steps`` steps (log ``<run_id>``, the one
   that is registered); the window opens with a reading taken before the first step and
   closes with a reading taken after the device has finished the last, so only this window
   is integrated;
4. **idle after** - ``idle_s`` seconds idle again (log ``<run_id>.idle_after``).

The sampling period is at most 100 ms (``period_s``). Every phase's start and end (UTC and
monotonic), sample count and energy (read back with the standard library,
:mod:`tools.capture.summary`) are written to the run manifest, and each measured window's
training rate: tokens per second, model TFLOPS (6N) and MFU against the device's peak at the
run's precision (:mod:`tools.capture.rates`).

The run manifest is written before the first phase and rewritten after each repeat
(``status``: ``running``, then ``complete``, or ``failed`` / ``interrupted`` with the error), so a
capture that stops part-way keeps every finished repeat registrable. Nothing here imports the
warehouse: the capture needs only torch, the backend's bindings and the standard library.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import math
import platform
import shlex
import sys
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

from tools.capture.configs import CONFIGS, ModelConfig
from tools.capture.rates import WAREHOUSE_PRECISION, Peak, rates
from tools.capture.recording import Backend
from tools.capture.registration import MANIFEST_FORMAT, register_argv
from tools.capture.summary import log_summary

MIN_REPEATS = 5
MAX_PERIOD_S = 0.1
RECOMMENDED_IDLE_S = 10.0
#: Model names recorded in the warehouse (column ``model``).
MODEL_NAMES = {"opt-125m": "OPT-125M", "opt-1.3b": "OPT-1.3B", "tiny": "tiny-OPT (test shape)"}


class ProtocolError(ValueError):
    """Settings that break the protocol (too few repeats, too slow sampling...)."""


@dataclass(frozen=True)
class Protocol:
    """Fixed settings of a capture; all recorded in the run manifest."""

    repeats: int = 5
    idle_s: float = RECOMMENDED_IDLE_S
    warmup_steps: int = 10
    steps: int = 100
    period_s: float = MAX_PERIOD_S
    batch: int = 8
    seq: int = 512
    seed: int = 0
    lr: float = 1e-4
    precision: str = "fp32"

    def check(self, backend: Backend) -> list[str]:
        """Raise :class:`ProtocolError` on a broken setting; return the deviations that are allowed but noted."""
        if self.repeats < MIN_REPEATS:
            raise ProtocolError(f"repeats must be >= {MIN_REPEATS} (one log per repeat, for a confidence interval); got {self.repeats}")
        if not 0 < self.period_s <= MAX_PERIOD_S:
            raise ProtocolError(f"the sampling period must be in (0, {MAX_PERIOD_S}] s; got {self.period_s}")
        if self.period_s < backend.min_period_s:
            raise ProtocolError(f"backend {backend.name} samples no faster than every {backend.min_period_s} s; got {self.period_s}")
        if self.idle_s <= 0:
            raise ProtocolError(f"the idle baselines must last > 0 s; got {self.idle_s}")
        if self.steps < 1 or self.warmup_steps < 0:
            raise ProtocolError("steps must be >= 1 and warm-up steps >= 0")
        if self.batch < 1 or self.seq < 1:
            raise ProtocolError("batch size and sequence length must be >= 1")
        deviations = []
        if self.idle_s < RECOMMENDED_IDLE_S:
            deviations.append(f"idle baselines of {self.idle_s:g} s, shorter than the protocol's {RECOMMENDED_IDLE_S:g} s")
        if self.warmup_steps == 0:
            deviations.append("no warm-up steps")
        return deviations

    def describe(self) -> dict[str, Any]:
        """The settings plus the protocol's fixed order, as JSON-ready values."""
        return {
            **asdict(self),
            "phases": ["idle_before", "warmup", "measured", "idle_after"],
            "registered_phase": "measured",
            "min_repeats": MIN_REPEATS,
            "max_period_s": MAX_PERIOD_S,
            "recommended_idle_s": RECOMMENDED_IDLE_S,
            "model_init": "random, torch.manual_seed(seed) before each repeat (every repeat trains the same model on the same tokens)",
            "data": "synthetic token ids, uniform over the vocabulary, torch.Generator seeded with seed",
            "optimizer": f"AdamW lr={self.lr}, fp32 weights and optimiser state",
            "precision_note": {
                "fp32": "FP32 matmuls, TF32 off",
                "tf32": "FP32 weights, TF32 tensor-core matmuls",
                "bf16": "torch.autocast(bfloat16) over FP32 weights",
                "fp16": "torch.autocast(float16) over FP32 weights, gradient scaler on CUDA",
            }[self.precision],
            "energy": "gross device energy over the measured window; idle powers recorded to net them out if wanted",
        }


@dataclass
class Phase:
    """One recorded phase of one repeat."""

    name: str
    file: str
    started_at: str
    ended_at: str
    duration_s: float
    readings: int
    sha256: str
    check: dict[str, Any] = field(default_factory=dict)


def _now() -> str:
    return dt.datetime.now(dt.UTC).isoformat(timespec="microseconds")


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def software_versions(backend: Backend) -> dict[str, Any]:
    """Python, torch, CUDA, OS and driver versions."""
    import torch

    versions: dict[str, Any] = {
        "python": platform.python_version(),
        "torch": torch.__version__,
        "torch_cuda": torch.version.cuda,
        "torch_build": torch_build(),
        "os": platform.platform(),
        "machine": platform.machine(),
    }
    try:
        from importlib.metadata import version

        versions["edge_carbon"] = version("edge-carbon")
    except Exception:
        versions["edge_carbon"] = None
    info = backend.describe()
    for key in ("driver_version", "nvml_version", "macos_version", "android_version"):
        if key in info:
            versions[key] = info[key]
    return versions


def torch_build() -> str:
    """``cuda <version>``, ``rocm <version>`` or ``cpu``: what the installed torch can train on."""
    import torch

    if torch.version.cuda:
        return f"cuda {torch.version.cuda}"
    if getattr(torch.version, "hip", None):
        return f"rocm {torch.version.hip}"
    return "cpu"


def torch_device_name(device: str) -> str:
    """The name of the torch device that trains (the GPU's, or the CPU's architecture)."""
    import torch

    target = torch.device(device)
    if target.type == "cuda":
        return torch.cuda.get_device_name(target)
    return f"{target.type} ({platform.machine()}, {platform.processor() or 'processor not reported'})"


def write_json(path: Path, data: dict[str, Any]) -> None:
    """Write ``data`` to ``path`` whole or not at all (a temporary file, then an atomic rename)."""
    partial = path.with_name(path.name + ".partial")
    partial.write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
    partial.replace(path)


def run_capture(
    backend: Backend,
    protocol: Protocol,
    *,
    config: ModelConfig,
    torch_device: str,
    out_dir: Path,
    series_id: str,
    device_id: str,
    peak: Peak,
    workload: str | None = None,
    log: Callable[[str], Any] = print,
) -> Path:
    """Run the protocol, write one log per phase per repeat and the run manifest; return the manifest's path.

    The manifest is written before the first phase (``status`` ``running``) and after each repeat,
    so an interrupted capture keeps its finished repeats; it ends ``complete``, or ``failed`` /
    ``interrupted`` with the error (then the exception propagates).
    """
    deviations = protocol.check(backend)
    out_dir.mkdir(parents=True, exist_ok=True)
    model_name = MODEL_NAMES.get(config.name, config.name)
    workload = workload or (
        f"{model_name} training from random init on synthetic tokens, {protocol.precision}: batch {protocol.batch}, "
        f"sequence {protocol.seq}, {protocol.steps} measured steps after {protocol.warmup_steps} warm-up steps ({torch_device})"
    )
    base_options: dict[str, Any] = {
        "series_id": series_id,
        "device_id": device_id,
        "model": model_name,
        "workload": workload,
        **backend.register_options(),
    }
    if not backend.is_measurement:
        base_options["is_synthetic"] = True
    tokens_per_run = protocol.batch * protocol.seq * protocol.steps
    manifest: dict[str, Any] = {
        "format": MANIFEST_FORMAT,
        "status": "running",
        "is_measurement": backend.is_measurement,
        "warning": None if backend.is_measurement else "FAKE backend: these logs are NOT measurements; they exist to test the capture code",
        "series_id": series_id,
        "device_id": device_id,
        "started_at": _now(),
        "ended_at": None,
        "backend": {**backend.describe(), "kind": backend.kind},
        "software": software_versions(backend),
        "workload": {
            "model": model_name,
            "config": config.as_dict(),
            "parameters": None,
            "torch_device": torch_device,
            "torch_device_name": torch_device_name(torch_device),
            "precision": protocol.precision,
            "warehouse_precision": WAREHOUSE_PRECISION[protocol.precision],
            "batch": protocol.batch,
            "seq": protocol.seq,
            "steps": protocol.steps,
            "warmup_steps": protocol.warmup_steps,
            "tokens_per_measured_run": tokens_per_run,
            "description": workload,
        },
        "peak": {"precision": protocol.precision, "column": peak.column, "tflops": peak.tflops, "reason": peak.reason},
        "protocol": {**protocol.describe(), "deviations": deviations},
        "register": {
            "kind": backend.kind,
            "table": "staging.power_samples",
            "status": "primary" if backend.is_measurement else "derived",
            "title": f"{'FAKE (not a measurement) ' if not backend.is_measurement else ''}{model_name} training power on {device_id}",
        },
        "command": sys.argv,
        "repeats": [],
    }
    path = out_dir / f"{series_id}.capture.json"
    write_json(path, manifest)
    try:
        for k in range(1, protocol.repeats + 1):
            repeat = _run_repeat(backend, protocol, k, config=config, torch_device=torch_device, out_dir=out_dir,
                                 options={"run_id": f"{series_id}_r{k}", **base_options}, peak=peak, log=log)
            manifest["workload"]["parameters"] = repeat.pop("parameters")
            repeat["register_command"] = shlex.join(["edge-carbon", *register_argv(manifest, repeat, out_dir / repeat["log"])])
            manifest["repeats"].append(repeat)
            write_json(path, manifest)
    except BaseException as exc:
        manifest["status"] = "interrupted" if isinstance(exc, KeyboardInterrupt) else "failed"
        manifest["error"] = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
        manifest["ended_at"] = _now()
        write_json(path, manifest)
        raise
    manifest["status"] = "complete"
    manifest["ended_at"] = _now()
    write_json(path, manifest)
    return path


def _run_repeat(backend: Backend, protocol: Protocol, k: int, *, config: ModelConfig, torch_device: str, out_dir: Path,
                options: dict[str, Any], peak: Peak, log: Callable[[str], Any]) -> dict[str, Any]:
    """One repeat of the protocol: its four phases recorded, and its manifest entry."""
    from tools.capture.model import (  # torch: imported by the checks before any phase
        Trainer,
        parameter_count,
    )

    run_id = options["run_id"]
    phases: dict[str, Phase] = {}
    seconds: dict[str, float] = {}

    def record(name: str, work: Callable[[], Any]) -> Any:
        file = out_dir / (run_id + ("" if name == "measured" else f".{name}") + backend.suffix)
        t_start, mono = _now(), time.monotonic()
        recording = backend.record(file, protocol.period_s)
        try:
            began = time.perf_counter()
            result = work()  # a training phase returns after its device has finished
            seconds[name] = time.perf_counter() - began
        finally:
            readings = recording.stop()
        phase = Phase(name=name, file=file.name, started_at=t_start, ended_at=_now(), duration_s=time.monotonic() - mono,
                      readings=readings, sha256=_sha256(file))
        phase.check = log_summary(file, backend.kind, options)
        phase.check.update({key: value for key, value in recording.extra.items() if key != "first"})
        phases[name] = phase
        return result

    log(f"repeat {k}/{protocol.repeats}: idle {protocol.idle_s:g} s")
    record("idle_before", lambda: time.sleep(protocol.idle_s))
    trainer = Trainer.create(config, steps=protocol.warmup_steps + protocol.steps, batch=protocol.batch, seq=protocol.seq,
                             seed=protocol.seed, device=torch_device, lr=protocol.lr, precision=protocol.precision)
    parameters = parameter_count(trainer.model)
    log(f"repeat {k}/{protocol.repeats}: {protocol.warmup_steps} warm-up steps")
    warm_loss = record("warmup", partial(trainer.train, protocol.warmup_steps))
    log(f"repeat {k}/{protocol.repeats}: {protocol.steps} measured steps")
    loss = record("measured", partial(trainer.train, protocol.steps))
    del trainer
    log(f"repeat {k}/{protocol.repeats}: idle {protocol.idle_s:g} s")
    record("idle_after", lambda: time.sleep(protocol.idle_s))
    measured = phases["measured"]
    idle_w = [phases[p].check.get("mean_power_w") for p in ("idle_before", "idle_after")]
    rate = rates(tokens=protocol.batch * protocol.seq * protocol.steps, seconds=seconds["measured"], params=parameters, peak=peak)
    check = measured.check
    energy = check.get("energy_j")
    log(
        f"repeat {k}/{protocol.repeats}: {measured.file}: {check.get('samples')} samples"
        + (f", {energy:.1f} J over {check['duration_s']:.2f} s" if energy is not None else "")
        + f", {rate['tokens_per_s']:,.0f} tokens/s, {rate['achieved_tflops']:.2f} TFLOPS"
        + (f", MFU {rate['mfu']:.1%}" if rate["mfu"] is not None else "")
    )
    return {
        "repeat": k,
        "run_id": run_id,
        "log": measured.file,
        "register_options": options,
        "phases": {name: asdict(phase) for name, phase in phases.items()},
        "measured_window": {"started_at": measured.started_at, "ended_at": measured.ended_at, "duration_s": measured.duration_s},
        "warmup_window": {"started_at": phases["warmup"].started_at, "ended_at": phases["warmup"].ended_at, "excluded": True},
        "idle_power_w": {"before": idle_w[0], "after": idle_w[1], "mean": _mean(idle_w)},
        "loss": {"after_warmup": _finite(warm_loss), "after_measured": _finite(loss)},
        "train_s": seconds["measured"],
        **rate,
        "parameters": parameters,
    }


def _finite(value: float) -> float | None:
    """The value, or None for NaN / infinity (JSON has neither)."""
    return value if math.isfinite(value) else None


def _mean(values: list[float | None]) -> float | None:
    """Mean of the values, or None if any is missing."""
    present = [v for v in values if v is not None]
    return sum(present) / len(present) if present and len(present) == len(values) else None


def config_named(name: str) -> ModelConfig:
    """The model configuration called ``name`` (a key of :data:`~tools.capture.model.CONFIGS`)."""
    try:
        return CONFIGS[name]
    except KeyError:
        raise ProtocolError(f"unknown model config {name!r}; choose from {', '.join(CONFIGS)}") from None
