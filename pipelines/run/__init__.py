"""Running builds: launching the job in one process, in N worker processes or on Kubernetes, and
retiring logs. Beside the code location (:mod:`pipelines.definitions`), never inside it."""
