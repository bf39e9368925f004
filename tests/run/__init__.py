"""``edge-carbon run`` and the scheduled feed runs."""
