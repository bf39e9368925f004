"""Recording real training-power logs for the warehouse (``edge-carbon-capture``).

- :mod:`tools.capture.model`: an OPT-shaped causal LM in plain PyTorch (``opt-125m``,
  ``tiny``), randomly initialised, trained on seeded synthetic tokens;
- :mod:`tools.capture.backends`: power backends (NVML, RAPL, powermetrics, Android
  sysfs; a fake one for tests), each detected at run time and writing its native log format;
- :mod:`tools.capture.protocol`: the fixed measurement protocol and the run manifest;
- :mod:`tools.capture.registration`: run manifest -> ``edge-carbon register`` calls;
- :mod:`tools.capture.cli`: the command line.

``run`` needs torch and the backend's bindings (``nvidia-ml-py`` for NVML) and nothing of the
warehouse; ``register`` needs the warehouse's packages and not torch.
"""

import importlib.util
import sys

EXTRA_HINT = (
    "on a CPU-only machine: pip install -c constraints.txt -e '.[capture]'; where the GPU is, a CUDA build: "
    "pip install torch --index-url https://download.pytorch.org/whl/cu128 && pip install nvidia-ml-py (docs/capture.md)"
)


def main(argv: list[str] | None = None) -> int:
    """Entry point of ``edge-carbon-capture``: a clear message when ``run`` has no PyTorch."""
    args = sys.argv[1:] if argv is None else argv
    if args[:1] == ["run"] and importlib.util.find_spec("torch") is None:
        print(f"edge-carbon-capture run needs PyTorch: {EXTRA_HINT}", file=sys.stderr)
        return 2
    from tools.capture.cli import main as cli_main

    return cli_main(argv)
