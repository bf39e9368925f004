"""The Dagster code location: assembles the asset modules and sets project-wide policy.

``dagster dev`` run from the repository root loads this module (see ``[tool.dagster]`` in
``pyproject.toml``).
"""

from __future__ import annotations

import dagster as dg

from pipelines.defs import assets
from pipelines.defs.assets.grid_feeds import LIVE_KEY
from pipelines.defs.resources import Warehouse, feed_resources
from pipelines.defs.schedules import grid_feeds_hourly, grid_feeds_job

all_assets = dg.load_assets_from_package_module(assets)
all_checks = dg.load_asset_checks_from_package_module(assets)

#: Materialises everything on the shipped data (what ``make run`` executes). The live feed is
#: left out, so an offline build never calls the network; the schedule refreshes it.
build_warehouse = dg.define_asset_job(
    "build_warehouse",
    selection=dg.AssetSelection.all() - dg.AssetSelection.assets(LIVE_KEY),
    description="Build every table of the warehouse from the shipped sources and publish it.",
)

defs = dg.Definitions(
    assets=all_assets,
    asset_checks=all_checks,
    jobs=[build_warehouse, grid_feeds_job],
    schedules=[grid_feeds_hourly],
    resources={"warehouse": Warehouse(), **feed_resources()},
    # One process, one writer: the multiprocess executor costs ~1.5 s per step on 2 cores and
    # would need one working database per process.
    executor=dg.in_process_executor,
)
