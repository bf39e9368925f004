"""The shared vocabularies of the model and the marts: the names every layer spells the same way.

Each vocabulary is written once, here, and becomes reference rows in the warehouse (the
``model_methods`` asset: core.frames, core.frame_network_methods, core.workload_kinds,
core.embodied_policies, core.bases, core.verdicts, core.network_methods, core.patterns and
core.claim), which the model joins and the marts read. A scenario file names a method by its
name here (``accounting_frame,consequential``), never by a number.
"""

from __future__ import annotations

from dataclasses import dataclass

from schemas.patterns import CommPattern, read_pattern_rows

#: Communication patterns the model evaluates (core.patterns), in report order: the rows of
#: sources/curated/patterns.csv (schemas/patterns.py), so a pattern is added, or taken out, by one row.
#: The paper's idealized pattern (footnote 1) and its radio window send to a controller (a server).
PATTERN_ROWS: dict[str, CommPattern] = read_pattern_rows(validate=False)  # typed only: model_methods validates the file
#: Communication patterns the model evaluates for every scenario, in report order (a pattern whose row says
#: every_scenario false is evaluated only for a scenario whose comm_pattern names it).
PATTERNS = tuple(name for name, row in PATTERN_ROWS.items() if row.every_scenario)
#: The patterns that move data (a scenario's ``comm_pattern`` is one of them).
COMM_PATTERNS = tuple(name for name, row in PATTERN_ROWS.items() if row.moves_bytes)
#: The one pattern that moves no bytes: the compute-only rows (R without communication) of every mart.
COMPUTE_ONLY = next(name for name, row in PATTERN_ROWS.items() if not row.moves_bytes)
#: The paper's own communication: its radio busy for the training window (the paper's scenarios' comm_pattern).
PAPER_PATTERN = "radio_window"
#: The patterns the break-even search covers: compute only, and the paper's communication.
SEARCH_PATTERNS = (COMPUTE_ONLY, PAPER_PATTERN)
#: The patterns the uncertainty and sensitivity pages offer: compute only, the paper's communication, and
#: the pipeline the realistic scenarios train with (their comm_pattern).
PAGE_PATTERNS = (COMPUTE_ONLY, PAPER_PATTERN, "pipeline")


@dataclass(frozen=True)
class Basis:
    """An equivalence basis (core.bases): what it compares a device to the cloud GPU by."""

    description: str
    #: The unit of its capacities (sql/core/model_evaluation.sql cloud_gpu_capacity, device_capacity).
    capacity_unit: str
    #: Whether the devices' online fraction and straggler slowdown enter its count.
    counts_availability: bool
    #: Whether a scenario's ``headline_basis`` may name it (peak_flops heads wherever a count is stated).
    headline_choice: bool
    #: Whether its count is at least the memory floor (a class without a memory figure then has no count on it).
    memory_floor: bool
    #: What it compares, as weights of the capacity measures of the cloud GPU and of a device (sql/core/model_evaluation.sql
    #: cloud_gpu_capacity, device_capacity): peak FP32 FLOPS, peak FP16/BF16 FLOPS, memory bandwidth, the roofline
    #: min(F, I x B), jobs per hour of the same measured job, and measured training TFLOPS (the cloud GPU's
    #: cloud_gpu_measured_tflops, a device's <class>_measured_share of its FP32 peak). A rated measure is
    #: delivered at the cloud GPU's utilisation; a measured job rate or training rate already is.
    fp32_peak: float = 0.0
    fp16_peak: float = 0.0
    bandwidth: float = 0.0
    roofline: float = 0.0
    job_rate: float = 0.0
    #: x the measured training TFLOPS of each side; the GPU's work (and so the tokens) is then its measured rate.
    measured_rate: float = 0.0
    #: Whether a device count the scenario states replaces its formula (the paper's peak FLOPS count).
    takes_stated_count: bool = False
    #: Whether its count is at least the devices that deliver the GPU's work at the devices' peak FLOPS (a
    #: measured rate cannot put a device above its peak).
    device_peak_floor: bool = False

    @property
    def measured(self) -> bool:
        """Whether it compares a measured job rate (marts.verdict reports it beside the headline)."""
        return self.job_rate > 0


