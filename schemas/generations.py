"""meta.generations: one row per publish of the warehouse, the generation counter."""

from __future__ import annotations

import pandera.polars as pa
from pandera.engines import polars_engine as pe


class Generations(pa.DataFrameModel):
    """Every publish of this warehouse file, numbered: the generation a run started from and
    the one it published. A run publishes only over the generation it copied, so the
    generations form one line, each the previous plus one. Grain: one publish.
    """

    #: The warehouse table(s) this model is the contract of (pipelines.warehouse.dictionary finds it so).
    __tables__ = ("meta.generations",)

    generation: int = pa.Field(ge=1, unique=True, description="The published generation: the base generation plus one.")
    base_generation: int = pa.Field(ge=0, description="The generation the run copied when it started (0: an empty warehouse).")
    run_id: str = pa.Field(description="Dagster run that published it.")
    published_at: pe.DateTime(time_zone="UTC") = pa.Field(description="When the run published it (UTC).")  # type: ignore[valid-type]
