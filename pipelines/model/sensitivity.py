"""Break-even search: the value of each parameter at which R reaches 1 and the claim's low end.

It builds substituted parameter sets (:func:`pipelines.model.formula.substitute`) and evaluates them with the
model's one formula in a single set-wise query per step, looping over refinement steps, never over scenarios or
parameters. (One-at-a-time sensitivity and the multiplier x hours grid are families of core.variants.)
"""

from __future__ import annotations

from collections.abc import Sequence

import duckdb
import numpy as np
import polars as pl

from pipelines.model.formula import ParameterSets, evaluate, parameter_columns, substitute
from pipelines.paths import sql_text
from pipelines.warehouse.queries import query_pl
from pipelines.warehouse.tables import load_frame
from schemas.vocabulary import CLAIM_LOW, PATTERNS, SEARCH_PATTERNS

#: Switches and bookkeeping, not quantities a root can be searched for (a parameter that names a method,
#: value_text, is not a number at all).
NOT_SEARCHED = frozenset({"grid_shared", "cloud_gpu_variant", "cloud_gpu_alt_share"})
#: Break-even targets: R = 1 (no saving) and R = the claim's low end (the paper's 4).
TARGETS = (1.0, CLAIM_LOW)
#: The search spans [value / SPAN, value x SPAN] on a log scale, capped at a unit's physical maximum.
SPAN = 1e3
PHYSICAL_MAX = {"h/day": 24.0, "fraction": 1.0}
GRID_POINTS = 65
#: Each refinement splits every bracket into SECTIONS equal parts on a log scale (SECTIONS - 1
#: new points, all brackets in one query) and keeps the first part the crossing lies in;
#: SECTIONS ** REFINEMENTS = 2 ** 24, the precision of 24 bisections in a third of the queries.
SECTIONS = 8
REFINEMENTS = 8
#: R must move by more than this over the search span for a parameter to count as moving it.
MOVES_R = 1e-9

_EVAL_COLUMNS = ["scenario_id", "variant_id", "device_class", "pattern", "devices", "edge_added_kgco2e",
                 "cloud_total_kgco2e", "reduction_factor"]


def _headline(con: duckdb.DuckDBPyConnection, inputs: ParameterSets, patterns: Sequence[str] = PATTERNS,
              methods: str = "headline") -> pl.DataFrame:
    columns = _EVAL_COLUMNS if methods == "headline" else [*_EVAL_COLUMNS, "network_method", "is_headline_method"]
    return evaluate(con, inputs, patterns=patterns, methods=methods).select(columns)


def searchable(base: pl.DataFrame, parameters: pl.DataFrame) -> pl.DataFrame:
    """(scenario_id, parameter, value, unit, low, high, search_low, search_high) of every positive parameter.

    Hours per day are searched up to 24 and fractions up to 1.
    """
    params = parameters.filter(~pl.col("parameter").is_in(list(NOT_SEARCHED)) & (pl.col("unit") != "code") & pl.col("value").is_not_null()
                               & pl.col("parameter").is_in(parameter_columns(base)))
    ref = pl.when(pl.col("value") > 0).then(pl.col("value")).otherwise(pl.col("high"))
    ceiling = pl.col("unit").replace_strict(PHYSICAL_MAX, default=None, return_dtype=pl.Float64)
    return (
        params.with_columns(ref.alias("ref"))
        .filter(pl.col("ref").is_not_null() & (pl.col("ref") > 0))
        .select("scenario_id", "parameter", "value", "unit", "low", "high",
                (pl.col("ref") / SPAN).alias("search_low"),
                pl.min_horizontal(pl.col("ref") * SPAN, ceiling).alias("search_high"))
    )


def _points(frame: pl.DataFrame, column: str = "x") -> pl.DataFrame:
    """Overrides for a frame of (scenario_id, parameter, point_id, x)."""
    return frame.select("scenario_id", pl.col("point_id").alias("variant_id"), "parameter", pl.col(column).alias("value"))


def _ladder(found: pl.DataFrame) -> pl.DataFrame:
    """Every bracket's inner points x_j = lo x (hi / lo) ** (j / SECTIONS), j = 1 .. SECTIONS - 1."""
    return found.with_row_index("bracket").join(pl.DataFrame({"j": list(range(1, SECTIONS))}), how="cross").with_columns(
        (pl.col("lo") * (pl.col("hi") / pl.col("lo")) ** (pl.col("j") / SECTIONS)).alias("x"))