#: Equivalence bases of marts.fleet_equivalence (core.bases), in report order. The memory-capacity floor
#: is not among them: it is a floor on every basis (devices_memory_floor), not an equivalence.
BASIS_RULES = {
    "peak_flops": Basis("Peak FP32 FLOPS (a count the source states replaces the formula).", "TFLOPS", False, False, False,
                        fp32_peak=1.0, takes_stated_count=True),
    "peak_fp16": Basis("Peak FP16/BF16 FLOPS (tensor cores on the GPU).", "TFLOPS", False, False, False, fp16_peak=1.0),
    "memory_bandwidth": Basis("Memory bandwidth.", "GB/s", False, False, False, bandwidth=1.0),
    "roofline": Basis("min(F, I x B) at the scenario's arithmetic intensity I.", "TFLOPS", False, False, False, roofline=1.0),
    "availability": Basis("Peak FP32 FLOPS with the online fraction and the straggler slowdown.", "TFLOPS", True, False, False,
                          fp32_peak=1.0),
    "binding": Basis("max(roofline with availability, the memory floor).", "TFLOPS", True, True, True, roofline=1.0),
    "measured_throughput": Basis("Jobs per hour of the same measured job (paper Table 1), with availability, at least the "
                                 "memory floor and the devices at their peak.", "jobs/h", True, True, True, job_rate=1.0,
                                 device_peak_floor=True),
    "measured_rates": Basis("Measured training TFLOPS of both sides: the cloud GPU's BF16 full-training row of the nearest "
                            "measured model size (its work and tokens too) and each device's measured share of its FP32 "
                            "peak, with availability, at least the memory floor.", "TFLOPS", True, True, True,
                            measured_rate=1.0),
}
BASES = tuple(BASIS_RULES)
#: The basis that heads wherever the scenario states a device count (the paper's peak FLOPS).
STATED_BASIS = next(name for name, rule in BASIS_RULES.items() if rule.takes_stated_count)
#: The measured basis: marts.verdict reports it beside the headline.
MEASURED_BASIS = next(name for name, rule in BASIS_RULES.items() if rule.measured)
#: The basis of measured training rates of both sides (the realistic scenarios' headline).
MEASURED_RATES_BASIS = next(name for name, rule in BASIS_RULES.items() if rule.measured_rate > 0)
#: The bases a scenario's headline can use (peak_flops with a stated count, else headline_basis).
HEADLINE_BASES = (STATED_BASIS, *(b for b, rule in BASIS_RULES.items() if rule.headline_choice))
#: The units of the bases' capacities.
CAPACITY_UNITS = tuple(dict.fromkeys(rule.capacity_unit for rule in BASIS_RULES.values()))
#: Which evaluated bases to keep: every one asked for, the headline only, the headline and
#: measured_throughput (what marts.verdict reports), or measured_throughput only.
BASIS_FILTERS = ("all", "headline", "headline_and_measured", "measured")
@dataclass(frozen=True)
class EmbodiedPolicy:
    """An embodied-carbon allocation policy (core.embodied_policies): what it charges, as weights of the
    model's two embodied terms (sql/model/macros.sql embodied_allocated_kgco2e)."""

    description: str
    #: x the battery-wear term: the battery's share of the non-use-phase embodied carbon x the extra charge
    #: cycles / rated cycles, or for owners who replace a device worn out early, its embodied carbon x the
    #: share of its service life lost.
    battery_wear: float = 0.0
    #: x the use-hour term: the embodied carbon re-amortised to the job x training hours / (training hours +
    #: the owner's own use hours).
    use_hours: float = 0.0
    #: x the calendar-time term: the embodied carbon re-amortised to the job x training hours / 24 (the share of
    #: the device's calendar time training holds it; ACT, Gupta et al. 2022).
    calendar_hours: float = 0.0


