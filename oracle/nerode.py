"""The distinction half for the oracle: the metric loss of section 47 on inequivalent pairs of
probed states, with targets read off Lean's verdicts (no certificate of inequivalence needed).

A state's output is its verdict on every probe event. Two probed states u, v of a batch that
were asked about the same probe event (the gold event of one step is often another chain's
probe, and the random and misplaced probes repeat events) and got different verdicts from Lean
are inequivalent: no tree answers one event two ways. Their output distance ``tv`` is the
fraction of their shared probes on which the verdicts differ (``complete`` counts as
``accepted``: it says something about the goal, not the state). The loss is the tracker's
``metric``: [d_N(u, v) - (1 - gamma) tv - gamma sg d_N(ux, vx)]^2, where ux, vx are the imagined
successors of u and v under one shared probe Lean accepted at both (for the arms with a slot
transition; elsewhere the successor term falls back to sg d_N(u, v), whose fixed point is tv).
"""
from __future__ import annotations

import torch

from tracker.objectives import metric


def verdict_pairs(probes: torch.Tensor, verdicts: torch.Tensor, accepting: torch.Tensor
                  ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
    """probes, verdicts (M, P) of M probed states (probe id 0 / verdict -1: none), accepting (V,)
    -> every pair i < j with a verdict difference on a shared probe: (i, j, tv, the id of a shared
    probe accepted at both or 0, whether there is one), each (pairs,)."""
    real = verdicts >= 0
    folded = torch.where(real & accepting[verdicts.clamp(min=0)], -2, verdicts)  # complete -> accepted
    same = (probes[:, None, :, None] == probes[None, :, None, :]) & real[:, None, :, None] & real[None, :, None, :]
    differ = same & (folded[:, None, :, None] != folded[None, :, None, :])  # (M, M, P, P)
    shared = same.flatten(2).sum(-1)  # (M, M)
    tv = differ.flatten(2).sum(-1) / shared.clamp(min=1)
    i, j = torch.triu_indices(len(probes), len(probes), 1, device=probes.device)
    keep = tv[i, j] > 0
    i, j = i[keep], j[keep]
    both = same[i, j] & (folded[i][:, :, None] == -2) & (folded[j][:, None, :] == -2)  # (pairs, P, P)
    has_next = both.flatten(1).any(1)
    first = both.flatten(1).float().argmax(1)  # one shared accepted probe (index p * P + q)
    common = probes[i, first // probes.shape[1]] * has_next
    return i, j, tv[i, j], common, has_next


def verdict_metric(model, views: torch.Tensor, slots: torch.Tensor | None, probes: torch.Tensor,
                   verdicts: torch.Tensor, accepting: torch.Tensor, gamma: float, pairs: int,
                   generator: torch.Generator | None) -> torch.Tensor:
    """views (B, S, C) of the probed states, slots (B, S, C) or None, probes / verdicts (B, S, P);
    the metric loss over at most ``pairs`` inequivalent pairs drawn with ``generator`` (0 when
    the batch has none)."""
    c = views.shape[-1]
    z = views.reshape(-1, c)
    i, j, tv, common, has_next = verdict_pairs(probes.reshape(-1, probes.shape[-1]),
                                               verdicts.reshape(-1, verdicts.shape[-1]), accepting)
    if len(i) == 0:
        return z.sum() * 0
    if len(i) > pairs:
        pick = torch.randperm(len(i), generator=generator, device=i.device)[:pairs]  # generator on i's device
        i, j, tv, common, has_next = i[pick], j[pick], tv[pick], common[pick], has_next[pick]
    zux, zvx = z[i], z[j]  # where there is no common successor the term falls back to sg d_N(u, v)
    if slots is not None and bool(has_next.any()):
        w = slots.reshape(-1, c)
        toks = model.probe_tokens[common].unsqueeze(1)  # (pairs, 1, Ep); padding where there is none
        zux, zvx = model.imagined(w[i], toks)[:, 0], model.imagined(w[j], toks)[:, 0]
    else:
        has_next = torch.zeros_like(has_next)
    return metric(z[i], z[j], tv.to(z.dtype), zux, zvx, has_next, gamma)


def completion_term(model, slots: torch.Tensor, goal: torch.Tensor, probes: torch.Tensor, verdicts: torch.Tensor,
                    accepting: torch.Tensor, complete: int, margin: float) -> torch.Tensor:
    """The comparison's own pairs, their targets from the verdicts: for every probe Lean
    accepted, its imagined successor f(w_t, pi) against the goal read as a start. Lean said
    *complete*: the two are one state (distance pulled to 0); Lean said accepted, not complete:
    they are two states, kept at least ``margin`` apart (a hinge, no target beyond it).
    slots (B, S, C), goal (B, C) views, probes / verdicts (B, S, P)."""
    real = verdicts >= 0
    accepted = real & accepting[verdicts.clamp(min=0)]  # (B, S, P)
    if not bool(accepted.any()):
        return slots.sum() * 0
    d = model.goal_distance(slots, probes, goal[:, None].expand_as(slots))  # (B, S, P)
    done = accepted & (verdicts == complete)
    other = accepted & (verdicts != complete)
    pull = d[done].mean() if bool(done.any()) else d.sum() * 0
    push = torch.relu(margin - d[other]).mean() if bool(other.any()) else d.sum() * 0
    return pull + push
