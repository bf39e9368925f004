"""``python -m tools.capture``: the same as ``edge-carbon-capture``."""

from tools.capture import main

raise SystemExit(main())
