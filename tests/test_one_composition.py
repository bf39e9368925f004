"""One composition: each carbon term is computed once, in the model, and the marts read it.

Two builds of temporary copies, each checked against a hand computation from the inputs:

* a ``workload_kind`` 1 job (accelerator-hours) and a ``workload_kind`` 2 job (parameters x
  tokens), added by scenario rows the documented way (``edge-carbon register``): their job lasts
  ``job_years``, not the scenario's ``horizon_years``, and marts.lifecycle_carbon and the model
  count every term over it;
* the claim's bounds changed in their one vocabulary row (schemas/vocabulary.py), in a copy of
  the project: core.claim, marts.verdict's categories and the verdict chart's band (the index's
  lead chart) move with them.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import duckdb
import pytest

from pipelines.cli import main
from pipelines.model.formula import evaluate, scenario_inputs
from pipelines.paths import PROJECT_ROOT, SOURCES_DIR, SOURCES_ENV
from tests.conftest import build

pytestmark = pytest.mark.slow

HEADER = "parameter,value,unit,low,high,distribution,status,factor_ref,reasoning,range_ref\n"
#: A job of 8,760 accelerator-hours: on the paper's one GPU at 24 h a day, one year (the horizon is 3).
GPU_HOURS = HEADER + (
    "workload_kind,1,code,,,point,assumed,,The job as accelerator-hours (test value).,\n"
    "workload_gpu_hours,8760,h,,,point,assumed,,One GPU-year (test value).,\n"
)
#: A job of fleet_model_params x 2e10 tokens at 40% of the accelerator's FP16 peak.
PARAMS_TOKENS = HEADER + (
    "workload_kind,2,code,,,point,assumed,,The job as parameters x tokens (test value).,\n"
    "workload_tokens,20000000000,tokens,,,point,assumed,,20 B tokens (test value).,\n"
    "workload_mfu,0.4,fraction,,,point,assumed,,Model FLOPs utilisation (test value).,\n"
)
JOBS = {"job_gpu_hours": GPU_HOURS, "job_params_tokens": PARAMS_TOKENS}


def rows(path: Path, sql: str, params: list | None = None) -> list[dict]:
    with duckdb.connect(str(path), read_only=True) as con:
        cur = con.execute(sql, params or [])
        names = [d[0] for d in cur.description]
        return [dict(zip(names, r, strict=True)) for r in cur.fetchall()]


@pytest.fixture(scope="module")
def jobs_warehouse(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("one_composition")
    sources = root / "sources"
    shutil.copytree(SOURCES_DIR, sources)
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv(SOURCES_ENV, str(sources))
        patch.chdir(root)
        for scenario_id, text in JOBS.items():
            (sources / "scenarios" / f"{scenario_id}.csv").write_text(text, encoding="utf-8")
            assert main(["register", f"sources/scenarios/{scenario_id}.csv", "--id", f"scenario_{scenario_id}", "--kind", "scenario",
                         "--title", f"Paper text as a {scenario_id} workload", "--status", "assumed",
                         "--option", f"scenario_id={scenario_id}", "--option", "extends=paper_text"]) == 0
        path = root / "wh" / "edge_carbon.duckdb"
        result = build(path, only=["marts/lifecycle_carbon"])
        failures = [e.step_key for e in result.all_events if e.is_step_failure]
        assert result.success, f"pipeline failed in steps {failures}"
    return path


def hand_job_years(s: dict) -> float:
    """The job's calendar years on cloud_gpu_count accelerators, by hand from the scenario's inputs."""
    if s["workload_kind"] == 1:
        gpu_hours = s["workload_gpu_hours"]
    else:  # 6 N D FLOPs at workload_mfu of the (main) accelerator's FP16 peak
        assert s["workload_kind"] == 2 and s["cloud_gpu_variant"] == 0
        gpu_hours = 6 * s["fleet_model_params"] * s["workload_tokens"] / (s["cloud_gpu_fp16_tflops"] * 1e12 * s["workload_mfu"]) / 3600
    return gpu_hours / (s["cloud_gpu_count"] * s["cloud_hours_per_day"] * 365)


def hand_lifecycle(s: dict, devices: list[dict]) -> dict[str, tuple[float, float]]:
    """(embodied, operational) kgCO2e per device class over the job, by hand."""
    t = hand_job_years(s)
    share = min(t / s["cloud_embodied_life_years"], 1) if s["accounting_frame"] == 1 else 1.0
    out = {"cloud_gpu": (
        s["cloud_gpu_embodied_kgco2e"] * share,
        (s["cloud_gpu_power_w"] + s["cloud_node_overhead_w"]) * s["cloud_utilisation"] * s["cloud_hours_per_day"] * 365 * t
        * s["cloud_pue"] * (1 + s["cloud_comm_energy_share"]) * s["cloud_grid_gco2e_per_kwh"] / 1e6,
    )}
    bts = s["battery_throughput_share"]
    wall = (1 - bts + bts / s["battery_round_trip_efficiency"]) / s["edge_charger_efficiency"]
    for d in devices:
        if d["device_embodied_total_kgco2e"] is None:
            continue
        hours = d["class_hours_per_day"] if d["class_hours_per_day"] is not None else s["edge_hours_per_day"]
        out[d["device_class"]] = (
            d["device_embodied_total_kgco2e"] * d["device_nonuse_share"] * min(t / d["lifetime_years"], 1),
            s["device_online_fraction"] * d["train_power_w"] * wall * hours * 365 * t * s["edge_grid_gco2e_per_kwh"] / 1e6,
        )
    return out


@pytest.mark.parametrize("scenario_id", list(JOBS))
def test_lifecycle_and_the_model_count_the_job_years(jobs_warehouse: Path, scenario_id: str) -> None:
    s = rows(jobs_warehouse, "select * from core.scenarios where scenario_id = ?", [scenario_id])[0]
    devices = rows(jobs_warehouse, "select * from core.scenario_devices where scenario_id = ? order by device_class", [scenario_id])
    t = hand_job_years(s)
    if scenario_id == "job_gpu_hours":
        assert t == pytest.approx(1.0), "8,760 GPU-hours on one GPU at 24 h a day"
    assert t != pytest.approx(s["horizon_years"], rel=1e-3), "the job must differ from the horizon, or the test cannot tell them apart"
    expected = hand_lifecycle(s, devices)
    assert len(expected) >= 3, "the cloud GPU and at least two edge classes"

    mart = {r["device_class"]: r for r in rows(jobs_warehouse, "select * from marts.lifecycle_carbon where scenario_id = ?", [scenario_id])}
    assert set(mart) == set(expected)
    for device_class, (embodied, operational) in expected.items():
        row = mart[device_class]
        assert row["horizon_years"] == pytest.approx(t, rel=1e-12)
        assert row["embodied_kgco2e"] == pytest.approx(embodied, rel=1e-12), device_class
        assert row["operational_kgco2e"] == pytest.approx(operational, rel=1e-12), device_class
        assert row["total_kgco2e"] == pytest.approx(embodied + operational, rel=1e-12), device_class

    # the model's own rows: the same per-unit terms, and the cloud total R divides by built from them
    with duckdb.connect(str(jobs_warehouse), read_only=True) as con:
        model = evaluate(con, scenario_inputs(con).filter(scenario_id=scenario_id), patterns=("none",))
    assert model.height > 0
    cloud_embodied, cloud_operational = expected["cloud_gpu"]
    for row in model.iter_rows(named=True):
        assert row["job_years"] == pytest.approx(t, rel=1e-12)
        assert row["cloud_embodied_per_gpu_kgco2e"] == pytest.approx(cloud_embodied, rel=1e-12)
        assert row["cloud_operational_per_gpu_kgco2e"] == pytest.approx(cloud_operational, rel=1e-12)
        assert row["cloud_total_kgco2e"] == pytest.approx(s["cloud_gpu_count"] * (cloud_embodied + cloud_operational), rel=1e-12)
        if row["device_class"] in expected:
            assert (row["device_embodied_kgco2e"], row["device_operational_kgco2e"]) == pytest.approx(expected[row["device_class"]], rel=1e-12)


#: Run in the copy: a build of marts.verdict, then the verdict page (the index's lead chart).
CLAIM_SCRIPT = textwrap.dedent("""
    import json, sys
    from pathlib import Path

    import duckdb

    from dashboards import verdict as page
    from tests.conftest import build

    path = Path(sys.argv[1])
    result = build(path, only=["marts/verdict"])
    assert result.success, [e.step_key for e in result.all_events if e.is_step_failure]
    with duckdb.connect(str(path), read_only=True) as con:
        claim = con.execute("select claim_low, claim_high from core.claim").fetchall()
        verdicts = con.execute("select scenario_id, basis, device_class, network_method, verdict_if_feasible, claim_low, claim_high "
                               "from marts.verdict order by all").fetchall()
        spec = page.build(con).charts["verdict"].to_dict()
    print(json.dumps({"claim": claim, "verdicts": verdicts, "spec": spec}, default=str))
