"""The verdict head and the oracle's arms, built on the tracker's models.

Every arm turns a chain into a *reader* r_t (one vector of width C per probe step t) and
scores each probe pi tried there from it:

- ``recurrence``: the slot recurrence reads the start tree once, then one gold event per step;
  r_t = z_t = LN(w_t), the readout's view after t events.
- ``transformer``: the tracker's causal transformer over the same items (depth 4, equal
  per-event compute); r_t = its view at step t.
- ``blind``: r_t is one learned vector, the same for every chain and step: the arm sees only
  the probe.
- ``truth``: the upper bound, handed the true tree: r_t = LN(w) after the recurrence reads
  T_t from its initial slot, as if it were a start.
- ``probe-slot``: the seed's failed configuration, kept as a control: r_t = w_t, the raw slot;
  the slot reads the probe as one more item and a linear head reads LN of the result.

All but the control score with the bilinear head,
logits_v = z^T B_v e_pi + a_v . e_pi + b_v, linear in the state for each probe, with e_pi
the probe's encoding (its own position-bound token embedding and an MLP).

Complete by comparison (the arms with a slot: ``COMPARING``): the slot tracks the tree only,
so whether an accepted probe completes the proof is read as a comparison of two states in the
readout's view: the imagined successor LN(f(w_t, pi)) (the recurrence's own transition f on
the slot and the probe event) against the goal read as a start, LN(f(w_0, goal)), by centred
cosine distance; below a threshold chosen on validation chains it is *complete*.
"""
from __future__ import annotations

from dataclasses import dataclass

import torch
import torch.nn as nn

from tracker.build import build_model
from tracker.models import ModelConfig, SlotRecurrence, Tracker
from tracker.losses import centred_cosine_distance

ARCHS = ("recurrence", "transformer", "blind", "truth", "probe-slot")
STATEFUL = ("recurrence", "transformer", "probe-slot")  # arms that carry a state along the chain
COMPARING = ("recurrence", "truth", "probe-slot")  # arms with a slot transition: complete by comparison
TERMED = STATEFUL + ("truth",)  # arms whose recurrence the Nerode terms can act on (truth: on the histories)


@dataclass(frozen=True)
class OracleModelConfig:
    arch: str = "recurrence"  # one of ARCHS
    width: int = 128  # C: the slot's width (the transformer's residual width)
    probe_width: int = 64  # D: width of the probe encoding e_pi
    fixed_norm: bool = True  # recurrence: rescale the slot to a fixed norm after every event (no clock in its norm)
    embedding: str = "bound"  # items and probes: "bound" (rewrite chains) or "factored" (Lean text); tracker.models

    @property
    def tracker(self) -> ModelConfig | None:
        """The tracker the arm is built on (None for the blind arm)."""
        if self.arch == "blind":
            return None
        return ModelConfig(arch="transformer" if self.arch == "transformer" else "recurrence", width=self.width,
                           fixed_norm=self.fixed_norm, embedding=self.embedding)


class ProbeEncoder(nn.Module):
    """A probe (a rewrite event: rule token, then one token per path bit; or a tactic's tokens),
    0-padded to Ep -> e_pi (D,): token embeddings bound to their position (padding marks where
    the probe ends), concatenated, then an MLP. ``factored``: a token row plus a position row in
    place of one row per (position, token), for Lean text's large vocabulary."""

    def __init__(self, probe_len: int, vocab_size: int, width: int, factored: bool = False) -> None:
        super().__init__()
        self.probe_len, self.vocab_size, self.factored = probe_len, vocab_size, factored
        self.table = nn.Embedding(vocab_size if factored else probe_len * vocab_size, width)
        self.mlp = nn.Sequential(nn.Linear(probe_len * width, 2 * width), nn.GELU(), nn.Linear(2 * width, width))
        if factored:
            self.position = nn.Embedding(probe_len, width)

    def forward(self, toks: torch.Tensor) -> torch.Tensor:
        """token rows (..., Ep) -> (..., D); each distinct probe is encoded once."""
        uniq, inverse = torch.unique(toks.reshape(-1, toks.shape[-1]), dim=0, return_inverse=True)  # (U, Ep)
        if self.factored:
            emb = self.table(uniq) + self.position.weight[: uniq.shape[1]]  # (U, Ep, D)
        else:
            emb = self.table(uniq + torch.arange(uniq.shape[1], device=uniq.device) * self.vocab_size)
        e = self.mlp(emb.flatten(1))  # (U, D)
        return e[inverse].view(*toks.shape[:-1], -1)


