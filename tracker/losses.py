"""The tracker's losses: the cross-entropy on the tree after every event and the Nerode terms, as
functions of the trackers' normalised views (the oracle's own are ``oracle.losses``).

- ``centred_cosine_distance``: d(z_u, z_v) = 1 - cos(z_u - mean z_u, z_v - mean z_v). It factors
  through the readout's LayerNorm (blind to a common shift of every coordinate and to scale).
- ``rms_distance``: sqrt(mean (a - b)^2) on raw slots, the seed's first form of the term
  (``TrainConfig.invariance_distance``: rms), which a common shift of every coordinate pays.
- ``invariance``: mean d over sampled pairs (the caller multiplies by mu and the schedule).
- ``nextlat``: predict z_{t+1} from z_t and item t+1 with a small head; target under stop-gradient.
- ``metric``: the Nerode metric loss,
  [d_N(h(u), h(v)) - (1 - gamma) ||o(u) - o(v)||_TV - gamma sg d_N(h(ux), h(vx))]^2, d_N = d / 2.
- ``self_distill``: Nerode self-distillation over certified pairs: the readout after the
  longer history u (the student) pulled to the readout after its certified short equivalent v (the
  teacher, under stop-gradient), mean KL(p_teacher || p_student) over pairs and readout positions;
  ``distill_pairs`` takes it at a batch's chain ends and after one common next event w. No tree
  label enters it: only the certificate that u and v are equivalent and the teacher's predictions.
- ``sharpness`` (registers only): the mean entropy of the tables' moves (``RegisterTracker.table_entropy``),
  weighted by ``table_sharpness``, so that a straight-through move keeps widening its margin once right.
- ``moves`` (registers, hard moves): the cross-entropy on the moves read as softmax mixtures of their
  sources before the update, weighted by ``move_readout``: a table's choice keeps a gradient toward
  the right source after its top one is right.
- ``tracker_losses``: one training step's terms for the objective a ``TrainConfig`` names, each at
  its weight of the step (``tracker.config.TermsConfig.weight``).
"""
from __future__ import annotations

import torch
import torch.nn as nn
import torch.nn.functional as F

from tracker.config import TrainConfig
from tracker.data import Batch, TrackerData, common_successor
from tracker.models import Tracker


def centred_cosine_distance(a: torch.Tensor, b: torch.Tensor, eps: float = 1e-8) -> torch.Tensor:
    """(..., C), (..., C) -> (...): 1 - cos between the two vectors after removing each one's mean."""
    a = a - a.mean(-1, keepdim=True)
    b = b - b.mean(-1, keepdim=True)
    return 1 - F.cosine_similarity(a, b, dim=-1, eps=eps)


def rms_distance(a: torch.Tensor, b: torch.Tensor, eps: float = 1e-12) -> torch.Tensor:
    """(..., C), (..., C) -> (...): the root-mean-square distance sqrt(mean_c (a_c - b_c)^2), on raw
    slots (``eps`` under the root keeps its gradient finite where a = b). Not factoring through the
    LayerNorm, it is paid by a common shift of every coordinate (the seed paper's first form of the term)."""
    return ((a - b).pow(2).mean(-1) + eps).sqrt()


DISTANCES = {"cosine": centred_cosine_distance, "rms": rms_distance}  # TrainConfig.invariance_distance


def invariance(za: torch.Tensor, zb: torch.Tensor, weight: torch.Tensor | None = None,
               distance=centred_cosine_distance) -> torch.Tensor:
    """Mean ``distance`` (the centred cosine unless told) over pairs za[i] ~ zb[i] (M, C); ``weight``
    (M,) masks pairs."""
    d = distance(za, zb)
    if weight is None:
        return d.mean()
    return (d * weight).sum() / weight.sum().clamp(min=1)


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


def self_distill(model: Tracker, student: torch.Tensor, teacher: torch.Tensor,
                 weight: torch.Tensor | None = None) -> torch.Tensor:
    """Mean KL(p_teacher || p_student) over M pairs and the readout's P positions, p the softmax of
    ``model.readout`` per position; student, teacher (M, C) views, the teacher under stop-gradient
    (neither its view nor the readout's weights get a gradient through it); ``weight`` (M,) masks
    pairs. Every position counts, PAD included, as in the cross-entropy on every position."""
    log_s = model.readout(student).log_softmax(-1)  # (M, P, V)
    with torch.no_grad():
        log_t = model.readout(teacher.detach()).log_softmax(-1)  # (M, P, V)
    kl = (log_t.exp() * (log_t - log_s)).sum(-1).mean(-1)  # (M,)
    if weight is None:
        return kl.mean()
    return (kl * weight).sum() / weight.sum().clamp(min=1)


def distill_pairs(model: Tracker, data: TrackerData, state: object, chain_end: torch.Tensor,
                  partner_end: torch.Tensor, ends: torch.Tensor, generator: torch.Generator) -> torch.Tensor:
    """``self_distill`` on a batch's B chains (students u) and their K certified partners (teachers
    v): chain_end (B, C), partner_end (B, K, C), ``state`` the model's after every history, ``ends``
    (H,) its end trees. Taken at the ends and after one common next event w of each pair (drawn
    with ``generator``), the pairs without one masked out there."""
    b, k, c = partner_end.shape
    u = torch.arange(b, device=chain_end.device).repeat_interleave(k)  # (B K,) the chains' rows
    v = b + torch.arange(b * k, device=chain_end.device)  # (B K,) their partners' rows
    item, _, _, found = common_successor(data, ends[u], ends[v], generator)
    item = torch.where(found, item, data.tree_items[0])  # any real item; masked out where not found
    student = torch.cat([chain_end[u], model.advance(state, u, item)])  # (2 B K, C)
    with torch.no_grad():
        teacher = torch.cat([partner_end.reshape(-1, c), model.advance(state, v, item)])  # (2 B K, C)
    weight = torch.cat([torch.ones_like(found), found]).to(student.dtype)  # (2 B K,)
    return self_distill(model, student, teacher, weight)


