"""Data-centre nodes in several zones as the edge side (docs/examples/intellect1_dc_nodes.csv): a class's own
grid intensity (<class>_grid_gco2e_per_kwh) on the typed paper_text scenario, no build; then docs/examples/README.md's
commands, as written, add the example to a copy of the sources and build (slow): its rows in the model's
marts, on every basis with its fleet row, and one class's operational carbon by hand from the report's figures."""

from __future__ import annotations

import math
import re
import shlex
import shutil
from pathlib import Path

import duckdb
import polars as pl
import pytest

from pipelines.cli import main
from pipelines.model.formula import evaluate
from pipelines.paths import PROJECT_ROOT, SOURCES_DIR, SOURCES_ENV
from pipelines.warehouse.database import open_readonly
from pipelines.warehouse.queries import query_pl
from schemas.vocabulary import COMPUTE_ONLY, FLEET_CLASS
from tests.conftest import build
from tests.marts.model_rows import CLOUD, LAPTOP, PHONE, scenario_connection

SCENARIO = "intellect1_dc_nodes"
CLASSES = ("h100_node_asia", "h100_node_eu", "h100_node_us")
#: the report's figures (Jaghouar et al. 2024): 10,211,381,248 parameters, 1T tokens, MFU midpoint 0.388, 83%
#: compute utilisation across continents; the H100 SXM's 989.5 TFLOPS BF16 peak; 112 GPUs in the single site
PARAMS, TOKENS, MFU, UTILISATION, PEAK, GPUS = 10_211_381_248, 1e12, 0.388, 0.83, 989.5, 112
#: one GPU's power with its host share, at 76% of its rating and a PUE of 1.1: (700 + 575) x 0.76 x 1.1
NODE_GPU_W = (700 + 575) * 0.76 * 1.1
#: Ember's 2024 annual life-cycle averages (marts.grid_annual) the classes and the single site read
GRIDS = {"h100_node_us": ("US", 383.55), "h100_node_eu": ("EUROPE", 284.17), "h100_node_asia": ("ASIA", 573.07)}


def compute_only(con: duckdb.DuckDBPyConnection) -> dict[str, dict]:
    """The headline rows without communication (the pattern that moves no bytes), by device class."""
    return {r["device_class"]: r for r in evaluate(con).filter(pl.col("pattern") == COMPUTE_ONLY).iter_rows(named=True)}


def test_a_class_with_its_own_grid_is_charged_at_it_and_the_others_keep_the_scenarios() -> None:
    """paper_text with laptop_grid_gco2e_per_kwh = 100: the 15 stated laptops' operational carbon is
    15 x 15 W x 8 h x 365 x 3 y at 100 g/kWh instead of 367; the phones and the cloud keep 367."""
    con = scenario_connection()
    con.execute("alter table core.scenarios add column laptop_grid_gco2e_per_kwh double")
    con.execute("update core.scenarios set laptop_grid_gco2e_per_kwh = 100")
    rows = compute_only(con)
    assert rows["laptop"]["edge_operational_kgco2e"] == pytest.approx(LAPTOP * 100 / 367, rel=1e-12)  # 197.1
    assert rows["phone"]["edge_operational_kgco2e"] == pytest.approx(PHONE, rel=1e-12)
    assert rows["laptop"]["cloud_total_kgco2e"] == pytest.approx(CLOUD, rel=1e-12)
    assert rows["laptop"]["reduction_factor"] == pytest.approx(CLOUD / (LAPTOP * 100 / 367), rel=1e-12)
    # unset, the scenario's edge grid: the paper's R
    plain = compute_only(scenario_connection())
    assert plain["laptop"]["reduction_factor"] == pytest.approx(CLOUD / LAPTOP, rel=1e-12)


def docs_commands() -> list[str]:
    """The shell lines of docs/examples/README.md's dc-nodes block, continuations joined."""
    text = (PROJECT_ROOT / "docs" / "examples" / "README.md").read_text(encoding="utf-8")
    block = text[text.index("<!-- dc-nodes:begin -->"):text.index("<!-- dc-nodes:end -->")]
    body = block.split("```bash\n", 1)[1].split("```", 1)[0].replace("\\\n", " ")
    return [line.strip() for line in body.splitlines() if line.strip()]


