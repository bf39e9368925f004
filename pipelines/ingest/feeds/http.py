"""One HTTP session per feed client: urllib3 retries, timeouts, a descriptive User-Agent.

Retries cover connection errors, read timeouts, 429 (honouring ``Retry-After``) and 5xx, with
exponential backoff. When they run out the caller gets a :class:`FeedError` that names the
feed and the URL (never a secret) and says what went wrong.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import socket
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

import requests
from pydantic import BaseModel, PrivateAttr
from requests.adapters import HTTPAdapter
from urllib3.util.retry import Retry

from pipelines.errors import EdgeCarbonError

USER_AGENT = "edge-carbon/0.1 (grid-intensity feed client; +https://github.com/edge-carbon/edge-carbon)"
#: Statuses retried: rate limiting (with its Retry-After) and server errors.
RETRY_STATUSES = (429, 500, 502, 503, 504)


class FeedError(EdgeCarbonError):
    """A feed could not deliver a usable payload (after retries, where they apply)."""

    def __init__(self, feed: str, url: str, message: str) -> None:
        self.feed, self.url = feed, url
        super().__init__(f"grid feed {feed}: {url}: {message}")


@dataclass(frozen=True)
class Payload:
    """One response as received: the body is kept byte for byte (decoded as UTF-8 text)."""

    source: str
    zone: str
    url: str
    status: int
    fetched_at: dt.datetime
    body: str
    #: the UTC day span this request asked for (None for a "latest" or "history" request)
    period_from: dt.datetime | None = None
    period_to: dt.datetime | None = None

    @property
    def payload_id(self) -> str:
        """Stable id of this payload: sha256 of source, url, fetch time and body."""
        digest = hashlib.sha256()
        for part in (self.source, self.url, self.fetched_at.isoformat(), self.body):
            digest.update(part.encode("utf-8"))
            digest.update(b"\0")
        return digest.hexdigest()[:32]

    def as_row(self) -> dict[str, Any]:
        """The raw-table row of this payload."""
        return {
            "payload_id": self.payload_id,
            "fetched_at": self.fetched_at,
            "source": self.source,
            "zone": self.zone,
            "url": self.url,
            "status": self.status,
            "period_from": self.period_from,
            "period_to": self.period_to,
            "body": self.body,
        }


def make_session(retries: int, backoff_factor: float, backoff_max_s: float = 60.0) -> requests.Session:
    """A session that retries connection errors, timeouts, 429 and 5xx ``retries`` times."""
    retry = Retry(
        total=retries,
        connect=retries,
        read=retries,
        status=retries,
        other=0,
        backoff_factor=backoff_factor,
        backoff_max=backoff_max_s,
        status_forcelist=RETRY_STATUSES,
        allowed_methods=frozenset({"GET"}),
        respect_retry_after_header=True,
        raise_on_status=False,
    )
    session = requests.Session()
    adapter = HTTPAdapter(max_retries=retry)
    session.mount("http://", adapter)
    session.mount("https://", adapter)
    session.headers["User-Agent"] = USER_AGENT
    session.headers["Accept"] = "application/json"
    return session


class Feed(BaseModel):
    """Base of every feed client interface."""

    def probe(self) -> str | None:
        """None when the feed can be asked now; otherwise why not (naming the feed and URL)."""
        return None


class HttpClient(BaseModel):
    """Timeouts, retries and the one session of a live feed client."""

    connect_timeout_s: float = 5.0
    read_timeout_s: float = 30.0
    retries: int = 4
    backoff_factor: float = 2.0
    backoff_max_s: float = 60.0
    #: the reachability probe's one TCP connect (no retries)
    probe_timeout_s: float = 3.0

    _session: requests.Session | None = PrivateAttr(default=None)

    def session(self) -> requests.Session:
        """The client's one session (created on first use)."""
        if self._session is None:
            self._session = make_session(self.retries, self.backoff_factor, self.backoff_max_s)
        return self._session


def get_text(
    session: requests.Session,
    feed: str,
    url: str,
    *,
    params: dict[str, str] | None = None,
    headers: dict[str, str] | None = None,
    timeout: tuple[float, float],
) -> tuple[int, str, str]:
    """GET ``url``; return (status, body text, URL as sent without secrets).

    Secrets travel only in ``headers``, so the URL returned (and named in errors) holds none.
    A transport failure after every retry raises FeedError with the cause; an HTTP error
    status is returned, not raised, so its body can be kept.
    """
    shown = requests.Request("GET", url, params=params).prepare().url or url
    try:
        response = session.get(url, params=params, headers=headers, timeout=timeout)
    except requests.exceptions.RetryError as exc:
        raise FeedError(feed, shown, f"gave up after retries: {_cause(exc)}") from None
    except requests.exceptions.Timeout as exc:
        raise FeedError(feed, shown, f"timed out (connect/read timeouts {timeout[0]} s / {timeout[1]} s) after retries: {_cause(exc)}") from None
    except requests.exceptions.ConnectionError as exc:
        raise FeedError(feed, shown, f"could not connect after retries (no network?): {_cause(exc)}") from None
    except requests.exceptions.RequestException as exc:
        raise FeedError(feed, shown, f"request failed: {_cause(exc)}") from None
    response.encoding = response.encoding or "utf-8"
    return response.status_code, response.text, shown


def _cause(exc: BaseException) -> str:
    """The innermost reason of a requests/urllib3 error, one line."""
    reason: BaseException = exc
    for _ in range(5):
        inner = getattr(reason, "reason", None) or (reason.args[0] if reason.args and isinstance(reason.args[0], BaseException) else None)
        if not isinstance(inner, BaseException):
            break
        reason = inner
    text = str(reason).splitlines()[0] if str(reason) else type(reason).__name__
    return f"{type(reason).__name__}: {text}"


def probe(feed: str, url: str, timeout_s: float) -> str | None:
    """Whether ``url``'s host accepts a TCP connection within ``timeout_s`` (one attempt, no
    retries, nothing sent): None when it does, otherwise why not, naming the feed and URL.

    A cheap look before a scheduled run, so an offline machine skips the run instead of
    failing it after every retry.
    """
    parts = urlsplit(url)
    host = parts.hostname
    if not host:
        return f"grid feed {feed}: {url}: not an http(s) URL"
    try:
        port = parts.port or (443 if parts.scheme == "https" else 80)
    except ValueError as exc:
        return f"grid feed {feed}: {url}: bad port: {exc}"
    try:
        with socket.create_connection((host, port), timeout=timeout_s):
            return None
    except TimeoutError:
        return f"grid feed {feed}: {url}: unreachable (no TCP connection to {host}:{port} within {timeout_s} s)"
    except OSError as exc:  # DNS failure, connection refused, no route to host
        reason = exc.strerror or str(exc) or type(exc).__name__
        hint = "; no network or no DNS?" if isinstance(exc, socket.gaierror) else ""
        return f"grid feed {feed}: {url}: unreachable ({type(exc).__name__} connecting to {host}:{port}: {reason}{hint})"
