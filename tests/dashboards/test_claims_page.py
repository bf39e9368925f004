"""The Claims page: its sentences, chart rows and tables come from marts.claims and marts.claim_traffic rows."""

import html
import re

import polars as pl
import pytest

from dashboards import claims
from dashboards.shell import query
from pipelines.warehouse.queries import query_pl

#: Rows as the claims query returns them (dashboards/sql/claims.sql), one per status; made up, not the registry's.
ROWS = pl.DataFrame({
    "claim_id": ["alpha2020_ratio", "beta2021_share", "gamma2022_task", "delta2023_ratio"],
    "paper": ["Alpha et al. 2020", "Beta et al. 2021", "Gamma et al. 2022", "Delta et al. 2023"],
    "stance": ["for", "against", "neutral", "against"],
    "quantity": ["bandwidth_ratio", "emission_ratio", "emissions", "emission_ratio"],
    "unit": ["x", "fraction", "kgCO2e", "x"],
    "quote": ["We cut traffic 10x.", "Emissions fall to 20-30%.", "A task emits 3-9 kg.", "The cloud emits 5x less."],
    "published_low": [10.0, 0.2, 3.0, 5.0],
    "published_high": [10.0, 0.3, 9.0, 5.0],
    "published_text": ["10x", "20-30%", "3-9 kg", "5x"],
    "published_reference": [10.0, 0.25, 6.0, 5.0],
    "recomputed_value": [10.0, 0.4, None, 2.5],
    "recomputed_low": [8.0, 0.35, None, 2.0],
    "recomputed_high": [10.0, 0.45, None, 6.0],
    "recomputed_text": ["10x (8x to 10x over the ranges)", "35% to 45%", "not recomputed", "2.5x (2x to 6x over the ranges)"],
    "relative_error": [0.0, 0.5, None, 0.5],
    "tolerance": [0.05, 0.1, 0.1, 0.1],
    "status": ["reproduced", "differs", "not reproducible", "inconclusive"],
    "reason": ["Recomputed from the bytes as Smith et al. do. Detail.", "The published 20-30% does not follow. Its inputs say 35-45%.",
               "Missing: the run's hours. And more.", "The published 5x lies inside the recomputed range (2x). Detail."],
    "verdict": ["10x holds as arithmetic: recomputed 10x.", "20-30% does not hold as published: recomputed 35% to 45%.",
                "3-9 kg cannot be checked: its inputs are not published.",
                "5x is neither confirmed nor refuted: it lies inside the recomputed range (2x)."],
    "case_id": ["alpha_case", "beta_case", None, "delta_case"],
    "citation_url": ["https://example.org/a", "https://example.org/b", "https://example.org/c", "https://example.org/d"],
    "inputs_paper": [3, 1, 0, 2],
    "inputs_secondary": [0, 2, 0, 1],
    "inputs_by_status": ["paper 3, assumed 1", "secondary 2, paper 1", "none: no case recomputes it", "paper 2, secondary 1"],
}).with_columns(
    (pl.col("published_low") / pl.col("published_reference")).alias("published_low_ratio"),
    (pl.col("published_high") / pl.col("published_reference")).alias("published_high_ratio"),
    (pl.col("recomputed_value") / pl.col("published_reference")).alias("recomputed_ratio"),
    (pl.col("recomputed_low") / pl.col("published_reference")).alias("recomputed_low_ratio"),
    (pl.col("recomputed_high") / pl.col("published_reference")).alias("recomputed_high_ratio"),
)


ANSWERS = pl.DataFrame({"scenario_id": ["s"], "device_class": ["laptop"], "edge_design": ["pipeline"],
                        "reduction_factor_with_comm": [0.087], "verdict": ["edge emits more"], "claim_id": ["delta2023_ratio"]})


