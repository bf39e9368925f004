"""The verdict in the docs, rendered from the warehouse: README.md's answer, headline table and glossary,
docs/findings.md (the full verdict table) and docs/validation.md.

Every number in these sections is read from ``marts.verdict``, ``marts.paper_reproduction``,
``marts.uncertainty_drivers`` and ``marts.validation`` of a published warehouse (``edge-carbon docs``);
``tests/docs/test_docs.py`` renders them again from a fresh build and compares every block, so a copied
number cannot go stale. The full Sobol study (``edge-carbon sobol``) writes its indices to
:data:`FULL_STUDY_RESULTS`, and its block is rendered from that file, with its own sample count.
"""

from __future__ import annotations

from pathlib import Path

import duckdb
import polars as pl

from pipelines.paths import sql_text
from pipelines.warehouse.sobol_convergence import BUILD_BASE_SAMPLES, CONVERGENCE_RESULTS, convergence_table
from pipelines.warehouse.answer_docs import (  # noqa: F401 - README's answer, re-exported beside the other blocks
    CAUSES_COLUMNS,
    _devices,
    _r,
    _range,
    GLOSSARY_TERMS,
    HEADLINE_COLUMNS,
    VERDICT_WORDS,
    answer_from,
    answer_rows,
    causes_table,
    claim_answer,
    glossary,
    headline_table,
)
from pipelines.warehouse.dictionary import column_comment
from pipelines.warehouse.claims_docs import (
    AUDITED_BEGIN,
    AUDITED_END,
    CLAIMS_BEGIN,
    CLAIMS_END,
    SIDES_BEGIN,
    SIDES_END,
    audited_inputs,
    claims_table,
    sides_table,
)
from pipelines.warehouse.queries import query_pl
from schemas.meta import columns
from schemas.validation import ValidationCases
from schemas.vocabulary import (
    CLAIM_HIGH,
    CLAIM_LOW,
    COMPUTE_ONLY,
    PAPER_FRAME,
    PATTERN_ROWS,
    VERDICT_BELOW,
    VERDICT_EDGE_MORE,
    VERDICT_HOLDS,
    VERDICT_INFEASIBLE,
    VERDICT_UNCERTAIN,
    CommPattern,
)

ANSWER_BEGIN = "<!-- answer:begin (rendered by `edge-carbon docs` from marts.verdict; do not edit) -->"
ANSWER_END = "<!-- answer:end -->"
HEADLINE_BEGIN = "<!-- headline:begin (rendered by `edge-carbon docs` from marts.verdict; do not edit) -->"
HEADLINE_END = "<!-- headline:end -->"
CAUSES_BEGIN = "<!-- causes:begin (rendered by `edge-carbon docs` from marts.verdict; do not edit) -->"
CAUSES_END = "<!-- causes:end -->"
GLOSSARY_BEGIN = "<!-- glossary:begin (rendered by `edge-carbon docs` from pipelines/warehouse/docs.py) -->"
GLOSSARY_END = "<!-- glossary:end -->"
BEGIN = "<!-- verdict:begin (rendered by `edge-carbon docs` from marts.verdict; do not edit) -->"
END = "<!-- verdict:end -->"
REPRODUCTION_BEGIN = "<!-- reproduction:begin (rendered by `edge-carbon docs` from marts.paper_reproduction) -->"
REPRODUCTION_END = "<!-- reproduction:end -->"
DRIVERS_BEGIN = "<!-- drivers:begin (rendered by `edge-carbon docs` from marts.uncertainty_drivers) -->"
DRIVERS_END = "<!-- drivers:end -->"
DRIVERS_FULL_BEGIN = "<!-- drivers-full:begin (rendered by `edge-carbon docs` from docs/results/sobol_full.csv, written by `edge-carbon sobol`) -->"
DRIVERS_FULL_END = "<!-- drivers-full:end -->"
CONVERGENCE_BEGIN = ("<!-- sobol-convergence:begin (rendered by `edge-carbon docs` from docs/results/sobol_convergence.csv, "
                     "written by `edge-carbon sobol --convergence`) -->")
