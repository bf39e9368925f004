"""CodeCarbon ``emissions.csv`` -> staging.benchmark_runs (one run per row, no samples).

CodeCarbon 2.x writes 31 columns; v3 adds ``experiment_id``, ``water_consumed``,
``cpu/gpu/ram_utilization_percent``, ``ram_used_gb`` and ``wue`` (38). Both are read by name;
the columns used are ``run_id``, ``duration`` (s), ``energy_consumed`` (kWh), ``project_name``,
``cpu_model`` and ``timestamp``:

- ``energy_j = energy_consumed x 3.6e6`` (energy method ``reported``), ``duration_s =
  duration``, ``mean_power_w = energy_j / duration_s``;
- ``run_id`` is the file's run id, or ``<source_id>:<line>`` where the cell is empty;
- ``device_id`` is the manifest option ``device_id`` if given, else a slug of ``cpu_model``
  (``Apple M1`` -> ``apple-m1``); ``workload`` is option ``workload``, else ``project_name``;
- ``started_at`` = ``timestamp - duration``, only if option ``timezone`` names the zone of
  the (zone-less, local) ``timestamp``; otherwise null.

CodeCarbon appends a cumulative snapshot of a run at each save, so one ``run_id`` can appear
on several lines with growing duration and energy. The line with the longest duration is the
run; the earlier snapshots are rejected (check ``superseded_snapshot``) with the line that
supersedes them. Empty or unreadable numbers are rejected with the file's column name.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import polars as pl

from pipelines.errors import SourceParseError
from pipelines.ingest.cells import drop_where, finite_number, require_cells
from pipelines.ingest.energy.runs import reported_runs
from pipelines.ingest.options import run_options, timezone_option
from pipelines.ingest.parsers.common import checked_casts, read_text_csv, require_columns
from pipelines.ingest.quarantine import Reject
from pipelines.ingest.staging import Parsed

#: Columns added by CodeCarbon v3 (38 columns) over v2 (31 columns).
V3_COLUMNS = ("experiment_id", "water_consumed", "cpu_utilization_percent", "gpu_utilization_percent", "ram_utilization_percent", "ram_used_gb", "wue")
REQUIRED = ("timestamp", "project_name", "run_id", "duration", "energy_consumed", "cpu_model")
KWH_TO_J = 3.6e6
TIME_FORMAT = "%Y-%m-%dT%H:%M:%S%.f"


def header_version(columns: list[str]) -> int:
    """2 for the 31-column header, 3 for the 38-column one (has the v3 columns)."""
    return 3 if all(name in columns for name in V3_COLUMNS) else 2


def slug(expr: pl.Expr) -> pl.Expr:
    """Lower-case, runs of other characters -> '-': ``Intel(R) Core(TM) i7`` -> ``intel-r-core-tm-i7``."""
    return expr.str.to_lowercase().str.replace_all(r"[^a-z0-9]+", "-").str.strip_chars("-")


def _supersede(frame: pl.DataFrame) -> tuple[pl.DataFrame, list[Reject]]:
    """Keep the longest-duration line of each run_id; reject the earlier snapshots."""
    named = pl.col("run_id").is_not_null()
    keeper = (
        frame.filter(named)
        .sort("duration", "source_row")
        .group_by("run_id", maintain_order=True)
        .agg(pl.col("source_row").last().alias("kept_row"))
    )
    frame = frame.join(keeper, on="run_id", how="left", maintain_order="left")
    superseded = named & (pl.col("source_row") != pl.col("kept_row"))
    return drop_where(
        frame,
        superseded,
        column="run_id",
        check="superseded_snapshot",
        value="run_id",
        reason=(
            "run_id: {run_id} appears again on line {kept_row} with a longer duration; CodeCarbon appends "
            "cumulative snapshots of a run, so only the last one is the run"
        ),
    )


def parse_codecarbon(path: Path, options: Mapping[str, Any]) -> Parsed:
    """Parse a CodeCarbon emissions.csv into benchmark_runs rows (one per run)."""
    run = run_options(path, options)
    if run.idle_baseline_w is not None:
        raise SourceParseError(path, None, "manifest option idle_baseline_w does not apply to CodeCarbon files (energy is as reported)")
    zone = timezone_option(path, options, required=False)
    source_id = options.get("source_id") or path.stem
    frame = read_text_csv(path)
    required = [name for name in REQUIRED if not (name == "cpu_model" and run.device_id)]
    require_columns(path, frame, required)
    keep = ["source_row", *required]
    frame = frame.select(keep).with_columns(pl.col(name).str.strip_chars() for name in required)
    frame = frame.with_columns(pl.when(pl.col("run_id") != "").then(pl.col("run_id")).alias("run_id"))
    needed = ["duration", "energy_consumed"] + ([] if run.workload else ["project_name"]) + ([] if run.device_id else ["cpu_model"])
    frame, rejects = require_cells(frame, needed + (["timestamp"] if zone else []))
    casts: dict[str, Any] = {"duration": finite_number, "energy_consumed": finite_number}
    typed, bad = checked_casts(frame, casts)
    rejects += bad
    if zone:
        local = pl.col("timestamp").str.to_datetime(TIME_FORMAT, time_unit="us", strict=False)
        typed = typed.with_columns(local.dt.replace_time_zone(zone, ambiguous="earliest", non_existent="null").alias("written_at"))
        typed, bad = drop_where(
            typed,
            pl.col("written_at").is_null(),
            column="timestamp",
            check="parse",
            value="timestamp",
            reason=f"timestamp: cannot read {{timestamp}} as a local time YYYY-MM-DDTHH:MM:SS in {zone}",
        )
        rejects += bad
        started = (pl.col("written_at") - pl.duration(microseconds=(pl.col("duration") * 1e6).round(0).cast(pl.Int64, strict=False))).dt.convert_time_zone("UTC")
    else:
        started = pl.lit(None, dtype=pl.Datetime("us", "UTC"))
    typed, bad = _supersede(typed)
    rejects += bad
    energy = pl.col("energy_consumed") * KWH_TO_J
    out = reported_runs(
        typed,
        run,
        run_id=pl.coalesce("run_id", pl.format("{}:{}", pl.lit(str(source_id)), pl.col("source_row"))),
        device_id=pl.lit(run.device_id) if run.device_id else slug(pl.col("cpu_model")),
        model=pl.lit(run.model, dtype=pl.String),
        workload=pl.lit(run.workload) if run.workload else pl.col("project_name"),
        started_at=started,
        duration_s=pl.col("duration"),
        energy_j=energy,
        energy_method="reported",
        log_format="codecarbon",
    )
    return Parsed(frame=out, rejects=sorted(rejects, key=lambda r: (r.source_row or 0, r.column_name or "")))
