"""README's answer, rendered from the warehouse: the plain answer, the headline table, the causes block and the
glossary of their words, from marts.verdict's answer rows (``is_answer``: the headline basis, the edge's best
admissible design, at the method row that sets the verdict; sql/docs/headline_verdict.sql) with the worst admissible
design beside each, and the paper's own rows after them.
"""

from __future__ import annotations

import math

import duckdb
import polars as pl

from pipelines.paths import sql_text
from pipelines.warehouse.queries import query_pl
from schemas.vocabulary import (
    CLAIM_HIGH,
    CLAIM_LOW,
    PAPER_FRAME,
    VERDICT_BELOW,
    VERDICT_EDGE_MORE,
    VERDICT_HOLDS,
    VERDICT_INFEASIBLE,
    VERDICT_UNCERTAIN,
)

#: Each verdict of a fleet that can send its traffic, in plain words (README's answer and glossary).
VERDICT_WORDS = {
    VERDICT_EDGE_MORE: "the devices emit more carbon than the cloud",
    VERDICT_BELOW: f"the devices emit less carbon than the cloud, but not {CLAIM_LOW:g} times less",
    VERDICT_HOLDS: f"the cloud emits at least {CLAIM_LOW:g} times as much carbon as the devices, as claimed",
    VERDICT_UNCERTAIN: f"the random draws fall on both sides of {CLAIM_LOW:g} times",
}


def _r(value: float) -> str:
    """R as the pages print it (dashboards.shell.ratio_text, which this layer may not import; a test ties the two)."""
    small = value != 0 and abs(value) < 0.095
    return f"{value:.{1 - math.floor(math.log10(abs(value))) if small else 2}f}"


def _range(low: float | None, high: float | None) -> str:
    return "-" if low is None or high is None else f"{_r(low)}-{_r(high)}"


def _devices(per_gpu: float, resized_from: float | None) -> str:
    return f"{per_gpu:,.0f}" if resized_from is None else f"{resized_from:,.0f} -> {per_gpu:,.0f}"


def _times(value: float) -> str:
    """A ratio in words' precision: one decimal below 10, whole numbers above."""
    return f"{value:.1f}" if value < 10 else f"{value:,.0f}"


def _span(values: list[float], shown=_r) -> str:
    low, high = shown(min(values)), shown(max(values))
    return low if low == high else f"{low}-{high}"


def _and(parts: list[str], sep: str = ", ") -> str:
    """``a``, ``a and b``, ``a, b and c``; with ``sep = "; "``: ``a; and b``, ``a; b; and c``."""
    last = " and " if sep == ", " else f"{sep}and "
    return parts[0] if len(parts) == 1 else f"{sep.join(parts[:-1])}{last}{parts[-1]}"


def _share_span(values: list[float]) -> str:
    low, high = min(values), max(values)
    return f"{low:.0%}" if f"{low:.0%}" == f"{high:.0%}" else f"{low:.0%}-{high:.0%}"


def _by_class(frame: pl.DataFrame) -> list[tuple[str, pl.DataFrame]]:
    return [(c, g) for (c,), g in frame.group_by(["device_class"], maintain_order=True)]


def _designs(frame: pl.DataFrame, column: str) -> str:
    return ", ".join(dict.fromkeys(frame.get_column(column).to_list()))


def _ratio_words(name: str, values: list[float]) -> str:
    """How many times more carbon one side emits: the devices where R < 1 throughout (the inverse of R reads better),
    else the cloud."""
    if max(values) < 1:
        return f"the {name}s emit {_span([1 / v for v in values], _times)} times the cloud GPUs' carbon"
    return f"the cloud GPUs emit {_span(values)} times the {name}s' carbon"


def _paper_sentence(paper: pl.DataFrame) -> str:
    """The paper's own numbers, computation only, and whether its fleets could send their traffic."""
    claim = f"{CLAIM_LOW:g}-{CLAIM_HIGH:g}"
    if not paper.height:
        return f"No scenario of this build keeps the paper's own numbers to test the claimed {claim} times."
    links = " / ".join(f"{v:g}" for v in sorted(set(paper.get_column("link_mb_per_s").to_list())))
    n, sendable = paper.height, paper.filter(pl.col("verdict") != VERDICT_INFEASIBLE).height
    fleets = (f"but none of the paper's {n} fleets could" if sendable == 0 else f"and all {n} of the paper's fleets could"
              if sendable == n else f"but only {sendable} of the paper's {n} fleets could")
    spans = [f"{_span(g.get_column('reduction_factor').to_list())} times as much carbon as the {c}s"
             for c, g in _by_class(paper)]
    return (f"Counting computation only, on the paper's own numbers, the cloud GPUs emit {_and(spans)} doing the same work "
            f"(the claim: {claim} times), {fleets} send their training traffic over the paper's {links} MB/s home link.")


