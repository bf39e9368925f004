"""Intel RAPL energy-counter logs -> staging.power_samples.

The file records ``/sys/class/powercap/intel-rapl:*/energy_uj`` readings: header
``timestamp_ns,domain,energy_uj,max_energy_range_uj`` (``timestamp_ns`` in Unix epoch ns).
Each domain's ``energy_uj`` is a cumulative counter that wraps to zero after
``max_energy_range_uj``: when it decreases, the increment is ``energy_uj - previous +
max_energy_range_uj``. A single interval can only be corrected for one wrap, so readings must
be frequent enough (the counter wraps after tens of minutes at full load).

Between consecutive readings of a domain the mean power is ``increment / 1e6 / seconds``,
stamped at the later reading, with ``interval_s`` = that interval. The run's energy is the
sum of the increments (energy method ``counter``): see :func:`pipelines.ingest.energy.integration.counter_energy`.
The first reading of a domain opens its first interval and yields no sample itself.

Channel = domain (``package-0``, ``package-1``, ``dram``, ``core``, ``uncore``...).
``package-*`` and ``dram`` count towards the total; ``core`` and ``uncore`` are parts of a
package and ``psys`` (whole platform) overlaps the packages, so they do not.

Rejected with the file's column name: empty or unreadable cells, a negative counter or one
above ``max_energy_range_uj``, a reading that repeats a domain's timestamp, and a domain with
a single reading (no interval to measure).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import polars as pl

from pipelines.ingest.cells import EARLIEST, LATEST, drop_where, require_cells, whole_number
from pipelines.ingest.options import run_options
from pipelines.ingest.parsers.common import checked_casts, read_text_csv, require_columns
from pipelines.ingest.plausibility import check_samples
from pipelines.ingest.staging import Parsed

TIME, DOMAIN, ENERGY, RANGE = "timestamp_ns", "domain", "energy_uj", "max_energy_range_uj"


def counts_to_total(domain: pl.Expr) -> pl.Expr:
    """True for package-* and dram domains."""
    return domain.str.starts_with("package") | (domain == "dram")


def parse_rapl(path: Path, options: Mapping[str, Any]) -> Parsed:
    """Parse a RAPL energy-counter CSV into power_samples rows (one run)."""
    run = run_options(path, options)
    frame = read_text_csv(path)
    require_columns(path, frame, [TIME, DOMAIN, ENERGY, RANGE])
    frame, rejects = require_cells(frame.select("source_row", TIME, DOMAIN, ENERGY, RANGE), [TIME, DOMAIN, ENERGY, RANGE])
    frame = frame.with_columns(pl.col(DOMAIN).str.strip_chars())
    typed, bad = checked_casts(frame, {TIME: whole_number, ENERGY: whole_number, RANGE: whole_number})
    rejects += bad
    lo, hi = int(EARLIEST.timestamp()) * 10**9, int(LATEST.timestamp()) * 10**9
    checks = [
        ((pl.col(TIME) < lo) | (pl.col(TIME) >= hi), TIME, "in_range", f"{TIME}: {{{TIME}}} is not a Unix time in ns within {EARLIEST.year}-{LATEST.year - 1}"),
        (pl.col(RANGE) <= 0, RANGE, "greater_than(0)", f"{RANGE}: {{{RANGE}}} must be > 0"),
        (pl.col(ENERGY) < 0, ENERGY, "greater_than_or_equal_to(0)", f"{ENERGY}: {{{ENERGY}}} must be >= 0 (a counter)"),
        (pl.col(ENERGY) > pl.col(RANGE), ENERGY, "counter_range", f"{ENERGY}: {{{ENERGY}}} exceeds {RANGE} {{{RANGE}}}"),
    ]
    for mask, column, check, reason in checks:
        typed, bad = drop_where(typed, mask, column=column, check=check, value=column, reason=reason)
        rejects += bad
    typed = typed.sort(DOMAIN, TIME, "source_row")
    repeated = (pl.col(TIME) == pl.col(TIME).shift(1)).over(DOMAIN).fill_null(False)
    typed = typed.with_columns(pl.col("source_row").shift(1).over(DOMAIN).alias("previous_row"))
    typed, bad = drop_where(
        typed,
        repeated,
        column=TIME,
        check="duplicate_reading",
        value=TIME,
        reason=f"{TIME}: {{{TIME}}} repeats the reading of domain {{{DOMAIN}}} on line {{previous_row}}",
    )
    rejects += bad
    typed, bad = drop_where(
        typed,
        pl.len().over(DOMAIN) == 1,
        column=DOMAIN,
        check="single_reading",
        value=DOMAIN,
        reason=f"{DOMAIN}: {{{DOMAIN}}} has only this reading, so no interval to measure power over",
    )
    rejects += bad
    energy = pl.col(ENERGY).cast(pl.Float64)
    step = energy - energy.shift(1).over(DOMAIN)
    increment = pl.when(step < 0).then(step + pl.col(RANGE).cast(pl.Float64)).otherwise(step)
    seconds = (pl.col(TIME) - pl.col(TIME).shift(1).over(DOMAIN)).cast(pl.Float64) / 1e9
    samples = typed.with_columns(increment.alias("increment_uj"), seconds.alias("interval_s")).filter(pl.col("interval_s").is_not_null())
    out = samples.select(
        pl.lit(run.run_id).alias("run_id"),
        pl.from_epoch(TIME, time_unit="ns").dt.replace_time_zone("UTC").alias("ts"),
        pl.col(DOMAIN).alias("channel"),
        (pl.col("increment_uj") / 1e6 / pl.col("interval_s")).alias("power_w"),
        counts_to_total(pl.col(DOMAIN)).alias("counts_to_total"),
        "interval_s",
        "source_row",
    ).sort("source_row")
    out, bad = check_samples(out, kind="rapl", options=options, labels={"ts": TIME, "power_w": ENERGY})
    rejects += bad
    return Parsed(frame=out, rejects=sorted(rejects, key=lambda r: (r.source_row or 0, r.column_name or "")))
