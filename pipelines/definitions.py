"""The Dagster code location, beside the folder it loads: every definition found in
``pipelines/defs/``, and project-wide policy.

``dagster dev`` and ``dg dev`` run from the repository root load this module (see
``[tool.dagster]`` and ``[tool.dg]`` in ``pyproject.toml``). The assets, checks, jobs, schedules
and sensors are not listed: dg's defs-folder loading (:func:`found`) imports every module under
``pipelines/defs/`` and collects what each defines, so a new module with an asset (``dg
scaffold defs dagster.asset``, or a file written by hand) is part of the location as it is
added. Owners and the ``layer`` tag are set here for every asset, from its group and key.
"""

from __future__ import annotations

import functools
import warnings
from pathlib import Path

import dagster as dg

import pipelines.defs
from pipelines.defs.assets.dashboards import site_asset
from pipelines.lib.keys import LIVE_KEY
from pipelines.lib.resources import Warehouse, feed_resources

#: The folder whose modules are loaded, and the folder above the ``pipelines`` package (the
#: checkout, or site-packages in an installed wheel such as the Kubernetes image's).
DEFS_ROOT = pipelines.defs
PROJECT_ROOT = Path(__file__).resolve().parents[2]


def found(defs_root: object = DEFS_ROOT, project_root: Path = PROJECT_ROOT) -> dg.Definitions:
    """Every definition of the modules under ``defs_root``, by dg's defs-folder loading.

    ``dg.load_defs(defs_root=...)`` builds this same component tree, without reading
    pyproject.toml (which an installed wheel lacks, unlike ``dg.load_from_defs_folder``); the
    tree is built here directly, as ``load_defs`` is deprecated. The folder holds definitions
    only; the machinery they share (writers, checks, keys, the warehouse resource) is
    :mod:`pipelines.lib`.
    """
    with warnings.catch_warnings():  # the folder loader's own helpers are marked preview; the loading is not the user's concern
        warnings.simplefilter("ignore", dg.PreviewWarning)
        return dg.ComponentTree.from_module(defs_module=defs_root, project_root=project_root).build_defs()  # type: ignore[arg-type]


@functools.cache
def folder() -> dg.Definitions:
    """:func:`found` of this package's folder, loaded once (first while this module is imported).

    Kept behind a function: a second Definitions object at module scope would make Dagster's
    module loading (``dagster dev``, ``dg launch``) refuse this module."""
    return found()


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
    "claims": "team:model",
    "dashboards": "team:dashboards",
}
#: The ``layer`` tag: the first part of the key (the warehouse schema, or ``dashboards``).
LAYERS = ("staging", "core", "marts", "dashboards")

#: The offline build's selection: every asset but the live feed's, which the grid_feeds job
#: refreshes by day. The build's power logs are dynamic partitions (pipelines/defs/partitions.py),
#: so a run of it names a range of them: ``edge-carbon run`` registers every manifest log as a
#: partition and runs them all (``BUILD_COMMAND``); ``dg launch --assets '*'`` cannot, as the
#: live feed has partitions of another kind.
BUILD_SELECTION = dg.AssetSelection.all() - dg.AssetSelection.assets(LIVE_KEY)
BUILD_COMMAND = "edge-carbon run"


def with_policy(spec: dg.AssetSpec) -> dg.AssetSpec:
    """``spec`` with its owner (from its group) and its ``layer`` tag (from its key)."""
    layer = spec.key.path[0]
    if layer not in LAYERS:
        raise ValueError(f"{spec.key.to_user_string()}: the key must start with one of {LAYERS}")
    if spec.group_name not in OWNERS_BY_GROUP:
        raise ValueError(f"{spec.key.to_user_string()}: group {spec.group_name!r} has no owner in OWNERS_BY_GROUP")
    return spec.replace_attributes(owners=[OWNERS_BY_GROUP[spec.group_name]], tags={**spec.tags, "layer": layer})


tables = list(folder().assets or [])
table_checks = list(folder().asset_checks or [])
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
    executor (``edge-carbon run --workers N``, :func:`pipelines.run.parallel.parallel_job`) and
    the Kubernetes profile (:mod:`pipelines.run.k8s`, docs/scale.md) run a process per step,
    each step opening the run's copy in turn (``warehouse`` in its ``launcher`` mode, published
    by the launcher or, on Kubernetes, by run-status ``sensors``).
    """
    return dg.Definitions(
        assets=dg.map_asset_specs(with_policy, [*tables, site_asset(table_keys)]),
        asset_checks=table_checks,
        jobs=[build_warehouse, *(folder().jobs or [])],
        schedules=folder().schedules,
        sensors=[*(folder().sensors or []), *(sensors or [])],
        resources={"warehouse": warehouse or Warehouse(), **feed_resources()},
        executor=executor,
    )


defs = definitions()
