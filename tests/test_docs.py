"""The verdict in README.md and docs/findings.md is the warehouse's: rendered again from a fresh build and compared."""

from __future__ import annotations

import re
from pathlib import Path

import polars as pl
import pytest

from pipelines.warehouse.database import open_readonly
from pipelines.warehouse.docs import (
    ANSWER_BEGIN,
    ANSWER_END,
    BEGIN,
    DRIVERS_BEGIN,
    DRIVERS_END,
    DRIVERS_FULL_BEGIN,
    DRIVERS_FULL_END,
    END,
    ENDS_BEGIN,
    ENDS_END,
    FULL_STUDY_BASE_SAMPLES,
    FULL_STUDY_RESULTS,
    REPRODUCTION_BEGIN,
    REPRODUCTION_END,
    VALIDATION_BEGIN,
    VALIDATION_END,
    answer_from,
    between,
    claim_answer,
    drivers_table,
    ends_table,
    full_drivers_table,
    read_full_study,
    replace_between,
    reproduction_table,
    validation_table,
    verdict_table,
)
from pipelines.warehouse.queries import query_pl
from schemas.vocabulary import (
    VERDICT_BELOW,
    VERDICT_EDGE_MORE,
    VERDICT_HOLDS,
    VERDICT_INFEASIBLE,
    VERDICT_UNCERTAIN,
)

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.slow  # the docs quote a default `make run` (50,000 draws per scenario): a second, full build
def test_every_generated_block_is_the_warehouse(default_warehouse: Path) -> None:
    """Every block `edge-carbon docs` renders from a build, rendered again from a fresh default build: every number equal."""
    with open_readonly(default_warehouse) as con:
        table = verdict_table(con)
        reproduction = reproduction_table(con)
        drivers = drivers_table(con)
        validation = validation_table(con)
        answer = claim_answer(con)
    assert "realistic_consequential" in table and "| **measured_rates** |" in table
    readme = (ROOT / "README.md").read_text()
    assert between(readme, ANSWER_BEGIN, ANSWER_END) == answer, "README.md's answer is stale: run `make run` then `edge-carbon docs`"
    findings = (ROOT / "docs" / "findings.md").read_text()
    assert between(readme, BEGIN, END) == table, "README.md's verdict is stale: run `make run` then `edge-carbon docs`"
    assert between(findings, BEGIN, END) == table, "docs/findings.md's verdict is stale: run `edge-carbon docs`"
    assert between(findings, REPRODUCTION_BEGIN, REPRODUCTION_END) == reproduction
    assert between(findings, DRIVERS_BEGIN, DRIVERS_END) == drivers, "docs/findings.md's drivers are stale: run `edge-carbon docs`"
    assert between((ROOT / "docs" / "validation.md").read_text(), VALIDATION_BEGIN, VALIDATION_END) == validation


#: Columns of the verdict table that depend on the Monte Carlo (p05-p95 twice, the band over every draw, the feasible
#: share, the shares of feasible draws reaching 1 and 4, the verdict).
MONTE_CARLO_COLUMNS = ("p05-p95", "p05-p95, all draws", "feasible share", "feasible, R >= 1 / R >= 4", "verdict (set by)")


def test_readme_verdict_point_values_are_the_warehouse(built_warehouse: Path) -> None:
    """The columns that hold at any run config (all but the Monte Carlo's) against the small test
    build; the whole table is checked by the slow test above."""

    def points(table: str) -> list[list[str]]:
        header = [c.strip() for c in table.splitlines()[0].split("|")]
        return [[c for i, c in enumerate(line.split("|")) if header[i] not in MONTE_CARLO_COLUMNS] for line in table.splitlines()]

    with open_readonly(built_warehouse) as con:
        table = verdict_table(con)
    readme = (ROOT / "README.md").read_text()
    assert len(points(table)[2]) == len(table.splitlines()[2].split("|")) - 6
    assert points(between(readme, BEGIN, END)) == points(table), "README.md's verdict is stale: run `make run` then `edge-carbon docs`"


def sentences(text: str) -> list[str]:
    """``text`` split after each full stop that a capital letter follows."""
    return re.split(r"(?<=\.)\s+(?=[A-Z])", text.strip())