def lines(page_html: str) -> dict[str, str]:
    """The claim sentences of a page (or of sentences_html), unescaped, by claim id."""
    block = re.search(r'<div class="sides" id="claim-sentences"[^>]*>(.*?)</div>', page_html).group(1)
    return {m.group(1): html.unescape(re.sub(r"<[^>]+>", "", m.group(2)))
            for m in re.finditer(r'<li id="claim-([a-z0-9_]+)"[^>]*>(.*?)</li>', block)}


def sides(page_html: str) -> dict[str, list[str]]:
    """The claim ids of each side's column, in order."""
    return {side: re.findall(r'<li id="claim-([a-z0-9_]+)"', body)
            for side, body in re.findall(r'<section class="side" id="side-([a-z]+)">(.*?)</section>', page_html)}


def expected_line(row: dict) -> str:
    """The line of a claim: its reason to the first full stop that ends a sentence (not "et al.")."""
    first = re.split(r"(?<!\bal)\.\s", row["reason"], maxsplit=1)[0].rstrip(".")
    return f"{row['paper']}, {row['status']}: {row['verdict']} Inputs: {row['inputs_by_status']}. {first}."


def test_the_claims_for_and_against_stand_side_by_side_one_line_each() -> None:
    """Paper, status and the mart's verdict per claim, its inputs by status and the first sentence of its reason (the
    whole reason on hover), in the column of the side it argues; this project's own verdict above them."""
    text = claims.sentences_html(ROWS, ANSWERS)
    found = lines(text)
    assert set(found) == set(ROWS.get_column("claim_id"))
    for row in ROWS.iter_rows(named=True):
        assert found[row["claim_id"]] == expected_line(row)
        assert f'title="{html.escape(row["reason"])}"' in text
    assert found["alpha2020_ratio"].endswith("Recomputed from the bytes as Smith et al. do.")
    assert sides(text) == {"for": ["alpha2020_ratio"], "against": ["beta2021_share", "delta2023_ratio"], "neutral": ["gamma2022_task"]}
    own = html.unescape(re.search(r'<p class="answer" id="own-verdict">([^<]+)</p>', text).group(1))
    assert own.endswith("s laptop (pipeline): R 0.087, edge emits more.")


def test_answer_counts_the_rows() -> None:
    answer = claims.answer(ROWS)
    assert answer == ("1 of 4 published claims about edge and decentralised training (1 for training outside the data centre, "
                      "2 against, 1 neither) reproduce from their inputs (Alpha et al. 2020); 1 is inconclusive (Delta et al. 2023), "
                      "1 differs (Beta et al. 2021) and 1 cannot be checked (Gamma et al. 2022).")
    assert not re.search(r"\.\s+[A-Z]", answer)  # one sentence


def test_the_audited_claim_s_inputs_are_counted_paper_against_secondary() -> None:
    assert claims.audited_inputs(ROWS, "delta2023_ratio") == (
        "The audited claim (Delta et al. 2023, 5x) rests on 2 inputs read in the paper against 1 read through a review of it "
        "(secondary); all its inputs by status: paper 2, secondary 1.")


def test_chart_keeps_a_claim_it_cannot_recompute() -> None:
    """Two rows per claim, relative to the published value; a not reproducible claim keeps its rows, without numbers."""
    rows = claims.chart_rows(claims.labels(ROWS))
    assert rows.height == 2 * ROWS.height
    gamma = rows.filter(claim_id="gamma2022_task").sort("series", descending=True)
    assert gamma.get_column("series").to_list() == ["recomputed", "published"]
    assert gamma.row(0, named=True)["shown"] == "not reproducible" and gamma.row(0, named=True)["mid"] is None
    assert gamma.row(1, named=True)["lo"] == pytest.approx(0.5) and gamma.row(1, named=True)["hi"] == pytest.approx(1.5)
    beta = rows.filter(claim_id="beta2021_share", series="recomputed").row(0, named=True)
    assert (beta["lo"], beta["mid"], beta["hi"]) == pytest.approx((1.4, 1.6, 1.8))
    assert claims.domain(rows) == pytest.approx([0.25, 4.0])  # every ratio within 4x of the published value: the least axis
    assert claims.domain(rows.with_columns(pl.col("hi") * 10)) == pytest.approx([0.25, 18 * 1.5])
    spec = claims.claims_chart(ROWS).to_dict(validate=True)
    assert spec["layer"][-1]["mark"]["type"] == "text"  # the status of a claim with no recomputation is written out


