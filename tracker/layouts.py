"""Readout layouts: which tree position each readout slot names, and the heap geometry they share.

``polish`` (the default, and every registered run's) writes the tree token by token in Polish
order, left-aligned, PAD after its end. A rewrite that changes the size of a subtree then shifts
every later position, so the same event moves tokens by an amount that depends on the tree.

``paths`` names each position by its path from the root, in heap order (the root is 0, the
children of position i are 2i + 1 and 2i + 2), PAD where the tree has no node. A rewrite event
(one lemma at one position) then moves, copies or drops whole subtrees by the same map in every
tree it applies to: the event acts on the readout as one fixed linear map of the position code,
the shape an exact tracker's state takes (``tracker.analysis`` measures it).

The heap geometry lives here once: a path and its heap position (``heap_index``, ``heap_path``), a
tree's Polish tokens and its tokens by heap position (``heap_positions``, ``heap_tokens``), and the
tree that heap-ordered slots hold (``heap_tree``). The registers arch (``tracker.registers``), a
run's decoding (``tracker.inference``) and the analysis's ``paths`` string read it from here.
"""
from __future__ import annotations

from collections.abc import Callable, Sequence
from itertools import takewhile
from typing import TypeVar

import torch

from chains.rewrite.trees import Tree

LAYOUTS = ("polish", "paths")
T = TypeVar("T")
PAD_ID, N_OPS = 0, 2  # output ids: PAD, the two operators, then the atoms (tracker.data.Vocab)


class NotATree(ValueError):
    """Tokens that are not exactly one tree's, in Polish order."""


def heap_index(path: str) -> int:
    """The heap position of the node at ``path`` (0 left, 1 right)."""
    i = 0
    for bit in path:
        i = 2 * i + 1 + (bit == "1")
    return i


def heap_path(i: int) -> str:
    """The path of heap position ``i``."""
    bits = []
    while i > 0:
        bits.append("0" if i % 2 == 1 else "1")
        i = (i - 1) // 2
    return "".join(reversed(bits))


def heap_positions(polish: Sequence[T], is_operator: Callable[[T], bool]) -> dict[int, T]:
    """One tree's tokens in Polish order (no padding) -> {heap position: token}; NotATree when
    they are not exactly one tree (tokens past its end, or an operator short of operands)."""
    out: dict[int, T] = {}
    stack = [0]  # heap positions still to fill, the next one on top
    for tok in polish:
        if not stack:
            raise NotATree(f"{len(polish) - len(out)} tokens after the tree's end")
        position = stack.pop()
        out[position] = tok
        if is_operator(tok):  # its right child is filled after its left one
            stack += [2 * position + 2, 2 * position + 1]
    if stack:
        raise NotATree(f"the tokens end {len(stack)} operands short of a tree")
    return out


def heap_tokens(polish: Sequence[T], is_operator: Callable[[T], bool], positions: int, pad: T) -> list[T] | None:
    """A tree's Polish tokens, read up to the first ``pad`` -> its ``positions`` tokens by heap
    position, ``pad`` where it has no node; None when they are not exactly one tree, or it has a
    node at or past ``positions``."""
    try:
        placed = heap_positions(list(takewhile(lambda t: t != pad, polish)), is_operator)
    except NotATree:
        return None
    if max(placed) >= positions:
        return None
    out = [pad] * positions
    for i, tok in placed.items():
        out[i] = tok
    return out


def heap_tree(slots: Sequence[T], pad: T, is_atom: Callable[[T], bool]) -> Tree | None:
    """The tree heap-ordered ``slots`` hold (children of i at 2i + 1, 2i + 2), an atom or
    ``(operator, left, right)``, or None when the slots are not exactly one tree's nodes (an
    operator short of a child, a token off the tree)."""
    used: set[int] = set()

    def node(i: int) -> Tree | None:
        if i >= len(slots) or slots[i] == pad:
            return None
        used.add(i)
        if is_atom(slots[i]):
            return slots[i]
        left, right = node(2 * i + 1), node(2 * i + 2)
        return None if left is None or right is None else (slots[i], left, right)

    tree = node(0)
    stray = any(t != pad for i, t in enumerate(slots) if i not in used)
    return None if tree is None or stray else tree


def paths_of(tree_tokens: torch.Tensor) -> torch.Tensor:
    """(R, P) Polish output ids -> (R, 2^L - 1) the same trees in heap order, where L = (P + 1) / 2
    is the most leaves a tree of P tokens has, so that its deepest leaf (depth L - 1) has a place:
    the width depends on the domain's size bound, not on the trees a dataset happens to hold."""
    size = 2 ** ((tree_tokens.shape[1] + 1) // 2) - 1
    rows = [heap_tokens(row, lambda t: t <= N_OPS, size, PAD_ID) for row in tree_tokens.tolist()]
    if None in rows:
        raise NotATree(f"row {rows.index(None)} of the tree tokens is not one tree")
    return torch.tensor(rows, dtype=tree_tokens.dtype).view(len(rows), size)


def laid_out(tree_tokens: torch.Tensor, layout: str) -> torch.Tensor:
    """The readout targets (R, P') of the trees in ``tree_tokens`` (R, P) under ``layout``."""
    if layout == "polish":
        return tree_tokens
    if layout == "paths":
        return paths_of(tree_tokens)
    raise ValueError(f"unknown layout {layout!r}; choose one of {', '.join(LAYOUTS)}")
