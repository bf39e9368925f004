"""Synthesised power logs for the paper's Table 1 runs, in each device's native log format.

The paper (Xue et al., HotCarbon 2025, arXiv 2507.01803) publishes only a mean power P and a
duration t for each Table 1 run of OPT-125M training, not the logs behind them:

=========  ==========================  ======  =======  =========  ===============
series     device                      P (W)   t (s)    E (kJ)     native format
=========  ==========================  ======  =======  =========  ===============
phone      Qualcomm Snapdragon 888     10      3,510    35.1       ``android_sysfs``
laptop     Apple M2 Pro                15      480      7.2        ``powermetrics``
gpu        NVIDIA RTX A5000            220     250      55.0       ``nvidia_smi``
=========  ==========================  ======  =======  =========  ===============

So that the ingest, energy and uncertainty code paths can be exercised end to end on the
workload the paper measured, this module writes ``RUNS_PER_DEVICE`` repeated runs per device
as plain-text logs in the format that device's own tool produces. **They are synthesised from
(P, t); they are not measurements**, and their manifest entries say so (status ``derived``,
option ``is_synthetic = true``); the option ``reproduces`` names the Table 1 claim each series
reproduces, the series ``marts.paper_reproduction`` reads.

The generative model
--------------------
Run ``k`` of a device with paper values (P, t):

1. **Run-to-run variation.** Duration ``T_k = t (1 + s_T z_k)`` and mean power
   ``P_k = P (1 + s_P w_k)`` with ``s_T = s_P = 0.02``. The scores ``z`` and ``w`` are the
   ``n`` stratified standard-normal quantiles ``Phi^-1((i + 0.5) / n)``, each put in an
   independent random order. Their sample mean is exactly zero, so the across-run mean
   duration is t and the mean power is P (a Latin-hypercube design); with n = 5 the extreme
   runs sit about 2.6 % either side of the centre. The mean energy is
   ``P t (1 + s_T s_P mean(z w))``, within 0.05 % of P t whatever the pairing.
2. **Sample times.** ``0 .. T_k`` inclusive on the tool's nominal period (1 s sysfs polling,
   ~1.003 s powermetrics blocks, 100 ms nvidia-smi), with small jitter on interior samples,
   rounded to the resolution the format prints.
3. **Deterministic profile** ``s(t)``, the product of
   - a warm-up ramp from idle: ``1 - (1 - f_idle) exp(-t / tau_ramp)``;
   - on the phone, thermal throttling: from ``t_0 = 240 s`` the power sags by up to 18 % with
     time constant 420 s, with a small (3 %) oscillation of the thermal governor;
   - on the GPU, a 0.4 s dip to 60 % every 12.5 s (logging and evaluation steps).
   The profile is then multiplied by the constant ``P_k / mean(s)``, where ``mean(s)`` is the
   trapezoid time-average of ``s`` over the run's own sample times. This is part of deriving
   the profile (it sets its level, before any noise is drawn), so the run's expected mean power
   is ``P_k`` exactly.
4. **Per-sample noise**, multiplicative and zero-mean: ``p_i = s_i (1 + x_i)`` with ``x`` a
   stationary AR(1) Gaussian process (phone sd 4 %, phi 0.7; laptop sd 5 %, phi 0.5; GPU
   sd 1.5 %, phi 0.8). Nothing is rescaled after the noise is drawn, so each run's energy
   scatters around ``P_k T_k`` by the noise (about 0.1-0.3 %) plus the rounding of the
   printed values.
5. **Format details.** Phone: discharge reported as a negative ``current_now`` (as on
   Qualcomm), current ``I = P / V`` with battery voltage ``V`` from an open-circuit voltage
   that falls 0.24 V per hour from about 4.1 V, less an internal-resistance drop (65 mOhm),
   so about 3.95 V sagging to 3.75 V under load. Laptop: the Combined line is the rounded sum
   of CPU (about 38 %) and GPU (about 62 %) power, ANE 0 mW; per-cluster and per-core lines
   and the second ``GPU Power`` line of the GPU section are written, but frequency-residency
   histograms are kept only on the GPU residency line, to keep the files small. GPU: local
   time (America/New_York, no zone in the file), a single GPU index 0.

Reproducibility: every random draw comes from ``numpy.random.default_rng`` seeded with
``(SEED, device, repeat)``; times are integer microseconds; values are printed with fixed
formats; no wall clock is read. Two invocations therefore write byte-identical files (with
the pinned numpy; ``Generator`` streams may change between numpy feature releases).

Run ``python -m tools.synthetic`` to rewrite ``sources/power/synthetic/`` and
``sources/manifest/power_synthetic.toml``; ``--out DIR`` writes the logs elsewhere (and no
manifest unless ``--manifest FILE`` is given).
"""

