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
monotonic), sample count and energy, as the warehouse's own parser and integrator read the
log back, are written to the run manifest, with the idle powers, so the measured energy can
be read gross or net of idle.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import math
import platform
import re
import shlex
import sys
import time
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from tools.capture.model import CONFIGS, ModelConfig, Trainer, parameter_count
from tools.capture.recording import Backend
from tools.capture.registration import MANIFEST_FORMAT, register_argv

MIN_REPEATS = 5
MAX_PERIOD_S = 0.1
RECOMMENDED_IDLE_S = 10.0
#: Model names recorded in the warehouse (column ``model``).
MODEL_NAMES = {"opt-125m": "OPT-125M", "tiny": "tiny-OPT (test shape)"}


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
            "optimizer": f"AdamW lr={self.lr}, fp32",
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


def slug(text: str) -> str:
    """Lowercase id made of letters, digits and dashes (``NVIDIA H200`` -> ``nvidia-h200``)."""
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")


def _now() -> str:
    return dt.datetime.now(dt.UTC).isoformat(timespec="microseconds")


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def read_back(path: Path, kind: str, options: Mapping[str, Any]) -> dict[str, Any]:
    """Parse a written log with the warehouse's parser and integrate it as the warehouse does.

    Returns samples, rejected rows, duration, energy (J) and mean power (W) of the log; this
    proves the log is ingestible and lets the idle logs give a baseline power.
    """
    from pipelines.ingest.energy.runs import runs_from_samples
    from pipelines.ingest.options import run_options
    from pipelines.ingest.parsers.android_sysfs import parse_android_sysfs
    from pipelines.ingest.parsers.nvidia_smi import parse_nvidia_smi
    from pipelines.ingest.parsers.powermetrics import parse_powermetrics
    from pipelines.ingest.parsers.rapl import parse_rapl

    parsers = {"nvidia_smi": parse_nvidia_smi, "rapl": parse_rapl, "powermetrics": parse_powermetrics, "android_sysfs": parse_android_sysfs}
    parsed = parsers[kind](path, options)
    runs = runs_from_samples(parsed.frame, run_options(path, options), log_format=kind)
    out: dict[str, Any] = {"samples": parsed.frame.height, "rejected_rows": len(parsed.rejects)}
    if runs.height:
        row = runs.row(0, named=True)
        out.update(duration_s=row["duration_s"], energy_j=row["energy_gross_j"], mean_power_w=row["energy_gross_j"] / row["duration_s"] if row["duration_s"] else None)
    return out


