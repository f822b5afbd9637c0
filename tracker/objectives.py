"""The Nerode objectives of sections 43-47, as functions of the trackers' normalised views.

- ``centred_cosine_distance``: d(z_u, z_v) = 1 - cos(z_u - mean z_u, z_v - mean z_v). It factors
  through the readout's LayerNorm (blind to a common shift of every coordinate and to scale).
- ``invariance``: mean d over sampled pairs (the caller multiplies by mu and the schedule).
- ``nextlat``: predict z_{t+1} from z_t and item t+1 with a small head; target under stop-gradient.
- ``metric``: the Nerode metric loss of section 47,
  [d_N(h(u), h(v)) - (1 - gamma) ||o(u) - o(v)||_TV - gamma sg d_N(h(ux), h(vx))]^2, d_N = d / 2.
- ``schedule``: the weight of a term at a step: zero for the first ``delay`` of training, then a
  linear ramp over ``ramp`` of training to full weight.
- ``TermsConfig``: the terms' weights and schedules, and the optimiser's settings beneath them
  (``tracker.loop.OptimConfig``): what the tracker's ``TrainConfig`` and the oracle's
  ``OracleConfig`` share.
"""
from __future__ import annotations

from dataclasses import dataclass

import torch
import torch.nn as nn
import torch.nn.functional as F

from tracker.loop import OptimConfig

OBJECTIVES = ("plain", "invariance", "nextlat", "metric", "combo", "nerode", "control")


def centred_cosine_distance(a: torch.Tensor, b: torch.Tensor, eps: float = 1e-8) -> torch.Tensor:
    """(..., C), (..., C) -> (...): 1 - cos between the two vectors after removing each one's mean."""
    a = a - a.mean(-1, keepdim=True)
    b = b - b.mean(-1, keepdim=True)
    return 1 - F.cosine_similarity(a, b, dim=-1, eps=eps)


def invariance(za: torch.Tensor, zb: torch.Tensor, weight: torch.Tensor | None = None) -> torch.Tensor:
    """Mean centred-cosine distance over pairs za[i] ~ zb[i] (M, C); ``weight`` (M,) masks pairs."""
    d = centred_cosine_distance(za, zb)
    if weight is None:
        return d.mean()
    return (d * weight).sum() / weight.sum().clamp(min=1)


def schedule(step: int, total: int, delay: float, ramp: float) -> float:
    """The weight multiplier at ``step`` of ``total``: 0 before delay*total, then linear to 1
    over ramp*total steps, then 1."""
    start, length = delay * total, ramp * total
    if step < start:
        return 0.0
    if length <= 0:
        return 1.0
    return min(1.0, (step - start + 1) / length)


@dataclass(frozen=True)
class TermsConfig(OptimConfig):
    """The Nerode terms' weights and when they act, on top of the optimiser's settings. The
    metric loss is the tracker's (section 47, on chain pairs) or the oracle's (``oracle.nerode``,
    on pairs of probed states); both take the same weight, schedule and discount."""

    mu: float = 1.0  # invariance (and control) weight: the seed's mu = 1
    invariance_delay: float = 0.2  # fraction of steps with the invariance term held at 0 (2,400 of 12,000)
    invariance_ramp: float = 0.1  # fraction of steps over which it then ramps linearly to mu
    nextlat_weight: float = 1.0  # NextLat weight
    nextlat_delay: float = 0.0  # fraction of steps with NextLat held at 0
    nextlat_ramp: float = 0.0  # fraction of steps of its linear ramp
    metric_weight: float = 1.0  # metric-loss weight
    metric_delay: float = 0.2  # fraction of steps with the metric loss held at 0
    metric_ramp: float = 0.1  # fraction of steps of its linear ramp
    gamma: float = 0.9  # metric loss discount (section 47)

    def __post_init__(self) -> None:
        if not 0 < self.gamma < 1:
            raise ValueError(f"gamma must lie in (0, 1), got {self.gamma}")
        super().__post_init__()

    def weight(self, term: str, step: int) -> float:
        """The weight of ``term`` (invariance, control, nextlat or metric) at ``step``: its full
        weight times ``schedule``; past the last step (an extended run), its weight at the last step."""
        full, delay, ramp = {"invariance": (self.mu, self.invariance_delay, self.invariance_ramp),
                             "control": (self.mu, self.invariance_delay, self.invariance_ramp),
                             "nextlat": (self.nextlat_weight, self.nextlat_delay, self.nextlat_ramp),
                             "metric": (self.metric_weight, self.metric_delay, self.metric_ramp)}[term]
        return full * schedule(min(step, self.steps - 1), self.steps, delay, ramp)


class NextLatHead(nn.Module):
    """g(z_t, e_{t+1}) -> predicted z_{t+1}: a residual MLP over the view (``width``) and the next
    item's pooled embedding (``event_width``, by default the view's)."""

    def __init__(self, width: int, event_width: int | None = None, hidden: int = 256) -> None:
        super().__init__()
        event_width = width if event_width is None else event_width
        self.net = nn.Sequential(nn.Linear(width + event_width, hidden), nn.GELU(), nn.Linear(hidden, width))

    def forward(self, z: torch.Tensor, event: torch.Tensor) -> torch.Tensor:
        return z + self.net(torch.cat([z, event], -1))


def nextlat(head: NextLatHead, z: torch.Tensor, events: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """z (H, T, C) views, events (H, T, C) pooled item embeddings, mask (H, T) real steps.
    Mean squared error of the prediction of z_{t+1} (stop-gradient) over real transitions."""
    pred = head(z[:, :-1], events[:, 1:])  # (H, T-1, C)
    target = z[:, 1:].detach()
    err = (pred - target).pow(2).mean(-1)  # (H, T-1)
    m = mask[:, 1:].to(err.dtype)
    return (err * m).sum() / m.sum().clamp(min=1)


def output_tv(trees_u: torch.Tensor, trees_v: torch.Tensor, pad: int = 0) -> torch.Tensor:
    """||o(u) - o(v)||_TV for deterministic outputs: the output after a history is its tree,
    a distribution per position (one-hot); the distance is the mean over positions of the
    per-position total variation, i.e. the fraction of positions whose token differs.
    trees_* (M, P) token ids -> (M,)."""
    return (trees_u != trees_v).float().mean(-1)


def metric(zu: torch.Tensor, zv: torch.Tensor, tv: torch.Tensor, zux: torch.Tensor | None,
           zvx: torch.Tensor | None, has_next: torch.Tensor | None, gamma: float) -> torch.Tensor:
    """The Nerode metric loss over M pairs: zu, zv (M, C) views; tv (M,) output distance;
    zux, zvx (M, C) views after one common next event (None, or where has_next is False,
    the successor term falls back to sg d_N(h(u), h(v)), so the fixed point there is d = TV).
    Certified equivalent pairs are passed with tv = 0 and successor distance 0 (target 0)."""
    d = centred_cosine_distance(zu, zv) / 2
    if zux is None:
        succ = torch.zeros_like(d)
    else:
        succ = torch.where(has_next, centred_cosine_distance(zux, zvx) / 2, d).detach()
    target = (1 - gamma) * tv + gamma * succ
    return (d - target).pow(2).mean()