def _sub_brackets(found: pl.DataFrame) -> pl.DataFrame:
    """Every bracket's SECTIONS parts [x_(j-1), x_j] (x_0 = lo, x_SECTIONS = hi): the brackets one refinement can leave."""
    points = _ladder(found)
    ends = found.with_row_index("bracket").with_columns(pl.lit(SECTIONS, pl.Int64).alias("j"), pl.col("hi").alias("x"))
    ladder = pl.concat([points.select(ends.columns), ends]).sort("bracket", "j")
    return ladder.with_columns(pl.col("x").shift(1).over("bracket").fill_null(pl.col("lo")).alias("lo"), pl.col("x").alias("hi"))


POINT_KEYS = ["scenario_id", "parameter", "x"]


def _r_at(con: duckdb.DuckDBPyConnection, points: pl.DataFrame) -> pl.DataFrame:
    """R at every distinct (scenario, parameter, x, device class, pattern) of ``points``, in one evaluation: each point
    on its own device class and pattern only (a bracket is one class's and one pattern's)."""
    keys = [*POINT_KEYS, "device_class", "pattern"]
    unique = points.select(keys).unique().with_row_index("point").with_columns(pl.col("point").cast(pl.String))
    sets = substitute(con, _points(unique.rename({"point": "point_id"})),
                      classes=unique.select("scenario_id", pl.col("point").alias("variant_id"), "device_class"))
    load_frame(con, "temp.break_even_points", unique.select("scenario_id", pl.col("point").alias("variant_id"), "pattern"))
    try:
        r = evaluate(con, sets, patterns=SEARCH_PATTERNS, set_patterns="temp.break_even_points").select(
            pl.col("variant_id").alias("point"), "device_class", "pattern", pl.col("reduction_factor").alias("r"))
    finally:
        con.execute("drop table if exists temp.break_even_points")
    return unique.join(r, on=["point", "device_class", "pattern"]).drop("point")


def _narrow(found: pl.DataFrame, r_at: pl.DataFrame) -> pl.DataFrame:
    """One refinement of every bracket (lo, hi, r_lo: R at lo, on the far side of the target from R at hi),
    with R at its points read from ``r_at`` (:func:`_r_at`).

    The new bracket is [x_(j-1), x_j] for the first j whose R lies across the target from R at lo (x_0 =
    lo, x_SECTIONS = hi, where the crossing lies when no point crosses).
    """
    keys = ["scenario_id", "device_class", "pattern", "parameter", "target"]
    points = _ladder(found).join(r_at, on=[*POINT_KEYS, "device_class", "pattern"], how="left")
    if points.get_column("r").null_count():
        raise RuntimeError("a refinement point was not evaluated")
    # the far end: x_SECTIONS = hi, taken when no point crosses (R there is not needed)
    ends = found.with_row_index("bracket").with_columns(pl.lit(SECTIONS, pl.Int64).alias("j"), pl.col("hi").alias("x"),
                                                        pl.lit(None, pl.Float64).alias("r"))
    ladder = pl.concat([points.select(ends.columns), ends]).sort("bracket", "j").with_columns(
        pl.col("x").shift(1).over("bracket").fill_null(pl.col("lo")).alias("x_prev"),
        pl.col("r").shift(1).over("bracket").fill_null(pl.col("r_lo")).alias("r_prev"),
    )
    crossed = (pl.col("j") == SECTIONS) | ((pl.col("r_lo") - pl.col("target")) * (pl.col("r") - pl.col("target")) <= 0)
    first = ladder.filter(crossed).group_by("bracket").agg(pl.all().sort_by("j").first()).sort("bracket")
    return first.select(*keys, pl.col("x_prev").alias("lo"), pl.col("x").alias("hi"), pl.col("r_prev").alias("r_lo"))


def _refine(con: duckdb.DuckDBPyConnection, found: pl.DataFrame, steps: int) -> pl.DataFrame:
    """``steps`` (1 or 2) refinements of every bracket from one evaluation: the points of the brackets and, for two,
    those of every part a bracket can narrow to, so the second step finds its points evaluated. The points of a
    part are computed as its own refinement computes them, so R and the brackets are those of ``steps`` single
    refinements."""
    keys = [*POINT_KEYS, "device_class", "pattern"]
    points = _ladder(found).select(keys)
    if steps == 2:
        points = pl.concat([points, _ladder(_sub_brackets(found).drop("bracket", "j")).select(keys)])
    r_at = _r_at(con, points)
    for _ in range(steps):
        found = _narrow(found, r_at)
    return found