def answer_from(answers: pl.DataFrame, paper: pl.DataFrame) -> str:
    """README's plain answer: per device class, how many times one side's carbon the other emits at the edge's best
    admissible design (its name) with the worst admissible design beside it; the verdicts in words with the band of every
    draw, stated once; then the paper's own compute-only numbers.

    ``answers``: the rows of sql/docs/headline_verdict.sql; ``paper``: marts.verdict's rows of the paper's frame that set
    each headline verdict."""
    if not answers.height:
        return " ".join(("No scenario outside the paper's frame is in this build.", _paper_sentence(paper)))
    best = [f"{_ratio_words(c, g.get_column('reduction_factor_with_comm').to_list())} at their best design "
            f"({_designs(g, 'edge_design')})" for c, g in _by_class(answers)]
    worst = [f"{_ratio_words(c, g.get_column('worst_reduction_factor_with_comm').to_list())} "
             f"({_designs(g, 'worst_design')})" for c, g in _by_class(answers)]
    first = (f"Training the same model at measured rates on both sides, network energy included, {_and(best, sep='; ')}; "
             f"on their worst admissible design, {_and(worst, sep='; ')}.")
    feasible = answers.filter(pl.col("verdict") != VERDICT_INFEASIBLE)
    n = feasible.height
    if n == 0:
        return " ".join((first, "But no such fleet can send its traffic over its links, so none supports the claim.",
                         _paper_sentence(paper)))
    counts = {v: feasible.filter(pl.col("verdict") == v).height for v in VERDICT_WORDS}
    holds = counts[VERDICT_HOLDS]
    what = f"the claim ({CLAIM_LOW:g}-{CLAIM_HIGH:g} times less carbon on the devices)"
    if n == 1:
        lead = f"So {what} " + ("holds on this one fleet" if holds else "is uncertain on this one fleet"
                                if counts[VERDICT_UNCERTAIN] else "does not hold on this one fleet")
    else:
        lead = f"So {what} " + (f"holds on all {n} of these fleets" if holds == n else f"holds on {holds} of these {n} fleets"
                                if holds else f"holds for certain on none of these {n} fleets" if counts[VERDICT_UNCERTAIN]
                                else f"holds on none of these {n} fleets")
    parts = [VERDICT_WORDS[v] if n == 1 else f"on {('both' if n == 2 else f'all {n}') if k == n else k} {VERDICT_WORDS[v]}"
             for v, k in counts.items() if k]
    low = _r(min(feasible.get_column("p05_with_comm_all_draws").to_list()))
    high = _r(max(feasible.get_column("p95_with_comm_all_draws").to_list()))
    band = (f"in 90% of all random draws of the uncertain inputs (every range here counts every draw, one whose fleet "
            f"cannot train as 0) the cloud emits {low}-{high} times the devices' carbon, and {CLAIM_LOW:g} times or more in "
            f"{_share_span(feasible.get_column('share_feasible_r_ge_4').to_list())} of them")
    return " ".join((first, f"{lead}: {_and(parts, sep='; ')}; {band}.", _paper_sentence(paper)))


def answer_rows(con: duckdb.DuckDBPyConnection) -> pl.DataFrame:
    """The answer rows (sql/docs/headline_verdict.sql)."""
    return query_pl(con, sql_text("docs/headline_verdict.sql"))


def claim_answer(con: duckdb.DuckDBPyConnection) -> str:
    """README's plain answer (:func:`answer_from`) from the answer rows and the paper frame's verdict rows."""
    paper = query_pl(con, "select * from marts.verdict where accounting_frame = $paper and is_headline and is_best_design "
                          "and network_method = verdict_driver_method and embodied_policy = verdict_driver_policy "
                          "and resize_power = verdict_driver_resize_power order by scenario_id, device_class", {"paper": PAPER_FRAME})
    return answer_from(answer_rows(con), paper)


