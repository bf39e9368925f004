"""Altair dashboards of the warehouse, one module per page, rendered to HTML that works offline.

``render_all(warehouse_path, out_dir)`` renders every page from a published warehouse;
``render_site(con, out_dir)`` does the same from an open connection (the Dagster asset
passes the run's working copy). Output: ``index.html`` (the verdict chart and sentence, then
the pages), one ``<page>.html`` per page, ``vendor/vega-bundle.js`` (Vega, Vega-Lite and
vega-embed, written once and loaded by every page) and ``static/<page>-<chart>.png|.svg`` for
every chart (or only the headline charts, or none: ``render_site(static=...)``).
"""

import json
import os
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import altair as alt
import duckdb

from dashboards import (
    claims,
    dictionary,
    energy,
    fleet,
    grid,
    lifecycle,
    reproduction,
    scaling,
    sensitivity,
    siting,
    sources,
    uncertainty,
    validation,
    verdict,
)
from dashboards.shell import (
    Page,
    export_fingerprint,
    export_static,
    index_html,
    javascript_bundle,
    nav_html,
    open_readonly,
    page_html,
    site_spec,
    warm_up_converter,
    write_vendor,
)

#: Environment variable that overrides where the site is written.
SITE_ENV = "EDGE_CARBON_SITE"
_PACKAGE: Path = Path(__file__).resolve().parent
#: True in a source checkout; an installed package writes ``./dashboards/site`` instead.
_IN_CHECKOUT: bool = (_PACKAGE.parent / "pyproject.toml").is_file()
DEFAULT_SITE: Path = _PACKAGE / "site" if _IN_CHECKOUT else Path.cwd().resolve() / "dashboards" / "site"

#: Page builders in the order of the navigation.
BUILDERS: list[Callable[[duckdb.DuckDBPyConnection], Page]] = [
    verdict.build, reproduction.build, claims.build, validation.build, energy.build, scaling.build, lifecycle.build, fleet.build,
    sensitivity.build, uncertainty.build, grid.build, siting.build, sources.build, dictionary.build,
]
#: The page modules, in the order of BUILDERS; each declares the tables its page reads (``TABLES``).
PAGES = [verdict, reproduction, claims, validation, energy, scaling, lifecycle, fleet, sensitivity, uncertainty, grid, siting, sources, dictionary]
#: What every page's scenario selector reads (``sql/scenario_ids.sql``).
SELECTOR_TABLES = ["marts.scenarios"]
#: Tables of DuckDB's catalog: a page reading them (the Data dictionary) shows every table and view.
CATALOG_TABLES = ["main.duckdb_tables", "main.duckdb_views", "main.duckdb_columns"]
#: Static exports (``static/<page>-<chart>.png|.svg``): every chart, the headline charts only
#: (the ones the Dagster asset's metadata shows), or none.
STATIC_EXPORTS = ("all", "headline", "none")
#: In ``static/``: the fingerprint (:func:`dashboards.shell.export_fingerprint`) of each exported chart,
#: so a render re-exports only the charts whose spec changed.
STATIC_INDEX = ".exports.json"


def tables_read() -> list[str]:
    """Every table the site reads, from the pages' declarations, without rendering anything.

    The catalog tables stand for every table of the warehouse (the Data dictionary page).
    """
    return sorted({t for page in PAGES for t in page.TABLES} | set(SELECTOR_TABLES))


def site_dir(override: str | Path | None = None) -> Path:
    """Where the site goes: ``override``, else ``$EDGE_CARBON_SITE``, else ``dashboards/site``.

    ``dashboards/site`` is the checkout's, or, for an installed package, the current directory's.
    """
    chosen = override or os.environ.get(SITE_ENV)
    if chosen:
        return Path(chosen).expanduser().resolve()
    return DEFAULT_SITE if _IN_CHECKOUT else Path.cwd().resolve() / "dashboards" / "site"


