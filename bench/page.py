"""The tables of docs/benchmarks.md, rendered from a results file (``python -m bench page``).

Every figure on the page comes from ``bench/results.json``, the committed output of
``python -m bench --json``: the run's machine, load, commit and date, then one table per group
of figures. ``python -m bench page`` rewrites the part of the page between the markers;
``python -m bench page --check`` only says whether it matches, and ``tests/bench/test_bench_page.py``
fails when it does not, so no figure on the page is typed by hand.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from bench.results import RESULTS_FILE, read
from pipelines.paths import PROJECT_ROOT
from pipelines.warehouse.docs import between, replace_between

PAGE = PROJECT_ROOT / "docs" / "benchmarks.md"
BEGIN = "<!-- bench:begin (rendered by `python -m bench page` from bench/results.json; do not edit) -->"
END = "<!-- bench:end -->"


def _cell(text: Any) -> str:
    return str(text).replace("|", "\\|")


def _load(load: list[float] | None) -> str:
    return "unknown" if not load else " / ".join(f"{value:.2f}" for value in load)


def run_table(results: dict[str, Any]) -> str:
    """What the figures were measured on: date, commit, machine, load, arguments."""
    machine = results.get("machine", {})
    commit = results.get("commit") or "unknown"
    rows = [
        ("date (UTC)", results.get("date", "unknown")),
        ("commit", f"`{commit[:12]}`{' with uncommitted changes' if results.get('dirty') else ''}"),
        ("machine", f"{machine.get('cpus')} CPUs ({machine.get('cpu_budget')} for DuckDB), {machine.get('memory_gb')} GB, "
                    f"{machine.get('platform')}, Python {machine.get('python')}"),
        ("load average (1 / 5 / 15 min) at the start and the end", f"{_load(results.get('load_at_start'))}; {_load(results.get('load_at_end'))}"),
        ("command", f"`python -m bench {' '.join(results.get('arguments', []))}`".replace("python -m bench `", "python -m bench`")),
        ("the bench's own time", f"{results.get('bench_seconds', 0):,.0f} s"),
    ]
    lines = ["| run | |", "|---|---|"] + [f"| {name} | {_cell(value)} |" for name, value in rows]
    return "\n".join(lines)


def figure_tables(results: dict[str, Any]) -> str:
    """One table per section of figures: figure, value, target, result."""
    out: list[str] = []
    section = None
    for figure in results.get("figures", []):
        if figure.get("section") != section:
            section = figure.get("section")
            out += ["", f"**{_cell(section or 'figures')}**", "", "| figure | value | target | result |", "|---|---|---|---|"]
        passed = figure.get("passed")
        verdict = "" if passed is None else ("met" if passed else "**not met**")
        out.append(f"| {_cell(figure['name'])} | {_cell(figure['value'])} | {_cell(figure.get('target') or '-')} | {verdict} |")
    return "\n".join(out).strip("\n")


def render(results: dict[str, Any]) -> str:
    """The page's rendered part."""
    return f"{run_table(results)}\n\n{figure_tables(results)}"


def main(argv: list[str] | None = None) -> int:
    """``python -m bench page [--results PATH] [--page PATH] [--check]``."""
    parser = argparse.ArgumentParser(prog="python -m bench page", description=__doc__.split("\n\n")[0])
    parser.add_argument("--results", type=Path, default=RESULTS_FILE, help="the results file (default bench/results.json)")
    parser.add_argument("--page", type=Path, default=PAGE, help="the page (default docs/benchmarks.md)")
    parser.add_argument("--check", action="store_true", help="write nothing; exit 1 if the page does not match the results file")
    args = parser.parse_args(argv)
    body = render(read(args.results))
    text = args.page.read_text(encoding="utf-8")
    if args.check:
        same = between(text, BEGIN, END) == body
        print(f"{args.page}: {'matches' if same else 'does not match'} {args.results}")
        return 0 if same else 1
    args.page.write_text(replace_between(text, BEGIN, END, body), encoding="utf-8")
    print(f"{args.page}: rendered from {args.results}")
    return 0
