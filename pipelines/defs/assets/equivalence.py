"""Fleet sizing per model size, communication patterns and embodied-allocation policies.

Each asset substitutes parameters of core.scenarios (a model size, an allocation policy) and
evaluates the model's one formula (sql/core/model_evaluation.sql) over all scenarios at once.
"""

import dagster as dg
import polars as pl

from pipelines.lib.checks import staging_checks
from pipelines.lib.metadata import column_metadata
from pipelines.lib.resources import Warehouse
from pipelines.lib.tables import write_table
from pipelines.model.formula import ParameterSets, evaluate, scenario_inputs, substitute
from pipelines.warehouse.queries import query_pl
from schemas.reviewers import Communication, EmbodiedAllocation, FleetSizing
from schemas.vocabulary import BASES, COMPUTE_ONLY, FLEET_CLASS, POLICIES

KINDS = {"duckdb", "polars"}
SCENARIOS = ["core", "scenarios"]


def model_size_inputs(warehouse: Warehouse) -> tuple[ParameterSets, pl.DataFrame]:
    """Every scenario trained on every OPT size: (the table of its parameter sets, models)."""
    con = warehouse.connection()
    base = scenario_inputs(con)
    models = query_pl(con, "select model_id, params, hidden_size, n_layers from staging.model_configs order by params")
    overrides = pl.concat([
        base.select("scenario_id").join(models, how="cross").select(
            "scenario_id", pl.col("model_id").alias("variant_id"), pl.lit(name).alias("parameter"), pl.col(column).cast(pl.Float64).alias("value"))
        for name, column in (("fleet_model_params", "params"), ("fleet_model_hidden_size", "hidden_size"),
                             ("fleet_model_layers", "n_layers"))
    ])
    return substitute(con, overrides), models


@dg.asset(key=["marts", "fleet_sizing"], group_name="reviewers", kinds=KINDS, deps=[SCENARIOS, ["staging", "model_configs"]],
          metadata=column_metadata(FleetSizing), check_specs=staging_checks("marts.fleet_sizing", FleetSizing, joins_sources=False))
def fleet_sizing(warehouse: Warehouse) -> dg.MaterializeResult:
    """Devices per cloud GPU on every equivalence basis, per OPT size (125M-66B), and which basis binds.

    Grain: scenario x edge device class x model size x basis: a basis added by its row of core.bases
    (schemas/vocabulary.py BASIS_RULES) has its rows here with no other change. The memory-capacity count is the
    devices holding the model's training state (16 B per parameter with mixed-precision Adam)
    per GPU holding it; the binding count is max(roofline with availability, memory).
    Answers the reviewers' objection 1 (peak FLOPS is the wrong equivalence).
    """
    inputs, models = model_size_inputs(warehouse)
    # per class: a mixed fleet's sum has no count per basis of its own
    evaluated = evaluate(warehouse.connection(), inputs, all_bases=True).filter(
        (pl.col("pattern") == COMPUTE_ONLY) & (pl.col("device_class") != FLEET_CLASS))
    keys = ["scenario_id", "variant_id", "device_class"]
    binding = evaluated.filter(pl.col("basis") == "binding").select(
        *keys, pl.col("devices_memory_floor").alias("devices_memory_capacity"),
        pl.when(pl.col("devices_from") == "memory_capacity").then(pl.lit("memory_capacity")).otherwise(pl.lit("roofline")).alias("binding_basis"))
    frame = (
        evaluated.select(*keys, "basis", pl.col("devices_formula").alias("devices"))
        .join(binding, on=keys)
        .join(models.select("model_id", "params"), left_on="variant_id", right_on="model_id")
        .rename({"variant_id": "model_id"})
        # the bases in core.bases's order
        .sort("scenario_id", "device_class", "params", pl.col("basis").replace_strict({b: i for i, b in enumerate(BASES)}))
        .select("scenario_id", "device_class", "model_id", "params", "basis", "devices", "devices_memory_capacity", "binding_basis")
    )
    return write_table(warehouse.connection(), "marts.fleet_sizing", frame, FleetSizing)


@dg.asset(key=["marts", "communication"], group_name="reviewers", kinds=KINDS, deps=[SCENARIOS, ["staging", "model_configs"]],
          metadata=column_metadata(Communication), check_specs=staging_checks("marts.communication", Communication, joins_sources=False))
def communication(warehouse: Warehouse) -> dg.MaterializeResult:
    """Communication energy and R per pattern, fleet and model size (OPT 125M-66B).

    Grain: scenario x edge device class x model size x pattern (none, the paper's radio
    window, idealized, parameter server, ring all-reduce, pipeline). Energy = device radio
    power x bytes / link bandwidth + network kWh/GB x bytes, for the work the GPU would do over
    the horizon; link_time_share > 1 means the links cannot carry the traffic in the training
    window, memory_feasible whether the state a device must hold fits. The cloud side's
    cluster communication is the scenario's cloud_comm_energy_share. Answers objections 2 and 3.
    """
    inputs, models = model_size_inputs(warehouse)
    evaluated = evaluate(warehouse.connection(), inputs)
    frame = (
        evaluated.join(models.select("model_id", "params"), left_on="variant_id", right_on="model_id")
        .rename({"variant_id": "model_id"})
        .with_columns((pl.col("link_time_share") <= 1).alias("link_feasible"))
        .sort("scenario_id", "device_class", "params", "pattern")
    )
    return write_table(warehouse.connection(), "marts.communication", frame, Communication)


@dg.asset(key=["marts", "embodied_allocation"], group_name="reviewers", kinds=KINDS, deps=[SCENARIOS],
          metadata=column_metadata(EmbodiedAllocation),
          check_specs=staging_checks("marts.embodied_allocation", EmbodiedAllocation, joins_sources=False))
def embodied_allocation(warehouse: Warehouse) -> dg.MaterializeResult:
    """Edge embodied carbon charged to training under each allocation policy, and R under it.

    Grain: scenario x edge device class x policy: none (devices are owned anyway: the
    paper), battery_wear (the battery's share of embodied carbon x extra charge cycles / rated
    cycles) and per_use_hour (embodied x training hours / (training + owner hours)).
    """
    con = warehouse.connection()
    base = scenario_inputs(con)
    overrides = base.select("scenario_id").join(pl.DataFrame({"policy": list(POLICIES)}), how="cross").select(
        "scenario_id", pl.col("policy").alias("variant_id"), pl.lit("edge_embodied_policy").alias("parameter"),
        pl.col("policy").alias("value"))
    # a class without a manufacturer footprint has no embodied carbon to allocate
    evaluated = evaluate(con, substitute(con, overrides)).filter(
        (pl.col("pattern") == COMPUTE_ONLY) & pl.col("edge_embodied_kgco2e").is_not_null())
    scenario_policy = base.select("scenario_id", pl.col("edge_embodied_policy").alias("scenario_policy"))
    frame = (
        evaluated.join(scenario_policy, on="scenario_id")
        .with_columns(
            pl.col("variant_id").alias("policy"),
            (pl.col("variant_id") == pl.col("scenario_policy")).alias("is_scenario_policy"),
            (pl.col("edge_embodied_kgco2e") / pl.col("devices")).alias("embodied_per_device_kgco2e"),
        )
        # the policies in their vocabulary's order
        .sort("scenario_id", "device_class", pl.col("policy").replace_strict({p: i for i, p in enumerate(POLICIES)}))
    )
    return write_table(con, "marts.embodied_allocation", frame, EmbodiedAllocation)
