"""Shared pieces of the dashboards: SQL loading, the page model, the HTML shell and exports.

Every page is one self-contained HTML file: Vega, Vega-Lite and vega-embed are inlined from
the bundle that ``vl_convert`` ships, so a page opens from ``file://`` with no network request.
"""

import contextlib
import functools
import html
import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import altair as alt
import duckdb
import polars as pl
import vl_convert as vlc

from pipelines.warehouse import query_pl

SQL_DIR: Path = Path(__file__).resolve().parent / "sql"
#: Vega-Lite version the specs are written for (Altair's schema), e.g. "6.4".
VL_VERSION: str = ".".join(alt.SCHEMA_VERSION.lstrip("v").split(".")[:2])
#: Basis of the device-count formula that the fleet pages and the sensitivity grid use.
STATUS_COLOURS = {"reproduced": "#1b9e77", "differs": "#d95f02", "not reproducible": "#7570b3"}


def query(con: duckdb.DuckDBPyConnection, name: str, params: dict[str, Any] | None = None) -> pl.DataFrame:
    """Run ``dashboards/sql/<name>.sql`` with bound parameters and return a polars frame."""
    path = SQL_DIR / f"{name}.sql"
    if not path.is_file():
        raise FileNotFoundError(f"dashboard query {path} does not exist")
    return query_pl(con, path.read_text(encoding="utf-8"), params)


def values(frame: pl.DataFrame) -> alt.Data:
    """Inline a frame as Vega-Lite values (explicit types are given in every encoding)."""
    return frame  # type: ignore[return-value]


def scenario_param(scenarios: list[str], default: str = "paper_text") -> alt.Parameter:
    """A ``scenario`` parameter bound to a select over the scenario ids."""
    if not scenarios:
        raise ValueError("core.scenarios is empty: there is no scenario to select")
    value = default if default in scenarios else scenarios[0]
    return alt.param(name="scenario", value=value,
                     bind=alt.binding_select(options=scenarios, name="Scenario "))


@dataclass
class Page:
    """One dashboard page: what it shows, which tables it reads, and its charts."""

    slug: str
    title: str
    summary: str
    tables: list[str]
    charts: dict[str, alt.TopLevelMixin]
    notes: list[str] = field(default_factory=list)
    extra_html: str = ""
    headline: list[str] = field(default_factory=list)


def bundle_cache_path() -> Path:
    """Where the built bundle is kept between processes, keyed by the library versions."""
    root = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "edge-carbon"
    versions = f"vega{vlc.get_vega_version()}-vl{VL_VERSION}-embed{vlc.get_vega_embed_version()}"
    return root / f"vega-bundle-{versions}.js"


@functools.cache
def warm_up_converter() -> None:
    """Start the converter's JavaScript runtime with a trivial chart, off the critical path."""
    vlc.vegalite_to_svg({"data": {"values": [{"x": 1}]}, "mark": "point", "encoding": {"x": {"field": "x", "type": "quantitative"}}}, vl_version=VL_VERSION)


def javascript_bundle() -> str:
    """Vega, Vega-Lite and vega-embed as one script.

    Building it takes ~2 s, so it is kept in memory and in the user's cache folder (a pure
    function of the vl_convert, Vega, Vega-Lite and vega-embed versions).
    """
    cached = bundle_cache_path()
    try:
        bundle = cached.read_text(encoding="utf-8")
    except OSError:
        bundle = vlc.javascript_bundle(vl_version=VL_VERSION)
        with contextlib.suppress(OSError):
            cached.parent.mkdir(parents=True, exist_ok=True)
            partial = cached.with_suffix(f".{os.getpid()}.tmp")
            partial.write_text(bundle, encoding="utf-8")
            os.replace(partial, cached)
    if "window.vegaEmbed" not in bundle or "</script" in bundle.lower():
        raise RuntimeError(f"the Vega JavaScript bundle ({cached}) is not usable inline; delete it and rerun")
    return bundle


