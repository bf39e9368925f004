"""Drive headless Chromium over every dashboard page from file:// with the network blocked.

Each page and the index must render marks in every chart, log no console error, request nothing
beyond file:// and data: URLs (the shared vendor/vega-bundle.js is a file:// request) and fit a
1,366 px wide window without horizontal scrolling. Every legend's swatches must look like the marks they
stand for (none blank, in their colour, filled, faint or hollow as they are), and the lifecycle chart must
draw every device's split at full width. A screenshot per page goes to test-artifacts/dashboards/.
Skipped when Chromium or chromedriver is not installed (CI installs both).
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
    from dashboards.sensitivity import grid
    from dashboards.shell import FEASIBLE, INFEASIBLE, page_patterns

    con = open_readonly(built_warehouse)
    try:
        expected = dict(con.execute(
            "select scenario_id || '/' || device_class, reduction_factor from marts.fleet_equivalence "
            "where is_headline").fetchall())
        flags = grid(con, page_patterns(con)[0]).filter("is_scenario_point").select("scenario_id", "device_class", "infeasible")
    finally:
        con.close()
    # the readout names the fleet's feasibility, as the heatmap's cells show it
    fleet = {f"{s}/{d}": INFEASIBLE if flag else FEASIBLE for s, d, flag in flags.iter_rows()}
    assert fleet["paper_text/laptop"] == INFEASIBLE and fleet["realistic_attributional/laptop"] == FEASIBLE
    assert load(browser, site["pages"]["sensitivity"]["html"]) == "true"
    at_default = highlighted(browser)
    assert f"R = {expected['paper_text/laptop']:.2f}x at 8 h/day" in at_default["laptop"]
    for device in ("laptop", "phone"):
        assert at_default[device].endswith(f" devices, {fleet[f'paper_text/{device}']}"), at_default[device]

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
    set_input(browser, '#controls-heatmap select[name="scenario"]', "realistic_attributional")
    assert highlighted(browser)["laptop"].endswith(f" devices, {FEASIBLE}")
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


#: A fill drawn at less than this alpha (colour alpha x fill opacity x opacity) reads as no fill: hollow.
HOLLOW_BELOW = 0.05
#: A fill under this alpha reads as faint (a faded cell, a see-through bar); from it up, as solid.
FAINT_BELOW = 0.5
#: Vega mark types whose items have an area a fill paints (lines and rules are drawn by their stroke alone).
FILLABLE = {"symbol", "rect", "area", "arc", "path", "shape"}

#: Per legend of a chart (from the view's scenegraph, as drawn): its title, the channels it shows (fill,
#: stroke, opacity, strokeDash, ...), whether it is a gradient, and per entry the swatch's value, shape,
#: fill and outline colour ("r,g,b") and their alpha (colour alpha x fill or stroke opacity x opacity, 0
#: where none). Then the data field whose values the legend names (the one most items carry a legend value
#: in), and per mark carrying it, per value, the distinct looks of its items. Also per mark (text aside),
#: the colours its items show: the fill where filled, else the outline.
LEGENDS_JS = """
const [name, hollowBelow] = arguments;
const ctx = document.createElement('canvas').getContext('2d');
const rgba = (c) => {
  if (typeof c !== 'string' || c === 'none' || c === 'transparent') return null;
  ctx.fillStyle = '#010203'; ctx.fillStyle = c; const s = ctx.fillStyle;
  if (s.startsWith('#')) return [1, 3, 5].map((i) => parseInt(s.slice(i, i + 2), 16)).concat([1]);
  return s.slice(s.indexOf('(') + 1, -1).split(',').map(Number).concat([1]).slice(0, 4);
};
const look = (item) => {
  const opacity = item.opacity ?? 1, fill = rgba(item.fill), stroke = rgba(item.stroke);
  return {fill: fill && fill.slice(0, 3).join(','), fillAlpha: fill ? +(fill[3] * (item.fillOpacity ?? 1) * opacity).toFixed(3) : 0,
          stroke: stroke && stroke.slice(0, 3).join(','),
          strokeAlpha: stroke && (item.strokeWidth ?? 1) > 0 ? +(stroke[3] * (item.strokeOpacity ?? 1) * opacity).toFixed(3) : 0};
};
const legends = [], items = [];
const inLegend = (mark, legend) => { for (const item of mark.items || []) {
  if (mark.role === 'legend-symbol') legend.entries.push({value: String(item.datum.value), shape: item.shape, ...look(item)});
  if (mark.role === 'legend-title') legend.title = item.text;
  if (mark.role === 'legend-gradient' || mark.role === 'legend-band') legend.gradient = true;
  (item.items || []).forEach((m) => inLegend(m, legend));
} };
const walk = (mark) => { for (const item of mark.items || []) {
  if (mark.role === 'legend') {
    const legend = {title: '', channels: Object.keys((item.datum && item.datum.scales) || {}), entries: [], gradient: false};
    (item.items || []).forEach((m) => inLegend(m, legend)); legends.push(legend); continue;
  }
  if (mark.marktype === 'group') { (item.items || []).forEach(walk); continue; }
  if (mark.role === 'mark' && item.datum) items.push([mark.name, mark.marktype, item.datum, look(item)]);
} };
walk(window.views[name].scenegraph().root);
for (const legend of legends) {
  const wanted = new Set(legend.entries.map((e) => e.value)), hits = {};
  for (const [, , datum] of items) for (const [k, v] of Object.entries(datum)) if (typeof v === 'string' && wanted.has(v)) hits[k] = (hits[k] || 0) + 1;
  legend.field = Object.keys(hits).sort((a, b) => hits[b] - hits[a])[0] || null;
  legend.marks = {};
  for (const [mark, marktype, datum, drawn] of items) {
    const value = legend.field && datum[legend.field]; if (!wanted.has(value)) continue;
    const entry = legend.marks[mark] ??= {marktype, looks: {}};
    (entry.looks[value] ??= {})[JSON.stringify(drawn)] = 1;
  }
  for (const entry of Object.values(legend.marks)) for (const v of Object.keys(entry.looks)) entry.looks[v] = Object.keys(entry.looks[v]).map((k) => JSON.parse(k));
}
const colours = {};
for (const [mark, marktype, , drawn] of items) {
  if (marktype === 'text') continue;
  const c = drawn.fillAlpha >= hollowBelow && marktype !== 'line' && marktype !== 'rule' ? drawn.fill : drawn.strokeAlpha >= hollowBelow ? drawn.stroke : null;
  if (c) (colours[mark] ??= {})[c] = 1;
}
return {legends, colours: Object.fromEntries(Object.entries(colours).map(([m, cs]) => [m, Object.keys(cs)]))};
"""


def fill_class(alpha: float) -> str:
    """How a fill of ``alpha`` reads: ``hollow``, ``faint`` or ``solid``."""
    return "hollow" if alpha < HOLLOW_BELOW else "faint" if alpha < FAINT_BELOW else "solid"


def shown_colour(look: dict, marktype: str) -> str | None:
    """The colour an item shows ("r,g,b"): its fill where it has one, else its outline (None: neither)."""
    if marktype not in ("line", "rule") and look["fillAlpha"] >= HOLLOW_BELOW:
        return look["fill"]
    return look["stroke"] if look["strokeAlpha"] >= HOLLOW_BELOW else None


def legend_report(driver, name: str) -> dict:
    """:data:`LEGENDS_JS` of chart ``name`` as drawn now."""
    return driver.execute_script(LEGENDS_JS, name, HOLLOW_BELOW)


def merged(reports: list[dict]) -> dict:
    """The reports of one chart seen with several selector values, as one: every legend (by title) with the
    looks its marks took in any of them (a view may show no mark of it), and every mark's colours in any of them."""
    legends: dict[tuple[str, tuple[str, ...]], dict] = {}
    colours: dict[str, set[str]] = {}
    for report in reports:
        for legend in report["legends"]:
            kept = legends.setdefault((legend["title"], tuple(legend["channels"])), {**legend, "marks": {}})
            kept["field"] = kept["field"] or legend["field"]
            for mark, drawn in legend["marks"].items():
                looks = kept["marks"].setdefault(mark, {"marktype": drawn["marktype"], "looks": {}})["looks"]
                for value, seen in drawn["looks"].items():
                    looks.setdefault(value, [])
                    looks[value] += [look for look in seen if look not in looks[value]]
        for mark, seen in report["colours"].items():
            colours.setdefault(mark, set()).update(seen)
    return {"legends": list(legends.values()), "colours": colours}


