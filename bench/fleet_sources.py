"""The synthetic fleet: its generated logs (cached by size), the sources folder a fleet build reads and
their manifest entries."""

from __future__ import annotations

import datetime as dt
import json
import shutil
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pipelines.paths import PROJECT_ROOT, SOURCES_DIR

OUT_DIR: Path = PROJECT_ROOT / "bench" / "out"
FLEET_LOGS = 2000
FLEET_SAMPLES = 10_000
#: Log i (1-based) is generated with seed SEED_BASE + i.
SEED_BASE = 1000
#: The folder below the sources folder that holds the fleet's logs, and the manifest file.
FLEET_FOLDER = "fleet"
MANIFEST_NAME = "fleet.toml"
#: The manifest file of the logs added one at a time to a grown fleet (figures b and c).
ADDED_NAME = "fleet_added.toml"
INDEX_NAME = "fleet.json"
#: The device of every fleet log (a row of the shipped sources/curated/device_specs.csv).
DEVICE_ID = "nvidia-rtx-a5000"
TABLE = "staging.power_samples"


@dataclass(frozen=True)
class FleetLog:
    """One generated log: its manifest id, path below the sources folder, digest, size."""

    id: str
    path: str
    sha256: str
    samples: int
    seed: int
    bytes: int


def log_id(number: int) -> str:
    """The manifest id of log ``number`` (1-based): ``fleet_00001``."""
    return f"fleet_{number:05d}"


def log_name(number: int) -> str:
    """The file name of log ``number``: ``log_00001.csv``."""
    return f"log_{number:05d}.csv"


def cache_dir(logs: int, samples: int, out_dir: Path = OUT_DIR) -> Path:
    """Where a fleet of ``logs`` x ``samples`` is cached: ``bench/out/fleet_<logs>x<samples>/``."""
    return out_dir / f"fleet_{logs}x{samples}"


