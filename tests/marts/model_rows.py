"""One typed scenario for given rows -> expected rows tests of the model's marts: the paper_text
scenario's rows of core.scenario_parameters, as sources/scenarios/paper_base.csv and
paper_text.csv resolve them (paper_text extends paper_base and sets the two stated device
counts), typed here so a test needs no build, no warehouse file and no sources/. They are a copy:
an edit of those files does not reach them (the tests' expected values are computed from them).

:func:`scenario_connection` returns an in-memory DuckDB holding those rows as
core.scenario_parameters, their pivot core.scenarios (sql/core/scenarios.sql), the method tables
(:func:`pipelines.model.formula.install_methods`) and staging.model_configs (:data:`MODEL_CONFIGS`);
:func:`declared_mart` builds a declared mart over them as a build does (core.variants, the tables over it and
core.model_evaluation first), and returns its rows.
"""

from __future__ import annotations

from collections.abc import Mapping

import duckdb
import polars as pl

from pipelines.lib.tables import sql_table
from pipelines.model.formula import install_methods
from pipelines.model.variants import variant_rows
from pipelines.paths import sql_text
from pipelines.warehouse.queries import query_pl
from pipelines.warehouse.tables import install_macros, load_frame, write_table
from schemas.model_evaluation import Variants

SCENARIO = "paper_text"

