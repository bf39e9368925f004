"""The DuckDB warehouse: per-run working copy and publish, table writers, data dictionary, docs. No Dagster."""