#: Embodied-carbon allocation policies (core.embodied_policies, a scenario's edge_embodied_policy):
#: how much of an edge device's embodied carbon training is charged; a policy is added by one row.
POLICY_ROWS = {
    "none": EmbodiedPolicy("Devices are owned anyway: no embodied carbon is charged to training (the paper)."),
    "battery_wear": EmbodiedPolicy("Battery wear (consequential): the battery's share of the device's non-use-phase embodied "
                                   "carbon x the extra charge cycles / rated cycles, or, for owners who replace the device when "
                                   "training wears its battery out early, the device's embodied carbon x the share of its "
                                   "service life lost.", battery_wear=1.0),
    "per_use_hour": EmbodiedPolicy("Per use hour (attributional): the embodied carbon re-amortised to the job x training hours / "
                                   "(training hours + the owner's own use hours).", use_hours=1.0),
    "calendar_time": EmbodiedPolicy("Per calendar hour (attributional; ACT, Gupta et al., ISCA 2022: embodied carbon x the "
                                    "job's time / the device's lifetime): the embodied carbon re-amortised to the job x training "
                                    "hours / 24.", calendar_hours=1.0),
}
#: The policies' names and what each charges.
POLICIES = {name: policy.description for name, policy in POLICY_ROWS.items()}
#: How a frame charges the cloud node's embodied carbon to the job, by whether it amortises it over the
#: node's life (core.frames amortises_cloud_embodied -> cloud_embodied_rule, as marts.lifecycle_carbon states it).
CLOUD_EMBODIED_RULES = {
    False: "per-GPU embodied factor, charged in full",
    True: "per-GPU embodied factor x min(T / node life, 1)",
}
#: How a frame prices a GB of network traffic in the marts that count bytes at one intensity
#: (core.frames network_energy_rule; sql/model/macros.sql network_kwh_per_gb_for_rule): average
#: intensities, or the marginal power of a power model.
NETWORK_ENERGY_RULES = {
    "average": "network kWh/GB + the home router's allocated kWh/GB",
    "marginal": "(network + router marginal W per Mbit/s) x 8,000 J per GB",
}


@dataclass(frozen=True)
class Frame:
    """An accounting frame (core.frames) and its rules, which the model joins (sql/core/model_evaluation.sql)."""

    description: str
    #: Whether the cloud node's embodied carbon is amortised over its life (min(T / life, 1)), else charged in full.
    amortises_cloud_embodied: bool
    #: One of NETWORK_ENERGY_RULES.
    network_energy_rule: str
    #: The network methods it admits (core.frame_network_methods), its headline method first.
    network_methods: tuple[str, ...]
    #: Whether a fleet over its link is resized to the smallest fleet whose links carry its traffic.
    resizes_fleet: bool
    #: The edge embodied policy a scenario in the frame must use (None: any): the frame's headline allocation.
    edge_embodied_policy: str | None = None
    #: The other allocation policies the frame admits beside it (core.frame_embodied_policies), evaluated as
    #: method rows like its network methods.
    other_embodied_policies: tuple[str, ...] = ()
    #: How the extra devices of a resized fleet draw power (core.frame_resize_powers, RESIZE_POWER_ROWS), its
    #: headline first.
    resize_powers: tuple[str, ...] = ("full",)
    #: Whether a scenario in the frame must give its network energy rule's factors (> 0).
    requires_network_factors: bool = False
    #: Whether the radio of a device that receives the traffic is charged beside the sender's: where a pattern's
    #: bytes pass a home end besides the sender's (home_ends - 1: another device, not a server), that device's
    #: radio is busy receiving them for their time at the link rate (sql/model/macros.sql receiving_radio_kwh).
    charges_receiving_radio: bool = False


