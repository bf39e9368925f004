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
#: Edge device classes of the paper's scenarios. The model is not limited to them: an edge
#: device class is any ``<class>`` with a ``<class>_train_power_w`` parameter (DEVICE_MARKER),
#: its other figures in ``<class>_<field>`` rows (DEVICE_FIELDS), so a class is added by rows.
EDGE_DEVICE_CLASSES = ("laptop", "phone")
#: Device classes of the marts (the cloud GPU and the edge classes).
DEVICE_CLASSES = ("cloud_gpu", *EDGE_DEVICE_CLASSES)
#: A device class name: lower-case words joined by underscores.
DEVICE_CLASS_PATTERN = r"^[a-z][a-z0-9]*(_[a-z0-9]+)*$"
#: The row of a mixed fleet as a whole (its classes' rows summed), beside one row per class.
FLEET_CLASS = "fleet"
#: The parameter suffix that declares an edge device class in a scenario.
DEVICE_MARKER = "train_power_w"
#: Per-class parameter suffix -> the column the model reads (sql/model/evaluate.sql) in its
#: one row per parameter set and device class. A class may leave any but DEVICE_MARKER unset.
DEVICE_FIELDS = {
    "tflops": "device_tflops",
    "fp16_tflops": "device_fp16_tflops",
    "mem_bandwidth_gb_per_s": "device_bandwidth_gb_per_s",
    "memory_gb": "device_memory_gb",
    "train_power_w": "train_power_w",
    "devices_per_gpu": "stated_devices",
    "embodied_kgco2e": "device_embodied_total_kgco2e",
    "nonuse_share": "device_nonuse_share",
    "lifetime_years": "lifetime_years",
    "battery_wh": "battery_wh",
    "battery_rated_cycles": "battery_rated_cycles",
    "battery_embodied_share": "battery_embodied_share",
    "owner_hours_per_day": "owner_hours_per_day",
    "owner_cycles_per_year": "owner_cycles_per_year",
    "job_time_s": "job_time_s",
    "hours_per_day": "class_hours_per_day",
    "fleet_share": "fleet_share",
}
#: Workloads by the numeric code core.scenarios carries (workload_kind): the paper's one
#: accelerator for a horizon, a number of accelerator-hours, or model parameters x tokens
#: (6 N D FLOPs at a model FLOPs utilisation).
WORKLOADS = {0: "horizon", 1: "gpu_hours", 2: "params_tokens"}
