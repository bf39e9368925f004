"""Claims page: published claims about edge, federated and decentralised training against what the warehouse recomputes.

Every claim of ``marts.claims`` gets one sentence (its paper, the mart's verdict and status; what is missing
where it is not reproducible), a range per claim of the published and the recomputed value relative to the
published one (claims in different units share the axis only as ratios), and a table; the traffic of the cases
whose pattern moves bytes (``marts.claim_traffic``) is a table of its own.
"""

import html
import re

import altair as alt
import duckdb
import polars as pl

from dashboards.shell import (
    LINES_EXPR,
    STATUS_COLOURS,
    Page,
    query,
    ratio_text,
    tooltips,
    values,
    wrap_label,
)

#: The tables the page reads (its "Data:" line); the site asset depends on them.
TABLES = ["marts.claims", "marts.claim_traffic", "marts.verdict"]

#: The status a claim has when no case recomputes it (marts.claims): drawn as a cross and named, never dropped.
NOT_REPRODUCIBLE = "not reproducible"
#: The statuses a registered claim can have (marts.claims; schemas/statuses.py CLAIM_STATUSES), in the page's order.
CLAIM_STATUSES = ["reproduced", "inconclusive", "differs", NOT_REPRODUCIBLE]
CLAIM_COLOURS = {status: STATUS_COLOURS[status] for status in CLAIM_STATUSES}
#: The chart's colour per series: the published range in grey, the recomputed one in its status's colour.
PUBLISHED = "published"
COLOURS = {PUBLISHED: "#888888", **CLAIM_COLOURS}
#: The sides a claim argues (staging.claims.stance; schemas/statuses.py STANCES), as the page's columns put them side by side.
FOR, AGAINST, NEUTRAL = "for", "against", "neutral"
SIDES = {FOR: "For training outside the data centre", AGAINST: "Against it", NEUTRAL: "Accounts that argue neither"}
#: The two rows drawn per claim, top to bottom.
SERIES = [PUBLISHED, "recomputed"]
#: The end of the parameters' sourced ranges the traffic table shows (marts.claim_traffic range_end).
TRAFFIC_RANGE_END = "central"

TOOLTIP = tooltips(
    ("claim_id:N", "claim"), "paper:N", ("series:N", "row"), ("published_text:N", "published"),
    ("recomputed_text:N", "recomputed"), "unit:N", ("lo:Q", "low / published", ".3f"), ("hi:Q", "high / published", ".3f"),
    ("mid:Q", "central / published", ".3f"), "status:N", "reason:N",
)

#: Characters per line of a claim's label (paper and published value; never cut short: a long word runs on).
LABEL_CHARS = 36
#: Pixels per row (published, recomputed): a claim's two rows hold its two-line label.
ROW_STEP = 20
#: The plot's width in pixels.
WIDTH = 560
#: The axis reaches at least this factor either side of the published value (1).
MIN_SPAN = 4.0

#: The claims table: heading and share of the page's width (long cells wrap).
COLUMNS = [("claim", 13), ("paper", 9), ("quote", 22), ("published", 9), ("recomputed", 17), ("status", 8), ("reason", 22)]
#: The traffic table: field, heading and how its number prints.
TRAFFIC_COLUMNS = [("nodes", "nodes", ",.0f"), ("syncs", "syncs", ",.0f"), ("wan_tb", "wide-area TB", ",.1f"),
                   ("network_kwh", "network kWh", ",.1f")]


def labels(frame: pl.DataFrame) -> pl.DataFrame:
    """``frame`` with ``label``: the claim's paper and published value on up to two lines (its id added where two
    claims would read the same)."""
    plain = [f"{paper}: {text}" for paper, text in zip(frame.get_column("paper"), frame.get_column("published_text"), strict=True)]
    unique = [f"{text} [{claim}]" if plain.count(text) > 1 else text for text, claim in zip(plain, frame.get_column("claim_id"), strict=True)]
    return frame.with_columns(pl.Series("label", [wrap_label(text, LABEL_CHARS) for text in unique], dtype=pl.String))