#: parameter -> (value, or the method it names, unit, low, high, distribution, status)
PAPER_TEXT: dict[str, tuple[float | str, str, float | None, float | None, str, str]] = {
    "accounting_frame": ("as_published", "name", None, None, "point", "paper"),
    "activation_bytes": (2.0, "B", None, None, "point", "assumed"),
    "arithmetic_intensity_flop_per_byte": (1000.0, "FLOP/B", None, None, "point", "assumed"),
    "batch_size": (8.0, "sequences", 1.0, 32.0, "split_triangular", "assumed"),
    "battery_embodied_kgco2e_per_kwh": (120.0, "kgCO2e/kWh", None, None, "point", "assumed"),
    "battery_round_trip_efficiency": (1.0, "fraction", None, None, "point", "paper"),
    "battery_throughput_share": (1.0, "fraction", 0.1, 1.0, "point", "assumed"),
    "bytes_per_param": (4.0, "B", 2.0, 4.0, "point", "assumed"),
    "claim_id": ("xue2025_reduction_4_8x", "name", None, None, "point", "paper"),
    "cloud_alt_gpu_fp16_tflops": (756.5, "TFLOPS", None, None, "point", "primary"),
    "cloud_alt_gpu_mem_bandwidth_gb_per_s": (2000.0, "GB/s", None, None, "point", "primary"),
    "cloud_alt_gpu_power_w": (350.0, "W", None, None, "point", "primary"),
    "cloud_alt_gpu_tflops": (51.0, "TFLOPS", None, None, "point", "primary"),
    "cloud_alt_speedup_vs_ref": (3.0, "ratio", 1.8, 3.9, "split_triangular", "derived"),
    "cloud_comm_energy_share": (0.0, "fraction", None, None, "point", "paper"),
    "cloud_embodied_life_years": (3.0, "year", None, None, "point", "paper"),
    "cloud_gpu_alt_share": (0.0, "fraction", None, None, "point", "derived"),
    "cloud_gpu_count": (1.0, "accelerators", None, None, "point", "paper"),
    "cloud_gpu_embodied_kgco2e": (123.75, "kgCO2e", 14.65, 575.0, "uniform", "assumed"),
    "cloud_gpu_fp16_tflops": (989.5, "TFLOPS", None, None, "point", "primary"),
    "cloud_gpu_mem_bandwidth_gb_per_s": (3350.0, "GB/s", None, None, "point", "primary"),
    "cloud_gpu_memory_gb": (80.0, "GB", None, None, "point", "primary"),
    "cloud_gpu_power_w": (700.0, "W", 350.0, 700.0, "point", "primary"),
    "cloud_gpu_tflops": (67.0, "TFLOPS", None, None, "point", "primary"),
    "cloud_gpu_variant": (0.0, "code", None, None, "point", "derived"),
    "cloud_grid_gco2e_per_kwh": (367.0, "gCO2e/kWh", 250.0, 480.0, "split_triangular", "assumed"),
    "cloud_hours_per_day": (24.0, "h/day", 12.0, 24.0, "point", "paper"),
    "cloud_node_overhead_w": (0.0, "W", None, None, "point", "paper"),
    "cloud_pue": (1.0, "ratio", 1.0, 1.6, "point", "paper"),
    "cloud_ref_job_time_s": (250.0, "s", None, None, "point", "derived"),
    "cloud_speedup_vs_ref": (4.95, "ratio", 3.3, 6.7, "split_triangular", "derived"),
    "cloud_table1_energy_j": (54986.580496999995, "J", None, None, "point", "derived"),
    "cloud_usable_memory_fraction": (0.9, "fraction", 0.8, 0.95, "split_triangular", "assumed"),
    "cloud_utilisation": (1.0, "fraction", 0.3, 1.0, "point", "paper"),
    "comm_compression": (1.0, "ratio", 1.0, 16.0, "point", "assumed"),
    "comm_pattern": ("radio_window", "name", None, None, "point", "paper"),
    "device_multiplier": (1.0, "ratio", None, None, "point", "assumed"),
    "device_online_fraction": (1.0, "fraction", None, None, "point", "assumed"),
    "device_replacement_share": (0.0, "fraction", None, None, "point", "paper"),
    "devices_stated_cloud_hours_per_day": (24.0, "h/day", None, None, "point", "paper"),
    "devices_stated_hours_per_day": (8.0, "h/day", None, None, "point", "paper"),
    "edge_bandwidth_mb_per_s": (10.0, "MB/s", 1.0, 100.0, "point", "paper"),
    "edge_charger_efficiency": (1.0, "fraction", None, None, "point", "paper"),
    "edge_embodied_policy": ("none", "name", None, None, "point", "paper"),
    "edge_grid_gco2e_per_kwh": (367.0, "gCO2e/kWh", 250.0, 480.0, "split_triangular", "assumed"),
    "edge_hours_per_day": (8.0, "h/day", 2.0, 12.0, "point", "paper"),
    "edge_usable_memory_fraction": (0.5, "fraction", 0.3, 0.7, "split_triangular", "assumed"),
    "fleet_model_hidden_size": (2048.0, "units", None, None, "point", "assumed"),
    "fleet_model_layers": (24.0, "layers", None, None, "point", "assumed"),
    "fleet_model_params": (1300000000.0, "params", None, None, "point", "assumed"),
    "grid_shared": (1.0, "code", None, None, "point", "paper"),
    "headline_basis": ("binding", "name", None, None, "point", "assumed"),
    "horizon_years": (3.0, "year", 2.0, 5.0, "point", "paper"),
    "laptop_battery_embodied_share": (0.05, "fraction", 0.02, 0.1, "split_triangular", "assumed"),
    "laptop_battery_rated_cycles": (1000.0, "cycles", None, None, "point", "primary"),
    "laptop_battery_wh": (100.0, "Wh", None, None, "point", "primary"),
    "laptop_devices_per_gpu": (15.0, "devices", None, None, "point", "paper"),
    "laptop_embodied_kgco2e": (300.0, "kgCO2e", None, None, "point", "primary"),
    "laptop_fp16_tflops": (6.8, "TFLOPS", 6.8, 13.6, "split_triangular", "assumed"),
    "laptop_job_time_s": (480.0, "s", None, None, "point", "derived"),
    "laptop_lifetime_years": (4.0, "year", None, None, "point", "primary"),
    "laptop_mem_bandwidth_gb_per_s": (200.0, "GB/s", None, None, "point", "primary"),
    "laptop_memory_gb": (16.0, "GB", None, None, "point", "primary"),
    "laptop_nonuse_share": (0.75, "fraction", 0.74, 0.76, "split_triangular", "derived"),
    "laptop_owner_cycles_per_year": (200.0, "cycles/year", 100.0, 300.0, "split_triangular", "assumed"),
    "laptop_owner_hours_per_day": (4.0, "h/day", 2.0, 8.0, "split_triangular", "assumed"),
    "laptop_table1_energy_j": (7207.8994999999995, "J", None, None, "point", "derived"),
    "laptop_tflops": (6.8, "TFLOPS", None, None, "point", "primary"),
    "laptop_train_power_w": (15.0, "W", 14.609571421600386, 15.390428578399613, "normal", "paper"),
    "line_power_physical_max_w": (93.0, "W", None, None, "point", "derived"),
    "line_power_w": (0.0, "W", None, None, "point", "paper"),
    "line_training_share": (1.0, "fraction", None, None, "point", "assumed"),
    "link_utilisation": (1.0, "fraction", 0.1, 1.0, "point", "assumed"),
    "local_steps_per_sync": (1.0, "steps", None, None, "point", "paper"),
    "network_kwh_per_gb": (0.0, "kWh/GB", 0.0, 0.13, "point", "paper"),
    "network_marginal_w_per_mbps": (0.0, "W/(Mbit/s)", None, None, "point", "paper"),
    "phone_battery_embodied_share": (0.05, "fraction", 0.02, 0.1, "split_triangular", "assumed"),
    "phone_battery_rated_cycles": (1000.0, "cycles", 500.0, 1000.0, "split_triangular", "primary"),
    "phone_battery_wh": (15.0, "Wh", 12.0, 19.0, "split_triangular", "assumed"),
    "phone_devices_per_gpu": (69.0, "devices", None, None, "point", "paper"),
    "phone_embodied_kgco2e": (66.0, "kgCO2e", None, None, "point", "primary"),
    "phone_fp16_tflops": (2.76, "TFLOPS", 1.38, 2.76, "split_triangular", "assumed"),
    "phone_job_time_s": (3510.0, "s", None, None, "point", "derived"),
    "phone_lifetime_years": (3.0, "year", None, None, "point", "primary"),
    "phone_mem_bandwidth_gb_per_s": (51.2, "GB/s", None, None, "point", "derived"),
    "phone_memory_gb": (8.0, "GB", 6.0, 12.0, "split_triangular", "assumed"),
    "phone_nonuse_share": (0.8, "fraction", 0.8, 0.9, "uniform", "assumed"),
    "phone_owner_cycles_per_year": (300.0, "cycles/year", 200.0, 365.0, "split_triangular", "assumed"),
    "phone_owner_hours_per_day": (4.0, "h/day", 2.0, 7.0, "split_triangular", "assumed"),
    "phone_table1_energy_j": (35114.76044821115, "J", None, None, "point", "derived"),
    "phone_tflops": (1.38, "TFLOPS", None, None, "point", "assumed"),
    "phone_train_power_w": (10.0, "W", 9.756808140775844, 10.243191859224156, "normal", "paper"),
    "router_kwh_per_gb": (0.0, "kWh/GB", None, None, "point", "paper"),
    "router_marginal_w_per_mbps": (0.0, "W/(Mbit/s)", None, None, "point", "paper"),
    "sequence_length": (2048.0, "tokens", 512.0, 2048.0, "split_triangular", "assumed"),
    "straggler_slowdown": (1.0, "ratio", None, None, "point", "assumed"),
    "table2_devices": (8.0, "devices", 2.0, 64.0, "split_triangular", "assumed"),
    "training_bytes_per_param": (16.0, "B", None, None, "point", "primary"),
    "wifi_radio_power_w": (0.5, "W", 0.14, 1.74, "point", "paper"),
    "workload_gpu_hours": (0.0, "h", None, None, "point", "paper"),
    "workload_kind": ("horizon", "name", None, None, "point", "paper"),
    "workload_mfu": (0.0, "fraction", None, None, "point", "paper"),
    "workload_steps": (500.0, "steps", 100.0, 2000.0, "split_triangular", "assumed"),
    "workload_tokens": (0.0, "tokens", None, None, "point", "paper"),
}

