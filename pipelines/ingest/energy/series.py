"""The keys of ``staging.benchmark_runs`` that the tables built from it rely on, checked once for
the build and for ``edge-carbon register``.

- A run id names one run across all files (``staging.benchmark_runs.run_id``).
- A series (``series_id``) is repeated runs of one device and workload: its runs agree on
  :data:`SERIES_KEYS`, so ``staging.benchmark_series`` and ``marts.training_energy`` have one
  row per series.
- A paper claim is reproduced by at most one series (the source option ``reproduces``, set on
  the paper's own Table 1 logs), so ``marts.paper_reproduction`` has one row per claim.

Any number of series may share a device and workload: every other run of them (a user's own
log, a copy of a shipped file) is a series of its own. A build whose sources break one of these
keys stops with :class:`pipelines.errors.ManifestError` naming the series; ``register`` refuses
the source that would break it, with the same sentence.
"""

from __future__ import annotations

from collections.abc import Mapping

import polars as pl

#: Columns every run of one series has in common.
SERIES_KEYS = ("device_id", "model", "workload", "is_synthetic", "reproduces")
#: The manifest option that marks a source's runs as the paper's own series of a claim.
REPRODUCES = "reproduces"
#: Sources named in a message, at most.
NAMED = 3


def with_reproduces(runs: pl.DataFrame, reproduces: Mapping[str, str | None]) -> pl.DataFrame:
    """``runs`` with a ``reproduces`` column: the option of each run's source (``source_id``)."""
    claims = {source: claim for source, claim in reproduces.items() if claim is not None}
    return runs.with_columns(pl.col("source_id").replace_strict(claims, default=None, return_dtype=pl.String).alias(REPRODUCES))


def _sources(ids: list[str]) -> str:
    named = ", ".join(ids[:NAMED]) + (f" and {len(ids) - NAMED} more" if len(ids) > NAMED else "")
    return f"source{'s' if len(ids) > 1 else ''} {named}"


def _value(value: object) -> str:
    if value is None:
        return "none"
    return str(value).lower() if isinstance(value, bool) else repr(value)


def series_problem(runs: pl.DataFrame) -> str | None:
    """What breaks a series key in ``runs`` (benchmark_runs rows with ``reproduces`` and
    ``source_id``), in one sentence that names the fix; None when every key holds."""
    in_series = runs.filter(pl.col("series_id").is_not_null())
    for key in SERIES_KEYS:
        values = (in_series.group_by("series_id", key).agg(pl.col("source_id").unique().sort())
                  .filter(pl.len().over("series_id") > 1).sort("series_id", key, nulls_last=True))
        if values.height:
            series_id = values.item(0, "series_id")
            parts = [f"{_value(value)} ({_sources(ids)})" for _, value, ids in values.filter(pl.col("series_id") == series_id).iter_rows()]
            return (f"series {series_id!r} mixes {key} {' and '.join(parts)}; the runs of a series repeat one device, model "
                    f"and workload: give the other runs a series_id of their own")
    claimed = (in_series.filter(pl.col(REPRODUCES).is_not_null()).group_by(REPRODUCES, "series_id")
               .agg(pl.col("source_id").unique().sort()).filter(pl.len().over(REPRODUCES) > 1).sort(REPRODUCES, "series_id"))
    if claimed.height:
        claim = claimed.item(0, REPRODUCES)
        parts = [f"{series_id!r} ({_sources(ids)})" for _, series_id, ids in claimed.filter(pl.col(REPRODUCES) == claim).iter_rows()]
        return (f"claim {claim!r} is reproduced by the series {' and '.join(parts)}; only the paper's own series of a claim "
                f"reproduces it: drop the option {REPRODUCES} from the others")
    unseriesed = runs.filter(pl.col("series_id").is_null() & pl.col(REPRODUCES).is_not_null())
    if unseriesed.height:
        first = unseriesed.sort("source_id").row(0, named=True)
        return (f"source {first['source_id']} reproduces {first[REPRODUCES]!r} but its runs have no series_id; "
                f"give it the option series_id, or drop the option {REPRODUCES}")
    return None


def run_id_problem(runs: pl.DataFrame, files: Mapping[str, str]) -> tuple[str, str, str] | None:
    """A run id of ``runs`` loaded from two sources (``files``: source id -> file): the source
    that has it first, the one that repeats it, and a sentence naming the first; None when
    every run id is unique."""
    clashes = runs.group_by("run_id").agg(pl.col("source_id").unique(maintain_order=True)).filter(pl.col("source_id").list.len() > 1)
    if not clashes.height:
        return None
    run_id, sources = clashes.sort("run_id").row(0)
    first, second = sources[0], sources[1]
    return first, second, f"run_id {run_id!r} is also a run of {files.get(first, first)} (source {first}); run ids must be unique across files"