#: Accounting frames of marts.verdict (core.frames): the paper's mixed frame, then the two consistent ones.
#: Attributional accounts allocate by volume or by time in use; a consequential one counts marginal power.
FRAMES = {
    "as_published": Frame(
        "The paper's own mixed frame, kept so its arithmetic stays exact: the cloud side attributional (a GPU's whole "
        "embodied share, average grid intensity), the edge consequential (devices owned anyway), the network counted by "
        "the radio alone; the paper's fleet is kept.",
        amortises_cloud_embodied=False, network_energy_rule="average", network_methods=("radio",), resizes_fleet=False),
    "attributional": Frame(
        "Average factors, every shared asset allocated: the edge devices' embodied carbon per use hour, the network and "
        "the home router by average kWh per GB (or by time in use), the cloud node's embodied carbon amortised over its life.",
        amortises_cloud_embodied=True, network_energy_rule="average", network_methods=("volume", "time"),
        resizes_fleet=True, edge_embodied_policy="per_use_hour", other_embodied_policies=("calendar_time",),
        resize_powers=("full", "online_idle"), requires_network_factors=True, charges_receiving_radio=True),
    "consequential": Frame(
        "Only what training adds: battery wear and early device replacement, the marginal network energy of a power "
        "model, and the cloud node added for the training (its embodied share in full).",
        amortises_cloud_embodied=False, network_energy_rule="marginal", network_methods=("marginal",),
        resizes_fleet=True, edge_embodied_policy="battery_wear", resize_powers=("full", "online_idle"),
        requires_network_factors=True, charges_receiving_radio=True),
}
ACCOUNTING_FRAMES = tuple(FRAMES)
#: The paper's own accounting frame (its inputs and arithmetic, kept exactly); the others are the realistic frames.
PAPER_FRAME = "as_published"
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
#: Per-class parameter suffix -> the column the model reads (sql/core/model_evaluation.sql) in its
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
    "measured_share": "device_measured_share",
    "table1_energy_j": "table1_energy_j",
    "hours_per_day": "class_hours_per_day",
    "fleet_share": "fleet_share",
    "idle_power_w": "idle_power_w",
    "grid_gco2e_per_kwh": "class_grid_gco2e_per_kwh",
}
@dataclass(frozen=True)
class WorkloadKind:
    """How a job's length is given (core.workload_kinds): weights of the model's three job lengths
    (sql/core/model_evaluation.sql job_years), one of them 1."""

    description: str
    #: x the scenario's horizon_years (the paper's cloud_gpu_count accelerators for the horizon).
    horizon: float = 0.0
    #: x workload_gpu_hours accelerator-hours on cloud_gpu_count accelerators.
    gpu_hours: float = 0.0
    #: x the accelerator-hours of fleet_model_params x workload_tokens at 6 N D FLOPs and workload_mfu of the
    #: accelerator's FP16/BF16 peak; the job's tokens are then workload_tokens (else what the accelerators
    #: train on over the job).
    tokens: float = 0.0


