"""The verdict in README.md and docs/findings.md is the warehouse's: rendered again from a fresh build and compared.
README opens with it in plain words: three sentences, a table of the headline rows and a glossary of its columns."""

from __future__ import annotations

import re
from pathlib import Path

import polars as pl
import pytest

from dashboards.shell import ratio_text
from pipelines.warehouse import claims_docs
from pipelines.warehouse.database import open_readonly
from pipelines.warehouse.docs import (
    ANSWER_BEGIN,
    ANSWER_END,
    BEGIN,
    CAUSES_BEGIN,
    CAUSES_END,
    DRIVERS_BEGIN,
    DRIVERS_END,
    DRIVERS_FULL_BEGIN,
    DRIVERS_FULL_END,
    END,
    ENDS_BEGIN,
    ENDS_END,
    FULL_STUDY_BASE_SAMPLES,
    FULL_STUDY_RESULTS,
    GLOSSARY_BEGIN,
    GLOSSARY_END,
    HEADLINE_BEGIN,
    HEADLINE_COLUMNS,
    HEADLINE_END,
    REPRODUCTION_BEGIN,
    REPRODUCTION_END,
    VALIDATION_BEGIN,
    VALIDATION_END,
    answer_from,
    between,
    causes_table,
    claim_answer,
    drivers_table,
    ends_table,
    full_drivers_table,
    glossary,
    headline_table,
    read_full_study,
    replace_between,
    reproduction_table,
    validation_table,
    verdict_table,
)
from pipelines.warehouse.queries import query_pl
from schemas.vocabulary import (
    VERDICT_EDGE_MORE,
    VERDICT_HOLDS,
    VERDICT_INFEASIBLE,
    VERDICT_UNCERTAIN,
)

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.slow  # the docs quote a default `make run` (50,000 draws per scenario): a second, full build
def test_every_generated_block_is_the_warehouse(default_warehouse: Path) -> None:
    """Every block `edge-carbon docs` renders from a build, rendered again from a fresh default build: every number equal."""
    with open_readonly(default_warehouse) as con:
        table = verdict_table(con)
        headline = headline_table(con)
        reproduction = reproduction_table(con)
        drivers = drivers_table(con)
        validation = validation_table(con)
        answer = claim_answer(con)
        audited = claims_docs.audited_inputs(con)
        sides = claims_docs.sides_table(con)
    assert "realistic_consequential" in table and "| **measured_rates** |" in table
    readme = (ROOT / "README.md").read_text()
    assert between(readme, ANSWER_BEGIN, ANSWER_END) == answer, "README.md's answer is stale: run `make run` then `edge-carbon docs`"
    assert between(readme, HEADLINE_BEGIN, HEADLINE_END) == headline, "README.md's headline table is stale: run `edge-carbon docs`"
    assert between(readme, GLOSSARY_BEGIN, GLOSSARY_END) == glossary()
    assert between(readme, claims_docs.AUDITED_BEGIN, claims_docs.AUDITED_END) == audited, "README.md's audited-inputs line is stale: run `edge-carbon docs`"
    assert audited.startswith("The audited claim (Xue et al. 2025, 4x (phones) to 8x (laptops)) rests on ")
    claims_md = (ROOT / "docs" / "claims.md").read_text()
    assert between(claims_md, claims_docs.SIDES_BEGIN, claims_docs.SIDES_END) == sides, "docs/claims.md's claims for and against are stale: run `edge-carbon docs`"
    findings = (ROOT / "docs" / "findings.md").read_text()
    assert BEGIN not in readme, "the full verdict table is docs/findings.md's"
    assert between(findings, BEGIN, END) == table, "docs/findings.md's verdict is stale: run `edge-carbon docs`"
    assert between(findings, REPRODUCTION_BEGIN, REPRODUCTION_END) == reproduction
    assert between(findings, DRIVERS_BEGIN, DRIVERS_END) == drivers, "docs/findings.md's drivers are stale: run `edge-carbon docs`"
    assert between((ROOT / "docs" / "validation.md").read_text(), VALIDATION_BEGIN, VALIDATION_END) == validation


