"""Asset modules, one per domain. ``pipelines.defs.definitions`` loads every module of the defs folder."""
