"""``edge-carbon-capture``: record real training-power logs, then register them.

    edge-carbon-capture run [--backend auto|nvml|rapl|powermetrics|android] [--config opt-125m|opt-1.3b|tiny]
                            [--precision fp32|tf32|bf16|fp16] ...
    edge-carbon-capture register RUN_MANIFEST.json [--subtract-idle] [--copy] [--dry-run]

``run`` trains an OPT-shaped causal LM (random initialisation, synthetic tokens, fixed
seed) under the fixed protocol of :mod:`tools.capture.protocol` while a power backend
samples in the background, and writes one native-format log per phase and repeat plus a
JSON run manifest. With no usable backend it says why for each and exits with status 3; it
never writes made-up numbers. ``--backend fake`` (tests only) writes a constant power and is
marked in every output as not a measurement.

``run`` needs only torch, the backend's bindings and the standard library, and checks every
import, the backend and the torch device before the first phase. ``register`` (on the machine
with the warehouse) reads every log back with the warehouse's parser, turns the run manifest into
one ``edge-carbon register`` call per measured log and adds the capture's training rate as a
``measured`` row of staging.training_throughput (``python -m tools.capture register ...`` does
the same).
"""

from __future__ import annotations

import argparse
import datetime as dt
import sys
from pathlib import Path

from tools.capture.backends import BACKENDS, detect
from tools.capture.configs import CONFIGS, PRECISIONS, sequence_error
from tools.capture.protocol import (
    MAX_PERIOD_S,
    RECOMMENDED_IDLE_S,
    Protocol,
    ProtocolError,
    config_named,
    run_capture,
    torch_build,
)
from tools.capture.rates import device_id_for, device_peak, slug, sources_folder
from tools.capture.recording import Backend, NoBackendError
from tools.capture.registration import RegistrationError, register_all

#: Exit status when no power backend is available.
EXIT_NO_BACKEND = 3
#: Where a CUDA build of torch comes from (the constraints file pins the CPU build for CI).
CUDA_TORCH = "pip install torch --index-url https://download.pytorch.org/whl/cu128 (the build for your driver: pytorch.org/get-started)"


def _default_torch_device(backend: Backend) -> str:
    import torch

    if "cuda" in backend.trains_on and backend.name != "fake" and torch.cuda.is_available():
        return f"cuda:{getattr(backend, 'index', 0)}"
    if "mps" in backend.trains_on and backend.name != "fake" and torch.backends.mps.is_available():
        return "mps"
    return "cpu"


def device_problem(backend: Backend, torch_device: str) -> str | None:
    """Why training on ``torch_device`` would not be what ``backend`` measures (at most 3 lines), or None."""
    import torch

    try:
        kind = torch.device(torch_device).type
    except RuntimeError as exc:
        return f"--torch-device {torch_device!r} is not a torch device ({exc})"
    name = str(backend.describe().get("device_name") or backend.name)
    if kind == "cuda" and not torch.cuda.is_available():
        return (f"--torch-device {torch_device}: torch {torch.__version__} is a {torch_build()} build with no usable CUDA GPU.\n"
                f"Install a CUDA build: {CUDA_TORCH}")
    if kind not in backend.trains_on:
        if backend.trains_on == ("cuda",) and not torch.cuda.is_available():
            return (f"--backend {backend.name} measures {name}, but torch {torch.__version__} is a {torch_build()} build that cannot train on it: "
                    f"the model would train on the CPU while the idle GPU is measured.\nInstall a CUDA build: {CUDA_TORCH}")
        wanted = " or ".join(backend.trains_on)
        return f"--backend {backend.name} measures {backend.measures} ({name}), so the model must train there: --torch-device {wanted}, not {torch_device}"
    if kind == "cuda" and backend.name == "nvml":
        trains = torch.cuda.get_device_name(torch.device(torch_device))
        if " ".join(trains.split()).lower() != " ".join(name.split()).lower():
            return (f"--torch-device {torch_device} is {trains} but NVML GPU {getattr(backend, 'index', 0)} is {name}: "
                    "set --gpu-index and --torch-device to the same GPU (CUDA_VISIBLE_DEVICES renumbers CUDA devices)")
    return None


def _settings(args: argparse.Namespace, backend: Backend) -> tuple[Protocol, str, str]:
    """The protocol, the torch device and the device id, each checked; :class:`ProtocolError` (one line) if not."""
    from tools.capture.model import (  # torch and the model, before anything runs
        default_precision,
        precision_error,
    )

    config = config_named(args.config)
    seq = args.seq if args.seq is not None else config.default_seq
    why = sequence_error(config, seq)
    if why:
        raise ProtocolError(why)
    torch_device = args.torch_device or _default_torch_device(backend)
    why = device_problem(backend, torch_device)
    if why:
        raise ProtocolError(why)
    precision = args.precision or default_precision(torch_device)
    why = precision_error(precision, torch_device)
    if why:
        raise ProtocolError(why)
    protocol = Protocol(repeats=args.repeats, idle_s=args.idle_s, warmup_steps=args.warmup_steps, steps=args.steps,
                        period_s=args.period_s, batch=args.batch, seq=seq, seed=args.seed, precision=precision)
    protocol.check(backend)
    device_name = str(backend.describe().get("device_name") or "")
    device_id = args.device_id or device_id_for(device_name)
    if not device_id:
        raise ProtocolError("cannot name the device from the backend: pass --device-id (e.g. intel-i7-1185g7)")
    if not backend.is_measurement and not device_id.startswith("fake"):
        device_id = f"fake-{device_id}"
    return protocol, torch_device, device_id


