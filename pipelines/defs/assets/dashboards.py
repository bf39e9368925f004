"""The dashboards: self-contained HTML pages rendered from the run's warehouse tables."""

import base64
from collections.abc import Iterable

import dagster as dg

from dashboards import CATALOG_TABLES, SITE_ENV, STATIC_EXPORTS, render_site, site_dir, tables_read
from pipelines.lib.resources import Warehouse
from pipelines.warehouse.dictionary import describe_warehouse


class DashboardsConfig(dg.Config):
    """Where the site is written (empty: ``$EDGE_CARBON_SITE``, else ``dashboards/site``) and
    which charts get a PNG and an SVG in ``static/``: ``headline`` (the charts this asset's
    metadata shows), ``all`` (every chart, for papers) or ``none``."""

    out_dir: str = ""
    static_exports: str = "headline"


SITE_KEY = dg.AssetKey(["dashboards", "site"])


def site_deps(every_table: Iterable[dg.AssetKey]) -> list[dg.AssetKey]:
    """The tables the pages declare (``dashboards.tables_read()``); a page reading DuckDB's
    catalog (the Data dictionary) lists every table, so it stands for ``every_table``."""
    declared = tables_read()
    keys = {dg.AssetKey(t.split(".")) for t in declared if t not in CATALOG_TABLES}
    if set(CATALOG_TABLES) & set(declared):
        keys |= set(every_table)
    return sorted(keys - {SITE_KEY}, key=lambda k: k.to_user_string())


def site_asset(every_table: Iterable[dg.AssetKey] = ()) -> dg.AssetsDefinition:
    """The ``dashboards/site`` asset, its deps from :func:`site_deps` (definitions.py passes
    every table of the code location)."""

    @dg.asset(key=SITE_KEY, group_name="dashboards", kinds={"duckdb", "altair", "html"}, deps=site_deps(every_table))
    def dashboards_site(context: dg.AssetExecutionContext, config: DashboardsConfig, warehouse: Warehouse) -> dg.MaterializeResult:
        """The dashboard site: index.html plus one self-contained page per topic, and PNG/SVG exports.

        Grain: one HTML page per topic (Verdict, Reproduction, Claims, Validation, Energy, Scaling, Lifecycle, Fleet,
        Sensitivity, Uncertainty, Grid, Siting, Sources, Data dictionary), each loading Vega, Vega-Lite and
        vega-embed from one local ``vendor/vega-bundle.js`` so it opens from file:// offline; ``static/`` holds a PNG and an SVG of the headline charts (config ``static_exports``: ``all`` for every chart). Reads the
        tables built in the same run. Output folder: config ``out_dir``, else env
        ``EDGE_CARBON_SITE``, else ``dashboards/site``.
        """
        return render(context, config, warehouse)

    return dashboards_site


def render(context: dg.AssetExecutionContext, config: DashboardsConfig, warehouse: Warehouse) -> dg.MaterializeResult:
    """Write the comments, render every page and return the materialisation's metadata."""
    out = site_dir(config.out_dir or None)
    describe_warehouse(warehouse.connection())  # the comments the Data dictionary page shows
    if config.static_exports not in STATIC_EXPORTS:
        raise dg.Failure(f"static_exports {config.static_exports!r}: expected one of {', '.join(STATIC_EXPORTS)}")
    result = render_site(warehouse.connection(), out, static=config.static_exports)
    context.log.info(f"rendered {len(result['pages'])} dashboard pages into {out} in {result['seconds']:.1f}s")
    images = []
    for key in (k for k in result["headline"] if k in result["static"]):
        png = result["static"][key]["png"].read_bytes()
        images.append(f"**{key}**\n\n![{key}](data:image/png;base64,{base64.b64encode(png).decode('ascii')})")
    sizes = "\n".join(f"| {slug} | {page['bytes'] / 1e6:.2f} MB |" for slug, page in result["pages"].items())
    return dg.MaterializeResult(metadata={
        "index": dg.MetadataValue.path(str(result["index"])),
        "pages": len(result["pages"]),
        "render_seconds": round(result["seconds"], 2),
        "page_sizes": dg.MetadataValue.md("| page | size |\n|---|---|\n" + sizes),
        "headline_charts": dg.MetadataValue.md("\n\n".join(images)),
        "site_env": SITE_ENV,
    })
