"""The step-by-step model: a small causal transformer from scratch over a chain's token sequence
(``stepwise.data``), with a key-value cache so that free-running generation over long histories
(1,024 events are ~11k tokens on tier 1) costs one token's forward pass per written token.

Token embeddings scaled by sqrt(width) plus sinusoidal positions (defined at every length, so a
model trained on short chains can be run on long ones; ``positions="shifted"``: the same, each
training sequence starting at a random position below ``SHIFT``, so that training visits the
positions of long histories and no position is the start's sign; ``positions="alibi"``: no position
vector, each head's attention logits lowered in proportion to the distance, by a slope of its own
(ALiBi, Press et al. 2022: defined by distances alone, so no position is new on a long history);
``positions="none"`` leaves the causal mask as the only sign of order), pre-LN blocks (attention, then a 4x GELU MLP), a final LayerNorm and
an output head tied to the token embeddings (or a head of its own).
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import nn

POSITIONS = ("sinusoidal", "shifted", "alibi", "none")
SHIFT = 16_384  # shifted positions: a training sequence starts below this (1,024 tier-1 events are ~11k tokens)


@dataclass(frozen=True)
class StepwiseModelConfig:
    vocab_size: int  # V: the tracker's tokens, SEP and EOS
    width: int = 128  # C, the residual width
    depth: int = 4  # blocks
    heads: int = 4  # attention heads, each of width C / heads
    positions: str = "sinusoidal"  # "sinusoidal", "shifted", "alibi" or "none"
    tied: bool = True  # the output head is the token embedding's transpose

    def __post_init__(self) -> None:
        if self.width % self.heads or self.width < 8 or self.depth < 1 or self.heads < 1:
            raise ValueError(f"width ({self.width}) must be >= 8 and a multiple of heads ({self.heads}); depth >= 1")
        if self.positions not in POSITIONS:
            raise ValueError(f"unknown positions {self.positions!r}; choose one of {', '.join(POSITIONS)}")


def sinusoid(positions: torch.Tensor, width: int) -> torch.Tensor:
    """(..., C) sinusoidal encodings of integer ``positions`` (...): sin and cos at geometric frequencies."""
    half = width // 2
    freq = torch.exp(-math.log(10_000.0) * torch.arange(half, device=positions.device) / half)  # (C/2,)
    angle = positions.float()[..., None] * freq  # (..., C/2)
    out = torch.zeros(*positions.shape, width, device=positions.device)
    out[..., 0:2 * half:2], out[..., 1:2 * half:2] = angle.sin(), angle.cos()
    return out


class KVCache:
    """Keys and values of every block for B sequences, room for ``capacity`` tokens; ``length`` are filled."""

    def __init__(self, config: StepwiseModelConfig, batch: int, capacity: int, device: torch.device) -> None:
        shape = (batch, config.heads, capacity, config.width // config.heads)  # (B, H, S, D)
        self.keys = [torch.zeros(shape, device=device) for _ in range(config.depth)]
        self.values = [torch.zeros(shape, device=device) for _ in range(config.depth)]
        self.capacity, self.length = capacity, 0

    def prefix(self, row: int, length: int, room: int) -> KVCache:
        """A cache of one sequence: row ``row``'s first ``length`` tokens (copied), room for ``room`` more."""
        out = KVCache.__new__(KVCache)
        out.keys, out.values = ([torch.cat([layer[row:row + 1, :, :length],
                                            layer.new_zeros(1, *layer.shape[1:2], room, layer.shape[3])], 2)
                                 for layer in held] for held in (self.keys, self.values))
        out.capacity, out.length = length + room, length
        return out


