"""Physical bounds that the contracts check and the parsers' plausibility checks share."""

from __future__ import annotations

import datetime as dt

#: Physical bounds of grid carbon intensity (gCO2e/kWh). Zero is an all-renewable or nuclear
#: hour under direct accounting; the dirtiest fuel, lignite, emits about 1,100-1,300
#: g/kWh life-cycle, so no grid mix exceeds about 1,300. 2,000 leaves room for odd plants
#: and still rejects unit errors (kg or lb per MWh read as g per kWh) and sentinels.
GRID_MIN_G_PER_KWH = 0
GRID_MAX_G_PER_KWH = 2000


def now_utc() -> dt.datetime:
    """The build time (a function so that a test can pin it)."""
    return dt.datetime.now(dt.UTC)



#: Achieved training FLOPS over peak above which a device's implied utilisation is implausible
#: (marts.verdict.implied_device_utilisation, a warning check). The best reported utilisations of
#: large, tuned training runs: 46.2% model-FLOPs utilisation for PaLM 540B on TPU v4 (Chowdhery
#: et al., PaLM, JMLR 24 2023, Table 3) and 52% of A100 peak for a 1T-parameter GPT on 3,072 GPUs
#: (Narayanan et al., Efficient large-scale language model training on GPU clusters using
#: Megatron-LM, SC 2021). A laptop or phone GPU training in the background reaches no more, so
#: every edge device class takes 0.6, above both; a class may be given its own ceiling here.
TRAINING_UTILISATION_CEILING_DEFAULT = 0.6
TRAINING_UTILISATION_CEILING: dict[str, float] = {}


def training_utilisation_ceiling(device_class: str) -> float:
    """The plausible ceiling of a device class's achieved training FLOPS over its peak."""
    return TRAINING_UTILISATION_CEILING.get(device_class, TRAINING_UTILISATION_CEILING_DEFAULT)
