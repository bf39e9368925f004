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