from __future__ import annotations

import argparse
import datetime as dt
import hashlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from statistics import NormalDist
from zoneinfo import ZoneInfo

import numpy as np

from pipelines.paths import MANIFEST_DIR, SOURCES_DIR

SEED = 2507_01803
RUNS_PER_DEVICE = 5
DURATION_SPREAD = 0.02
POWER_SPREAD = 0.02

DEFAULT_OUT: Path = SOURCES_DIR / "power" / "synthetic"
DEFAULT_MANIFEST: Path = MANIFEST_DIR / "power_synthetic.toml"
#: Path of the shipped logs relative to ``sources/`` (the manifest's ``path`` prefix).
SOURCES_SUBDIR = "power/synthetic"
#: The date written as ``retrieved_on``: when these files were first generated.
GENERATED_ON = dt.date(2026, 11, 29)

PAPER_URL = "https://arxiv.org/abs/2507.01803"
MODEL = "OPT-125M"
WORKLOAD = "OPT-125M training, paper Table 1"
NOTES = "Synthesised from the paper's Table 1 summary (P, t); not a measurement."
ATTRIBUTION = (
    "Xue, Madhyastha, Burns, Lee, Marina, HotCarbon 2025 (arXiv 2507.01803), Table 1 (P, t); "
    "log synthesised by tools/synthetic.py"
)

US = 1_000_000  # microseconds per second


@dataclass(frozen=True)
class Device:
    """One Table 1 device: the paper's (P, t) and the parameters of its synthetic profile."""

    key: str
    name: str
    device_id: str
    kind: str
    extension: str
    power_w: float
    duration_s: float
    period_s: float
    jitter_s: float
    resolution_us: int
    ramp_s: float
    idle_fraction: float
    noise_sd: float
    noise_phi: float
    first_start_utc: dt.datetime
    claim_id: str  # the paper claim (sources/curated/paper_claims.csv) the series reproduces
    format_options: tuple[tuple[str, str], ...] = ()

    @property
    def series_id(self) -> str:
        """The series that groups this device's repeats, e.g. ``table1_phone``."""
        return f"table1_{self.key}"


# The Table 1 devices: identity and log format, the paper's (P, t), the sampling clock, the profile's shape.
PHONE = Device(
    key="phone", name="Qualcomm Snapdragon 888 phone", device_id="qualcomm-sd888", kind="android_sysfs",
    extension="csv", format_options=(("sign", "auto"),), power_w=10.0, duration_s=3510.0,
    period_s=1.0, jitter_s=0.005, resolution_us=1000, first_start_utc=dt.datetime(2023, 3, 13, 14, 5, tzinfo=dt.UTC),
    ramp_s=20.0, idle_fraction=0.12, noise_sd=0.04, noise_phi=0.7, claim_id="T1_phone_energy",
)
LAPTOP = Device(
    key="laptop", name="Apple M2 Pro laptop", device_id="apple-m2-pro", kind="powermetrics", extension="txt",
    power_w=15.0, duration_s=480.0, period_s=1.003, jitter_s=0.002, resolution_us=10,
    first_start_utc=dt.datetime(2023, 2, 13, 17, 30, tzinfo=dt.UTC), ramp_s=8.0, idle_fraction=0.10, noise_sd=0.05,
    noise_phi=0.5, claim_id="T1_laptop_energy",
)
GPU = Device(
    key="gpu", name="NVIDIA RTX A5000 cloud GPU", device_id="nvidia-rtx-a5000", kind="nvidia_smi", extension="csv",
    format_options=(("timezone", "America/New_York"),), power_w=220.0, duration_s=250.0, period_s=0.1,
    jitter_s=0.003, resolution_us=1000, first_start_utc=dt.datetime(2023, 5, 15, 14, 0, tzinfo=dt.UTC),
    ramp_s=4.0, idle_fraction=0.11, noise_sd=0.015, noise_phi=0.8, claim_id="T1_cloud_energy",
)
DEVICES: tuple[Device, ...] = (PHONE, LAPTOP, GPU)