def chart_rows(frame: pl.DataFrame) -> pl.DataFrame:
    """Two rows per claim: its published range and its recomputed range with the central value, each relative to
    the published value; ``shown`` is ``published`` or the claim's status (a not reproducible claim's recomputed
    row has no numbers and keeps its status)."""
    keep = ["claim_id", "label", "paper", "unit", "published_text", "recomputed_text", "status", "reason"]
    published = frame.select(*keep, pl.lit(PUBLISHED).alias("series"), pl.col("published_low_ratio").alias("lo"),
                             pl.col("published_high_ratio").alias("hi"), pl.lit(None, dtype=pl.Float64).alias("mid"),
                             pl.lit(PUBLISHED).alias("shown"))
    recomputed = frame.select(*keep, pl.lit(SERIES[1]).alias("series"), pl.col("recomputed_low_ratio").alias("lo"),
                              pl.col("recomputed_high_ratio").alias("hi"), pl.col("recomputed_ratio").alias("mid"),
                              pl.col("status").alias("shown"))
    return pl.concat([published, recomputed])


def domain(rows: pl.DataFrame) -> list[float]:
    """The log axis's ends: every drawn ratio with room to spare, and at least :data:`MIN_SPAN` either side of 1
    (a claim that is not reproducible is named at 1, its text to the right)."""
    ratios = [r for name in ("lo", "hi", "mid") for r in rows.get_column(name).to_list() if r is not None and r > 0]
    return [min([1 / MIN_SPAN, *(r / 1.5 for r in ratios)]), max([MIN_SPAN, *(r * 1.5 for r in ratios)])]


def claims_chart(frame: pl.DataFrame) -> alt.TopLevelMixin:
    """Per claim, the published range (grey) and the recomputed one (its status's colour, dot = central value),
    both over the published value on a log axis; a claim that is not reproducible gets a cross and its status."""
    rows = chart_rows(labels(frame))
    order = labels(frame).get_column("label").to_list()
    x_scale = alt.Scale(type="log", domain=domain(rows), nice=False)
    data = values(rows)
    y = alt.Y("label:N", title=None, sort=order, axis=alt.Axis(labelExpr=LINES_EXPR, labelLimit=0))
    y_offset = alt.YOffset("series:N", sort=SERIES)
    colour = alt.Color("shown:N", title=None, scale=alt.Scale(domain=list(COLOURS), range=list(COLOURS.values())),
                       legend=alt.Legend(orient="top"))
    x = alt.X("lo:Q", title="value / the published value (log; 1 = the published value, or its range's midpoint)", scale=x_scale)
    base = alt.Chart(data)
    valid = "isValid(datum.lo) && isValid(datum.hi)"
    ranges = base.transform_filter(valid).mark_rule(strokeWidth=5, opacity=0.7).encode(
        x=x, x2="hi:Q", y=y, yOffset=y_offset, color=colour, tooltip=TOOLTIP)
    low_end = base.transform_filter(valid).mark_tick(thickness=2, size=14).encode(
        x=x, y=y, yOffset=y_offset, color=colour, tooltip=TOOLTIP)
    high_end = base.transform_filter(valid).mark_tick(thickness=2, size=14).encode(
        x=alt.X("hi:Q", scale=x_scale), y=y, yOffset=y_offset, color=colour, tooltip=TOOLTIP)
    central = base.transform_filter("isValid(datum.mid)").mark_point(filled=True, size=70, opacity=1).encode(
        x=alt.X("mid:Q", scale=x_scale), y=y, yOffset=y_offset, color=colour, tooltip=TOOLTIP)
    missing = f"datum.series == {SERIES[1]!r} && datum.status == {NOT_REPRODUCIBLE!r}"
    cross = base.transform_filter(missing).mark_point(shape="cross", filled=True, size=90).encode(
        x=alt.datum(1, scale=x_scale), y=y, yOffset=y_offset, color=colour, tooltip=TOOLTIP)
    named = base.transform_filter(missing).mark_text(align="left", dx=9, fontSize=11).encode(
        x=alt.datum(1, scale=x_scale), y=y, yOffset=y_offset, text="status:N", color=colour, tooltip=TOOLTIP)
    one = alt.Chart(values(pl.DataFrame({"r": [1.0]}))).mark_rule(color="#444", strokeDash=[4, 3]).encode(
        x=alt.X("r:Q", scale=x_scale), tooltip=alt.value("the published value (a range's midpoint)"))
    return alt.layer(one, ranges, low_end, high_end, central, cross, named).properties(
        width=WIDTH, height=alt.Step(ROW_STEP),
        title="Published (grey) and recomputed ranges per claim, over the published value")