class VerdictHead(nn.Module):
    """logits_v = z^T B_v e + a_v . e + b_v: for each probe, a linear map of the state z."""

    def __init__(self, width: int, probe_width: int, n_verdicts: int) -> None:
        super().__init__()
        self.n_verdicts, self.probe_width = n_verdicts, probe_width
        self.bilinear = nn.Linear(width, n_verdicts * probe_width, bias=False)  # B, as (C -> V * D)
        self.prior = nn.Linear(probe_width, n_verdicts)  # a and b: what the probe alone says

    def forward(self, z: torch.Tensor, e: torch.Tensor) -> torch.Tensor:
        """z (..., C), e (..., P, D) -> logits (..., P, V). B z is computed once per state, not
        once per probe: C V D multiply-adds per state, then V D per probe."""
        zb = self.bilinear(z).unflatten(-1, (self.n_verdicts, self.probe_width))  # (..., V, D)
        return torch.einsum("...vd,...pd->...pv", zb, e) + self.prior(e)


class Oracle(nn.Module):
    """One arm: ``reader(items, truth_items)`` -> (r (B, S, C), z (H, T, C) or None) and
    ``score(r, probes)`` -> logits. ``z`` is the tracker's view after every item of every
    history (chains, then partners), on which NextLat and the invariance term act.
    ``tree_shape`` (output tokens, tree positions): the tracker's tree readout, for training's
    auxiliary tree term only; None builds none."""

    def __init__(self, config: OracleModelConfig, item_tokens: torch.Tensor, probe_tokens: torch.Tensor,
                 vocab_size: int, n_verdicts: int, tree_shape: tuple[int, int] | None = None) -> None:
        super().__init__()
        if config.arch not in ARCHS:
            raise ValueError(f"unknown oracle arch {config.arch!r}; choose one of {', '.join(ARCHS)}")
        self.config = config
        c = config.width
        self.tracker: Tracker | None = None
        if config.tracker is not None:
            # the tree readout (output tokens, tree positions) serves only the training's auxiliary tree
            # term (``tree_shape``); without it the verdicts are the only primary loss (n_out = tree_len = 1)
            n_out, tree_len = tree_shape or (1, 1)
            self.tracker = build_model(config.tracker, item_tokens, vocab_size, n_out=n_out, tree_len=tree_len,
                                       domain="rewrite")
        self.register_buffer("probe_tokens", probe_tokens.clone(), persistent=True)  # (Q, Ep) the dataset's probes
        if config.arch == "probe-slot":
            self.linear = nn.Linear(c, n_verdicts)
        else:
            self.encoder = ProbeEncoder(probe_tokens.shape[1], vocab_size, config.probe_width,
                                        factored=config.embedding == "factored")
            self.head = VerdictHead(c, config.probe_width, n_verdicts)
        if config.arch == "blind":
            self.constant = nn.Parameter(torch.zeros(c))
        for module in self.modules():  # the tracker initialised itself; the heads likewise
            if isinstance(module, (nn.Linear, nn.Embedding)) and not _inside(module, self.tracker):
                nn.init.normal_(module.weight, std=0.02)
                if getattr(module, "bias", None) is not None:
                    nn.init.zeros_(module.bias)

    @property
    def recurrence(self) -> SlotRecurrence:
        assert isinstance(self.tracker, SlotRecurrence)
        return self.tracker

    def reader(self, items: torch.Tensor, truth_items: torch.Tensor | None = None
               ) -> tuple[torch.Tensor, torch.Tensor | None]:
        """items (H, T) histories whose first B = truth_items.shape[0] rows are the probed chains
        (B = H when truth_items is None); returns r (B, S, C) for steps t = 0..S-1, S = T - 1,
        and the views z (H, T, C) (None for the arms without a carried state)."""
        r, z, _ = self.states(items, truth_items)
        return r, z

    def states(self, items: torch.Tensor, truth_items: torch.Tensor | None = None, terms: bool = False
               ) -> tuple[torch.Tensor, torch.Tensor | None, torch.Tensor | None]:
        """``reader``'s (r, z) and the raw slot w (B, S, C) at every probe step, from which the
        imagined successors are made (None for the arms without a slot transition). ``terms``:
        the truth arm also runs the histories, for the Nerode terms to act on its recurrence."""
        arch = self.config.arch
        b = items.shape[0] if truth_items is None else truth_items.shape[0]
        steps = items.shape[1] - 1
        if arch == "transformer":
            z, _ = self.tracker(items)
            return z[:b, :steps], z, None
        if arch in ("recurrence", "probe-slot"):
            w = self.recurrence.slots(items)  # (H, T, C)
            z = self.recurrence.view(w)
            return (w if arch == "probe-slot" else z)[:b, :steps], z, w[:b, :steps]
        if arch == "blind":
            return self.constant.expand(b, steps, -1), None, None
        # truth: read each distinct true tree once from the initial slot (item 0 pads)
        uniq, inverse = torch.unique(truth_items, return_inverse=True)
        model = self.recurrence
        w = torch.zeros(len(uniq), self.config.width, device=uniq.device)  # (U, C)
        real = uniq != 0
        w[real] = model.read(model.initial_state(int(real.sum())), model.embed.item_tokens[uniq[real]])
        z = self.recurrence.view(model.slots(items)) if terms else None
        return model.view(w)[inverse], z, w[inverse]

    @property
    def compares(self) -> bool:
        """Whether this arm decides *complete* by comparison (it has a slot transition)."""
        return self.config.arch in COMPARING

    def goal_view(self, goal_items: torch.Tensor) -> torch.Tensor:
        """goal_items (...,) -> LN(f(w_0, goal)) (..., C): the goal read as a start."""
        model = self.recurrence
        flat = goal_items.reshape(-1)
        w = model.read(model.initial_state(len(flat)), model.embed.item_tokens[flat])
        return model.view(w).view(*goal_items.shape, -1)

    def imagined(self, w: torch.Tensor, toks: torch.Tensor) -> torch.Tensor:
        """w (..., C) slots, probes as token rows (..., P, Ep) -> the imagined successors'
        views LN(f(w, pi)) (..., P, C); a padding probe (no tokens) leaves the slot as it is."""
        model = self.recurrence
        flat = toks.reshape(-1, toks.shape[-1])  # (M, Ep)
        ws = w.unsqueeze(-2).expand(*toks.shape[:-1], w.shape[-1]).reshape(-1, w.shape[-1])  # (M, C)
        real = flat[:, 0] != 0
        out = ws.clone()
        out[real] = model.read(ws[real], flat[real])
        return model.view(out).view(*toks.shape[:-1], -1)

    def goal_distance(self, w: torch.Tensor, probes: torch.Tensor, goal: torch.Tensor) -> torch.Tensor:
        """w (..., C) slots, probes (..., P) ids, goal (..., C) the goal's view -> centred cosine
        distance (..., P) between each imagined successor and the goal."""
        succ = self.imagined(w, self.probe_tokens[probes])  # (..., P, C)
        return centred_cosine_distance(succ, goal.unsqueeze(-2).expand_as(succ))

    def score(self, r: torch.Tensor, probes: torch.Tensor) -> torch.Tensor:
        """r (..., C), probes (..., P) ids in the dataset's probe table -> logits (..., P, V)."""
        return self.score_tokens(r, self.probe_tokens[probes])

    def score_tokens(self, r: torch.Tensor, toks: torch.Tensor) -> torch.Tensor:
        """r (..., C), probes given by their token rows (..., P, Ep), any event of the domain whose
        path fits Ep - 1 bits -> logits (..., P, V)."""
        if self.config.arch != "probe-slot":
            return self.head(r, self.encoder(toks))
        # the control: the slot reads the probe as one more item, a linear head reads LN of it;
        # padding probes (no tokens to attend to) are not read and score 0
        model = self.recurrence
        w = r.unsqueeze(-2).expand(*toks.shape[:-1], r.shape[-1]).reshape(-1, r.shape[-1])  # (M, C)
        flat = toks.reshape(-1, toks.shape[-1])  # (M, Ep)
        real = flat[:, 0] != 0
        logits = torch.zeros(len(flat), self.linear.out_features, dtype=r.dtype, device=r.device)  # (M, V)
        logits[real] = self.linear(model.view(model.read(w[real], flat[real])))
        return logits.view(*toks.shape[:-1], -1)

    def forward(self, items: torch.Tensor, probes: torch.Tensor, truth_items: torch.Tensor
                ) -> tuple[torch.Tensor, torch.Tensor | None]:
        """Training: logits (B, S, P, V) for the probes of the first B histories, and z."""
        r, z = self.reader(items, truth_items)
        return self.score(r, probes), z


def _inside(module: nn.Module, tracker: nn.Module | None) -> bool:
    return tracker is not None and any(module is m for m in tracker.modules())
