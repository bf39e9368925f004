"""The shared vocabularies of the model and the marts: codes every layer spells the same way."""

from __future__ import annotations

#: Communication patterns the model evaluates, in report order.
PATTERNS = ("none", "radio_window", "idealized", "parameter_server", "ring_allreduce", "pipeline")
#: The patterns that move data (a scenario's ``comm_pattern`` is one of them).
COMM_PATTERNS = PATTERNS[1:]
#: Equivalence bases of marts.fleet_equivalence, in report order. The memory-capacity floor is
#: not among them: it is a floor on every basis (devices_memory_floor), not an equivalence.
BASES = ("peak_flops", "peak_fp16", "memory_bandwidth", "roofline", "availability", "binding", "measured_throughput")
#: The bases a scenario's headline can use (peak_flops with a stated count, else headline_basis).
HEADLINE_BASES = ("peak_flops", "binding", "measured_throughput")
#: Which evaluated bases to keep: every one asked for, the headline only, or the headline and
#: measured_throughput (what marts.verdict reports).
BASIS_FILTERS = ("all", "headline", "headline_and_measured")
#: Embodied-carbon allocation policies by the numeric code core.scenarios carries.
POLICIES = {0: "none", 1: "battery_wear", 2: "per_use_hour"}
#: Accounting frames of marts.verdict: the paper's mixed frame, then the two consistent ones.
ACCOUNTING_FRAMES = ("as_published", "attributional", "consequential")
#: Edge device classes the model compares with the cloud GPU.
EDGE_DEVICE_CLASSES = ("laptop", "phone")
#: Device classes of the marts (the cloud GPU and the edge classes).
DEVICE_CLASSES = ("cloud_gpu", *EDGE_DEVICE_CLASSES)