#: Columns of the verdict table that depend on the Monte Carlo (p05-p95 twice, the band over every draw, the feasible
#: share, the shares of feasible draws reaching 1 and 4, the verdict).
MONTE_CARLO_COLUMNS = ("p05-p95", "p05-p95, all draws", "feasible share", "feasible, R >= 1 / R >= 4", "verdict (set by)")
#: Columns of README's headline table that depend on the Monte Carlo (the band over every draw, the share of draws
#: reaching the claim, the verdict).
HEADLINE_MONTE_CARLO_COLUMNS = ("range in 90% of draws", "verdict")


def points(table: str, monte_carlo: tuple[str, ...]) -> list[list[str]]:
    """Each line of a Markdown table without the columns named in ``monte_carlo``."""
    header = [c.strip() for c in table.splitlines()[0].split("|")]
    return [[c for i, c in enumerate(line.split("|")) if header[i] not in monte_carlo] for line in table.splitlines()]


def test_findings_verdict_point_values_are_the_warehouse(built_warehouse: Path) -> None:
    """The columns that hold at any run config (all but the Monte Carlo's) against the small test
    build; the whole table is checked by the slow test above."""
    with open_readonly(built_warehouse) as con:
        table = verdict_table(con)
    findings = (ROOT / "docs" / "findings.md").read_text()
    assert len(points(table, MONTE_CARLO_COLUMNS)[2]) == len(table.splitlines()[2].split("|")) - 6
    assert points(between(findings, BEGIN, END), MONTE_CARLO_COLUMNS) == points(table, MONTE_CARLO_COLUMNS), (
        "docs/findings.md's verdict is stale: run `make run` then `edge-carbon docs`")


def test_findings_claims_are_the_warehouse(built_warehouse: Path) -> None:
    """docs/findings.md's claims table is marts.claims (no Monte Carlo figure in it)."""
    with open_readonly(built_warehouse) as con:
        table = claims_docs.claims_table(con)
    assert "`jaghouar2024_bandwidth_400x` | Jaghouar et al. 2024 | 400x | 400x (" in table
    findings = (ROOT / "docs" / "findings.md").read_text()
    assert between(findings, claims_docs.CLAIMS_BEGIN, claims_docs.CLAIMS_END) == table, "docs/findings.md's claims are stale: run `edge-carbon docs`"
    # the prose: each published share lies between the two network methods' recomputations
    with open_readonly(built_warehouse) as con:
        shares = query_pl(con, "select published_low, published_high, recomputed_low, recomputed_high from marts.claims "
                               "where quantity = 'emission_share'")
    assert shares.height == 4
    for low, high, ours_low, ours_high in shares.iter_rows():
        assert ours_low < low <= high < ours_high


def test_readme_headline_point_values_are_the_warehouse(built_warehouse: Path) -> None:
    """README's headline table against the small test build, but for its Monte Carlo columns (the slow test above
    compares them at the defaults): one row per realistic scenario and device class, the rows that set the verdicts."""
    with open_readonly(built_warehouse) as con:
        table = headline_table(con)
        expected = query_pl(con, "select scenario_id, device_class, edge_design, reduction_factor_with_comm from marts.verdict "
                                 "where is_answer order by accounting_frame, scenario_id, device_class")
    quoted = between((ROOT / "README.md").read_text(), HEADLINE_BEGIN, HEADLINE_END)
    assert points(quoted, HEADLINE_MONTE_CARLO_COLUMNS) == points(table, HEADLINE_MONTE_CARLO_COLUMNS), (
        "README.md's headline table is stale: run `make run` then `edge-carbon docs`")
    rows = [[c.strip() for c in line.split("|")[1:-1]] for line in quoted.splitlines()[2:]]
    assert [(r[0], r[1], r[2], r[3]) for r in rows] == [(s, c, d, ratio_text(v)) for s, c, d, v in expected.rows()]
    assert {r[0] for r in rows} == {"realistic_attributional", "realistic_consequential"}


def sentences(text: str) -> list[str]:
    """``text`` split after each full stop that a capital letter follows."""
    return re.split(r"(?<=\.)\s+(?=[A-Z])", text.strip())


