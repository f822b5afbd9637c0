"""Trackers: the slot recurrence, a causal transformer over events, and DeltaProduct.

Every tracker reads a history one item at a time (the start tree, then one rewrite event per
step) and exposes the same interface:

- ``forward(items)`` -> ``(z, state)``: ``z`` (H, T, C) is the normalised view ``LN(w)`` after
  every step (the view the readout and the Nerode losses use); ``state`` is what was carried at
  the end of each history (padding items, id 0, leave it unchanged);
- ``advance(state, rows, items)`` -> ``z`` (M, C): the view after one more item on some rows;
- ``final_view(items)`` -> ``z`` (H, C): the view at each history's end, without keeping the
  views of every step (evaluation on 4,096-step chains);
- ``readout(z)`` -> logits (..., P, V_out): a linear map per tree position;
- ``initial_state``, ``read`` and ``view``: the stepping every caller past training uses
  (``tracker.protocol``, where a model of one's own is described too).
"""
from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass

import torch
import torch.nn as nn
import torch.nn.functional as F

ARCHS = ("recurrence", "transformer", "transformer2x", "deltaproduct", "registers")
# an arch of one's own: the import path of its class (tracker.build.model_class)
_OWN_ARCH = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*:[A-Za-z_][A-Za-z0-9_]*")


def is_own_arch(arch: str) -> bool:
    """``arch`` names a model class of one's own by its import path, ``package.module:Class``."""
    return bool(_OWN_ARCH.fullmatch(arch))

# bound: one table row per (position, token), for short items over a small vocabulary (trees,
# rewrite events); factored: a token row plus a position row, for long items over a large one
# (Lean text), where E x V rows would not fit
EMBEDDINGS = ("bound", "factored")


@dataclass(frozen=True)
class ModelConfig:
    arch: str = "recurrence"  # one of ARCHS, or a model class of one's own as package.module:Class
    width: int = 128  # C: the slot's width (the residual width of the baselines)
    ticks: int = 4  # recurrence: attention + MLP updates per event
    fixed_norm: bool = True  # recurrence: rescale the slot to norm sqrt(C) after every event (no clock in its norm)
    heads: int = 4  # transformer and DeltaProduct heads
    householders: int = 2  # DeltaProduct: Householder factors per event
    blocks: int = 2  # DeltaProduct blocks
    slot_init: float = 1.0  # recurrence: the start slot w0 is slot_init * N(0, I); small lets the first item write it
    embed_init_std: float = 0.02  # std of the token embedding table at init
    embedding: str = "bound"  # one of EMBEDDINGS: how an item's tokens are embedded (see ItemEmbedding)
    moves: str = "soft"  # registers: a move reads the softmax mixture of its sources, or (hard) the top one
    tables: str = "free"  # registers: each head's row its own (free), or leaning on its parent head's move (tied)
    # registers on rewrite chains: the readout's layout (tracker.layouts), which must be paths; a
    # programs dataset's registers (one per variable) read its readout as it is, the polish layout
    layout: str = "paths"
    # recurrence on programs: a frozen causal code model (a local directory or a cached name) whose
    # middle layer reads each item (tracker.code_encoder); "": the item embedding above
    encoder: str = ""

    @property
    def layers(self) -> int:
        # Per-event compute of the recurrence: 4 ticks x (MLP 8C^2) + K,V projections of ~7
        # tokens (14C^2) ~ 46C^2 MACs; a transformer layer costs 12C^2 per event, so depth 4 is
        # equal compute and depth 8 twice it (attention over the history comes on top).
        return {"transformer": 4, "transformer2x": 8}.get(self.arch, 0)


