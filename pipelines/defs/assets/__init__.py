"""Asset modules, one per domain. ``pipelines.defs.definitions`` lists them in ``MODULES``."""
