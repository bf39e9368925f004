"""The Dagster code location: the asset modules, listed, and project-wide policy.

``dagster dev`` and ``dg dev`` run from the repository root load this module (see
``[tool.dagster]`` and ``[tool.dg]`` in ``pyproject.toml``). A new asset module is added to
``MODULES``; owners and the ``layer`` tag are set here for every asset, from its group and key.
"""

from __future__ import annotations

import dagster as dg

from pipelines.defs.assets import (
    equivalence,
    grid_feeds,
    marts,
    methods,
    power_logs,
    scenarios,
    sensitivity,
    siting,
    sources,
    staging_tables,
    uncertainty,
    validation,
    verdict,
)
from pipelines.defs.assets.dashboards import site_asset
from pipelines.defs.partitions import power_log_partitions
from pipelines.defs.resources import Warehouse, feed_resources
from pipelines.defs.schedules import grid_feeds_hourly, grid_feeds_job

#: Every module that defines tables of the warehouse (assets and their checks).
MODULES = [sources, staging_tables, power_logs, grid_feeds, scenarios, methods, marts, equivalence, sensitivity, uncertainty, verdict,
           validation, siting]

#: The team that answers for each group's tables (``owners`` in the UI).
OWNERS_BY_GROUP = {
    "sources": "team:ingest",
    "manufacturer_reports": "team:ingest",
    "device_specs": "team:ingest",
    "network": "team:ingest",
    "paper": "team:ingest",
    "power_logs": "team:measurement",
    "grid": "team:grid",
    "scenarios": "team:model",
    "marts": "team:model",
    "reviewers": "team:model",
    "validation": "team:model",
    "dashboards": "team:dashboards",
}
#: The ``layer`` tag: the first part of the key (the warehouse schema, or ``dashboards``).
LAYERS = ("staging", "core", "marts", "dashboards")

#: The offline build's selection: every asset but the live feed's, which the grid_feeds job
#: refreshes by day. The build's power logs are dynamic partitions (pipelines/defs/partitions.py),
#: so a run of it names a range of them: ``edge-carbon run`` registers every manifest log as a
#: partition and runs them all (``BUILD_COMMAND``); ``dg launch --assets '*'`` cannot, as the
#: live feed has partitions of another kind.
BUILD_SELECTION = dg.AssetSelection.all() - dg.AssetSelection.assets(grid_feeds.LIVE_KEY)
BUILD_COMMAND = "edge-carbon run"


def with_policy(spec: dg.AssetSpec) -> dg.AssetSpec:
    """``spec`` with its owner (from its group) and its ``layer`` tag (from its key)."""
    layer = spec.key.path[0]
    if layer not in LAYERS:
        raise ValueError(f"{spec.key.to_user_string()}: the key must start with one of {LAYERS}")
    if spec.group_name not in OWNERS_BY_GROUP:
        raise ValueError(f"{spec.key.to_user_string()}: group {spec.group_name!r} has no owner in OWNERS_BY_GROUP")
    return spec.replace_attributes(owners=[OWNERS_BY_GROUP[spec.group_name]], tags={**spec.tags, "layer": layer})


tables = dg.load_assets_from_modules(MODULES)
table_checks = dg.load_asset_checks_from_modules(MODULES)
table_keys = [key for assets_def in tables if isinstance(assets_def, dg.AssetsDefinition) for key in assets_def.keys]

build_warehouse = dg.define_asset_job(
    "build_warehouse",
    selection=BUILD_SELECTION,
    description="Build every table of the warehouse from the shipped sources and publish it "
    f"(from a shell: {BUILD_COMMAND}; in the UI, choose every power_logs partition).",
)


def definitions(
    executor: dg.ExecutorDefinition = dg.in_process_executor,
    warehouse: Warehouse | None = None,
    sensors: list[dg.SensorDefinition] | None = None,
) -> dg.Definitions:
    """The code location's definitions, run by ``executor``.

    In process here (``defs``): one process holds the run's working copy. The multiprocess
    executor (``edge-carbon run --workers N``, :func:`pipelines.defs.launch.parallel_job`) and
    the Kubernetes profile (:mod:`pipelines.defs.k8s`, docs/scale.md) run a process per step,
    each step opening the run's copy in turn (``warehouse`` in its ``launcher`` mode, published
    by the launcher or, on Kubernetes, by run-status ``sensors``).
    """
    return dg.Definitions(
        assets=dg.map_asset_specs(with_policy, [*tables, site_asset(table_keys)]),
        asset_checks=table_checks,
        jobs=[build_warehouse, grid_feeds_job],
        schedules=[grid_feeds_hourly],
        sensors=[power_log_partitions, *(sensors or [])],
        resources={"warehouse": warehouse or Warehouse(), **feed_resources()},
        executor=executor,
    )


defs = definitions()