def _count(n: int, one: str, many: str) -> str:
    return f"{n} {one if n == 1 else many}"


def answer(frame: pl.DataFrame) -> str:
    """One sentence: how many claims for and against training outside the data centre reproduce, which papers' are
    inconclusive or differ, and which cannot be checked (marts.claims rows)."""
    def papers(status: str) -> str:
        names = frame.filter(pl.col("status") == status).get_column("paper").unique(maintain_order=True).to_list()
        return f" ({', '.join(names)})" if names else ""

    counts = {status: frame.filter(pl.col("status") == status).height for status in CLAIM_STATUSES}
    sides = {side: frame.filter(pl.col("stance") == side).height for side in SIDES}
    return (f"{counts['reproduced']} of {_count(frame.height, 'published claim', 'published claims')} about edge and "
            f"decentralised training ({sides[FOR]} for training outside the data centre, {sides[AGAINST]} against, "
            f"{sides[NEUTRAL]} neither) reproduce from their inputs{papers('reproduced')}; "
            f"{counts['inconclusive']} {'is' if counts['inconclusive'] == 1 else 'are'} inconclusive{papers('inconclusive')}, "
            f"{counts['differs']} {'differs' if counts['differs'] == 1 else 'differ'}{papers('differs')} and "
            f"{counts[NOT_REPRODUCIBLE]} cannot be checked{papers(NOT_REPRODUCIBLE)}.")


def audited_inputs(frame: pl.DataFrame, claim_id: str) -> str:
    """How many of the audited claim's inputs are the paper's own, read through a review (secondary), or otherwise
    sourced or assumed (marts.claims inputs_*): one line, the same on every page."""
    (row,) = frame.filter(pl.col("claim_id") == claim_id).iter_rows(named=True)
    return (f"The audited claim ({row['paper']}, {row['published_text']}) rests on {row['inputs_paper']} inputs read in the "
            f"paper against {row['inputs_secondary']} read through a review of it (secondary); all its inputs by status: "
            f"{row['inputs_by_status']}.")


def audited_line(con: duckdb.DuckDBPyConnection) -> str:
    """:func:`audited_inputs` of the claim the verdict judges (empty where the build has no verdict rows)."""
    frame = query(con, "audited_claim")
    return audited_inputs(frame, frame.get_column("claim_id")[0]) if frame.height else ""


def own_verdict(answers: pl.DataFrame) -> str:
    """This project's verdict on the same question (marts.verdict's answer rows), in one line."""
    rows = [f"{r['scenario_id']} {r['device_class']} ({r['edge_design']}): R {ratio_text(r['reduction_factor_with_comm'])}, {r['verdict']}"
            for r in answers.iter_rows(named=True)]
    return "This project, on the same question (R with communication at the edge's best admissible design): " + "; ".join(rows) + "."


#: A sentence's end: a full stop and a space, not the one of "et al." nor of "e.g.".
SENTENCE_END = re.compile(r"(?<!\bal)(?<!\be\.g)\.\s")


def short_reason(row: dict) -> str:
    """A claim's reason cut to its first sentence (the whole reason is the table's and the item's tooltip)."""
    first = SENTENCE_END.split(row["reason"], maxsplit=1)[0].rstrip(".")
    return first + "."


