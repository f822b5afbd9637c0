"""Complete by comparison: the threshold on the centred cosine distance between an accepted
probe's imagined successor and the goal read as a start, chosen on validation chains, and the
reading of another dataset's chains (validation chains of another seed) by a trained arm.

The threshold is the one that classifies the validation chains' Lean-accepted probes best
(complete below it, accepted above), searched between the partner-distance floor (how far apart
certified equivalent histories sit) and the unrelated distance (how far apart unrelated states
sit) when the floor lies below the unrelated distance, over every distance otherwise.
"""
from __future__ import annotations

from contextlib import contextmanager

import torch

from oracle.data import OracleData


def choose_threshold(distance: torch.Tensor, complete: torch.Tensor, low: float | None = None,
                     high: float | None = None) -> dict:
    """distance (M,) of M Lean-accepted probes, complete (M,) bool (Lean said complete) -> the
    threshold (complete iff distance < threshold) of best accuracy within [low, high] (when
    given and low < high), the midpoint between the two distances it separates."""
    if len(distance) == 0:
        return {"threshold": None, "accuracy": None, "probes": 0, "searched": None}
    order = torch.argsort(distance.double())
    d, y = distance.double()[order], complete[order]
    # cut k: the first k (smallest) read as complete; right = complete among them + accepted after
    right = torch.cat([torch.zeros(1, dtype=torch.long), y.long().cumsum(0)])  # (M+1,)
    right = right + ((~y).long().sum() - torch.cat([torch.zeros(1, dtype=torch.long), (~y).long().cumsum(0)]))
    # the threshold of each cut: the midpoint, or the larger distance itself where two distances lie
    # so close that their midpoint rounds to the smaller (it still puts d[k-1] below and d[k] not)
    middle = (d[:-1] + d[1:]) / 2
    edges = torch.cat([d[:1] - 1e-6, torch.where(middle > d[:-1], middle, d[1:]), d[-1:] + 1e-6])
    # a cut between two equal distances is no threshold at all: only cuts that put d[k-1] strictly
    # below the threshold count
    allowed = torch.cat([torch.ones(1, dtype=torch.bool), d[:-1] < edges[1:-1], torch.ones(1, dtype=torch.bool)])
    if len(d) > 1:
        allowed[-1] = bool(d[-1] < edges[-1])
    searched = None
    if low is not None and high is not None and low < high:
        inside = allowed & (edges >= low) & (edges <= high)
        if bool(inside.any()):
            allowed, searched = inside, [low, high]
    score = torch.where(allowed, right.double(), -1.0)
    best = int(score.argmax())
    return {"threshold": float(edges[best]), "accuracy": float(right[best]) / len(d), "probes": len(d),
            "searched": searched}


@contextmanager
def reading(model, data: OracleData):
    """The arm reads ``data``'s item and probe tables for the duration (chains of another
    dataset of the same domain); ValueError when the vocabulary or the item width differ."""
    own = model.probe_tokens, (model.tracker.embed.item_tokens if model.tracker is not None else None)
    if model.tracker is not None and data.item_tokens.shape[1] != own[1].shape[1]:
        raise ValueError(f"the validation dataset's items are {data.item_tokens.shape[1]} tokens wide, the "
                         f"run's {own[1].shape[1]}: make it with the same --atoms and --tier")
    if data.probe_tokens.shape[1] > own[0].shape[1]:
        raise ValueError("the validation dataset's probes are longer than the run's")
    try:  # the tables go where the arm is
        model.probe_tokens = _fit(data.probe_tokens, own[0].shape[1]).to(own[0].device)
        if model.tracker is not None:
            model.tracker.embed.item_tokens = data.item_tokens.to(own[1].device)
        yield model
    finally:
        model.probe_tokens = own[0]
        if model.tracker is not None:
            model.tracker.embed.item_tokens = own[1]


def _fit(toks: torch.Tensor, width: int) -> torch.Tensor:
    """Token rows padded (with 0) to ``width`` columns."""
    if toks.shape[1] == width:
        return toks
    out = torch.zeros(toks.shape[0], width, dtype=toks.dtype, device=toks.device)
    out[:, : toks.shape[1]] = toks
    return out


def same_domain(a: OracleData, b: OracleData) -> str | None:
    """Why ``b``'s chains cannot be read by an arm trained on ``a`` (None when they can)."""
    if a.encoding != b.encoding:
        return "another vocabulary or tree length (another --atoms or --tier)"
    if tuple(a.verdicts) != tuple(b.verdicts) or tuple(a.kinds) != tuple(b.kinds):
        return "other verdict classes or probe kinds"
    if a.identity["dataset"]["dataset_id"] == b.identity["dataset"]["dataset_id"]:
        return "the training dataset itself (validation chains must come from another seed)"
    return None
