"""From a run manifest to registrations, one per measured log.

The run manifest (``<series_id>.capture.json``) holds, per repeat, the measured log's file
name, sha256 and the parser options of its run; :func:`register_request` turns one repeat into
a registration request of the ingest layer (:mod:`pipelines.ingest.registration`, what
``edge-carbon register`` calls), :func:`register_argv` into the same as ``edge-carbon register``
arguments (for a person to run), and :func:`register_all` checks every log (present, unchanged
since capture, below the sources folder, id not yet used) before registering any.
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

#: The ``format`` of a capture run manifest (run.json) that this module reads and protocol writes.
MANIFEST_FORMAT = "edge-carbon-capture/1"

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
    if data.get("format") != MANIFEST_FORMAT:
        raise RegistrationError(f"{path} is not an {MANIFEST_FORMAT} run manifest (format {data.get('format')!r})")
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


def register_request(manifest: dict[str, Any], repeat: dict[str, Any], log_path: Path, *, subtract_idle: bool = False,
                     manifest_name: str = "local.toml") -> Request:
    """The registration of one repeat's measured log at ``log_path`` (into ``manifest_name``)."""
    from pipelines.ingest.registration import Request

    reg = manifest["register"]
    options = run_options(manifest, repeat, subtract_idle=subtract_idle)
    return Request(
        file=str(log_path), id=repeat["run_id"], kind=reg["kind"], table=reg["table"], status=reg["status"],
        title=f"{reg['title']}, repeat {repeat['repeat']} of {len(manifest['repeats'])}", manifest=manifest_name,
        options=[f"{key}={_option_text(value)}" for key, value in options.items()],
    )


def register_argv(manifest: dict[str, Any], repeat: dict[str, Any], log_path: Path, *, subtract_idle: bool = False) -> list[str]:
    """Arguments of ``edge-carbon register`` for one repeat's measured log at ``log_path``."""
    request = register_request(manifest, repeat, log_path, subtract_idle=subtract_idle)
    argv = ["register", str(request.file), "--id", str(request.id), "--kind", str(request.kind), "--table", str(request.table),
            "--status", request.status, "--title", str(request.title)]
    for option in request.options:
        argv += ["--option", option]
    return argv


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
    """Register every measured log of a run manifest as ``edge-carbon register`` does; 0 on success
    (2 when the ingest layer refuses one, with its reason on stderr).

    Every log must exist, match the sha256 recorded at capture time and lie below the sources
    folder (with ``copy``, logs elsewhere are copied to ``<sources>/power/own/<series_id>/``
    first); no run id may already be a source id. Nothing is registered unless all pass.
    """
    from pipelines.errors import Refused
    from pipelines.ingest.manifest import load_manifest
    from pipelines.ingest.registration import register
    from pipelines.paths import sources_dir

    manifest = load_run_manifest(manifest_path)
    folder = manifest_path.resolve().parent
    root = sources_dir()
    known = {entry.id for entry in load_manifest()}
    calls: list[tuple[dict[str, Any], Path]] = []
    for repeat in manifest["repeats"]:
        log_file = folder / repeat["log"]
        if not log_file.is_file():
            raise RegistrationError(f"log {log_file} of run {repeat['run_id']} is missing")
        recorded = repeat["phases"]["measured"]["sha256"]
        if _sha256(log_file) != recorded:
            raise RegistrationError(f"log {log_file} changed after capture (sha256 differs from the run manifest); not registering it")
        if repeat["run_id"] in known:
            raise RegistrationError(f"source id {repeat['run_id']!r} is already registered; not registering the series again")
        if not log_file.resolve().is_relative_to(root):
            if not copy:
                raise RegistrationError(f"log {log_file} is not below the sources folder {root}; copy it there, or pass --copy")
            target = root / "power" / "own" / manifest["series_id"] / log_file.name
            calls.append((repeat, target))
        else:
            calls.append((repeat, log_file.resolve()))
    for repeat, target in calls:
        argv = register_argv(manifest, repeat, target, subtract_idle=subtract_idle) + ["--manifest", manifest_name]
        if dry_run:
            log("edge-carbon " + " ".join(_quote(a) for a in argv))
            continue
        source = folder / repeat["log"]
        if target != source.resolve():
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(source, target)
        try:
            plan = register(register_request(manifest, repeat, target, subtract_idle=subtract_idle, manifest_name=manifest_name))
        except Refused as exc:
            print(str(exc), file=sys.stderr)
            return 2
        for warning in plan.warnings:
            print(warning, file=sys.stderr)
        log(f"registered {plan.entry['id']} in sources/manifest/{manifest_name} (sha256 {plan.entry['sha256']})")
        _type_options(root / "manifest" / manifest_name, repeat["run_id"], run_options(manifest, repeat, subtract_idle=subtract_idle))
    if not dry_run:
        load_manifest()
    return 0


def _quote(arg: str) -> str:
    import shlex

    return shlex.quote(arg)
