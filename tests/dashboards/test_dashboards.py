"""The dashboards: values behind the charts, the rendered site, its size, speed and the asset."""

import html
import re
import shutil
from collections.abc import Callable
from pathlib import Path

import dagster as dg
import pytest

from dashboards import render_all
from dashboards.sensitivity import axes, grid, tornado
from dashboards.shell import VENDOR_SCRIPT, ZONE_COLOURS, page_patterns, ratio_text
from pipelines.warehouse.queries import query_pl
from tests.helpers import browser_missing

PAGES = ["verdict", "reproduction", "claims", "validation", "energy", "scaling", "lifecycle", "fleet", "sensitivity", "uncertainty", "grid", "siting",
         "sources", "dictionary"]
MAX_PAGE_BYTES = 2_000_000
#: The pages, the index and their shared script together (static PNG/SVG exports not counted).
MAX_SITE_BYTES = 6_000_000


def test_the_site_is_rendered_into_the_sessions_temporary_folder(site: dict, tmp_path_factory: pytest.TempPathFactory) -> None:
    """pytest owns (and prunes) the session's folder: a test run leaves no site in the system's temporary folder."""
    assert site["index"].is_relative_to(tmp_path_factory.getbasetemp())


def test_browser_tests_name_what_is_missing() -> None:
    assert browser_missing("/usr/bin/chromium", None) == "chromedriver is not installed"
    assert browser_missing(None, "/usr/bin/chromedriver") == "chromium is not installed"
    assert browser_missing(None, None) == "chromium and chromedriver are not installed"
    assert browser_missing("/usr/bin/chromium", "/usr/bin/chromedriver") is None


def test_index_links_every_page(site: dict) -> None:
    index = site["index"].read_text(encoding="utf-8")
    links = set(re.findall(r'href="([a-z_]+)\.html"', index)) - {"index"}
    assert links == set(PAGES)
    assert set(site["pages"]) == set(PAGES)
    for slug in PAGES:
        assert site["pages"][slug]["html"].is_file()


def test_pages_load_only_the_local_vendor_script_and_are_small(site: dict) -> None:
    vendor = site["vendor"]
    assert vendor == site["index"].parent / VENDOR_SCRIPT and "window.vegaEmbed" in vendor.read_text(encoding="utf-8")
    for slug, path in [("index", site["index"])] + [(s, p["html"]) for s, p in site["pages"].items()]:
        text = path.read_text(encoding="utf-8")
        assert path.stat().st_size < MAX_PAGE_BYTES, f"{slug}.html is {path.stat().st_size} bytes"
        # Vega ships once, as a relative script: nothing remote, nothing inlined again
        assert re.findall(r"<script\b[^>]*\bsrc=\"([^\"]*)\"", text) == [VENDOR_SCRIPT], slug
        assert not re.search(r"<(?:script|link|img|iframe)\b[^>]*\b(?:src|href)=\"(?:https?:)?//", text), slug
        assert "<link rel=\"stylesheet\"" not in text and "window.vegaEmbed" not in text, slug
    for slug, page in site["pages"].items():
        text = page["html"].read_text(encoding="utf-8")
        # every page says what it shows and which table it comes from
        assert re.search(r'<p class="what">.{20,}</p>', text), slug
        assert re.search(r'<p class="from">Data: <code>[a-z_]+\.[a-z_]+</code>', text), slug


def test_site_weighs_under_6_mb(site: dict) -> None:
    root = site["index"].parent
    files = [p for p in root.rglob("*") if p.is_file() and p.relative_to(root).parts[0] != "static"]
    assert site["vendor"] in files and site["index"] in files
    total = sum(p.stat().st_size for p in files)
    assert total < MAX_SITE_BYTES, f"pages and shared scripts weigh {total / 1e6:.2f} MB"


