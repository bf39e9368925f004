"""docs/benchmarks.md's figures are bench/results.json's: rendered by ``python -m bench page``, never typed."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from bench import page, results
from bench.__main__ import parse_args, remove_generated
from bench.report import Report
from pipelines.warehouse.docs import between

#: What the issue asks the results file to name, whatever else it holds.
REQUIRED_KEYS = ("ingest_peak_memory_file_ratio", "ingest_floor_ratio", "cold_run_s", "cold_run_cpu_s", "monte_carlo_peak_gib")


def test_the_page_is_rendered_from_the_committed_results_file() -> None:
    committed = results.read()
    text = page.PAGE.read_text(encoding="utf-8")
    assert between(text, page.BEGIN, page.END) == page.render(committed), (
        "docs/benchmarks.md does not match bench/results.json: run `python -m bench page`")


def test_the_committed_results_name_the_run_and_its_figures() -> None:
    committed = results.read()
    for key in REQUIRED_KEYS:
        assert isinstance(committed[key], int | float), key
    assert len(committed["commit"]) == 40 and committed["date"].endswith("Z")
    assert committed["machine"]["cpus"] >= 1 and len(committed["load_at_start"]) == 3
    shown = {figure["value"] for figure in committed["figures"]}
    assert f"{committed['cold_run_s']:.1f} s" in shown
    # the figure shows the ratio to 2 decimals, the results keep it to 3: 1.105 may show as 1.11
    ratios = [float(m.group(1)) for value in shown if (m := re.search(r"\(([0-9.]+)x file\)", value))]
    assert any(abs(r - committed["ingest_peak_memory_file_ratio"]) <= 0.005 + 1e-9 for r in ratios), ratios


def test_render_shows_each_figure_once_in_its_section() -> None:
    data = {"date": "2026-12-01T00:00:00Z", "commit": "a" * 40, "dirty": False, "arguments": ["--quick"], "bench_seconds": 12.0,
            "machine": {"cpus": 2, "cpu_budget": 2, "memory_gb": 24.0, "platform": "Linux", "python": "3.11.7"},
            "load_at_start": [0.1, 0.2, 0.3], "load_at_end": [0.4, 0.5, 0.6],
            "figures": [{"section": "ingest", "name": "peak | memory", "value": "1 MB", "target": "<= 2 MB", "passed": True},
                        {"section": "ingest", "name": "speed", "value": "3 s", "target": "", "passed": False},
                        {"section": "cold run", "name": "cold", "value": "9 s", "target": "", "passed": None}]}
    body = page.render(data)
    assert "| commit | `aaaaaaaaaaaa` |" in body and "| command | `python -m bench --quick` |" in body
    assert "0.10 / 0.20 / 0.30; 0.40 / 0.50 / 0.60" in body
    assert body.count("**ingest**") == 1 and body.count("**cold run**") == 1
    assert "| peak \\| memory | 1 MB | <= 2 MB | met |" in body and "| speed | 3 s | - | **not met** |" in body
    assert "| cold | 9 s | - |  |" in body


def test_page_command_writes_and_checks(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    source = tmp_path / "results.json"
    source.write_text(json.dumps({**results.read(), "bench_seconds": 1.0}), encoding="utf-8")
    target = tmp_path / "benchmarks.md"
    target.write_text(f"intro\n\n{page.BEGIN}\nstale\n{page.END}\n\nafter\n", encoding="utf-8")
    assert page.main(["--results", str(source), "--page", str(target), "--check"]) == 1
    assert page.main(["--results", str(source), "--page", str(target)]) == 0
    assert page.main(["--results", str(source), "--page", str(target), "--check"]) == 0
    text = target.read_text(encoding="utf-8")
    assert text.startswith("intro\n\n") and text.endswith("\n\nafter\n") and "stale" not in text
    assert "| the bench's own time | 1 s |" in text


def test_report_records_named_values_and_prints_each_figure(capsys: pytest.CaptureFixture[str]) -> None:
    report = Report()
    report.begin("ingest")
    report.add("peak", "1 MB", "<= 2 MB", True, ingest_peak_memory_file_ratio=0.5)
    out = capsys.readouterr().out
    assert out == "ingest:\n  => peak: 1 MB (target <= 2 MB) PASS\n"
    assert report.values == {"ingest_peak_memory_file_ratio": 0.5} and report.figures[0].section == "ingest"


def test_quick_leaves_out_the_large_log_the_fleet_and_the_suite() -> None:
    args = parse_args(["--quick", "--json", "out.json"])
    assert (args.large_samples, args.skip_fleet, args.skip_tests, args.keep) == (0, True, True, False)
    assert args.json == Path("out.json")
    full = parse_args([])
    assert full.large_samples > 0 and not full.skip_fleet and not full.skip_tests
    assert parse_args(["--quick", "--large-samples", "1000"]).large_samples == 1000


def test_generated_logs_are_removed(tmp_path: Path) -> None:
    out = tmp_path / "out"
    (out / "fleet_3x200").mkdir(parents=True)
    (out / "fleet_3x200" / "log.csv").write_text("x")
    for name in ("nvidia_smi_5000000_2gpu_seed7.csv", "nvidia_smi_10_2gpu_seed7.csv.part"):
        (out / name).write_text("x")
    removed = remove_generated(out)
    assert [p.name for p in removed] == ["fleet_3x200", "nvidia_smi_10_2gpu_seed7.csv.part", "nvidia_smi_5000000_2gpu_seed7.csv"]
    assert not out.exists()
