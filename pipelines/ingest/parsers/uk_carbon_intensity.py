"""NESO Carbon Intensity API (api.carbonintensity.org.uk) JSON: national half-hourly forecast and actual.

The payload is ``{"data": [{"from", "to", "intensity": {"forecast", "actual", "index"}}]}``
with times like ``2023-03-14T12:00Z``. Each record gives up to two rows: the forecast and,
once NESO has published it, the actual (estimated outturn). A null ``actual`` is normal for a
period that has not happened yet, so it yields no row and no reject. An ``actual`` of exactly
0 is a known API glitch (the forecast is far higher and the index says "very low") and is
rejected with that reason.

:func:`parse_uk_ci_payload` works on the decoded object, so a live API client can reuse it;
:func:`parse_uk_ci_json` reads a recorded response file.
"""

from __future__ import annotations

import datetime as dt
import json
import math
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import polars as pl

from pipelines.errors import SourceParseError
from pipelines.ingest.options import instant_option, option_text, optional_text
from pipelines.ingest.parsers.grid import empty_rows
from pipelines.ingest.quarantine import Reject
from pipelines.ingest.staging import Parsed
from schemas.grid_intensity import ROW_SCHEMA

#: Zone of the national series. Great Britain: the API does not cover Northern Ireland.
GB_ZONE = {"zone": "GB", "zone_name": "Great Britain", "country_iso3": "GBR"}


class BadCell(Exception):
    """One unreadable cell of a JSON record: becomes a Reject with check 'parse'."""

    def __init__(self, column: str, value: Any, reason: str) -> None:
        super().__init__(reason)
        self.column, self.value, self.reason = column, value, reason


def load_json(path: Path) -> Any:
    """Decode a JSON file; anything that is not JSON raises SourceParseError naming the file."""
    try:
        return json.loads(path.read_bytes())
    except (ValueError, RecursionError) as exc:  # JSONDecodeError and UnicodeDecodeError are ValueErrors
        line = getattr(exc, "lineno", None)
        raise SourceParseError(path, line, f"not valid JSON: {str(exc).splitlines()[0] if str(exc) else type(exc).__name__}") from exc


def show(value: Any, limit: int = 200) -> str | None:
    """A JSON value as short text for the quarantine's ``value`` column."""
    if value is None:
        return None
    try:
        text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError, RecursionError):
        text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def json_number(record: Mapping[str, Any], key: str, column: str) -> float | None:
    """A finite number (int or float, not bool) or None; anything else raises BadCell."""
    value = record.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise BadCell(column, show(value), f"{column}: {show(value)!s} is not a number")
    try:
        number = float(value)
    except OverflowError:
        number = math.inf
    if not math.isfinite(number):
        raise BadCell(column, show(value), f"{column}: {show(value)!s} is not a finite number")
    return number


def json_instant(record: Mapping[str, Any], key: str, column: str) -> dt.datetime:
    """An ISO-8601 time with an offset (``2023-03-14T12:00Z``), converted to UTC; else BadCell."""
    value = record.get(key)
    if value is None:
        raise BadCell(column, None, f"{column}: the time is missing")
    if not isinstance(value, str):
        raise BadCell(column, show(value), f"{column}: {show(value)!s} is not an ISO-8601 time")
    try:
        parsed = dt.datetime.fromisoformat(value)
    except ValueError:
        raise BadCell(column, show(value), f"{column}: {value!r} is not an ISO-8601 time") from None
    if parsed.tzinfo is None:
        raise BadCell(column, show(value), f"{column}: {value!r} has no UTC offset, so the instant is ambiguous")
    try:
        return parsed.astimezone(dt.UTC)
    except (OverflowError, ValueError):
        raise BadCell(column, show(value), f"{column}: {value!r} is out of range") from None


def rows_frame(rows: list[dict[str, Any]]) -> pl.DataFrame:
    """Row dicts (keys of ROW_SCHEMA) as a typed frame."""
    return pl.DataFrame(rows, schema=ROW_SCHEMA, orient="row") if rows else empty_rows()


