"""The dashboards."""
