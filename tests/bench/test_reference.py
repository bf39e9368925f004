"""The cold run paired with a reference commit: the commit resolved, its tree extracted once, the pairs' ratio."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from bench.__main__ import parse_args
from bench.reference import DEFAULT_REFERENCE, EXTRACTED, extract, paired_ratio, resolve
from pipelines.paths import PROJECT_ROOT


def test_the_reference_is_resolved_or_refused() -> None:
    head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=PROJECT_ROOT, capture_output=True, text=True, check=True).stdout.strip()
    assert resolve(head[:10]) == head and resolve("HEAD") == head
    with pytest.raises(ValueError, match="not in this repository's history"):
        resolve("0" * 40)


def test_the_tree_is_extracted_once(tmp_path: Path) -> None:
    head = resolve("HEAD")
    tree = extract(head, tmp_path)
    assert tree == tmp_path / f"reference-{head[:12]}" and (tree / EXTRACTED).read_text().strip() == head
    assert (tree / "pipelines" / "cli.py").is_file() and (tree / "sources" / "manifest").is_dir()
    (tree / "marker").write_text("kept")
    assert extract(head, tmp_path) == tree and (tree / "marker").read_text() == "kept"  # not extracted again


def test_the_figure_is_the_median_of_the_pairs_ratios() -> None:
    # a busy spell slows both runs of a pair: the pair's ratio holds, the medians of each side would not
    assert paired_ratio([(30.0, 21.0), (60.0, 42.0), (31.0, 40.0)]) == pytest.approx(0.7)


def test_the_default_reference_and_its_switches() -> None:
    args = parse_args([])
    assert args.reference == DEFAULT_REFERENCE == "8a630d1" and not args.skip_reference
    assert parse_args(["--reference", "abc123", "--skip-reference"]).skip_reference
