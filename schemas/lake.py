"""meta.lake_files and meta.power_log_runs: the Parquet lake's catalog, and each ingested log's runs."""

from __future__ import annotations

import pandera.polars as pa
from pandera.engines import polars_engine as pe

from schemas.benchmark_runs import BenchmarkRuns


class LakeFiles(pa.DataFrameModel):
    """The catalog of the Parquet lake (warehouse/lake/): which file holds which partition of a
    lake table, and since when it is superseded. Grain: one Parquet file written by one run.

    A lake table's view (staging.power_samples) reads the files whose ``superseded_at`` is null,
    named one by one; a superseded file is kept for the lake's retention so that readers of an
    older snapshot keep their files.
    """

    #: The warehouse table(s) this model is the contract of (pipelines.warehouse.dictionary finds it so).
    __tables__ = ("meta.lake_files",)

    table_name: str = pa.Field(description="Warehouse table the file belongs to (e.g. staging.power_samples).")
    partition_column: str = pa.Field(description="Hive partition column of the file's folder (e.g. source_id).")
    partition_key: str = pa.Field(description="Partition the file holds: the value of partition_column (e.g. a power log's source id).")
    file: str = pa.Field(description="Path of the Parquet file, relative to the lake folder beside the DuckDB file.")
    row_count: int = pa.Field(ge=0, description="Rows in the file.")
    size_bytes: int = pa.Field(ge=0, description="Size of the file (bytes).")
    run_id: str = pa.Field(description="Dagster run that wrote the file.")
    written_at: pe.DateTime(time_zone="UTC") = pa.Field(description="When the file was committed to the catalog (UTC).")  # type: ignore[valid-type]
    superseded_at: pe.DateTime(time_zone="UTC") = pa.Field(  # type: ignore[valid-type]
        nullable=True, description="When a later file of the same partition replaced it, or the log left the manifest (UTC); null while current."
    )


class PowerLogRuns(BenchmarkRuns):
    """The integrated run of each ingested power log, as its partition's ingest computed it
    (before staging.benchmark_runs validates every run together). Grain: one sampled log's run;
    a partition's rows are replaced when the log is ingested again.
    """

    #: The warehouse table(s) this model is the contract of (pipelines.warehouse.dictionary finds it so).
    __tables__ = ("meta.power_log_runs",)
