"""Measured training throughput (``sources/curated/training_throughput.csv``).

A curated CSV with the columns of :class:`~schemas.training_throughput.TrainingThroughput`, read
as every curated file is (:func:`~pipelines.ingest.parsers.curated.curated_parser`); then a row
whose measured TFLOPS exceed its device's peak at its precision is rejected with the reason
(:func:`pipelines.ingest.plausibility.check_throughput`).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pipelines.ingest.parsers.curated import curated_parser
from pipelines.ingest.plausibility import check_throughput
from pipelines.ingest.staging import Parsed
from schemas.training_throughput import TrainingThroughput

#: The columns that hold a rate in TFLOPS per device, bounded by the device's peak.
RATE_COLUMNS = ("achieved_tflops", "reported_tflops")

_read_curated = curated_parser(TrainingThroughput)


def parse_training_throughput(path: Path, options: Mapping[str, Any]) -> Parsed:
    """Curated training throughput rows; a rate above its device's peak is rejected."""
    parsed = _read_curated(path, options)
    frame, above_peak = check_throughput(parsed.frame, columns=RATE_COLUMNS)
    return Parsed(frame=frame, rejects=[*parsed.rejects, *above_peak])
