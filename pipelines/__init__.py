"""edge-carbon: a Dagster code location that builds the edge-carbon DuckDB warehouse."""
