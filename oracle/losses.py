"""The oracle's losses: the cross-entropy of Lean's verdict on every probe, and the terms added to it
(``verdict_losses``, one step's terms for the objective an ``oracle.config.OracleConfig`` names).

The distinction half for the oracle: the tracker's Nerode metric loss on inequivalent pairs of
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
import torch.nn.functional as F

from oracle.config import OracleConfig
from oracle.data import OracleData, ProbeBatch
from oracle.model import Oracle
from tracker.losses import NextLatHead, centred_cosine_distance, invariance, metric, nextlat


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
                    accepting: torch.Tensor, complete: int, margin: float,
                    negatives: tuple[torch.Tensor, torch.Tensor] | None = None) -> torch.Tensor:
    """The comparison's own pairs, their targets from the verdicts: for every probe Lean
    accepted, its imagined successor f(w_t, pi) against the goal read as a start. Lean said
    *complete*: the two are one state (distance pulled to 0); Lean said accepted, not complete:
    they are two states, kept at least ``margin`` apart (a hinge, no target beyond it).
    With ``negatives`` (views (B, N, C), has (B,)): the views of other trees read as starts that
    share the goal's skeleton (other trees, so not the goal: the successor Lean called complete is
    not them either), each complete successor of a chain that has them is kept ``margin`` from
    every one of them as well.
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
    if negatives is None:
        return pull + push
    views, has = negatives
    hard = done & has[:, None, None]  # (B, S, P) complete probes of chains with negatives
    if not bool(hard.any()):
        return pull + push + d.sum() * 0
    b = hard.nonzero()[:, 0]  # (M,) the chain of each
    succ = model.imagined(slots, model.probe_tokens[probes])[hard]  # (M, C) their imagined successors
    near = centred_cosine_distance(succ[:, None].expand(-1, views.shape[1], -1), views[b])  # (M, N)
    return pull + push + torch.relu(margin - near).mean()


class SkeletonPool:
    """Trees of the training chains grouped by skeleton (the tree with every atom the same), for
    drawing, for a goal, other trees of its skeleton: the comparison's hardest negatives, which no
    verdict but *complete* tells apart. Items are the dataset's tree items (read as starts)."""

    def __init__(self, items: torch.Tensor, item_tokens: torch.Tensor, atom_ids: range) -> None:
        items = items.unique()  # (R,) sorted
        toks = item_tokens[items]  # (R, E)
        skeleton = torch.where((toks >= atom_ids.start) & (toks < atom_ids.stop), atom_ids.start, toks)
        _, group = skeleton.unique(dim=0, return_inverse=True)  # (R,) skeleton id of each tree
        order = torch.argsort(group, stable=True)
        self.items = items[order]  # (R,) grouped by skeleton
        group = group[order]
        counts = torch.bincount(group)
        starts = torch.cumsum(counts, 0) - counts
        self.position = torch.full((int(item_tokens.shape[0]),), -1, dtype=torch.long, device=items.device)
        self.position[self.items] = torch.arange(len(self.items), device=items.device)
        self.start, self.size = starts[group], counts[group]  # (R,) per grouped tree

    def draw(self, goals: torch.Tensor, n: int, generator: torch.Generator) -> tuple[torch.Tensor, torch.Tensor]:
        """goals (B,) items -> (B, n) items of other trees of each goal's skeleton, drawn uniformly
        with ``generator``, and (B,) whether the goal has any (a goal outside the pool, or alone
        in its skeleton, has none; its row repeats the goal)."""
        at = self.position[goals]  # (B,)
        known = at >= 0
        at = at.clamp(min=0)
        start, size = self.start[at], self.size[at]
        has = known & (size > 1)
        r = (torch.rand((len(goals), n), generator=generator, device=goals.device)
             * (size - 1).clamp(min=1)[:, None]).long()  # (B, n) in [0, size - 1)
        r = r + (r >= (at - start)[:, None]).long()  # skip the goal itself
        picked = self.items[(start[:, None] + r).clamp(max=len(self.items) - 1)]
        return torch.where(has[:, None], picked, goals[:, None]), has


