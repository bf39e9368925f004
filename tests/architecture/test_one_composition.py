"""One composition: each carbon term is computed once, in the model, and the marts read it.

Two builds of temporary copies, each checked against a hand computation from the inputs:

* a ``workload_kind`` gpu_hours job (accelerator-hours) and a params_tokens job (parameters x
  tokens), added by scenario rows the documented way (``edge-carbon register``): their job lasts
  ``job_years``, not the scenario's ``horizon_years``, and marts.lifecycle_carbon and the model
  count every term over it;
* the claim's bounds changed in its row of the claims registry (sources/curated/claims.csv) and the
  categories' wording in its vocabulary row (schemas/vocabulary.py), in a copy of the project:
  core.claim, marts.verdict's categories and the verdict chart's band (the index's lead chart)
  move with them;
* in the same copy, a fourth accounting frame added by one vocabulary row and a scenario file
  naming it: core.frames holds it, marts.verdict and marts.lifecycle_carbon have its rows, and its
  figures are those of the frames whose rules it borrows;
* and a ninth equivalence basis added by one vocabulary row: core.bases holds it, and
  marts.fleet_sizing and marts.fleet_equivalence have its rows, equal to those of the basis whose
  rules it borrows.
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
from pipelines.paths import SOURCES_DIR, SOURCES_ENV
from tests.conftest import build
from tests.helpers import copy_project, touched_files

pytestmark = pytest.mark.slow

HEADER = "parameter,value,unit,low,high,distribution,status,factor_ref,reasoning,range_ref\n"
#: A job of 8,760 accelerator-hours: on the paper's one GPU at 24 h a day, one year (the horizon is 3).
GPU_HOURS = HEADER + (
    "workload_kind,gpu_hours,name,,,point,assumed,,The job as accelerator-hours (test value).,\n"
    "workload_gpu_hours,8760,h,,,point,assumed,,One GPU-year (test value).,\n"
)
#: A job of fleet_model_params x 2e10 tokens at 40% of the accelerator's FP16 peak.
PARAMS_TOKENS = HEADER + (
    "workload_kind,params_tokens,name,,,point,assumed,,The job as parameters x tokens (test value).,\n"
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
    if s["workload_kind"] == "gpu_hours":
        gpu_hours = s["workload_gpu_hours"]
    else:  # 6 N D FLOPs at workload_mfu of the (main) accelerator's FP16 peak
        assert s["workload_kind"] == "params_tokens" and s["cloud_gpu_variant"] == 0
        gpu_hours = 6 * s["fleet_model_params"] * s["workload_tokens"] / (s["cloud_gpu_fp16_tflops"] * 1e12 * s["workload_mfu"]) / 3600
    return gpu_hours / (s["cloud_gpu_count"] * s["cloud_hours_per_day"] * 365)


def hand_lifecycle(s: dict, devices: list[dict]) -> dict[str, tuple[float, float]]:
    """(embodied, operational) kgCO2e per device class over the job, by hand."""
    t = hand_job_years(s)
    share = min(t / s["cloud_embodied_life_years"], 1) if s["accounting_frame"] == "attributional" else 1.0
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
    # the devices the model reads: the scenario's own parameter set's rows (core.variant_devices, variant base)
    devices = rows(jobs_warehouse, "select * from core.variant_devices where scenario_id = ? and variant_id = 'base' order by device_class",
                   [scenario_id])
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


#: Run in the copy: refresh the digest of the claims registry, register the scenarios written beside it (a scenario id -> its parent), build
#: marts.verdict and marts.lifecycle_carbon, draw the verdict page (the index's lead chart) and
#: evaluate the model with every network method a frame admits.
COPY_SCRIPT = textwrap.dedent("""
    import json, sys
    from pathlib import Path

    import duckdb

    from dashboards import verdict as page
    from pipelines.cli import main
    from pipelines.model.formula import evaluate, scenario_inputs
    from tests.conftest import build

    path, added = Path(sys.argv[1]), json.loads(sys.argv[2])
    assert main(["register", "--refresh", "curated_claims"]) == 0
    for scenario_id, parent in added.items():
        assert main(["register", f"sources/scenarios/{scenario_id}.csv", "--id", f"scenario_{scenario_id}", "--kind", "scenario",
                     "--title", f"{scenario_id} (test)", "--status", "assumed", "--option", f"scenario_id={scenario_id}",
                     "--option", f"extends={parent}"]) == 0
    result = build(path, only=["marts/verdict", "marts/lifecycle_carbon", "marts/fleet_sizing", "marts/fleet_equivalence"])
    assert result.success, [e.step_key for e in result.all_events if e.is_step_failure]
    with duckdb.connect(str(path), read_only=True) as con:
        claim = con.execute("select distinct claim_low, claim_high from core.claim").fetchall()
        verdicts = con.execute("select scenario_id, basis, device_class, network_method, verdict_if_feasible, claim_low, claim_high "
                               "from marts.verdict order by all").fetchall()
        frames = con.execute("select accounting_frame, amortises_cloud_embodied, network_energy_rule, headline_network_method, "
                             "resizes_fleet from core.frames order by position").fetchall()
        scenarios = con.execute("select scenario_id, accounting_frame from core.scenarios order by all").fetchall()
        lifecycle = con.execute("select scenario_id, device_class, embodied_kgco2e, operational_kgco2e, embodied_rule "
                                "from marts.lifecycle_carbon order by all").fetchall()
        model = evaluate(con, scenario_inputs(con), patterns=("pipeline",), methods="network").select(
            "scenario_id", "device_class", "network_method", "devices", "comm_kwh", "edge_embodied_kgco2e",
            "cloud_embodied_per_gpu_kgco2e").rows()
        spec = page.build(con).charts["verdict"].to_dict()
        bases = [r[0] for r in con.execute("select basis from core.bases order by position").fetchall()]
        sizing = con.execute("select scenario_id, device_class, model_id, basis, devices from marts.fleet_sizing order by all").fetchall()
        equivalence = con.execute("select scenario_id, device_class, basis, devices_per_gpu from marts.fleet_equivalence "
                                  "order by all").fetchall()
    print(json.dumps({"claim": claim, "verdicts": verdicts, "frames": frames, "scenarios": scenarios, "lifecycle": lifecycle,
                      "model": model, "spec": spec, "bases": bases, "sizing": sizing, "equivalence": equivalence}, default=str))
