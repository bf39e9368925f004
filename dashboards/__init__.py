"""Altair dashboards of the warehouse, one module per page, rendered to HTML that works offline.

``render_all(warehouse_path, out_dir)`` renders every page from a published warehouse;
``render_site(con, out_dir)`` does the same from an open connection (the Dagster asset
passes the run's working copy). Output: ``index.html`` (the verdict chart and sentence, then
the pages), one ``<page>.html`` per page, ``vendor/vega-bundle.js`` (Vega, Vega-Lite and
vega-embed, written once and loaded by every page) and ``static/<page>-<chart>.png|.svg`` for
every chart.
"""

import os
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import duckdb

from dashboards import (
    dictionary,
    energy,
    fleet,
    grid,
    lifecycle,
    reproduction,
    scaling,
    sensitivity,
    sources,
    uncertainty,
    verdict,
)
from dashboards.shell import (
    Page,
    export_static,
    index_html,
    javascript_bundle,
    nav_html,
    open_readonly,
    page_html,
    warm_up_converter,
    write_vendor,
)

#: Environment variable that overrides where the site is written.
SITE_ENV = "EDGE_CARBON_SITE"
DEFAULT_SITE: Path = Path(__file__).resolve().parent / "site"

#: Page builders in the order of the navigation.
BUILDERS: list[Callable[[duckdb.DuckDBPyConnection], Page]] = [
    verdict.build, reproduction.build, energy.build, scaling.build, lifecycle.build, fleet.build,
    sensitivity.build, uncertainty.build, grid.build, sources.build, dictionary.build,
]


def site_dir(override: str | Path | None = None) -> Path:
    """Where the site goes: ``override``, else ``$EDGE_CARBON_SITE``, else ``dashboards/site``."""
    chosen = override or os.environ.get(SITE_ENV)
    return Path(chosen).expanduser().resolve() if chosen else DEFAULT_SITE


def render_site(con: duckdb.DuckDBPyConnection, out_dir: str | Path, *, static: bool = True) -> dict:
    """Render every page from ``con`` into ``out_dir``; return paths, sizes and the time taken.

    The result holds ``index`` (path), ``index_charts`` (the index's chart names), ``vendor``
    (the shared script's path), ``pages`` ({slug: {"html", "bytes", "charts", "title"}}),
    ``static`` ({"<slug>-<chart>": {"png", "svg"}}), ``headline`` (static keys of the headline
    charts) and ``seconds``.
    """
    started = time.perf_counter()
    out = Path(out_dir)
    (out / "static").mkdir(parents=True, exist_ok=True)
    # the JavaScript bundle takes ~2 s to build: do it beside the queries and static exports
    with ThreadPoolExecutor(max_workers=2) as pool:
        bundle = pool.submit(javascript_bundle)
        if static:
            pool.submit(warm_up_converter)  # the converter's first call starts its runtime (~1 s)
        pages = [build(con) for build in BUILDERS]
        lead = verdict.lead(con)
        specs = {page.slug: {name: chart.to_dict() for name, chart in page.charts.items()} for page in pages}
        result = _export(pages, specs, out, static)
        bundle.result()
    result["vendor"] = write_vendor(out)
    nav = nav_html([(p.slug, p.title) for p in pages])
    for page in pages:
        path = out / f"{page.slug}.html"
        path.write_text(page_html(page, nav, specs[page.slug]), encoding="utf-8")
        result["pages"][page.slug] = {"html": path, "bytes": path.stat().st_size, "title": page.title,
                                      "charts": list(page.charts)}
    result["index"].write_text(index_html(pages, nav, lead), encoding="utf-8")
    result["index_charts"] = list(lead.charts)
    result["seconds"] = time.perf_counter() - started
    return result


def _export(pages: list[Page], specs: dict[str, dict[str, dict]], out: Path, static: bool) -> dict:
    """Static PNG + SVG of every chart (when ``static``), and the result skeleton."""
    result: dict = {"index": out / "index.html", "pages": {}, "static": {}, "headline": []}
    charts = [(page, name, spec) for page in pages for name, spec in specs[page.slug].items()]
    if static:
        with ThreadPoolExecutor(max_workers=2) as pool:
            files = list(pool.map(lambda c: export_static(c[2], out / "static" / f"{c[0].slug}-{c[1]}"), charts))
        for (page, name, _), (png, svg) in zip(charts, files, strict=True):
            result["static"][f"{page.slug}-{name}"] = {"png": png, "svg": svg}
    result["headline"] = [f"{page.slug}-{name}" for page, name, _ in charts if name in page.headline]
    return result


def render_all(warehouse_path: str | Path, out_dir: str | Path) -> dict:
    """Render every dashboard from the published warehouse at ``warehouse_path`` (opened read-only)."""
    path = Path(warehouse_path)
    if not path.is_file():
        raise FileNotFoundError(f"no warehouse at {path}: run `make run` first")
    con = open_readonly(path)
    try:
        return render_site(con, out_dir)
    finally:
        con.close()
