"""Zeus (NSDI'23) GPU power traces -> staging.benchmark_runs (one run per row, no samples).

``summary_power_<gpu>.csv`` has the columns ``dataset,network,batch_size,optimizer,
power_limit,time_per_epoch,average_power``: for one training configuration at one GPU power
cap (W), the time of one epoch (s) and the measured average GPU power over it (W). Each row
becomes one run of one epoch (energy method ``summary``):

- ``energy_j = average_power x time_per_epoch``, ``duration_s = time_per_epoch``;
- ``device_id`` from the manifest option ``device_id`` (required: the file does not name its GPU);
- ``model`` = ``network``; ``workload`` = ``<dataset>/<network> bs<batch_size> <optimizer> @<power_limit>W``;
- ``run_id`` = ``<source_id>:<line>``; ``started_at`` and ``n_samples`` are null.

Empty or unreadable cells are rejected with the file's column name.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import polars as pl

from pipelines.errors import SourceParseError
from pipelines.ingest.cells import finite_number, require_cells
from pipelines.ingest.energy.runs import reported_runs
from pipelines.ingest.options import require_option, run_options
from pipelines.ingest.parsers.common import checked_casts, read_text_csv, require_columns
from pipelines.ingest.staging import Parsed

TEXT = ("dataset", "network", "batch_size", "optimizer")
NUMBERS = ("power_limit", "time_per_epoch", "average_power")


def parse_zeus_power(path: Path, options: Mapping[str, Any]) -> Parsed:
    """Parse a Zeus summary_power_<gpu>.csv into benchmark_runs rows (one per configuration)."""
    run = run_options(path, options)
    device = require_option(path, options, "device_id", "the GPU the trace was measured on (e.g. nvidia-v100)")
    if run.idle_baseline_w is not None:
        raise SourceParseError(path, None, "manifest option idle_baseline_w does not apply to Zeus summaries (mean power is as measured)")
    source_id = options.get("source_id") or path.stem
    frame = read_text_csv(path)
    require_columns(path, frame, [*TEXT, *NUMBERS])
    frame = frame.select("source_row", *[pl.col(name).str.strip_chars() for name in (*TEXT, *NUMBERS)])
    frame, rejects = require_cells(frame, [*TEXT, *NUMBERS])
    frame = frame.with_columns(pl.col("power_limit").alias("power_limit_text"))
    typed, bad = checked_casts(frame, dict.fromkeys(NUMBERS, finite_number))
    rejects += bad
    energy = pl.col("average_power") * pl.col("time_per_epoch")
    workload = pl.format("{}/{} bs{} {} @{}W", "dataset", "network", "batch_size", "optimizer", "power_limit_text")
    out = reported_runs(
        typed,
        run,
        run_id=pl.format("{}:{}", pl.lit(str(source_id)), pl.col("source_row")),
        device_id=pl.lit(device),
        model=pl.col("network"),
        workload=workload,
        started_at=pl.lit(None, dtype=pl.Datetime("us", "UTC")),
        duration_s=pl.col("time_per_epoch"),
        energy_j=energy,
        energy_method="summary",
        log_format="zeus_power",
    )
    return Parsed(frame=out, rejects=sorted(rejects, key=lambda r: (r.source_row or 0, r.column_name or "")))
