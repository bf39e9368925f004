"""``edge-carbon scenario new NAME --extends PARENT --from-series SERIES``: a registered power
series, and its measured rate row, as a scenario's power and rate."""

from __future__ import annotations

import csv
import shutil
from pathlib import Path

import duckdb
import pytest

from pipelines.cli import main
from pipelines.ingest.scenarios import names_synthetic_rate, parse_ref
from pipelines.paths import SOURCES_DIR, SOURCES_ENV, WAREHOUSE_ENV
from tests.conftest import build

#: The docs' sample log (an A40), registered twice as the two runs of one series.
SAMPLE = SOURCES_DIR / "power" / "examples" / "gpu_run.csv"
RATE_HEADER = ("throughput_id,device_id,device_class,device_name,model,model_params,precision,method,batch_size,sequence_length,devices,"
               "tokens_per_s,flops_per_param_token,achieved_tflops,reported_tflops,mfu,job_time_s,jobs_per_h,status,citation,"
               "citation_url,notes,series_id,is_synthetic")


def _scaled_copy(target: Path, factor: float) -> None:
    """The sample log with every power reading times ``factor``."""
    header, *lines = SAMPLE.read_text(encoding="utf-8").splitlines()
    scaled = [", ".join([*parts[:3], f"{float(parts[3].removesuffix(' W')) * factor:.2f} W"]) for parts in (line.split(", ") for line in lines)]
    target.write_text("\n".join([header, *scaled]) + "\n", encoding="utf-8")


def _register(argv: list[str]) -> None:
    assert main(argv) == 0, argv


@pytest.fixture(scope="module")
def series_warehouse(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """A copy of sources/ with the series ``mine`` (two A40 runs) and its rate row, and a warehouse of the tables they feed."""
    root = tmp_path_factory.mktemp("series")
    sources = root / "sources"
    shutil.copytree(SOURCES_DIR, sources)
    own = sources / "power" / "own"
    own.mkdir(parents=True, exist_ok=True)
    patch = pytest.MonkeyPatch()
    patch.setenv(SOURCES_ENV, str(sources))
    try:
        for k in (1, 2):
            _scaled_copy(own / f"mine_{k}.csv", 1.0 if k == 1 else 1.1)  # two runs that differ: a 95% CI with a width
            _register(["register", str(own / f"mine_{k}.csv"), "--id", f"mine_r{k}", "--kind", "nvidia_smi", "--title", f"mine {k}",
                       "--option", f"run_id=mine_r{k}", "--option", "device_id=nvidia-a40", "--option", "series_id=mine",
                       "--option", "model=OPT-125M", "--option", "workload=OPT-125M training, mine", "--option", "timezone=UTC"])
        achieved = 6 * 125239296 * 50000 / 1e12
        (own / "mine.rate.csv").write_text(
            RATE_HEADER + "\n"
            + f"mine,nvidia-a40,cloud_gpu,NVIDIA A40,OPT-125M,125239296,bf16,full,8,512,1,50000,6,{achieved!r},,0.25,,,measured,"
              "Run manifest mine.capture.json,https://example.invalid/own-measurement,A test rate.,mine,false\n",
            encoding="utf-8")
        _register(["register", str(own / "mine.rate.csv"), "--id", "mine_rate", "--kind", "curated_training_throughput",
                   "--title", "mine: rate"])
        warehouse = root / "wh" / "edge_carbon.duckdb"
        result = build(warehouse, only=["staging/benchmark_series", "staging/training_throughput", "staging/device_specs"])
        assert result.success, [e.step_key for e in result.all_events if e.is_step_failure]
    finally:
        patch.undo()
    return sources, warehouse


def test_a_gpu_series_sets_the_gpu_power_and_its_rate(series_warehouse: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch,
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    sources, warehouse = series_warehouse
    monkeypatch.setenv(SOURCES_ENV, str(sources))
    monkeypatch.setenv(WAREHOUSE_ENV, str(warehouse))
    capsys.readouterr()
    assert main(["scenario", "new", "gpu_mine", "--extends", "realistic_attributional", "--from-series", "mine"]) == 0
    err = capsys.readouterr().err
    assert "the rate was measured on OPT-125M (1.25e+08 parameters); the scenario trains fleet_model_params = " in err
    with (sources / "scenarios" / "gpu_mine.csv").open(encoding="utf-8", newline="") as handle:
        rows = {row["parameter"]: row for row in csv.DictReader(handle)}
    assert set(rows) == {"cloud_gpu_power_w", "cloud_gpu_measured_tflops"}
    power, rate = rows["cloud_gpu_power_w"], rows["cloud_gpu_measured_tflops"]
    ref = "benchmark_series.series_id=mine.mean_power_w_mean"
    assert (power["value"], power["factor_ref"], power["range_ref"], power["distribution"], power["status"]) == ("", ref, ref, "normal", "measured")
    assert "2 run(s) of OPT-125M on nvidia-a40: 164 W), its 95% CI as the range (range_ref)" in power["reasoning"]
    assert (rate["factor_ref"], rate["status"], rate["unit"]) == ("training_throughput.throughput_id=mine.achieved_tflops", "measured", "TFLOPS")
    local = (sources / "manifest" / "local.toml").read_text(encoding="utf-8")
    assert 'id = "scenario_gpu_mine"' in local and "with the series mine set on the command line" in local
    assert main(["scenario", "remove", "gpu_mine", "--delete-file"]) == 0


@pytest.mark.parametrize(("series", "line"), [
    ("table1_gpu", "scenario new: --from-series table1_gpu: the series is synthetic (its logs are not measurements), so no scenario "
                   "may read it; give a measured series"),
    ("mien", "scenario new: --from-series mien: no such series in {warehouse}; the closest: mine (a series registered since the last "
             "build needs `make run` first)"),
])
def test_a_series_that_cannot_stand_for_a_device_is_refused_in_one_line(series: str, line: str, series_warehouse: tuple[Path, Path],
                                                                       monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    sources, warehouse = series_warehouse
    monkeypatch.setenv(SOURCES_ENV, str(sources))
    monkeypatch.setenv(WAREHOUSE_ENV, str(warehouse))
    capsys.readouterr()
    assert main(["scenario", "new", "refused", "--extends", "realistic_attributional", "--from-series", series, "--dry-run"]) == 2
    assert capsys.readouterr().err.strip().splitlines() == [line.format(warehouse=warehouse)]


def test_without_a_warehouse_it_says_to_build_first(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv(WAREHOUSE_ENV, str(tmp_path / "none.duckdb"))
    assert main(["scenario", "new", "refused", "--extends", "realistic_attributional", "--from-series", "mine", "--dry-run"]) == 2
    assert capsys.readouterr().err.strip().endswith(f"{tmp_path / 'none.duckdb'} does not exist; run `make run` first")


def test_a_scenario_may_not_read_a_synthetic_rate_row() -> None:
    con = duckdb.connect()
    con.execute("create schema staging")
    con.execute("create table staging.training_throughput as select * from (values "
                "('fake_rate', 1.0, true, 's', 'f', 1), ('real_rate', 2.0, null, 's', 'f', 2)) "
                "as t(throughput_id, achieved_tflops, is_synthetic, source_id, source_file, source_row)")
    assert names_synthetic_rate(con, parse_ref("training_throughput.throughput_id=fake_rate.achieved_tflops"))
    assert not names_synthetic_rate(con, parse_ref("training_throughput.throughput_id=real_rate.achieved_tflops"))
    assert not names_synthetic_rate(con, parse_ref("benchmark_series.series_id=fake_rate.energy_j_mean"))
