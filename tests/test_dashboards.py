"""The dashboards: values behind the charts, the rendered site, its size, speed and the asset."""

import functools
import html
import re
import shutil
import tempfile
from pathlib import Path

import dagster as dg
import pytest

from dashboards import render_all
from dashboards.sensitivity import MULTIPLIERS, grid, tornado
from pipelines.warehouse import open_readonly, query_pl

PAGES = ["verdict", "reproduction", "energy", "scaling", "lifecycle", "fleet", "sensitivity", "uncertainty", "grid", "sources"]
MAX_PAGE_BYTES = 2_000_000


@functools.cache
def rendered_site(warehouse: Path) -> dict:
    """Render the site once per test session (shared with the browser tests)."""
    out = Path(tempfile.mkdtemp(prefix="edge_carbon_site_"))
    return render_all(warehouse, out)


@pytest.fixture(scope="module")
def site(built_warehouse: Path) -> dict:
    return rendered_site(built_warehouse)


@pytest.fixture(scope="module")
def con(built_warehouse: Path):
    connection = open_readonly(built_warehouse)
    yield connection
    connection.close()


def test_index_links_every_page(site: dict) -> None:
    index = site["index"].read_text(encoding="utf-8")
    links = set(re.findall(r'href="([a-z_]+)\.html"', index)) - {"index"}
    assert links == set(PAGES)
    assert set(site["pages"]) == set(PAGES)
    for slug in PAGES:
        assert site["pages"][slug]["html"].is_file()


def test_pages_are_self_contained_and_small(site: dict) -> None:
    for slug, page in site["pages"].items():
        text = page["html"].read_text(encoding="utf-8")
        assert page["bytes"] < MAX_PAGE_BYTES, f"{slug}.html is {page['bytes']} bytes"
        assert "<script src" not in text and "<link rel=\"stylesheet\"" not in text, slug
        assert "window.vegaEmbed" in text, f"{slug}.html does not inline vega-embed"
        # every page says what it shows and which table it comes from
        assert re.search(r'<p class="what">.{20,}</p>', text), slug
        assert re.search(r'<p class="from">Data: <code>[a-z_]+\.[a-z_]+</code>', text), slug


def test_every_chart_has_png_and_svg(site: dict) -> None:
    expected = {f"{slug}-{chart}" for slug, page in site["pages"].items() for chart in page["charts"]}
    assert set(site["static"]) == expected
    for key, files in site["static"].items():
        assert files["png"].read_bytes()[:8] == b"\x89PNG\r\n\x1a\n", key
        assert files["svg"].read_text(encoding="utf-8").lstrip().startswith("<svg"), key
    assert {"fleet-fleet", "reproduction-claims"} <= set(site["headline"])


def test_verdict_page_leads_with_the_answer(site: dict, con) -> None:
    index = site["index"].read_text(encoding="utf-8")
    assert index.index('href="verdict.html"') < index.index('href="reproduction.html"')
    text = site["pages"]["verdict"]["html"].read_text(encoding="utf-8")
    rows = query_pl(con, "select scenario_id, basis, device_class, reduction_factor, p05_with_comm, verdict from marts.verdict "
                         "where scenario_id = 'realistic_consequential'").to_dicts()
    assert rows
    for r in rows:
        assert repr(r["reduction_factor"]) in text and repr(r["p05_with_comm"]) in text
        assert html.escape(f"realistic_consequential, {r['device_class']}: {r['verdict']}", quote=False) in text


def test_every_claim_on_the_reproduction_page(site: dict, con) -> None:
    text = site["pages"]["reproduction"]["html"].read_text(encoding="utf-8")
    claims = query_pl(con, "select claim_id from marts.paper_reproduction").get_column("claim_id").to_list()
    assert len(claims) >= 12
    for claim in claims:
        assert f'"claim_id":"{claim}"' in text, claim


def test_grid_equals_the_mart_at_the_scenario_point(con) -> None:
    frame = grid(con)
    mart = query_pl(con, "select scenario_id, device_class, reduction_factor from marts.fleet_equivalence where is_headline")
    points = frame.filter("is_scenario_point").join(mart, on=["scenario_id", "device_class"], suffix="_mart")
    assert points.height == mart.height > 0
    for row in points.iter_rows(named=True):
        assert row["reduction_factor"] == pytest.approx(row["reduction_factor_mart"], rel=1e-12)
    # rows: scenarios x device classes x multipliers x 24 hours
    assert frame.height == mart.height * len(MULTIPLIERS) * 24


def test_grid_scales_with_devices_not_hours(con) -> None:
    frame = grid(con).filter(scenario_id="paper_text", device_class="laptop")
    base = frame.filter(device_multiplier=1.0, hours_per_day=8.0).item(0, "reduction_factor")
    assert base == pytest.approx(9.5044, abs=1e-3)  # README: 9.50x for 15 laptops
    # half the hours: twice the devices (30) for the same work, so the same R
    assert frame.filter(device_multiplier=1.0, hours_per_day=4.0).row(0, named=True)["devices"] == 30
    assert frame.filter(device_multiplier=1.0, hours_per_day=4.0).item(0, "reduction_factor") == pytest.approx(base)
    assert frame.filter(device_multiplier=2.0, hours_per_day=8.0).item(0, "reduction_factor") == pytest.approx(base / 2)