STYLE = """
body { font-family: system-ui, sans-serif; margin: 1.5rem auto; max-width: 1100px; color: #222; }
nav a { margin-right: 0.8rem; }
p.what { font-size: 1.05rem; }
p.from code, td code { background: #f3f3f3; padding: 0 0.2rem; }
.chart { margin: 1.2rem 0; }
.vega-bind { margin: 0.3rem 0; }
table { border-collapse: collapse; font-size: 0.85rem; }
th, td { border: 1px solid #ddd; padding: 0.25rem 0.45rem; text-align: left; vertical-align: top; }
.note { color: #555; font-size: 0.9rem; }
"""


def _script_json(obj: Any) -> str:
    """JSON safe to place inside a <script> element."""
    return json.dumps(obj, separators=(",", ":")).replace("</", "<\\/")


def nav_html(pages: list[tuple[str, str]]) -> str:
    """The links to the index and every page."""
    links = ['<a href="index.html">Index</a>'] + [
        f'<a href="{html.escape(slug)}.html">{html.escape(title)}</a>' for slug, title in pages
    ]
    return "<nav>" + " ".join(links) + "</nav>"


def page_html(page: Page, nav: str, specs: dict[str, dict] | None = None) -> str:
    """A self-contained HTML page embedding every chart of ``page`` (``specs``: their Vega-Lite dicts)."""
    specs = specs if specs is not None else {name: chart.to_dict() for name, chart in page.charts.items()}
    tables = ", ".join(f"<code>{html.escape(t)}</code>" for t in page.tables)
    divs = "\n".join(f'<div class="chart" id="chart-{html.escape(name)}"></div>' for name in specs)
    notes = "\n".join(f'<p class="note">{html.escape(n)}</p>' for n in page.notes)
    return f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<title>{html.escape(page.title)} - edge-carbon</title>
<link rel="icon" href="data:,">
<style>{STYLE}</style>
<script>{javascript_bundle()}</script>
</head><body>
{nav}
<h1>{html.escape(page.title)}</h1>
<p class="what">{html.escape(page.summary)}</p>
<p class="from">Data: {tables}.</p>
{notes}
{divs}
{page.extra_html}
<script>
const specs = {_script_json(specs)};
window.views = {{}};
window.chartsReady = Promise.all(Object.entries(specs).map(([name, spec]) =>
  vegaEmbed("#chart-" + name, spec, {{actions: false, renderer: "svg"}})
    .then((result) => {{ window.views[name] = result.view; }})))
  .then(() => {{ document.body.dataset.rendered = "true"; }})
  .catch((error) => {{ document.body.dataset.rendered = "error"; console.error(error); }});
</script>
</body></html>
"""


def index_html(pages: list[Page], nav: str) -> str:
    """The index: one link per page with its sentence and tables."""
    items = "\n".join(
        f'<li><a href="{html.escape(p.slug)}.html">{html.escape(p.title)}</a>: {html.escape(p.summary)} '
        f'(from {", ".join(f"<code>{html.escape(t)}</code>" for t in p.tables)})</li>'
        for p in pages
    )
    return f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<title>edge-carbon dashboards</title>
<link rel="icon" href="data:,">
<style>{STYLE}</style>
</head><body>
{nav}
<h1>edge-carbon dashboards</h1>
<p class="what">Does training foundation models on idle phones and laptops emit 4-8x less carbon
than cloud GPUs? Each page below answers part of it from the published warehouse.</p>
<ul>
{items}
</ul>
<p class="note">Static PNG and SVG exports of every chart are in <a href="static/">static/</a>.</p>
</body></html>
"""


def export_static(spec: dict, stem: Path) -> tuple[Path, Path]:
    """Write ``<stem>.png`` and ``<stem>.svg`` of a Vega-Lite spec with vl_convert (bound inputs at their defaults)."""
    svg = stem.with_suffix(".svg")
    png = stem.with_suffix(".png")
    text = vlc.vegalite_to_svg(spec, vl_version=VL_VERSION)
    svg.write_text(text, encoding="utf-8")
    png.write_bytes(vlc.svg_to_png(text, scale=2))
    return png, svg