CONVERGENCE_END = "<!-- sobol-convergence:end -->"
ENDS_BEGIN = "<!-- ends:begin (rendered by `edge-carbon docs` from schemas/vocabulary.py PATTERN_ROWS) -->"
ENDS_END = "<!-- ends:end -->"
#: The full Sobol study's indices (``edge-carbon sobol``), relative to the project root.
FULL_STUDY_RESULTS = Path("docs") / "results" / "sobol_full.csv"
VALIDATION_BEGIN = "<!-- validation:begin (rendered by `edge-carbon docs` from marts.validation) -->"
VALIDATION_END = "<!-- validation:end -->"
CASE_COLUMNS_BEGIN = "<!-- case-columns:begin (rendered by `edge-carbon docs` from schemas/validation.py ValidationCases) -->"
CASE_COLUMNS_END = "<!-- case-columns:end -->"
DECIDING_BEGIN = "<!-- deciding:begin (rendered by `edge-carbon docs` from marts.verdict) -->"
DECIDING_END = "<!-- deciding:end -->"
SITING_BEGIN = "<!-- siting:begin (rendered by `edge-carbon docs` from marts.siting and marts.siting_summary) -->"
SITING_END = "<!-- siting:end -->"
#: Sobol base samples of the full study (``edge-carbon sobol``) whose drivers docs/findings.md quotes beside the build's.
FULL_STUDY_BASE_SAMPLES = 8192


def method_row(network_method: str, policy: str, resize_power: str, *, headline_policy: bool, headline_power: bool) -> str:
    """A method row in words: its network method, then its allocation policy and resize power where they are not the
    headline's."""
    return ", ".join([network_method, *([] if headline_policy else [policy]), *([] if headline_power else [resize_power])])


def _design(row: dict) -> str:
    """A verdict row's edge design, marked best or worst where its scenario has a choice of designs."""
    marks = [m for m, flag in (("best", row["is_best_design"]), ("worst", row["is_worst_design"])) if flag]
    return row["edge_design"] if len(marks) != 1 else f"{row['edge_design']}, {marks[0]}"


def verdict_table(con: duckdb.DuckDBPyConnection) -> str:
    """marts.verdict as docs/findings.md's Markdown table (the rows of sql/docs/verdict_rows.sql: headline basis first
    per scenario and class, each network method at the headline allocation policy and resize power, and the method
    row that sets the verdict): the feasible draws' p05-p95 beside the band over every draw (an infeasible draw counted
    as R = 0) that the verdict reads."""
    frame = query_pl(con, sql_text("docs/verdict_rows.sql"))
    lines = [
        "| scenario | frame | basis | device | method row | devices per GPU | R compute only | p05-p95 "
        "| R with communication (design) | p05-p95 | p05-p95, all draws | link needed / link, MB/s | feasible share "
        f"| feasible, R >= 1 / R >= {CLAIM_LOW:g} | device utilisation | verdict (set by) |",
        "|---|---|---|---|---|---:|---:|---|---:|---|---|---:|---:|---:|---:|---|",
    ]
    for r in frame.iter_rows(named=True):
        basis = f"**{r['basis']}**" if r["is_headline"] else r["basis"]
        verdict = r["verdict"] + (f"; if feasible: {r['verdict_if_feasible']}" if r["verdict"] == VERDICT_INFEASIBLE else "")
        needed = "-" if r["required_link_mb_per_s"] is None else f"{r['required_link_mb_per_s']:.2f}"
        row = method_row(r["network_method"], r["embodied_policy"], r["resize_power"], headline_policy=r["is_headline_policy"],
                         headline_power=r["is_headline_resize_power"])
        driver = method_row(r["verdict_driver_method"], r["verdict_driver_policy"], r["verdict_driver_resize_power"],
                            headline_policy=r["verdict_driver_policy"] == r["embodied_policy"] and r["is_headline_policy"],
                            headline_power=r["verdict_driver_resize_power"] == r["resize_power"] and r["is_headline_resize_power"])
        lines.append(
            f"| {r['scenario_id']} | {r['accounting_frame']} | {basis} | {r['device_class']} | {row} "
            f"| {_devices(r['devices_with_comm_per_gpu'], r['resized_from'])} "
            f"| {_r(r['reduction_factor'])} | {_range(r['p05'], r['p95'])} "
            f"| {_r(r['reduction_factor_with_comm'])} ({_design(r)}) | {_range(r['p05_with_comm'], r['p95_with_comm'])} "
            f"| {_range(r['p05_with_comm_all_draws'], r['p95_with_comm_all_draws'])} "
            f"| {needed} / {r['link_mb_per_s']:.2f} | {r['feasible_share']:.2f} "
            f"| {r['share_feasible_r_ge_1']:.2f} / {r['share_feasible_r_ge_4']:.2f} | {r['implied_device_utilisation']:.2f} "
            f"| {verdict} ({driver}) |"
        )
    return "\n".join(lines)


