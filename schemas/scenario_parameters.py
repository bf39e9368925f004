"""core.scenario_parameters: every free parameter of the model, per scenario, as data."""

from __future__ import annotations

import pandera.polars as pa

from schemas.base import Contract, Provenance
from schemas.bounds import (
    GRID_MAX_G_PER_KWH,
    GRID_MIN_G_PER_KWH,
    TRAINING_UTILISATION_CEILING_DEFAULT,
)
from schemas.statuses import MEASURED, STATUS_TEXT
from schemas.statuses import STATUSES as SOURCE_STATUSES

#: ``measured``: a row that reads this project's (or the user's) own registered measurement.
STATUSES = [*SOURCE_STATUSES, MEASURED]
DISTRIBUTIONS = ["point", "uniform", "triangular", "split_triangular", "normal", "lognormal"]


class ScenarioParameters(Provenance):
    """Grain: one parameter of one scenario (after inheritance from the scenario it extends).

    ``value`` is what the deterministic marts use. A parameter that names a method (an
    accounting frame, a communication pattern, an embodied policy, a workload kind, a headline
    basis: :data:`schemas.parameter_bounds.NAMED`) carries the name in ``value_text`` instead,
    with ``value`` null and unit ``name``; core.scenarios then holds it as a text column.
    ``low``/``high`` and ``distribution``
    describe the plausible range for sensitivity and Monte Carlo. ``factor_ref`` names the
    staged row the value was read from (``table.key_column=key.value_column``), so a value
    chosen from a factor set can be traced with SQL; ``source_id`` is then that row's source.
    """

    #: The warehouse table(s) this model is the contract of (pipelines.warehouse.dictionary finds it so).
    __tables__ = ("core.scenario_parameters",)

    scenario_id: str = pa.Field(description="Scenario, e.g. paper_text, paper_figure, vendor_fp32.")
    parameter: str = pa.Field(str_matches=r"^[a-z][a-z0-9_]*$", description="Parameter name; its unit is in `unit`.")
    value: float = pa.Field(nullable=True, description="Value used by the deterministic marts (null where the parameter names a method: value_text).")
    value_text: str = pa.Field(nullable=True, description="The method a parameter names (e.g. accounting_frame: consequential), one of the names in its reference table (core.frames, core.patterns, core.embodied_policies, core.workload_kinds, core.bases); null for a number.")
    unit: str = pa.Field(description="Unit of value, low and high ('name' where the parameter names a method).")
    low: float = pa.Field(nullable=True, description="Plausible low end (sensitivity, Monte Carlo).")
    high: float = pa.Field(nullable=True, description="Plausible high end.")
    distribution: str = pa.Field(isin=DISTRIBUTIONS, description="point | uniform | triangular (mode = value) | split_triangular (mode and median = value: half the draws on a triangle rising from low to value, half on one falling from value to high) | normal | lognormal (median = value, low/high its 95% interval).")
    status: str = pa.Field(isin=STATUSES, description=STATUS_TEXT + " | measured (reads a registered measurement of one's own: a power series, a capture's rate).")
    factor_ref: str = pa.Field(nullable=True, description="Staged row the value was taken from, e.g. device_specs.device_id=nvidia-h100-sxm.tdp_w.")
    reasoning: str = pa.Field(nullable=True, description="Why this value: citation, derivation or the assumption made.")
    range_ref: str = pa.Field(nullable=True, description="Measured mean whose relative 95% CI set low/high, e.g. benchmark_series.series_id=table1_phone.mean_power_w_mean.")
    defined_in: str = pa.Field(description="Scenario file that set the value (itself or the one it extends).")

    class Config:
        unique = ["scenario_id", "parameter"]

    @pa.dataframe_check(description="a number or a name: exactly one of value and value_text")
    @classmethod
    def number_or_name(cls, data: pa.PolarsData):  # type: ignore[no-untyped-def]
        import polars as pl

        return data.lazyframe.select(pl.col("value").is_null() != pl.col("value_text").is_null())

    @pa.dataframe_check(description="low <= value <= high when a range is given")
    @classmethod
    def value_inside_range(cls, data: pa.PolarsData):  # type: ignore[no-untyped-def]
        import polars as pl

        return data.lazyframe.select(
            (pl.col("low").is_null() | (pl.col("low") <= pl.col("value")))
            & (pl.col("high").is_null() | (pl.col("value") <= pl.col("high")))
        )


