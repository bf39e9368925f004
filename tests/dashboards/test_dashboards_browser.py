"""Drive headless Chromium over every dashboard page from file:// with the network blocked.

Each page and the index must render marks in every chart, log no console error, request nothing
beyond file:// and data: URLs (the shared vendor/vega-bundle.js is a file:// request) and fit a
1,366 px wide window without horizontal scrolling. A screenshot per page goes to
test-artifacts/dashboards/. Skipped when Chromium or chromedriver is not installed (CI installs both).
"""

import json
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from dashboards.shell import VENDOR_SCRIPT
from pipelines.paths import PROJECT_ROOT
from pipelines.warehouse.database import open_readonly
from tests.dashboards.test_dashboards import PAGES
from tests.helpers import browser_missing

webdriver = pytest.importorskip("selenium.webdriver")

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser") or shutil.which("google-chrome")
CHROMEDRIVER = shutil.which("chromedriver")
ARTIFACTS = PROJECT_ROOT / "test-artifacts" / "dashboards"
LOCAL_SCHEMES = ("file:", "data:", "about:", "blob:")
#: The narrowest window the pages are laid out for.
WINDOW_WIDTH = 1366

#: Why the tests cannot run here (what is missing, by name), or None.
MISSING = browser_missing(CHROMIUM, CHROMEDRIVER)

pytestmark = pytest.mark.skipif(MISSING is not None, reason=MISSING or "")


@pytest.fixture(scope="module")
def browser() -> Iterator:
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for flag in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--host-resolver-rules=MAP * ~NOTFOUND", "--disable-extensions", "--disable-sync",
                 "--no-first-run", f"--window-size={WINDOW_WIDTH},1600", "--proxy-server=127.0.0.1:9"):
        options.add_argument(flag)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL", "performance": "ALL"})
    driver = webdriver.Chrome(options=options, service=Service(CHROMEDRIVER))
    driver.set_script_timeout(30)
    try:
        yield driver
    finally:
        driver.quit()


def requested_urls(driver) -> list[str]:
    """Every URL the page asked for, from the DevTools Network events in the performance log."""
    urls = []
    for entry in driver.get_log("performance"):
        message = json.loads(entry["message"])["message"]
        if message["method"] == "Network.requestWillBeSent":
            urls.append(message["params"]["request"]["url"])
    return urls


def load(driver, path: Path) -> str:
    """Open a page and wait until vega-embed has rendered every chart; return the page's state."""
    driver.get(path.as_uri())
    return driver.execute_async_script(
        "const done = arguments[arguments.length - 1];"
        "window.chartsReady.then(() => done(document.body.dataset.rendered), (e) => done('error: ' + e));")


@pytest.mark.parametrize("slug", ["index", *PAGES])
def test_page_renders_offline(site: dict, browser, slug: str) -> None:
    browser.get_log("browser")
    browser.get_log("performance")
    path, charts = (site["index"], site["index_charts"]) if slug == "index" else (
        site["pages"][slug]["html"], site["pages"][slug]["charts"])
    assert load(browser, path) == "true"
    marks = browser.execute_script(
        "return Array.from(document.querySelectorAll('div.chart')).map((div) => ["
        "div.id, div.querySelectorAll('svg g.role-mark path, svg g.role-mark text, svg g.role-mark line').length])")
    assert [name for name, _ in marks] == [f"chart-{c}" for c in charts]
    for name, count in marks:
        assert count > 0, f"{slug}: {name} drew no marks"
    errors = [e for e in browser.get_log("browser") if e["level"] == "SEVERE"]
    assert errors == [], f"{slug}: console errors {errors}"
    urls = requested_urls(browser)
    remote = [u for u in urls if not u.startswith(LOCAL_SCHEMES)]
    assert remote == [], f"{slug}: requests left the machine: {remote}"
    assert (path.parent / VENDOR_SCRIPT).as_uri() in urls, f"{slug}: the shared Vega script was not loaded"
    # no horizontal scrolling in a 1,366 px window
    width, inner = browser.execute_script("return [document.documentElement.scrollWidth, window.innerWidth]")
    assert inner == WINDOW_WIDTH and width <= inner, f"{slug}: {width} px wide in a {inner} px window"
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    assert browser.save_screenshot(str(ARTIFACTS / f"{slug}.png"))


def highlighted(driver) -> dict[str, str]:
    """The slider-picked reduction factor per device class, as drawn in the heatmap's text mark."""
    texts = driver.execute_script(
        "return Array.from(document.querySelectorAll('#chart-heatmap g.highlight_marks text')).map((t) => t.textContent)")
    return {text.split(":")[0]: text for text in texts}


