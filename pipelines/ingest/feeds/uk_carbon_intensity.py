"""UK Carbon Intensity API (NESO, api.carbonintensity.org.uk): live and recorded clients.

No key is needed. Half-hourly national (zone ``GB``) forecast and actual, and regional
forecasts (zone ``GB-R<regionid>``). One request covers at most 14 days, so a longer range is
split into 14-day requests.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterator
from pathlib import Path

from pipelines.ingest.feeds.http import Feed, FeedError, HttpClient, Payload, get_text, probe
from pipelines.paths import sources_dir

SOURCE = "uk_carbon_intensity"
#: The API answers at most 14 days per request.
MAX_DAYS_PER_REQUEST = 14
RECORDED_DIR = "grid/uk_api_recorded"
#: Capture time of the recorded responses (sources/grid/uk_api_recorded/SOURCE.md).
RECORDED_FETCHED_AT = dt.datetime(2023, 3, 15, 12, 1, tzinfo=dt.UTC)


def api_time(instant: dt.datetime) -> str:
    """The API's time format: ``2023-03-14T12:00Z`` (UTC)."""
    return instant.astimezone(dt.UTC).strftime("%Y-%m-%dT%H:%MZ")


def day_chunks(start: dt.date, end: dt.date, max_days: int) -> list[tuple[dt.datetime, dt.datetime]]:
    """UTC [from, to) spans covering the days ``start`` .. ``end`` (exclusive), each <= max_days."""
    if end <= start:
        return []
    spans = []
    day = start
    while day < end:
        stop = min(day + dt.timedelta(days=max_days), end)
        spans.append((dt.datetime.combine(day, dt.time(), dt.UTC), dt.datetime.combine(stop, dt.time(), dt.UTC)))
        day = stop
    return spans


def zone_of_region(region_id: int) -> str:
    """Zone id of a NESO region: ``GB-R13`` for region 13 (London)."""
    return f"GB-R{region_id}"


class UkCarbonIntensityFeed(Feed):
    """Interface of a UK Carbon Intensity client: payloads for a UTC day range."""

    def payloads(self, start: dt.date, end: dt.date) -> Iterator[Payload]:
        """Every response for the days ``start`` .. ``end`` (exclusive), as received."""
        raise NotImplementedError


class UkCarbonIntensityApi(UkCarbonIntensityFeed, HttpClient):
    """Live client. ``base_url`` is configurable so tests point it at a local server."""

    base_url: str = "https://api.carbonintensity.org.uk"
    national: bool = True
    regions: list[int] = []
    max_days_per_request: int = MAX_DAYS_PER_REQUEST

    def probe(self) -> str | None:
        """A TCP connect to the API host (no request sent): None when it answers."""
        return probe(SOURCE, self.base_url, self.probe_timeout_s)

    def requests_for(self, start: dt.date, end: dt.date) -> list[tuple[str, str, dt.datetime, dt.datetime]]:
        """(zone, url, from, to) of every request the range needs, national first."""
        if not 1 <= self.max_days_per_request <= MAX_DAYS_PER_REQUEST:
            raise ValueError(f"max_days_per_request must be 1..{MAX_DAYS_PER_REQUEST} (the API's limit)")
        base = self.base_url.rstrip("/")
        out = []
        for begin, stop in day_chunks(start, end, self.max_days_per_request):
            span = f"{api_time(begin)}/{api_time(stop)}"
            if self.national:
                out.append(("GB", f"{base}/intensity/{span}", begin, stop))
            for region in self.regions:
                out.append((zone_of_region(region), f"{base}/regional/intensity/{span}/regionid/{int(region)}", begin, stop))
        return out

    def payloads(self, start: dt.date, end: dt.date) -> Iterator[Payload]:
        """Fetch each request in turn; a transport failure after retries raises FeedError."""
        timeout = (self.connect_timeout_s, self.read_timeout_s)
        for zone, url, begin, stop in self.requests_for(start, end):
            status, body, shown = get_text(self.session(), SOURCE, url, timeout=timeout)
            yield Payload(SOURCE, zone, shown, status, dt.datetime.now(dt.UTC), body, begin, stop)


class RecordedUkCarbonIntensity(UkCarbonIntensityFeed):
    """Offline client: replays the recorded real responses shipped in sources/grid/uk_api_recorded."""

    folder: str = RECORDED_DIR

    def payloads(self, start: dt.date, end: dt.date) -> Iterator[Payload]:
        """Every recorded response (whatever the range: they are the shipped snapshot)."""
        folder = sources_dir() / self.folder
        files = sorted(Path(folder).glob("*.json"))
        if not files:
            raise FeedError(SOURCE, f"recorded:{self.folder}", "no recorded responses found")
        for path in files:
            yield Payload(SOURCE, "GB", f"recorded:{self.folder}/{path.name}", 200, RECORDED_FETCHED_AT, path.read_text(encoding="utf-8"))
