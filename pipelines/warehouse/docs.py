"""The verdict in the docs, rendered from the warehouse: README.md's table, docs/findings.md and docs/validation.md.

Every number in these sections is read from ``marts.verdict``, ``marts.paper_reproduction``,
``marts.uncertainty_drivers`` and ``marts.validation`` of a published warehouse (``edge-carbon docs``);
``tests/test_docs.py`` renders them again from a fresh build and compares every block, so a copied
number cannot go stale. The full Sobol study (``edge-carbon sobol``) writes its indices to
:data:`FULL_STUDY_RESULTS`, and its block is rendered from that file, with its own sample count.
"""

from __future__ import annotations

from pathlib import Path

import duckdb
import polars as pl

from pipelines.paths import sql_text
from pipelines.warehouse.queries import query_pl
from schemas.vocabulary import CLAIM_LOW, PATTERN_ENDS, VERDICT_INFEASIBLE

BEGIN = "<!-- verdict:begin (rendered by `edge-carbon docs` from marts.verdict; do not edit) -->"
END = "<!-- verdict:end -->"
REPRODUCTION_BEGIN = "<!-- reproduction:begin (rendered by `edge-carbon docs` from marts.paper_reproduction) -->"
REPRODUCTION_END = "<!-- reproduction:end -->"
DRIVERS_BEGIN = "<!-- drivers:begin (rendered by `edge-carbon docs` from marts.uncertainty_drivers) -->"
DRIVERS_END = "<!-- drivers:end -->"
DRIVERS_FULL_BEGIN = "<!-- drivers-full:begin (rendered by `edge-carbon docs` from docs/results/sobol_full.csv, written by `edge-carbon sobol`) -->"
DRIVERS_FULL_END = "<!-- drivers-full:end -->"
ENDS_BEGIN = "<!-- ends:begin (rendered by `edge-carbon docs` from schemas/vocabulary.py PATTERN_ENDS) -->"
ENDS_END = "<!-- ends:end -->"
#: The full Sobol study's indices (``edge-carbon sobol``), relative to the project root.
FULL_STUDY_RESULTS = Path("docs") / "results" / "sobol_full.csv"
VALIDATION_BEGIN = "<!-- validation:begin (rendered by `edge-carbon docs` from marts.validation) -->"
VALIDATION_END = "<!-- validation:end -->"
SITING_BEGIN = "<!-- siting:begin (rendered by `edge-carbon docs` from marts.siting and marts.siting_summary) -->"
SITING_END = "<!-- siting:end -->"
#: Sobol base samples of the full study (``edge-carbon sobol``) whose drivers docs/findings.md quotes beside the build's.
FULL_STUDY_BASE_SAMPLES = 8192


def _r(value: float) -> str:
    return f"{value:.2f}"


def _range(low: float | None, high: float | None) -> str:
    return "-" if low is None or high is None else f"{_r(low)}-{_r(high)}"


def _devices(per_gpu: float, resized_from: float | None) -> str:
    return f"{per_gpu:,.0f}" if resized_from is None else f"{resized_from:,.0f} -> {per_gpu:,.0f}"


def verdict_table(con: duckdb.DuckDBPyConnection) -> str:
    """marts.verdict as a Markdown table (headline basis first per scenario and class, then each network method)."""
    frame = query_pl(con, "select * from marts.verdict order by accounting_frame, scenario_id, device_class, is_headline desc, basis, "
                          "network_method")
    lines = [
        "| scenario | frame | basis | device | network method | devices per GPU | R compute only | p05-p95 "
        "| R with communication (pattern) | p05-p95 | link needed / link, MB/s | feasible share | device utilisation "
        "| verdict (set by) |",
        "|---|---|---|---|---|---:|---:|---|---:|---|---:|---:|---:|---|",
    ]
    for r in frame.iter_rows(named=True):
        basis = f"**{r['basis']}**" if r["is_headline"] else r["basis"]
        verdict = r["verdict"] + (f"; if feasible: {r['verdict_if_feasible']}" if r["verdict"] == VERDICT_INFEASIBLE else "")
        needed = "-" if r["required_link_mb_per_s"] is None else f"{r['required_link_mb_per_s']:.2f}"
        lines.append(
            f"| {r['scenario_id']} | {r['accounting_frame']} | {basis} | {r['device_class']} | {r['network_method']} "
            f"| {_devices(r['devices_with_comm_per_gpu'], r['resized_from'])} "
            f"| {_r(r['reduction_factor'])} | {_range(r['p05'], r['p95'])} "
            f"| {_r(r['reduction_factor_with_comm'])} ({r['comm_pattern']}) | {_range(r['p05_with_comm'], r['p95_with_comm'])} "
            f"| {needed} / {r['link_mb_per_s']:.2f} | {r['feasible_share']:.2f} | {r['implied_device_utilisation']:.2f} "
            f"| {verdict} ({r['verdict_driver_method']}) |"
        )
    return "\n".join(lines)