#: Workloads (core.workload_kinds, a scenario's workload_kind): how the job's length is given; a kind is one row.
WORKLOAD_ROWS = {
    "horizon": WorkloadKind("The paper's frame: cloud_gpu_count accelerators for horizon_years.", horizon=1.0),
    "gpu_hours": WorkloadKind("workload_gpu_hours accelerator-hours on cloud_gpu_count accelerators.", gpu_hours=1.0),
    "params_tokens": WorkloadKind("fleet_model_params x workload_tokens at 6 N D FLOPs and workload_mfu of the accelerator's "
                                  "FP16/BF16 peak, on cloud_gpu_count accelerators.", tokens=1.0),
}
#: The workload kinds' names and what sets each job's length.
WORKLOADS = {name: kind.description for name, kind in WORKLOAD_ROWS.items()}
#: Xue et al.'s claim: edge training emits CLAIM_LOW to CLAIM_HIGH times less carbon (R). The bounds the marts read
#: are its row of the claims registry (sources/curated/claims.csv xue2025_reduction_4_8x -> core.claim); these name
#: its low end in the verdict's category strings and are the Monte Carlo's and the sensitivity's search targets.
CLAIM_LOW = 4.0
CLAIM_HIGH = 8.0
@dataclass(frozen=True)
class NetworkMethod:
    """How communication's network energy is counted (core.network_methods): what it charges, as weights of
    the model's four network terms (sql/model/macros.sql network_kwh); the sending device's radio is charged
    apart, by the pattern (core.patterns), and a receiving device's where the frame charges it (core.frames
    charges_receiving_radio)."""

    description: str
    #: x the bytes' GB x (network + router average kWh per GB), at one end (the paper's).
    per_gb_one_end: float = 0.0
    #: x the bytes' GB x (home ends x (network + router kWh per GB) + server ends x network kWh per GB).
    per_gb_by_ends: float = 0.0
    #: x the bytes' GB x (the core's marginal W per Mbit/s + home ends x the router's) x 8,000 J per GB.
    marginal_by_ends: float = 0.0
    #: x the home line and router's power x training's share of the line x the hours training holds it.
    line_time: float = 0.0
    #: x the bytes' GB x the energy per bit of each piece of equipment on a home-to-server path, summed into kWh per
    #: GB (a claim case's per_bit_kwh_per_gb: Vishwanath et al.'s constants, as Yousefpour et al. 2023 use them). Only
    #: the claims' marts charge this term (sql/marts/claims.sql session_parts); the model's four terms do not, so no
    #: frame admits a row that weighs it (tests/model/test_methods_as_rows.py).
    per_bit: float = 0.0


#: How communication's network energy is counted (core.network_methods); a method is added by one row.
NETWORK_METHOD_ROWS = {
    "radio": NetworkMethod("The paper's model: the device radio (busy for the window, or for the bytes at the link rate) plus "
                           "any average kWh per GB at one end (0 in the paper).", per_gb_one_end=1.0),
    "volume": NetworkMethod("Average energy per GB (Carbon Trust 2021): the fixed network and the home router at every home "
                            "end a byte passes, the fixed network alone at a server's end; plus the devices' radios (the sender's; the receiver's where the frame charges it).",
                            per_gb_by_ends=1.0),
    "time": NetworkMethod("The home line and router's power for the hours the training holds them (Malmodin 2020 fixed-line "
                          "idle power), times training's share of the line; plus the devices' radios (the sender's; the receiver's where the frame charges it). Independent of "
                          "bytes.", line_time=1.0),
    "marginal": NetworkMethod("A power model (Malmodin 2020): the core's marginal W per Mbit/s once and the access line and "
                              "router's at every home end, per byte; plus the devices' radios (the sender's; the receiver's where the frame charges it). Idle power is drawn "
                              "anyway.", marginal_by_ends=1.0),
    "per_bit": NetworkMethod("Energy per bit (Yousefpour et al. 2023, section 4.3, with the constants of Vishwanath et al.): each "
                             "piece of equipment a byte passes between a home and a server (the Wi-Fi access point, the access "
                             "switch, the broadband gateway, the edge and core routers, the data centre's switch) at its energy "
                             "per bit, summed; plus the devices' radios. Charged by the claims' marts only: no frame admits it.",
                             per_bit=1.0),
}
#: The network methods' names and what each charges.
NETWORK_METHODS = {name: method.description for name, method in NETWORK_METHOD_ROWS.items()}
#: The network methods each accounting frame admits (core.frame_network_methods), its headline method first.
FRAME_NETWORK_METHODS = {name: frame.network_methods for name, frame in FRAMES.items()}


@dataclass(frozen=True)
class ResizePower:
    """How a fleet's devices draw power (core.resize_powers): weights of the model's three operational terms
    (sql/core/model_evaluation.sql). A fleet resized to carry its traffic, or grown so its pipelines are complete, holds
    more device-hours than the work needs; the rows differ only there. Beside them, under every row, the waiting
    device-hours (online while their pipeline is incomplete, a - a^S of the window) draw the class's idle power."""

    description: str
    #: x every device of the fleet at its training power for the share of its window it trains.
    fleet_training: float = 0.0
    #: x the device-hours the work needs (the compute-equivalent devices x their online share of the window) at
    #: training power.
    work_training: float = 0.0
    #: x the rest of the fleet's training device-hours at the class's idle power (<class>_idle_power_w).
    extra_idle: float = 0.0