def test_index_leads_with_the_verdict(site: dict, con) -> None:
    index = site["index"].read_text(encoding="utf-8")
    # the chart and the sentence come before the list of pages
    assert index.index('id="chart-verdict"') < index.index('id="verdict-sentence"') < index.index("<h2>Pages</h2>")
    assert site["index_charts"] == ["verdict"]
    sentence = html.unescape(re.search(r'<p class="verdict" id="verdict-sentence">(.*?)</p>', index).group(1))
    lines = re.search(r'<ul class="verdict" id="verdict-lines">(.*?)</ul>', index).group(1)
    rows = query_pl(con, "select scenario_id, accounting_frame, basis, device_class, network_method, embodied_policy, resize_power, "
                         "is_headline_policy, is_headline_resize_power, reduction_factor_with_comm as r, "
                         "p05_with_comm as p05, p95_with_comm as p95, verdict, edge_design from marts.verdict "
                         "where is_headline and is_best_design and network_method = verdict_driver_method "
                         "and embodied_policy = verdict_driver_policy and resize_power = verdict_driver_resize_power")
    scenarios = rows.get_column("scenario_id").n_unique()
    assert scenarios >= 5
    # one line per scenario, naming its frame and basis, with R, p05-p95 (of the method row that sets the
    # frame's verdict, its policy and resize power named where not the headline's; "no feasible draw" where
    # none is) and the verdict per device class
    assert lines.count("<li>") == scenarios
    for r in rows.iter_rows(named=True):
        line = re.search(rf"<li><b>{re.escape(r['scenario_id'])}</b> .*?</li>", lines).group(0)
        assert html.escape(f"({r['accounting_frame']}, {r['basis']} basis)") in line
        spread = "no feasible draw" if r["p05"] is None else f"p05-p95 {ratio_text(r['p05'])}-{ratio_text(r['p95'])}"
        method = ", ".join([r["network_method"], *([] if r["is_headline_policy"] else [r["embodied_policy"]]),
                            *([] if r["is_headline_resize_power"] else [r["resize_power"]])])
        clause = f"{r['device_class']} R = {ratio_text(r['r'])}x ({spread}, {method}, {r['edge_design']}), {r['verdict']}"
        assert html.escape(clause) in line, clause
    # the summary counts the verdicts per device class over the scenarios
    for (device, verdict), group in rows.group_by(["device_class", "verdict"]):
        assert f"{verdict} in {group.height}" in sentence.split(f"{device} fleets:")[1].split("; ")[0]
    assert f"of {scenarios} scenarios" in sentence


@pytest.mark.slow  # every chart through the converter: a few seconds, and `edge-carbon run` exports the headline ones only
def test_every_chart_has_png_and_svg(built_warehouse: Path, rendered_site: Callable[..., dict]) -> None:
    site = rendered_site(built_warehouse, "all")
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
    rows = query_pl(con, "select scenario_id, basis, is_headline, device_class, reduction_factor, p05_with_comm, verdict "
                         "from marts.verdict where scenario_id = 'realistic_consequential' "
                         "and (is_best_design or is_worst_design)").to_dicts()
    assert rows and any(r["is_headline"] for r in rows)
    for r in rows:
        assert repr(r["reduction_factor"]) in text and repr(r["p05_with_comm"]) in text
        # the answer reads the headline basis (measured_throughput is beside it in the table)
        if r["is_headline"]:
            assert html.escape(f"realistic_consequential, {r['device_class']}: {r['verdict']}", quote=False) in text


def test_every_claim_on_the_reproduction_page(site: dict, con) -> None:
    text = site["pages"]["reproduction"]["html"].read_text(encoding="utf-8")
    claims = query_pl(con, "select claim_id from marts.paper_reproduction").get_column("claim_id").to_list()
    assert len(claims) >= 12
    for claim in claims:
        assert f'"claim_id":"{claim}"' in text, claim


def test_grid_equals_the_mart_at_the_scenario_point(con) -> None:
    frame = grid(con, page_patterns(con)[0])
    mart = query_pl(con, "select scenario_id, device_class, reduction_factor from marts.fleet_equivalence where is_headline")
    points = frame.filter("is_scenario_point").join(mart, on=["scenario_id", "device_class"], suffix="_mart")
    assert points.height == mart.height > 0
    for row in points.iter_rows(named=True):
        assert row["reduction_factor"] == pytest.approx(row["reduction_factor_mart"], rel=1e-12)
    # rows: scenarios x device classes x multipliers x 24 hours
    assert frame.height == mart.height * len(axes(frame).multipliers) * 24


def test_grid_scales_with_devices_not_hours(con) -> None:
    frame = grid(con, page_patterns(con)[0]).filter(scenario_id="paper_text", device_class="laptop")
    base = frame.filter(device_multiplier=1.0, hours_per_day=8.0).item(0, "reduction_factor")
    assert base == pytest.approx(9.5044, abs=1e-3)  # README: 9.50x for 15 laptops
    # half the hours: twice the devices (30) for the same work, so the same R
    assert frame.filter(device_multiplier=1.0, hours_per_day=4.0).row(0, named=True)["devices"] == 30
    assert frame.filter(device_multiplier=1.0, hours_per_day=4.0).item(0, "reduction_factor") == pytest.approx(base)
    assert frame.filter(device_multiplier=2.0, hours_per_day=8.0).item(0, "reduction_factor") == pytest.approx(base / 2)