#: Parameters paper_text does not set but other scenarios do, so core.scenarios holds them as null
#: columns (the model names every column it reads).
UNSET = ("cloud_gpu_measured_tflops", "laptop_idle_power_w", "laptop_measured_share", "phone_idle_power_w",
         "phone_measured_share", "wifi_receive_power_w")

#: The two rows paper_text.csv sets itself; every other row comes from paper_base.csv.
OWN_ROWS = frozenset({"laptop_devices_per_gpu", "phone_devices_per_gpu"})

#: staging.model_configs: (model_id, params, n_layers, hidden_size) of the OPT sizes.
MODEL_CONFIGS = (
    ("OPT-125M", 125e6, 12, 768), ("OPT-350M", 350e6, 24, 1024), ("OPT-1.3B", 1.3e9, 24, 2048),
    ("OPT-2.7B", 2.7e9, 32, 2560), ("OPT-6.7B", 6.7e9, 32, 4096), ("OPT-13B", 13e9, 40, 5120),
    ("OPT-30B", 30e9, 48, 7168), ("OPT-66B", 66e9, 64, 9216),
)

Range = tuple[float, float] | tuple[float, float, str] | None


def ranged() -> list[str]:
    """The parameters with a non-empty range (low < high), whatever their distribution."""
    return sorted(p for p, (_, _, low, high, _, _) in PAPER_TEXT.items()
                  if low is not None and high is not None and low < high)


