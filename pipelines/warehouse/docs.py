"""The verdict in the docs, rendered from the warehouse: README.md's table, docs/findings.md and docs/validation.md.

Every number in these sections is read from ``marts.verdict``, ``marts.uncertainty_drivers`` and
``marts.validation`` of a published warehouse (``edge-carbon docs``); ``tests/test_docs.py`` renders them again from
a fresh build and compares, so a copied number cannot go stale.
"""

from __future__ import annotations

from pathlib import Path

import duckdb

from pipelines.warehouse.queries import query_pl

BEGIN = "<!-- verdict:begin (rendered by `edge-carbon docs` from marts.verdict; do not edit) -->"
END = "<!-- verdict:end -->"
REPRODUCTION_BEGIN = "<!-- reproduction:begin (rendered by `edge-carbon docs` from marts.paper_reproduction) -->"
REPRODUCTION_END = "<!-- reproduction:end -->"
DRIVERS_BEGIN = "<!-- drivers:begin (rendered by `edge-carbon docs` from marts.uncertainty_drivers) -->"
DRIVERS_END = "<!-- drivers:end -->"
VALIDATION_BEGIN = "<!-- validation:begin (rendered by `edge-carbon docs` from marts.validation) -->"
VALIDATION_END = "<!-- validation:end -->"
#: Sobol base samples of the full study whose drivers docs/findings.md quotes.
FULL_STUDY_BASE_SAMPLES = 8192


def _r(value: float) -> str:
    return f"{value:.2f}"


def verdict_table(con: duckdb.DuckDBPyConnection) -> str:
    """marts.verdict as a Markdown table (headline basis first per scenario and class)."""
    frame = query_pl(con, "select * from marts.verdict order by accounting_frame, scenario_id, device_class, is_headline desc, basis")
    lines = [
        "| scenario | frame | basis | device | devices per GPU | R compute only | p05-p95 | R with communication (pattern) | p05-p95 "
        "| link use | verdict |",
        "|---|---|---|---|---:|---:|---|---:|---|---:|---|",
    ]
    for r in frame.iter_rows(named=True):
        basis = f"**{r['basis']}**" if r["is_headline"] else r["basis"]
        lines.append(
            f"| {r['scenario_id']} | {r['accounting_frame']} | {basis} | {r['device_class']} | {r['devices_per_gpu']:,.0f} "
            f"| {_r(r['reduction_factor'])} | {_r(r['p05'])}-{_r(r['p95'])} "
            f"| {_r(r['reduction_factor_with_comm'])} ({r['comm_pattern']}) | {_r(r['p05_with_comm'])}-{_r(r['p95_with_comm'])} "
            f"| {r['link_time_share']:.2f} | {r['verdict']} |"
        )
    return "\n".join(lines)


def reproduction_table(con: duckdb.DuckDBPyConnection) -> str:
    """marts.paper_reproduction as a Markdown table."""
    frame = query_pl(con, "select claim_id, paper_value_text, reproduced_value_text, status from marts.paper_reproduction order by claim_id")
    lines = ["| claim | paper | ours | status |", "|---|---|---|---|"]
    lines += [f"| `{c}` | {p} | {r} | {s} |" for c, p, r, s in frame.iter_rows()]
    return "\n".join(lines)


def drivers_table(con: duckdb.DuckDBPyConnection, top: int = 3) -> str:
    """The top Sobol drivers of log R (compute only) per scenario and class, with the CI width of S1."""
    frame = query_pl(con, """
        select scenario_id, device_class, parameter, s1, 2 * s1_ci95 as s1_ci_width, st, base_samples, rank
        from marts.uncertainty_drivers
        where pattern = 'none' and rank <= $top
        order by scenario_id, device_class, rank
    """, {"top": top})
    samples = sorted(set(frame.get_column("base_samples").to_list()))
    lines = [
        f"Sobol base samples: {', '.join(str(s) for s in samples)}.",
        "",
        "| scenario | device | rank | parameter | S1 | S1 95% CI width | ST |",
        "|---|---|---:|---|---:|---:|---:|",
    ]
    for r in frame.iter_rows(named=True):
        lines.append(f"| {r['scenario_id']} | {r['device_class']} | {r['rank']} | {r['parameter']} | {r['s1']:.3f} "
                     f"| {r['s1_ci_width']:.3f} | {r['st']:.3f} |")
    return "\n".join(lines)


