"""Running builds: launching the job in one process, in N worker processes or on Kubernetes, and
the run log's progress lines. Beside the code location (:mod:`pipelines.defs`), never inside it."""
