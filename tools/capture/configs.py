"""The model shapes and number formats a capture trains in, without torch (the command line's
choices and its one-line refusals are read before torch is imported)."""

from __future__ import annotations

from dataclasses import asdict, dataclass


@dataclass(frozen=True)
class ModelConfig:
    """The shape of an OPT-style decoder."""

    name: str
    vocab_size: int
    hidden: int
    layers: int
    heads: int
    ffn: int
    max_positions: int
    #: Tokens per sequence when ``--seq`` is not given (within the context).
    default_seq: int = 512
    dropout: float = 0.1

    def as_dict(self) -> dict[str, object]:
        """The configuration as plain JSON-ready values."""
        return asdict(self)


CONFIGS: dict[str, ModelConfig] = {
    "opt-125m": ModelConfig("opt-125m", vocab_size=50272, hidden=768, layers=12, heads=12, ffn=3072, max_positions=2048),
    "opt-1.3b": ModelConfig("opt-1.3b", vocab_size=50272, hidden=2048, layers=24, heads=32, ffn=8192, max_positions=2048),
    "tiny": ModelConfig("tiny", vocab_size=512, hidden=64, layers=2, heads=4, ffn=256, max_positions=128, default_seq=64),
}
#: Number formats of the training step (``--precision``).
PRECISIONS = ("fp32", "tf32", "bf16", "fp16")


def sequence_error(config: ModelConfig, seq: int) -> str | None:
    """Why ``seq`` tokens per sequence cannot train ``config`` (one line), or None."""
    if seq < 1:
        return f"--seq must be >= 1; got {seq}"
    if seq > config.max_positions:
        return f"--seq {seq} exceeds the context of {config.name} ({config.max_positions} tokens); use --seq {config.max_positions} or less"
    return None
