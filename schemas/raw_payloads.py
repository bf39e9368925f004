"""raw.carbon_intensity_payloads: every live-feed response kept as received."""

from __future__ import annotations

import pandera.polars as pa
from pandera.engines import polars_engine as pe

from schemas.base import Contract

UTC_TS = pe.DateTime(time_zone="UTC")
PARSE_STATUSES = ["ok", "http_error", "unparseable"]


class CarbonIntensityPayloads(Contract):
    """Grain: one HTTP response of a grid-intensity feed (or one replayed recorded response).

    The body is stored exactly as received. The URL never holds a secret (the Electricity
    Maps token travels in a header). Rows are only ever added: re-fetching the same day adds
    a new payload, and the staging table records which payload first delivered each value.
    """

    #: The warehouse table(s) this model is the contract of (pipelines.warehouse.dictionary finds it so).
    __tables__ = ("raw.carbon_intensity_payloads",)

    payload_id: str = pa.Field(unique=True, description="sha256 (first 32 hex digits) of source, url, fetched_at and body.")
    fetched_at: UTC_TS = pa.Field(description="When the response was received (UTC).")  # type: ignore[valid-type]
    source: str = pa.Field(isin=["uk_carbon_intensity", "electricitymaps"], description="Feed that produced the payload.")
    zone: str = pa.Field(description="Zone the request asked for (GB, GB-R13, US-MIDW-MISO, ...).")
    url: str = pa.Field(description="Request URL with its query string; never contains a secret. 'recorded:<path>' for a replayed file.")
    status: int = pa.Field(description="HTTP status of the final response (after retries).")
    period_from: UTC_TS = pa.Field(nullable=True, description="Start of the UTC span requested (null for latest/history requests).")  # type: ignore[valid-type]
    period_to: UTC_TS = pa.Field(nullable=True, description="End of the UTC span requested, exclusive.")  # type: ignore[valid-type]
    body: str = pa.Field(description="Response body as received (UTF-8 text).")
    parse_status: str = pa.Field(isin=PARSE_STATUSES, description="ok | http_error (status not 200) | unparseable (body is not the expected JSON).")
    error: str = pa.Field(nullable=True, description="Why the payload gave no rows (http_error, unparseable); null when ok.")
    rows_parsed: int = pa.Field(ge=0, description="Rows the payload gave before the upsert.")
    run_id: str = pa.Field(description="Dagster run that received (or first landed) the payload.")
