"""The Dagster code location: assets, checks, resources, schedules and definitions (the only layer that imports dagster)."""
