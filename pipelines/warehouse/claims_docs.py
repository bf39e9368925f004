"""The claims table of docs/findings.md, rendered by ``edge-carbon docs`` from marts.claims: each registered claim,
what it states, what this project recomputes from rows, and the status."""

from __future__ import annotations

import duckdb

from pipelines.warehouse.queries import query_pl

CLAIMS_BEGIN = "<!-- claims:begin (rendered by `edge-carbon docs` from marts.claims) -->"
CLAIMS_END = "<!-- claims:end -->"


def claims_table(con: duckdb.DuckDBPyConnection) -> str:
    """One Markdown row per claim of marts.claims: paper, claim, published, recomputed, status."""
    rows = query_pl(con, "select claim_id, paper, published_text, recomputed_text, status from marts.claims order by claim_id")
    lines = ["| claim | paper | published | recomputed from rows | status |", "|---|---|---|---|---|"]
    lines += [f"| `{r['claim_id']}` | {r['paper']} | {r['published_text']} | {r['recomputed_text']} | {r['status']} |"
              for r in rows.iter_rows(named=True)]
    return "\n".join(lines)


AUDITED_BEGIN = "<!-- audited-inputs:begin (rendered by `edge-carbon docs` from marts.claims; do not edit) -->"
AUDITED_END = "<!-- audited-inputs:end -->"


def audited_inputs(con: duckdb.DuckDBPyConnection) -> str:
    """How many of the audited claim's inputs (the claim marts.verdict judges) are the paper's own against read through
    a review of it (secondary), and all of them by status: README's line under the answer, as every page has it."""
    rows = query_pl(con, "select paper, published_text, inputs_paper, inputs_secondary, inputs_by_status from marts.claims "
                         "where claim_id in (select claim_id from marts.verdict) order by claim_id limit 1")
    if rows.height == 0:
        return "No claim is judged in this build."
    r = rows.row(0, named=True)
    return (f"The audited claim ({r['paper']}, {r['published_text']}) rests on {r['inputs_paper']} inputs read in the "
            f"paper against {r['inputs_secondary']} read through a review of it (secondary); all its inputs by status: "
            f"{r['inputs_by_status']}.")


SIDES_BEGIN = "<!-- claims-sides:begin (rendered by `edge-carbon docs` from marts.claims; do not edit) -->"
SIDES_END = "<!-- claims-sides:end -->"
#: The columns of the side-by-side table: staging.claims.stance and its heading.
SIDE_HEADINGS = {"for": "for training outside the data centre", "against": "against it", "neutral": "neither (accounts)"}


def sides_table(con: duckdb.DuckDBPyConnection) -> str:
    """The claims for and against training outside the data centre (and those that argue neither) as three columns of
    one Markdown table, each cell a claim: its paper, published value and status."""
    rows = query_pl(con, "select stance, paper, published_text, status from marts.claims order by stance, paper, claim_id")
    columns = {side: [f"{r['paper']}: {r['published_text']} ({r['status']})" for r in rows.filter(stance=side).iter_rows(named=True)]
               for side in SIDE_HEADINGS}
    height = max(len(cells) for cells in columns.values())
    lines = ["| " + " | ".join(SIDE_HEADINGS.values()) + " |", "|---|---|---|"]
    lines += ["| " + " | ".join(cells[i] if i < len(cells) else "" for cells in columns.values()) + " |" for i in range(height)]
    return "\n".join(lines)
