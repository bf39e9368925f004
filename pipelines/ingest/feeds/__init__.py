"""Live grid-intensity feed clients, each with a recorded twin (bound as Dagster resources in
pipelines/lib/resources.py).

- :mod:`pipelines.ingest.feeds.uk_carbon_intensity`: UK Carbon Intensity API (no key).
- :mod:`pipelines.ingest.feeds.electricitymaps`: Electricity Maps v3 (token from ELECTRICITYMAPS_TOKEN).
- :mod:`pipelines.ingest.feeds.http`: the shared session (retries, timeouts, User-Agent).
- :mod:`pipelines.ingest.feeds.landing`: the on-disk spool that keeps every payload of a failed run.
"""