def verdict_losses(cfg: OracleConfig, model: Oracle, nextlat_head: NextLatHead | None, data: OracleData,
                   skeletons: SkeletonPool | None, batch: ProbeBatch, step: int, generator: torch.Generator | None = None
                   ) -> dict[str, torch.Tensor]:
    """The terms of ``cfg``'s objective on ``batch`` at ``step``, each weighted (the step's loss is
    their sum): ``verdict`` always, then metric and completion (nerode), tree (``tree_weight``),
    invariance and nextlat as the objective has them. ``skeletons``: the completion negatives'
    pool (None without them); ``generator`` (the step's) draws the metric loss's pairs and the negatives."""
    histories = batch.histories
    r, z, w = model.states(histories.items, batch.truth_items, terms=bool(cfg.terms))  # (B, S, C), (H, T, C)
    logits = model.score(r, batch.probes)  # (B, S, P, V)
    real = batch.verdicts >= 0
    out = {"verdict": F.cross_entropy(logits[real], batch.verdicts[real])}
    if "metric" in cfg.terms:
        weight = cfg.weight("metric", step)
        views = z[: histories.chains, : r.shape[1]]  # (B, S, C) the probed states in the readout's view
        out["metric"] = weight * verdict_metric(model, views, w, batch.probes, batch.verdicts,
                                                data.accepting, cfg.gamma, cfg.metric_pairs, generator)
        compares = (cfg.completion_margin > 0 and w is not None and batch.goal_items is not None
                    and model.compares and cfg.arch != "probe-slot")
        if compares and weight == 0:  # held at zero with the metric loss: a zero, with nothing computed or drawn
            out["completion"] = torch.zeros((), device=data.device)
        elif compares:
            goal = model.goal_view(batch.goal_items)  # (B, C)
            negatives = None
            if cfg.completion_negatives:
                items, has = skeletons.draw(batch.goal_items, cfg.completion_negatives, generator)
                negatives = model.goal_view(items), has  # (B, N, C), (B,)
            term = completion_term(model, w, goal, batch.probes, batch.verdicts, data.accepting,
                                   data.verdicts.index("complete"), cfg.completion_margin, negatives)
            # a weight of 1 multiplies by 1.0 exactly: runs without the knob keep their bits
            out["completion"] = weight * (term * cfg.completion_weight if cfg.completion_weight != 1 else term)
    if cfg.tree_weight:
        views = r if z is None else z[: histories.chains, : r.shape[1]]  # (B, S, C)
        out["tree"] = cfg.tree_weight * tree_term(model, data, views, batch.truth_items)
    if "invariance" in cfg.terms:
        b, k = histories.chains, histories.partners
        z_end = z[torch.arange(len(z), device=z.device), histories.lengths - 1]  # (H, C)
        chain_end, partner_end = z_end[:b], z_end[b:].view(b, k, -1)
        w = cfg.weight("invariance", step)
        out["invariance"] = w * invariance(chain_end[:, None].expand_as(partner_end).reshape(-1, z.shape[-1]),
                                           partner_end.reshape(-1, z.shape[-1]))
    if "nextlat" in cfg.terms:
        w = cfg.weight("nextlat", step)
        events = model.tracker.embed.pooled(histories.items)  # (H, T, C)
        out["nextlat"] = w * nextlat(nextlat_head, z, events, histories.mask)
    return out


def tree_term(model: Oracle, data: OracleData, views: torch.Tensor, truth_items: torch.Tensor) -> torch.Tensor:
    """views (B, S, C) of the probed states, truth_items (B, S) the certified trees T_t read as
    starts -> the tracker's cross-entropy of every position of T_t (padding included) from its view."""
    tracker = model.tracker
    logits = tracker.readout(views)  # (B, S, P, V_out)
    targets = data.item_tokens[truth_items][..., : tracker.tree_len]  # (B, S, P) output ids, PAD after the end
    return F.cross_entropy(logits.flatten(0, -2), targets.flatten())