def test_readme_opens_its_answer_with_three_sentences(built_warehouse: Path) -> None:
    """"Does the claim hold?" opens with the generated answer, then the headline table and the causes block; its last
    sentence (the paper's own numbers, computation only, after the answer) holds at any run config, the whole answer at
    the defaults (the slow test above)."""
    readme = (ROOT / "README.md").read_text()
    section = readme.split("## Does the claim hold?\n", 1)[1]
    assert section.lstrip("\n").startswith(ANSWER_BEGIN)
    assert section.index(ANSWER_END) < section.index(HEADLINE_BEGIN) < section.index(CAUSES_BEGIN) < section.index("### Glossary")
    quoted = sentences(between(readme, ANSWER_BEGIN, ANSWER_END))
    assert len(quoted) == 3, quoted
    with open_readonly(built_warehouse) as con:
        fresh = sentences(claim_answer(con))
        designs = set(query_pl(con, "select edge_design from marts.verdict where is_answer").get_column("edge_design"))
    assert len(fresh) == 3 and quoted[2] == fresh[2]
    assert "times as much carbon as the laptops" in quoted[2] and "(the claim: 4-8 times)" in quoted[2]
    # the answer names the best design of each class, the compute-only figure comes after it
    assert quoted[0].startswith("Training the same model at measured rates") and all(f"({d})" in quoted[0] for d in designs)


def test_readme_causes_block_splits_each_answer_row(built_warehouse: Path) -> None:
    """The causes block: one row per answer row, its shares of the devices' added carbon by cause summing to 100%, the
    same rows as the warehouse gives; every header in the glossary."""
    readme = (ROOT / "README.md").read_text()
    block = between(readme, CAUSES_BEGIN, CAUSES_END).splitlines()
    header = [c.strip() for c in block[0].split("|")[1:-1]]
    assert header[:3] == ["scenario", "device", "best design"] and {"embodied", "electricity", "network"} <= set(header)
    for column in header:
        assert f"- **{column}**:" in readme, column
    with open_readonly(built_warehouse) as con:
        fresh = causes_table(con).splitlines()
        rows = query_pl(con, "select * from marts.verdict where is_answer")
    assert len(block) == len(fresh) == 2 + rows.height == 6
    assert [line.split("|")[1:4] for line in block] == [line.split("|")[1:4] for line in fresh]
    for row in rows.iter_rows(named=True):
        parts = row["edge_operational_kgco2e"] + row["edge_embodied_kgco2e"] + row["comm_kgco2e"]
        assert parts == pytest.approx(row["edge_added_kgco2e"], rel=1e-12)


#: Words a newcomer cannot read before the glossary defines them: the model's symbol, its dimensions and statistics.
JARGON = (r"\bR\b", r"\bframe\b", r"\bbasis\b", r"network method", r"\bp05\b", r"\bp95\b", r"Monte Carlo",
          r"as_published", r"measured_rates", r"attributional", r"consequential")


def test_readme_answers_in_plain_words_in_its_first_60_lines() -> None:
    """README's first 60 lines hold the three sentences and the headline table (4 rows, at most 7
    columns); the sentences use none of the model's jargon; README stays under 250 lines."""
    readme = (ROOT / "README.md").read_text()
    lines = readme.splitlines()
    assert len(lines) < 250, f"README.md has {len(lines)} lines"
    top = "\n".join(lines[:60])
    answer = between(readme, ANSWER_BEGIN, ANSWER_END)
    assert ANSWER_END in top and answer in top
    for word in JARGON:
        assert not re.search(word, answer), f"README's answer uses {word!r} before the glossary defines it"
    assert len(sentences(answer)) == 3
    assert HEADLINE_END in top and CAUSES_END in top
    table = between(readme, HEADLINE_BEGIN, HEADLINE_END).splitlines()
    header = [c.strip() for c in table[0].split("|")[1:-1]]
    assert header == list(HEADLINE_COLUMNS) and len(header) <= 7
    body = table[2:]
    assert len(body) == 4 and all(len(line.split("|")) - 2 == len(header) for line in body), body
    assert {tuple(c.strip() for c in line.split("|")[1:3]) for line in body} == {
        (s, c) for s in ("realistic_attributional", "realistic_consequential") for c in ("laptop", "phone")}


