"""The model's methods as reference rows, written from the one vocabulary (:mod:`schemas.vocabulary`).

The ``model_methods`` asset writes them to the warehouse (core.frames, core.frame_network_methods,
core.workload_kinds, core.embodied_policies, core.frame_embodied_policies, core.resize_powers,
core.frame_resize_powers, core.bases, core.verdicts, core.network_methods,
core.patterns); :func:`pipelines.model.formula.install_methods` writes the same rows on a scratch
connection that lacks them, so ``sql/core/model_evaluation.sql`` joins a frame's rules as columns wherever it runs. A
fourth accounting frame is one entry of :data:`schemas.vocabulary.FRAMES`: its rows follow. The claims under
audit are data (core.claim, sql/core/claim.sql over the claims registry): :data:`CLAIM_PARAMS` binds that SQL.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from typing import Any, get_type_hints

import pyarrow as pa

from schemas.claims import RATIO_QUANTITY
from schemas.patterns import CommPattern
from schemas.vocabulary import (
    BASIS_RULES,
    CLOUD_EMBODIED_RULES,
    FEASIBLE_SHARE_MIN,
    FEASIBLE_SHARE_MIN_REASONING,
    FEASIBLE_SHARE_MIN_STATUS,
    FRAMES,
    NETWORK_METHOD_ROWS,
    PATTERN_ROWS,
    POLICIES,
    POLICY_ROWS,
    RESIZE_POWER_ROWS,
    VERDICT_RULES,
    WORKLOAD_ROWS,
)


def frame_rows() -> pa.Table:
    """core.frames: one row per accounting frame, its rules as columns, in report order."""
    frames = list(FRAMES.items())
    return pa.table({
        "accounting_frame": [name for name, _ in frames],
        "position": pa.array(range(len(frames)), pa.int64()),
        "amortises_cloud_embodied": [f.amortises_cloud_embodied for _, f in frames],
        "cloud_embodied_rule": [CLOUD_EMBODIED_RULES[f.amortises_cloud_embodied] for _, f in frames],
        "network_energy_rule": [f.network_energy_rule for _, f in frames],
        "headline_network_method": [f.network_methods[0] for _, f in frames],
        "resizes_fleet": [f.resizes_fleet for _, f in frames],
        "edge_embodied_policy": pa.array([f.edge_embodied_policy for _, f in frames], pa.string()),
        "requires_network_factors": [f.requires_network_factors for _, f in frames],
        "charges_receiving_radio": [f.charges_receiving_radio for _, f in frames],
        "description": [f.description for _, f in frames],
    })


def frame_method_rows() -> pa.Table:
    """core.frame_network_methods: the network methods each accounting frame admits, its headline first."""
    rows = [(frame, method, rank == 0)
            for frame, rules in FRAMES.items()
            for rank, method in enumerate(rules.network_methods)]
    return pa.table({
        "accounting_frame": pa.array([r[0] for r in rows], pa.string()),
        "network_method": pa.array([r[1] for r in rows], pa.string()),
        "is_frame_headline": pa.array([r[2] for r in rows], pa.bool_()),
    })


def frame_policy_rows() -> pa.Table:
    """core.frame_embodied_policies: the allocation policies each accounting frame admits as method rows, its
    headline (the policy its scenarios must name) first; a frame that requires none admits every policy with
    ``is_frame_headline`` null, and the model evaluates a scenario in it under its own policy only."""
    rows = []
    for frame, rules in FRAMES.items():
        if rules.edge_embodied_policy is None:
            rows += [(frame, policy, None) for policy in POLICIES]
        else:
            rows += [(frame, policy, rank == 0) for rank, policy in enumerate((rules.edge_embodied_policy, *rules.other_embodied_policies))]
    return pa.table({
        "accounting_frame": pa.array([r[0] for r in rows], pa.string()),
        "policy": pa.array([r[1] for r in rows], pa.string()),
        "is_frame_headline": pa.array([r[2] for r in rows], pa.bool_()),
    })


def frame_resize_power_rows() -> pa.Table:
    """core.frame_resize_powers: how each accounting frame charges the extra devices of a resized fleet, its
    headline first."""
    rows = [(frame, power, rank == 0) for frame, rules in FRAMES.items() for rank, power in enumerate(rules.resize_powers)]
    return pa.table({
        "accounting_frame": pa.array([r[0] for r in rows], pa.string()),
        "resize_power": pa.array([r[1] for r in rows], pa.string()),
        "is_frame_headline": pa.array([r[2] for r in rows], pa.bool_()),
    })


#: The capacity measures a basis weighs (schemas.vocabulary.Basis).
BASIS_MEASURES = ("fp32_peak", "fp16_peak", "bandwidth", "roofline", "job_rate", "measured_rate")


def basis_rows(only: Collection[str] | None = None) -> pa.Table:
    """core.bases: the equivalence bases in report order and their rules (``only``: just those named)."""
    bases = [(position, name, rule) for position, (name, rule) in enumerate(BASIS_RULES.items()) if only is None or name in only]
    return pa.table({
        "basis": pa.array([b[1] for b in bases], pa.string()),
        "position": pa.array([b[0] for b in bases], pa.int64()),
        "capacity_unit": pa.array([b[2].capacity_unit for b in bases], pa.string()),
        "counts_availability": pa.array([b[2].counts_availability for b in bases], pa.bool_()),
        "headline_choice": pa.array([b[2].headline_choice for b in bases], pa.bool_()),
        "memory_floor": pa.array([b[2].memory_floor for b in bases], pa.bool_()),
        **{measure: pa.array([getattr(b[2], measure) for b in bases], pa.float64()) for measure in BASIS_MEASURES},
        "takes_stated_count": pa.array([b[2].takes_stated_count for b in bases], pa.bool_()),
        "device_peak_floor": pa.array([b[2].device_peak_floor for b in bases], pa.bool_()),
        "measured": pa.array([b[2].measured for b in bases], pa.bool_()),
        "description": pa.array([b[2].description for b in bases], pa.string()),
    })


#: Arrow types of a method row's fields, by their annotation.
_ARROW_TYPES = {int: pa.int64(), float: pa.float64(), bool: pa.bool_(), str: pa.string()}


def method_rows(key: str, rows: Mapping[str, Any], derived: Sequence[str] = ()) -> pa.Table:
    """A vocabulary of method rows (schemas.vocabulary: one dataclass or named tuple per method) as a table: the
    method's name under ``key``, then each field typed by its annotation, then ``derived`` properties, with the
    description (where the row has one) last."""
    fields = get_type_hints(type(next(iter(rows.values()))))
    columns = [f for f in fields if f != "description"] + list(derived) + (["description"] if "description" in fields else [])
    types = {**{f: _ARROW_TYPES[kind] for f, kind in fields.items()}, **{d: pa.bool_() for d in derived}}
    return pa.table({key: pa.array(list(rows), pa.string()),
                     **{c: pa.array([getattr(row, c) for row in rows.values()], types[c]) for c in columns}})


def pattern_rows(patterns: Mapping[str, CommPattern] = PATTERN_ROWS) -> pa.Table:
    """core.patterns (the model's view names the pattern ``name``): each communication pattern's traffic as
    coefficients of the model's byte and radio terms, the ends of each byte, whether it splits the model into
    stages and whether a larger fleet carries its traffic (the rows of sources/curated/patterns.csv,
    schemas/patterns.py), and whether it moves any bytes."""
    return method_rows("name", patterns, derived=("moves_bytes",))


def workload_rows() -> pa.Table:
    """core.workload_kinds: each workload kind and the weights of the model's three job lengths."""
    return method_rows("workload_kind", WORKLOAD_ROWS)


def network_method_rows() -> pa.Table:
    """core.network_methods: each network method and the weights of the model's four network terms."""
    return method_rows("network_method", NETWORK_METHOD_ROWS)


def policy_rows() -> pa.Table:
    """core.embodied_policies: each allocation policy and the weights of the model's two embodied terms."""
    return method_rows("policy", POLICY_ROWS)


def resize_power_rows() -> pa.Table:
    """core.resize_powers: how a fleet's devices draw power, as weights of the model's three operational terms."""
    return method_rows("resize_power", RESIZE_POWER_ROWS)


def reference_tables(patterns: Mapping[str, CommPattern] = PATTERN_ROWS) -> dict[str, pa.Table]:
    """Every reference table of the vocabulary, by its warehouse name; core.patterns holds ``patterns`` (the
    rows of sources/curated/patterns.csv)."""
    return {
        "core.frames": frame_rows(),
        "core.frame_network_methods": frame_method_rows(),
        "core.workload_kinds": workload_rows(),
        "core.embodied_policies": policy_rows(),
        "core.frame_embodied_policies": frame_policy_rows(),
        "core.resize_powers": resize_power_rows(),
        "core.frame_resize_powers": frame_resize_power_rows(),
        "core.bases": basis_rows(),
        "core.verdicts": pa.table({
            "verdict": list(VERDICT_RULES),
            "precedence": pa.array(range(len(VERDICT_RULES)), pa.int64()),
            "rule": list(VERDICT_RULES.values()),
        }),
        "core.network_methods": network_method_rows(),
        "core.patterns": method_rows("pattern", patterns, derived=("moves_bytes",)),
    }


#: sql/core/claim.sql's parameters: the quantity of a cloud/edge ratio claim (a row of core.claim) and the
#: verdict's feasibility threshold, with its status and reasoning, on every row.
CLAIM_PARAMS: dict[str, Any] = {
    "ratio_quantity": RATIO_QUANTITY,
    "feasible_share_min": FEASIBLE_SHARE_MIN,
    "feasible_share_min_status": FEASIBLE_SHARE_MIN_STATUS,
    "feasible_share_min_reasoning": FEASIBLE_SHARE_MIN_REASONING,
}
