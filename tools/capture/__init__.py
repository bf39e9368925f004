"""Recording real training-power logs for the warehouse (``edge-carbon-capture``).

- :mod:`tools.capture.model`: an OPT-shaped causal LM in plain PyTorch (``opt-125m``,
  ``tiny``), randomly initialised, trained on seeded synthetic tokens;
- :mod:`tools.capture.backends`: power backends (NVML, RAPL, powermetrics, Android
  sysfs; a fake one for tests), each detected at run time and writing its native log format;
- :mod:`tools.capture.protocol`: the fixed measurement protocol and the run manifest;
- :mod:`tools.capture.registration`: run manifest -> ``edge-carbon register`` calls;
- :mod:`tools.capture.cli`: the command line.

Needs the ``capture`` extra (``torch``, ``nvidia-ml-py``).
"""

import importlib.util
import sys

EXTRA_HINT = "pip install -e '.[capture]'  (or: make test EXTRAS=dev,capture)"


def main(argv: list[str] | None = None) -> int:
    """Entry point of ``edge-carbon-capture``: a clear message when the capture extra is missing."""
    if importlib.util.find_spec("torch") is None:
        print(f"edge-carbon-capture needs PyTorch, from the capture extra: {EXTRA_HINT}", file=sys.stderr)
        return 2
    from tools.capture.cli import main as cli_main

    return cli_main(argv)
