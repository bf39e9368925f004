"""An OPT-shaped decoder-only causal language model in plain PyTorch, and its training loop.

The architecture follows the OPT family (Zhang et al. 2022): token embeddings plus learned
absolute positions (offset by 2, as OPT's position table is), pre-LayerNorm transformer
blocks with causal multi-head self-attention and a ReLU MLP, a final LayerNorm, and a
language-model head tied to the token embeddings. ``opt-125m`` has the published OPT-125M
shape (12 layers, hidden 768, 12 heads, FFN 3072, vocabulary 50272, context 2048;
125,239,296 parameters), ``opt-1.3b`` OPT-1.3B's (24 layers, hidden 2048, 32 heads, FFN 8192;
1,315,758,080 parameters, the size of the published MPT-1b and OPT-1.3B H100 rows of
staging.training_throughput); ``tiny`` is a toy shape for tests.

:data:`PRECISIONS` are the number formats a capture trains in: ``fp32`` (TF32 off), ``tf32``
(FP32 weights, TF32 tensor-core matmuls; CUDA only), and ``bf16`` / ``fp16`` (FP32 weights
under ``torch.autocast``, fp16 with a gradient scaler on CUDA).

The model is randomly initialised from its configuration (no weights are loaded) and
trained on synthetic tokens drawn uniformly from the vocabulary with a fixed seed: the
point is the energy of the computation, not what the model learns.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch
from torch import nn
from torch.nn import functional as F

from tools.capture.configs import CONFIGS, PRECISIONS, ModelConfig, sequence_error  # noqa: F401  (re-exported)

#: OPT's learned position table has two extra rows (positions start at index 2).
POSITION_OFFSET = 2


#: The autocast dtype of each mixed precision.
AUTOCAST_DTYPES = {"bf16": torch.bfloat16, "fp16": torch.float16}


def precision_error(precision: str, device: str) -> str | None:
    """Why ``precision`` cannot run on the torch ``device`` (one line), or None."""
    kind = torch.device(device).type
    if precision not in PRECISIONS:
        return f"unknown precision {precision!r}; choose from {', '.join(PRECISIONS)}"
    if precision == "tf32" and kind != "cuda":
        return f"tf32 is a CUDA tensor-core format; torch device {device} trains in fp32, bf16 or fp16"
    if precision == "bf16" and kind == "cuda" and not torch.cuda.is_bf16_supported():
        return f"{torch.cuda.get_device_name(torch.device(device))} has no bf16 support; use --precision fp16 or fp32"
    return None


def default_precision(device: str) -> str:
    """bf16 on a CUDA GPU that supports it (how models are trained there), else fp32."""
    if torch.device(device).type == "cuda" and torch.cuda.is_bf16_supported():
        return "bf16"
    return "fp32"


class Block(nn.Module):
    """Pre-LN transformer block: x + attn(LN(x)), then x + MLP(LN(x))."""

    def __init__(self, config: ModelConfig) -> None:
        super().__init__()
        if config.hidden % config.heads:
            raise ValueError(f"hidden {config.hidden} is not divisible by heads {config.heads}")
        self.heads = config.heads
        self.dropout = config.dropout
        self.attn_norm = nn.LayerNorm(config.hidden)
        self.q_proj = nn.Linear(config.hidden, config.hidden)
        self.k_proj = nn.Linear(config.hidden, config.hidden)
        self.v_proj = nn.Linear(config.hidden, config.hidden)
        self.out_proj = nn.Linear(config.hidden, config.hidden)
        self.mlp_norm = nn.LayerNorm(config.hidden)
        self.fc1 = nn.Linear(config.hidden, config.ffn)
        self.fc2 = nn.Linear(config.ffn, config.hidden)

    def _split(self, x: torch.Tensor) -> torch.Tensor:
        batch, seq, hidden = x.shape
        return x.view(batch, seq, self.heads, hidden // self.heads).transpose(1, 2)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """One block over ``x`` of shape (batch, seq, hidden)."""
        h = self.attn_norm(x)
        q, k, v = self._split(self.q_proj(h)), self._split(self.k_proj(h)), self._split(self.v_proj(h))
        drop = self.dropout if self.training else 0.0
        attn = F.scaled_dot_product_attention(q, k, v, dropout_p=drop, is_causal=True)
        attn = attn.transpose(1, 2).reshape(x.shape)
        x = x + F.dropout(self.out_proj(attn), drop, self.training)
        h = self.fc2(F.relu(self.fc1(self.mlp_norm(x))))
        return x + F.dropout(h, drop, self.training)


class CausalLM(nn.Module):
    """OPT-shaped decoder-only language model with a tied LM head."""

    def __init__(self, config: ModelConfig) -> None:
        super().__init__()
        self.config = config
        self.embed_tokens = nn.Embedding(config.vocab_size, config.hidden)
        self.embed_positions = nn.Embedding(config.max_positions + POSITION_OFFSET, config.hidden)
        self.blocks = nn.ModuleList(Block(config) for _ in range(config.layers))
        self.final_norm = nn.LayerNorm(config.hidden)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """Normal(0, 0.02) weights, zero biases, unit LayerNorms (the usual GPT/OPT scheme)."""
        for module in self.modules():
            if isinstance(module, nn.Linear):
                nn.init.normal_(module.weight, std=0.02)
                nn.init.zeros_(module.bias)
            elif isinstance(module, nn.Embedding):
                nn.init.normal_(module.weight, std=0.02)
            elif isinstance(module, nn.LayerNorm):
                nn.init.ones_(module.weight)
                nn.init.zeros_(module.bias)

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        """Logits of shape (batch, seq, vocab) for ``tokens`` of shape (batch, seq)."""
        seq = tokens.shape[1]
        if seq > self.config.max_positions:
            raise ValueError(f"sequence length {seq} exceeds the context {self.config.max_positions}")
        positions = torch.arange(POSITION_OFFSET, seq + POSITION_OFFSET, device=tokens.device)
        x = self.embed_tokens(tokens) + self.embed_positions(positions)
        x = F.dropout(x, self.config.dropout, self.training)
        for block in self.blocks:
            x = block(x)
        return F.linear(self.final_norm(x), self.embed_tokens.weight)


def parameter_count(model: nn.Module) -> int:
    """Number of distinct parameters (the tied head counts once)."""
    return sum(p.numel() for p in model.parameters())


def synthetic_batches(config: ModelConfig, *, n: int, batch: int, seq: int, seed: int) -> list[torch.Tensor]:
    """``n`` batches of uniform random token ids of shape (batch, seq + 1), from a fixed seed."""
    if seq < 1 or batch < 1:
        raise ValueError("batch size and sequence length must be >= 1")
    if seq > config.max_positions:
        raise ValueError(f"sequence length {seq} exceeds the context {config.max_positions} of {config.name}")
    generator = torch.Generator().manual_seed(seed)
    return [torch.randint(0, config.vocab_size, (batch, seq + 1), generator=generator) for _ in range(n)]


@dataclass
class Trainer:
    """A freshly initialised model, its optimiser and its synthetic data, on one torch device."""

    model: CausalLM
    optimizer: torch.optim.Optimizer
    batches: list[torch.Tensor]
    device: torch.device
    precision: str = "fp32"
    scaler: torch.amp.GradScaler | None = None
    step: int = 0

    @classmethod
    def create(cls, config: ModelConfig, *, steps: int, batch: int, seq: int, seed: int, device: str, lr: float = 1e-4,
               precision: str = "fp32") -> Trainer:
        """Seeded random initialisation, AdamW, and all batches generated and moved to ``device``."""
        torch.manual_seed(seed)
        target = torch.device(device)
        if target.type == "cuda":
            # fp32 means true FP32 matmuls; tf32 lets them run on TF32 tensor cores
            torch.backends.cuda.matmul.allow_tf32 = precision == "tf32"
            torch.backends.cudnn.allow_tf32 = precision == "tf32"
        model = CausalLM(config).to(target)
        model.train()
        optimizer = torch.optim.AdamW(model.parameters(), lr=lr)
        batches = [b.to(target) for b in synthetic_batches(config, n=steps, batch=batch, seq=seq, seed=seed)]
        scaler = torch.amp.GradScaler(target.type) if precision == "fp16" and target.type == "cuda" else None
        return cls(model=model, optimizer=optimizer, batches=batches, device=target, precision=precision, scaler=scaler)

    def train(self, steps: int) -> float:
        """Run ``steps`` optimiser steps on the next batches; the last loss (waits for the device)."""
        loss_value = math.nan
        for _ in range(steps):
            if self.step >= len(self.batches):
                raise RuntimeError(f"only {len(self.batches)} batches were generated")
            tokens = self.batches[self.step]
            dtype = AUTOCAST_DTYPES.get(self.precision)
            with torch.autocast(self.device.type, dtype=dtype, enabled=dtype is not None):
                logits = self.model(tokens[:, :-1])
                loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]).float(), tokens[:, 1:].reshape(-1))
            self.optimizer.zero_grad(set_to_none=True)
            if self.scaler is not None:
                self.scaler.scale(loss).backward()
                self.scaler.step(self.optimizer)
                self.scaler.update()
            else:
                loss.backward()
                self.optimizer.step()
            self.step += 1
            loss_value = float(loss.detach())
        synchronize(self.device)
        return loss_value


def synchronize(device: torch.device) -> None:
    """Wait until queued work on ``device`` has finished (no-op on the CPU)."""
    if device.type == "cuda":
        torch.cuda.synchronize(device)
    elif device.type == "mps":
        torch.mps.synchronize()


