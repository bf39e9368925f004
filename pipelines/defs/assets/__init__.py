"""Asset modules, one per domain. ``pipelines.definitions`` loads every module of the defs folder."""
