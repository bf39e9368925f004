"""The model's methods as reference rows, written from the one vocabulary (:mod:`schemas.vocabulary`).

The ``model_methods`` asset writes them to the warehouse (core.frames, core.frame_network_methods,
core.workload_kinds, core.embodied_policies, core.bases, core.verdicts, core.network_methods,
core.claim), and :func:`pipelines.model.formula.model_view` registers the same rows beside the
parameter sets it evaluates, so ``sql/model/evaluate.sql`` joins a frame's rules as columns. A
fourth accounting frame is one entry of :data:`schemas.vocabulary.FRAMES`: its rows follow.
"""

from __future__ import annotations

from collections.abc import Collection

import pyarrow as pa

from schemas.vocabulary import (
    BASIS_RULES,
    CLAIM_HIGH,
    CLAIM_LOW,
    CLOUD_EMBODIED_RULES,
    FRAMES,
    NETWORK_METHOD_ROWS,
    POLICY_ROWS,
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
        "description": [f.description for _, f in frames],
    })


def frame_method_rows(only: Collection[str] | None = None) -> pa.Table:
    """core.frame_network_methods: the network methods each accounting frame admits, its headline
    first (``only``: just the methods named there)."""
    rows = [(frame, method, rank == 0)
            for frame, rules in FRAMES.items()
            for rank, method in enumerate(rules.network_methods)
            if only is None or method in only]
    return pa.table({
        "accounting_frame": pa.array([r[0] for r in rows], pa.string()),
        "network_method": pa.array([r[1] for r in rows], pa.string()),
        "is_frame_headline": pa.array([r[2] for r in rows], pa.bool_()),
    })


#: The capacity measures a basis weighs (schemas.vocabulary.Basis).
BASIS_MEASURES = ("fp32_peak", "fp16_peak", "bandwidth", "roofline", "job_rate")


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


def workload_rows() -> pa.Table:
    """core.workload_kinds: each workload kind and the weights of the model's three job lengths."""
    kinds = list(WORKLOAD_ROWS.items())
    return pa.table({
        "workload_kind": pa.array([name for name, _ in kinds], pa.string()),
        "horizon": pa.array([k.horizon for _, k in kinds], pa.float64()),
        "gpu_hours": pa.array([k.gpu_hours for _, k in kinds], pa.float64()),
        "tokens": pa.array([k.tokens for _, k in kinds], pa.float64()),
        "description": pa.array([k.description for _, k in kinds], pa.string()),
    })


def network_method_rows() -> pa.Table:
    """core.network_methods: each network method and the weights of the model's four network terms."""
    methods = list(NETWORK_METHOD_ROWS.items())
    weights = ("per_gb_one_end", "per_gb_by_ends", "marginal_by_ends", "line_time")
    return pa.table({
        "network_method": pa.array([name for name, _ in methods], pa.string()),
        **{w: pa.array([getattr(m, w) for _, m in methods], pa.float64()) for w in weights},
        "description": pa.array([m.description for _, m in methods], pa.string()),
    })


def policy_rows() -> pa.Table:
    """core.embodied_policies: each allocation policy and the weights of the model's two embodied terms."""
    policies = list(POLICY_ROWS.items())
    return pa.table({
        "policy": pa.array([name for name, _ in policies], pa.string()),
        "battery_wear": pa.array([p.battery_wear for _, p in policies], pa.float64()),
        "use_hours": pa.array([p.use_hours for _, p in policies], pa.float64()),
        "description": pa.array([p.description for _, p in policies], pa.string()),
    })


def named_rows(key: str, described: dict[str, str]) -> pa.Table:
    """A vocabulary of names and their descriptions as rows: ``key`` and description."""
    return pa.table({key: list(described), "description": list(described.values())})


def reference_tables() -> dict[str, pa.Table]:
    """Every reference table of the vocabulary, by its warehouse name (core.patterns aside:
    :func:`pipelines.model.formula.pattern_rows`)."""
    return {
        "core.frames": frame_rows(),
        "core.frame_network_methods": frame_method_rows(),
        "core.workload_kinds": workload_rows(),
        "core.embodied_policies": policy_rows(),
        "core.bases": basis_rows(),
        "core.verdicts": pa.table({
            "verdict": list(VERDICT_RULES),
            "precedence": pa.array(range(len(VERDICT_RULES)), pa.int64()),
            "rule": list(VERDICT_RULES.values()),
        }),
        "core.network_methods": network_method_rows(),
        "core.claim": pa.table({"claim_low": [CLAIM_LOW], "claim_high": [CLAIM_HIGH]}),
    }