def deciding_table(con: duckdb.DuckDBPyConnection) -> str:
    """The assumed ranges that decide each headline verdict (marts.verdict.verdict_deciding_assumptions) as a Markdown table."""
    frame = query_pl(con, "select distinct accounting_frame, scenario_id, device_class, verdict, verdict_deciding_assumptions "
                          "from marts.verdict where is_headline and accounting_frame <> $paper "
                          "order by accounting_frame, scenario_id, device_class", {"paper": PAPER_FRAME})
    lines = ["| scenario | device | verdict | assumed ranges that alone move R with communication across 1 or "
             f"{CLAIM_LOW:g} (R at their ends) |", "|---|---|---|---|"]
    for r in frame.iter_rows(named=True):
        lines.append(f"| {r['scenario_id']} | {r['device_class']} | {r['verdict']} | {r['verdict_deciding_assumptions'] or 'none'} |")
    return "\n".join(lines)


#: The words of each coefficient of a pattern's row (sql/model/macros.sql comm_bytes and radio_kwh).
PATTERN_TERMS = {
    "sync_n": "N p b per sync",
    "sync_n_minus_1": "(N - 1) p b per sync",
    "activations": "2 (S - 1) h a per token",
    "stage_allreduce": "the N / S replicas' all-reduce",
    "radio_per_window": "the training window",
    "radio_per_byte": "the bytes at the link rate",
}


def _terms(row: CommPattern, fields: tuple[str, ...]) -> str:
    """A pattern's linear combination of the named terms: each non-zero coefficient x its term."""
    return " + ".join(f"{getattr(row, field):g} x {PATTERN_TERMS[field]}" for field in fields if getattr(row, field))


def ends_table() -> str:
    """Each communication pattern's bytes and radio (its coefficients of the model's terms) and which ends of each
    byte its network energy counts (schemas/vocabulary.py PATTERN_ROWS)."""
    lines = ["| pattern | bytes | radio busy for | home ends | server ends | volume: kWh per GB | marginal: W per Mbit/s "
             "| a larger fleet carries it |",
             "|---|---|---|---:|---:|---|---|---|"]
    for pattern, row in PATTERN_ROWS.items():
        if not row.moves_bytes:
            continue
        home, server = row.home_ends, row.server_ends
        volume = " + ".join(([f"{home} x (network + router)"] if home else []) + ([f"{server} x network"] if server else []))
        marginal = f"core + {home} x access and router"
        traffic = _terms(row, ("sync_n", "sync_n_minus_1", "activations", "stage_allreduce"))
        radio = _terms(row, ("radio_per_window", "radio_per_byte"))
        lines.append(f"| {pattern} | {traffic} | {radio} | {home} | {server} | {volume} | {marginal} | {'yes' if row.resizable else 'no'} |")
    return "\n".join(lines)


