"""Devices and workloads as rows: a third edge device class added by CSV rows only, and the
README's worked comparison (a mixed fleet against a multi-GPU job given as parameters x tokens).

One build of a temporary copy of ``sources/`` with two scenario files registered the documented
way (``edge-carbon register``); every number is checked against a hand computation from the
scenario's own inputs.
"""

from __future__ import annotations

import math
import re
import shlex
import shutil
from pathlib import Path

import duckdb
import pytest

from dashboards.shell import ratio_text
from pipelines.cli import main
from pipelines.paths import PROJECT_ROOT, SOURCES_DIR, SOURCES_ENV
from tests.conftest import build

pytestmark = pytest.mark.slow

#: A third class beside the paper's laptop and phone: an M1 tablet, by rows only.
TABLET = """parameter,value,unit,low,high,distribution,status,factor_ref,reasoning,range_ref
tablet_train_power_w,10,W,,,point,assumed,,A tablet's training power (test value).,
tablet_tflops,,TFLOPS,,,point,primary,device_specs.device_id=apple-m1.fp32_tflops,Apple M1 8-core GPU FP32 peak.,
tablet_memory_gb,,GB,,,point,primary,device_specs.device_id=apple-m1.memory_gb,Apple M1 unified memory.,
tablet_mem_bandwidth_gb_per_s,68.25,GB/s,,,point,assumed,,LPDDR4X-4266 on a 128-bit bus (test value).,
tablet_table1_energy_j,9000,J,,,point,assumed,,The tablet's energy for the Table 1 job (test value).,
"""
README = PROJECT_ROOT / "README.md"
EXAMPLE = PROJECT_ROOT / "docs" / "examples" / "mixed_fleet.csv"


def readme_commands() -> list[list[str]]:
    """The `edge-carbon register` command of the README's worked comparison, as argv."""
    text = README.read_text(encoding="utf-8")
    block = text[text.index("<!-- your-comparison:begin -->"):text.index("<!-- your-comparison:end -->")]
    lines = re.findall(r"edge-carbon (register [^\n]+)", block.replace("\\\n", " "))
    assert lines, "the README's worked comparison has no `edge-carbon register` line"
    return [shlex.split(line) for line in lines]