def _v(value: float) -> str:
    """A published or computed value: whole with thousands separators from 1,000, else 4 significant digits."""
    return f"{value:,.0f}" if abs(value) >= 1000 else f"{value:.4g}"


def validation_table(con: duckdb.DuckDBPyConnection) -> str:
    """marts.validation as a Markdown table, then the largest errors per mode."""
    frame = query_pl(con, "select * from marts.validation order by case_id, mode, metric")
    lines = ["| case | mode | metric | published | ours | error | LLMCarbon | LLMCarbon error | weakest input |",
             "|---|---|---|---:|---:|---:|---:|---:|---|"]
    for r in frame.iter_rows(named=True):
        llm = ("", "") if r["llmcarbon_value"] is None else (_v(r["llmcarbon_value"]), f"{r['llmcarbon_relative_error']:+.1%}")
        lines.append(f"| `{r['case_id']}` | {r['mode']} | {r['metric']} | {_v(r['published_value'])} | {_v(r['computed_value'])} "
                     f"| {r['relative_error']:+.1%} | {llm[0]} | {llm[1]} | {r['input_status']} |")
    worst = query_pl(con, """
        select mode, max(abs(relative_error)) as ours, max(abs(llmcarbon_relative_error)) as llmcarbon, count(*) as n
        from marts.validation
        where mode = 'accounting' or (llmcarbon_case and metric = 'operational_tco2e')
        group by mode order by mode
    """)
    lines.append("")
    for r in worst.iter_rows(named=True):
        if r["mode"] == "accounting":
            lines.append(f"Largest accounting error: {r['ours']:.1%} over {r['n']} values.")
        else:
            lines.append(f"Largest predictive carbon error on the {r['n']} cases LLMCarbon covers: ours {r['ours']:.1%}, "
                         f"LLMCarbon's {r['llmcarbon']:.1%}.")
    return "\n".join(lines)


def replace_between(text: str, begin: str, end: str, body: str) -> str:
    """``text`` with everything between the ``begin`` and ``end`` lines replaced by ``body``."""
    if begin not in text or end not in text:
        raise ValueError(f"markers {begin!r} / {end!r} not found")
    head, rest = text.split(begin, 1)
    _, tail = rest.split(end, 1)
    return f"{head}{begin}\n{body}\n{end}{tail}"


def between(text: str, begin: str, end: str) -> str:
    """The body between two marker lines."""
    return text.split(begin, 1)[1].split(end, 1)[0].strip("\n")


def write_docs(con: duckdb.DuckDBPyConnection, root: Path) -> list[Path]:
    """Render the verdict into ``root``/README.md and ``root``/docs/findings.md; return the paths written.

    The drivers section of docs/findings.md is rendered only from a full-study warehouse
    (``edge-carbon run --sobol-base-samples 8192``), so a default build does not overwrite it.
    """
    table = verdict_table(con)
    readme = root / "README.md"
    readme.write_text(replace_between(readme.read_text(), BEGIN, END, table))
    findings = root / "docs" / "findings.md"
    text = findings.read_text()
    text = replace_between(text, BEGIN, END, table)
    text = replace_between(text, REPRODUCTION_BEGIN, REPRODUCTION_END, reproduction_table(con))
    samples = query_pl(con, "select max(base_samples) as n from marts.uncertainty_drivers").item()
    if samples is not None and samples >= FULL_STUDY_BASE_SAMPLES:
        text = replace_between(text, DRIVERS_BEGIN, DRIVERS_END, drivers_table(con))
    findings.write_text(text)
    validation = root / "docs" / "validation.md"
    validation.write_text(replace_between(validation.read_text(), VALIDATION_BEGIN, VALIDATION_END, validation_table(con)))
    return [readme, findings, validation]
