"""Monte Carlo and variance-based sensitivity over the model's one formula.

Every parameter with a range is drawn from its distribution (``core.scenario_parameters``:
uniform, triangular with the value as mode, split_triangular with the value as mode and median
(half the draws on [low, value], half on [value, high], each half a right triangle peaked at the value), normal or lognormal with
low/high as the 95% interval around the value); the draws are model inputs like any other and go through
``sql/core/model_evaluation.sql`` in one set-wise query. Variance shares come from SALib's Sobol
indices of log R, with the same inverse-CDF transform applied to SALib's unit-cube samples.

Draws respect the model's physical couplings:

- the cloud GPU variant is one discrete draw (``cloud_gpu_variant`` is 1 with probability
  ``cloud_gpu_alt_share``), so the SQL takes power, FLOPS, bandwidth and measured speed of the
  same variant;
- utilisation moves the GPU's power and delivered throughput together, and the cloud hours
  scale a stated device count (both in the SQL, for every draw alike);
- the grid intensity is one draw for both sides when ``grid_shared`` is 1: the edge's value
  comes from the cloud's uniform sample through the edge's own distribution (identical when
  the two rows agree), and Sobol treats the pair as one input.

Each scenario is reproducible on its own: every uniform sample comes from a stream of its own,
seeded by the global seed and a stable hash of (scenario id, parameter) (:func:`draw_stream`),
or of (scenario id, coupling) for a draw that coupled parameters share, and a scenario's
Sobol design and bootstrap from streams keyed by its id. No draw depends on a scenario's
position among the scenarios or on how many there are, so adding, removing or editing one
scenario leaves every other scenario's draws, and its marts, as they were.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import NamedTuple

import duckdb
import numpy as np
import polars as pl
import pyarrow as pa
from scipy.special import ndtri

from pipelines.identifiers import checked_identifier
from pipelines.model.draw_tables import draw_tables
from pipelines.model.formula import model_view
from pipelines.paths import sql_text
from pipelines.warehouse.queries import query_pl
from schemas.vocabulary import CLAIM_LOW, FRAMES, PATTERNS

#: The global seed of the Monte Carlo and Sobol draws (the build's default).
DEFAULT_SEED = 20250701
#: two-sided 95% normal quantile: low/high of a normal or lognormal row are value -/+ this many sd
Z95 = 1.959963984540054
#: unit-cube samples are kept inside (0, 1) so normal tails stay finite
U_EPS = 1e-12
METRICS = ("reduction_factor", "edge_added_kgco2e", "cloud_total_kgco2e")
#: histogram bins of log10(R) per decade (marts.uncertainty_distribution)
BINS_PER_DECADE = 20
#: Rows of the model's evaluation one pass of :func:`summarize` holds. Its exact quantiles keep every row of each group
#: in memory, and DuckDB cannot spill them, so a large sample is summarised a few patterns at a time within DuckDB's
#: memory limit (1 GB: a pass of 18,000,000 rows, the bench's 1,000,000 draws of realistic_consequential on four
#: patterns and its own, ran out of it; 9,000,000 fit). A pattern's rows are its sets times the rows one set has on it
#: (its device classes x bases x the method rows its frame admits there: :func:`pass_rows`); the build's 50,000 draws
#: per scenario take one pass.
PASS_ROWS = 8_000_000
#: The draws of each scenario the edge training designs are drawn on (the first; every draw of every other pattern):
#: their p05 and p95 stand within a few tenths of a percentile of 50,000 draws' at a fraction of the work.
DESIGN_DRAWS = 10_000
#: The parameters only the edge designs' outer syncs read (core.patterns outer_sync): the Sobol study's patterns (every
#: scenario's) do not, so they are no inputs of it (the Monte Carlo draws them).
DESIGN_PARAMETERS = ("outer_steps_per_sync", "outer_compression", "outer_token_overhead")
#: The frames whose scenarios are read on edge training designs (core.frames resizes_fleet).
RESIZING_FRAMES = [name for name, frame in FRAMES.items() if frame.resizes_fleet]
#: bootstrap resamples behind SALib's confidence intervals of the Sobol indices
SOBOL_RESAMPLES = 50
#: Sobol design points evaluated in one query at most (the build's 256 base samples make 7,000-12,000 per scenario, all
#: scenarios one query; the full study's 8,192 about 2,000,000, a few queries)
SOBOL_BATCH_SETS = 500_000


#: Stream keys of a scenario's Sobol design (its unit-cube sample) and of SALib's bootstrap of the
#: indices; a colon keeps them apart from every parameter name.
SOBOL_DESIGN = "sobol:design"
SOBOL_BOOTSTRAP = "sobol:bootstrap"


@dataclass(frozen=True)
class Ranged:
    """One parameter drawn in a scenario. ``follows``: the parameter whose uniform sample it shares;
    ``coupling``: the coupling whose one draw it takes part in (its stream's key, :attr:`stream`)."""

    parameter: str
    distribution: str
    value: float
    low: float
    high: float
    follows: str | None = None
    coupling: str | None = None

    @property
    def stream(self) -> str:
        """The key of the parameter's random stream within its scenario: the coupling whose draw
        it shares, else the parameter itself."""
        return self.coupling or self.parameter


#: (follower, leader, switch): the follower shares the leader's sample when the scenario's switch
#: is 1; the switch names the coupling (the key of the one stream both draw from).
COUPLED = (("edge_grid_gco2e_per_kwh", "cloud_grid_gco2e_per_kwh", "grid_shared"),)
#: A discrete draw: the parameter is 1 with the probability held in another parameter, else 0.
BERNOULLI = (("cloud_gpu_variant", "cloud_gpu_alt_share"),)


def draw_stream(seed: int, scenario: str, key: str) -> np.random.Generator:
    """The random stream of ``key`` (a parameter, a coupling or a Sobol stream) in ``scenario``.

    Seeded by the global ``seed`` and a stable hash of (scenario id, key): blake2b, as two
    64-bit words of a ``SeedSequence``'s entropy (never Python's ``hash()``, which is salted per
    process). A generator is always passed on explicitly, so no library falls back to the
    global random state (as SALib's bootstrap does for a seed of 0).
    """
    if seed < 0:
        raise ValueError(f"the Monte Carlo seed must be a non-negative integer, not {seed}")
    digest = hashlib.blake2b(f"{scenario}\x00{key}".encode(), digest_size=16).digest()
    words = [int.from_bytes(digest[i:i + 8], "little") for i in (0, 8)]
    return np.random.default_rng(np.random.SeedSequence([seed, *words]))


def ranged_parameters(parameters: pl.DataFrame) -> list[Ranged]:
    """A scenario's drawn parameters, leaders first: every ranged parameter (a distribution other
    than point and a non-empty range), the GPU variant when it has a share of draws, and a
    coupled follower marked with the parameter whose sample it shares."""
    rows = parameters.filter(
        (pl.col("distribution") != "point") & pl.col("low").is_not_null() & pl.col("high").is_not_null()
        & (pl.col("low") < pl.col("high"))
    ).sort("parameter")
    values = dict(zip(parameters.get_column("parameter").to_list(), parameters.get_column("value").to_list(), strict=True))
    drawn = {r["parameter"]: Ranged(r["parameter"], r["distribution"], r["value"], r["low"], r["high"])
             for r in rows.iter_rows(named=True)}
    for name, share in BERNOULLI:
        if (values.get(share) or 0) > 0:
            drawn[name] = Ranged(name, "bernoulli", float(values[share]), 0.0, 1.0)
    for follower, leader, switch in COUPLED:
        if follower in drawn and leader in drawn and values.get(switch) == 1:
            p, q = drawn[follower], drawn[leader]
            drawn[follower] = Ranged(p.parameter, p.distribution, p.value, p.low, p.high, follows=leader, coupling=switch)
            drawn[leader] = Ranged(q.parameter, q.distribution, q.value, q.low, q.high, coupling=switch)
    ordered = sorted(drawn.values(), key=lambda p: p.parameter)
    return [p for p in ordered if p.follows is None] + [p for p in ordered if p.follows is not None]


def independent(ranged: list[Ranged]) -> list[Ranged]:
    """The parameters with a sample of their own (the inputs of a Sobol analysis)."""
    return [p for p in ranged if p.follows is None]


def to_values(unit: np.ndarray, p: Ranged, scratch: tuple[np.ndarray, np.ndarray] | None = None) -> np.ndarray:
    """Map uniform (0, 1) samples to the parameter's distribution (inverse CDF), in place.

    Works in place, through two scratch arrays that callers may reuse across parameters,
    because fresh large temporaries are what a million draws spend their time on.
    """
    u = unit
    if p.distribution == "bernoulli":
        np.copyto(u, u < p.value)
    elif p.distribution == "uniform":
        u *= p.high - p.low
        u += p.low
    elif p.distribution == "split_triangular":
        # half the draws on [low, value] with density rising to the value, half on [value, high]
        # falling from it: the value is the mode and the median. Inverse CDF, with
        # t = sqrt(2 min(u, 1 - u)): u < 1/2: low + (value - low) t; else high - (high - value) t
        rising, below = scratch if scratch is not None else (np.empty_like(u), np.empty(u.shape, dtype=bool))
        np.less(u, 0.5, out=below)
        np.subtract(1.0, u, out=rising)
        np.minimum(u, rising, out=u)
        u *= 2
        np.sqrt(u, out=u)
        np.multiply(u, p.value - p.low, out=rising)
        rising += p.low
        u *= -(p.high - p.value)
        u += p.high
        np.copyto(u, rising, where=below)
    elif p.distribution == "triangular":
        a, b, c = p.low, p.high, p.value
        rising, below = scratch if scratch is not None else (np.empty_like(u), np.empty(u.shape, dtype=bool))
        np.less(u, (c - a) / (b - a), out=below)
        np.multiply(u, (b - a) * (c - a), out=rising)
        np.sqrt(rising, out=rising)
        rising += a
        np.subtract(1.0, u, out=u)
        u *= (b - a) * (b - c)
        np.sqrt(u, out=u)
        np.subtract(b, u, out=u)
        np.copyto(u, rising, where=below)
    elif p.distribution in ("normal", "lognormal"):
        np.clip(u, U_EPS, 1 - U_EPS, out=u)
        ndtri(u, out=u)
        if p.distribution == "normal":
            u *= (p.high - p.low) / (2 * Z95)
            u += p.value
        else:
            u *= np.log(p.high / p.low) / (2 * Z95)
            np.exp(u, out=u)
            u *= p.value
    else:
        raise ValueError(f"{p.parameter}: unknown distribution {p.distribution!r}")
    return u


@dataclass(frozen=True)
class Draws:
    """Drawn parameter sets: the drawn columns (one row per draw) and each scenario's constants."""

    drawn: pa.Table
    constants: pl.DataFrame

    @property
    def rows(self) -> int:
        return self.drawn.num_rows


def _scenario_draws(scenario: str, base: pl.DataFrame, names: list[str], ranged: dict[str, Ranged], unit: np.ndarray) -> pa.Table:
    """One scenario's draws of ``names``.

    ``unit`` holds one row per independent ranged parameter, in the order of
    :func:`independent` (sorted by name); a follower maps a copy of its leader's row through its
    own distribution; every other name stays at the scenario's value.
    """
    n = unit.shape[1]
    columns = {}
    scratch = (np.empty(n), np.empty(n, dtype=bool))
    rows = {p.parameter: i for i, p in enumerate(independent(sorted(ranged.values(), key=lambda p: p.parameter)))}
    followers = [p for p in ranged.values() if p.follows is not None]
    shared = {p.parameter: unit[rows[p.follows]].copy() for p in followers}
    for name in names:
        if name in shared:
            columns[name] = to_values(shared[name], ranged[name], scratch)
        elif name in ranged:
            columns[name] = to_values(unit[rows[name]], ranged[name], scratch)
        else:  # the scenario's value, null where it has none (a NaN would not read as missing in SQL)
            value = base.item(0, name)
            columns[name] = pa.nulls(n, pa.float64()) if value is None else np.full(n, value, dtype=np.float64)
    scenario_ids = pa.DictionaryArray.from_arrays(pa.array(np.zeros(n, dtype=np.int32)), pa.array([scenario])).cast(pa.string())
    return pa.table({"scenario_id": scenario_ids,
                     "variant_id": np.arange(n, dtype=np.int64), **columns})


def draw_inputs(base_inputs: pl.DataFrame, parameters: pl.DataFrame, n_draws: int, seed: int) -> Draws:
    """``n_draws`` parameter sets per scenario of ``base_inputs``, one independent stream per
    scenario and drawn input (:func:`draw_stream`), so a scenario's draws are the same whichever
    scenarios are drawn beside it.

    The columns drawn in any scenario travel as one table; every other parameter stays a
    per-scenario constant joined in SQL, so a million draws do not copy sixty columns.
    """
    scenarios = base_inputs.get_column("scenario_id").to_list()
    ranged = {s: {p.parameter: p for p in ranged_parameters(parameters.filter(pl.col("scenario_id") == s))} for s in scenarios}
    names = sorted(set().union(*[set(r) for r in ranged.values()])) if ranged else []
    tables = []
    for scenario in scenarios:
        own = independent(sorted(ranged[scenario].values(), key=lambda p: p.parameter))
        unit = np.empty((len(own), n_draws))
        for p, row in zip(own, unit, strict=True):
            draw_stream(seed, scenario, p.stream).random(out=row)
        base = base_inputs.filter(pl.col("scenario_id") == scenario)
        tables.append(_scenario_draws(scenario, base, names, ranged[scenario], unit))
    constants = base_inputs.drop(["variant_id", *names])
    return Draws(pa.concat_tables(tables), constants)


def inputs_from_unit(base_inputs: pl.DataFrame, samples: dict[str, tuple[list[Ranged], np.ndarray]]) -> Draws:
    """Draws of the scenarios of ``samples`` (scenario id -> its ranged parameters and a unit-cube sample: rows draws,
    columns the independent parameters sorted by name; followers are derived), each from its row of ``base_inputs``.
    The columns any of them draws travel as one table, as :func:`draw_inputs`' do."""
    names = sorted({p.parameter for ranged, _ in samples.values() for p in ranged})
    tables = [_scenario_draws(scenario, base_inputs.filter(pl.col("scenario_id") == scenario), names,
                              {p.parameter: p for p in ranged}, np.ascontiguousarray(unit.T, dtype=np.float64))
              for scenario, (ranged, unit) in samples.items()]
    constants = base_inputs.filter(pl.col("scenario_id").is_in(list(samples))).drop(["variant_id", *names])
    return Draws(pa.concat_tables(tables), constants)


def pattern_passes(pattern_rows: dict[str, int], own_rows: dict[str, int] | None = None,
                   patterns: tuple[str, ...] = PATTERNS) -> list[tuple[str, ...]]:
    """The patterns of each pass of :func:`summarize`, in order: as many per pass as keep its rows within
    :data:`PASS_ROWS`, at least one. ``pattern_rows``: the rows each pattern adds to a pass; ``own_rows``: the rows of
    the sets' own named patterns, by pattern, which the first pass holds besides its patterns (a pattern it holds
    anyway is evaluated once)."""
    own = own_rows or {}
    passes: list[tuple[str, ...]] = []
    current: list[str] = []
    rows = sum(own.values())
    for pattern in patterns:
        added = pattern_rows.get(pattern, 0) - (own.get(pattern, 0) if not passes else 0)
        if current and rows + added > PASS_ROWS:
            passes.append(tuple(current))
            current, rows, added = [], 0, pattern_rows.get(pattern, 0)
        current.append(pattern)
        rows += added
    return [*passes, tuple(current)]


def pass_rows(con: duckdb.DuckDBPyConnection, sets: str, devices: str, draws: Draws) -> tuple[dict[str, int], dict[str, int]]:
    """The rows each pattern adds to a pass of :func:`summarize` over ``draws`` (loaded as ``sets`` and ``devices``), and
    the rows of the sets' own named patterns by pattern (:func:`pattern_passes`' arguments): each scenario's first set
    evaluated as a pass evaluates it, its rows per pattern times the scenario's sets. A set's rows do not depend on its
    drawn values (its device classes, bases and the method rows its frame admits do)."""
    sets_per_scenario = pl.from_arrow(draws.drawn.select(["scenario_id"])).group_by("scenario_id").len(name="sets")
    own = draws.constants.select("scenario_id", pl.col("comm_pattern").alias("own_pattern"))
    con.execute(f"create or replace temp view first_sets as select * from {checked_identifier(sets)} where variant_id = 0")  # noqa: S608 - a checked name
    try:
        with model_view(con, "temp.first_sets", devices=devices, patterns=PATTERNS, own_pattern=True,
                        basis_filter="headline_and_measured", methods="all"):
            per_set = query_pl(con, "select scenario_id, pattern, count(*) as set_rows from model_evaluation group by all")
    finally:
        con.execute("drop view if exists temp.first_sets")
    rows = per_set.join(sets_per_scenario, on="scenario_id").join(own, on="scenario_id", how="left").with_columns(
        (pl.col("set_rows") * pl.col("sets")).alias("rows"))
    by_pattern = dict(rows.group_by("pattern").agg(pl.col("rows").sum()).iter_rows())
    own_rows = dict(rows.filter(pl.col("pattern") == pl.col("own_pattern")).group_by("pattern").agg(pl.col("rows").sum()).iter_rows())
    return by_pattern, own_rows


def summarize(con: duckdb.DuckDBPyConnection, draws: Draws) -> pl.DataFrame:
    """sql/model/uncertainty_summary.sql over the model's evaluation of the draws (the headline
    basis and measured_throughput, every method row each frame admits, each set's own named pattern too:
    sql/core/model_evaluation.sql's 'all'), in passes over the communication patterns (:func:`pattern_passes`, of :func:`pass_rows`' rows).
    A group is one pattern's, so the passes' rows are the one query's. A set's own pattern (its scenario's comm_pattern)
    among the patterns every scenario is evaluated on is evaluated in that pattern's pass, every method row on it; one
    outside them joins the first pass, which then evaluates every set's own pattern (a pattern evaluated twice so is
    kept once). Beside the passes, each set's edge training designs (core.patterns edge_design, where its frame
    resizes the fleet) are evaluated and the best admissible one per draw summarised (best_design rows)."""
    parts = []
    params = {"bins_per_decade": BINS_PER_DECADE, "claim_low": CLAIM_LOW}
    with draw_tables(con, draws.drawn, draws.constants) as (sets, devices):
        pattern_rows, own_rows = pass_rows(con, sets, devices, draws)
        own_first = any(pattern not in PATTERNS for pattern in own_rows)
        for i, patterns in enumerate(pattern_passes(pattern_rows, own_rows if own_first else None)):
            with model_view(con, sets, devices=devices, patterns=patterns, own_pattern=own_first and i == 0,
                            basis_filter="headline_and_measured", methods="all"):
                parts.append(_summary(con, "model/uncertainty_rows.sql", params))
        # the edge training designs and each draw's best admissible one, over the first DESIGN_DRAWS draws
        parts += _design_summaries(con, sets, devices, draws, params)
    if len(parts) == 1:
        return parts[0]
    keys = ["scenario_id", "device_class", "basis", "best_design", "pattern", "network_method", "embodied_policy", "resize_power"]
    return pl.concat(parts, how="diagonal_relaxed").unique(subset=keys, keep="first", maintain_order=True).sort(keys, nulls_last=True)


def _design_summaries(con: duckdb.DuckDBPyConnection, sets: str, devices: str, draws: Draws, params: dict) -> list[pl.DataFrame]:
    """The summary's rows of the edge training designs of the scenarios whose frame resizes the fleet: each design's
    (sql/model/uncertainty_rows.sql) and each draw's best admissible one (sql/model/best_design_rows.sql, the
    best_design rows), over the first :data:`DESIGN_DRAWS` draws of each scenario, whose rows are held once in a
    temporary table that both read (a draw's best is its designs' rows grouped)."""
    constants = draws.constants
    if "accounting_frame" not in constants.columns or not constants.filter(pl.col("accounting_frame").is_in(RESIZING_FRAMES)).height:
        return []
    con.execute(f"create or replace temp view design_sets as select * from {checked_identifier(sets)} "  # noqa: S608 - a checked name, a whole number
                f"where variant_id < {int(DESIGN_DRAWS)}")
    try:
        with model_view(con, "temp.design_sets", devices=devices, patterns=(), designs=True, basis_filter="headline_and_measured",
                        methods="all"):
            con.execute("create or replace temp table design_draws as " + sql_text("model/design_draws.sql"))
            con.execute("create or replace temp view model_evaluation as select * from temp.design_draws")
            return [_summary(con, "model/uncertainty_rows.sql", params), _summary(con, "model/best_design_rows.sql", params)]
    finally:
        con.execute("drop view if exists temp.design_sets")
        con.execute("drop table if exists temp.design_draws")


def _summary(con: duckdb.DuckDBPyConnection, rows_sql: str, params: dict) -> pl.DataFrame:
    """sql/model/uncertainty_summary.sql over the view ``evaluated``: the rows of ``rows_sql`` (each draw's rows, or each
    draw's best design) of the current model_evaluation view."""
    con.execute("create or replace temp view evaluated as " + sql_text(rows_sql))
    try:
        return query_pl(con, sql_text("model/uncertainty_summary.sql"), params)
    finally:
        con.execute("drop view if exists temp.evaluated")


def uncertainty_rows(summary: pl.DataFrame, seed: int) -> pl.DataFrame:
    """marts.uncertainty: p05/p50/p95/mean per scenario x class x pattern x method row (network method,
    allocation policy, resize power) x metric,
    over the draws whose fleet can send its traffic (null where none can); for R also the all-draw
    band (an infeasible draw counted as R = 0) and the shares of every draw that are feasible and
    reach R = 1 and the claim's low end."""
    # the cloud side's quantiles come from one pattern's draws (they do not depend on the pattern or method)
    cloud = summary.filter(pl.col("cloud_total_kgco2e_quantiles").is_not_null() & pl.col("is_headline_method")).select(
        "scenario_id", "device_class", "basis", pl.col("cloud_total_kgco2e_quantiles").alias("cloud_quantiles"))
    summary = summary.join(cloud, on=["scenario_id", "device_class", "basis"], how="left").with_columns(
        pl.col("cloud_quantiles").alias("cloud_total_kgco2e_quantiles")).drop("cloud_quantiles")
    parts = []
    for metric in METRICS:
        q = pl.col(f"{metric}_quantiles")
        is_r = metric == "reduction_factor"
        parts.append(summary.select(
            "scenario_id", "device_class", "basis", "is_headline", "pattern", "best_design", "network_method", "embodied_policy",
            "resize_power", "is_headline_method", "is_headline_policy", "is_headline_resize_power", pl.lit(metric).alias("metric"),
            q.list.get(0).alias("p05"), q.list.get(1).alias("p50"), q.list.get(2).alias("p95"),
            pl.col(f"{metric}_mean").alias("mean"), pl.col("n_draws").cast(pl.Int64), pl.col("n_feasible").cast(pl.Int64),
            *[(pl.col(c) if is_r else pl.lit(None, dtype=pl.Float64)).alias(c)
              for c in ("share_r_below_1", "share_r_below_4", "share_link_feasible", "share_memory_feasible", "share_resized")],
            *[(pl.col("reduction_factor_all_quantiles").list.get(i) if is_r else pl.lit(None, dtype=pl.Float64)).alias(name)
              for i, name in enumerate(("p05_all_draws", "p50_all_draws", "p95_all_draws"))],
            *[(pl.col(c) if is_r else pl.lit(None, dtype=pl.Float64)).alias(c)
              for c in ("share_feasible_r_ge_1", "share_feasible_r_ge_4")],
            pl.lit(seed, dtype=pl.Int64).alias("seed"),
        ))
    return pl.concat(parts).sort("scenario_id", "device_class", "basis", "best_design", "pattern", "network_method", "embodied_policy",
                                 "resize_power", "metric", nulls_last=True)


def distribution_rows(summary: pl.DataFrame) -> pl.DataFrame:
    """marts.uncertainty_distribution: the histogram of R (log-spaced bins) per scenario x class x
    pattern, on the headline basis and the frame's headline network method (feasible draws; share of all draws)."""
    frame = summary.filter(pl.col("is_headline") & pl.col("is_headline_method") & ~pl.col("best_design")).select(
        "scenario_id", "device_class", "pattern", "n_draws", pl.col("log10_histogram").alias("bins"))
    return frame.explode("bins").drop_nulls("bins").select(
        "scenario_id", "device_class", "pattern",
        (10 ** (pl.col("bins").struct.field("key").cast(pl.Float64) / BINS_PER_DECADE)).alias("bin_low"),
        (10 ** ((pl.col("bins").struct.field("key").cast(pl.Float64) + 1) / BINS_PER_DECADE)).alias("bin_high"),
        pl.col("bins").struct.field("value").cast(pl.Int64).alias("draws"),
        (pl.col("bins").struct.field("value") / pl.col("n_draws")).alias("share"),
    ).sort("scenario_id", "device_class", "pattern", "bin_low")


class SobolDesign(NamedTuple):
    """A scenario's Sobol study: SALib's problem, its independent inputs (sorted by name), every ranged parameter of it
    (followers too) and the unit-cube sample (rows: design points)."""

    problem: dict
    inputs: list[Ranged]
    ranged: list[Ranged]
    unit: np.ndarray


def sobol_rows(
    con: duckdb.DuckDBPyConnection,
    base_inputs: pl.DataFrame,
    parameters: pl.DataFrame,
    base_samples: int,
    seed: int,
    log: Callable[[str], None] = lambda _: None,
) -> pl.DataFrame:
    """marts.uncertainty_drivers: Sobol first-order and total indices of log R per parameter.

    SALib's Sobol sequence (Saltelli's scheme without second-order terms, N x (D + 2) model
    runs per scenario) is mapped through each parameter's inverse CDF and evaluated by the
    same SQL as every other mart (headline basis); SALib then estimates S1 and ST of log R
    (R spans orders of magnitude, and log R makes the effects of multiplicative factors
    additive) with bootstrap 95% CIs. A coupled follower (the edge grid drawn with the cloud's)
    is not an input of its own. The design (scrambled jointly over the scenario's inputs) and the
    bootstrap each draw from a stream keyed by the scenario's id (:func:`draw_stream`), never by
    its position.
    """
    from SALib.analyze import sobol as sobol_analyze
    from SALib.sample import sobol as sobol_sample

    designs: dict[str, SobolDesign] = {}
    for scenario in base_inputs.get_column("scenario_id").to_list():
        ranged = [p for p in ranged_parameters(parameters.filter(pl.col("scenario_id") == scenario))
                  if p.parameter not in DESIGN_PARAMETERS]
        inputs = sorted(independent(ranged), key=lambda p: p.parameter)
        if len(inputs) < 2:
            continue
        problem = {"num_vars": len(inputs), "names": [p.parameter for p in inputs], "bounds": [[0.0, 1.0]] * len(inputs)}
        unit = sobol_sample.sample(problem, base_samples, calc_second_order=False, scramble=True,
                                   seed=draw_stream(seed, scenario, SOBOL_DESIGN))
        designs[scenario] = SobolDesign(problem, inputs, ranged, unit)
    # the scenarios' design points evaluated together, up to SOBOL_BATCH_SETS a query (a set's rows depend on its own
    # values only): the build's few thousand per scenario in one query, the full study's in a few
    batches: list[list[str]] = []
    batch_sets = 0
    for scenario, design in designs.items():
        if not batches or batch_sets + design.unit.shape[0] > SOBOL_BATCH_SETS:
            batches.append([])
            batch_sets = 0
        batches[-1].append(scenario)
        batch_sets += design.unit.shape[0]
    evaluated = {}
    for batch in batches:
        draws = inputs_from_unit(base_inputs, {scenario: (designs[scenario].ranged, designs[scenario].unit) for scenario in batch})
        with draw_tables(con, draws.drawn, draws.constants) as (sets, devices), model_view(con, sets, devices=devices):
            frame = query_pl(con, "select scenario_id, cast(variant_id as bigint) as draw, device_class, pattern, "
                                  "ln(reduction_factor) as log_r from model_evaluation")
        evaluated |= frame.partition_by("scenario_id", as_dict=True, include_key=False)
    rows: list[dict] = []
    for scenario, (problem, inputs, _, unit) in designs.items():
        widest = 0.0
        own = evaluated[(scenario,)].sort("draw")
        for (device_class, pattern), group in own.group_by(["device_class", "pattern"], maintain_order=True):
            y = group.get_column("log_r").to_numpy()
            if not np.all(np.isfinite(y)) or np.var(y) == 0:
                continue
            result = sobol_analyze.analyze(problem, y, calc_second_order=False, num_resamples=SOBOL_RESAMPLES, conf_level=0.95,
                                           seed=draw_stream(seed, scenario, SOBOL_BOOTSTRAP))
            total = float(np.clip(result["ST"], 0, None).sum())
            top = int(np.argmax(result["ST"]))
            widest = max(widest, 2 * float(result["S1_conf"][top]))
            for i, p in enumerate(inputs):
                rows.append({
                    "scenario_id": scenario, "device_class": device_class, "pattern": pattern, "parameter": p.parameter,
                    "s1": float(result["S1"][i]), "s1_ci95": float(result["S1_conf"][i]),
                    "st": float(result["ST"][i]), "st_ci95": float(result["ST_conf"][i]),
                    "st_share_of_sum": max(float(result["ST"][i]), 0.0) / total if total > 0 else 0.0,
                    "model_runs": int(unit.shape[0]), "base_samples": base_samples,
                })
        log(f"{scenario}: Sobol indices of log R over {len(inputs)} inputs from {unit.shape[0]:,} model runs; "
            f"widest 95% CI of the top driver's S1: {widest:.3f}")
    frame = pl.DataFrame(rows, schema={"scenario_id": pl.String, "device_class": pl.String, "pattern": pl.String,
                                       "parameter": pl.String, "s1": pl.Float64, "s1_ci95": pl.Float64, "st": pl.Float64,
                                       "st_ci95": pl.Float64, "st_share_of_sum": pl.Float64, "model_runs": pl.Int64,
                                       "base_samples": pl.Int64})
    return frame.with_columns(
        pl.col("st").rank("ordinal", descending=True).over("scenario_id", "device_class", "pattern").cast(pl.Int64).alias("rank")
    ).sort("scenario_id", "device_class", "pattern", "rank")