LAPTOP_TZ = ZoneInfo("America/Los_Angeles")
GPU_TZ = ZoneInfo("America/New_York")


@dataclass(frozen=True)
class Run:
    """One synthesised run: sample times (integer microseconds from the start) and power."""

    device: Device
    repeat: int
    start_utc: dt.datetime
    t_us: np.ndarray
    power_w: np.ndarray
    target_duration_s: float
    target_power_w: float

    @property
    def run_id(self) -> str:
        """``table1_<device>_r<repeat>``."""
        return f"{self.device.series_id}_r{self.repeat}"

    @property
    def file_name(self) -> str:
        """Name of the log file."""
        return f"{self.run_id}.{self.device.extension}"


@dataclass(frozen=True)
class GeneratedFile:
    """A written log and everything its manifest entry needs."""

    run: Run
    path: Path
    sha256: str


def stratified_scores(n: int) -> np.ndarray:
    """The ``n`` standard-normal quantiles at ``(i + 0.5) / n``; they sum to zero."""
    dist = NormalDist()
    return np.array([dist.inv_cdf((i + 0.5) / n) for i in range(n)])


def run_factors(device_index: int, n: int = RUNS_PER_DEVICE) -> tuple[np.ndarray, np.ndarray]:
    """Per-run duration and power factors around 1, each an independent shuffle of the scores."""
    rng = np.random.default_rng([SEED, device_index])
    scores = stratified_scores(n)
    duration = 1.0 + DURATION_SPREAD * rng.permutation(scores)
    power = 1.0 + POWER_SPREAD * rng.permutation(scores)
    return duration, power


def sample_times_us(rng: np.random.Generator, device: Device, duration_s: float) -> np.ndarray:
    """Sample times from 0 to the run's duration inclusive, jittered, at the format's resolution."""
    intervals = max(2, round(duration_s / device.period_s))
    times = np.linspace(0.0, duration_s, intervals + 1)
    times[1:-1] += rng.uniform(-device.jitter_s, device.jitter_s, intervals - 1)
    res = device.resolution_us
    t_us = (np.round(times * US / res) * res).astype(np.int64)
    if np.any(np.diff(t_us) <= 0):
        raise AssertionError("sample times must increase")
    return t_us


def profile_shape(device: Device, t_s: np.ndarray) -> np.ndarray:
    """The deterministic power profile (unscaled): warm-up ramp, throttling, periodic dips."""
    shape = 1.0 - (1.0 - device.idle_fraction) * np.exp(-t_s / device.ramp_s)
    if device is PHONE:
        onset, depth, tau = 240.0, 0.18, 420.0
        hot = np.clip(t_s - onset, 0.0, None)
        sag = depth * (1.0 - np.exp(-hot / tau))
        governor = 0.03 * np.sin(2.0 * np.pi * hot / 47.0) * (1.0 - np.exp(-hot / 60.0))
        shape = shape * (1.0 - sag + governor)
    if device is GPU:
        period, width = 12.5, 0.4
        phase = np.mod(t_s, period)
        shape = np.where(phase >= period - width, shape * 0.6, shape)
    return shape


def trapezoid_mean(t_s: np.ndarray, values: np.ndarray) -> float:
    """Time-average of ``values`` over ``t_s`` by the trapezoid rule."""
    area = float(np.sum((values[1:] + values[:-1]) * np.diff(t_s)) / 2.0)
    return area / float(t_s[-1] - t_s[0])


def ar1_noise(rng: np.random.Generator, n: int, sd: float, phi: float) -> np.ndarray:
    """A stationary zero-mean AR(1) Gaussian series with marginal standard deviation ``sd``."""
    shocks = rng.standard_normal(n)
    out = np.empty(n)
    out[0] = sd * shocks[0]
    scale = sd * np.sqrt(1.0 - phi * phi)
    for i in range(1, n):
        out[i] = phi * out[i - 1] + scale * shocks[i]
    return out


