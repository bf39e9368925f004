"""staging.paper_claims: the published numbers this project audits, typed in from the paper."""

from __future__ import annotations

import pandera.polars as pa

from schemas.base import Provenance
from schemas.statuses import STATUS_TEXT, STATUSES


class PaperClaims(Provenance):
    """Grain: one published claim of Xue et al. (HotCarbon 2025) that the pipeline recomputes."""

    #: The warehouse table(s) this model is the contract of (pipelines.warehouse.dictionary finds it so).
    __tables__ = ("staging.paper_claims",)

    claim_id: str = pa.Field(unique=True, str_matches=r"^[A-Z0-9]+_[a-z0-9_]+$", description="Stable id, e.g. T1_phone_energy.")
    claim: str = pa.Field(description="The claim in words.")
    paper_value: float = pa.Field(nullable=True, description="The published number, where it is a single number.")
    paper_value_text: str = pa.Field(description="The published value as stated (ranges, counts, 'curve').")
    unit: str = pa.Field(description="Unit of paper_value.")
    tolerance: float = pa.Field(nullable=True, ge=0, description="Relative error within which a recomputed value counts as reproduced.")
    location: str = pa.Field(description="Where in the paper (table, figure, section).")
    status: str = pa.Field(isin=STATUSES, description="How the number was read: " + STATUS_TEXT + " (paper: at the paper's own text; secondary: through the document the citation names).")
    citation: str = pa.Field(str_length={"min_value": 1}, description="Where the number was read.")


class ModelConfigs(Provenance):
    """Grain: one model architecture (the OPT family sizes used by the scaling figure)."""

    #: The warehouse table(s) this model is the contract of (pipelines.warehouse.dictionary finds it so).
    __tables__ = ("staging.model_configs",)

    model_id: str = pa.Field(unique=True, description="e.g. OPT-1.3B.")
    params: float = pa.Field(gt=0, description="Parameter count.")
    n_layers: int = pa.Field(gt=0, description="Transformer layers.")
    hidden_size: int = pa.Field(gt=0, description="Hidden (model) dimension.")
    citation: str = pa.Field(description="Where the configuration is published.")
    citation_url: str = pa.Field(str_startswith="http", description="Link.")