class ScenarioDevices(Contract):
    """core.scenario_devices: the edge devices as rows. Grain: scenario x edge device class.

    A class is any ``<class>`` a scenario gives a ``<class>_train_power_w`` row; its other
    ``<class>_<field>`` rows fill the columns below (schemas.vocabulary.DEVICE_FIELDS), null
    where the class leaves one unset. The model (sql/model/model_rows.sql) reads the same rows.
    """

    #: The warehouse table(s) this model is the contract of (pipelines.warehouse.dictionary finds it so).
    __tables__ = ("core.scenario_devices",)

    scenario_id: str = pa.Field(description="Scenario.")
    variant_id: str = pa.Field(isin=["base"], description="The parameter set: 'base', the scenario's own (core.scenarios).")
    device_class: str = pa.Field(str_matches=r"^[a-z][a-z0-9]*(_[a-z0-9]+)*$", description="Edge device class, e.g. laptop, phone.")
    device_ids: str = pa.Field(nullable=True, description="Devices the class's rows were read from (their factor_ref keys in staging.device_specs, device_pcf or benchmark_series), comma-separated.")
    device_tflops: float = pa.Field(nullable=True, ge=0, description="<class>_tflops: FP32 peak, TFLOPS.")
    device_fp16_tflops: float = pa.Field(nullable=True, ge=0, description="<class>_fp16_tflops: FP16/BF16 peak, TFLOPS.")
    device_bandwidth_gb_per_s: float = pa.Field(nullable=True, ge=0, description="<class>_mem_bandwidth_gb_per_s: memory bandwidth, GB/s.")
    device_memory_gb: float = pa.Field(nullable=True, ge=0, description="<class>_memory_gb: memory, GB.")
    train_power_w: float = pa.Field(gt=0, description="<class>_train_power_w: power while training, W.")
    stated_devices: float = pa.Field(nullable=True, ge=0, description="<class>_devices_per_gpu: a count the source states (peak_flops basis).")
    device_embodied_total_kgco2e: float = pa.Field(nullable=True, ge=0, description="<class>_embodied_kgco2e: the manufacturer report's lifecycle total, kgCO2e.")
    device_nonuse_share: float = pa.Field(nullable=True, in_range={"min_value": 0, "max_value": 1}, description="<class>_nonuse_share: share of that total outside the use phase.")
    lifetime_years: float = pa.Field(nullable=True, gt=0, description="<class>_lifetime_years: the report's assumed lifetime, years.")
    battery_wh: float = pa.Field(nullable=True, ge=0, description="<class>_battery_wh: battery capacity, Wh.")
    battery_rated_cycles: float = pa.Field(nullable=True, ge=0, description="<class>_battery_rated_cycles: rated full cycles.")
    battery_embodied_share: float = pa.Field(nullable=True, ge=0, le=1, description="<class>_battery_embodied_share: battery's share of embodied carbon.")
    owner_hours_per_day: float = pa.Field(nullable=True, ge=0, description="<class>_owner_hours_per_day: the owner's own use, h/day.")
    owner_cycles_per_year: float = pa.Field(nullable=True, ge=0, description="<class>_owner_cycles_per_year: the owner's battery cycles a year.")
    job_time_s: float = pa.Field(nullable=True, gt=0, description="<class>_job_time_s: measured time of the reference job, s.")
    device_measured_share: float = pa.Field(
        nullable=True, gt=0, le=TRAINING_UTILISATION_CEILING_DEFAULT,
        description="<class>_measured_share: the class's measured training TFLOPS over its FP32 peak (a staging.training_throughput rate, bridged to the class's device; the measured_rates basis). At most the training-utilisation ceiling of schemas/bounds.py.",
    )
    table1_energy_j: float = pa.Field(nullable=True, gt=0, description="<class>_table1_energy_j: measured energy of the paper's Table 1 job (OPT-125M), J; marts.scaling_energy and marts.distributed_training_energy scale it.")
    class_hours_per_day: float = pa.Field(nullable=True, gt=0, le=24, description="<class>_hours_per_day: the class's training hours a day (else edge_hours_per_day).")
    fleet_share: float = pa.Field(nullable=True, ge=0, le=1, description="<class>_fleet_share: the class's share of a mixed fleet's work (null: the class alone against the whole job).")
    idle_power_w: float = pa.Field(nullable=True, ge=0, description="<class>_idle_power_w: whole-device power while online and idle (awake, waiting on its link or its pipeline stage), W; every resize-power row charges a fleet's waiting device-hours (online while their pipeline is incomplete) at it, and the online_idle row its extra training device-hours too (null: no online_idle row for the class, and the waiting device-hours at its training power).")
    class_grid_gco2e_per_kwh: float = pa.Field(
        nullable=True, in_range={"min_value": GRID_MIN_G_PER_KWH, "max_value": GRID_MAX_G_PER_KWH},
        description="<class>_grid_gco2e_per_kwh: the grid intensity the class trains on, gCO2e/kWh, in place of edge_grid_gco2e_per_kwh (null: the scenario's edge grid).",
    )

    class Config:
        unique = ["scenario_id", "device_class"]