""")
#: A fourth accounting frame, as one entry of schemas/vocabulary.py FRAMES: the attributional
#: frame's embodied rules (the node amortised, embodied carbon per use hour) with the
#: consequential frame's network method (marginal power); like both, it charges the receiving radio.
FOURTH_FRAME = "attributional_marginal"
FRAME_ENTRY = (
    f'    "{FOURTH_FRAME}": Frame(\n'
    '        "Attributional embodied rules with the marginal network method (a test frame).",\n'
    '        amortises_cloud_embodied=True, network_energy_rule="marginal", network_methods=("marginal",),\n'
    '        resizes_fleet=True, edge_embodied_policy="per_use_hour", requires_network_factors=True,\n'
    '        charges_receiving_radio=True),\n'
)
#: A scenario in the fourth frame: realistic_attributional with the marginal power model the
#: consequential scenario reads (the same staged rows).
FRAME_SCENARIO = "realistic_attributional_marginal"
FRAME_CSV = HEADER + (
    f"accounting_frame,{FOURTH_FRAME},name,,,point,assumed,,The fourth frame (test).,\n"
    "network_marginal_w_per_mbps,,W/(Mbit/s),,,point,primary,network_energy.factor_id=malmodin2020_fixed_core_marginal.value,"
    "Marginal core power (test).,\n"
    "router_marginal_w_per_mbps,,W/(Mbit/s),,,point,primary,network_energy.factor_id=malmodin2020_fixed_cpe_access_marginal.value,"
    "Marginal router power (test).,\n"
)


#: A ninth equivalence basis, as one entry of schemas/vocabulary.py BASIS_RULES: peak_fp16's rules
#: under another name, so its counts are peak_fp16's, row for row.
NEW_BASIS = "peak_fp16_copy"
BASIS_ENTRY = (
    f'    "{NEW_BASIS}": Basis("Peak FP16/BF16 FLOPS again (a test basis).", "TFLOPS", False, False, False, fp16_peak=1.0),\n'
)


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


def edit_vocabulary(root: Path, old: str, new: str) -> None:
    """Replace the one occurrence of ``old`` in the copy's schemas/vocabulary.py with ``new``."""
    vocabulary = root / "schemas" / "vocabulary.py"
    text = vocabulary.read_text(encoding="utf-8")
    assert text.count(old) == 1, f"{old!r} is one row of schemas/vocabulary.py"
    vocabulary.write_text(text.replace(old, new), encoding="utf-8")