def software_versions(backend: Backend) -> dict[str, Any]:
    """Python, torch, CUDA, OS and driver versions."""
    import torch

    versions: dict[str, Any] = {
        "python": platform.python_version(),
        "torch": torch.__version__,
        "torch_cuda": torch.version.cuda,
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


def run_capture(
    backend: Backend,
    protocol: Protocol,
    *,
    config: ModelConfig,
    torch_device: str,
    out_dir: Path,
    series_id: str,
    device_id: str,
    workload: str | None = None,
    log: Callable[[str], Any] = print,
) -> Path:
    """Run the protocol, write one log per phase per repeat and the run manifest; return the manifest's path."""
    deviations = protocol.check(backend)
    out_dir.mkdir(parents=True, exist_ok=True)
    model_name = MODEL_NAMES.get(config.name, config.name)
    workload = workload or (
        f"{model_name} training from random init on synthetic tokens: batch {protocol.batch}, "
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
    started = _now()
    repeats = []
    n_params = None
    for k in range(1, protocol.repeats + 1):
        run_id = f"{series_id}_r{k}"
        options = {"run_id": run_id, **base_options}
        phases: dict[str, Phase] = {}

        def record(
            name: str, work: Callable[[], Any], run_id: str = run_id, options: dict[str, Any] = options, phases: dict[str, Phase] = phases
        ) -> Any:
            file = out_dir / (run_id + ("" if name == "measured" else f".{name}") + backend.suffix)
            t_start, mono = _now(), time.monotonic()
            recording = backend.record(file, protocol.period_s)
            try:
                result = work()
            finally:
                readings = recording.stop()
            phase = Phase(
                name=name,
                file=file.name,
                started_at=t_start,
                ended_at=_now(),
                duration_s=time.monotonic() - mono,
                readings=readings,
                sha256=_sha256(file),
            )
            phase.check = read_back(file, backend.kind, {**options, "run_id": run_id + ("" if name == "measured" else f".{name}")})
            phase.check.update({key: value for key, value in recording.extra.items() if key != "first"})
            phases[name] = phase
            return result

        log(f"repeat {k}/{protocol.repeats}: idle {protocol.idle_s:g} s")
        record("idle_before", lambda: time.sleep(protocol.idle_s))
        trainer = Trainer.create(
            config,
            steps=protocol.warmup_steps + protocol.steps,
            batch=protocol.batch,
            seq=protocol.seq,
            seed=protocol.seed,
            device=torch_device,
            lr=protocol.lr,
        )
        n_params = parameter_count(trainer.model)
        log(f"repeat {k}/{protocol.repeats}: {protocol.warmup_steps} warm-up steps")
        warm_loss = record("warmup", lambda trainer=trainer: trainer.train(protocol.warmup_steps))
        log(f"repeat {k}/{protocol.repeats}: {protocol.steps} measured steps")
        loss = record("measured", lambda trainer=trainer: trainer.train(protocol.steps))
        del trainer
        log(f"repeat {k}/{protocol.repeats}: idle {protocol.idle_s:g} s")
        record("idle_after", lambda: time.sleep(protocol.idle_s))
        measured = phases["measured"]
        idle_w = [phases[p].check.get("mean_power_w") for p in ("idle_before", "idle_after")]
        repeats.append(
            {
                "repeat": k,
                "run_id": run_id,
                "log": measured.file,
                "register_options": options,
                "phases": {name: asdict(phase) for name, phase in phases.items()},
                "measured_window": {"started_at": measured.started_at, "ended_at": measured.ended_at, "duration_s": measured.duration_s},
                "warmup_window": {"started_at": phases["warmup"].started_at, "ended_at": phases["warmup"].ended_at, "excluded": True},
                "idle_power_w": {"before": idle_w[0], "after": idle_w[1], "mean": _mean(idle_w)},
                "loss": {"after_warmup": _finite(warm_loss), "after_measured": _finite(loss)},
            }
        )
        check = measured.check
        log(
            f"repeat {k}/{protocol.repeats}: {measured.file}: {check.get('samples')} samples, "
            f"{check.get('energy_j', float('nan')):.1f} J over {check.get('duration_s', float('nan')):.2f} s"
        )
    manifest = {
        "format": MANIFEST_FORMAT,
        "is_measurement": backend.is_measurement,
        "warning": None if backend.is_measurement else "FAKE backend: these logs are NOT measurements; they exist to test the capture code",
        "series_id": series_id,
        "device_id": device_id,
        "started_at": started,
        "ended_at": _now(),
        "backend": {**backend.describe(), "kind": backend.kind},
        "software": software_versions(backend),
        "workload": {
            "model": model_name,
            "config": config.as_dict(),
            "parameters": n_params,
            "torch_device": torch_device,
            "batch": protocol.batch,
            "seq": protocol.seq,
            "steps": protocol.steps,
            "warmup_steps": protocol.warmup_steps,
            "tokens_per_measured_run": protocol.batch * protocol.seq * protocol.steps,
            "description": workload,
        },
        "protocol": {**protocol.describe(), "deviations": deviations},
        "register": {
            "kind": backend.kind,
            "table": "staging.power_samples",
            "status": "primary" if backend.is_measurement else "derived",
            "title": f"{'FAKE (not a measurement) ' if not backend.is_measurement else ''}{model_name} training power on {device_id}",
        },
        "command": sys.argv,
        "repeats": repeats,
    }

    for repeat in repeats:
        argv = register_argv(manifest, repeat, out_dir / repeat["log"])
        repeat["register_command"] = shlex.join(["edge-carbon", *argv])
    path = out_dir / f"{series_id}.capture.json"
    path.write_text(json.dumps(manifest, indent=2) + "\n", encoding="utf-8")
    return path


def _finite(value: float) -> float | None:
    """The value, or None for NaN / infinity (JSON has neither)."""
    return value if math.isfinite(value) else None


def _mean(values: list[float | None]) -> float | None:
    """Mean of the values, or None if any is missing."""
    present = [v for v in values if v is not None]
    return sum(present) / len(present) if present and len(present) == len(values) else None


def config_named(name: str) -> ModelConfig:
    """The model configuration called ``name`` (``opt-125m`` or ``tiny``)."""
    try:
        return CONFIGS[name]
    except KeyError:
        raise ProtocolError(f"unknown model config {name!r}; choose from {', '.join(CONFIGS)}") from None
