"""The Dagster code location: assembles the asset modules and sets project-wide policy.

``dagster dev`` run from the repository root loads this module (see ``[tool.dagster]`` in
``pyproject.toml``).
"""

from __future__ import annotations

import dagster as dg

from pipelines import assets
from pipelines.warehouse import Warehouse

all_assets = dg.load_assets_from_package_module(assets)
all_checks = dg.load_asset_checks_from_package_module(assets)

#: Materialises everything on the shipped data (what ``make run`` executes).
build_warehouse = dg.define_asset_job("build_warehouse", selection=dg.AssetSelection.all(), description="Build every table of the warehouse from the shipped sources and publish it.")

defs = dg.Definitions(
    assets=all_assets,
    asset_checks=all_checks,
    jobs=[build_warehouse],
    resources={"warehouse": Warehouse()},
    # One process, one writer: the multiprocess executor costs ~1.5 s per step on 2 cores and
    # would need one working database per process.
    executor=dg.in_process_executor,
)
