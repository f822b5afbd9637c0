"""Permutation groups given by generators, and their Cayley graphs.

An element is a permutation of the points ``0 … n-1`` in one-line notation: the tuple ``p`` with
``p[i]`` the image of ``i``. The product is composition, ``product(a, b)[i] = a[b[i]]`` (the
function ``a ∘ b``), so a word ``g1 g2 … gk`` is the element ``g1 ∘ g2 ∘ … ∘ gk``, and acting on the
right, ``act(p, g) = p ∘ g``, is a group action: ``act(act(p, a), b) = act(p, a ∘ b)``. Read as an
arrangement (the point at each position), a generator moves the points: position ``i`` takes what
was at position ``g[i]``.

``Cayley`` enumerates a group breadth-first from the identity, which gives every element's
distance in generators and one canonical shortest word (the generators tried in their order).
"""
from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property

Perm = tuple[int, ...]

_GENERATOR = re.compile(r"[a-z][a-z0-9]*")


def identity(points: int) -> Perm:
    return tuple(range(points))


def product(a: Perm, b: Perm) -> Perm:
    """``a ∘ b``: first ``a``'s events, then ``b``'s (``act(act(p, a), b) = act(p, product(a, b))``)."""
    return tuple(a[i] for i in b)


def inverse(a: Perm) -> Perm:
    out = [0] * len(a)
    for i, image in enumerate(a):
        out[image] = i
    return tuple(out)


def is_permutation(p: Sequence[int], points: int) -> bool:
    return len(p) == points and sorted(p) == list(range(points))


def parity(p: Perm) -> int:
    """0 for an even permutation, 1 for an odd one (by the number of inversions)."""
    return sum(p[i] > p[j] for i in range(len(p)) for j in range(i + 1, len(p))) % 2


def cycle(points: int, *cycle_points: int) -> Perm:
    """The cycle ``(c0 c1 … ck)``: ``c0 ↦ c1 ↦ … ↦ ck ↦ c0``, every other point fixed."""
    p = list(range(points))
    for here, there in zip(cycle_points, (*cycle_points[1:], cycle_points[0])):
        p[here] = there
    return tuple(p)


@dataclass(frozen=True)
class Group:
    """A permutation group: its points and its named generators (in the order words draw them)."""

    name: str  # as --group names it
    points: int  # the permutations act on 0 … points-1
    generators: tuple[tuple[str, Perm], ...]  # (event name, permutation); every name a lowercase identifier
    about: str  # one line: what the generators are

    def __post_init__(self) -> None:
        names = [name for name, _ in self.generators]
        if len(set(names)) != len(names) or not all(_GENERATOR.fullmatch(n) for n in names):
            raise ValueError(f"{self.name}: generator names must be distinct lowercase identifiers")
        if not all(is_permutation(g, self.points) for _, g in self.generators):
            raise ValueError(f"{self.name}: every generator must permute 0..{self.points - 1}")

    @cached_property
    def cayley(self) -> Cayley:
        return Cayley(self)

    def generator(self, name: str) -> Perm:
        return dict(self.generators)[name]


class Cayley:
    """Every element of a group, breadth-first from the identity over right multiplication by the
    generators: ``distance[p]`` is the fewest generators whose product is ``p``, ``word(p)`` the
    first such word found (generators tried in their order)."""

    def __init__(self, group: Group) -> None:
        start = identity(group.points)
        self.parent: dict[Perm, tuple[Perm, str] | None] = {start: None}
        self.distance: dict[Perm, int] = {start: 0}
        frontier = [start]
        while frontier:
            following = []
            for p in frontier:
                for name, g in group.generators:
                    q = product(p, g)
                    if q not in self.parent:
                        self.parent[q] = (p, name)
                        self.distance[q] = self.distance[p] + 1
                        following.append(q)
            frontier = following
        self.elements: tuple[Perm, ...] = tuple(sorted(self.parent))  # lexicographic: an element's index is its key
        self.index = {p: k for k, p in enumerate(self.elements)}

    @property
    def order(self) -> int:
        return len(self.elements)

    @property
    def diameter(self) -> int:
        return max(self.distance.values())

    def word(self, p: Perm) -> list[str]:
        """The canonical shortest word whose product is ``p``."""
        out = []
        while self.parent[p] is not None:
            p, name = self.parent[p]
            out.append(name)
        return out[::-1]