def copy_build(root: Path, bounds: tuple[float, float] | None, *, fourth_frame: bool = False) -> dict:
    """A copy of the project at ``root``, its claim's row changed to ``bounds`` and, with
    ``fourth_frame``, a fourth accounting frame added by one vocabulary row and a scenario naming
    it; built, its verdict page drawn and its model evaluated (:data:`COPY_SCRIPT`)."""
    root.mkdir(parents=True)
    copy_project(root)
    if bounds is not None:
        registry = root / "sources" / "curated" / "claims.csv"
        text = registry.read_text(encoding="utf-8")
        assert text.count("reduction_factor,x,4,8,") == 2, "Xue et al.'s rows of the claims registry (the figure's counts, the text's)"
        registry.write_text(text.replace("reduction_factor,x,4,8,", f"reduction_factor,x,{bounds[0]!r},{bounds[1]!r},"), encoding="utf-8")
        edit_vocabulary(root, "CLAIM_LOW = 4.0\nCLAIM_HIGH = 8.0\n", f"CLAIM_LOW = {bounds[0]!r}\nCLAIM_HIGH = {bounds[1]!r}\n")
    added = {}
    if fourth_frame:
        edit_vocabulary(root, "\n}\nACCOUNTING_FRAMES = tuple(FRAMES)\n", "\n" + FRAME_ENTRY + "}\nACCOUNTING_FRAMES = tuple(FRAMES)\n")
        edit_vocabulary(root, "\n}\nBASES = tuple(BASIS_RULES)\n", "\n" + BASIS_ENTRY + "}\nBASES = tuple(BASIS_RULES)\n")
        (root / "sources" / "scenarios" / f"{FRAME_SCENARIO}.csv").write_text(FRAME_CSV, encoding="utf-8")
        added[FRAME_SCENARIO] = "realistic_attributional"
    env = {k: v for k, v in os.environ.items() if k != SOURCES_ENV} | {"PYTHONPATH": str(root)}
    done = subprocess.run([sys.executable, "-c", COPY_SCRIPT, str(root / "wh" / "edge_carbon.duckdb"), json.dumps(added)], cwd=root,
                          env=env, capture_output=True, text=True, timeout=600, check=False)
    assert done.returncode == 0, done.stderr[-4000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


@pytest.fixture(scope="module")
def copies(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[Path, dict]]:
    """Two builds of copies of the project: as shipped, and with the claim's bounds moved and a
    fourth accounting frame added, each by rows only (one build serves both tests)."""
    root = tmp_path_factory.mktemp("copies")
    return {"shipped": (root / "shipped", copy_build(root / "shipped", None)),
            "moved": (root / "moved", copy_build(root / "moved", (1.5, 2.5), fourth_frame=True))}


def test_the_claims_bounds_move_the_verdict_and_the_band(copies: dict[str, tuple[Path, dict]]) -> None:
    shipped, moved = copies["shipped"][1], copies["moved"][1]
    assert shipped["claim"] == [[4.0, 8.0]] and moved["claim"] == [[1.5, 2.5]]
    assert band_of(shipped["spec"]) == [(4.0, 8.0)]
    assert band_of(moved["spec"]) == [(1.5, 2.5)]
    before = {tuple(r[:4]): r[4:] for r in shipped["verdicts"]}
    after = {tuple(r[:4]): r[4:] for r in moved["verdicts"]}
    assert {k[0] for k in set(after) - set(before)} == {FRAME_SCENARIO} and set(before) <= set(after)
    assert {tuple(v[1:]) for v in after.values()} == {(1.5, 2.5)}
    # the categories read the new low end: their wording names it, and rows between the two ends change category
    read = [v[0] for v in after.values() if v[0].startswith(("claim", "below"))]
    assert read and all("1.5" in v and "4" not in v for v in read), read
    assert any(before[k][0].startswith("below") and not after[k][0].startswith("below") for k in before)


def test_a_fourth_accounting_frame_by_rows(copies: dict[str, tuple[Path, dict]]) -> None:
    """One vocabulary row (and a scenario naming it) adds a frame the model evaluates: its rules are
    the rows it was given, so its figures are those of the frames whose rules it borrows."""
    root, moved = copies["moved"]
    assert set(touched_files(root)) == {"schemas/vocabulary.py", f"sources/scenarios/{FRAME_SCENARIO}.csv", "sources/manifest/local.toml",
                                        "sources/curated/claims.csv", "sources/manifest/claims.toml"}
    frames = {r[0]: r[1:] for r in moved["frames"]}
    assert list(frames) == ["as_published", "attributional", "consequential", FOURTH_FRAME]
    assert frames[FOURTH_FRAME] == [True, "marginal", "marginal", True]
    assert dict(moved["scenarios"])[FRAME_SCENARIO] == FOURTH_FRAME
    verdicts = [r for r in moved["verdicts"] if r[0] == FRAME_SCENARIO]
    assert verdicts and {r[3] for r in verdicts} == {"marginal"}

    # the cloud node's embodied carbon: amortised, as the attributional frame charges it (not the consequential's full charge)
    lifecycle = {(r[0], r[1]): r[2:] for r in moved["lifecycle"]}
    ours, attributional = lifecycle[(FRAME_SCENARIO, "cloud_gpu")], lifecycle[("realistic_attributional", "cloud_gpu")]
    assert ours[0] == pytest.approx(attributional[0], rel=1e-12) and ours[2] == attributional[2]
    assert ours[0] < lifecycle[("realistic_consequential", "cloud_gpu")][0]
    assert {k[1] for k in lifecycle if k[0] == FRAME_SCENARIO} == {k[1] for k in lifecycle if k[0] == "realistic_attributional"}

    # the network energy of the same fleet: the consequential frame's marginal power; its edge embodied the attributional's
    model = {(r[0], r[1], r[2]): r[3:] for r in moved["model"]}
    classes = sorted({k[1] for k in model if k[0] == FRAME_SCENARIO})
    assert classes and {k[2] for k in model if k[0] == FRAME_SCENARIO} == {"marginal"}
    for device_class in classes:
        devices, comm_kwh, edge_embodied, cloud_embodied = model[(FRAME_SCENARIO, device_class, "marginal")]
        consequential = model[("realistic_consequential", device_class, "marginal")]
        attributional = model[("realistic_attributional", device_class, "time")]
        assert devices == consequential[0] == attributional[0]
        assert comm_kwh == pytest.approx(consequential[1], rel=1e-12) and comm_kwh != pytest.approx(attributional[1])
        assert edge_embodied == pytest.approx(attributional[2], rel=1e-12) and edge_embodied != pytest.approx(consequential[2])
        assert cloud_embodied == pytest.approx(attributional[3], rel=1e-12)


def test_a_basis_by_one_row(copies: dict[str, tuple[Path, dict]]) -> None:
    """One vocabulary row adds an equivalence basis: its rows are in the basis-keyed marts with no other
    change (marts.fleet_sizing is one row per basis), and they equal the rows of the basis whose rules it borrows."""
    shipped, moved = copies["shipped"][1], copies["moved"][1]
    assert moved["bases"] == [*shipped["bases"], NEW_BASIS]
    for table, key in (("sizing", 3), ("equivalence", 2)):
        rows = {tuple(r[:key + 1]): r[key + 1] for r in moved[table]}
        assert {tuple(r[:key + 1]): r[key + 1] for r in shipped[table]}.items() <= rows.items(), table
        copied = {k[:key]: v for k, v in rows.items() if k[key] == NEW_BASIS}
        original = {k[:key]: v for k, v in rows.items() if k[key] == "peak_fp16"}
        assert copied and copied == original, table


def test_every_mart_has_its_tests_by_name() -> None:
    """A contributor finds a mart's tests by its name: tests/marts/test_<table>.py (or test_<table>_<what>.py)
    for every table of the marts schema, each a given-rows -> expected-rows test that needs no build."""
    from pipelines.definitions import defs

    marts = sorted(key.path[1] for key in defs.resolve_asset_graph().get_all_asset_keys() if key.path[0] == "marts")
    files = {path.stem for path in (Path(__file__).resolve().parents[1] / "marts").glob("test_*.py")}
    missing = [table for table in marts if not any(f == f"test_{table}" or f.startswith(f"test_{table}_") for f in files)]
    assert len(marts) >= 20 and missing == []
