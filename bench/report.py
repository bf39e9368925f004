"""A benchmark run's figures: each printed as it is measured, then the summary table and the results file."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass
class Figure:
    """One line of the summary table."""

    name: str
    value: str
    target: str = ""
    passed: bool | None = None
    #: The figure's group in the rendered page (docs/benchmarks.md).
    section: str = ""


@dataclass
class Report:
    """Everything measured, for the summary table and the exit status."""

    figures: list[Figure] = field(default_factory=list)
    fatal: list[str] = field(default_factory=list)
    #: Named numbers for the results file (``--json``): ``ingest_peak_memory_file_ratio`` and the like.
    values: dict[str, Any] = field(default_factory=dict)
    #: The section the next figures belong to.
    section: str = ""

    def add(self, name: str, value: str, target: str = "", passed: bool | None = None, **values: Any) -> None:
        """Append a figure, print it at once, and record ``values`` under their names."""
        figure = Figure(name, value, target, passed, self.section)
        self.figures.append(figure)
        self.values.update(values)
        verdict = "" if passed is None else (" PASS" if passed else " FAIL")
        against = f" (target {target})" if target else ""
        print(f"  => {name}: {value}{against}{verdict}", flush=True)

    def begin(self, section: str) -> None:
        """Start a section of figures (a table of the rendered page) and say so."""
        self.section = section
        print(f"{section}:", flush=True)


def print_table(report: Report) -> None:
    """The compact summary."""
    rows = [("figure", "value", "target", "result")] + [
        (f.name, f.value, f.target or "-", "" if f.passed is None else ("PASS" if f.passed else "FAIL")) for f in report.figures
    ]
    widths = [max(len(row[i]) for row in rows) for i in range(4)]
    print()
    for i, row in enumerate(rows):
        print("  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True)).rstrip())
        if i == 0:
            print("  ".join("-" * width for width in widths))
