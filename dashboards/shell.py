"""Shared pieces of the dashboards: SQL loading, the page model, the HTML shell and exports.

Every page is one HTML file with its data inlined; Vega, Vega-Lite and vega-embed ship once as
``vendor/vega-bundle.js`` (the bundle that ``vl_convert`` builds), which every page loads by a
relative ``<script src>``, so the site opens from ``file://`` with no network request.
"""

import contextlib
import functools
import hashlib
import html
import json
import math
import os
import re
import textwrap
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import altair as alt
import duckdb
import polars as pl
import vl_convert as vlc

SQL_DIR: Path = Path(__file__).resolve().parent / "sql"
#: Vega-Lite version the specs are written for (Altair's schema), e.g. "6.4".
VL_VERSION: str = ".".join(alt.SCHEMA_VERSION.lstrip("v").split(".")[:2])
#: Basis of the device-count formula that the fleet pages and the sensitivity grid use.
#: One colour per status of a published number (marts.claims, marts.paper_reproduction).
STATUS_COLOURS = {"reproduced": "#1b9e77", "consistent by construction": "#66a61e", "inconclusive": "#e6ab02",
                  "differs": "#d95f02", "not reproducible": "#7570b3"}
#: The one script every page loads (relative to the site folder), written once by ``write_vendor``.
VENDOR_SCRIPT = "vendor/vega-bundle.js"
#: One colour per grid zone across the whole site (every chart that shows zones uses ``zone_scale``).
ZONE_COLOURS = {
    "WORLD": "#333333", "DE": "#4c78a8", "FR": "#f58518", "GB": "#e45756", "US": "#54a24b",
    "US-CAL-CISO": "#8c564b", "US-CAL-CISO-PROD": "#b8a11a", "IN": "#b279a2", "IN-WE": "#72b7b2",
}
#: The field a chart of R marks each fleet's feasibility in, and its two values (a legend names both).
FEASIBILITY_FIELD = "feasibility"
FEASIBLE = "feasible fleet"
INFEASIBLE = "infeasible fleet (link cannot carry its traffic)"
#: Settings every chart of the site shares: tick labels keep a gap (a log axis hides those that would
#: run together, "0.010.02"), and legend labels are never cut short.
SITE_CONFIG: dict[str, Any] = {"axis": {"labelSeparation": 6}, "axisQuantitative": {"labelOverlap": "greedy"},
                               "legend": {"labelLimit": 0}}
#: Colours for zones not in ZONE_COLOURS, handed out in sorted zone order.
EXTRA_ZONE_COLOURS = ["#9467bd", "#ff9da6", "#bab0ac", "#17becf", "#2ca02c", "#e377c2", "#bcbd22", "#1f77b4"]


def zone_scale(zones: list[str], all_zones: list[str] | None = None) -> alt.Scale:
    """The fixed zone -> colour scale for a chart showing ``zones``.

    Zones in ``ZONE_COLOURS`` keep their colour everywhere; any other zone gets the next colour
    of ``EXTRA_ZONE_COLOURS`` by its sorted position in ``all_zones`` (every zone on the site), so
    a zone has the same colour in every chart.
    """
    unknown = sorted({z for z in (all_zones or zones) if z not in ZONE_COLOURS})
    colours = {**{z: EXTRA_ZONE_COLOURS[i % len(EXTRA_ZONE_COLOURS)] for i, z in enumerate(unknown)}, **ZONE_COLOURS}
    domain = sorted(set(zones))
    return alt.Scale(domain=domain, range=[colours[z] for z in domain])


#: A line ``-- include: <name>`` of a dashboard query stands for ``dashboards/sql/<name>.sql`` (a subquery).
_INCLUDE = re.compile(r"^[ \t]*-- include: (\w+)[ \t]*$", re.MULTILINE)


def ratio_text(value: float) -> str:
    """A ratio such as R as the pages, the README and ``make run`` print it: two decimals from 0.095 up (where two
    significant figures would round to 0.10 anyway), else two significant figures (0.0044, not 0.00: a small R is
    not zero)."""
    if value == 0 or abs(value) >= 0.095:
        return f"{value:.2f}"
    return f"{value:.{1 - math.floor(math.log10(abs(value)))}f}"