def set_input(driver, selector: str, value: str) -> None:
    """Set a bound input as a user would (value + input/change events) and wait for the view."""
    driver.execute_async_script(
        "const [selector, value, done] = arguments;"
        "const el = document.querySelector(selector); el.value = value;"
        "el.dispatchEvent(new Event('input', {bubbles: true})); el.dispatchEvent(new Event('change', {bubbles: true}));"
        "window.views.heatmap.runAsync().then(() => done());", selector, value)


def test_sliders_and_selector_change_the_drawn_value(site: dict, browser, built_warehouse: Path) -> None:
    con = open_readonly(built_warehouse)
    try:
        expected = dict(con.execute(
            "select scenario_id || '/' || device_class, reduction_factor from marts.fleet_equivalence "
            "where is_headline").fetchall())
    finally:
        con.close()
    assert load(browser, site["pages"]["sensitivity"]["html"]) == "true"
    at_default = highlighted(browser)
    assert f"R = {expected['paper_text/laptop']:.2f}x at 8 h/day" in at_default["laptop"]

    set_input(browser, '#controls-heatmap input[name="hours"]', "4")
    at_4 = highlighted(browser)
    set_input(browser, '#controls-heatmap input[name="hours"]', "8")
    at_8 = highlighted(browser)
    assert at_4["laptop"] != at_8["laptop"]
    # 4 h/day: twice the devices for the same work (30 laptops, 138 phones), so the same R
    assert f"R = {expected['paper_text/laptop']:.2f}x at 4 h/day, 30 devices" in at_4["laptop"]
    assert "at 4 h/day, 138 devices" in at_4["phone"]
    assert at_8 == at_default

    set_input(browser, '#controls-heatmap input[name="multiplier"]', "2")
    assert f"R = {expected['paper_text/laptop'] / 2:.2f}x at 8 h/day" in highlighted(browser)["laptop"]
    set_input(browser, '#controls-heatmap input[name="multiplier"]', "1")

    set_input(browser, '#controls-heatmap select[name="scenario"]', "vendor_fp32")
    assert f"R = {expected['vendor_fp32/laptop']:.2f}x at 8 h/day" in highlighted(browser)["laptop"]
    errors = [e for e in browser.get_log("browser") if e["level"] == "SEVERE"]
    assert errors == []


#: The charts that plot R (cloud / edge), per page: each draws an infeasible fleet apart, named in its legend.
R_CHARTS = {"index": ["verdict"], "verdict": ["verdict"], "fleet": ["fleet"], "sensitivity": ["heatmap", "tornado"],
            "uncertainty": ["distribution"], "siting": ["heatmap", "break_even"]}
#: Selector values a chart is also looked at with, so that it shows feasible and infeasible fleets: the
#: paper's own scenario (every fleet of it infeasible) beside a realistic one (feasible fleets).
OTHER_VIEWS = {
    ("siting", "heatmap"): {"siting_map_scenario": "paper_text (as_published)"},
    ("siting", "break_even"): {"siting_lines_scenario": "paper_text (as_published)"},
    ("sensitivity", "heatmap"): {"scenario": "realistic_attributional"},
    ("sensitivity", "tornado"): {"tornado_scenario": "realistic_attributional"},
    ("uncertainty", "distribution"): {"scenario": "realistic_attributional"},
}
#: Two labels on one line closer than this many pixels read as one ("0.010.02").
MIN_GAP_PX = 2

#: Every visible SVG text label of every chart (axis labels and titles, legends, mark text, chart
#: titles) with its box; the pairs that overlap or run together, and the labels cut: ellipsised
#: by a label limit, or outside their chart's SVG.
LABELS_JS = """
const minGap = arguments[0];
const hidden = (el, svg) => { for (let e = el; e && e !== svg; e = e.parentNode) {
  if (e.getAttribute('opacity') === '0' || e.getAttribute('fill-opacity') === '0') return true;
  const s = getComputedStyle(e); if (s.display === 'none' || s.visibility === 'hidden') return true; } return false; };
const out = {count: 0, overlaps: [], cut: []};
for (const div of document.querySelectorAll('div.chart')) {
  const svg = div.querySelector('svg'); if (!svg) continue;
  const frame = svg.getBoundingClientRect();
  const labels = [];
  for (const t of svg.querySelectorAll('text')) {
    if (!t.textContent.trim() || hidden(t, svg)) continue;
    const r = t.getBoundingClientRect(); if (r.width === 0 || r.height === 0) continue;
    const group = t.closest('g[class*="role-"]');
    labels.push({text: t.textContent, role: group ? group.getAttribute('class') : '', x0: r.left, y0: r.top, x1: r.right, y1: r.bottom});
  }
  out.count += labels.length;
  for (const l of labels) {
    if (l.text.endsWith('\u2026') || l.x0 < frame.left - 0.5 || l.y0 < frame.top - 0.5 || l.x1 > frame.right + 0.5 || l.y1 > frame.bottom + 0.5)
      out.cut.push(`${div.id}: ${l.role}: ${l.text}`);
  }
  for (let i = 0; i < labels.length; i++) for (let j = i + 1; j < labels.length; j++) {
    const a = labels[i], b = labels[j];
    const across = Math.min(a.x1, b.x1) - Math.max(a.x0, b.x0), down = Math.min(a.y1, b.y1) - Math.max(a.y0, b.y0);
    if (down > 1 && across > -minGap) out.overlaps.push(`${div.id}: '${a.text}' (${a.role}) and '${b.text}' (${b.role})`);
  }
}
return out;
"""