def parameter_rows(overrides: Mapping[str, float | str | None] | None = None, *,
                   ranges: Mapping[str, Range] | None = None) -> pl.DataFrame:
    """paper_text's rows of core.scenario_parameters (its columns), with ``overrides`` (parameter ->
    a number, a method's name or None) in place of the typed values and ``ranges`` (parameter ->
    (low, high), (low, high, distribution), or None: no range, distribution 'point') in place of
    the typed ranges. A range without a distribution keeps the row's, 'uniform' where it is 'point'."""
    overrides, ranges = dict(overrides or {}), dict(ranges or {})
    unknown = sorted((set(overrides) | set(ranges)) - set(PAPER_TEXT))
    assert not unknown, f"not paper_text parameters: {unknown}"
    rows = []
    for parameter, (typed, unit, low, high, distribution, status) in PAPER_TEXT.items():
        given = overrides.get(parameter, typed)
        if parameter in ranges:
            span = ranges[parameter]
            if span is None:
                low, high, distribution = None, None, "point"
            else:
                low, high = float(span[0]), float(span[1])
                if len(span) == 3:
                    distribution = str(span[2])
                elif distribution == "point":
                    distribution = "uniform"
        rows.append({
            "scenario_id": SCENARIO, "parameter": parameter,
            "value": None if isinstance(given, str) or given is None else float(given),
            "value_text": given if isinstance(given, str) else None,
            "unit": unit, "low": low, "high": high, "distribution": distribution, "status": status,
            "factor_ref": None, "reasoning": None, "range_ref": None,
            "defined_in": "scenarios/paper_text.csv" if parameter in OWN_ROWS else "scenarios/paper_base.csv",
            "source_id": None, "source_file": None, "source_row": None,
        })
    return pl.DataFrame(rows, schema={
        "scenario_id": pl.String, "parameter": pl.String, "value": pl.Float64, "value_text": pl.String, "unit": pl.String,
        "low": pl.Float64, "high": pl.Float64, "distribution": pl.String, "status": pl.String, "factor_ref": pl.String,
        "reasoning": pl.String, "range_ref": pl.String, "defined_in": pl.String, "source_id": pl.String,
        "source_file": pl.String, "source_row": pl.Int64,
    })


