"""``python -m pipelines.capture``: the same as ``edge-carbon-capture``."""

from pipelines.capture import main

raise SystemExit(main())