def swatch_problems(where: str, report: dict, checked: dict[str, set[str]]) -> list[str]:
    """What is wrong with the legends of one chart (``report``: :func:`merged`): a blank swatch, a legend
    naming no mark, a swatch of another colour than the marks it stands for, a swatch filled where the marks
    its value stands for are hollow (or faint, or solid: whichever its field makes them), and a chart drawing
    marks in several colours with no legend for them. ``checked`` collects which chart had which check."""
    problems = []
    colour_legends = [legend for legend in report["legends"] if {"fill", "stroke"} & set(legend["channels"])]
    for legend in report["legends"]:
        if legend["gradient"]:
            continue
        title = f"{where}: legend {legend['title']!r}"
        swatches = {entry["value"]: entry for entry in legend["entries"]}
        problems += [f"{title}: the swatch of {value!r} is blank" for value, entry in swatches.items()
                     if entry["fillAlpha"] < HOLLOW_BELOW and entry["strokeAlpha"] < HOLLOW_BELOW]
        if not legend["marks"]:
            problems.append(f"{title}: names no value a mark of the chart carries")
        for mark, drawn in legend["marks"].items():
            marktype, looks = drawn["marktype"], drawn["looks"]
            # colour: where the legend's field sets the mark's colour (one per value, not one for all)
            if legend in colour_legends and marktype != "text":
                colours = {value: {shown_colour(look, marktype) for look in seen} - {None} for value, seen in looks.items()}
                if all(len(c) == 1 for c in colours.values()) and len(set.union(*colours.values())) > 1:
                    checked.setdefault("colour", set()).add(where)
                    for value, (colour,) in colours.items():
                        swatch = shown_colour(swatches[value], "symbol")
                        if swatch != colour:
                            problems.append(f"{title}: {value!r} has a swatch of {swatch} beside {mark} marks of {colour}")
            # fill: where the legend's field sets whether the mark is filled, faint or hollow
            if marktype in FILLABLE:
                classes = {value: {fill_class(look["fillAlpha"]) for look in seen} for value, seen in looks.items()}
                if all(len(c) == 1 for c in classes.values()) and len(set.union(*classes.values())) > 1:
                    checked.setdefault("fill", set()).add(where)
                    for value, (kind,) in classes.items():
                        swatch = fill_class(swatches[value]["fillAlpha"])
                        if swatch != kind:
                            problems.append(f"{title}: {value!r} has a {swatch} swatch beside {kind} {mark} marks")
    gradient = any(legend["gradient"] for legend in report["legends"])
    explained = {mark for legend in colour_legends for mark in legend["marks"]}
    for mark, colours in report["colours"].items():
        if len(colours) > 1 and not gradient and mark not in explained:
            problems.append(f"{where}: {mark} draws {len(colours)} colours and no legend says what they are")
    return problems


