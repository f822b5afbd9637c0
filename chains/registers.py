"""Register geometry: an optional capability by which a domain says what a register-per-position tracker
needs of it (``--arch registers``, built by ``tracker.build``).

Such a tracker holds one register per position of the state and moves the registers, event by event,
as the domain says the event acts on the positions. A domain declares one kind, by the method it has;
each method reads an event as the tracker does, by its tokens (``StateDomain.event_tokens``), and
answers None for tokens that are not an event's (a start state's):

- ``PermutedPositions``: every event permutes the positions' contents (the groups: S5's generator
  ``si = (i i+1)`` swaps the points at positions i and i+1). There is a register per readout position
  (``len(domain.readout())``), a start state is read as one token per position, and a register per
  position moved by the event's permutation tracks the state exactly (``tracker.permuted``).
- ``NamedWrites``: an event reads some positions and writes one (a programs statement ``vi = op(a, b)``
  reads the variables among a and b and writes vi); every other position keeps its content. The
  registers read and write by learned keys from the names (``tracker.variables``, which reads a
  programs machine's statements).
- ``SubtreeMoves``: an event rewrites the subtree at one node of a tree (a rewrite rule at a position);
  the registers sit at the tree's positions by path from the root and move whole subtrees by learned
  tables (``tracker.registers``, read in the ``paths`` layout).

A domain with none of them has no registers arch; every other arch takes it as it is.
"""
from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, runtime_checkable


@runtime_checkable
class PermutedPositions(Protocol):
    """A domain whose events permute the contents of its readout positions."""

    def position_moves(self, tokens: Sequence[str]) -> tuple[int, ...] | None:
        """The permutation ``p`` the event read as ``tokens`` applies, one entry per readout position:
        after it, position i holds what position ``p[i]`` held. None when the tokens are not an event's."""


@runtime_checkable
class NamedWrites(Protocol):
    """A domain whose events each read some positions and write one."""

    def named_writes(self, tokens: Sequence[str]) -> tuple[tuple[int, ...], int] | None:
        """(the positions the event read as ``tokens`` reads, the one it writes); None when the tokens are
        not an event's."""


@runtime_checkable
class SubtreeMoves(Protocol):
    """A domain whose states are trees and whose events each rewrite the subtree at one node."""

    def subtree_moved(self, tokens: Sequence[str]) -> str | None:
        """The path from the root (``0`` left, ``1`` right; ``""`` the root) of the node whose subtree the
        event read as ``tokens`` rewrites; None when the tokens are not an event's."""


# each kind by the name a message or a report gives it, in the order the builder asks for them
KINDS: dict[str, type] = {"permuted": PermutedPositions, "named": NamedWrites, "subtree": SubtreeMoves}
METHODS = ("position_moves", "named_writes", "subtree_moved")  # the method that declares each kind


def register_kind(domain: object) -> str | None:
    """The kind of register geometry ``domain`` declares (a key of ``KINDS``), or None when it declares none."""
    return next((kind for kind, protocol in KINDS.items() if isinstance(domain, protocol)), None)


def is_permutation(moves: Sequence[int], positions: int) -> bool:
    """Whether ``moves`` permutes ``0 … positions-1``."""
    return len(moves) == positions and sorted(moves) == list(range(positions))