def test_tornado(con) -> None:
    frame = tornado(con).filter(pattern="none")
    mart = query_pl(con, "select scenario_id, device_class, reduction_factor from marts.fleet_equivalence where is_headline")
    joined = frame.join(mart, on=["scenario_id", "device_class"])
    assert joined.height == frame.height > 0
    for row in joined.iter_rows(named=True):
        assert row["baseline_reduction_factor"] == pytest.approx(row["reduction_factor"], rel=1e-12)
    hours = frame.filter(scenario_id="paper_text", device_class="laptop", parameter="edge_hours_per_day").row(0, named=True)
    # 2 h/day: 15 x 8 / 2 = 60 laptops do the same work, R unchanged; 12 h/day: ceil(10) laptops, R unchanged
    assert (hours["value_low"], hours["value_high"]) == (2.0, 12.0)
    assert hours["reduction_factor_at_low"] == pytest.approx(hours["baseline_reduction_factor"])
    assert hours["reduction_factor_at_high"] == pytest.approx(hours["baseline_reduction_factor"])
    # a laptop-only parameter does not move the phones' R
    assert set(frame.filter(device_class="phone", parameter="laptop_nonuse_share").get_column("swing").to_list()) == {0.0}
    # the largest swing comes first per scenario and device
    first = frame.filter(scenario_id="paper_text", device_class="laptop").sort("rank").get_column("swing")
    assert first.to_list() == sorted(first.to_list(), reverse=True)


def test_uncertainty_page_draws_the_monte_carlo(site: dict, con) -> None:
    text = site["pages"]["uncertainty"]["html"].read_text(encoding="utf-8")
    p50 = query_pl(con, "select p50 from marts.uncertainty where scenario_id = 'paper_text' and device_class = 'laptop' "
                        "and pattern = 'none' and metric = 'reduction_factor' and is_headline").item()
    assert repr(p50) in text  # the p50 mark's value, inlined in the page's data
    assert "marts.uncertainty_drivers" in text and "does not exist yet" not in text


def test_render_all_needs_a_warehouse(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match="make run"):
        render_all(tmp_path / "missing.duckdb", tmp_path / "site")


def test_asset_renders_into_configured_folder(built_warehouse: Path, tmp_path: Path) -> None:
    from pipelines.assets.dashboards import dashboards_site
    from pipelines.warehouse import Warehouse

    published = tmp_path / "wh" / "edge_carbon.duckdb"
    published.parent.mkdir()
    shutil.copyfile(built_warehouse, published)
    out = tmp_path / "site"
    with dg.instance_for_test() as instance:
        result = dg.materialize(
            [dashboards_site], instance=instance, resources={"warehouse": Warehouse(path=str(published))},
            run_config={"ops": {"dashboards__site": {"config": {"out_dir": str(out)}}}},
        )
    assert result.success
    assert (out / "index.html").is_file() and (out / "sensitivity.html").is_file()
    metadata = result.asset_materializations_for_node("dashboards__site")[0].metadata
    assert metadata["pages"].value == len(PAGES)
    assert "data:image/png;base64," in metadata["headline_charts"].value
    assert metadata["index"].value == str(out / "index.html")


def unit_specs(spec: dict) -> list[dict]:
    """Every unit (single-mark) view of a Vega-Lite spec, through layers and concatenations."""
    if "mark" in spec:
        return [spec]
    units = []
    for key in ("layer", "hconcat", "vconcat", "concat"):
        for child in spec.get(key, []):
            units.extend(unit_specs(child))
    if "spec" in spec:
        units.extend(unit_specs(spec["spec"]))
    return units


def test_every_mark_has_a_tooltip(con) -> None:
    from dashboards import BUILDERS

    for build in BUILDERS:
        page = build(con)
        for name, chart in page.charts.items():
            units = unit_specs(chart.to_dict())
            assert units, f"{page.slug}/{name} has no marks"
            for unit in units:
                mark = unit["mark"] if isinstance(unit["mark"], dict) else {"type": unit["mark"]}
                assert "tooltip" in unit.get("encoding", {}) or "tooltip" in mark, \
                    f"{page.slug}/{name}: a {mark['type']} mark has no tooltip"


def test_sources_page_lists_every_source(site: dict, con) -> None:
    text = site["pages"]["sources"]["html"].read_text(encoding="utf-8")
    rows = query_pl(con, "select source_id, license, strftime(retrieved_on, '%Y-%m-%d') as d from staging.sources")
    assert rows.height > 0
    for source_id, license_, retrieved in rows.iter_rows():
        assert f"<td><code>{source_id}</code></td>" in text, source_id
        assert license_ in text and retrieved in text