#: README's headline table: each column's header and its definition in the Glossary (:func:`glossary`).
HEADLINE_COLUMNS = {
    "scenario": "a complete set of inputs. The two realistic scenarios share measured inputs (each device at its "
                "measured training speed, the fleet grown until home links carry its traffic) and differ only in how "
                "they count shared emissions: `realistic_attributional` gives each user its share of the network and "
                "of the devices' manufacture; `realistic_consequential` counts only what the training adds. Inputs "
                "and how to add your own: [docs/data.md](docs/data.md).",
    "device": "the kind of edge device that trains in place of the cloud GPU: laptop or phone.",
    "best design": "the edge training design (marts.verdict edge_design) whose devices emit the least carbon among those "
                   "that can run: the fleet's links carry its traffic below their headroom and each device holds what it "
                   "trains with (design_admissible). `pipeline`: the model split into stages across devices, replicas "
                   "synchronising every few steps; `diloco_pipeline`: pipelines as replicas that synchronise compressed "
                   "pseudo-gradients every outer step (DiLoCo); `diloco_server`, `diloco_ring`: DiLoCo with a whole "
                   "replica per device, through a server or device to device.",
    "cloud / edge carbon": "the cloud GPU's carbon emissions divided by the emissions the devices add to do the same "
                           "training at the best design, including the energy of sending their traffic over the network "
                           f"(the paper's R). The claim is {CLAIM_LOW:g} to {CLAIM_HIGH:g}; below 1 the devices emit "
                           "more (1 / R times the cloud's carbon).",
    "range in 90% of draws": "the inputs nobody knows exactly are drawn at random from their ranges many times (a Monte "
                             "Carlo study); 90% of the draws give a cloud / edge carbon within this range (5th to 95th "
                             "percentile), each draw at its own best design. A draw whose fleet cannot train counts as 0.",
    "worst design": "the admissible design whose devices emit the most carbon, with its cloud / edge carbon: the "
                    "pessimistic case beside the best.",
    "verdict": "; ".join(f"*{v}*: {w}" for v, w in VERDICT_WORDS.items())
               + f"; *{VERDICT_INFEASIBLE}*: the fleet cannot send its traffic over its links.",
}

#: The causes block's columns beyond the headline table's, each defined in the Glossary.
CAUSES_COLUMNS = {
    "devices per GPU": "devices needed to replace one cloud GPU at the best design; `a -> b`: the a devices that match its "
                       "computation (a DiLoCo design's times the extra tokens it trains) grow to b so that their home links "
                       "carry the traffic and training goes on while some are offline.",
    "embodied": "the share of the devices' added carbon that is their manufacture allocated to the training, battery wear "
                "apart.",
    "electricity": "the share that is the devices' training electricity, from the wall.",
    "network": "the share that is communication: the network's energy and the devices' radios.",
    "battery wear": "the share that is the batteries' extra charge cycles (the consequential count).",
}

#: The other words README's answer uses, defined in its Glossary.
GLOSSARY_TERMS = {
    "cloud GPU": "a data-centre accelerator (an NVIDIA H100 in the shipped scenarios), with the data centre's "
                 "overheads its scenario counts.",
    "edge devices, fleet": "phones or laptops training at home while idle and charging; a fleet is the group of them "
                           "that does one cloud GPU's work.",
    "home link": "each device's upload rate over its home connection, in MB/s.",
    "random draws": "see *range in 90% of draws*.",
}


def headline_table(con: duckdb.DuckDBPyConnection) -> str:
    """README's headline table: one answer row per scenario outside the paper's frame and device class, in the columns
    of :data:`HEADLINE_COLUMNS`."""
    lines = ["| " + " | ".join(HEADLINE_COLUMNS) + " |", "|---|---|---|---:|---|---|---|"]
    for r in answer_rows(con).iter_rows(named=True):
        worst = "-" if r["worst_design"] is None else f"{r['worst_design']}: {_r(r['worst_reduction_factor_with_comm'])}"
        lines.append(f"| {r['scenario_id']} | {r['device_class']} | {r['edge_design']} | {_r(r['reduction_factor_with_comm'])} "
                     f"| {_range(r['p05_with_comm_all_draws'], r['p95_with_comm_all_draws'])} | {worst} | {r['verdict']} |")
    return "\n".join(lines)


def causes_table(con: duckdb.DuckDBPyConnection) -> str:
    """README's causes block: each answer row's added edge carbon split by cause (:data:`CAUSES_COLUMNS`)."""
    lines = ["| scenario | device | best design | " + " | ".join(CAUSES_COLUMNS) + " |", "|---|---|---|---:|---:|---:|---:|---:|"]
    for r in answer_rows(con).iter_rows(named=True):
        shares = " | ".join(f"{r[c]:.0%}" for c in ("embodied_share", "electricity_share", "network_share", "battery_wear_share"))
        lines.append(f"| {r['scenario_id']} | {r['device_class']} | {r['edge_design']} "
                     f"| {_devices(r['devices_with_comm_per_gpu'], r['resized_from'])} | {shares} |")
    return "\n".join(lines)


def glossary() -> str:
    """README's Glossary: every column of the headline table and the causes block, then the other words its answer uses."""
    return "\n".join(f"- **{term}**: {words}" for term, words in {**HEADLINE_COLUMNS, **CAUSES_COLUMNS, **GLOSSARY_TERMS}.items())