def reproduction_table(con: duckdb.DuckDBPyConnection) -> str:
    """marts.paper_reproduction as a Markdown table."""
    frame = query_pl(con, "select claim_id, paper_value_text, reproduced_value_text, status from marts.paper_reproduction order by claim_id")
    lines = ["| claim | paper | ours | status |", "|---|---|---|---|"]
    lines += [f"| `{c}` | {p} | {r} | {s} |" for c, p, r, s in frame.iter_rows()]
    return "\n".join(lines)


def _drivers_markdown(frame: pl.DataFrame) -> str:
    """Top Sobol drivers (rows of marts.uncertainty_drivers, rank <= 3, compute only and with the scenario's own
    pattern) as Markdown, with their sample count and, where known, each parameter's status."""
    samples = sorted(set(frame.get_column("base_samples").to_list()))
    runs = sorted(set(frame.get_column("model_runs").to_list()))
    lines = [
        f"Sobol base samples: {', '.join(str(s) for s in samples)} "
        f"({min(runs):,}-{max(runs):,} model runs per scenario).",
        "",
        "| scenario | device | R | rank | parameter | status | S1 | S1 95% CI width | ST |",
        "|---|---|---|---:|---|---|---:|---:|---:|",
    ]
    for r in frame.sort("scenario_id", "device_class", pl.col("pattern") != COMPUTE_ONLY, "rank").iter_rows(named=True):
        quantity = "compute only" if r["pattern"] == COMPUTE_ONLY else f"with communication ({r['pattern']})"
        lines.append(f"| {r['scenario_id']} | {r['device_class']} | {quantity} | {r['rank']} | {r['parameter']} "
                     f"| {r.get('status') or '-'} | {r['s1']:.3f} | {2 * r['s1_ci95']:.3f} | {r['st']:.3f} |")
    return "\n".join(lines)


def _read_by_verdict(con: duckdb.DuckDBPyConnection, frame: pl.DataFrame, top: int) -> pl.DataFrame:
    """The drivers of what the verdict reads: compute only, and R with each scenario's own communication pattern
    (core.scenarios); ranks <= ``top``; each parameter with its status (core.scenario_parameters)."""
    patterns = query_pl(con, "select scenario_id, comm_pattern from core.scenarios")
    statuses = query_pl(con, "select scenario_id, parameter, status from core.scenario_parameters")
    return frame.join(patterns, on="scenario_id", how="inner").filter(
        ((pl.col("pattern") == COMPUTE_ONLY) | (pl.col("pattern") == pl.col("comm_pattern"))) & (pl.col("rank") <= top)
    ).drop("comm_pattern").join(statuses, on=["scenario_id", "parameter"], how="left")


def drivers_table(con: duckdb.DuckDBPyConnection, top: int = 3) -> str:
    """The top Sobol drivers of log R per scenario and class in the build, compute only and with the scenario's own
    communication pattern (the R the verdict reads), with each parameter's status and the CI width of S1."""
    frame = query_pl(con, "select scenario_id, device_class, pattern, parameter, s1, s1_ci95, st, base_samples, model_runs, rank "
                          "from marts.uncertainty_drivers")
    return _drivers_markdown(_read_by_verdict(con, frame, top))


def read_full_study(path: Path) -> pl.DataFrame:
    """The full Sobol study's indices, as ``edge-carbon sobol`` wrote them."""
    return pl.read_csv(path, schema_overrides={"rank": pl.Int64, "base_samples": pl.Int64, "model_runs": pl.Int64})


def full_drivers_table(path: Path, con: duckdb.DuckDBPyConnection, top: int = 3) -> str:
    """The full study's top drivers (compute only, and with each scenario's own pattern, read from ``con``'s
    core.scenarios), from its results file."""
    return _drivers_markdown(_read_by_verdict(con, read_full_study(path), top))


def write_full_study(frame: pl.DataFrame, path: Path) -> None:
    """Write the full study's indices (every scenario, class, pattern and parameter) to ``path``."""
    path.parent.mkdir(parents=True, exist_ok=True)
    frame.sort("scenario_id", "device_class", "pattern", "rank").write_csv(path, quote_style="necessary")