def render_site(con: duckdb.DuckDBPyConnection, out_dir: str | Path, *, static: bool | str = True) -> dict:
    """Render every page from ``con`` into ``out_dir``; return paths, sizes and the time taken.

    ``static`` picks the PNG + SVG exports written to ``static/``: ``"all"`` (or True) every
    chart, ``"headline"`` the headline charts only, ``"none"`` (or False) none (see :data:`STATIC_EXPORTS`).
    The result holds ``index`` (path), ``index_charts`` (the index's chart names), ``vendor``
    (the shared script's path), ``pages`` ({slug: {"html", "bytes", "charts", "title"}}),
    ``static`` ({"<slug>-<chart>": {"png", "svg"}}, the charts exported), ``headline`` (static
    keys of the headline charts) and ``seconds``.
    """
    started = time.perf_counter()
    mode = static_mode(static)
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    if mode != "none":
        (out / "static").mkdir(exist_ok=True)
    # the JavaScript bundle takes ~2 s to build: do it beside the queries and static exports
    with ThreadPoolExecutor(max_workers=2) as pool:
        bundle = pool.submit(javascript_bundle)
        if mode != "none":
            pool.submit(warm_up_converter)  # the converter's first call starts its runtime (~1 s)
        pages = [build(con) for build in BUILDERS]
        lead = verdict.lead(con)
        audited = claims.audited_line(con)
        # every page inlines its data (the site works offline); its rows grow with the scenarios.
        # Specs are not re-validated against the Vega-Lite schema here (half a second a build):
        # tests/dashboards/test_dashboards.py validates every chart of every page.
        with alt.data_transformers.disable_max_rows():
            specs = {page.slug: {name: site_spec(chart) for name, chart in page.charts.items()} for page in pages}
            lead_specs = {name: site_spec(chart) for name, chart in lead.charts.items()}
        result = _export(pages, specs, out, mode)
        bundle.result()
    result["vendor"] = write_vendor(out)
    nav = nav_html([(p.slug, p.title) for p in pages])
    for page in pages:
        path = out / f"{page.slug}.html"
        path.write_text(page_html(page, nav, specs[page.slug], audited), encoding="utf-8")
        result["pages"][page.slug] = {"html": path, "bytes": path.stat().st_size, "title": page.title,
                                      "charts": list(page.charts)}
    result["index"].write_text(index_html(pages, nav, lead, lead_specs, static=mode, audited=audited), encoding="utf-8")
    result["index_charts"] = list(lead.charts)
    result["seconds"] = time.perf_counter() - started
    return result


def static_mode(static: bool | str) -> str:
    """``static`` of :func:`render_site` as one of :data:`STATIC_EXPORTS`."""
    mode = {True: "all", False: "none"}[static] if isinstance(static, bool) else static
    if mode not in STATIC_EXPORTS:
        raise ValueError(f"static exports {static!r}: expected one of {', '.join(STATIC_EXPORTS)}")
    return mode


def _export(pages: list[Page], specs: dict[str, dict[str, dict]], out: Path, mode: str) -> dict:
    """Static PNG + SVG of the charts ``mode`` picks, and the result skeleton."""
    result: dict = {"index": out / "index.html", "pages": {}, "static": {}, "headline": []}
    charts = [(page, name, spec) for page in pages for name, spec in specs[page.slug].items()]
    exported = [c for c in charts if mode == "all" or (mode == "headline" and c[1] in c[0].headline)]
    folder = out / "static"
    try:  # what each file of static/ was drawn from, as the last render left it
        drawn = json.loads((folder / STATIC_INDEX).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        drawn = {}
    fingerprints = {f"{page.slug}-{name}": export_fingerprint(spec) for page, name, spec in exported}

    def export(chart: tuple[Page, str, dict]) -> tuple[Path, Path]:
        key = f"{chart[0].slug}-{chart[1]}"
        png, svg = (folder / f"{key}.png"), (folder / f"{key}.svg")
        if drawn.get(key) == fingerprints[key] and png.is_file() and svg.is_file():
            return png, svg  # the same spec through the same converter: the files are current
        return export_static(chart[2], folder / key)

    if exported:
        with ThreadPoolExecutor(max_workers=2) as pool:
            files = list(pool.map(export, exported))
        for (page, name, _), (png, svg) in zip(exported, files, strict=True):
            result["static"][f"{page.slug}-{name}"] = {"png": png, "svg": svg}
    if folder.is_dir():
        # a chart exported by an earlier render but not by this one would be stale: remove it
        for stale in folder.glob("*.*"):
            if stale.suffix in (".png", ".svg") and stale.stem not in result["static"]:
                stale.unlink()
        (folder / STATIC_INDEX).write_text(json.dumps(fingerprints, indent=1, sort_keys=True), encoding="utf-8")
    result["headline"] = [f"{page.slug}-{name}" for page, name, _ in charts if name in page.headline]
    return result


def render_all(warehouse_path: str | Path, out_dir: str | Path, *, static: bool | str = True) -> dict:
    """Render every dashboard from the published warehouse at ``warehouse_path`` (opened read-only);
    ``static`` as for :func:`render_site`."""
    path = Path(warehouse_path)
    if not path.is_file():
        raise FileNotFoundError(f"no warehouse at {path}: run `make run` first")
    con = open_readonly(path)
    try:
        return render_site(con, out_dir, static=static)
    finally:
        con.close()