def tracker_losses(cfg: TrainConfig, model: Tracker, nextlat_head: NextLatHead | None, data: TrackerData, batch: Batch,
                   step: int, generator: torch.Generator) -> dict[str, torch.Tensor]:
    """The terms of ``cfg``'s objective on ``batch`` at ``step``, each weighted (the step's loss is
    their sum): ``ce`` always, then invariance, control, nextlat, metric and distill as the
    objective has them. ``data``'s tree tokens are the readout's targets; ``generator`` (the step's)
    draws the slot noise or dropout masks and the metric and distill terms' next events."""
    b, k = batch.chains, batch.partners
    if cfg.slot_noise > 0 and step >= cfg.slot_noise_delay * cfg.steps:
        # the slot perturbed after every event: the next events and the readout must undo it
        z, state = model(batch.items, noise=cfg.slot_noise, generator=generator)  # (H, T, C)
    elif cfg.dropout > 0:
        z, state = model(batch.items, dropout=cfg.dropout, generator=generator)
    elif cfg.move_readout > 0:
        z, state, reads = model(batch.items, soft_reads=True)  # reads: (H, T, C), the moves as mixtures
    else:
        z, state = model(batch.items)
    mask = batch.mask
    logits = model.readout(z)  # (H, T, P, V)
    target = data.tree_tokens[batch.trees.clamp(min=0)]  # (H, T, P)
    out = {"ce": F.cross_entropy(logits[mask].flatten(0, -2), target[mask].flatten())}
    if cfg.move_readout > 0:
        read = model.readout(reads)[mask]  # the same targets, read before the update cleans a blend up
        out["moves"] = cfg.move_readout * F.cross_entropy(read.flatten(0, -2), target[mask].flatten())
    last = batch.lengths - 1
    z_end = z[torch.arange(len(z), device=z.device), last]  # (H, C)
    chain_end = z_end[:b]  # (B, C)
    partner_end = z_end[b:].view(b, k, -1)  # (B, K, C)
    ends = batch.ends
    # what the invariance and control terms compare: the views, or (rms) the raw slots w at the ends
    measured = state if cfg.invariance_distance == "rms" else z_end  # (H, C)
    distance = DISTANCES[cfg.invariance_distance]
    if "invariance" in cfg.terms:
        w = cfg.weight("invariance", step)
        m_chain, m_partner = measured[:b], measured[b:].view(b, k, -1)  # (B, C), (B, K, C)
        out["invariance"] = w * invariance(m_chain[:, None].expand_as(m_partner).reshape(-1, measured.shape[-1]),
                                           m_partner.reshape(-1, measured.shape[-1]), distance=distance)
    if "control" in cfg.terms:
        # the same term at the same cost on inequivalent pairs: chain b against chain b+1's partners
        w = cfg.weight("control", step)
        other = torch.roll(measured[b:].view(b, k, -1), 1, dims=0).reshape(-1, measured.shape[-1])
        other_ends = torch.roll(ends[b:].view(b, k), 1, dims=0).reshape(-1)
        differ = (ends[:b].repeat_interleave(k) != other_ends).float()
        out["control"] = w * invariance(measured[:b].repeat_interleave(k, 0), other, differ, distance=distance)
    if "nextlat" in cfg.terms:
        w = cfg.weight("nextlat", step)
        events = model.embed.pooled(batch.items)  # (H, T, C)
        out["nextlat"] = w * nextlat(nextlat_head, z, events, mask)
    if "metric" in cfg.terms:
        w = cfg.weight("metric", step)
        c = z.shape[-1]
        # certified equivalent pairs: target 0
        eq = metric(chain_end[:, None].expand_as(partner_end).reshape(-1, c), partner_end.reshape(-1, c),
                    torch.zeros(b * k, device=z.device), None, None, None, cfg.gamma)
        # chain b against chain b+1: target from their outputs and one common next event
        u = torch.arange(b, device=z.device)
        v = torch.roll(u, 1)
        item, _, _, found = common_successor(data, ends[u], ends[v], generator)
        item = torch.where(found, item, data.tree_items[0])  # any real item; unused where not found
        zux, zvx = model.advance(state, u, item), model.advance(state, v, item)
        tv = output_tv(data.tree_tokens[ends[u]], data.tree_tokens[ends[v]])
        neq = metric(chain_end[u], chain_end[v], tv, zux, zvx, found, cfg.gamma)
        out["metric"] = w * (eq * b * k + neq * b) / (b * k + b)
    if "distill" in cfg.terms:  # its next events drawn last: the other terms draw as they do without it
        out["distill"] = cfg.weight("distill", step) * distill_pairs(model, data, state, chain_end, partner_end,
                                                                     ends, generator)
    if cfg.table_sharpness > 0:
        out["sharpness"] = cfg.table_sharpness * model.table_entropy()
    return out
