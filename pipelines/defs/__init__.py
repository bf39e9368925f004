"""The Dagster code location: assets, checks, resources, schedules and definitions (the only layer that imports dagster).

Importing it silences Dagster's ``BetaWarning``, that category only: Dagster flags the beta
parameters the assets use (``backfill_policy`` of the partitioned assets) each time their modules
are imported, which ``make dev``'s code server does at every start. ``edge-carbon run`` and the
test suite ignore the category too; every other warning is shown as before.
"""

import warnings

import dagster as dg

warnings.filterwarnings("ignore", category=dg.BetaWarning)