@pytest.fixture(scope="module")
def warehouse(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("devices_as_rows")
    sources = root / "sources"
    shutil.copytree(SOURCES_DIR, sources)
    (sources / "scenarios" / "tablet_check.csv").write_text(TABLET, encoding="utf-8")
    shutil.copyfile(EXAMPLE, sources / "scenarios" / "mixed_fleet.csv")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv(SOURCES_ENV, str(sources))
        patch.chdir(root)
        assert main(["register", "sources/scenarios/tablet_check.csv", "--id", "scenario_tablet_check", "--kind", "scenario",
                     "--title", "Paper text with a tablet class", "--status", "assumed",
                     "--option", "scenario_id=tablet_check", "--option", "extends=paper_text"]) == 0
        for argv in readme_commands():
            assert main(argv) == 0, argv
        path = root / "wh" / "edge_carbon.duckdb"
        result = build(path, default=True)
        failures = [e.step_key for e in result.all_events if e.is_step_failure]
        assert result.success, f"pipeline failed in steps {failures}"
    return path


def rows(path: Path, sql: str, params: list | None = None) -> list[dict]:
    with duckdb.connect(str(path), read_only=True) as con:
        cur = con.execute(sql, params or [])
        names = [d[0] for d in cur.description]
        return [dict(zip(names, r, strict=True)) for r in cur.fetchall()]


def scenario(path: Path, scenario_id: str) -> dict:
    return rows(path, "select * from core.scenarios where scenario_id = ?", [scenario_id])[0]


def test_a_third_class_added_by_rows_reaches_fleet_equivalence(warehouse: Path) -> None:
    s = scenario(warehouse, "tablet_check")
    specs = rows(warehouse, "select fp32_tflops, memory_gb from staging.device_specs where device_id = 'apple-m1'")[0]
    got = {r["basis"]: r for r in rows(warehouse, "select * from marts.fleet_equivalence where scenario_id = 'tablet_check' "
                                                  "and device_class = 'tablet'")}
    # peak FLOPS: ceil(F_gpu x 24 h / (F_tablet x 8 h)), the paper's utilisation 1 and no availability loss
    devices = math.ceil(s["cloud_gpu_tflops"] * s["cloud_hours_per_day"] / (specs["fp32_tflops"] * s["edge_hours_per_day"]))
    assert devices == 78
    assert got["peak_flops"]["devices"] == devices and got["peak_flops"]["devices_from"] == "formula"
    # cloud: embodied (charged in full, as published) + P x 24 h x 365 x T x CI; edge: N x P x 8 h x 365 x T x CI
    cloud = s["cloud_gpu_embodied_kgco2e"] + s["cloud_gpu_power_w"] * 24 * 365 * s["horizon_years"] * s["cloud_grid_gco2e_per_kwh"] / 1e6
    edge = devices * 10 * 8 * 365 * s["horizon_years"] * s["edge_grid_gco2e_per_kwh"] / 1e6
    assert got["peak_flops"]["cloud_total_kgco2e"] == pytest.approx(cloud, rel=1e-12)
    assert got["peak_flops"]["reduction_factor"] == pytest.approx(cloud / edge, rel=1e-12)
    # binding: the roofline is compute-bound at I = 1000 FLOP/B, and the memory floor (6 tablets hold OPT-1.3B's state) is below
    floor = math.ceil(s["fleet_model_params"] * 16 / (specs["memory_gb"] * 1e9 * 0.5))
    assert got["binding"]["devices_memory_floor"] == floor == 6
    assert got["binding"]["devices"] == devices and got["binding"]["is_headline"]
    # the paper's own classes keep their stated counts in the same scenario
    paper = {r["device_class"]: r["devices"] for r in rows(
        warehouse, "select device_class, devices from marts.fleet_equivalence where scenario_id = 'tablet_check' and basis = 'peak_flops'")}
    assert paper == {"laptop": 15, "phone": 69, "tablet": devices}
    assert rows(warehouse, "select device_ids from core.scenario_devices where scenario_id = 'tablet_check' and device_class = 'tablet'") \
        == [{"device_ids": "apple-m1"}]


def test_the_scaling_marts_iterate_over_the_device_rows(warehouse: Path) -> None:
    """marts.scaling_energy and marts.distributed_training_energy take every class of
    core.scenario_devices with a <class>_table1_energy_j row, the tablet too."""
    params = {r["model_id"]: r["params"] for r in rows(warehouse, "select model_id, params from staging.model_configs")}
    scaling = {(r["device_class"], r["model_id"]): r for r in rows(
        warehouse, "select * from marts.scaling_energy where scenario_id = 'tablet_check'")}
    assert {c for c, _ in scaling} == {"cloud_gpu", "laptop", "phone", "tablet"}
    # compute: the measured 9,000 J scaled by parameters (OPT-125M's to OPT-1.3B's), in kWh
    tablet = scaling[("tablet", "OPT-1.3B")]
    assert tablet["compute_kwh"] == pytest.approx(9000 * params["OPT-1.3B"] / params["OPT-125M"] / 3.6e6, rel=1e-12)
    # communication depends on the scenario, not the class: the tablet moves what the laptop moves
    assert tablet["comm_gb"] == scaling[("laptop", "OPT-1.3B")]["comm_gb"] > 0
    assert tablet["comm_kwh"] == pytest.approx(scaling[("laptop", "OPT-1.3B")]["comm_kwh"], rel=1e-12)
    distributed = rows(warehouse, "select pattern, compute_kwh from marts.distributed_training_energy "
                                  "where scenario_id = 'tablet_check' and device_class = 'tablet' order by pattern")
    assert [r["pattern"] for r in distributed] == ["idealized", "parameter_server", "pipeline", "ring_allreduce"]
    assert all(r["compute_kwh"] == pytest.approx(tablet["compute_kwh"], rel=1e-12) for r in distributed)


def test_the_worked_comparison_a_mixed_fleet_against_a_multi_gpu_job(warehouse: Path) -> None:
    s = scenario(warehouse, "mixed_fleet")
    fleet = {(r["device_class"], r["basis"]): r for r in rows(
        warehouse, "select * from marts.fleet_equivalence where scenario_id = 'mixed_fleet'")}
    # the job: 6 N D FLOPs on 64 GPUs at 40% of the BF16 peak, 24 h a day
    hours = 6 * s["fleet_model_params"] * s["workload_tokens"] / (s["cloud_gpu_fp16_tflops"] * 1e12 * s["workload_mfu"]) / 3600
    assert s["cloud_gpu_count"] == 64
    assert fleet[("fleet", "measured_rates")]["job_years"] == pytest.approx(hours / (64 * 24 * 365), rel=1e-12)
    for basis in ("measured_rates", "measured_throughput"):
        laptop, phone, whole = (fleet[(c, basis)] for c in ("laptop", "phone", "fleet"))
        assert (laptop["fleet_share"], phone["fleet_share"], whole["fleet_share"]) == (0.7, 0.3, 1.0)
        assert whole["devices"] == laptop["devices"] + phone["devices"]
        assert whole["cloud_total_kgco2e"] == pytest.approx(laptop["cloud_total_kgco2e"] + phone["cloud_total_kgco2e"], rel=1e-12)
        assert whole["reduction_factor"] == pytest.approx(
            whole["cloud_total_kgco2e"] / (laptop["edge_added_kgco2e"] + phone["edge_added_kgco2e"]), rel=1e-12)
        # each class takes its share of the 64 GPUs' work: ceil(share x per-GPU count) x 64 devices
        assert laptop["devices"] == math.ceil(0.7 * laptop["devices_exact"] - 1e-9) * 64
    verdict = {(r["device_class"], r["basis"]): r for r in rows(
        warehouse, "select * from marts.verdict where scenario_id = 'mixed_fleet' and is_headline_method and is_best_design")}
    # the example heads on measured_rates, as its parent does
    headline = verdict[("fleet", "measured_rates")]
    assert headline["is_headline"]
    assert headline["p05"] <= headline["p50"] <= headline["p95"]
    assert headline["reduction_factor"] == pytest.approx(fleet[("fleet", "measured_rates")]["reduction_factor"], rel=1e-12)
    assert rows(warehouse, "select count(*) as n from core.scenario_devices where scenario_id = 'mixed_fleet'") == [{"n": 2}]
    # the README's table, at the defaults of `make run`
    text = README.read_text(encoding="utf-8")
    block = text[text.index("<!-- your-comparison:begin -->"):text.index("<!-- your-comparison:end -->")]
    quoted = re.findall(r"^\| (\w+) \| (\w+) \| (\d+) \| ([\d.]+) \| ([\d.]+) \| ([\d.]+) \| ([\d.]+) \|$", block, flags=re.M)
    assert [q[0] for q in quoted] == ["fleet", "laptop", "phone"]
    for device_class, basis, devices, r, p05, p95, utilisation in quoted:
        row = verdict[(device_class, basis)]
        assert row["is_headline"]
        assert (int(devices), r, p05, p95, utilisation) == (
            row["devices_per_gpu"], ratio_text(row["reduction_factor"]), ratio_text(row["p05"]), ratio_text(row["p95"]),
            f"{row['implied_device_utilisation']:.2f}")
    # the utilisation the tokens imply: 6 N D FLOPs over the class's devices' peak for the job's hours, at most the
    # class's measured share of its peak (the devices are counted at their measured rates against the job's work)
    for device_class in ("laptop", "phone"):
        row, share = verdict[(device_class, "measured_rates")], s[f"{device_class}_fleet_share"]
        online, slowdown = s["device_online_fraction"], s["straggler_slowdown"]
        job_years = fleet[(device_class, "measured_rates")]["job_years"]
        device_seconds = row["devices_per_gpu"] * 64 * online * s["edge_hours_per_day"] * 3600 * 365 * job_years
        expected = share * 6 * s["fleet_model_params"] * s["workload_tokens"] * slowdown / (device_seconds * s[f"{device_class}_tflops"] * 1e12)
        assert row["implied_device_utilisation"] == pytest.approx(expected, rel=1e-9)
        assert row["implied_device_utilisation"] <= s[f"{device_class}_measured_share"] < 0.6
        # the count: the class's share of the job's work per GPU over its measured rate, online and slowed
        work = 6 * s["fleet_model_params"] * s["workload_tokens"] / (64 * 3600 * s["cloud_hours_per_day"] * 365 * job_years) / 1e12
        rate = s[f"{device_class}_measured_share"] * s[f"{device_class}_tflops"]
        exact = work * s["cloud_hours_per_day"] / (rate * s["edge_hours_per_day"] * online / slowdown)
        assert row["devices_per_gpu"] == math.ceil(share * exact - 1e-9)
