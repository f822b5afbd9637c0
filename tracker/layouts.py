"""Readout layouts: which tree position each readout slot names.

``polish`` (the default, and every registered run's) writes the tree token by token in Polish
order, left-aligned, PAD after its end. A rewrite that changes the size of a subtree then shifts
every later position, so the same event moves tokens by an amount that depends on the tree.

``paths`` names each position by its path from the root, in heap order (the root is 0, the
children of position i are 2i + 1 and 2i + 2), PAD where the tree has no node. A rewrite event
(one lemma at one position) then moves, copies or drops whole subtrees by the same map in every
tree it applies to: the event acts on the readout as one fixed linear map of the position code,
the shape section 48 found the exact state to take.
"""
from __future__ import annotations

from collections.abc import Callable, Sequence
from itertools import takewhile
from typing import TypeVar

import torch

LAYOUTS = ("polish", "paths")
T = TypeVar("T")
PAD_ID, N_OPS = 0, 2  # output ids: PAD, the two operators, then the atoms (tracker.data.Vocab)


def heap_positions(polish: Sequence[T], is_operator: Callable[[T], bool]) -> dict[int, T]:
    """One tree's tokens in Polish order (no padding) -> {heap position: token}."""
    out: dict[int, T] = {}
    stack = [0]  # heap positions still to fill, the next one on top
    for tok in polish:
        position = stack.pop()
        out[position] = tok
        if is_operator(tok):  # its right child is filled after its left one
            stack += [2 * position + 2, 2 * position + 1]
    return out


def paths_of(tree_tokens: torch.Tensor) -> torch.Tensor:
    """(R, P) Polish output ids -> (R, 2^L - 1) the same trees in heap order, where L = (P + 1) / 2
    is the most leaves a tree of P tokens has, so that its deepest leaf (depth L - 1) has a place:
    the width depends on the domain's size bound, not on the trees a dataset happens to hold."""
    rows = [heap_positions(list(takewhile(lambda t: t != PAD_ID, row)), lambda t: t <= N_OPS)
            for row in tree_tokens.tolist()]
    size = 2 ** ((tree_tokens.shape[1] + 1) // 2) - 1
    out = torch.full((len(rows), size), PAD_ID, dtype=tree_tokens.dtype)
    for r, row in enumerate(rows):
        out[r, list(row)] = torch.tensor(list(row.values()), dtype=tree_tokens.dtype)
    return out


def laid_out(tree_tokens: torch.Tensor, layout: str) -> torch.Tensor:
    """The readout targets (R, P') of the trees in ``tree_tokens`` (R, P) under ``layout``."""
    if layout == "polish":
        return tree_tokens
    if layout == "paths":
        return paths_of(tree_tokens)
    raise ValueError(f"unknown layout {layout!r}; choose one of {', '.join(LAYOUTS)}")