def test_readme_opens_its_answer_with_three_sentences(built_warehouse: Path) -> None:
    """"Does the claim hold?" opens with the generated answer, before the table; its first sentence
    (R compute only in the paper's frame) holds at any run config, the whole answer at the
    defaults (the slow test above)."""
    readme = (ROOT / "README.md").read_text()
    section = readme.split("## Does the claim hold?\n", 1)[1]
    assert section.lstrip("\n").startswith(ANSWER_BEGIN)
    assert section.index(ANSWER_END) < section.index(BEGIN)
    quoted = sentences(between(readme, ANSWER_BEGIN, ANSWER_END))
    assert len(quoted) == 3, quoted
    with open_readonly(built_warehouse) as con:
        fresh = sentences(claim_answer(con))
    assert len(fresh) == 3 and quoted[0] == fresh[0]
    assert "R compute only is" in quoted[0] and "for laptops" in quoted[0] and "4-8x" in quoted[0]


def _headline(*rows: tuple[str, str, str, float, float, float | None, float | None, str]) -> pl.DataFrame:
    """marts.verdict headline rows: (scenario, frame, class, R, R with comm, p05 and p95 with comm, verdict) at a 10 MB/s link."""
    names = ["scenario_id", "accounting_frame", "device_class", "reduction_factor", "reduction_factor_with_comm",
             "p05_with_comm_all_draws", "p95_with_comm_all_draws", "verdict"]
    methods = {"as_published": "radio", "attributional": "time", "consequential": "marginal"}  # each frame's verdict-setting method
    return pl.DataFrame([dict(zip(names, r, strict=True)) for r in rows]).with_columns(
        pl.lit(10.0).alias("link_mb_per_s"), pl.col("accounting_frame").replace_strict(methods).alias("network_method"),
        # the share of every draw that is feasible and reaches 4: a quarter where the band reaches 4, else none
        pl.when(pl.col("p95_with_comm_all_draws") >= 4).then(0.25).otherwise(0.0).alias("share_feasible_r_ge_4"))


def test_the_answer_reads_the_verdicts() -> None:
    paper = [("paper", "as_published", "laptop", 9.5, 9.2, None, None, VERDICT_INFEASIBLE),
             ("paper", "as_published", "phone", 3.1, 2.95, None, None, VERDICT_INFEASIBLE),
             ("high", "as_published", "laptop", 10.244, 9.9, None, None, VERDICT_INFEASIBLE)]
    real = [("real", "attributional", "laptop", 1.56, 0.59, 0.18, 1.88, VERDICT_BELOW),
            ("real", "attributional", "phone", 0.5, 0.04, 0.01, 0.14, VERDICT_EDGE_MORE),
            ("other", "consequential", "laptop", 5.11, 1.79, 0.57, 5.85, VERDICT_UNCERTAIN)]
    text = answer_from(_headline(*paper, *real))
    first, second, third = sentences(text)
    assert first == ("On the paper's own inputs and arithmetic (frame `as_published`, headline basis), R compute only is "
                     "9.50-10.24 for laptops and 3.10 for phones, against the claimed 4-8x, but none of these 3 fleets can send "
                     "their traffic over the stated 10 MB/s link.")
    assert second == ("On the fleets that could exist, R with communication (p05-p95 over every Monte Carlo draw, a draw whose "
                      "fleet cannot send its traffic counted as R = 0) is 0.59 (p05-p95 0.18-1.88, R >= 4 in 0% of draws) for "
                      "laptops and 0.04 (p05-p95 0.01-0.14, R >= 4 in 0% of draws) for phones in real (network energy by the "
                      "`time` method); and 1.79 (p05-p95 0.57-5.85, R >= 4 in 25% of draws) for laptops in other (network energy "
                      "by the `marginal` method).")
    assert third == ("So the claim holds for certain on none of these 3 fleets (edge emits more: 1, below the claim (R < 4): 1, "
                     "claim uncertain (p05-p95 spans 4): 1).")
    # a feasible paper fleet and a holding verdict change the words, not just the numbers
    holding = [("paper", "as_published", "laptop", 9.5, 9.2, 8.0, 10.0, VERDICT_HOLDS), *paper[1:], *real]
    first, _, third = sentences(answer_from(_headline(*holding)))
    assert first.endswith("but only 1 of these 3 fleets can send their traffic over the stated 10 MB/s link.")
    assert third.startswith("So the claim holds on 1 of these 4 fleets (edge emits more: 1,")
    assert sentences(answer_from(_headline(holding[0])))[2] == f"So the claim holds on this one fleet ({VERDICT_HOLDS}: 1)."
    # no fleet that could exist: still three sentences, none of them a number the rows do not give
    assert len(sentences(answer_from(_headline(*paper)))) == 3


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


def test_replace_between_keeps_the_rest() -> None:
    text = f"intro\n{BEGIN}\nold\n{END}\noutro\n"
    assert replace_between(text, BEGIN, END, "new") == f"intro\n{BEGIN}\nnew\n{END}\noutro\n"