def test_every_column_of_the_headline_table_is_in_the_glossary() -> None:
    readme = (ROOT / "README.md").read_text()
    match = re.search(r"^#{2,3} Glossary\n(.*?)(?=^#{1,3} )", readme, flags=re.S | re.M)
    assert match, "README.md has no Glossary section"
    section = match.group(1)
    header = [c.strip() for c in between(readme, HEADLINE_BEGIN, HEADLINE_END).splitlines()[0].split("|")[1:-1]]
    for column in header:
        assert f"**{column}**" in section, f"the Glossary does not define the column {column!r}"
    # and the words the answer uses that a newcomer may not know
    for term in ("cloud GPU", "fleet", "home link", "random draws"):
        assert term in section, term
    assert readme.count("Glossary\n") == 1


def _answers(*rows: tuple[str, str, str, float, float | None, float | None, str, str, float]) -> pl.DataFrame:
    """Answer rows (sql/docs/headline_verdict.sql): (scenario, class, best design, R with comm, p05 and p95 over every draw,
    verdict, worst design, its R)."""
    names = ["scenario_id", "device_class", "edge_design", "reduction_factor_with_comm", "p05_with_comm_all_draws",
             "p95_with_comm_all_draws", "verdict", "worst_design", "worst_reduction_factor_with_comm"]
    return pl.DataFrame([dict(zip(names, r, strict=True)) for r in rows]).with_columns(
        # the share of every draw that is feasible and reaches 4: a quarter where the band reaches 4, else none
        pl.when(pl.col("p95_with_comm_all_draws") >= 4).then(0.25).otherwise(0.0).alias("share_feasible_r_ge_4"))


def _paper(*rows: tuple[str, str, float, str]) -> pl.DataFrame:
    """The paper frame's verdict rows: (scenario, class, R compute only, verdict) at a 10 MB/s link."""
    return pl.DataFrame([dict(zip(["scenario_id", "device_class", "reduction_factor", "verdict"], r, strict=True)) for r in rows]
                        ).with_columns(pl.lit(10.0).alias("link_mb_per_s"))


def test_the_answer_reads_the_verdicts() -> None:
    paper = _paper(("paper", "laptop", 9.5, VERDICT_INFEASIBLE), ("paper", "phone", 3.1, VERDICT_INFEASIBLE),
                   ("high", "laptop", 10.244, VERDICT_INFEASIBLE))
    real = [("real", "laptop", "diloco_pipeline", 0.2, 0.1, 0.5, VERDICT_EDGE_MORE, "pipeline", 0.05),
            ("real", "phone", "pipeline", 0.04, 0.01, 0.14, VERDICT_EDGE_MORE, "diloco_pipeline", 0.03),
            ("other", "laptop", "diloco_pipeline", 1.79, 0.57, 5.85, VERDICT_UNCERTAIN, "pipeline", 0.9)]
    first, second, third = sentences(answer_from(_answers(*real), paper))
    # the answer first: how many times the other side's carbon, at the best design and the worst; R >= 1 reads as the cloud's
    assert first == ("Training the same model at measured rates on both sides, network energy included, the cloud GPUs emit "
                     "0.20-1.79 times the laptops' carbon at their best design (diloco_pipeline); and the phones emit 25 "
                     "times the cloud GPUs' carbon at their best design (pipeline); on their worst admissible design, the "
                     "laptops emit 1.1-20 times the cloud GPUs' carbon (pipeline); and the phones emit 33 times the cloud "
                     "GPUs' carbon (diloco_pipeline).")
    assert second == ("So the claim (4-8 times less carbon on the devices) holds for certain on none of these 3 fleets: on 2 "
                      "the devices emit more carbon than the cloud; and on 1 the random draws fall on both sides of 4 times; "
                      "in 90% of all random draws of the uncertain inputs (every range here counts every draw, one whose "
                      "fleet cannot train as 0) the cloud emits 0.010-5.85 times the devices' carbon, and 4 times or more in "
                      "0%-25% of them.")
    # the compute-only figure after the answer
    assert third == ("Counting computation only, on the paper's own numbers, the cloud GPUs emit 9.50-10.24 times as much "
                     "carbon as the laptops and 3.10 times as much carbon as the phones doing the same work (the claim: 4-8 "
                     "times), but none of the paper's 3 fleets could send their training traffic over the paper's 10 MB/s "
                     "home link.")
    one = _answers(("real", "laptop", "diloco_pipeline", 5.0, 4.5, 6.0, VERDICT_HOLDS, "pipeline", 4.2))
    assert sentences(answer_from(one, paper))[1].startswith(
        "So the claim (4-8 times less carbon on the devices) holds on this one fleet: the cloud emits at least 4 times as much")
    # every fleet the same verdict: all of them, in one clause
    assert sentences(answer_from(_answers(real[1], real[1]), paper))[1].startswith(
        "So the claim (4-8 times less carbon on the devices) holds on none of these 2 fleets: on both the devices emit more")
    # no fleet that could exist: still three sentences, none of them a number the rows do not give
    infeasible = _answers(("real", "laptop", "pipeline", 0.2, 0.0, 0.0, VERDICT_INFEASIBLE, "pipeline", 0.2))
    assert len(sentences(answer_from(infeasible, paper))) == 3


