"""Electricity Maps API v3: live and recorded clients (latest and 24-hour history).

The token is read from the environment variable named by ``token_env`` (default
``ELECTRICITYMAPS_TOKEN``) at request time and sent only in the ``auth-token`` header, so it
never appears in a URL, the run config, run metadata, logs or the warehouse.
"""

from __future__ import annotations

import datetime as dt
import os
from collections.abc import Iterator
from pathlib import Path

from pipelines.ingest.feeds.http import Feed, FeedError, HttpClient, Payload, get_text, probe
from pipelines.paths import sources_dir

SOURCE = "electricitymaps"
TOKEN_ENV = "ELECTRICITYMAPS_TOKEN"
RECORDED_DIR = "grid/electricitymaps_recorded"
#: The one recorded response that is a real reading (the 2024-12-01 file is a shifted copy).
RECORDED_FILES = ("carbon-intensity-history_US-MIDW-MISO_2024-11-30.json",)
RECORDED_FETCHED_AT = dt.datetime(2024, 12, 1, 5, 44, 26, 608000, tzinfo=dt.UTC)


class ElectricityMapsFeed(Feed):
    """Interface of an Electricity Maps client."""

    zones: list[str] = []
    emission_factor_type: str = "lifecycle"

    def history_payloads(self) -> Iterator[Payload]:
        """The last 24 hours of every configured zone, one response per zone."""
        raise NotImplementedError


class ElectricityMapsApi(ElectricityMapsFeed, HttpClient):
    """Live client for ``/v3/carbon-intensity/latest`` and ``/history``."""

    base_url: str = "https://api.electricitymap.org"
    token_env: str = TOKEN_ENV

    def probe(self) -> str | None:
        """No token, or no TCP connection to the API host (no request sent): why; else None."""
        url = f"{self.base_url.rstrip('/')}/v3/carbon-intensity/history"
        if not os.environ.get(self.token_env, "").strip():
            return f"grid feed {SOURCE}: {url}: no API token: set the environment variable {self.token_env}"
        return probe(SOURCE, url, self.probe_timeout_s)

    def _headers(self, url: str) -> dict[str, str]:
        token = os.environ.get(self.token_env, "").strip()
        if not token:
            raise FeedError(SOURCE, url, f"no API token: set the environment variable {self.token_env}")
        return {"auth-token": token}

    def _get(self, endpoint: str, zone: str) -> Payload:
        url = f"{self.base_url.rstrip('/')}/v3/carbon-intensity/{endpoint}"
        params = {"zone": zone, "emissionFactorType": self.emission_factor_type}
        status, body, shown = get_text(
            self.session(), SOURCE, url, params=params, headers=self._headers(url),
            timeout=(self.connect_timeout_s, self.read_timeout_s),
        )
        return Payload(SOURCE, zone, shown, status, dt.datetime.now(dt.UTC), body)

    def latest(self, zone: str) -> Payload:
        """``GET /v3/carbon-intensity/latest?zone=...``: the current hour."""
        return self._get("latest", zone)

    def history(self, zone: str) -> Payload:
        """``GET /v3/carbon-intensity/history?zone=...``: the last 24 hours."""
        return self._get("history", zone)

    def history_payloads(self) -> Iterator[Payload]:
        """History of each configured zone in turn."""
        for zone in self.zones:
            yield self.history(zone)


class RecordedElectricityMaps(ElectricityMapsFeed):
    """Offline client: replays the recorded real response in sources/grid/electricitymaps_recorded."""

    folder: str = RECORDED_DIR
    zones: list[str] = ["US-MIDW-MISO"]

    def history_payloads(self) -> Iterator[Payload]:
        """The recorded history response(s)."""
        for name in RECORDED_FILES:
            path = Path(sources_dir() / self.folder / name)
            if not path.exists():
                raise FeedError(SOURCE, f"recorded:{self.folder}/{name}", "recorded response missing")
            yield Payload(SOURCE, "US-MIDW-MISO", f"recorded:{self.folder}/{name}", 200, RECORDED_FETCHED_AT, path.read_text(encoding="utf-8"))
