"""``make bench``: ingest speed and memory on a large nvidia-smi log, cold build time, dashboard
rendering, and the Monte Carlo in DuckDB against the same formula in numpy.

Run it with ``python -m bench`` (see :mod:`bench.__main__`). Generated inputs are cached in
``bench/out/`` (git-ignored).
"""