def zero_actual_reason(forecast: Any, index: Any) -> str:
    """Why an actual of 0 gCO2/kWh is rejected (see sources/grid/neso/SOURCE.md)."""
    return (
        f"0 gCO2/kWh actual is an API glitch (forecast is {forecast}, index {index!r}); "
        "treated as missing, the forecast row is kept"
    )


def gb_zone(options: Mapping[str, Any], label: str | Path) -> dict[str, str | None]:
    """zone, zone_name and country_iso3: Great Britain unless the options name a region."""
    return {
        "zone": option_text(options, "zone", label, GB_ZONE["zone"]),
        "zone_name": option_text(options, "zone_name", label, GB_ZONE["zone_name"]),
        "country_iso3": optional_text(options, "country_iso3", label) or GB_ZONE["country_iso3"],
    }


def parse_uk_ci_payload(obj: Any, label: str, options: Mapping[str, Any]) -> Parsed:
    """Rows from a decoded Carbon Intensity API payload.

    ``label`` names the payload in errors (a file path or a URL). ``options["fetched_at"]`` is
    the capture time; ``zone``, ``zone_name`` and ``country_iso3`` default to Great Britain.
    """
    fetched_at = instant_option(label, options, "fetched_at")
    zone = gb_zone(options, label)
    if not isinstance(obj, dict) or not isinstance(obj.get("data"), list):
        found = type(obj.get("data")).__name__ if isinstance(obj, dict) else type(obj).__name__
        raise SourceParseError(label, None, f'expected a JSON object with a "data" list (Carbon Intensity API); found {found}')
    rows: list[dict[str, Any]] = []
    rejects: list[Reject] = []
    for number, record in enumerate(obj["data"], start=1):
        if not isinstance(record, dict):
            rejects.append(Reject(number, None, "parse", show(record), f"record {number} is not a JSON object"))
            continue
        try:
            start = json_instant(record, "from", "from")
            end = json_instant(record, "to", "to")
            intensity = record.get("intensity")
            if not isinstance(intensity, dict):
                raise BadCell("intensity", show(intensity), "intensity: expected an object with forecast and actual")
            nan = [key for key in ("forecast", "actual") if isinstance(intensity.get(key), float) and math.isnan(intensity[key])]
            # NaN is a missing value of that cell only, as null is: the other signal's row stays.
            cells = {key: None for key in nan} | {k: v for k, v in intensity.items() if k not in nan}
            forecast = json_number(cells, "forecast", "intensity.forecast")
            actual = json_number(cells, "actual", "intensity.actual")
        except BadCell as bad:
            rejects.append(Reject(number, bad.column, "parse", bad.value, bad.reason))
            continue
        base = {**zone, "period_start": start, "period_end": end, "resolution": "PT30M", "emission_scope": "direct", "is_estimated": None, "fetched_at": fetched_at, "source_row": number}
        for key in nan:
            rejects.append(Reject(number, f"intensity.{key}", "missing_value", "NaN", f"intensity.{key} is NaN (no value): the half-hour's other row is kept"))
        if forecast is None and "forecast" not in nan:
            rejects.append(Reject(number, "intensity.forecast", "missing_value", None, "intensity.forecast is null: the API gave no forecast for this half-hour"))
        else:
            rows.append({**base, "signal": "forecast", "gco2e_per_kwh": forecast})
        if actual == 0:
            rejects.append(Reject(number, "intensity.actual", "zero_actual", show(intensity.get("actual")), zero_actual_reason(show(intensity.get("forecast")), intensity.get("index"))))
        elif actual is not None:
            rows.append({**base, "signal": "actual", "gco2e_per_kwh": actual})
    return Parsed(frame=rows_frame(rows), rejects=rejects)


def parse_uk_ci_json(path: Path, options: Mapping[str, Any]) -> Parsed:
    """A recorded Carbon Intensity API response (kind uk_ci_json); see :func:`parse_uk_ci_payload`."""
    return parse_uk_ci_payload(load_json(path), str(path), options)
