"""From a run manifest to registrations: one per measured log, and one measured rate row.

The run manifest (``<series_id>.capture.json``) holds, per repeat, the measured log's file
name, sha256 and the parser options of its run; :func:`register_argv` turns one repeat into
``edge-carbon register`` arguments (for a person to run; standard library only, so the capture
writes them where the GPU is), :func:`register_request` into a registration request of the ingest
layer (:mod:`pipelines.ingest.registration`, what ``edge-carbon register`` calls), and
:func:`register_all`, on the machine with the warehouse, reads every log back with the
warehouse's parser, checks every log (present, unchanged since capture, below the sources
folder, id not yet used) before registering any, registers them, and adds the capture's
training rate as one ``measured`` row of ``staging.training_throughput`` (:func:`rate_row`).

A capture that stopped part-way (``status`` ``running``, ``failed`` or ``interrupted``) registers
its finished repeats, with a warning when they are fewer than the protocol's five.
"""

from __future__ import annotations

import hashlib
import json
import re
import shutil
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # imported when called: the capture tool starts without the ingest layer
    from pipelines.ingest.registration import Request

#: The ``format`` of a capture run manifest that protocol writes.
MANIFEST_FORMAT = "edge-carbon-capture/2"
#: The formats this module reads (1: no rates, no status; written complete at the end).
READABLE_FORMATS = ("edge-carbon-capture/1", MANIFEST_FORMAT)
#: Repeats the protocol asks for; a partial capture with fewer registers with a warning.
MIN_REPEATS = 5
#: What each log format's power covers (staging.training_throughput.power_boundary).
POWER_BOUNDARY = {"nvidia_smi": "board", "rapl": "package", "powermetrics": "package", "android_sysfs": "device"}
#: The ingest kind and table of the capture's rate row.
RATE_KIND = "curated_training_throughput"
RATE_TABLE = "staging.training_throughput"

#: Options the warehouse reads as typed TOML values (not strings).
TYPED_OPTIONS = {"is_synthetic": bool, "idle_baseline_w": float}


class RegistrationError(RuntimeError):
    """A run manifest that cannot be registered as it stands."""


def load_run_manifest(path: Path) -> dict[str, Any]:
    """The run manifest at ``path``, checked for its format."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        raise RegistrationError(f"cannot read run manifest {path}: {exc}") from exc
    if data.get("format") not in READABLE_FORMATS:
        raise RegistrationError(f"{path} is not an {MANIFEST_FORMAT} run manifest (format {data.get('format')!r})")
    if not data.get("repeats"):
        raise RegistrationError(f"{path}: no repeat finished (status {data.get('status', 'complete')}), so there is nothing to register")
    return data


def run_options(manifest: dict[str, Any], repeat: dict[str, Any], *, subtract_idle: bool = False) -> dict[str, Any]:
    """The parser options of one repeat's run, with the idle baseline if asked for."""
    options = dict(repeat["register_options"])
    if subtract_idle:
        idle = repeat.get("idle_power_w", {}).get("mean")
        if idle is None:
            raise RegistrationError(f"run {repeat['run_id']}: no idle power was recorded, so it cannot be subtracted")
        options["idle_baseline_w"] = round(float(idle), 6)
    return options


