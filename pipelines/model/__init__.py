"""The SQL model's Python driver: the one formula over parameter sets, sensitivity, uncertainty. No Dagster."""