def test_every_legend_swatch_looks_like_its_marks(site: dict, browser) -> None:
    """On every page, each legend's swatches are drawn like the marks they stand for: none blank, each in
    its marks' colour where the legend gives the colour, and filled, faint or hollow as its marks are where
    the legend's field decides that (an infeasible fleet's hollow dot, a hollow swatch). A chart of R is
    also looked at with the selector values of :data:`OTHER_VIEWS`, so that it shows both kinds of fleet."""
    from dashboards.shell import FEASIBLE, INFEASIBLE

    problems: list[str] = []
    checked: dict[str, set[str]] = {}
    reports: dict[str, dict] = {}
    for slug in ["index", *PAGES]:
        assert load(browser, page_path(site, slug)) == "true"
        for name in browser.execute_script("return Object.keys(window.views)"):
            seen = [legend_report(browser, name)]
            if (slug, name) in OTHER_VIEWS:
                set_signals(browser, name, OTHER_VIEWS[(slug, name)])
                seen.append(legend_report(browser, name))
            reports[f"{slug}/{name}"] = report = merged(seen)
            problems += swatch_problems(f"{slug}/{name}", report, checked)
    assert problems == [], f"{len(problems)} legend swatches unlike their marks:\n" + "\n".join(problems)
    # the checks ran: colours on the pages with colour legends, fills on every chart that fades or hollows a fleet
    assert {"grid/profile", "grid/over_time", "lifecycle/lifecycle", "sensitivity/tornado", "verdict/verdict"} <= checked["colour"]
    assert {f"{slug}/{name}" for slug, names in R_CHARTS.items() for name in names} - {"siting/break_even"} <= checked["fill"]
    # an infeasible fleet: a hollow dot on the index and the verdict page, and a hollow swatch in the legend
    for where in ("index/verdict", "verdict/verdict"):
        (fleet,) = [legend for legend in reports[where]["legends"] if legend["title"] == "fleet"]
        swatches = {entry["value"]: entry for entry in fleet["entries"]}
        assert swatches[INFEASIBLE]["fillAlpha"] == 0 and swatches[INFEASIBLE]["strokeAlpha"] == 1
        assert swatches[FEASIBLE]["fillAlpha"] == 1
    # the daily profile names its zones, in their colours
    (zones,) = [legend for legend in reports["grid/profile"]["legends"] if legend["title"] == "zone"]
    assert {entry["value"] for entry in zones["entries"]} == set(zones["marks"]["layer_1_layer_0_marks"]["looks"])
    assert len(zones["entries"]) >= 2


