"""core.network_methods, core.frame_network_methods, core.patterns and core.claim: the model's methods and the
claim under audit as rows (schemas/vocabulary.py)."""

from __future__ import annotations

import pandera.polars as pa
import polars as pl

from schemas.vocabulary import ACCOUNTING_FRAMES, NETWORK_METHODS, PATTERNS


class NetworkMethods(pa.DataFrameModel):
    """core.network_methods: how communication's network energy is counted. Grain: one method."""

    network_method: str = pa.Field(unique=True, isin=list(NETWORK_METHODS), description="Method name.")
    description: str = pa.Field(description="What the method charges (sql/model/macros.sql network_kwh).")

    class Config:
        strict = True


class FrameNetworkMethods(pa.DataFrameModel):
    """core.frame_network_methods: the network methods each accounting frame admits. Grain: frame x method."""

    frame_code: int = pa.Field(ge=0, description="The frame's code in a scenario file (accounting_frame).")
    accounting_frame: str = pa.Field(isin=list(ACCOUNTING_FRAMES), description="Accounting frame.")
    network_method: str = pa.Field(isin=list(NETWORK_METHODS), description="A method the frame admits.")
    is_frame_headline: bool = pa.Field(description="The frame's headline method: the one every mart but marts.verdict and marts.uncertainty uses.")
    resizes_fleet: bool = pa.Field(description="Whether the frame resizes a fleet over its link to one whose links carry its traffic (the paper's frame keeps the paper's fleet).")

    class Config:
        strict = True
        unique = ["accounting_frame", "network_method"]


class Patterns(pa.DataFrameModel):
    """core.patterns: the communication patterns and the ends of each byte they move. Grain: one pattern."""

    pattern: str = pa.Field(unique=True, isin=list(PATTERNS), description="Communication pattern (sql/model/macros.sql comm_bytes).")
    home_ends: int = pa.Field(ge=0, le=2, description="Home access lines and routers each byte passes: 2 between devices, 1 to a server.")
    server_ends: int = pa.Field(ge=0, le=1, description="Data-centre ends each byte passes (a parameter server or controller).")
    resizable: bool = pa.Field(description="Whether the traffic each device sends falls as the fleet grows at a fixed global batch, so a larger fleet can carry it.")

    class Config:
        strict = True


class Claim(pa.DataFrameModel):
    """core.claim: the claim under audit, edge training emits claim_low to claim_high times less carbon (R). Grain: one row."""

    claim_low: float = pa.Field(gt=0, description="The claim's low end of R (the paper's 4x; schemas/vocabulary.py CLAIM_LOW).")
    claim_high: float = pa.Field(gt=0, description="The claim's high end of R (the paper's 8x; schemas/vocabulary.py CLAIM_HIGH).")

    class Config:
        strict = True

    @pa.dataframe_check(description="one row, low end below the high end")
    @classmethod
    def one_ordered_row(cls, data: pa.PolarsData) -> pl.LazyFrame:
        return data.lazyframe.select((pl.col("claim_low") < pl.col("claim_high")) & (pl.len() == 1))
