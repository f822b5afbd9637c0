"""Histories packed as the tracker's padded tensors, for every domain's loader (``tracker.data``
for rewrite chains, ``tracker.domain_data`` for the others).

A history is (items, states): its items are ("tree", state id) for the start, then ("event",
event id) per step; its states the state id after each step. Item ids: 0 is padding, a start
state is 1 + its id, an event 1 + R + its id (R states)."""
from __future__ import annotations

import torch

PAD = "<pad>"  # item and output id 0
Row = tuple[tuple[list[tuple[str, int]], list[int]], list[tuple[list[tuple[str, int]], list[int]]]]  # a chain, its partners


def item_ids(items: list[tuple[str, int]], n_trees: int) -> torch.Tensor:
    """A history's items as item-table ids (int32): a tree is 1 + its id, an event 1 + R + its id."""
    return torch.tensor([1 + i if kind == "tree" else 1 + n_trees + i for kind, i in items], dtype=torch.int32)


def pack(rows: list[Row], n_trees: int, with_trees: bool) -> dict[str, torch.Tensor]:
    """Rows as padded tensors: chain_items (N, T), end (N,), partner_items (N, K, T); with trees,
    chain_trees (N, T) and partner_trees (N, K, T) too, -1 at padding."""
    # the longest history, a partner's included (a program's partner may be longer than it; a rewrite
    # chain's partners never are, so its tensors are as long as its longest chain)
    length = max(len(history[0]) for chain, mates in rows for history in (chain, *mates))
    k = max(len(mates) for _, mates in rows)
    out = {"chain_items": torch.zeros(len(rows), length, dtype=torch.int32),
           "end": torch.tensor([chain[1][-1] for chain, _ in rows], dtype=torch.long),
           "partner_items": torch.zeros(len(rows), k, length, dtype=torch.int32)}
    if with_trees:
        out["chain_trees"] = torch.full((len(rows), length), -1, dtype=torch.int32)
        out["partner_trees"] = torch.full((len(rows), k, length), -1, dtype=torch.int32)
    for n, (chain, mates) in enumerate(rows):
        out["chain_items"][n, : len(chain[0])] = item_ids(chain[0], n_trees)
        if with_trees:
            out["chain_trees"][n, : len(chain[1])] = torch.tensor(chain[1], dtype=torch.int32)
        for p, (items, trees) in enumerate(mates):
            out["partner_items"][n, p, : len(items)] = item_ids(items, n_trees)
            if with_trees:
                out["partner_trees"][n, p, : len(trees)] = torch.tensor(trees, dtype=torch.int32)
    return out


def successor_tables(succ: dict[int, list[tuple[int, int]]], n_trees: int) -> tuple[torch.Tensor, torch.Tensor]:
    """(succ_items (R, A), succ_trees (R, A)): per tree the item ids of its events and the trees
    they lead to, -1 after the last."""
    width = max((len(v) for v in succ.values()), default=1)
    succ_items = torch.full((n_trees, width), -1, dtype=torch.long)
    succ_trees = torch.full((n_trees, width), -1, dtype=torch.long)
    for r, pairs in succ.items():
        for a, (e, t) in enumerate(pairs):
            succ_items[r, a] = 1 + n_trees + e
            succ_trees[r, a] = t
    return succ_items, succ_trees
