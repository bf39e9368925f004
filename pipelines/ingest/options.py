"""Readers of a source's manifest options (``[source.options]``), shared by every parser.

A missing or malformed option raises :class:`pipelines.errors.OptionError`, which is both a
:class:`~pipelines.errors.ManifestError` and a :class:`~pipelines.errors.SourceParseError`.
"""

from __future__ import annotations

import datetime as dt
import math
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pipelines.errors import ManifestError, OptionError, SourceParseError


@dataclass(frozen=True)
class RunOptions:
    """What a power log's manifest options say about its run."""

    run_id: str
    device_id: str | None = None
    model: str | None = None
    workload: str | None = None
    series_id: str | None = None
    idle_baseline_w: float | None = None
    is_synthetic: bool = False


def _text_option(path: Path, options: Mapping[str, Any], key: str) -> str | None:
    value = options.get(key)
    if value is None:
        return None
    if not isinstance(value, str) or not value.strip():
        raise SourceParseError(path, None, f"manifest option {key} must be a non-empty string, got {value!r}")
    return value.strip()


def run_options(path: Path, options: Mapping[str, Any]) -> RunOptions:
    """Read and type-check the run options; ``run_id`` defaults to the file's stem."""
    baseline = options.get("idle_baseline_w")
    if baseline is not None:
        if isinstance(baseline, bool) or not isinstance(baseline, int | float) or not math.isfinite(baseline) or baseline < 0:
            raise SourceParseError(path, None, f"manifest option idle_baseline_w must be a number >= 0 (W), got {baseline!r}")
        baseline = float(baseline)
    synthetic = options.get("is_synthetic", False)
    if not isinstance(synthetic, bool):
        raise SourceParseError(path, None, f"manifest option is_synthetic must be true or false, got {synthetic!r}")
    return RunOptions(
        run_id=_text_option(path, options, "run_id") or path.stem,
        device_id=_text_option(path, options, "device_id"),
        model=_text_option(path, options, "model"),
        workload=_text_option(path, options, "workload"),
        series_id=_text_option(path, options, "series_id"),
        idle_baseline_w=baseline,
        is_synthetic=synthetic,
    )


def require_option(path: Path, options: Mapping[str, Any], key: str, meaning: str) -> str:
    """A required text option, or :class:`SourceParseError` saying what it is for."""
    value = _text_option(path, options, key)
    if value is None:
        raise SourceParseError(path, None, f"manifest option {key} is required for this format: {meaning}")
    return value


def timezone_option(path: Path, options: Mapping[str, Any], *, required: bool) -> str | None:
    """The IANA time zone named by option ``timezone`` (checked), or None if absent and optional."""
    from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

    zone = _text_option(path, options, "timezone")
    if zone is None:
        if required:
            raise SourceParseError(
                path, None, "manifest option timezone is required: the log's timestamps are local time with no zone (e.g. 'Europe/London')"
            )
        return None
    try:
        ZoneInfo(zone)
    except (ZoneInfoNotFoundError, ValueError) as exc:
        raise SourceParseError(path, None, f"manifest option timezone {zone!r} is not an IANA time zone") from exc
    return zone




def instant_option(path: Path | str, options: Mapping[str, Any], key: str, *, naive: str = "reject") -> dt.datetime:
    """A required UTC instant: a TOML date-time, a date (00:00 UTC of that day) or ISO-8601 text.

    A date-time without an offset is read as UTC with ``naive="utc"`` (a capture's start, logged
    in UTC), and refused with ``naive="reject"`` (a download time must say its zone).
    """
    raw = options.get(key)
    value = raw
    if isinstance(value, str):
        try:
            value = dt.datetime.fromisoformat(value.strip())
        except ValueError:
            value = None
    if isinstance(value, dt.date) and not isinstance(value, dt.datetime):
        value = dt.datetime(value.year, value.month, value.day, tzinfo=dt.UTC)
    if isinstance(value, dt.datetime) and value.tzinfo is None and naive == "utc":
        value = value.replace(tzinfo=dt.UTC)
    if not isinstance(value, dt.datetime) or value.tzinfo is None:
        raise OptionError(
            path,
            f"manifest option {key} is required: options.{key} as a date or a UTC date-time "
            f"(e.g. {key} = 2026-11-29 or {key} = 2023-03-15T12:01:00Z); got {raw!r}",
        )
    return value.astimezone(dt.UTC)


def option_text(options: Mapping[str, Any], key: str, path: Path | str, default: str | None = None) -> str:
    """A text option from the manifest; ``default`` when absent, else a ManifestError naming the file."""
    value = options.get(key, default)
    if not isinstance(value, str) or not value:
        raise ManifestError(path, f"the manifest entry of this file needs options.{key} (text); got {options.get(key)!r}")
    return value


def optional_text(options: Mapping[str, Any], key: str, path: Path | str) -> str | None:
    """A text option that may be absent (None); present but not text is a ManifestError."""
    if options.get(key) is None:
        return None
    return option_text(options, key, path)