def _read_index(directory: Path) -> dict[str, dict[str, Any]]:
    try:
        data = json.loads((directory / INDEX_NAME).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _write_index(directory: Path, index: dict[str, dict[str, Any]]) -> None:
    tmp = directory / f".{INDEX_NAME}.part"
    tmp.write_text(json.dumps(index, indent=0, sort_keys=True), encoding="utf-8")
    tmp.replace(directory / INDEX_NAME)


def ensure_fleet(directory: Path, count: int, samples: int, *, progress: Callable[[str], None] | None = None) -> list[FleetLog]:
    """Logs 1..``count`` of ``samples`` samples in ``directory``, generated where not cached.

    A log is reused when the index (``fleet.json``) records it at this sample count and the
    file still has the recorded size; otherwise it is written again and hashed.
    """
    from bench.nvidia_smi_log import write_log
    from pipelines.ingest.digests import sha256_file

    directory.mkdir(parents=True, exist_ok=True)
    index = _read_index(directory)
    logs: list[FleetLog] = []
    made = 0
    try:
        for number in range(1, count + 1):
            name, seed = log_name(number), SEED_BASE + number
            file = directory / name
            hit = index.get(name)
            fresh = (
                hit is not None and hit.get("samples") == samples and hit.get("seed") == seed
                and file.is_file() and file.stat().st_size == hit.get("bytes")
            )
            if not fresh:
                write_log(file, samples, seed=seed)
                hit = {"samples": samples, "seed": seed, "bytes": file.stat().st_size, "sha256": sha256_file(file)}
                index[name] = hit
                made += 1
                if progress is not None and made % 250 == 0:
                    progress(f"generated {made} logs ({number}/{count})")
            assert hit is not None
            logs.append(FleetLog(id=log_id(number), path=f"{FLEET_FOLDER}/{name}", sha256=str(hit["sha256"]),
                                 samples=samples, seed=seed, bytes=int(hit["bytes"])))
    finally:
        if made:
            _write_index(directory, index)
    return logs


def load_fleet(directory: Path) -> list[FleetLog]:
    """The logs recorded in ``directory``'s index, in order (for the worker subprocess)."""
    index = _read_index(directory)
    logs = []
    number = 1
    while (hit := index.get(log_name(number))) is not None:
        logs.append(FleetLog(id=log_id(number), path=f"{FLEET_FOLDER}/{log_name(number)}", sha256=str(hit["sha256"]),
                             samples=int(hit["samples"]), seed=int(hit["seed"]), bytes=int(hit["bytes"])))
        number += 1
    return logs


def make_sources(root: Path, fleet_dir: Path, shipped: Path = SOURCES_DIR) -> Path:
    """``<root>/sources``: the shipped sources folder's subfolders symlinked (not ``manifest``),
    ``manifest/`` holding copies of every shipped manifest file, and ``fleet/`` linked to
    ``fleet_dir``. The fleet's own manifest file is written by :func:`write_manifest`."""
    sources = root / "sources"
    sources.mkdir(parents=True)
    for child in sorted(shipped.iterdir()):
        if child.name == "manifest" or child.name.startswith("."):
            continue
        if child.name == FLEET_FOLDER:
            raise FileExistsError(f"the shipped sources already have a {FLEET_FOLDER}/ folder: {child}")
        (sources / child.name).symlink_to(child.resolve(), target_is_directory=child.is_dir())
    manifest = sources / "manifest"
    manifest.mkdir()
    for toml in sorted((shipped / "manifest").glob("*.toml")):
        if toml.name == MANIFEST_NAME:
            raise FileExistsError(f"the shipped manifest already has a {MANIFEST_NAME}: {toml}")
        shutil.copyfile(toml, manifest / toml.name)
    (sources / FLEET_FOLDER).symlink_to(fleet_dir.resolve(), target_is_directory=True)
    return sources


def _toml(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, dt.date):
        return value.isoformat()
    if isinstance(value, str):
        return json.dumps(value)  # a TOML basic string: JSON's escapes are TOML's
    raise TypeError(f"no TOML form for {value!r}")


def manifest_entry(log: FleetLog, retrieved_on: dt.date) -> str:
    """One ``[[source]]`` entry, in the form of the shipped nvidia_smi entries
    (``sources/manifest/power_synthetic.toml``)."""
    number = log.id.removeprefix("fleet_")
    fields = {
        "id": log.id,
        "path": log.path,
        "title": f"Synthetic fleet power log {number}: NVIDIA RTX A5000, {log.samples:,} samples (nvidia_smi)",
        "url": "https://example.invalid/edge-carbon/bench/fleet",
        "license": "CC0-1.0",
        "attribution": "edge-carbon benchmark; generated by bench/nvidia_smi_log.py",
        "retrieved_on": retrieved_on,
        "sha256": log.sha256,
        "kind": "nvidia_smi",
        "table": TABLE,
        "status": "assumed",
        "notes": f"Generated by bench/fleet.py (seed {log.seed}) for the fleet benchmark; not a measurement.",
    }
    options = {
        "run_id": log.id,
        "device_id": DEVICE_ID,
        "model": "OPT-125M",
        "workload": "synthetic fleet benchmark (bench/fleet.py)",
        "is_synthetic": True,
        "timezone": "UTC",
    }
    lines = ["[[source]]", *(f"{key} = {_toml(value)}" for key, value in fields.items()), "", "[source.options]",
             *(f"{key} = {_toml(value)}" for key, value in options.items())]
    return "\n".join(lines) + "\n"


def write_manifest(sources: Path, logs: Sequence[FleetLog], count: int, *, start: int = 0, name: str = MANIFEST_NAME) -> Path:
    """``<sources>/manifest/<name>`` (``fleet.toml``) listing logs ``start`` to ``count`` (0-based,
    ``count`` excluded) of ``logs``, replaced atomically."""
    if not 0 <= start <= count <= len(logs):
        raise ValueError(f"cannot list logs {start}-{count}: the fleet has {len(logs)}")
    today = dt.datetime.now(dt.UTC).date()
    header = (f"# The fleet benchmark's synthetic nvidia-smi logs ({start + 1}-{count} of {len(logs)}), written by bench/fleet.py.\n"
              "# NOT measurements. Regenerated on every run of the benchmark.\n")
    text = header + "".join("\n" + manifest_entry(log, today) for log in logs[start:count])
    path = sources / "manifest" / name
    tmp = path.with_name(f".{name}.part")
    tmp.write_text(text, encoding="utf-8")
    tmp.replace(path)
    return path
