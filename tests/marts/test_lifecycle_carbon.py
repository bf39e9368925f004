"""marts.lifecycle_carbon, given rows -> expected rows: the model's per-unit terms (core.model_evaluation) read
on each scenario's headline basis and method row, compute only, the cloud GPU once and each class with a footprint."""

from __future__ import annotations

import pytest

from pipelines.model.methods import reference_tables
from schemas.vocabulary import COMPUTE_ONLY, PAPER_FRAME
from tests.marts.given_rows import run_mart

EDGE_RULE = "report total x non-use share x min(T / lifetime, 1)"


def model_row(device_class: str, device_embodied: float | None, *, pattern: str = COMPUTE_ONLY, headline: bool = True,
              method: bool = True, cloud: tuple[float, float] = (100.0, 900.0), family: str = "base") -> dict:
    return {"scenario_id": "s", "family": family, "device_class": device_class, "basis": "binding", "is_headline": headline, "pattern": pattern,
            "is_headline_method": method, "job_years": 3.0, "cloud_embodied_per_gpu_kgco2e": cloud[0],
            "cloud_operational_per_gpu_kgco2e": cloud[1], "device_embodied_kgco2e": device_embodied,
            "device_operational_kgco2e": 30.0}


def test_the_cloud_gpu_once_and_each_class_with_a_footprint() -> None:
    rows = run_mart("marts.lifecycle_carbon", {
        "core.scenarios": [{"scenario_id": "s", "accounting_frame": PAPER_FRAME}],
        "core.model_evaluation": [
            model_row("laptop", 10.0), model_row("phone", None),  # the phone has no manufacturer footprint: no row
            model_row("laptop", 99.0, headline=False, cloud=(1.0, 1.0)),  # another basis
            model_row("laptop", 99.0, method=False, cloud=(1.0, 1.0)),  # another method row
            model_row("laptop", 99.0, pattern="ring_allreduce", cloud=(1.0, 1.0)),  # a pattern that moves bytes
            model_row("fleet", 99.0, cloud=(1.0, 1.0)),  # a mixed fleet's sum
            model_row("laptop", 99.0, cloud=(1.0, 1.0), family="model_sizes"),  # a what-if's variant of the scenario
        ],
    }, method_tables=["core.frames", "core.patterns"])
    frames = reference_tables()["core.frames"].to_pylist()
    cloud_rule = next(f["cloud_embodied_rule"] for f in frames if f["accounting_frame"] == PAPER_FRAME)
    assert rows == [
        {"scenario_id": "s", "device_class": "cloud_gpu", "horizon_years": 3.0, "embodied_kgco2e": 100.0, "operational_kgco2e": 900.0,
         "total_kgco2e": 1000.0, "embodied_share": pytest.approx(0.1), "operational_share": pytest.approx(0.9),
         "embodied_rule": cloud_rule},
        {"scenario_id": "s", "device_class": "laptop", "horizon_years": 3.0, "embodied_kgco2e": 10.0, "operational_kgco2e": 30.0,
         "total_kgco2e": 40.0, "embodied_share": pytest.approx(0.25), "operational_share": pytest.approx(0.75),
         "embodied_rule": EDGE_RULE},
    ]
