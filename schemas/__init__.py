"""Pandera (polars) models: one per warehouse table.

Each model is the single definition of its table's columns. The same model validates rows at
ingest (failures go to ``quarantine.rejected_rows``), drives the blocking asset checks, and
produces the column-schema metadata shown in the Dagster UI.
"""