def simulate(device_index: int, repeat: int) -> tuple[Run, np.random.Generator]:
    """Simulate one run; also return its generator for the format's own random details."""
    device = DEVICES[device_index]
    duration_factors, power_factors = run_factors(device_index)
    target_t = device.duration_s * float(duration_factors[repeat - 1])
    target_p = device.power_w * float(power_factors[repeat - 1])
    rng = np.random.default_rng([SEED, device_index, repeat])
    start_offset_s = int(rng.integers(0, 3 * 3600))
    start_ms = int(rng.integers(0, 1000))
    start = device.first_start_utc + dt.timedelta(days=2 * (repeat - 1), seconds=start_offset_s, milliseconds=start_ms)
    t_us = sample_times_us(rng, device, target_t)
    t_s = t_us / US
    shape = profile_shape(device, t_s)
    level = target_p / trapezoid_mean(t_s, shape)
    noise = ar1_noise(rng, t_us.size, device.noise_sd, device.noise_phi)
    power = level * shape * (1.0 + noise)
    if np.any(power <= 0):
        raise AssertionError("synthetic power must stay positive")
    run = Run(device, repeat, start, t_us, power, target_t, target_p)
    return run, rng


# --- android_sysfs ------------------------------------------------------------------------


def android_sysfs_text(run: Run, rng: np.random.Generator) -> str:
    """``timestamp_ms,current_now,voltage_now``: epoch ms UTC, microamps (negative), microvolts."""
    t_s = run.t_us / US
    ocv = float(rng.uniform(4.08, 4.12)) - 0.24 * t_s / 3600.0
    resistance = 0.065
    volts = (ocv + np.sqrt(ocv * ocv - 4.0 * resistance * run.power_w)) / 2.0
    volts = volts + rng.normal(0.0, 0.0008, t_s.size)
    current_ua = -np.round(run.power_w / volts * 1e6).astype(np.int64)
    voltage_uv = np.round(volts * 1e6).astype(np.int64)
    start_ms = int(run.start_utc.timestamp() * 1000)
    stamps = start_ms + run.t_us // 1000
    lines = ["timestamp_ms,current_now,voltage_now"]
    lines += [f"{s},{i},{v}" for s, i, v in zip(stamps.tolist(), current_ua.tolist(), voltage_uv.tolist(), strict=True)]
    return "\n".join(lines) + "\n"


# --- powermetrics -------------------------------------------------------------------------

_GPU_FREQS_MHZ = (444, 612, 808, 968, 1110, 1236, 1338, 1398)


def _ctime(moment: dt.datetime) -> str:
    """powermetrics' time stamp: ``Wed Jan 11 10:00:00 2023 -0800`` (day padded with a space)."""
    return f"{moment:%a %b} {moment.day:2d} {moment:%H:%M:%S %Y %z}"


def _pct(value: float) -> str:
    """A residency share in a powermetrics histogram: ``  0%``, ``.54%``, ``1.8%``, `` 95%``."""
    if value >= 9.5:
        return f"{value:3.0f}%"
    if value >= 1.0:
        return f"{value:.1f}%"
    if value < 0.005:
        return "  0%"
    return f"{value:.2f}%"[1:]


def _residency(value: float) -> str:
    """An overall residency: ``  5.00%`` or `` 95.00%`` (width 6, two decimals)."""
    return f"{value:6.2f}%"