@pytest.fixture(scope="module")
def dc_warehouse(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """docs/examples/README.md's commands on a copy of the sources: the example copied in, registered, built."""
    root = tmp_path_factory.mktemp("dc_nodes")
    shutil.copytree(SOURCES_DIR, root / "sources")
    (root / "docs" / "examples").mkdir(parents=True)
    shutil.copyfile(PROJECT_ROOT / "docs" / "examples" / "intellect1_dc_nodes.csv", root / "docs" / "examples" / "intellect1_dc_nodes.csv")
    commands = docs_commands()
    assert [c.split()[0] for c in commands] == ["cp", ".venv/bin/edge-carbon", "make", ".venv/bin/edge-carbon"]
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv(SOURCES_ENV, str(root / "sources"))
        patch.chdir(root)
        source, target = shlex.split(commands[0])[1:]
        shutil.copy(root / source, root / target)
        assert main(shlex.split(commands[1])[1:]) == 0
        path = root / "wh" / "edge_carbon.duckdb"
        result = build(path, default=True)
        assert result.success, [e.step_key for e in result.all_events if e.is_step_failure]
    with open_readonly(path) as con:  # the docs' query runs
        assert query_pl(con, re.search(r'sql "(.*)"', commands[3], re.S).group(1)).height == len(CLASSES) + 1
    return path


@pytest.mark.slow
def test_the_dc_nodes_scenario_has_every_basis_with_its_fleet_in_the_marts(dc_warehouse: Path) -> None:
    with open_readonly(dc_warehouse) as con:
        evaluated = query_pl(con, "select distinct basis, device_class from core.model_evaluation "
                                  "where scenario_id = $s and pattern = 'diloco_allreduce'", {"s": SCENARIO})
        verdict = query_pl(con, "select distinct basis, device_class, is_headline from marts.verdict where scenario_id = $s",
                           {"s": SCENARIO})
        fleet = query_pl(con, "select distinct basis, device_class from marts.fleet_equivalence where scenario_id = $s",
                         {"s": SCENARIO})
        lifecycle = query_pl(con, "select distinct device_class from marts.lifecycle_carbon where scenario_id = $s",
                             {"s": SCENARIO})
        bases = query_pl(con, "select basis from core.bases").get_column("basis").to_list()
    # every basis the classes have figures for: all but measured_rates (no measured share of an FP32 peak)
    expected = {(b, c) for b in bases if b != "measured_rates" for c in (*CLASSES, FLEET_CLASS)}
    assert set(evaluated.rows()) == expected
    assert set(fleet.rows()) == expected
    # no verdict rows: the scenario names INTELLECT-1's bandwidth claim, not a cloud/edge ratio claim, so no
    # ratio bounds judge it (core.claim); its R is the derived result in core.model_evaluation and fleet_equivalence
    assert verdict.height == 0
    assert set(lifecycle.get_column("device_class")) == {"cloud_gpu", *CLASSES}  # per unit: no fleet row


@pytest.mark.slow
def test_one_class_operational_carbon_by_hand(dc_warehouse: Path) -> None:
    """The Asian class on measured_throughput: the single site's job is 6 N D / (112 x 989.5 TFLOPS x 0.388) s; one
    geo-distributed GPU takes 6 N D / (989.5 TFLOPS x 0.388) / 0.83 s for it, so a quarter of the job needs
    ceil(112 / 0.83 / 4) = 34 GPUs, each drawing 1,065.9 W around the clock at Asia's 573.07 g/kWh."""
    flops = 6 * PARAMS * TOKENS
    cluster_s = flops / (GPUS * PEAK * 1e12 * MFU)  # 1,424,853 s, 16.5 days
    gpu_job_s = flops / (PEAK * 1e12 * MFU) / UTILISATION  # 192,269,380 s
    job_years = cluster_s / (3600 * 24 * 365)
    devices = math.ceil(0.25 * gpu_job_s / cluster_s - 1e-9)
    assert devices == 34
    per_gpu = NODE_GPU_W * 24 * 365 * job_years * 573.07 / 1e6
    with open_readonly(dc_warehouse) as con:
        row = query_pl(con, "select devices, job_years, device_operational_kgco2e, edge_operational_kgco2e, reduction_factor "
                            "from core.model_evaluation where family = 'base' and scenario_id = $s and device_class = 'h100_node_asia' "
                            "and basis = 'measured_throughput' and pattern = 'none' and is_headline_method",
                       {"s": SCENARIO}).row(0, named=True)
        grids = dict(query_pl(con, "select zone, gco2e_per_kwh from marts.grid_annual where year = 2024 "
                                   "and zone in ('US', 'EUROPE', 'ASIA')").rows())
        own = dict(query_pl(con, "select device_class, class_grid_gco2e_per_kwh from core.scenario_devices "
                                 "where scenario_id = $s", {"s": SCENARIO}).rows())
    assert row["job_years"] == pytest.approx(job_years, rel=1e-6)
    assert row["devices"] == devices
    assert row["device_operational_kgco2e"] == pytest.approx(per_gpu, rel=1e-6)  # 241.8 kg per GPU
    assert row["edge_operational_kgco2e"] == pytest.approx(devices * per_gpu, rel=1e-6)  # 8,220 kg
    # each class's grid is the shipped Ember row of its zone
    assert own == {c: grids[zone] for c, (zone, _) in GRIDS.items()}
    assert {c: ci for c, (_, ci) in GRIDS.items()} == own