def test_small_numbers_keep_their_digits() -> None:
    assert [claims.number(v, ",.1f") for v in (72341.895, 1.0, 0.0042, 0.0, None)] == ["72,341.9", "1.0", "0.0042", "0.0", ""]


def test_labels_stay_apart_when_two_claims_read_the_same() -> None:
    twice = pl.concat([ROWS, ROWS.head(1).with_columns(pl.lit("alpha2020_other").alias("claim_id"))])
    labels = claims.labels(twice).get_column("label").to_list()
    assert len(set(labels)) == len(labels)
    assert "[alpha2020_other]" in labels[-1]


def test_page_leads_with_every_claim_of_the_mart(site: dict, con) -> None:
    text = site["pages"]["claims"]["html"].read_text(encoding="utf-8")
    mart = query_pl(con, "select claim_id, paper, stance, status, verdict, reason, published_text, recomputed_text, inputs_by_status "
                         "from marts.claims")
    assert mart.height >= 1
    found = lines(text)
    assert set(found) == set(mart.get_column("claim_id"))
    for row in mart.iter_rows(named=True):
        assert found[row["claim_id"]] == expected_line(row), found[row["claim_id"]]
        # the table has it too, and the chart's data (a not reproducible claim is not dropped)
        assert f"<td><code>{row['claim_id']}</code></td>" in text
        assert html.escape(row["recomputed_text"]) in text
        assert f'"claim_id":"{row["claim_id"]}"' in text
    # the answer comes first and counts the statuses of the mart's rows
    answer = html.unescape(re.search(r'<p class="answer" id="answer">([^<]+)</p>', text).group(1))
    counts = dict(mart.group_by("status").len().iter_rows())
    assert answer.startswith(f"{counts.get('reproduced', 0)} of {mart.height} published claim")
    assert {side: sorted(ids) for side, ids in sides(text).items()} == {
        side: sorted(mart.filter(stance=side).get_column("claim_id")) for side in ("for", "against", "neutral")}
    assert text.index('id="answer"') < text.index('id="chart-claims"') < text.index('id="claim-sentences"') < text.index('id="claims"')


def test_traffic_table_is_the_marts_central_rows(site: dict, con) -> None:
    text = site["pages"]["claims"]["html"].read_text(encoding="utf-8")
    table = re.search(r'<table id="claim-traffic">(.*?)</table>', text).group(1)
    rows = query_pl(con, "select scenario_id, network_method, wan_tb, network_kwh from marts.claim_traffic where range_end = 'central'")
    assert table.count("<tr>") == rows.height + 1  # and the heading
    found = re.findall(r"<tr>(.*?)</tr>", table)[1:]
    for r in rows.iter_rows(named=True):
        row = next(f for f in found if f"<code>{r['scenario_id']}</code>" in f and f"<code>{r['network_method']}</code>" in f)
        assert f"<td>{claims.number(r['wan_tb'], ',.1f')}</td><td>{claims.number(r['network_kwh'], ',.1f')}</td>" in row
    assert query(con, "claim_traffic", {"range_end": "central"}).height == rows.height


def test_the_page_s_statuses_and_sides_are_the_registry_s() -> None:
    from dashboards.shell import STATUS_COLOURS
    from schemas.statuses import CLAIM_STATUSES, REPRODUCTION_STATUSES, STANCES

    assert claims.CLAIM_STATUSES == CLAIM_STATUSES and list(claims.SIDES) == STANCES
    assert set(STATUS_COLOURS) == set(CLAIM_STATUSES) | set(REPRODUCTION_STATUSES)