def powermetrics_block(rng: np.random.Generator, when: dt.datetime, elapsed_us: int, combined_mw: float) -> str:
    """One ``*** Sampled system activity ***`` block of ``--samplers cpu_power,gpu_power``."""
    gpu_share = float(np.clip(rng.normal(0.62, 0.025), 0.5, 0.75))
    gpu_mw, cpu_mw, ane_mw = combined_mw * gpu_share, combined_mw * (1.0 - gpu_share), 0.0
    load = float(np.clip(combined_mw / 16000.0, 0.05, 1.0))
    lines = [
        f"*** Sampled system activity ({_ctime(when)}) ({elapsed_us // 1000}.{elapsed_us % 1000 // 10:02d}ms elapsed) ***",
        "",
        "",
        "**** Processor usage ****",
        "",
    ]
    clusters = (("E-Cluster", range(0, 4), 912, 2424, 0.45), ("P0-Cluster", range(4, 7), 2400, 3504, 0.75), ("P1-Cluster", range(7, 10), 2400, 3504, 0.6))
    for name, cores, low, high, busy in clusters:
        freq = int(np.clip(rng.normal(low + (high - low) * load * 0.85, 90.0), low, high))
        active = float(np.clip(rng.normal(100.0 * busy * load, 6.0), 0.5, 99.5))
        lines += [
            f"{name} HW active frequency: {freq} MHz",
            f"{name} HW active residency: {_residency(active)}",
            f"{name} idle residency: {_residency(100.0 - active)}",
        ]
        lines += [f"CPU {core} frequency: {int(np.clip(freq + rng.normal(0.0, 60.0), low, high))} MHz" for core in cores]
    gpu_active = float(np.clip(rng.normal(96.0 * min(1.0, combined_mw / 15000.0), 1.5), 1.0, 99.9))
    at_top = gpu_active * float(rng.uniform(0.9, 1.0)) if gpu_active > 50.0 else 0.0
    bins = [0.0] * len(_GPU_FREQS_MHZ)
    if at_top:
        bins[-1], bins[-2] = at_top, gpu_active - at_top
    else:
        bins[0] = gpu_active
    histogram = " ".join(f"{f} MHz: {_pct(b)}" for f, b in zip(_GPU_FREQS_MHZ, bins, strict=True))
    gpu_freq = _GPU_FREQS_MHZ[-1] if at_top else _GPU_FREQS_MHZ[0]
    lines += [
        "",
        f"CPU Power: {round(cpu_mw)} mW",
        f"GPU Power: {round(gpu_mw)} mW",
        f"ANE Power: {round(ane_mw)} mW",
        f"Combined Power (CPU + GPU + ANE): {round(combined_mw)} mW",
        "",
        "",
        "**** GPU usage ****",
        "",
        f"GPU HW active frequency: {gpu_freq} MHz",
        f"GPU HW active residency: {_residency(gpu_active)} ({histogram})",
        f"GPU idle residency: {_residency(100.0 - gpu_active)}",
        f"GPU Power: {round(gpu_mw)} mW",
        "",
        "",
    ]
    return "\n".join(lines) + "\n"


def powermetrics_text(run: Run, rng: np.random.Generator) -> str:
    """A ``sudo powermetrics --samplers cpu_power,gpu_power -i 1000`` capture of the run."""
    boot = (run.start_utc - dt.timedelta(hours=5, minutes=int(rng.integers(0, 600)))).astimezone(LAPTOP_TZ)
    parts = [
        "Machine model: Mac14,9\n",
        "OS version: 22D68\n",
        "Boot arguments: \n",
        f"Boot time: {_ctime(boot)[:-6]}\n",
        "\n\n\n",
    ]
    device = run.device
    first_elapsed = int(round((device.period_s + rng.uniform(-device.jitter_s, device.jitter_s)) * US / 10)) * 10
    elapsed = np.concatenate([[first_elapsed], np.diff(run.t_us)])
    for t_us, gap_us, watts in zip(run.t_us.tolist(), elapsed.tolist(), run.power_w.tolist(), strict=True):
        when = (run.start_utc + dt.timedelta(microseconds=t_us)).astimezone(LAPTOP_TZ).replace(microsecond=0)
        parts.append(powermetrics_block(rng, when, int(gap_us), watts * 1000.0))
    return "".join(parts)


# --- nvidia_smi ---------------------------------------------------------------------------


def nvidia_smi_text(run: Run, rng: np.random.Generator) -> str:
    """``nvidia-smi --query-gpu=timestamp,index,name,power.draw --format=csv -lms 100``, local time."""
    del rng  # the format has no random details of its own
    lines = ["timestamp, index, name, power.draw [W]"]
    for t_us, watts in zip(run.t_us.tolist(), run.power_w.tolist(), strict=True):
        local = (run.start_utc + dt.timedelta(microseconds=t_us)).astimezone(GPU_TZ)
        stamp = f"{local:%Y/%m/%d %H:%M:%S}.{local.microsecond // 1000:03d}"
        lines.append(f"{stamp}, 0, NVIDIA RTX A5000, {watts:.2f} W")
    return "\n".join(lines) + "\n"


WRITERS: dict[str, Callable[[Run, np.random.Generator], str]] = {
    "android_sysfs": android_sysfs_text,
    "powermetrics": powermetrics_text,
    "nvidia_smi": nvidia_smi_text,
}