def query_text(name: str) -> str:
    """The text of ``dashboards/sql/<name>.sql``, its ``-- include:`` lines replaced by the named queries."""
    path = SQL_DIR / f"{name}.sql"
    if not path.is_file():
        raise FileNotFoundError(f"dashboard query {path} does not exist")
    return _INCLUDE.sub(lambda m: query_text(m.group(1)), path.read_text(encoding="utf-8"))


def query(con: duckdb.DuckDBPyConnection, name: str, params: dict[str, Any] | None = None) -> pl.DataFrame:
    """Run ``dashboards/sql/<name>.sql`` (with its includes) with bound parameters and return a polars frame."""
    return pl.from_arrow(con.sql(query_text(name), params=params).to_arrow_table())  # type: ignore[return-value]


def claim_bounds(frame: pl.DataFrame) -> tuple[float, float]:
    """The claim's low and high end of R, as marts.verdict states them."""
    return float(frame.get_column("claim_low").max()), float(frame.get_column("claim_high").max())


def claim_of(con: duckdb.DuckDBPyConnection) -> tuple[float, float]:
    """The claim's low and high end of R, for a page that draws them (marts.verdict: its scenarios' claim's row of core.claim)."""
    return claim_bounds(query(con, "claim"))


def feasibility(infeasible: pl.Expr) -> pl.Expr:
    """The :data:`FEASIBILITY_FIELD` column of a chart of R: :data:`INFEASIBLE` where ``infeasible`` holds."""
    return pl.when(infeasible).then(pl.lit(INFEASIBLE)).otherwise(pl.lit(FEASIBLE)).alias(FEASIBILITY_FIELD)


def feasibility_expr(flag: str = "datum.infeasible") -> str:
    """A Vega expression giving :data:`FEASIBILITY_FIELD`'s value from a 0 / 1 (or boolean) ``flag``:
    a page with many rows carries the flag and names it in the browser."""
    return f"{flag} ? {INFEASIBLE!r} : {FEASIBLE!r}"


#: The colour a fleet legend draws its entries in: the marks' colour is another channel's (side, device, R).
SWATCH_COLOUR = "#555555"


@dataclass(frozen=True)
class Swatch:
    """How a chart's fleet legend draws its two entries, so that each looks like the chart's marks.

    ``shape`` is a Vega symbol shape: ``"circle"`` beside points, ``"square"`` beside bars and cells,
    ``"stroke"`` beside lines (no fill). ``fill_opacity`` gives the feasible then the infeasible entry's
    fill opacity: 0 draws a hollow entry (its outline only), as a hollow mark is drawn. The chart's own
    feasibility channels (opacity, dash) apply to the entries on top.
    """

    shape: str = "circle"
    fill_opacity: tuple[float, float] = (1.0, 1.0)

    def fill(self, opacity: float) -> str:
        """An entry's fill colour at fill opacity ``opacity`` (a legend has no per-entry fill opacity: the colour carries it)."""
        if self.shape == "stroke" or opacity <= 0:
            return "transparent"
        if opacity >= 1:
            return SWATCH_COLOUR
        red, green, blue = (int(SWATCH_COLOUR[i:i + 2], 16) for i in (1, 3, 5))
        return f"rgba({red}, {green}, {blue}, {opacity:g})"

    def properties(self) -> dict[str, Any]:
        """The legend's symbol properties: the entries' shape, fill (none where hollow) and outline."""
        feasible, infeasible = (self.fill(o) for o in self.fill_opacity)
        fill = feasible if feasible == infeasible else alt.ExprRef(
            f"datum.value === {INFEASIBLE!r} ? {infeasible!r} : {feasible!r}")
        return {"symbolType": self.shape, "symbolFillColor": fill, "symbolStrokeColor": SWATCH_COLOUR}