def test_findings_pattern_ends_are_the_vocabulary() -> None:
    assert between((ROOT / "docs" / "findings.md").read_text(), ENDS_BEGIN, ENDS_END) == ends_table()


def test_findings_quote_the_build_and_the_full_sobol_study(built_warehouse: Path) -> None:
    findings = (ROOT / "docs" / "findings.md").read_text()
    # the build's study states its own sample count (the default build's 256)
    assert between(findings, DRIVERS_BEGIN, DRIVERS_END).startswith("Sobol base samples: 256 (")
    # the full study's block is its results file, rendered
    full = ROOT / FULL_STUDY_RESULTS
    with open_readonly(built_warehouse) as con:
        assert between(findings, DRIVERS_FULL_BEGIN, DRIVERS_FULL_END) == full_drivers_table(full, con)
    study = read_full_study(full)
    assert set(study.get_column("base_samples")) == {FULL_STUDY_BASE_SAMPLES}
    top = study.filter((study.get_column("pattern") == "none") & (study.get_column("rank") == 1))
    assert top.height > 0
    # the top driver's first-order index is known to better than +-0.05 in every scenario and class
    assert (2 * top.get_column("s1_ci95") < 0.1).all(), top
    # it studied the model's inputs as they are: every scenario's drawn parameters, no more, no fewer
    with open_readonly(built_warehouse) as con:
        drawn = query_pl(con, "select distinct scenario_id, parameter from marts.uncertainty_drivers")
    assert sorted(drawn.rows()) == sorted(study.select("scenario_id", "parameter").unique().rows())


def test_findings_quote_the_sobol_convergence_and_the_build_reads_it() -> None:
    """The convergence block is its results file, rendered; the build's base sample size is the smallest there at which
    every headline row's top driver is the full study's."""
    from pipelines.warehouse.docs import CONVERGENCE_BEGIN, CONVERGENCE_END
    from pipelines.warehouse.sobol_convergence import (
        BUILD_BASE_SAMPLES,
        CONVERGENCE_RESULTS,
        convergence_table,
    )

    findings = (ROOT / "docs" / "findings.md").read_text()
    path = ROOT / CONVERGENCE_RESULTS
    assert between(findings, CONVERGENCE_BEGIN, CONVERGENCE_END) == convergence_table(path, BUILD_BASE_SAMPLES)
    rows = pl.read_csv(path).sort("base_samples")
    agreeing = rows.filter(pl.col("top_driver_agrees") == 1.0).get_column("base_samples")
    assert BUILD_BASE_SAMPLES == agreeing.min() and BUILD_BASE_SAMPLES in rows.get_column("base_samples").to_list()
    # every size above it agrees too, and the largest first-order distance shrinks as the sample grows
    assert agreeing.to_list() == [n for n in rows.get_column("base_samples").to_list() if n >= BUILD_BASE_SAMPLES]
    assert rows.get_column("max_s1_distance").to_list() == sorted(rows.get_column("max_s1_distance").to_list(), reverse=True)


def test_replace_between_keeps_the_rest() -> None:
    text = f"intro\n{BEGIN}\nold\n{END}\noutro\n"
    assert replace_between(text, BEGIN, END, "new") == f"intro\n{BEGIN}\nnew\n{END}\noutro\n"
