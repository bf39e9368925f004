"""Writing a manifest entry: TOML rendered by hand (the standard library reads TOML but does not write
it), the whole file read back and compared with the intended entry, then moved into place
atomically, so a manifest is never half-written."""

from __future__ import annotations

import datetime as dt
import math
import os
import tempfile
import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pipelines.errors import EdgeCarbonError, Refused
from pipelines.paths import sources_dir

#: The manifest file that ``register`` and ``scenario new`` append to by default.
LOCAL_MANIFEST = "local.toml"
_LOCAL_HEADER = (
    "# Your own sources, added with `edge-carbon register` and `edge-carbon scenario new`.\n"
    "# Each entry was validated before it was written; edit with care, or re-register.\n"
)
_ESCAPES = {'"': '\\"', "\\": "\\\\", "\b": "\\b", "\t": "\\t", "\n": "\\n", "\f": "\\f", "\r": "\\r"}


def toml_value(value: Any) -> str:
    """A TOML literal: strings escaped, booleans and numbers bare, dates and date-times unquoted."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if not math.isfinite(value):
            raise ValueError(f"{value!r} has no TOML form here")
        return repr(value)
    if isinstance(value, dt.datetime | dt.date):
        return value.isoformat()
    if isinstance(value, str):
        return '"' + "".join(_ESCAPES.get(c, f"\\u{ord(c):04x}" if ord(c) < 0x20 or ord(c) == 0x7F else c) for c in value) + '"'
    raise TypeError(f"no TOML form for {type(value).__name__}")


def toml_entry(entry: Mapping[str, Any]) -> str:
    """One ``[[source]]`` block (with ``[source.options]`` when it has options)."""
    lines = ["[[source]]"]
    lines += [f"{key} = {toml_value(value)}" for key, value in entry.items() if key != "options"]
    if entry.get("options"):
        lines += ["", "[source.options]"]
        lines += [f"{key} = {toml_value(value)}" for key, value in entry["options"].items()]
    return "\n".join(lines) + "\n"


def atomic_write(path: Path, text: str) -> None:
    """Write ``text`` to a temporary file beside ``path``, then move it into place."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        if path.exists():
            os.chmod(tmp, path.stat().st_mode & 0o777)
        else:
            os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _rel(path: Path) -> str:
    try:
        return path.relative_to(sources_dir().parent).as_posix()
    except ValueError:
        return str(path)


def _appended(manifest_file: Path, entry: Mapping[str, Any]) -> str:
    existing = manifest_file.read_text(encoding="utf-8") if manifest_file.exists() else _LOCAL_HEADER
    if existing and not existing.endswith("\n"):
        existing += "\n"
    return existing + "\n" + toml_entry(entry)


def _check_rendered(cmd: str, manifest_file: Path, text: str, entry: Mapping[str, Any]) -> None:
    """The rendered file parses, its last entry is exactly ``entry``, and the loader accepts it."""
    from pipelines.ingest.manifest import _entry

    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise Refused(f"{cmd}: {_rel(manifest_file)} would not be valid TOML ({exc}); fix that file first, nothing was written") from None
    written = data.get("source", [])[-1] if data.get("source") else None
    if written != dict(entry):
        raise Refused(f"{cmd}: {_rel(manifest_file)} would not read back as the new entry; fix that file first, nothing was written")
    try:
        _entry(written, manifest_file, sources_dir())
    except EdgeCarbonError as exc:
        raise Refused(f"{cmd}: the new entry would not load ({exc}); nothing was written") from None