def scenario_connection(overrides: Mapping[str, float | str | None] | None = None, *,
                        ranges: Mapping[str, Range] | None = None) -> duckdb.DuckDBPyConnection:
    """An in-memory DuckDB holding paper_text (:func:`parameter_rows`) as core.scenario_parameters and
    core.scenarios, the model's macros and method tables, and staging.model_configs."""
    con = duckdb.connect()
    for schema in ("core", "staging"):
        con.execute(f"create schema {schema}")
    load_frame(con, "temp.given_parameters", parameter_rows(overrides, ranges=ranges))
    con.execute("create table core.scenario_parameters as select * from temp.given_parameters")
    con.execute("drop table temp.given_parameters")
    con.execute("create table core.scenarios as " + sql_text("core/scenarios.sql"))
    for parameter in UNSET:
        con.execute(f"alter table core.scenarios add column {parameter} double")
    con.execute("create table staging.model_configs (model_id varchar, params double, n_layers bigint, hidden_size bigint)")
    con.executemany("insert into staging.model_configs values (?, ?, ?, ?)", [list(row) for row in MODEL_CONFIGS])
    install_macros(con)
    install_methods(con)
    return con


#: The tables between core.scenarios and the marts that read the model, in build order (their declared SQL).
MODEL_TABLES = ("core.variant_parameters", "core.variant_inputs", "core.variant_devices", "core.model_evaluation")


def build_model(con: duckdb.DuckDBPyConnection) -> None:
    """core.variants (every family's file) and the tables over it, then core.model_evaluation, on ``con`` as a build does."""
    write_table(con, "core.variants", variant_rows(con), Variants)
    for table in MODEL_TABLES:
        con.execute(f"create or replace table {table} as " + sql_text(f"{table.replace('.', '/')}.sql"))


def declared_mart(table: str, con: duckdb.DuckDBPyConnection) -> pl.DataFrame:
    """``table``'s rows, built from its SQL file and checked by its contract (every check passes) after
    :func:`build_model` on ``con``."""
    build_model(con)
    result = sql_table(table).build(con)
    assert all(check.passed for check in result.check_results), [c for c in result.check_results if not c.passed]
    return query_pl(con, f"select * from {table}")  # noqa: S608 - a table of the project's


class StubWarehouse:
    """A stand-in for the ``Warehouse`` resource: its one connection, for an asset's body."""

    def __init__(self, con: duckdb.DuckDBPyConnection) -> None:
        self.con = con

    def connection(self) -> duckdb.DuckDBPyConnection:
        return self.con


#: paper_text's carbon by hand (kg over the 3 years): the GPU's operational kg per g/kWh (700 W x 24 h x 365 x 3 y), the
#: cloud total with its embodied 123.75 kg at 367 g/kWh (6875.082), and the stated fleets' operational carbon: 15 laptops
#: x 15 W and 69 phones x 10 W, 8 h a day (723.357 and 2218.2948).
CLOUD_PER_G = 700 * 24 * 365 * 3 / 1e6
CLOUD = 123.75 + CLOUD_PER_G * 367
LAPTOP = 15 * 15 * 8 * 365 * 3 * 367 / 1e6
PHONE = 69 * 10 * 8 * 365 * 3 * 367 / 1e6


def monte_carlo_summary(ranges: Mapping[str, object], n_draws: int, seed: int) -> pl.DataFrame:
    """The Monte Carlo's summary (:func:`pipelines.model.uncertainty.summarize`) of ``n_draws`` draws of the typed
    scenario with ``ranges`` (:func:`scenario_connection`), as the asset draws and summarises them."""
    from pipelines.model.formula import scenario_inputs
    from pipelines.model.uncertainty import draw_inputs, summarize
    from pipelines.warehouse.queries import query_pl

    con = scenario_connection(ranges=ranges)  # type: ignore[arg-type]
    draws = draw_inputs(scenario_inputs(con), query_pl(con, "select * from core.scenario_parameters"), n_draws, seed)
    assert draws.rows == n_draws
    return summarize(con, draws)
