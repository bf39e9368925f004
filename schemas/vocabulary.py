"""The shared vocabularies of the model and the marts: codes every layer spells the same way."""

from __future__ import annotations

from typing import NamedTuple


class CommPattern(NamedTuple):
    """One communication pattern's row of core.patterns: what its traffic is made of, as coefficients of the
    model's byte and radio terms (sql/model/macros.sql comm_bytes, radio_kwh; schemas/methods.py Patterns says
    what each multiplies), and the ends of each byte it moves."""

    #: Home access lines and routers each byte passes (2 between devices, 1 to a server), and data-centre ends.
    home_ends: int
    server_ends: int
    #: Bytes per sync (syncs = tokens / (N x tokens per device step x local steps)): x N p b, x max(N - 1, 0) p b.
    sync_n: float = 0.0
    sync_n_minus_1: float = 0.0
    #: Bytes per token: x 2 (S - 1) x hidden x activation bytes (activations forward, their gradients back).
    activations: float = 0.0
    #: The all-reduce between the N / S replicas of an S-stage model: x tokens x 2 p b / (tokens per step x local
    #: steps) x max(1 - S / N, 0).
    stage_allreduce: float = 0.0
    #: The sending radio: x every online device busy for its training window at the link utilisation (the
    #: paper's radio model), x the time to send the bytes at the link rate.
    radio_per_window: float = 0.0
    radio_per_byte: float = 0.0
    #: Whether the model is split into S stages (comm_stages), each device holding 1 / S of the training state.
    splits_model: bool = False
    #: Whether the traffic each device sends falls as the fleet grows at a fixed global batch, so a larger fleet
    #: can carry it (its stage terms only: pipeline_bytes_at).
    resizable: bool = False

    @property
    def moves_bytes(self) -> bool:
        """Whether the pattern moves any bytes; the one that moves none is the compute-only row of every mart."""
        return any((self.sync_n, self.sync_n_minus_1, self.activations, self.stage_allreduce))


#: Communication patterns the model evaluates (core.patterns), in report order; a pattern is added by one row.
#: The paper's idealized pattern (footnote 1) and its radio window send to a controller (a server).
PATTERN_ROWS = {
    "none": CommPattern(0, 0),
    "radio_window": CommPattern(1, 1, sync_n=1, radio_per_window=1),
    "idealized": CommPattern(1, 1, sync_n=1, radio_per_byte=1),
    "parameter_server": CommPattern(1, 1, sync_n=2, radio_per_byte=1),
    "ring_allreduce": CommPattern(2, 0, sync_n_minus_1=2, radio_per_byte=1),
    "pipeline": CommPattern(2, 0, activations=1, stage_allreduce=1, radio_per_byte=1, splits_model=True, resizable=True),
}
#: Communication patterns the model evaluates, in report order.
PATTERNS = tuple(PATTERN_ROWS)
#: The patterns that move data (a scenario's ``comm_pattern`` is one of them).
COMM_PATTERNS = tuple(name for name, row in PATTERN_ROWS.items() if row.moves_bytes)
#: Equivalence bases of marts.fleet_equivalence, in report order. The memory-capacity floor is
#: not among them: it is a floor on every basis (devices_memory_floor), not an equivalence.
BASES = ("peak_flops", "peak_fp16", "memory_bandwidth", "roofline", "availability", "binding", "measured_throughput")
#: The bases a scenario's headline can use (peak_flops with a stated count, else headline_basis).
HEADLINE_BASES = ("peak_flops", "binding", "measured_throughput")
#: Which evaluated bases to keep: every one asked for, the headline only, the headline and
#: measured_throughput (what marts.verdict reports), or measured_throughput only (marts.siting).
BASIS_FILTERS = ("all", "headline", "headline_and_measured", "measured")
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
    "table1_energy_j": "table1_energy_j",
    "hours_per_day": "class_hours_per_day",
    "fleet_share": "fleet_share",
}
#: Workloads by the numeric code core.scenarios carries (workload_kind): the paper's one
#: accelerator for a horizon, a number of accelerator-hours, or model parameters x tokens
#: (6 N D FLOPs at a model FLOPs utilisation).
WORKLOADS = {0: "horizon", 1: "gpu_hours", 2: "params_tokens"}
#: The claim under audit: edge training emits CLAIM_LOW to CLAIM_HIGH times less carbon (R). Its one
#: row: core.claim, which every mart and page reads the bounds from.
CLAIM_LOW = 4.0
CLAIM_HIGH = 8.0
#: How communication's network energy is counted (core.network_methods): the method name and what it charges.
NETWORK_METHODS = {
    "radio": "The paper's model: the device radio (busy for the window, or for the bytes at the link rate) plus any "
             "average kWh per GB at one end (0 in the paper).",
    "volume": "Average energy per GB (Carbon Trust 2021): the fixed network and the home router at every home end a "
              "byte passes, the fixed network alone at a server's end; plus the sending device's radio.",
    "time": "The home line and router's power for the hours the training holds them (Malmodin 2020 fixed-line idle "
            "power), times training's share of the line; plus the sending device's radio. Independent of bytes.",
    "marginal": "A power model (Malmodin 2020): the core's marginal W per Mbit/s once and the access line and router's "
                "at every home end, per byte; plus the sending device's radio. Idle power is drawn anyway.",
}
#: The network methods each accounting frame admits (core.frame_network_methods), its headline method first.
#: Attributional accounts allocate by volume or by time in use; a consequential one counts marginal power.
FRAME_NETWORK_METHODS = {
    "as_published": ("radio",),
    "attributional": ("volume", "time"),
    "consequential": ("marginal",),
}
#: Frames whose fleets are resized to the smallest fleet whose links carry its traffic (as_published keeps the paper's).
RESIZING_FRAMES = ("attributional", "consequential")
#: A resized fleet may grow to at most this many times its compute-equivalent count.
RESIZE_CAP = 10.0
#: Verdict categories of marts.verdict, in order of precedence.
VERDICT_INFEASIBLE = "infeasible at the stated link"
VERDICT_EDGE_MORE = "edge emits more"
VERDICT_BELOW = f"below the claim (R < {CLAIM_LOW:g})"
VERDICT_HOLDS = f"claim holds (R >= {CLAIM_LOW:g})"
VERDICT_UNCERTAIN = f"claim uncertain (p05-p95 spans {CLAIM_LOW:g})"
VERDICTS = (VERDICT_INFEASIBLE, VERDICT_EDGE_MORE, VERDICT_BELOW, VERDICT_HOLDS, VERDICT_UNCERTAIN)
#: A verdict row whose Monte Carlo draws are feasible in less than this share is infeasible.
FEASIBLE_SHARE_MIN = 0.5