def _v(value: float) -> str:
    """A published or computed value: whole with thousands separators from 1,000, else 4 significant digits."""
    return f"{value:,.0f}" if abs(value) >= 1000 else f"{value:.4g}"


def validation_table(con: duckdb.DuckDBPyConnection) -> str:
    """marts.validation as a Markdown table, then the largest errors per mode and how many published values the predictive intervals hold."""
    frame = query_pl(con, "select * from marts.validation order by case_id, mode, metric")
    lines = ["| case | mode | metric | published | ours | error | ours: low-high | published inside | LLMCarbon | LLMCarbon error "
             "| weakest input |",
             "|---|---|---|---:|---:|---:|---|---|---:|---:|---|"]
    for r in frame.iter_rows(named=True):
        llm = ("", "") if r["llmcarbon_value"] is None else (_v(r["llmcarbon_value"]), f"{r['llmcarbon_relative_error']:+.1%}")
        interval, inside = ("", "") if r["predicted_low"] is None else (
            "no range" if r["predicted_low"] == r["predicted_high"] else f"{_v(r['predicted_low'])}-{_v(r['predicted_high'])}",
            "yes" if r["published_within_interval"] else "no")
        lines.append(f"| `{r['case_id']}` | {r['mode']} | {r['metric']} | {_v(r['published_value'])} | {_v(r['computed_value'])} "
                     f"| {r['relative_error']:+.1%} | {interval} | {inside} | {llm[0]} | {llm[1]} | {r['input_status']} |")
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
    predictive = frame.filter(pl.col("mode") == "predictive")
    if predictive.height:
        inside = predictive.get_column("published_within_interval").sum()
        ranged = predictive.filter(pl.col("predicted_low") < pl.col("predicted_high")).height
        lines.append(f"Published value inside the predicted interval: {inside} of {predictive.height} predictive values "
                     f"({ranged} of them with an MFU or goodput range).")
    return "\n".join(lines)


_CASE_COMPANIONS = ("_status", "_citation", "_low", "_high")
_CASE_TYPES = {"Float64": "number", "String": "text", "Boolean": "true / false"}


def case_columns_table() -> str:
    """The columns of sources/curated/validation_cases.csv (schemas/validation.py ValidationCases) as a Markdown table.

    A value column X is listed once with the companions the model gives it (``X_status``,
    ``X_citation``, ``X_low``, ``X_high``); the provenance columns are the loader's, not the file's.
    """
    cols = {name: col for name, col in columns(ValidationCases).items() if name not in ("source_id", "source_file", "source_row")}
    companions = {name: [f"`{name}{suffix}`" for suffix in _CASE_COMPANIONS if f"{name}{suffix}" in cols] for name in cols}
    listed = {f"{name}{suffix}" for name in cols for suffix in _CASE_COMPANIONS if companions[name]}
    lines = ["| column | with | type | required | meaning |", "|---|---|---|---|---|"]
    for name, col in cols.items():
        if name in listed:
            continue
        kind = _CASE_TYPES.get(str(col.dtype), str(col.dtype))
        meaning = column_comment(name, col.description).replace("|", r"\|")
        lines.append(f"| `{name}` | {', '.join(companions[name])} | {kind} | {'no' if col.nullable else 'yes'} | {meaning} |")
    return "\n".join(lines)