def page_path(site: dict, slug: str) -> Path:
    return site["index"] if slug == "index" else site["pages"][slug]["html"]


def test_no_label_overlaps_another_or_is_cut(site: dict, browser) -> None:
    """On every page, in a 1,366 px window, no two text labels of a chart overlap or run together, and none is cut."""
    overlaps, cut, counted = [], [], 0
    for slug in ["index", *PAGES]:
        assert load(browser, page_path(site, slug)) == "true"
        found = browser.execute_script(LABELS_JS, MIN_GAP_PX)
        counted += found["count"]
        overlaps += [f"{slug}: {o}" for o in found["overlaps"]]
        cut += [f"{slug}: {c}" for c in found["cut"]]
    assert counted > 500  # the labels were found
    assert overlaps == [] and cut == [], f"{len(overlaps)} overlapping pairs, {len(cut)} cut labels:\n" + "\n".join(overlaps + cut)


#: Per mark item of a chart that carries the feasibility field: its value, its mark type and how it is drawn.
MARKS_JS = """
const [name, field] = arguments;
const out = [];
const walk = (mark) => { for (const item of mark.items || []) {
  if (mark.marktype === 'group') { (item.items || []).forEach(walk); continue; }
  if (mark.role !== 'mark' || mark.marktype === 'text' || !item.datum || item.datum[field] === undefined) continue;
  out.push([item.datum[field], mark.marktype, JSON.stringify([item.opacity ?? 1, item.fillOpacity ?? 1, String(item.strokeDash || '')])]);
} };
walk(window.views[name].scenegraph().root);
return out;
"""


def set_signals(driver, name: str, signals: dict[str, str]) -> None:
    """Set a chart's parameters (its selectors) and wait for the view to redraw."""
    driver.execute_async_script(
        "const [name, signals, done] = arguments; const view = window.views[name];"
        "Object.entries(signals).forEach(([k, v]) => { if (view.getState().signals[k] !== undefined) view.signal(k, v); });"
        "view.runAsync().then(() => done());", name, signals)


def test_r_charts_draw_infeasible_fleets_apart_with_a_legend_entry(site: dict, browser, built_warehouse: Path) -> None:
    """Every chart of R draws an infeasible fleet in a style no feasible fleet has, and its legend names it."""
    from dashboards.shell import FEASIBILITY_FIELD, FEASIBLE, INFEASIBLE

    con = open_readonly(built_warehouse)
    try:
        headline, every = con.execute(
            "select count(*) filter (where is_headline) * 2, count(*) * 2 from marts.verdict "
            "where verdict like 'infeasible%'").fetchone()
    finally:
        con.close()
    assert headline > 0
    for slug, charts in R_CHARTS.items():
        assert load(browser, page_path(site, slug)) == "true"
        for name in charts:
            legend = browser.execute_script(
                "return Array.from(document.querySelectorAll(`#chart-${arguments[0]} g.role-legend-label text`)).map((t) => t.textContent)", name)
            assert INFEASIBLE in legend and FEASIBLE in legend, f"{slug}/{name}: legend {legend}"
            items = browser.execute_script(MARKS_JS, name, FEASIBILITY_FIELD)
            dots = [v for v, m, _ in items if m == "symbol" and v == INFEASIBLE]
            if (slug, name) in OTHER_VIEWS:
                set_signals(browser, name, OTHER_VIEWS[(slug, name)])
                items += browser.execute_script(MARKS_JS, name, FEASIBILITY_FIELD)
            drawn = {value for value, _, _ in items}
            assert drawn == {FEASIBLE, INFEASIBLE}, f"{slug}/{name}: drew {drawn}"
            for marktype in {m for _, m, _ in items}:
                styles = {value: {s for v, m, s in items if v == value and m == marktype} for value in (FEASIBLE, INFEASIBLE)}
                assert not styles[FEASIBLE] & styles[INFEASIBLE], f"{slug}/{name}: an infeasible {marktype} looks feasible"
            if slug in ("index", "verdict"):  # one hollow dot per infeasible row and side of marts.verdict
                assert len(dots) == (headline if slug == "index" else every)