#: How the extra devices of a resized fleet draw power (core.resize_powers); a row is added by one entry.
RESIZE_POWER_ROWS = {
    "full": ResizePower("Every device of the fleet draws training power while it trains (the share of its window its pipeline is "
                        "complete): an upper bound, as the resized fleet does the same work as the compute-equivalent one. Its "
                        "waiting device-hours (online, its pipeline incomplete) draw the class's idle power, as under every row.",
                        fleet_training=1.0),
    "online_idle": ResizePower("The work's device-hours (the compute-equivalent devices x their online share) draw training "
                               "power; the fleet's other training device-hours (the extra devices a resize over the link adds, "
                               "and the rounding up of complete pipelines) draw the class's idle power (<class>_idle_power_w), "
                               "online but not needed by the work. Its waiting device-hours (online, its pipeline incomplete) "
                               "draw the idle power, as under every row. A class without an idle power has no row here.",
                               work_training=1.0, extra_idle=1.0),
}
#: The resize-power rows' names and what each charges.
RESIZE_POWERS = {name: row.description for name, row in RESIZE_POWER_ROWS.items()}
#: Verdict categories of marts.verdict (core.verdicts), in order of precedence.
VERDICT_INFEASIBLE = "infeasible at the stated link"
VERDICT_EDGE_MORE = "edge emits more"
VERDICT_BELOW = f"below the claim (R < {CLAIM_LOW:g})"
VERDICT_HOLDS = f"claim holds (R >= {CLAIM_LOW:g})"
VERDICT_UNCERTAIN = f"claim uncertain (p05-p95 spans {CLAIM_LOW:g})"
VERDICTS = (VERDICT_INFEASIBLE, VERDICT_EDGE_MORE, VERDICT_BELOW, VERDICT_HOLDS, VERDICT_UNCERTAIN)
#: What sets each verdict category (core.verdicts rule), in the same order.
VERDICT_RULES = {
    VERDICT_INFEASIBLE: "The fleet's traffic exceeds its link even resized (deterministically, or in more than "
                        "1 - FEASIBLE_SHARE_MIN of the draws), or its required rate is unknown.",
    VERDICT_EDGE_MORE: "The frame's highest p95 of R with communication over every draw (an infeasible draw counted as "
                       "R = 0) is below 1.",
    VERDICT_BELOW: "The frame's highest p95 of R with communication over every draw is below the claim's low end.",
    VERDICT_HOLDS: "The frame's lowest p05 of R with communication over every draw is at least the claim's low end.",
    VERDICT_UNCERTAIN: "The frame's p05-p95 of R with communication over every draw spans the claim's low end.",
}
#: A verdict row whose Monte Carlo draws are feasible in less than this share is infeasible (core.claim
#: feasible_share_min). No study gives such a threshold: it is an assumed parameter, and it only decides
#: between 'infeasible' and a category, since the category reads the all-draw band (an infeasible draw is R = 0).
FEASIBLE_SHARE_MIN = 0.5
#: The status of a parameter with no published source (core.scenario_parameters.status).
ASSUMED = "assumed"
FEASIBLE_SHARE_MIN_STATUS = ASSUMED
FEASIBLE_SHARE_MIN_REASONING = (
    "Assumed, with no published source: a fleet whose traffic fits its links in fewer than half of the Monte Carlo "
    "draws is more likely not to train than to train, so it is called infeasible rather than given a category. "
    "Above the threshold the category reads the band over every draw, infeasible draws counted as failures (R = 0), "
    "so a lower threshold cannot credit an infeasible draw.")
