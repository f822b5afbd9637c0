"""The pairs of Nerode self-distillation over rewrite trees (``stepwise.distill.PairSource``).

u is a uniformly random walk from a uniformly random start tree (as the dataset's chains are
drawn); v is a shortest history from the same start to u's end tree (breadth-first over the rewrite
graph); w is a uniformly random walk of events that apply after both u and v, of 1 to n - |v|
events, so that the teacher reads at most n events (where it was trained). The control's v is a
shortest history to a uniformly random tree within n events of the start, other than u's end.

The sampler works in the interned ids of a ``StateSpace``; every step of u, v and w (after u and
after v) is certified through the store (``PairCertifier``: ``leanbridge.confirm.StepCertifier``,
the store first, Lean for the rest) before ``RewritePairs`` hands the walks and pairs on as trees
and events.
"""
from __future__ import annotations

import random
from collections import deque
from collections.abc import Sequence

import numpy as np

from chains.rewrite.sampling import random_walk
from chains.rewrite.space import StateSpace
from leanbridge.confirm import StepCertifier
from stepwise.distill import DistillPair, LongChain


class PairSampler:
    """Draws walks and ``DistillPair``s of interned ids over one rewrite ``space`` (see the module)."""

    def __init__(self, space: StateSpace, base: int) -> None:
        self.space, self.base = space, base
        self._paths: dict[int, dict[int, tuple[int, int]]] = {}  # start -> tree -> (previous tree, event id)

    def _reach(self, start: int) -> dict[int, tuple[int, int]]:
        """Breadth-first parents of every tree reachable from ``start`` (its equivalence class)."""
        parents = self._paths.get(start)
        if parents is None:
            parents, queue = {start: (-1, -1)}, deque([start])
            while queue:
                here = queue.popleft()
                for event, there in zip(*self.space.moves(here)):
                    if there not in parents:
                        parents[there] = (here, event)
                        queue.append(there)
            self._paths[start] = parents
        return parents

    def shortest(self, start: int, end: int) -> tuple[tuple[int, ...], tuple[int, ...]]:
        """(states, event ids) of a shortest history from ``start`` to ``end``."""
        parents = self._reach(start)
        states, events = [end], []
        while states[-1] != start:
            before, event = parents[states[-1]]
            states.append(before)
            events.append(event)
        return tuple(reversed(states)), tuple(reversed(events))

    def _elsewhere(self, rng: random.Random, start: int, end: int) -> int | None:
        """A uniformly random tree within ``base`` events of ``start``, other than ``end``."""
        near = sorted(t for t in self._reach(start) if t != end and len(self.shortest(start, t)[1]) <= self.base)
        return rng.choice(near) if near else None

    def _joint_walk(self, rng: random.Random, a: int, b: int, length: int) -> tuple[int, ...]:
        """Up to ``length`` uniformly random events that apply after both ``a`` and ``b`` in turn
        (fewer where none does)."""
        events = []
        for _ in range(length):
            ea, na = self.space.moves(a)
            eb, nb = self.space.moves(b)
            after_b = dict(zip(eb, nb))
            common = [(e, n) for e, n in zip(ea, na) if e in after_b]
            if not common:
                break
            event, a = rng.choice(common)
            b = after_b[event]
            events.append(event)
        return tuple(events)

    def draw(self, rng: random.Random, chains: int, cuts: int, lengths: tuple[int, int], control: bool = False
             ) -> tuple[list[LongChain], list[DistillPair]]:
        """``chains`` walks from uniformly random start trees, each cut after ``cuts`` uniformly random
        numbers of events in ``lengths`` (with repeats): one pair per cut, whose v ends where u does
        (at another tree for a control pair). A walk has one event more than the longest cut, so
        that the state at every cut is closed in the sequence read before the next event."""
        walks, pairs = [], []
        for n in range(chains):
            walk = random_walk(self.space, rng, self.space.random_start(rng), lengths[1] + 1)
            walks.append(LongChain(walk.states, walk.ids))
            start = walk.states[0]
            for _ in range(cuts):
                while True:
                    cut = rng.randint(*lengths)
                    end = walk.states[cut]
                    target = self._elsewhere(rng, start, end) if control else end
                    if target is None:
                        continue  # a start whose class is one tree: no inequivalent short history
                    states, events = self.shortest(start, target)
                    then = self._joint_walk(rng, end, target, rng.randint(1, max(1, self.base - len(events))))
                    if then:
                        pairs.append(DistillPair(n, cut, end, states, events, then))
                        break
        return walks, pairs


class PairCertifier:
    """Certifies every step of the long chains, of each v, and of each w after u and after v,
    before they are used."""

    def __init__(self, steps: StepCertifier) -> None:
        self.steps = steps

    def confirm(self, chains: Sequence[LongChain], pairs: Sequence[DistillPair]) -> None:
        """StepNotCertified naming the first step Lean did not certify."""
        space = self.steps.space
        runs = [(chain.states, chain.events) for chain in chains]
        for pair in pairs:
            runs += [(pair.short_states, pair.short_events), _after(space, pair.long_end, pair.then_events),
                     _after(space, pair.short_states[-1], pair.then_events)]
        for states, events in runs:
            if events:
                self.steps.confirm(np.array([states]), np.array([events]), 1)


def _after(space: StateSpace, start: int, events: Sequence[int]) -> tuple[tuple[int, ...], tuple[int, ...]]:
    states = [start]
    for event in events:
        states.append(dict(zip(*space.moves(states[-1])))[event])
    return tuple(states), tuple(events)


class RewritePairs:
    """Certified pairs over one rewrite ``space``, handed on as trees and events (a ``PairSource``)."""

    def __init__(self, space: StateSpace, base: int, steps: StepCertifier) -> None:
        self.space = space
        self.sampler = PairSampler(space, base)
        self.certifier = PairCertifier(steps)

    def draw(self, rng: random.Random, chains: int, cuts: int, lengths: tuple[int, int], control: bool = False
             ) -> tuple[list[LongChain], list[DistillPair]]:
        walks, pairs = self.sampler.draw(rng, chains, cuts, lengths, control)
        self.certifier.confirm(walks, pairs)
        return as_values(self.space, walks, pairs)


def as_values(space: StateSpace, chains: Sequence[LongChain], pairs: Sequence[DistillPair]
              ) -> tuple[list[LongChain], list[DistillPair]]:
    """Walks and pairs of interned ids as the trees and events they stand for."""
    trees, events = space.trees, space.events
    return ([LongChain(tuple(trees[s] for s in c.states), tuple(events[e] for e in c.events)) for c in chains],
            [DistillPair(p.chain, p.cut, trees[p.long_end], tuple(trees[s] for s in p.short_states),
                         tuple(events[e] for e in p.short_events), tuple(events[e] for e in p.then_events))
             for p in pairs])