def feasibility_channel(channel: type, feasible: Any, infeasible: Any, *, orient: str = "right",
                        swatch: Swatch | None = None) -> Any:
    """An encoding ``channel`` (``alt.FillOpacity``, ``alt.Opacity``, ``alt.StrokeDash``) of the fleet's
    feasibility, ``feasible`` / ``infeasible`` its two values. Every such channel of a chart carries the
    same legend (Vega-Lite merges them into one, naming both; a channel without it would drop them all),
    placed at ``orient`` and drawn as ``swatch`` says (pass every channel of a chart the same one), so that
    its entries look like the marks: hollow where they are hollow.

    Vega-Lite draws no legend for ``alt.FillOpacity``: a chart that fades or hollows its marks' fill
    gives the swatch that fill opacity and carries the legend on another feasibility channel (opacity, dash).
    A layer whose mark has a colour of its own (a black tick, a red outline) would paint the swatches
    over in it: give that layer :func:`feasibility_condition` instead."""
    swatch = swatch or Swatch()
    legend = alt.Legend(title="fleet", orient=orient, symbolStrokeWidth=1.5, labelLimit=0, **swatch.properties())
    return channel(f"{FEASIBILITY_FIELD}:N", title="fleet", legend=legend,
                   scale=alt.Scale(domain=[FEASIBLE, INFEASIBLE], range=[feasible, infeasible]))


def feasibility_condition(feasible: Any, infeasible: Any) -> Any:
    """A channel's ``feasible`` / ``infeasible`` value by the fleet's feasibility, with no scale and no legend
    (for ``opacity=``), where the legend that :func:`feasibility_channel` gives another channel must not show it:
    a mark with a colour of its own (a black tick, a red outline) would paint the swatches over in it, and a
    fading shown in the legend would fade a hollow entry out of sight."""
    return alt.condition(alt.datum[FEASIBILITY_FIELD] == INFEASIBLE, alt.value(infeasible), alt.value(feasible))


def site_spec(chart: alt.TopLevelMixin) -> dict:
    """A chart's Vega-Lite dict with the site's shared settings (:data:`SITE_CONFIG`) under its own."""
    spec = chart.to_dict(validate=False)
    config = spec.setdefault("config", {})
    for key, settings in SITE_CONFIG.items():
        config[key] = {**settings, **config.get(key, {})}
    return spec


def wrap_label(text: str, width: int) -> str:
    """``text`` with a newline before each word that would run a line past ``width`` characters."""
    return "\n".join(textwrap.wrap(text, width, break_long_words=False, break_on_hyphens=False)) or text


#: An axis ``labelExpr`` that draws a label's lines (``\n`` between them, see :func:`wrap_label`) one under another.
LINES_EXPR = "split(datum.label, '\\n')"


def open_readonly(path: Path) -> duckdb.DuckDBPyConnection:
    """A read-only connection to a published warehouse, its session in UTC."""
    con = duckdb.connect(str(path), read_only=True)
    con.execute("set TimeZone = 'UTC'")
    return con


def values(frame: pl.DataFrame) -> alt.Data:
    """Inline a frame as Vega-Lite values (explicit types are given in every encoding)."""
    return frame  # type: ignore[return-value]


#: A tooltip entry: ``"field:type"``, or ``("field:type", title)`` or ``("field:type", title, format)``.
TooltipSpec = str | tuple[str, str] | tuple[str, str, str]


def tooltips(*specs: TooltipSpec) -> list[alt.Tooltip]:
    """One ``alt.Tooltip`` per entry, in order (a title or format only where the entry gives one)."""
    out = []
    for spec in specs:
        shorthand, *rest = (spec,) if isinstance(spec, str) else spec
        out.append(alt.Tooltip(shorthand, **dict(zip(("title", "format"), rest, strict=False))))
    return out


def bar_chart(frame: pl.DataFrame, title: str, *, width: int, step: int, mark: dict[str, Any] | None = None,
              **encoding: Any) -> alt.Chart:
    """Bars of ``frame`` with ``encoding``, ``width`` pixels wide and ``step`` pixels per band."""
    return (alt.Chart(values(frame), title=title).mark_bar(**(mark or {})).encode(**encoding)
            .properties(width=width, height=alt.Step(step)))


def scenario_ids(con: duckdb.DuckDBPyConnection) -> list[str]:
    """The scenario ids the selectors offer (``marts.scenarios``, in the query's order)."""
    return query(con, "scenario_ids").get_column("scenario_id").to_list()


def page_patterns(con: duckdb.DuckDBPyConnection) -> list[str]:
    """The communication patterns a page offers (``marts.scenarios``): compute only first, then the scenarios' own."""
    return query(con, "page_patterns").get_column("pattern").to_list()