def test_pages_offer_compute_only_then_the_scenarios_own_patterns(con) -> None:
    """The pattern selectors read marts.scenarios: the pattern that moves no bytes first, then each scenario's
    own pattern once (the paper's radio window, the realistic scenarios' pipeline)."""
    own = query_pl(con, "select scenario_id, comm_pattern, compute_only_pattern from marts.scenarios order by scenario_id")
    patterns = page_patterns(con)
    assert patterns == ["none", "radio_window", "pipeline"]
    assert set(own.get_column("compute_only_pattern")) == {patterns[0]}
    assert set(patterns[1:]) == set(own.get_column("comm_pattern"))
    assert own.filter(scenario_id="paper_text").item(0, "comm_pattern") == "radio_window"


def test_tornado(con) -> None:
    frame = tornado(con, page_patterns(con)).filter(pattern="none")
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


@pytest.mark.slow  # over 10 s on 2 cores: CI runs it (MARKERS=all)
def test_asset_renders_into_configured_folder(built_warehouse: Path, tmp_path: Path) -> None:
    from pipelines.definitions import defs
    from pipelines.defs.assets.dashboards import SITE_KEY
    from pipelines.lib.resources import Warehouse

    dashboards_site = next(a for a in defs.assets if SITE_KEY in a.keys)  # as defined, no resources bound

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
    # by default only the headline charts the metadata shows are exported
    headline = set(re.findall(r"\*\*([a-z_]+-[a-z_]+)\*\*", metadata["headline_charts"].value))
    assert {"fleet-fleet", "reproduction-claims"} <= headline
    assert {p.name for p in (out / "static").glob("*.*g")} == {f"{k}.{ext}" for k in headline for ext in ("png", "svg")}
    for key in headline:
        assert (out / "static" / f"{key}.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n", key
        assert (out / "static" / f"{key}.svg").read_text(encoding="utf-8").lstrip().startswith("<svg"), key
    assert "exports of the headline charts" in (out / "index.html").read_text(encoding="utf-8")


def test_static_exports_skip_unchanged_charts_and_drop_stale_ones(con, tmp_path: Path) -> None:
    from dashboards import STATIC_INDEX, _export, static_mode
    from dashboards.energy import build

    page = build(con)
    specs = {page.slug: {name: chart.to_dict() for name, chart in page.charts.items()}}
    keys = {f"{page.slug}-{name}" for name in page.charts}
    stale = tmp_path / "static" / "gone-chart.png"
    stale.parent.mkdir()
    stale.write_bytes(b"from an earlier render")
    first = _export([page], specs, tmp_path, "all")["static"]
    assert set(first) == keys and not stale.exists()
    stamps = {key: files["png"].stat().st_mtime_ns for key, files in first.items()}
    assert _export([page], specs, tmp_path, "all")["static"] == first  # nothing changed: nothing is drawn again
    assert {key: files["png"].stat().st_mtime_ns for key, files in first.items()} == stamps
    (tmp_path / "static" / STATIC_INDEX).write_text("{}", encoding="utf-8")  # unknown provenance: drawn again
    _export([page], specs, tmp_path, "all")
    assert all(first[key]["png"].stat().st_mtime_ns != stamps[key] for key in keys)
    assert _export([page], specs, tmp_path, "none")["static"] == {}
    assert not [p for p in (tmp_path / "static").iterdir() if p.suffix in (".png", ".svg")]
    assert (static_mode(True), static_mode(False)) == ("all", "none")
    with pytest.raises(ValueError, match="headline"):
        static_mode("some")


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


def walk(spec):
    """Every dict inside a Vega-Lite spec."""
    if isinstance(spec, dict):
        yield spec
        for value in spec.values():
            yield from walk(value)
    elif isinstance(spec, list):
        for value in spec:
            yield from walk(value)


def test_device_counts_print_as_whole_numbers(con) -> None:
    from dashboards import BUILDERS

    checked = 0
    for build in BUILDERS:
        page = build(con)
        for name, chart in page.charts.items():
            for node in walk(chart.to_dict()):
                if "devices" in str(node.get("field", "")) and "format" in node:
                    assert node["format"].endswith(".0f"), f"{page.slug}/{name}: {node}"
                    checked += 1
                for value in node.values():
                    if isinstance(value, str) and "format(datum.devices" in value:
                        assert re.search(r"format\(datum\.devices[a-z_]*, '[,]?\.0f'\)", value), value
                        checked += 1
    assert checked >= 3


def test_zones_have_one_colour_across_the_site(con) -> None:
    from dashboards import grid as grid_page

    colours: dict[str, set[str]] = {}
    for chart in grid_page.build(con).charts.values():
        for node in walk(chart.to_dict()):
            if node.get("field") == "zone" and "scale" in node:
                scale = node["scale"]
                for zone, colour in zip(scale["domain"], scale["range"], strict=True):
                    colours.setdefault(zone, set()).add(colour)
    assert {"DE", "GB", "FR"} <= set(colours)
    assert all(len(c) == 1 for c in colours.values()), colours
    assert all(colours[z] == {c} for z, c in ZONE_COLOURS.items() if z in colours)
    assert len({next(iter(c)) for c in colours.values()}) == len(colours)  # no two zones share a colour


def test_fleet_marks_the_headline_and_keeps_the_memory_floor_apart(site: dict, con) -> None:
    text = site["pages"]["fleet"]["html"].read_text(encoding="utf-8")
    rows = query_pl(con, "select scenario_id, basis, device_class, devices_memory_floor from marts.fleet_equivalence "
                         "where is_headline")
    for r in rows.iter_rows(named=True):
        assert f'"scenario_id":"{r["scenario_id"]}","basis":"{r["basis"]}","is_headline":true,' \
               f'"basis_label":"{r["basis"]} (headline)"' in text
    # the floor is a table of its own, not a basis of the chart
    assert '"basis":"memory_floor"' not in text and "memory_capacity" not in text and "devices_memory_floor" in text
    table = re.search(r'<table id="memory-floor">(.*?)</table>', text).group(1)
    head = re.findall(r"<th>(.*?)</th>", table)
    rows = {re.search(r"<code>(.*?)</code>", row).group(1): re.findall(r"<td>(.*?)</td>", row)[1:]
            for row in re.findall(r"<tr><td><code>.*?</tr>", table)}
    floors = query_pl(con, "select scenario_id, device_class, max(devices_memory_floor) as floor from marts.fleet_equivalence "
                           "where devices_memory_floor is not null group by all")
    assert head[0] == "scenario" and set(head[1:]) == set(floors.get_column("device_class"))  # a column per class with a floor
    for scenario, device_class, floor in floors.iter_rows():
        assert rows[scenario][head.index(device_class) - 1] == f"{floor:,.0f}", (scenario, device_class)
    # selectors sit above the chart
    assert text.index('id="controls-fleet"') < text.index('id="chart-fleet"')


def test_slider_steps_are_the_grid_the_mart_is_built_on(con) -> None:
    """The page reads the grid's axes from marts.sensitivity_grid's rows (no copy of sql/variants/grid.sql's): the
    multipliers 0.25-3 in steps of 0.25 and the hours 1-24, and its sliders step through exactly those."""
    grid_axes = axes(grid(con, page_patterns(con)[0]))
    stored = query_pl(con, "select distinct device_multiplier from marts.sensitivity_grid order by 1")
    assert grid_axes.multipliers == stored.to_series().to_list() == [0.25 * i for i in range(1, 13)]
    assert (grid_axes.multiplier_step, grid_axes.hours_min, grid_axes.hours_max) == (0.25, 1, 24)
    hours = query_pl(con, "select count(distinct hours_per_day) from marts.sensitivity_grid").item()
    assert hours == grid_axes.hours_max - grid_axes.hours_min + 1


def test_every_chart_is_valid_vega_lite(con) -> None:
    """The build writes specs unvalidated (to_dict(validate=False)); here every chart of every
    page, and the index's lead, is checked against the Vega-Lite schema."""
    from dashboards import BUILDERS, verdict

    pages = [build(con) for build in BUILDERS] + [verdict.lead(con)]
    checked = 0
    for page in pages:
        for chart in page.charts.values():
            chart.to_dict(validate=True)
            checked += 1
    assert checked >= 20


def test_every_page_opens_with_a_one_sentence_answer_then_its_chart(site: dict) -> None:
    """The first line under a page's heading is its answer, one sentence; the chart follows, the explanation after it."""
    for slug, path in [("index", site["index"])] + [(s, p["html"]) for s, p in site["pages"].items()]:
        text = path.read_text(encoding="utf-8")
        answer = re.search(r'</h1>\s*<p class="answer" id="answer">([^<]{20,})</p>\s*<div class="controls"', text)
        assert answer, f"{slug}: no answer between the heading and the chart"
        sentence = html.unescape(answer.group(1))
        assert sentence.endswith(".") and not re.search(r"\.\s+[A-Z]", sentence), f"{slug}: {sentence!r} is not one sentence"
        if slug != "index":
            assert text.index('class="chart"') < text.index('<p class="what">') < text.index('<p class="from">'), slug