def break_even(con: duckdb.DuckDBPyConnection, base: pl.DataFrame, parameters: pl.DataFrame) -> pl.DataFrame:
    """marts.break_even: per scenario, class, pattern and parameter, the value where R = 1 and R = 4.

    A log-spaced scan over [value / 1000, value x 1000] (at most 24 h/day or a fraction of 1)
    brackets the crossing nearest the
    scenario's value; refinements (:func:`_refine`) then narrow every bracket at once. The root is substituted
    back and R there is stored, so a jump (a device count rounding up) is visible. The baseline R is the base case's
    row of core.model_evaluation.
    """
    space = searchable(base, parameters)
    steps = np.linspace(0.0, 1.0, GRID_POINTS)
    scan = space.join(pl.DataFrame({"step": list(range(GRID_POINTS)), "t": steps}), how="cross").with_columns(
        (pl.col("search_low") * (pl.col("search_high") / pl.col("search_low")) ** pl.col("t")).alias("x"),
        (pl.col("parameter") + "#" + pl.col("step").cast(pl.String)).alias("point_id"),
    )
    evaluated = _headline(con, substitute(con, _points(scan)), SEARCH_PATTERNS)
    scanned = evaluated.join(scan.select("scenario_id", "point_id", "parameter", "step", "x"),
                             left_on=["scenario_id", "variant_id"], right_on=["scenario_id", "point_id"])
    moves = scanned.group_by("scenario_id", "device_class", "pattern", "parameter").agg(
        (pl.col("reduction_factor").max() - pl.col("reduction_factor").min()).alias("range"))
    moved = moves.filter(pl.col("range") > MOVES_R).select("scenario_id", "device_class", "pattern", "parameter")
    scanned = scanned.join(moved, on=["scenario_id", "device_class", "pattern", "parameter"])
    brackets = []
    for target in TARGETS:
        ordered = scanned.sort("step").with_columns(
            pl.col("x").shift(-1).over("scenario_id", "device_class", "pattern", "parameter").alias("x_next"),
            pl.col("reduction_factor").shift(-1).over("scenario_id", "device_class", "pattern", "parameter").alias("r_next"),
        )
        crossing = ordered.filter(((pl.col("reduction_factor") - target) * (pl.col("r_next") - target)) <= 0)
        crossing = crossing.join(space.select("scenario_id", "parameter", "value"), on=["scenario_id", "parameter"]).with_columns(
            (pl.col("x").log() - pl.col("value").log()).abs().alias("distance")
        )
        nearest = crossing.sort("distance").group_by("scenario_id", "device_class", "pattern", "parameter").first()
        brackets.append(nearest.select("scenario_id", "device_class", "pattern", "parameter", pl.lit(target).alias("target"),
                                       pl.col("x").alias("lo"), pl.col("x_next").alias("hi"),
                                       pl.col("reduction_factor").alias("r_lo")))
    found = pl.concat(brackets)
    for done in range(0, REFINEMENTS, 2):  # two refinements per evaluation (one for an odd last)
        if found.height == 0:
            break
        found = _refine(con, found, min(2, REFINEMENTS - done))
    roots = found.with_columns(((pl.col("lo") * pl.col("hi")).sqrt()).alias("x"))
    r_root = _r_at(con, roots).rename({"r": "r_root"})
    roots = roots.join(r_root, on=[*POINT_KEYS, "device_class", "pattern"])
    keys = ["scenario_id", "device_class", "pattern", "parameter"]
    wide = roots.select(*keys, "target", "x", "r_root").pivot(on="target", index=keys, values=["x", "r_root"])
    # the pivot's columns (x_<target>, r_root_<target>) under the mart's names: r1 for R = 1, r4 for the claim's low end
    names = {f"{part}_{target}": f"{name}_{suffix}" for target, suffix in zip(TARGETS, ("r1", "r4"), strict=True)
             for part, name in (("x", "value"), ("r_root", "reduction_factor_at"))}
    wide = wide.rename({c: names[c] for c in wide.columns if c in names})
    for name in ("value_r1", "value_r4", "reduction_factor_at_r1", "reduction_factor_at_r4"):
        if name not in wide.columns:
            wide = wide.with_columns(pl.lit(None, dtype=pl.Float64).alias(name))
    # the base case's own rows, as the build stored them (sql/model/break_even_baseline.sql)
    baseline = query_pl(con, sql_text("model/break_even_baseline.sql"), {"patterns": list(PATTERNS)})
    out = (
        moved.join(wide, on=keys, how="left")
        .join(space, on=["scenario_id", "parameter"])
        .join(baseline, on=["scenario_id", "device_class", "pattern"])
    )
    in_range = [
        (pl.col(col).is_not_null() & pl.col("low").is_not_null() & (pl.col(col) >= pl.col("low")) & (pl.col(col) <= pl.col("high")))
        .alias(f"{col}_in_range") for col in ("value_r1", "value_r4")
    ]
    return out.with_columns(in_range).select(
        "scenario_id", "device_class", "pattern", "parameter", "unit", "value", "low", "high", "baseline_reduction_factor",
        "value_r1", "value_r4", "reduction_factor_at_r1", "reduction_factor_at_r4", "value_r1_in_range", "value_r4_in_range",
        "search_low", "search_high",
    ).sort(keys)