def run(args: argparse.Namespace) -> int:
    """Check everything (imports, backend, torch device, settings), then run the protocol, writing the logs and the run manifest."""
    try:
        backend = detect(args.backend, gpu_index=args.gpu_index, timezone=args.timezone, power_w=args.fake_power_w)
    except NoBackendError as exc:
        print(f"edge-carbon-capture: {exc}\nTo try the capture without measuring anything: --backend fake", file=sys.stderr)
        return EXIT_NO_BACKEND
    path = None
    try:
        protocol, torch_device, device_id = _settings(args, backend)
        config = config_named(args.config)
        stamp = dt.datetime.now(dt.UTC).strftime("%Y%m%dT%H%M%SZ")
        series_id = args.series_id or f"capture_{device_id}_{slug(config.name)}_{protocol.precision}_{stamp}"
        out_dir = Path(args.out) if args.out else sources_folder() / "power" / "own" / series_id
        path = out_dir / f"{series_id}.capture.json"
        peak = device_peak(device_id, protocol.precision)
        print(f"backend {backend.name} ({backend.kind} logs), device {device_id}, torch device {torch_device} ({torch_build()} build), "
              f"{config.name} in {protocol.precision}, batch {protocol.batch} x sequence {protocol.seq}, series {series_id}")
        run_capture(backend, protocol, config=config, torch_device=torch_device, out_dir=out_dir, series_id=series_id,
                    device_id=device_id, peak=peak, workload=args.workload)
    except ProtocolError as exc:
        print(f"edge-carbon-capture: {exc}", file=sys.stderr)
        return 2
    except (RuntimeError, OSError, KeyboardInterrupt) as exc:
        print(f"edge-carbon-capture: the capture stopped: {type(exc).__name__}: {exc}", file=sys.stderr)
        if path is not None and path.is_file():
            print(f"The run manifest {path} keeps the finished repeats: register them with "
                  f"python -m tools.capture register {path}", file=sys.stderr)
        return 130 if isinstance(exc, KeyboardInterrupt) else 1
    finally:
        backend.close()
    print(f"run manifest: {path}")
    print(f"register the logs and the rate (where the warehouse is): python -m tools.capture register {path}")
    if not backend.is_measurement:
        print("NOTE: fake backend: these logs are NOT measurements")
    return 0


def register(args: argparse.Namespace) -> int:
    """Register every measured log of a run manifest."""
    try:
        return register_all(Path(args.manifest), subtract_idle=args.subtract_idle, copy=args.copy, manifest_name=args.manifest_file, dry_run=args.dry_run)
    except RegistrationError as exc:
        print(f"edge-carbon-capture: {exc}", file=sys.stderr)
        return 2


def main(argv: list[str] | None = None) -> int:
    """Entry point of ``edge-carbon-capture`` and ``python -m tools.capture``."""
    parser = argparse.ArgumentParser(prog="edge-carbon-capture", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    cap = sub.add_parser("run", help="train under the protocol while recording power")
    cap.add_argument("--backend", default="auto", choices=["auto", *BACKENDS], help="power backend (fake: tests only, not a measurement)")
    cap.add_argument("--config", default="opt-125m", choices=list(CONFIGS), help="model shape")
    cap.add_argument("--precision", choices=PRECISIONS,
                     help="number format: fp32 (TF32 off), tf32, bf16 or fp16 autocast (default: bf16 on a CUDA GPU, else fp32)")
    cap.add_argument("--repeats", type=int, default=5, help="runs (one log each), at least 5")
    cap.add_argument("--steps", type=int, default=100, help="measured training steps per run")
    cap.add_argument("--warmup-steps", type=int, default=10, help="warm-up steps per run, excluded from the measured log")
    cap.add_argument("--batch", type=int, default=8, help="sequences per step")
    cap.add_argument("--seq", type=int, help="tokens per sequence (default: the config's, 512; tiny: 64)")
    cap.add_argument("--seed", type=int, default=0)
    cap.add_argument("--idle-s", type=float, default=RECOMMENDED_IDLE_S, help="idle baseline before and after each run (s)")
    cap.add_argument("--period-s", type=float, default=MAX_PERIOD_S, help=f"sampling period (s), at most {MAX_PERIOD_S}")
    cap.add_argument("--torch-device", help="cpu, cuda:N or mps (default: the backend's device)")
    cap.add_argument("--gpu-index", type=int, default=0, help="NVML index of the GPU that trains")
    cap.add_argument("--timezone", help="IANA zone of nvidia-smi timestamps (default: this machine's)")
    cap.add_argument("--device-id", help="device id in the warehouse (default: from the device name)")
    cap.add_argument("--series-id", help="series of the repeats (default: capture_<device>_<config>_<UTC time>)")
    cap.add_argument("--workload", help="workload text (default: describes model, batch, sequence and steps)")
    cap.add_argument("--out", help="folder for logs and run manifest (default: <sources>/power/own/<series_id>)")
    cap.add_argument("--fake-power-w", type=float, default=100.0, help="constant power of the fake backend (W)")
    cap.set_defaults(func=run)
    reg = sub.add_parser("register", help="register the measured logs of a run manifest (edge-carbon register)")
    reg.add_argument("manifest", help="the <series_id>.capture.json written by run")
    reg.add_argument("--subtract-idle", action="store_true", help="give each run its mean idle power as idle_baseline_w")
    reg.add_argument("--copy", action="store_true", help="copy logs that are outside the sources folder into it first")
    reg.add_argument("--manifest-file", default="local.toml", help="manifest file below sources/manifest/")
    reg.add_argument("--dry-run", action="store_true", help="print the edge-carbon register commands only")
    reg.set_defaults(func=register)
    args = parser.parse_args(argv)
    return int(args.func(args))


if __name__ == "__main__":
    raise SystemExit(main())