def _option_text(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def _title(manifest: dict[str, Any], repeat: dict[str, Any]) -> str:
    planned = manifest.get("protocol", {}).get("repeats", len(manifest["repeats"]))
    return f"{manifest['register']['title']}, repeat {repeat['repeat']} of {planned}"


def register_request(manifest: dict[str, Any], repeat: dict[str, Any], log_path: Path, *, subtract_idle: bool = False,
                     manifest_name: str = "local.toml", idle_w: float | None = None) -> Request:
    """The registration of one repeat's measured log at ``log_path`` (into ``manifest_name``)."""
    from pipelines.ingest.registration import Request

    reg = manifest["register"]
    options = run_options(manifest, repeat, subtract_idle=subtract_idle and idle_w is None)
    if subtract_idle and idle_w is not None:
        options["idle_baseline_w"] = round(float(idle_w), 6)
    return Request(
        file=str(log_path), id=repeat["run_id"], kind=reg["kind"], table=reg["table"], status=reg["status"],
        title=_title(manifest, repeat), manifest=manifest_name,
        options=[f"{key}={_option_text(value)}" for key, value in options.items()],
    )


def register_argv(manifest: dict[str, Any], repeat: dict[str, Any], log_path: Path, *, subtract_idle: bool = False) -> list[str]:
    """Arguments of ``edge-carbon register`` for one repeat's measured log at ``log_path``."""
    reg = manifest["register"]
    argv = ["register", str(log_path), "--id", str(repeat["run_id"]), "--kind", str(reg["kind"]), "--table", str(reg["table"]),
            "--status", str(reg["status"]), "--title", _title(manifest, repeat)]
    for key, value in run_options(manifest, repeat, subtract_idle=subtract_idle).items():
        argv += ["--option", f"{key}={_option_text(value)}"]
    return argv


def read_back(path: Path, kind: str, options: dict[str, Any]) -> dict[str, Any]:
    """Parse a written log with the warehouse's parser and integrate it as the warehouse does.

    Returns samples, rejected rows, duration, energy (J) and mean power (W) of the log: the log
    is ingestible, and the idle logs give a baseline power.
    """
    from pipelines.ingest.energy.runs import runs_from_samples
    from pipelines.ingest.options import run_options as parser_options
    from pipelines.ingest.parsers.android_sysfs import parse_android_sysfs
    from pipelines.ingest.parsers.nvidia_smi import parse_nvidia_smi
    from pipelines.ingest.parsers.powermetrics import parse_powermetrics
    from pipelines.ingest.parsers.rapl import parse_rapl

    parsers = {"nvidia_smi": parse_nvidia_smi, "rapl": parse_rapl, "powermetrics": parse_powermetrics, "android_sysfs": parse_android_sysfs}
    parsed = parsers[kind](path, options)
    runs = runs_from_samples(parsed.frame, parser_options(path, options), log_format=kind)
    out: dict[str, Any] = {"samples": parsed.frame.height, "rejected_rows": len(parsed.rejects)}
    if runs.height:
        row = runs.row(0, named=True)
        out.update(duration_s=row["duration_s"], energy_j=row["energy_gross_j"], mean_power_w=row["energy_gross_j"] / row["duration_s"] if row["duration_s"] else None)
    return out


def idle_power(manifest: dict[str, Any], repeat: dict[str, Any], folder: Path) -> float | None:
    """The mean power of a repeat's two idle logs, read back with the warehouse's parser (None if either has no span)."""
    powers = []
    for name in ("idle_before", "idle_after"):
        phase = repeat["phases"].get(name)
        if phase is None:
            return None
        options = {**repeat["register_options"], "run_id": f"{repeat['run_id']}.{name}"}
        powers.append(read_back(folder / phase["file"], manifest["register"]["kind"], options).get("mean_power_w"))
    return None if None in powers else sum(powers) / len(powers)


def rate_id(series_id: str) -> str:
    """The ``throughput_id`` of a capture's rate row: the series id in lowercase words joined by ``_``."""
    return re.sub(r"[^a-z0-9]+", "_", series_id.lower()).strip("_")


def rate_row(manifest: dict[str, Any], *, device_class: str, manifest_file: str, power_w: float | None = None) -> dict[str, Any]:
    """The capture's training rate as one row of ``staging.training_throughput`` (status ``measured``).

    ``tokens_per_s`` is the mean over the registered repeats, ``achieved_tflops`` its 6N count, and
    ``mfu`` the repeats' mean (null where the device's peak is unknown); ``power_w`` the measured
    windows' mean power as the warehouse reads the logs (the same job as the rate), within the
    log format's boundary; a fake capture's row is ``is_synthetic``, so no scenario may read it.
    """
    repeats = manifest["repeats"]
    if any(r.get("tokens_per_s") is None for r in repeats):
        raise RegistrationError("the run manifest records no tokens_per_s (written by an older edge-carbon-capture); no rate row")
    workload = manifest["workload"]
    params = int(workload["parameters"])
    rates = [float(r["tokens_per_s"]) for r in repeats]
    tokens_per_s = sum(rates) / len(rates)
    mfus = [r.get("mfu") for r in repeats]
    mfu = sum(mfus) / len(mfus) if None not in mfus else None
    peak = manifest.get("peak", {})
    precision = workload.get("precision", "fp32")
    notes = (
        f"Measured by edge-carbon-capture: {len(repeats)} repeat(s) of {workload['steps']} steps of batch {workload['batch']} x "
        f"sequence {workload['seq']} ({workload['tokens_per_measured_run']:,} tokens), {precision} "
        f"({manifest['protocol'].get('precision_note', '')}) on torch device {workload['torch_device']} "
        f"({workload.get('torch_device_name', '')}), torch {manifest['software'].get('torch')}. tokens_per_s = mean of the repeats' "
        f"tokens / training seconds ({min(rates):,.0f} to {max(rates):,.0f}); achieved_tflops = 6 x {params:,} x tokens_per_s / 1e12. "
        + (f"mfu = mean of the repeats' achieved TFLOPS / {peak.get('tflops')} TFLOPS ({peak.get('column')} of the device specs)."
           if mfu is not None else f"mfu: none, {peak.get('reason') or 'no peak known'}.")
        + ("" if manifest.get("is_measurement", True) else " FAKE backend: NOT a measurement (is_synthetic).")
    )
    return {
        "throughput_id": rate_id(manifest["series_id"]),
        "device_id": manifest["device_id"],
        "device_class": device_class,
        "device_name": manifest["backend"].get("device_name") or manifest["device_id"],
        "model": workload["model"],
        "model_params": params,
        "precision": workload.get("warehouse_precision", precision),
        "method": "full",
        "batch_size": workload["batch"],
        "sequence_length": workload["seq"],
        "devices": 1,
        "tokens_per_s": tokens_per_s,
        "flops_per_param_token": 6,
        "achieved_tflops": 6 * params * tokens_per_s / 1e12,
        "reported_tflops": None,
        "mfu": mfu,
        "job_time_s": None,
        "jobs_per_h": None,
        "status": "measured",
        "citation": f"Run manifest {manifest_file} (edge-carbon-capture, series {manifest['series_id']})",
        "citation_url": "https://example.invalid/own-measurement",
        "notes": notes,
        "power_w": power_w,
        "power_boundary": POWER_BOUNDARY.get(manifest["register"]["kind"]) if power_w is not None else None,
        "series_id": manifest["series_id"],
        "is_synthetic": not manifest.get("is_measurement", True),
    }


def write_rate_csv(row: dict[str, Any], path: Path) -> None:
    """The rate row as a curated CSV with the columns of staging.training_throughput."""
    import csv

    with path.open("w", encoding="utf-8", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(row), lineterminator="\n")
        writer.writeheader()
        writer.writerow({key: "" if value is None else ("true" if value is True else "false" if value is False else value)
                         for key, value in row.items()})


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _type_options(manifest_file: Path, source_id: str, options: dict[str, Any]) -> None:
    """Write the typed options of one entry as TOML booleans / numbers.

    ``edge-carbon register --option`` writes every value as a string; the warehouse reads
    ``is_synthetic`` as a boolean and ``idle_baseline_w`` as a number. This rewrites just those
    lines of the entry ``source_id`` (a no-op where they are already typed).
    """
    wanted = {key: options[key] for key in TYPED_OPTIONS if key in options}
    if not wanted:
        return
    text = manifest_file.read_text(encoding="utf-8")
    start = text.find(f'id = "{source_id}"')
    if start < 0:
        raise RegistrationError(f"entry {source_id!r} not found in {manifest_file}")
    end = text.find("[[source]]", start)
    end = len(text) if end < 0 else end
    block = text[start:end]
    for key, value in wanted.items():
        literal = _option_text(value) if isinstance(value, bool) else repr(float(value))
        block = re.sub(rf'(?m)^{re.escape(key)} = "[^"\n]*"$', f"{key} = {literal}", block)
    manifest_file.write_text(text[:start] + block + text[end:], encoding="utf-8")


def register_all(
    manifest_path: Path,
    *,
    subtract_idle: bool = False,
    copy: bool = False,
    manifest_name: str = "local.toml",
    dry_run: bool = False,
    log: Callable[[str], Any] = print,
) -> int:
    """Register every measured log of a run manifest as ``edge-carbon register`` does, then the
    capture's rate row; 0 on success (2 when the ingest layer refuses one, with its reason on stderr).

    Every log must exist, match the sha256 recorded at capture time, read back with the
    warehouse's parser, and lie below the sources folder (with ``copy``, logs elsewhere are copied
    to ``<sources>/power/own/<series_id>/`` first); no run id may already be a source id. Nothing
    is registered unless all pass.
    """
    from pipelines.errors import Refused
    from pipelines.ingest.devices import registered_devices
    from pipelines.ingest.manifest import load_manifest
    from pipelines.ingest.registration import Request, register
    from pipelines.paths import sources_dir

    manifest = load_run_manifest(manifest_path)
    folder = manifest_path.resolve().parent
    root = sources_dir()
    known = {entry.id for entry in load_manifest()}
    status = manifest.get("status", "complete")
    if status != "complete" or len(manifest["repeats"]) < MIN_REPEATS:
        print(f"edge-carbon-capture: warning: the capture is {status} with {len(manifest['repeats'])} finished repeat(s) "
              f"(the protocol asks for {MIN_REPEATS}); registering those", file=sys.stderr)
    kind = manifest["register"]["kind"]
    own = root / "power" / "own" / manifest["series_id"]
    calls: list[tuple[dict[str, Any], Path, float | None]] = []
    powers: list[float] = []
    for repeat in manifest["repeats"]:
        log_file = folder / repeat["log"]
        if not log_file.is_file():
            raise RegistrationError(f"log {log_file} of run {repeat['run_id']} is missing")
        recorded = repeat["phases"]["measured"]["sha256"]
        if _sha256(log_file) != recorded:
            raise RegistrationError(f"log {log_file} changed after capture (sha256 differs from the run manifest); not registering it")
        if repeat["run_id"] in known:
            raise RegistrationError(f"source id {repeat['run_id']!r} is already registered; not registering the series again")
        check = read_back(log_file, kind, dict(repeat["register_options"]))
        if check.get("energy_j") is None or check["rejected_rows"]:
            raise RegistrationError(f"log {log_file} does not read back as one run ({check['samples']} samples, "
                                    f"{check['rejected_rows']} rejected rows); not registering the series")
        log(f"read back {log_file.name}: {check['samples']} samples, {check['energy_j']:.1f} J over {check['duration_s']:.2f} s")
        if check.get("mean_power_w") is not None:
            powers.append(float(check["mean_power_w"]))
        idle_w = idle_power(manifest, repeat, folder) if subtract_idle else None
        if subtract_idle and idle_w is None:
            raise RegistrationError(f"run {repeat['run_id']}: its idle logs give no power, so it cannot be subtracted")
        if not log_file.resolve().is_relative_to(root):
            if not copy:
                raise RegistrationError(f"log {log_file} is not below the sources folder {root}; copy it there, or pass --copy")
            calls.append((repeat, own / log_file.name, idle_w))
        else:
            calls.append((repeat, log_file.resolve(), idle_w))
    rate_source = f"{manifest['series_id']}_rate"
    if rate_source in known:
        raise RegistrationError(f"source id {rate_source!r} is already registered; not registering the series again")
    devices = registered_devices(load_manifest())
    problem = devices.problem(manifest["device_id"])
    if problem is not None and not dry_run:
        raise RegistrationError(f"register: {problem}")
    if problem is not None:
        print(f"edge-carbon-capture: warning: register would refuse this: {problem}", file=sys.stderr)
    rate_dir = calls[0][1].parent
    if any(r.get("tokens_per_s") is None for r in manifest["repeats"]):
        row = None
        print(f"edge-carbon-capture: warning: {manifest_path.name} records no training rate (format {manifest['format']}), "
              "so only the power logs are registered", file=sys.stderr)
    else:
        power = sum(powers) / len(powers) if len(powers) == len(calls) else None
        row = rate_row(manifest, device_class=devices.classes.get(manifest["device_id"], "unknown"), manifest_file=manifest_path.name,
                       power_w=power)
    rate_file = rate_dir / f"{manifest['series_id']}.rate.csv"
    for repeat, target, idle_w in calls:
        request = register_request(manifest, repeat, target, subtract_idle=subtract_idle, manifest_name=manifest_name, idle_w=idle_w)
        if dry_run:
            log("edge-carbon " + " ".join(_quote(a) for a in _request_argv(request)))
            continue
        source = folder / repeat["log"]
        if target != source.resolve():
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(source, target)
        try:
            plan = register(request)
        except Refused as exc:
            print(str(exc), file=sys.stderr)
            return 2
        for warning in plan.warnings:
            print(warning, file=sys.stderr)
        log(f"registered {plan.entry['id']} in sources/manifest/{manifest_name} (sha256 {plan.entry['sha256']})")
        _type_options(root / "manifest" / manifest_name, repeat["run_id"], _typed(request.options))
    if row is None:
        if not dry_run:
            load_manifest()
        return 0
    rate_request = Request(file=str(rate_file), id=rate_source, kind=RATE_KIND, table=RATE_TABLE, status=manifest["register"]["status"],
                           title=f"{manifest['register']['title']}: measured training rate", manifest=manifest_name, options=[])
    if dry_run:
        log(f"then the rate row {row['throughput_id']} ({row['tokens_per_s']:,.0f} tokens/s, {row['achieved_tflops']:.3g} TFLOPS): "
            "edge-carbon " + " ".join(_quote(a) for a in _request_argv(rate_request)))
        return 0
    write_rate_csv(row, rate_file)
    try:
        plan = register(rate_request)
    except Refused as exc:
        print(str(exc), file=sys.stderr)
        return 2
    log(f"registered {plan.entry['id']} (staging.training_throughput row {row['throughput_id']}: {row['tokens_per_s']:,.0f} tokens/s, "
        f"{row['achieved_tflops']:.3g} TFLOPS" + (f", MFU {row['mfu']:.1%}" if row["mfu"] is not None else "") + ")")
    load_manifest()
    return 0


def _typed(options: list[str]) -> dict[str, Any]:
    """The typed options among ``KEY=VALUE`` texts, as their values."""
    pairs = dict(option.split("=", 1) for option in options)
    return {key: (pairs[key] == "true") if kind is bool else kind(pairs[key]) for key, kind in TYPED_OPTIONS.items() if key in pairs}


def _request_argv(request: Request) -> list[str]:
    """``edge-carbon register`` arguments of a request."""
    argv = ["register", str(request.file), "--id", str(request.id), "--kind", str(request.kind), "--table", str(request.table),
            "--status", str(request.status), "--title", str(request.title)]
    for option in request.options:
        argv += ["--option", option]
    return argv + ["--manifest", str(request.manifest)]


def _quote(arg: str) -> str:
    import shlex

    return shlex.quote(arg)