def ends_table() -> str:
    """Which ends of each byte a communication pattern's network energy counts (schemas/vocabulary.py PATTERN_ENDS)."""
    lines = ["| pattern | home ends | server ends | volume: kWh per GB | marginal: W per Mbit/s | a larger fleet carries it |",
             "|---|---:|---:|---|---|---|"]
    for pattern, (home, server, resizable) in PATTERN_ENDS.items():
        if pattern == "none":
            continue
        volume = " + ".join(([f"{home} x (network + router)"] if home else []) + ([f"{server} x network"] if server else []))
        marginal = f"core + {home} x access and router"
        lines.append(f"| {pattern} | {home} | {server} | {volume} | {marginal} | {'yes' if resizable else 'no'} |")
    return "\n".join(lines)


def reproduction_table(con: duckdb.DuckDBPyConnection) -> str:
    """marts.paper_reproduction as a Markdown table."""
    frame = query_pl(con, "select claim_id, paper_value_text, reproduced_value_text, status from marts.paper_reproduction order by claim_id")
    lines = ["| claim | paper | ours | status |", "|---|---|---|---|"]
    lines += [f"| `{c}` | {p} | {r} | {s} |" for c, p, r, s in frame.iter_rows()]
    return "\n".join(lines)


def _drivers_markdown(frame: pl.DataFrame) -> str:
    """Top Sobol drivers (rows of marts.uncertainty_drivers, compute only, rank <= 3) as Markdown, with their sample count."""
    samples = sorted(set(frame.get_column("base_samples").to_list()))
    runs = sorted(set(frame.get_column("model_runs").to_list()))
    lines = [
        f"Sobol base samples: {', '.join(str(s) for s in samples)} "
        f"({min(runs):,}-{max(runs):,} model runs per scenario).",
        "",
        "| scenario | device | rank | parameter | S1 | S1 95% CI width | ST |",
        "|---|---|---:|---|---:|---:|---:|",
    ]
    for r in frame.sort("scenario_id", "device_class", "rank").iter_rows(named=True):
        lines.append(f"| {r['scenario_id']} | {r['device_class']} | {r['rank']} | {r['parameter']} | {r['s1']:.3f} "
                     f"| {2 * r['s1_ci95']:.3f} | {r['st']:.3f} |")
    return "\n".join(lines)


def drivers_table(con: duckdb.DuckDBPyConnection, top: int = 3) -> str:
    """The top Sobol drivers of log R (compute only) per scenario and class in the build, with the CI width of S1."""
    frame = query_pl(con, """
        select scenario_id, device_class, parameter, s1, s1_ci95, st, base_samples, model_runs, rank
        from marts.uncertainty_drivers
        where pattern = 'none' and rank <= $top
        order by scenario_id, device_class, rank
    """, {"top": top})
    return _drivers_markdown(frame)


def read_full_study(path: Path) -> pl.DataFrame:
    """The full Sobol study's indices, as ``edge-carbon sobol`` wrote them."""
    return pl.read_csv(path, schema_overrides={"rank": pl.Int64, "base_samples": pl.Int64, "model_runs": pl.Int64})


