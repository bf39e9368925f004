"""Drive headless Chromium over every dashboard page from file:// with the network blocked.

Each page and the index must render marks in every chart, log no console error, request nothing
beyond file:// and data: URLs (the shared vendor/vega-bundle.js is a file:// request) and fit a
1,366 px wide window without horizontal scrolling. A screenshot per page goes to
test-artifacts/dashboards/. Skipped when Chromium or chromedriver is not installed (CI installs both).
"""

import json
import shutil
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from dashboards.shell import VENDOR_SCRIPT
from pipelines.paths import PROJECT_ROOT
from pipelines.warehouse.database import open_readonly
from tests.helpers import browser_missing
from tests.test_dashboards import PAGES

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
def site(built_warehouse: Path, rendered_site: Callable[..., dict]) -> dict:
    return rendered_site(built_warehouse)


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