def siting_table(con: duckdb.DuckDBPyConnection) -> str:
    """The siting summary (sql/siting/findings.sql) as a Markdown table: the basis and edge design R is read on
    (marts.verdict's answer for the scenario and class), R with communication over every pair of zones, where the
    edge wins against the scenario's own cloud zone, and the scenario's own pair (its cloud zone against its edge
    mix) with the cloud intensity below which the mix loses."""
    frame = query_pl(con, sql_text("siting/findings.sql"), {"claim_low": CLAIM_LOW})
    lines = ["| scenario | frame | device | basis | edge design | zones (cloud x edge) | R with communication | R >= 1 | "
             f"R >= {CLAIM_LOW:g} | cloud zone | edge zones where R >= 1 | dirtiest winning edge grid, g/kWh "
             "| own edge mix (g/kWh) | R, own cloud zone x own mix | mix loses below a cloud grid of, g/kWh |",
             "|---|---|---|---|---|---:|---|---:|---:|---|---|---:|---|---:|---:|"]
    for r in frame.iter_rows(named=True):
        zones = (r["winning_edge_zones"] or "").split(", ")
        listed = f"{r['wins']}: " + ", ".join(zones[:6]) + (", ..." if len(zones) > 6 else "") if r["wins"] else "none"
        dirtiest = f"{r['dirtiest_winning_edge_ci']:.0f}" if r["dirtiest_winning_edge_ci"] is not None else "-"
        mix = f"{r['edge_mix']} ({r['mix_ci']:.0f})" if r["edge_mix"] is not None else "-"
        r_mix = f"{r['r_mix']:.3g}" if r["r_mix"] is not None else "-"
        flips = r["mix_cloud_ci_for_r1"]
        flips_text = "-" if flips is None else "wins on any grid" if flips < 0 else f"{flips:.0f}"
        lines.append(f"| {r['scenario_id']} | {r['accounting_frame']} | {r['device_class']} | {r['basis']} | {r['edge_design']} "
                     f"| {r['cloud_zones']} x {r['edge_zones']} "
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
    """Render the answer, the headline table, the audited claim's inputs and the glossary into ``root``/README.md, the
    full verdict and the rest of the findings into ``root``/docs/findings.md, the validation into
    ``root``/docs/validation.md and the claims for and against into ``root``/docs/claims.md; return the paths written.

    The drivers section of docs/findings.md is the build's; the full study's section is rendered
    from its results file (``edge-carbon sobol``), when there is one.
    """
    readme = root / "README.md"
    text = replace_between(readme.read_text(), ANSWER_BEGIN, ANSWER_END, claim_answer(con))
    text = replace_between(text, HEADLINE_BEGIN, HEADLINE_END, headline_table(con))
    text = replace_between(text, CAUSES_BEGIN, CAUSES_END, causes_table(con))
    text = replace_between(text, AUDITED_BEGIN, AUDITED_END, audited_inputs(con))
    readme.write_text(replace_between(text, GLOSSARY_BEGIN, GLOSSARY_END, glossary()))
    findings = root / "docs" / "findings.md"
    text = findings.read_text()
    text = replace_between(text, BEGIN, END, verdict_table(con))
    text = replace_between(text, DECIDING_BEGIN, DECIDING_END, deciding_table(con))
    text = replace_between(text, REPRODUCTION_BEGIN, REPRODUCTION_END, reproduction_table(con))
    text = replace_between(text, ENDS_BEGIN, ENDS_END, ends_table())
    text = replace_between(text, DRIVERS_BEGIN, DRIVERS_END, drivers_table(con))
    full = root / FULL_STUDY_RESULTS
    if full.exists():
        text = replace_between(text, DRIVERS_FULL_BEGIN, DRIVERS_FULL_END, full_drivers_table(full, con))
    convergence = root / CONVERGENCE_RESULTS
    if convergence.exists():
        text = replace_between(text, CONVERGENCE_BEGIN, CONVERGENCE_END, convergence_table(convergence, BUILD_BASE_SAMPLES))
    text = replace_between(text, SITING_BEGIN, SITING_END, siting_table(con))
    text = replace_between(text, CLAIMS_BEGIN, CLAIMS_END, claims_table(con))
    findings.write_text(text)
    validation = root / "docs" / "validation.md"
    text = replace_between(validation.read_text(), VALIDATION_BEGIN, VALIDATION_END, validation_table(con))
    validation.write_text(replace_between(text, CASE_COLUMNS_BEGIN, CASE_COLUMNS_END, case_columns_table()))
    claims = root / "docs" / "claims.md"
    claims.write_text(replace_between(claims.read_text(), SIDES_BEGIN, SIDES_END, sides_table(con)))
    return [readme, findings, validation, claims]