""")


def band_of(spec: object) -> list[tuple[float, float]]:
    """Every (low, high) data row in a chart spec: the claim's shaded band."""
    found: list[tuple[float, float]] = []
    if isinstance(spec, dict):
        if set(spec) == {"low", "high"}:
            found.append((spec["low"], spec["high"]))
        for value in spec.values():
            found += band_of(value)
    elif isinstance(spec, list):
        for value in spec:
            found += band_of(value)
    return found


def claim_build(root: Path, bounds: tuple[float, float] | None) -> dict:
    """A copy of the project at ``root`` (the claim's row changed to ``bounds``), built and its verdict page drawn."""
    for name in ("pipelines", "schemas", "sql", "dashboards", "sources", "tests"):
        shutil.copytree(PROJECT_ROOT / name, root / name, ignore=shutil.ignore_patterns("__pycache__", "site", "out"))
    shutil.copyfile(PROJECT_ROOT / "pyproject.toml", root / "pyproject.toml")
    if bounds is not None:
        vocabulary = root / "schemas" / "vocabulary.py"
        text = vocabulary.read_text(encoding="utf-8")
        row = "CLAIM_LOW = 4.0\nCLAIM_HIGH = 8.0\n"
        assert text.count(row) == 1, "the claim's bounds are one row of schemas/vocabulary.py"
        vocabulary.write_text(text.replace(row, f"CLAIM_LOW = {bounds[0]!r}\nCLAIM_HIGH = {bounds[1]!r}\n"), encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if k != SOURCES_ENV} | {"PYTHONPATH": str(root)}
    done = subprocess.run([sys.executable, "-c", CLAIM_SCRIPT, str(root / "wh" / "edge_carbon.duckdb")], cwd=root, env=env,
                          capture_output=True, text=True, timeout=600, check=False)
    assert done.returncode == 0, done.stderr[-4000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_the_claims_bounds_move_the_verdict_and_the_band(tmp_path: Path) -> None:
    shipped = claim_build(tmp_path / "shipped", None)
    moved = claim_build(tmp_path / "moved", (1.5, 2.5))
    assert shipped["claim"] == [[4.0, 8.0]] and moved["claim"] == [[1.5, 2.5]]
    assert band_of(shipped["spec"]) == [(4.0, 8.0)]
    assert band_of(moved["spec"]) == [(1.5, 2.5)]
    before = {tuple(r[:4]): r[4:] for r in shipped["verdicts"]}
    after = {tuple(r[:4]): r[4:] for r in moved["verdicts"]}
    assert set(before) == set(after)
    assert {tuple(v[1:]) for v in after.values()} == {(1.5, 2.5)}
    # the categories read the new low end: their wording names it, and rows between the two ends change category
    read = [v[0] for v in after.values() if v[0].startswith(("claim", "below"))]
    assert read and all("1.5" in v and "4" not in v for v in read), read
    assert any(before[k][0].startswith("below") and not after[k][0].startswith("below") for k in before)
