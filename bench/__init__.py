"""``make bench``: ingest speed and memory on a large nvidia-smi log, and cold build time.

Run it with ``python -m bench`` (see :mod:`bench.__main__`). Generated inputs are cached in
``bench/out/`` (git-ignored).
"""