#: Per bar of the lifecycle chart as drawn: its device class, part and width in pixels.
BARS_JS = """
const out = [];
const walk = (mark) => { for (const item of mark.items || []) {
  if (mark.marktype === 'group') { (item.items || []).forEach(walk); continue; }
  if (mark.role === 'mark' && mark.marktype === 'rect' && item.datum) out.push([item.datum.device_class, item.datum.part, item.width]);
} };
walk(window.views.lifecycle.scenegraph().root);
return out;
"""


def test_lifecycle_shows_each_devices_split(site: dict, browser, built_warehouse: Path) -> None:
    """Every device's bar spans the chart, its parts as wide as their shares of the device's total (marts.lifecycle_carbon),
    whatever the scenario: an edge device's split reads as well as the cloud GPU's, whose total is tens of times larger."""
    from dashboards.lifecycle import WIDTH

    con = open_readonly(built_warehouse)
    try:
        rows = con.execute("select scenario_id, device_class, embodied_kgco2e / total_kgco2e, total_kgco2e "
                           "from marts.lifecycle_carbon order by scenario_id, device_class").fetchall()
    finally:
        con.close()
    assert load(browser, site["pages"]["lifecycle"]["html"]) == "true"
    title = browser.execute_script("return document.querySelector('#chart-lifecycle g.role-title text').textContent")
    assert "shares of each device's total" in title and "100%" in title
    scenarios = sorted({r[0] for r in rows})
    assert len(scenarios) >= 5
    for scenario in scenarios:
        set_signals(browser, "lifecycle", {"scenario": scenario})
        widths = {(device, part): width for device, part, width in browser.execute_script(BARS_JS)}
        expected = {device: (embodied, total) for s, device, embodied, total in rows if s == scenario}
        assert {device for device, _ in widths} == set(expected) and "cloud_gpu" in expected
        for device, (embodied, _) in expected.items():
            assert widths[(device, "embodied")] + widths[(device, "operational")] == pytest.approx(WIDTH, abs=0.5)
            assert widths[(device, "embodied")] == pytest.approx(embodied * WIDTH, abs=0.5), (scenario, device)
        # though the cloud GPU's total dwarfs an edge device's
        assert max(total for d, (_, total) in expected.items() if d != "cloud_gpu") * 10 < expected["cloud_gpu"][1]
