"""Dagster machinery that defines nothing: the table writers, the checks factory, column
metadata, asset keys, staging with progress, the warehouse resource and the run-log progress
lines. The modules of ``pipelines/defs/`` (which Dagster loads) build their definitions with it."""
