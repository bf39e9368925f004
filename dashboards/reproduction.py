"""Reproduction page: the paper's value against ours for every claim, coloured by verdict."""

import altair as alt
import duckdb
import polars as pl

from dashboards.shell import STATUS_COLOURS, Page, query, tooltips, values, wrap_label

#: The tables the page reads (its "Data:" line); the site asset depends on them.
TABLES = ["marts.paper_reproduction"]

TOOLTIP = tooltips(
    ("claim_id:N", "claim"), ("claim:N", "what the paper says"), ("location:N", "where"),
    ("paper_value_text:N", "paper"), ("reproduced_value_text:N", "ours"), "status:N", "explanation:N",
    ("scenario_id:N", "scenario"),
)


#: The table's columns: field, heading and width in pixels; a value wider than its column wraps.
COLUMNS = [("paper_value_text", "paper", 170), ("reproduced_value_text", "ours", 520), ("status", "status", 130)]
#: Pixels per character of the table's 11 px text (generous: a line never runs past its column).
CHAR_PX = 6.6
#: Pixels per claim: room for two lines.
ROW_STEP = 30


def status_colour() -> alt.Color:
    """The verdict colour scale shared by the page's charts."""
    return alt.Color("status:N", title="status",
                     scale=alt.Scale(domain=list(STATUS_COLOURS), range=list(STATUS_COLOURS.values())))


def build(con: duckdb.DuckDBPyConnection) -> Page:
    """Build the page from marts.paper_reproduction."""
    claims = query(con, "reproduction")
    # long values wrap onto a second line (no text is cut short)
    claims = claims.with_columns(
        pl.col(name).map_elements(lambda text, w=width: wrap_label(text or "", int((w - 8) / CHAR_PX)), return_dtype=pl.String)
        .alias(f"{name}_lines") for name, _, width in COLUMNS)
    order = claims.get_column("claim_id").to_list()
    data = values(claims)

    numeric = (
        alt.Chart(data, title="Ours / paper, where both are single numbers (1 = identical)")
        .transform_filter("isValid(datum.ratio_to_paper)")
        .mark_point(filled=True, size=120)
        .encode(
            x=alt.X("ratio_to_paper:Q", title="reproduced / paper value (log)", scale=alt.Scale(type="log")),
            y=alt.Y("claim_id:N", title=None, sort=order),
            color=status_colour(),
            tooltip=TOOLTIP,
        )
    )
    one = alt.Chart(data).mark_rule(strokeDash=[4, 3], color="#444").encode(
        x=alt.datum(1), tooltip=alt.value("ours = paper"))
    ratio_chart = alt.layer(numeric, one).properties(width=700, height=220)

    columns = []
    for field_name, label, width in COLUMNS:
        columns.append(
            alt.Chart(data, title=alt.TitleParams(label, anchor="start", fontSize=12))
            .mark_text(align="left", baseline="middle", fontSize=11, lineBreak="\n")
            .encode(
                x=alt.value(4),
                y=alt.Y("claim_id:N", title=None, sort=order,
                        axis=alt.Axis(labels=field_name == "paper_value_text", ticks=False, domain=False)),
                text=alt.Text(f"{field_name}_lines:N"),
                color=status_colour(),
                tooltip=TOOLTIP,
            )
            .properties(width=width, height=alt.Step(ROW_STEP))
        )
    table = alt.hconcat(*columns, spacing=4).properties(
        title="Every claim: paper value, ours and the verdict (hover a row for the explanation)")
    counts = claims.group_by("status").len().sort("status")
    summary = ", ".join(f"{n} {s}" for s, n in counts.iter_rows())
    by_status = dict(counts.iter_rows())
    others = ", ".join(f"{n} {s}" for s, n in counts.iter_rows() if s != "reproduced") or "none differs"
    answer = f"{by_status.get('reproduced', 0)} of the paper's {claims.height} numbers reproduce from the staged inputs ({others})."
    return Page(
        slug="reproduction",
        title="Reproduction",
        summary="Every number the paper publishes next to the value the warehouse recomputes from the staged "
                f"inputs, coloured by verdict ({summary}).",
        tables=TABLES,
        charts={"claims": table, "ratio": ratio_chart},
        notes=["Claims stated as ranges or curves have no single number and appear only in the table."],
        headline=["claims"],
        answer=answer,
    )