def sentences_html(frame: pl.DataFrame, answers: pl.DataFrame) -> str:
    """The claims for and against training outside the data centre side by side (and the accounts that argue neither),
    each one line: its paper, status and verdict, the inputs it rests on by status, the first sentence of its reason
    (the whole of it on hover); this project's own verdict on the same question above them."""
    columns = []
    for side, heading in SIDES.items():
        items = []
        for row in frame.filter(pl.col("stance") == side).iter_rows(named=True):
            rest = f", {row['status']}: {row['verdict']}"
            items.append(f'<li id="claim-{html.escape(row["claim_id"])}" title="{html.escape(row["reason"])}">'
                         f'<b>{html.escape(row["paper"])}</b>{html.escape(rest)} <span class="inputs">Inputs: '
                         f'{html.escape(row["inputs_by_status"])}.</span> <span class="why">{html.escape(short_reason(row))}</span></li>')
        columns.append(f'<section class="side" id="side-{side}"><h3>{html.escape(heading)}</h3>'
                       f'<ul class="verdict">{"".join(items)}</ul></section>')
    return (f'<h2>The claims, for and against</h2>\n<p class="answer" id="own-verdict">{html.escape(own_verdict(answers))}</p>\n'
            f'<div class="sides" id="claim-sentences" style="display: grid; grid-template-columns: repeat(3, 1fr); gap: 1em">'
            f'{"".join(columns)}</div>')


def table_html(frame: pl.DataFrame) -> str:
    """The claims as an HTML table that fits the page (the paper links to it; nothing is fetched)."""
    rows = []
    for r in frame.iter_rows(named=True):
        url = r["citation_url"] or ""
        paper = f'<a href="{html.escape(url)}" rel="noreferrer">{html.escape(r["paper"])}</a>' if url else html.escape(r["paper"])
        cells = (f"<code>{html.escape(r['claim_id'])}</code>", paper, html.escape(r["quote"]), html.escape(r["published_text"]),
                 html.escape(r["recomputed_text"]), html.escape(r["status"]), html.escape(r["reason"]))
        rows.append("<tr>" + "".join(f"<td>{c}</td>" for c in cells) + "</tr>")
    cols = "".join(f'<col style="width: {w}%">' for _, w in COLUMNS)
    head = "".join(f"<th>{h}</th>" for h, _ in COLUMNS)
    return (f'<table id="claims" style="table-layout: fixed; width: 100%"><colgroup>{cols}</colgroup>'
            f'<thead><tr>{head}</tr></thead><tbody>{"".join(rows)}</tbody></table>')


def number(value: float | None, fmt: str) -> str:
    """``value`` in ``fmt``, or to three significant figures where it is below 1 (a tenth of a TB is not 0.0)."""
    if value is None:
        return ""
    return format(value, fmt) if abs(value) >= 1 or value == 0 else format(value, ".3g")


def traffic_html(traffic: pl.DataFrame) -> str:
    """The wide-area traffic and network energy per case and network method, at the parameters' central values."""
    head = "".join(f"<th>{h}</th>" for h in ["case", "pattern", "network method", *(h for _, h, _ in TRAFFIC_COLUMNS)])
    rows = []
    for r in traffic.iter_rows(named=True):
        cells = [f"<code>{html.escape(r[k])}</code>" for k in ("scenario_id", "comm_pattern", "network_method")]
        cells += [number(r[k], fmt) for k, _, fmt in TRAFFIC_COLUMNS]
        rows.append("<tr>" + "".join(f"<td>{c}</td>" for c in cells) + "</tr>")
    return f'<table id="claim-traffic"><thead><tr>{head}</tr></thead><tbody>{"".join(rows)}</tbody></table>'


def build(con: duckdb.DuckDBPyConnection) -> Page:
    """Build the page from marts.claims and marts.claim_traffic."""
    frame = query(con, "claims")
    traffic = query(con, "claim_traffic", {"range_end": TRAFFIC_RANGE_END})
    extra = (f"{sentences_html(frame, query(con, 'claims_answer'))}\n<h2>The claims</h2>\n{table_html(frame)}\n"
             f"<h2>Wide-area traffic of the cases that move bytes ({html.escape(TRAFFIC_RANGE_END)} values)</h2>\n"
             f"{traffic_html(traffic)}")
    return Page(
        slug="claims",
        title="Claims",
        summary="Published claims about edge, federated and decentralised training, each with the value the warehouse "
                "recomputes from its parameter rows: the published and recomputed ranges relative to the published "
                "value (claims in different units share the axis only as ratios), a claim that cannot be recomputed "
                "marked as such, then the claims for and against side by side beside this project's own verdict, "
                "the claims table and the traffic of the cases that move bytes.",
        tables=TABLES,
        charts={"claims": claims_chart(frame)},
        headline=["claims"],
        answer=answer(frame),
        extra_html=extra,
    )