class ItemEmbedding(nn.Module):
    """Token embeddings bound to their position inside the item, so that pooling an item keeps
    which token sat where: one table row per (position, token) (``bound``), or a token row plus a
    position row (``factored``)."""

    def __init__(self, item_tokens: torch.Tensor, vocab_size: int, width: int, embedding: str = "bound") -> None:
        super().__init__()
        if embedding not in EMBEDDINGS:
            raise ValueError(f"unknown embedding {embedding!r}; choose one of {', '.join(EMBEDDINGS)}")
        self.register_buffer("item_tokens", item_tokens.clone(), persistent=True)  # (I, E)
        self.vocab_size = vocab_size
        self.factored = embedding == "factored"
        if self.factored:
            self.table = nn.Embedding(vocab_size, width)
            self.position = nn.Embedding(item_tokens.shape[1], width)
        else:
            self.table = nn.Embedding(item_tokens.shape[1] * vocab_size, width)

    def tokens(self, items: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """items (...,) -> token embeddings (..., E, C) and their mask (..., E)."""
        return self.token_rows(self.item_tokens[items])

    def token_rows(self, toks: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """Items given by their token ids (..., E), 0-padded -> embeddings (..., E, C) and mask (..., E).
        Any item of the domain can be read this way, not only the dataset's."""
        if self.factored:
            return self.table(toks) + self.position.weight[: toks.shape[-1]], toks != 0
        offset = torch.arange(toks.shape[-1], device=toks.device) * self.vocab_size
        return self.table(toks + offset), toks != 0

    def pooled_rows(self, toks: torch.Tensor) -> torch.Tensor:
        """Items given by their token ids (M, E) -> the mean of each item's token embeddings (M, C)."""
        emb, mask = self.token_rows(toks)  # (M, E, C), (M, E)
        m = mask.unsqueeze(-1).to(emb.dtype)
        return (emb * m).sum(-2) / m.sum(-2).clamp(min=1)

    def pooled(self, items: torch.Tensor) -> torch.Tensor:
        """items (...,) -> the mean of the item's token embeddings (..., C); zero for padding.
        Embeds each distinct item once, so long histories never hold (..., E, C) at once."""
        uniq, inverse = torch.unique(items, return_inverse=True)
        emb, mask = self.tokens(uniq)  # (U, E, C), (U, E)
        m = mask.unsqueeze(-1).to(emb.dtype)
        return ((emb * m).sum(-2) / m.sum(-2).clamp(min=1))[inverse]


class MLP(nn.Module):
    def __init__(self, width: int) -> None:
        super().__init__()
        self.up = nn.Linear(width, 4 * width)
        self.down = nn.Linear(4 * width, width)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.down(F.gelu(self.up(x)))


class Tracker(nn.Module):
    """What the trackers share: item embedding, readout from the normalised view, init."""

    def __init__(self, config: ModelConfig, item_tokens: torch.Tensor, vocab_size: int, n_out: int,
                 tree_len: int) -> None:
        super().__init__()
        self.config = config
        self.embed = ItemEmbedding(item_tokens, vocab_size, config.width, config.embedding)
        self.tree_len, self.n_out = tree_len, n_out
        self.head = nn.Linear(config.width, tree_len * n_out)  # the linear position-wise readout

    def _init_weights(self) -> None:
        for module in self.modules():
            if isinstance(module, (nn.Linear, nn.Embedding)):
                std = self.config.embed_init_std if isinstance(module, nn.Embedding) else 0.02
                nn.init.normal_(module.weight, std=std)
                if getattr(module, "bias", None) is not None:
                    nn.init.zeros_(module.bias)

    @contextmanager
    def reading(self, item_tokens: torch.Tensor) -> Iterator[None]:
        """Inside the block item ids name rows of ``item_tokens`` (I', E), not of the model's own
        table: a fresh batch's items (``tracker.fresh``). Every buffer is the model's own after it."""
        saved = dict(self.named_buffers())
        self.embed.item_tokens = item_tokens
        self.items_changed(item_tokens)
        try:
            yield
        finally:
            for name, buffer in saved.items():
                module, _, attr = name.rpartition(".")
                setattr(self.get_submodule(module), attr, buffer)

    def items_changed(self, item_tokens: torch.Tensor) -> None:
        """What the model derives from its item table (I, E), derived again for ``item_tokens``: nothing
        here; a model that parses its items at construction parses these."""

    @property
    def view_width(self) -> int:
        """Width of the view z that the readout reads and the objectives compare."""
        return self.config.width

    def readout(self, z: torch.Tensor) -> torch.Tensor:
        return self.head(z).unflatten(-1, (self.tree_len, self.n_out))  # (..., P, V_out)

    def final_view(self, items: torch.Tensor) -> torch.Tensor:
        z, _ = self.forward(items)
        last = (items != 0).sum(1) - 1  # (H,)
        return z[torch.arange(len(items), device=z.device), last]


def parsed_rows(cache: dict, parse: Callable[[list[int]], tuple], toks: torch.Tensor) -> list[tuple]:
    """Each row of the item tokens ``toks`` (N, E) parsed by ``parse``, once per distinct row for
    the life of ``cache`` (row tuple -> parse's result): the registers read a few distinct items
    over and over."""
    parsed = []
    for row in toks.tolist():
        key = tuple(row)
        if key not in cache:
            cache[key] = parse(row)
        parsed.append(cache[key])
    return parsed


class Recurrent(Tracker):
    """A tracker whose carried state keeps one shape from step to step (a slot, registers), so that
    histories of different lengths share a batch: ``tracker.inference`` batches these. Every
    tracker steps by ``initial_state``, ``read`` and ``view`` (``tracker.protocol``)."""

    def initial_state(self, n: int) -> torch.Tensor:
        """The state before any item, for n histories."""
        raise NotImplementedError

    def read(self, w: torch.Tensor, toks: torch.Tensor) -> torch.Tensor:
        """The states w (M, ...) after one more item each, given by its token ids (M, E)."""
        raise NotImplementedError

    def view(self, w: torch.Tensor) -> torch.Tensor:
        """The view (..., view_width) of states w that the readout reads."""
        raise NotImplementedError


class SlotRecurrence(Recurrent):
    """One slot w of width C. Per item, ``ticks`` times: q = LN(w), a = softmax(q K^T / sqrt(C)) V
    over the item's token embeddings, w = w + a + MLP(LN(w + a)). The view is z = LN(w)."""

    def __init__(self, config: ModelConfig, item_tokens, vocab_size, n_out, tree_len) -> None:
        super().__init__(config, item_tokens, vocab_size, n_out, tree_len)
        c = config.width
        self.w0 = nn.Parameter(torch.randn(c) * config.slot_init)
        self.key = nn.Linear(c, c, bias=False)
        self.value = nn.Linear(c, c, bias=False)
        self.ln_q = nn.LayerNorm(c)
        self.ln_mlp = nn.LayerNorm(c)
        self.mlp = MLP(c)
        self.ln_out = nn.LayerNorm(c)  # N, the readout's normalisation
        self._init_weights()

    def _keys_values(self, items: torch.Tensor):
        """K, V (U, E, C) and mask (U, E) for the distinct items, and the index of each item."""
        uniq, inverse = torch.unique(items, return_inverse=True)
        emb, mask = self.embed.tokens(uniq)
        return self.key(emb), self.value(emb), mask, inverse

    def _update(self, w, k, v, mask):
        """One item: w (H, C), k/v (H, E, C), mask (H, E) -> w (H, C)."""
        scale = 1.0 / math.sqrt(w.shape[-1])
        pad = torch.zeros(mask.shape, dtype=w.dtype, device=w.device).masked_fill_(~mask, float("-inf"))  # (H, E)
        for _ in range(self.config.ticks):
            q = self.ln_q(w)  # (H, C)
            # E is a handful of tokens: broadcast products beat bmm's per-matrix overhead here
            scores = (k * q.unsqueeze(1)).sum(-1) * scale + pad  # (H, E); padding tokens get -inf
            a = (scores.softmax(-1).unsqueeze(-1) * v).sum(1)  # (H, C)
            u = w + a
            w = u + self.mlp(self.ln_mlp(u))
        if self.config.fixed_norm:
            w = w * (math.sqrt(w.shape[-1]) / w.norm(dim=-1, keepdim=True).clamp(min=1e-6))
        return w

    def _run(self, items: torch.Tensor, keep_all: bool, raw: bool = False, noise: float = 0.0,
             generator: torch.Generator | None = None):
        """Histories are padded at the end (item 0). They are run longest first, so that at step
        t the live rows are a prefix and finished ones cost nothing; the order is undone at the end.
        ``raw`` keeps the slot w itself after every step instead of its view LN(w). ``noise`` > 0
        (training only) adds noise * N(0, I) from ``generator`` to the slot after every item: at
        a fixed norm the slot's coordinates have RMS 1, so ``noise`` is relative to the slot."""
        k_all, v_all, m_all, inverse = self._keys_values(items)
        lengths = (items != 0).sum(1)  # (H,)
        order = torch.argsort(lengths, descending=True, stable=True)
        undo = torch.argsort(order)
        inverse, lengths = inverse[order], lengths[order]
        # token columns read at step t: up to the last real token of any item at step t (a start
        # tree 7, an event at most 1 + its depth); the columns after it are padding in every row,
        # masked to weight 0 exactly, so they are dropped rather than carried through every tick.
        # The last real column, not the count of real tokens: an item whose real tokens are not
        # contiguous (a padded tree followed by more tokens) keeps its last ones.
        columns = torch.arange(1, m_all.shape[1] + 1, device=m_all.device)  # (E,) 1-based column numbers
        reach = (m_all * columns).amax(1)  # (U,) one past each distinct item's last real column
        used = reach[inverse].amax(0).tolist() if len(lengths) else []  # (T,)
        w = self.w0.expand(items.shape[0], -1)
        views = []
        for t in range(int(lengths[0]) if len(lengths) else 0):
            live = int((lengths > t).sum())
            idx, e = inverse[:live, t], max(1, used[t])
            new = self._update(w[:live], k_all[:, :e][idx], v_all[:, :e][idx], m_all[:, :e][idx])
            if noise > 0:
                drawn = torch.randn(new.shape, generator=generator, dtype=new.dtype, device=new.device)  # (live, C)
                new = new + noise * drawn
            w = torch.cat([new, w[live:]]) if live < len(w) else new
            if keep_all:
                views.append(w if raw else self.ln_out(w))
        if keep_all and len(views) < items.shape[1]:
            views += [views[-1]] * (items.shape[1] - len(views))
        return views, w[undo], undo

    def forward(self, items: torch.Tensor, noise: float = 0.0, generator: torch.Generator | None = None):
        views, w, undo = self._run(items, keep_all=True, noise=noise, generator=generator)
        return torch.stack(views, 1)[undo], w  # (H, T, C), (H, C)

    def final_view(self, items: torch.Tensor) -> torch.Tensor:
        _, w, _ = self._run(items, keep_all=False)
        return self.ln_out(w)

    def end_slot(self, items: torch.Tensor) -> torch.Tensor:
        """The slot w (H, C) itself after each history's last item (its norm is free unless fixed_norm)."""
        return self._run(items, keep_all=False)[1]

    def slots(self, items: torch.Tensor) -> torch.Tensor:
        """The slot w (H, T, C) after every step, for callers that read on from any step (the
        oracle's probe read); ``view`` of it is ``forward``'s z."""
        views, _, undo = self._run(items, keep_all=True, raw=True)
        return torch.stack(views, 1)[undo]

    def advance(self, state: torch.Tensor, rows: torch.Tensor, items: torch.Tensor) -> torch.Tensor:
        k, v, mask, inverse = self._keys_values(items)
        return self.ln_out(self._update(state[rows], k[inverse], v[inverse], mask[inverse]))

    # The slot as a state machine, for callers that hold states themselves (the prover's imagination).
    def initial_state(self, n: int) -> torch.Tensor:
        """The slot before any item, for n histories: (n, C)."""
        return self.w0.expand(n, -1)

    def read(self, w: torch.Tensor, toks: torch.Tensor) -> torch.Tensor:
        """The slots w (M, C) after one more item each, given by its token ids (M, E) -> (M, C)."""
        emb, mask = self.embed.token_rows(toks)
        return self._update(w, self.key(emb), self.value(emb), mask)

    def view(self, w: torch.Tensor) -> torch.Tensor:
        """The normalised view LN(w) (..., C) that the readout reads."""
        return self.ln_out(w)


def sinusoid(length: int, width: int, device=None) -> torch.Tensor:
    """Fixed sinusoidal positions (T, C): defined at every length, unlike learned ones."""
    pos = torch.arange(length, device=device, dtype=torch.float32)[:, None]
    freq = torch.exp(torch.arange(0, width, 2, device=device, dtype=torch.float32) * (-math.log(10000.0) / width))
    out = torch.zeros(length, width, device=device)
    out[:, 0::2] = torch.sin(pos * freq)
    out[:, 1::2] = torch.cos(pos * freq)
    return out


class Block(nn.Module):
    """A pre-LN causal transformer block."""

    def __init__(self, width: int, heads: int) -> None:
        super().__init__()
        self.heads = heads
        self.ln1, self.ln2 = nn.LayerNorm(width), nn.LayerNorm(width)
        self.qkv = nn.Linear(width, 3 * width)
        self.proj = nn.Linear(width, width)
        self.mlp = MLP(width)

    def forward(self, x: torch.Tensor, dropout: float = 0.0, generator: torch.Generator | None = None) -> torch.Tensor:
        b, t, c = x.shape
        q, k, v = self.qkv(self.ln1(x)).split(c, dim=-1)
        q, k, v = (y.view(b, t, self.heads, c // self.heads).transpose(1, 2) for y in (q, k, v))  # (B, h, T, c/h)
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True).transpose(1, 2).reshape(b, t, c)
        x = x + dropped(self.proj(y), dropout, generator)
        return x + dropped(self.mlp(self.ln2(x)), dropout, generator)


def dropped(x: torch.Tensor, p: float, generator: torch.Generator | None) -> torch.Tensor:
    """Inverted dropout at rate ``p`` with masks from ``generator`` (training only: the step's
    generator, so a resumed run draws the same masks); ``x`` itself when p is 0."""
    if p <= 0:
        return x
    keep = torch.rand(x.shape, generator=generator, dtype=x.dtype, device=x.device) >= p
    return x * keep / (1 - p)


class EventTransformer(Tracker):
    """A causal transformer over events, each event its pooled token embeddings, plus fixed
    sinusoidal positions. The state of a history is its embedded items."""

    def __init__(self, config: ModelConfig, item_tokens, vocab_size, n_out, tree_len) -> None:
        super().__init__(config, item_tokens, vocab_size, n_out, tree_len)
        self.blocks = nn.ModuleList(Block(config.width, config.heads) for _ in range(config.layers))
        self.ln_out = nn.LayerNorm(config.width)
        self._init_weights()

    def _views(self, x: torch.Tensor, dropout: float = 0.0, generator: torch.Generator | None = None) -> torch.Tensor:
        x = x + sinusoid(x.shape[1], x.shape[2], x.device)
        for block in self.blocks:
            x = block(x, dropout, generator)
        return self.ln_out(x)

    def forward(self, items: torch.Tensor, dropout: float = 0.0, generator: torch.Generator | None = None):
        """``dropout`` > 0 (training only) drops the blocks' residual branches with masks from ``generator``."""
        x = self.embed.pooled(items)  # (H, T, C)
        return self._views(x, dropout, generator), (x, (items != 0).sum(1))

    def final_view(self, items: torch.Tensor, chunk: int = 64) -> torch.Tensor:
        out = []
        for part in items.split(chunk):
            z, _ = self.forward(part)
            out.append(z[torch.arange(len(part), device=z.device), (part != 0).sum(1) - 1])
        return torch.cat(out)

    def advance(self, state, rows: torch.Tensor, items: torch.Tensor) -> torch.Tensor:
        x, lengths = state
        x = torch.cat([x[rows], torch.zeros_like(x[rows, :1])], 1)  # (M, T+1, C)
        at = lengths[rows]
        r = torch.arange(len(rows), device=x.device)
        x = x.index_put((r, at), self.embed.pooled(items))
        return self._views(x)[r, at]

    # the stepping of tracker.protocol: the state is the history so far, its items pooled
    def initial_state(self, n: int) -> torch.Tensor:
        """No item read yet: (n, 0, C), a history that grows by one row per item."""
        return self.head.weight.new_zeros(n, 0, self.config.width)

    def read(self, state: torch.Tensor, toks: torch.Tensor) -> torch.Tensor:
        """The histories (M, T, C) with one more item each, given by its token ids (M, E) -> (M, T + 1, C)."""
        return torch.cat([state, self.embed.pooled_rows(toks).unsqueeze(1)], 1)

    def view(self, state: torch.Tensor) -> torch.Tensor:
        """The blocks over each whole history (M, T, C); the view of its last item (M, C)."""
        return self._views(state)[:, -1]


class DeltaProduct(Tracker):
    """DeltaProduct [Siems et al. 2025]: per block a matrix state S (heads, d, d) updated per event by
    ``householders`` generalised Householder steps S <- (I - beta k k^T) S + beta k v^T, beta in
    (0, 2) so that negative eigenvalues are allowed; the block reads o = S^T q. Two blocks, each
    with a residual MLP; the view is LN of the residual stream."""

    def __init__(self, config: ModelConfig, item_tokens, vocab_size, n_out, tree_len) -> None:
        super().__init__(config, item_tokens, vocab_size, n_out, tree_len)
        c, n = config.width, config.householders
        self.ln1 = nn.ModuleList(nn.LayerNorm(c) for _ in range(config.blocks))
        self.ln2 = nn.ModuleList(nn.LayerNorm(c) for _ in range(config.blocks))
        self.q = nn.ModuleList(nn.Linear(c, c, bias=False) for _ in range(config.blocks))
        self.k = nn.ModuleList(nn.Linear(c, n * c, bias=False) for _ in range(config.blocks))
        self.v = nn.ModuleList(nn.Linear(c, n * c, bias=False) for _ in range(config.blocks))
        self.beta = nn.ModuleList(nn.Linear(c, n * config.heads) for _ in range(config.blocks))
        self.proj = nn.ModuleList(nn.Linear(c, c) for _ in range(config.blocks))
        self.mlp = nn.ModuleList(MLP(c) for _ in range(config.blocks))
        self.ln_out = nn.LayerNorm(c)
        self._init_weights()

    def _init_state(self, rows: int, device) -> list[torch.Tensor]:
        h, d = self.config.heads, self.config.width // self.config.heads
        return [torch.zeros(rows, h, d, d, device=device) for _ in range(self.config.blocks)]

    def _step(self, states: list[torch.Tensor], x: torch.Tensor, active: torch.Tensor):
        """x (H, C) pooled item -> (new states, view (H, C))."""
        hb, c = x.shape
        h, n = self.config.heads, self.config.householders
        d = c // h
        out = []
        for b, s in enumerate(states):
            y = self.ln1[b](x)
            k = F.normalize(self.k[b](y).view(hb, n, h, d), dim=-1)  # (H, n, heads, d)
            v = self.v[b](y).view(hb, n, h, d)
            beta = 2 * torch.sigmoid(self.beta[b](y)).view(hb, n, h, 1, 1)  # in (0, 2)
            new = s
            for j in range(n):
                kj, vj = k[:, j], v[:, j]  # (H, heads, d)
                ks = torch.einsum("bhd,bhde->bhe", kj, new)  # k^T S
                new = new - beta[:, j] * kj.unsqueeze(-1) * (ks - vj).unsqueeze(-2)
            new = torch.where(active[:, None, None, None], new, s)
            out.append(new)
            q = F.normalize(self.q[b](y).view(hb, h, d), dim=-1)
            o = torch.einsum("bhde,bhd->bhe", new, q).reshape(hb, c)
            x = x + self.proj[b](o)
            x = x + self.mlp[b](self.ln2[b](x))
        return out, self.ln_out(x)

    def _run(self, items: torch.Tensor, keep_all: bool):
        states = self._init_state(items.shape[0], items.device)
        x_all = self.embed.pooled(items)  # (H, T, C)
        views, last = [], None
        for t in range(items.shape[1]):
            active = items[:, t] != 0
            states, z = self._step(states, x_all[:, t], active)
            last = z if last is None else torch.where(active[:, None], z, last)
            if keep_all:
                views.append(last)
        return views, states, last

    def forward(self, items: torch.Tensor):
        views, states, _ = self._run(items, keep_all=True)
        return torch.stack(views, 1), states

    def final_view(self, items: torch.Tensor) -> torch.Tensor:
        return self._run(items, keep_all=False)[2]

    def advance(self, state, rows: torch.Tensor, items: torch.Tensor) -> torch.Tensor:
        states = [s[rows] for s in state]
        return self._step(states, self.embed.pooled(items), torch.ones_like(items, dtype=torch.bool))[1]

    # the stepping of tracker.protocol: the state is every block's matrix state (heads, d, d) and the
    # last view (C,), flattened into one row (blocks * heads * d * d + C) per history
    def initial_state(self, n: int) -> torch.Tensor:
        """Zero matrix states and a zero view, (n, blocks * heads * d * d + C)."""
        c, h = self.config.width, self.config.heads
        return self.head.weight.new_zeros(n, self.config.blocks * h * (c // h) ** 2 + c)

    def _blocks(self, state: torch.Tensor) -> list[torch.Tensor]:
        """A flat state (M, D) -> each block's matrix state (M, heads, d, d), contiguous."""
        h, d = self.config.heads, self.config.width // self.config.heads
        size = h * d * d
        return [state[:, b * size:(b + 1) * size].reshape(-1, h, d, d).contiguous() for b in range(self.config.blocks)]

    def read(self, state: torch.Tensor, toks: torch.Tensor) -> torch.Tensor:
        """The flat states (M, D) after one more item each, given by its token ids (M, E)."""
        active = torch.ones(len(toks), dtype=torch.bool, device=toks.device)
        new, view = self._step(self._blocks(state), self.embed.pooled_rows(toks), active)
        return torch.cat([*(b.flatten(1) for b in new), view], 1)

    def view(self, state: torch.Tensor) -> torch.Tensor:
        """The last view (..., C), kept at the end of the flat states (..., D)."""
        return state[..., -self.config.width:]
