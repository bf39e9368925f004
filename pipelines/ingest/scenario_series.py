"""``edge-carbon scenario new NAME --extends PARENT --from-series SERIES``: a registered power
series (your own log, or a capture's repeats) as the scenario's device or GPU power, and, where a
measured rate row shares the series (``staging.training_throughput.series_id``, as a capture's
does), as its rate.

The rows are references, not copies: the power row reads
``benchmark_series.series_id=SERIES.mean_power_w_mean`` with that mean's 95% CI as its range
(``range_ref``), so the scenario follows the series when its logs change. Which parameters a series
sets depends on its device's class:

========================== ============================ ===========================================
device class               power                        rate (from the series' own rate row)
========================== ============================ ===========================================
cloud_gpu, workstation_gpu ``cloud_gpu_power_w``        ``cloud_gpu_measured_tflops`` = the row's
                                                        ``achieved_tflops``
laptop / phone             ``<device>_train_power_w``   ``<device>_tflops`` = the device's FP32 peak
                                                        and ``<device>_measured_share`` = the row's
                                                        ``mfu`` (an FP32 row's, over that peak)
========================== ============================ ===========================================

The series is read from the published warehouse, so a series registered since the last build
needs ``make run`` first; a synthetic series (the paper's reconstructed logs, a fake capture) is
refused: a scenario's power comes from measurements.
"""

from __future__ import annotations

import difflib
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from pipelines.errors import Refused
from pipelines.paths import sql_text, warehouse_path

#: The device classes whose series stand for the cloud GPU: they set its power (and rate); a series of
#: any other class sets that class's own ``<class>_train_power_w``, where the parent has one.
GPU_CLASSES = ("cloud_gpu", "workstation_gpu")
GPU_POWER = "cloud_gpu_power_w"
EDGE_POWER_SUFFIX = "_train_power_w"


def power_parameter(device_class: str, parameters: Mapping[str, Any]) -> str | None:
    """The scenario parameter a series of ``device_class`` sets: the GPU's power, or the class's own
    training power where the parent scenario has that parameter (a class with none is no device of it)."""
    if device_class in GPU_CLASSES:
        return GPU_POWER
    name = f"{device_class}{EDGE_POWER_SUFFIX}"
    return name if name in parameters else None


@dataclass(frozen=True)
class SeriesRow:
    """One scenario row a series sets: the parameter, its reference and its range reference."""

    parameter: str
    factor_ref: str
    range_ref: str
    reasoning: str


def _query(sql: str, params: Mapping[str, Any]) -> list[dict[str, Any]]:
    import duckdb

    path = warehouse_path()
    if not path.is_file():
        why = "is a folder, not a warehouse file" if path.is_dir() else "does not exist"
        raise Refused(f"scenario new: --from-series reads the published warehouse, and {path} {why}; run `make run` first")
    try:
        with duckdb.connect(str(path), read_only=True) as con:
            cursor = con.execute(sql, dict(params))
            names = [d[0] for d in cursor.description]
            return [dict(zip(names, row, strict=True)) for row in cursor.fetchall()]
    except duckdb.Error as exc:
        first = str(exc).splitlines()[0]
        raise Refused(f"scenario new: --from-series cannot read the series from {path} ({first}); rebuild it with `make run`") from None