# --- files and manifest -------------------------------------------------------------------


def generate(out_dir: Path, runs_per_device: int = RUNS_PER_DEVICE) -> list[GeneratedFile]:
    """Write every run's log into ``out_dir``; return them with their sha256, in manifest order."""
    if runs_per_device != RUNS_PER_DEVICE:
        raise ValueError(f"the run design is stratified over exactly {RUNS_PER_DEVICE} runs")
    out_dir.mkdir(parents=True, exist_ok=True)
    written: list[GeneratedFile] = []
    for index, device in enumerate(DEVICES):
        for repeat in range(1, runs_per_device + 1):
            run, rng = simulate(index, repeat)
            data = WRITERS[device.kind](run, rng).encode("ascii")
            path = out_dir / run.file_name
            path.write_bytes(data)
            written.append(GeneratedFile(run=run, path=path, sha256=hashlib.sha256(data).hexdigest()))
    return written


def _toml(value: str | bool) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'


def manifest_text(files: Sequence[GeneratedFile]) -> str:
    """The ``power_synthetic.toml`` manifest for the written files."""
    out = [
        "# Synthesised power logs of the paper's Table 1 runs (staging.power_samples).",
        "# NOT measurements: generated from the paper's (P, t) by tools/synthetic.py.",
        "# Regenerate with `python -m tools.synthetic`; do not edit by hand.",
    ]
    for item in files:
        run, device = item.run, item.run.device
        fields: list[tuple[str, str]] = [
            ("id", _toml(f"synthetic_{run.run_id}")),
            ("path", _toml(f"{SOURCES_SUBDIR}/{run.file_name}")),
            ("title", _toml(f"Synthesised Table 1 power log: {device.name}, OPT-125M training, repeat {run.repeat} of {RUNS_PER_DEVICE} ({device.kind})")),
            ("url", _toml(PAPER_URL)),
            ("license", _toml("CC-BY-4.0")),
            ("attribution", _toml(ATTRIBUTION)),
            ("retrieved_on", GENERATED_ON.isoformat()),
            ("sha256", _toml(item.sha256)),
            ("kind", _toml(device.kind)),
            ("table", _toml("staging.power_samples")),
            ("status", _toml("derived")),
            ("notes", _toml(NOTES)),
        ]
        options: list[tuple[str, str]] = [
            ("run_id", _toml(run.run_id)),
            ("series_id", _toml(device.series_id)),
            ("device_id", _toml(device.device_id)),
            ("model", _toml(MODEL)),
            ("workload", _toml(WORKLOAD)),
            ("is_synthetic", _toml(True)),
            ("reproduces", _toml(device.claim_id)),
        ] + [(key, _toml(value)) for key, value in device.format_options]
        out += ["", "[[source]]"] + [f"{k} = {v}" for k, v in fields]
        out += ["", "[source.options]"] + [f"{k} = {v}" for k, v in options]
    return "\n".join(out) + "\n"


def main(argv: list[str] | None = None) -> int:
    """Command line: write the logs (and, for the shipped folder, the manifest)."""
    parser = argparse.ArgumentParser(prog="python -m tools.synthetic", description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help=f"folder for the logs (default {DEFAULT_OUT})")
    parser.add_argument("--manifest", type=Path, default=None, help="manifest file to write (default: the shipped one when --out is the default)")
    args = parser.parse_args(argv)
    out_dir = args.out.resolve()
    manifest = args.manifest
    if manifest is None and out_dir == DEFAULT_OUT.resolve():
        manifest = DEFAULT_MANIFEST
    files = generate(out_dir)
    total = sum(f.path.stat().st_size for f in files)
    for item in files:
        run = item.run
        energy_kj = trapezoid_mean(run.t_us / US, run.power_w) * (run.t_us[-1] - run.t_us[0]) / US / 1000.0
        print(f"{item.path.name:24} {run.t_us.size:6d} samples  {run.target_duration_s:8.1f} s  {energy_kj:7.2f} kJ")
    print(f"wrote {len(files)} logs, {total / 1e6:.2f} MB, to {out_dir}")
    if manifest is not None:
        manifest.write_text(manifest_text(files), encoding="utf-8")
        print(f"wrote {manifest}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
