"""The dashboards: self-contained HTML pages rendered from the run's warehouse tables."""

import base64

import dagster as dg

from dashboards import SITE_ENV, render_site, site_dir
from pipelines.defs.resources import Warehouse
from pipelines.warehouse.dictionary import describe_warehouse


class DashboardsConfig(dg.Config):
    """Where the site is written. Empty: ``$EDGE_CARBON_SITE``, else ``dashboards/site``."""

    out_dir: str = ""


@dg.asset(
    key=["dashboards", "site"],
    group_name="dashboards",
    kinds={"duckdb", "altair", "html"},
    deps=[
        ["marts", "paper_reproduction"], ["marts", "training_energy"], ["marts", "scaling_energy"],
        ["marts", "lifecycle_carbon"], ["marts", "fleet_equivalence"], ["core", "scenarios"],
        ["core", "scenario_parameters"], ["staging", "grid_intensity"], ["staging", "sources"], ["marts", "verdict"],
        ["marts", "uncertainty"], ["marts", "uncertainty_distribution"], ["marts", "uncertainty_drivers"],
        ["marts", "sensitivity"], ["marts", "sensitivity_grid"],
        # the Data dictionary page lists every table: the marts no other page reads
        ["marts", "break_even"], ["marts", "communication"], ["marts", "embodied_allocation"], ["marts", "fleet_sizing"],
    ],
)
def dashboards_site(context: dg.AssetExecutionContext, config: DashboardsConfig, warehouse: Warehouse) -> dg.MaterializeResult:
    """The dashboard site: index.html plus one self-contained page per topic, and PNG/SVG exports.

    Grain: one HTML page per topic (Verdict, Reproduction, Energy, Scaling, Lifecycle, Fleet,
    Sensitivity, Uncertainty, Grid, Sources, Data dictionary), each loading Vega, Vega-Lite and
    vega-embed from one local ``vendor/vega-bundle.js`` so it opens from file:// offline; ``static/`` holds a PNG and an SVG of every chart. Reads the
    tables built in the same run. Output folder: config ``out_dir``, else env
    ``EDGE_CARBON_SITE``, else ``dashboards/site``.
    """
    out = site_dir(config.out_dir or None)
    describe_warehouse(warehouse.connection())  # the comments the Data dictionary page shows
    result = render_site(warehouse.connection(), out)
    context.log.info(f"rendered {len(result['pages'])} dashboard pages into {out} in {result['seconds']:.1f}s")
    images = []
    for key in result["headline"]:
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