def series_rows(series_id: str, parameters: Mapping[str, Mapping[str, str]]) -> tuple[list[SeriesRow], list[str]]:
    """The rows ``--from-series series_id`` adds to a scenario whose parent has ``parameters``,
    and notes on what it leaves as the parent has it; :class:`Refused` in one line if it cannot."""
    cmd = "scenario new"
    found = _query(sql_text("scenario/series.sql"), {"series_id": series_id})
    if not found:
        known = [row["series_id"] for row in _query(sql_text("scenario/series_ids.sql"), {})]
        close = difflib.get_close_matches(series_id, known, n=3, cutoff=0.4)
        hint = f"; the closest: {', '.join(close)}" if close else ""
        raise Refused(f"{cmd}: --from-series {series_id}: no such series in {warehouse_path()}{hint} (a series registered since "
                      "the last build needs `make run` first)")
    series = found[0]
    if series["is_synthetic"]:
        raise Refused(f"{cmd}: --from-series {series_id}: the series is synthetic (its logs are not measurements), so no scenario "
                      "may read it; give a measured series")
    power = power_parameter(str(series["device_class"]), parameters)
    if power is None:
        classes = sorted({*GPU_CLASSES, *(p.removesuffix(EDGE_POWER_SUFFIX) for p in parameters if p.endswith(EDGE_POWER_SUFFIX))})
        raise Refused(f"{cmd}: --from-series {series_id}: its device {series['device_id']} is a {series['device_class']}, which no "
                      f"parameter of the parent stands for; a series of a {', '.join(classes)} device")
    if power not in parameters:
        raise Refused(f"{cmd}: --from-series {series_id}: the parent has no {power} to set")
    ref = f"benchmark_series.series_id={series_id}.mean_power_w_mean"
    low, high = series["mean_power_w_ci95_low"], series["mean_power_w_ci95_high"]
    ranged = low is not None and high is not None and low < high
    rows = [SeriesRow(
        parameter=power, factor_ref=ref, range_ref=ref if ranged else "",
        reasoning=(f"The mean power of the registered series {series_id} ({series['n_runs']} run(s) of {series['model']} on "
                   f"{series['device_id']}: {series['mean_power_w_mean']:.4g} W)"
                   + (", its 95% CI as the range (range_ref)" if ranged else ", no spread between runs: no range") + "; set by --from-series."),
    )]
    notes: list[str] = []
    rates = [r for r in _query(sql_text("scenario/series_rates.sql"), {"series_id": series_id}) if not r["is_synthetic"]]
    if not rates:
        notes.append(f"{cmd}: {series_id} has no measured rate row (staging.training_throughput.series_id), so the rate stays the parent's")
        return rows, notes
    rate = rates[0]
    row_ref = f"training_throughput.throughput_id={rate['throughput_id']}"
    size = f"{rate['model']} ({rate['model_params']:.3g} parameters)"
    if power == GPU_POWER:
        rows.append(SeriesRow("cloud_gpu_measured_tflops", f"{row_ref}.achieved_tflops", "",
                              f"The GPU's measured rate in the same run as its power: {rate['throughput_id']}, {size}, "
                              f"{rate['achieved_tflops']:.4g} TFLOPS of 6 N D work; set by --from-series."))
    elif rate["precision"] == "fp32" and rate["mfu"] is not None and series["fp32_tflops"] is not None:
        device = power.removesuffix(EDGE_POWER_SUFFIX)
        rows += [
            SeriesRow(f"{device}_tflops", f"device_specs.device_id={series['device_id']}.fp32_tflops", "",
                      f"The FP32 peak of the device the series {series_id} measured ({series['device_id']}); set by --from-series."),
            SeriesRow(f"{device}_measured_share", f"{row_ref}.mfu", "",
                      f"The device's measured share of its FP32 peak in the same run as its power: {rate['throughput_id']}, {size}; "
                      "set by --from-series."),
        ]
    else:
        notes.append(f"{cmd}: {rate['throughput_id']} is not an FP32 rate with an MFU, so the {power.split('_')[0]}'s rate stays the parent's")
    fleet = parameters.get("fleet_model_params") or {}
    notes.append(f"{cmd}: the rate was measured on {size}; the scenario trains fleet_model_params = "
                 f"{fleet.get('value') or fleet.get('factor_ref') or '?'}")
    missing = [row.parameter for row in rows if row.parameter not in parameters]
    if missing:
        raise Refused(f"{cmd}: --from-series {series_id}: the parent has no {', '.join(missing)} to set")
    return rows, notes
