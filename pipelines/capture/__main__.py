"""``python -m pipelines.capture``: the same as ``edge-carbon-capture``."""

from pipelines.capture.cli import main

raise SystemExit(main())