def scenario_param(scenarios: list[str], default: str = "paper_text") -> alt.Parameter:
    """A ``scenario`` parameter bound to a select over the scenario ids."""
    if not scenarios:
        raise ValueError("marts.scenarios is empty: there is no scenario to select")
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
    #: One sentence the page's chart answers: the page's first line, above the chart (the summary goes below it).
    answer: str = ""

    @classmethod
    def one_chart(cls, slug: str, title: str, summary: str, tables: list[str], chart: alt.TopLevelMixin,
                  **rest: Any) -> "Page":
        """A page with one chart, named after the page (``rest``: the other fields)."""
        return cls(slug=slug, title=title, summary=summary, tables=tables, charts={slug: chart}, **rest)


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
    """Vega, Vega-Lite and vega-embed as one script (classic, not a module: it loads from ``file://``).

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
    if "window.vegaEmbed" not in bundle:
        raise RuntimeError(f"the Vega JavaScript bundle ({cached}) does not define vegaEmbed; delete it and rerun")
    return bundle


def write_vendor(out: Path) -> Path:
    """Write the Vega bundle once to ``<out>/vendor/vega-bundle.js`` (every page loads it); return its path."""
    path = out / VENDOR_SCRIPT
    path.parent.mkdir(parents=True, exist_ok=True)
    bundle = javascript_bundle()
    if not (path.is_file() and path.stat().st_size == len(bundle.encode("utf-8"))
            and path.read_text(encoding="utf-8") == bundle):
        path.write_text(bundle, encoding="utf-8")
    return path


STYLE = """
body { font-family: system-ui, sans-serif; margin: 1.5rem auto; max-width: 1100px; color: #222; }
nav a { margin-right: 0.8rem; }
p.answer { font-size: 1.15rem; font-weight: 600; }
p.what { font-size: 1.05rem; }
p.from code, td code { background: #f3f3f3; padding: 0 0.2rem; }
.chart { margin: 0.4rem 0 1.2rem 0; }
.controls { margin: 1.2rem 0 0 0; }
.controls:empty { display: none; }
.vega-bind { display: inline-block; margin: 0.2rem 1.2rem 0.2rem 0; }
table { border-collapse: collapse; font-size: 0.85rem; }
th, td { border: 1px solid #ddd; padding: 0.25rem 0.45rem; text-align: left; vertical-align: top; }
td { overflow-wrap: anywhere; }
.note { color: #555; font-size: 0.9rem; }
p.verdict { font-size: 1.1rem; }
ul.verdict { font-size: 0.9rem; margin-top: 0; }
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


def chart_divs(names: list[str]) -> str:
    """Per chart, a controls div (its selectors and sliders, placed above it) and the chart div."""
    return "\n".join(f'<div class="controls" id="controls-{html.escape(n)}"></div>\n'
                     f'<div class="chart" id="chart-{html.escape(n)}"></div>' for n in names)


def embed_script(specs: dict[str, dict]) -> str:
    """Embed every spec into its div with vega-embed; bound inputs go above the chart."""
    return f"""<script>
const specs = {_script_json(specs)};
window.views = {{}};
window.chartsReady = Promise.all(Object.entries(specs).map(([name, spec]) =>
  vegaEmbed("#chart-" + name, spec, {{actions: false, renderer: "svg", bind: "#controls-" + name}})
    .then((result) => {{ window.views[name] = result.view; }})))
  .then(() => {{ document.body.dataset.rendered = "true"; }})
  .catch((error) => {{ document.body.dataset.rendered = "error"; console.error(error); }});
</script>"""


def head_html(title: str) -> str:
    """The document head: title, style and the shared Vega script (a relative path: works from file://)."""
    return f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<title>{html.escape(title)}</title>
<link rel="icon" href="data:,">
<style>{STYLE}</style>
<script src="{VENDOR_SCRIPT}"></script>
</head>"""


def audited_html(audited: str) -> str:
    """The line every page carries under its answer: how many of the audited claim's inputs are the paper's own."""
    return f'\n<p class="note" id="audited-inputs">{html.escape(audited)}</p>' if audited else ""


def page_html(page: Page, nav: str, specs: dict[str, dict] | None = None, audited: str = "") -> str:
    """An HTML page embedding every chart of ``page`` (``specs``: their Vega-Lite dicts); ``audited``, the line on the
    audited claim's inputs (:func:`dashboards.claims.audited_inputs`), under the charts."""
    specs = specs if specs is not None else {name: site_spec(chart) for name, chart in page.charts.items()}
    tables = ", ".join(f"<code>{html.escape(t)}</code>" for t in page.tables)
    notes = "\n".join(f'<p class="note">{html.escape(n)}</p>' for n in page.notes)
    return f"""{head_html(f"{page.title} - edge-carbon")}<body>
{nav}
<h1>{html.escape(page.title)}</h1>
<p class="answer" id="answer">{html.escape(page.answer or page.summary)}</p>
{chart_divs(list(specs))}{audited_html(audited)}
<p class="what">{html.escape(page.summary)}</p>
<p class="from">Data: {tables}.</p>
{notes}
{page.extra_html}
{embed_script(specs)}
</body></html>
"""


#: What the site answers (the index's explanation, below its chart).
QUESTION = ('<p class="what">Does training foundation models on idle phones and laptops emit 4-8x less carbon than cloud '
            'GPUs? The answer per scenario below; each page answers part of it from the published warehouse.</p>')


def index_html(pages: list[Page], nav: str, lead: Page | None = None, lead_specs: dict[str, dict] | None = None,
               *, static: str = "all", audited: str = "") -> str:
    """The index: the answer first (``lead``: its charts and ``extra_html``), then one link per page; ``audited``, the
    line on the audited claim's inputs, under the lead.

    ``lead_specs`` are the lead's Vega-Lite dicts (built from ``lead.charts`` when not given);
    ``static`` names the charts exported to ``static/`` (``all``, ``headline`` or ``none``).
    """
    lead_html = ""
    answer = f'<p class="answer" id="answer">{html.escape(lead.answer)}</p>' if lead is not None and lead.answer else QUESTION
    if lead is not None:
        lead_specs = lead_specs if lead_specs is not None else {n: site_spec(c) for n, c in lead.charts.items()}
        tables = ", ".join(f"<code>{html.escape(t)}</code>" for t in lead.tables)
        lead_html = (f"{chart_divs(list(lead_specs))}\n{QUESTION}\n{lead.extra_html}\n<p class=\"from\">Data: {tables}.</p>")
        lead_html += f"\n{embed_script(lead_specs)}"
    items = "\n".join(
        f'<li><a href="{html.escape(p.slug)}.html">{html.escape(p.title)}</a>: {html.escape(p.summary)} '
        f'(from {", ".join(f"<code>{html.escape(t)}</code>" for t in p.tables)})</li>'
        for p in pages
    )
    return f"""{head_html("edge-carbon dashboards")}<body>
{nav}
<h1>edge-carbon dashboards</h1>
{answer}
{lead_html}{audited_html(audited)}
<h2>Pages</h2>
<ul>
{items}
</ul>
{STATIC_NOTES[static]}
</body></html>
"""


#: The index's note on ``static/``, per kind of static export.
STATIC_NOTES = {
    "all": '<p class="note">Static PNG and SVG exports of every chart are in <a href="static/">static/</a>.</p>',
    "headline": '<p class="note">Static PNG and SVG exports of the headline charts are in <a href="static/">static/</a> '
                '(of every chart: <code>static_exports: all</code> in the <code>dashboards/site</code> asset\'s config).</p>',
    "none": "",
}


#: Pixels per SVG unit of the PNG exports.
PNG_SCALE = 2


def export_static(spec: dict, stem: Path) -> tuple[Path, Path]:
    """Write ``<stem>.png`` and ``<stem>.svg`` of a Vega-Lite spec with vl_convert (bound inputs at their defaults)."""
    svg = stem.with_suffix(".svg")
    png = stem.with_suffix(".png")
    text = vlc.vegalite_to_svg(spec, vl_version=VL_VERSION)
    svg.write_text(text, encoding="utf-8")
    png.write_bytes(vlc.svg_to_png(text, scale=PNG_SCALE))
    return png, svg


def export_fingerprint(spec: dict) -> str:
    """What :func:`export_static` draws from: the spec, the converter and Vega-Lite versions, the PNG scale."""
    text = json.dumps([spec, vlc.__version__, VL_VERSION, PNG_SCALE], sort_keys=True, default=str)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()