class Block(nn.Module):
    """Pre-LN: x + attention(LN x), then + MLP(LN x)."""

    def __init__(self, width: int, heads: int) -> None:
        super().__init__()
        self.heads = heads
        self.ln1, self.ln2 = nn.LayerNorm(width), nn.LayerNorm(width)
        self.qkv, self.proj = nn.Linear(width, 3 * width), nn.Linear(width, width)
        self.mlp = nn.Sequential(nn.Linear(width, 4 * width), nn.GELU(), nn.Linear(4 * width, width))

    def forward(self, x: torch.Tensor, cache: KVCache | None = None, layer: int = 0,
                bias: torch.Tensor | None = None) -> torch.Tensor:
        """x (B, T, C). Without a cache: causal attention over the T tokens. With one: the T tokens
        follow the cache's ``length`` tokens, attend to them and to each other causally, and their
        keys and values are stored there (the model advances ``length``). ``bias`` (1, H, T, S): added
        to the attention logits, -inf where a token may not look (the causal mask, made by the caller)."""
        b, t, c = x.shape
        q, k, v = self.qkv(self.ln1(x)).split(c, dim=2)
        q, k, v = (z.view(b, t, self.heads, c // self.heads).transpose(1, 2) for z in (q, k, v))  # (B, H, T, D)
        if cache is None:
            attended = (F.scaled_dot_product_attention(q, k, v, is_causal=True) if bias is None
                        else F.scaled_dot_product_attention(q, k, v, attn_mask=bias))
        else:
            at = cache.length
            cache.keys[layer][:, :, at:at + t], cache.values[layer][:, :, at:at + t] = k, v
            k, v = cache.keys[layer][:, :, :at + t], cache.values[layer][:, :, :at + t]  # (B, H, S, D)
            mask = bias
            if t > 1 and mask is None:  # token i of the T sees the cache and the new tokens up to itself
                mask = torch.arange(at + t, device=x.device)[None, :] <= at + torch.arange(t, device=x.device)[:, None]
            attended = F.scaled_dot_product_attention(q, k, v, attn_mask=mask)
        x = x + self.proj(attended.transpose(1, 2).reshape(b, t, c))
        return x + self.mlp(self.ln2(x))


class StepwiseModel(nn.Module):
    """Next-token logits over a sequence (``forward``), or token by token with a cache (``start``, ``step``)."""

    def __init__(self, config: StepwiseModelConfig) -> None:
        super().__init__()
        self.config = config
        c = config.width
        self.embed = nn.Embedding(config.vocab_size, c)
        nn.init.normal_(self.embed.weight, std=c ** -0.5)  # times sqrt(C) below: token vectors of RMS ~1
        self.blocks = nn.ModuleList(Block(c, config.heads) for _ in range(config.depth))
        self.ln_f = nn.LayerNorm(c)
        self.head = None if config.tied else nn.Linear(c, config.vocab_size, bias=False)

    def _run(self, ids: torch.Tensor, at: int | torch.Tensor, cache: KVCache | None) -> torch.Tensor:
        """(B, T, V) logits of ``ids`` (B, T), the first at position ``at`` (an int, or (B,) one per sequence)."""
        x = self.embed(ids) * math.sqrt(self.config.width)  # (B, T, C)
        bias = None
        if self.config.positions == "alibi":
            bias = self._distance_bias(int(at), ids.shape[1], ids.device)
        elif self.config.positions != "none":
            start = torch.as_tensor(at, device=ids.device).reshape(-1, 1)  # (B or 1, 1)
            x = x + sinusoid(start + torch.arange(ids.shape[1], device=ids.device), self.config.width)
        for layer, block in enumerate(self.blocks):
            x = block(x, cache, layer, bias)
        x = self.ln_f(x)
        return x @ self.embed.weight.T if self.head is None else self.head(x)

    def _distance_bias(self, at: int, t: int, device: torch.device) -> torch.Tensor:
        """(1, H, T, at + T): -slope_h * (query position - key position), -inf on keys after the
        query; queries at positions at..at+T-1, keys at 0..at+T-1."""
        heads = self.config.heads
        slopes = 2.0 ** (-8.0 * torch.arange(1, heads + 1, device=device) / heads)  # (H,) geometric, as ALiBi's
        distance = (at + torch.arange(t, device=device))[:, None] - torch.arange(at + t, device=device)[None, :]
        bias = -slopes[:, None, None] * distance.float()  # (H, T, S)
        return bias.masked_fill(distance < 0, float("-inf"))[None]

    def forward(self, ids: torch.Tensor, starts: torch.Tensor | None = None) -> torch.Tensor:
        """(B, L, V) next-token logits at every position of ``ids`` (B, L), sequence b starting at
        position ``starts[b]`` (B,) (0 when None)."""
        return self._run(ids, 0 if starts is None else starts, None)

    def start(self, batch: int, capacity: int) -> KVCache:
        """An empty cache for ``batch`` sequences of up to ``capacity`` tokens."""
        return KVCache(self.config, batch, capacity, self.embed.weight.device)

    def read(self, ids: torch.Tensor, cache: KVCache) -> torch.Tensor:
        """(B, T, V) next-token logits after reading ``ids`` (B, T) at the cache's next positions,
        attending to what it holds; a gradient flows through these T tokens only, not into the cache's."""
        if cache.length + ids.shape[1] > cache.capacity:
            raise ValueError(f"the cache holds {cache.capacity} tokens and is full")
        logits = self._run(ids, cache.length, cache)
        cache.length += ids.shape[1]
        return logits

    @torch.no_grad()
    def step(self, ids: torch.Tensor, cache: KVCache) -> torch.Tensor:
        """(B, V) logits of the next token after reading ``ids`` (B,) at the cache's next position."""
        return self.read(ids[:, None], cache)[:, -1]