def full_drivers_table(path: Path, top: int = 3) -> str:
    """The full study's top drivers (compute only), from its results file."""
    frame = read_full_study(path).filter((pl.col("pattern") == "none") & (pl.col("rank") <= top))
    return _drivers_markdown(frame)


def write_full_study(frame: pl.DataFrame, path: Path) -> None:
    """Write the full study's indices (every scenario, class, pattern and parameter) to ``path``."""
    path.parent.mkdir(parents=True, exist_ok=True)
    frame.sort("scenario_id", "device_class", "pattern", "rank").write_csv(path, quote_style="necessary")


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


def siting_table(con: duckdb.DuckDBPyConnection) -> str:
    """The siting summary (sql/siting/findings.sql) as a Markdown table: R with communication over every pair
    of zones, where the edge wins against the scenario's own cloud zone, and the scenario's own pair (its cloud
    zone against its edge mix) with the cloud intensity below which the mix loses."""
    frame = query_pl(con, sql_text("siting/findings.sql"), {"claim_low": CLAIM_LOW})
    lines = ["| scenario | frame | device | zones (cloud x edge) | R with communication | R >= 1 | "
             f"R >= {CLAIM_LOW:g} | cloud zone | edge zones where R >= 1 | dirtiest winning edge grid, g/kWh "
             "| own edge mix (g/kWh) | R, own cloud zone x own mix | mix loses below a cloud grid of, g/kWh |",
             "|---|---|---|---:|---|---:|---:|---|---|---:|---|---:|---:|"]
    for r in frame.iter_rows(named=True):
        zones = (r["winning_edge_zones"] or "").split(", ")
        listed = f"{r['wins']}: " + ", ".join(zones[:6]) + (", ..." if len(zones) > 6 else "") if r["wins"] else "none"
        dirtiest = f"{r['dirtiest_winning_edge_ci']:.0f}" if r["dirtiest_winning_edge_ci"] is not None else "-"
        mix = f"{r['edge_mix']} ({r['mix_ci']:.0f})" if r["edge_mix"] is not None else "-"
        r_mix = f"{r['r_mix']:.3g}" if r["r_mix"] is not None else "-"
        flips = r["mix_cloud_ci_for_r1"]
        flips_text = "-" if flips is None else "wins on any grid" if flips < 0 else f"{flips:.0f}"
        lines.append(f"| {r['scenario_id']} | {r['accounting_frame']} | {r['device_class']} | {r['cloud_zones']} x {r['edge_zones']} "
                     f"| {r['r_min']:.3g}-{r['r_max']:.3g} | {r['share_r_ge_1']:.1%} | {r['share_r_ge_4']:.1%} "
                     f"| {r['cloud_zone']} ({r['cloud_ci']:.0f} g/kWh) | {listed} | {dirtiest} | {mix} | {r_mix} | {flips_text} |")
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

    The drivers section of docs/findings.md is the build's; the full study's section is rendered
    from its results file (``edge-carbon sobol``), when there is one.
    """
    table = verdict_table(con)
    readme = root / "README.md"
    readme.write_text(replace_between(readme.read_text(), BEGIN, END, table))
    findings = root / "docs" / "findings.md"
    text = findings.read_text()
    text = replace_between(text, BEGIN, END, table)
    text = replace_between(text, REPRODUCTION_BEGIN, REPRODUCTION_END, reproduction_table(con))
    text = replace_between(text, ENDS_BEGIN, ENDS_END, ends_table())
    text = replace_between(text, DRIVERS_BEGIN, DRIVERS_END, drivers_table(con))
    full = root / FULL_STUDY_RESULTS
    if full.exists():
        text = replace_between(text, DRIVERS_FULL_BEGIN, DRIVERS_FULL_END, full_drivers_table(full))
    text = replace_between(text, SITING_BEGIN, SITING_END, siting_table(con))
    findings.write_text(text)
    validation = root / "docs" / "validation.md"
    validation.write_text(replace_between(validation.read_text(), VALIDATION_BEGIN, VALIDATION_END, validation_table(con)))
    return [readme, findings, validation]
