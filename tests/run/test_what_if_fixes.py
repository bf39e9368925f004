"""A what-if's failures end with a fix for their cause: a source or claim registered since the last
full build (the full build comes first), a scenario id no manifest registers (the closest ones), a
scenario that breaks its frame's rules (its file); and a what-if names the pages it left as published."""

from __future__ import annotations

import shutil
from pathlib import Path

import duckdb
import pytest

from pipelines.cli import main
from pipelines.ingest.manifest import load_manifest
from pipelines.ingest.manifest_writing import LOCAL_MANIFEST
from pipelines.paths import SOURCES_DIR, SOURCES_ENV
from pipelines.run.console import what_if_site_line
from pipelines.run.fixes import fix_for
from pipelines.run.launch import unstaged_scenarios, with_unstaged

#: The fix of a failure no rule recognises ends with this.
TO_THE_LOG = "log.txt has every step's output"


@pytest.fixture
def sources(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A private copy of the shipped sources (without a local.toml of the checkout's), in use, with one
    scenario of the user's, ``replaced``, registered in its local.toml."""
    copied = tmp_path / "sources"
    shutil.copytree(SOURCES_DIR, copied, ignore=shutil.ignore_patterns(LOCAL_MANIFEST))
    monkeypatch.setenv(SOURCES_ENV, str(copied))
    assert main(["scenario", "new", "replaced", "--extends", "realistic_attributional", "--set", "device_replacement_share=0.3"]) == 0
    return copied


def test_a_source_registered_since_the_last_build_needs_the_full_build(sources: Path) -> None:
    failure = "core/scenario_parameters: source_ids_join\n  orphan_source_ids: scenario_replaced (95 rows)"
    assert fix_for([failure], "ec", "log.txt") == (
        "fix: scenario_replaced is registered but not in the published staging.sources (core/scenario_parameters needs it), "
        "which only a full build writes: make run (or ec run) first")
    unregistered = "staging/device_specs: source_ids_join\n  orphan_source_ids: nobody_registered_this (3 rows)"
    assert fix_for([unregistered], "ec", "log.txt").endswith(TO_THE_LOG)  # not this cause: no fix is guessed


def test_a_reference_that_finds_no_row_names_the_files_a_what_if_left_unstaged(sources: Path, tmp_path: Path) -> None:
    """A published staging.sources without curated_device_specs (as if registered since the last full build), nor
    the scenario file ``replaced``: a reference of a scenario row that found no row is followed by the first, whose
    fix is the full build; the what-if adds the second itself."""
    published = tmp_path / "published.duckdb"
    with duckdb.connect(str(published)) as con:
        con.execute("create schema staging")
        con.execute("create table staging.sources (source_id varchar)")
        con.executemany("insert into staging.sources values (?)",
                        [[e.id] for e in load_manifest() if e.id not in ("curated_device_specs", "scenario_replaced")])
    assert unstaged_scenarios(published) == ["scenario_replaced"]
    unresolved = ("core__scenario_parameters: pipelines.errors.UnresolvedRow: sources/scenarios/replaced.csv, line 2: scenario "
                  "replaced, parameter cloud_gpu_power_w: factor_ref device_specs.device_id=my-gpu.tdp_w finds no row (no single row "
                  "with device_id = 'my-gpu' and a tdp_w value in staging.device_specs); add that row to the source of "
                  "staging.device_specs or point the reference at a row it has, or remove the row to inherit realistic_attributional's value")
    other = "marts__verdict: pipelines.errors.EdgeCarbonError: something else"
    noted = with_unstaged([unresolved, other], published)
    assert noted == [unresolved + "\n  registered since the last full build, which a what-if does not stage: curated_device_specs", other]
    assert fix_for(noted, "ec", "log.txt") == (
        "fix: curated_device_specs, registered since the last full build, may hold the row the reference above looks for, "
        "and a what-if stages scenario files alone: make run (or ec run) first")
    assert with_unstaged([other], published) == [other]  # no reference failed: nothing added
    assert fix_for([unresolved], "ec", "log.txt").startswith("fix: correct sources/scenarios/replaced.csv at row 2")  # every file staged


def test_an_unregistered_scenario_of_a_run_gets_the_closest_id(sources: Path) -> None:
    """The message of a what-if started elsewhere (the Dagster UI's config) gets the fix the command line's refusal has."""
    failure = ("core__scenario_parameters: ValueError: not registered scenarios: replace (sources/manifest/scenarios.toml lists "
               "the shipped ones, sources/manifest/local.toml yours; an abstract one is only a parent)")
    assert fix_for([failure], "ec", "log.txt") == (
        f"fix: ec run --scenario replaced; or make replace first: ec scenario new replace --extends PARENT --set PARAM=VALUE "
        f"(writes {sources.resolve()}/scenarios/replace.csv, registered in {sources.resolve()}/manifest/local.toml)")


def test_an_unknown_claim_is_told_from_one_added_since_the_last_build(sources: Path) -> None:
    summary = ("core/scenario_parameters: claims_known\n  sources/scenarios/replaced.csv, line 2: claim_id = '{claim}' is no claim "
               "of staging.claims (sources/curated/claims.csv; edge-carbon claim new adds one) (scenario replaced)")
    assert fix_for([summary.format(claim="xue2025_reduction_4_8x")], "ec", "log.txt") == (
        "fix: claim xue2025_reduction_4_8x is registered but not in the published staging.claims, which only a full build writes "
        "(a what-if stages scenarios alone): make run (or ec run)")
    assert fix_for([summary.format(claim="xue2025_reduction_4_9x")], "ec", "log.txt") == (
        "fix: in sources/scenarios/replaced.csv, row 2, set claim_id to a claim of sources/curated/claims.csv "
        "(did you mean xue2025_reduction_4_8x?), or add the claim: ec claim new xue2025_reduction_4_9x ...; "
        "then ec register --refresh scenario_replaced")


def test_a_scenario_that_breaks_its_frame_names_its_file(sources: Path) -> None:
    failure = "core/scenarios: frames_consistent\n  problems: replaced: an attributional scenario charges no marginal grid factor"
    assert fix_for([failure], "ec", "log.txt") == (
        f"fix: scenario replaced breaks the rule above: change its rows in {sources.resolve()}/scenarios/replaced.csv "
        "(then ec register --refresh scenario_replaced) or remove it: ec scenario remove replaced")


def test_a_what_if_names_the_pages_it_left_as_published(tmp_path: Path) -> None:
    site = tmp_path / "site"
    assert what_if_site_line(site, "ec") == f"dashboards: none published in {site}; a what-if renders none, make run (or ec run) renders them"
    site.mkdir()
    for page in ("index", "verdict", "claims"):
        (site / f"{page}.html").write_text("<html></html>", encoding="utf-8")
    assert what_if_site_line(site, "ec") == (
        f"dashboards not re-rendered (a what-if renders none): index.html, claims.html, verdict.html in {site} are left as "
        "published, without this what-if's rows; make run (or ec run) re-renders them")
