"""Random chains and their certified partners, reproducible from a seed.

A chain starts at a uniformly random tier-1 tree (a start tree), or at a tree drawn uniformly
from a given list (``chains.rewrite.space.reachable_trees``: every tree of the domain, the larger tier-2
trees included), or, with a start walk of ``n`` events, where a uniformly random walk of ``n``
events from such a tree ends (so that a training chain's start follows the distribution of
states a long chain visits), and takes a uniformly random applicable event at each step. A
partner of a chain is another history ending at the same tree: a random walk backwards from
the chain's end (every rule has an inverse at the same position), read forwards. Its start is
a random member of the class and its length is drawn per partner, so partners come in every
length, not only the reduced one.
"""
from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from chains.rewrite.rules import RULES, Event
from chains.rewrite.space import StateSpace
from chains.rewrite.trees import Tree

# where a training chain starts (``certify --starts``): "start", a uniformly random start tree;
# "reachable", a tree drawn uniformly among the domain's reachable trees (``reachable_trees``)


@dataclass(frozen=True)
class Walk:
    """A history as interned states: ``states[0]`` is the start, ``states[k+1]`` follows
    ``events[k]``; ``ids[k]`` is the id of ``events[k]`` in its ``StateSpace.events``."""

    states: tuple[int, ...]
    events: tuple[Event, ...]
    ids: tuple[int, ...] = field(default=(), compare=False)

    @property
    def end(self) -> int:
        return self.states[-1]


def exact_getrandbits(rng: random.Random) -> Callable[[int], int] | None:
    """``rng.getrandbits`` when ``rng.choice(seq)`` is known to be ``seq[r]`` for the first
    ``r = getrandbits(len(seq).bit_length())`` below ``len(seq)`` (CPython's ``Random``),
    else None. The sampler's inner loop then draws exactly what ``rng.choice`` would, so the
    same seed gives the same dataset bit for bit (``tests/test_sampling.py`` holds it to that)."""
    kind = type(rng)
    if (kind.choice is random.Random.choice and kind.getrandbits is random.Random.getrandbits
            and kind._randbelow is random.Random._randbelow_with_getrandbits):
        return rng.getrandbits
    return None


def below(rng: random.Random) -> Callable[[int], int]:
    """``f(n)``: the index ``rng.choice`` would pick from ``n`` items, drawn the same way."""
    if exact_getrandbits(rng) is not None:
        return rng._randbelow
    return lambda n: rng.choice(range(n))


def _walk_ids(space: StateSpace, rng: random.Random, start: int, length: int) -> tuple[list[int], list[int]]:
    """States and event ids of a uniformly random walk (``rng.choice`` over the successors)."""
    states, ids = [start], []
    here = start
    getrandbits = exact_getrandbits(rng)
    if getrandbits is None:
        for _ in range(length):
            events, nexts = space.moves(here)
            r = rng.choice(range(len(nexts)))
            ids.append(events[r])
            here = nexts[r]
            states.append(here)
        return states, ids
    table = space.move_table  # state -> (event ids, next states, count, bits), filled on first use
    append_state, append_id = states.append, ids.append
    for _ in range(length):
        entry = table.get(here) or space.move_entry(here)
        events, nexts, n, k = entry
        r = getrandbits(k)
        while r >= n:
            r = getrandbits(k)
        append_id(events[r])
        here = nexts[r]
        append_state(here)
    return states, ids


def _weighted_walk_ids(space: StateSpace, rng: random.Random, start: int, length: int,
                       tier2_weight: float) -> tuple[list[int], list[int]]:
    """A random walk that picks each applicable tier-2 event ``tier2_weight`` times as often as
    each applicable tier-1 event."""
    states, ids = [start], []
    here = start
    for _ in range(length):
        events, nexts = space.moves(here)
        weights = [tier2_weight if RULES[space.events[e].rule].tier == 2 else 1.0 for e in events]
        r = rng.choices(range(len(nexts)), weights)[0]
        ids.append(events[r])
        here = nexts[r]
        states.append(here)
    return states, ids


def random_walk(space: StateSpace, rng: random.Random, start: int, length: int, tier2_weight: float = 1.0) -> Walk:
    if tier2_weight == 1.0:
        states, ids = _walk_ids(space, rng, start, length)
    else:
        states, ids = _weighted_walk_ids(space, rng, start, length, tier2_weight)
    return Walk(tuple(states), tuple(map(space.events.__getitem__, ids)), tuple(ids))


def sample_chain(space: StateSpace, rng: random.Random, length: int, start_walk: int = 0,
                 tier2_weight: float = 1.0, starts: Sequence[Tree] | None = None) -> Walk:
    """A random history of ``length`` events; it starts ``start_walk`` uniformly random events
    (not part of the history) away from a random start tree, or with ``starts`` from a tree
    drawn uniformly from that list (one ``rng.choice``), and picks tier-2 events with
    ``tier2_weight`` (see ``_weighted_walk_ids``)."""
    start = space.random_start(rng) if starts is None else space.id(rng.choice(starts))
    if start_walk:
        start = _walk_ids(space, rng, start, start_walk)[0][-1]
    return random_walk(space, rng, start, length, tier2_weight)


def sample_partner(space: StateSpace, rng: random.Random, end: int, length: int) -> Walk:
    """A history of ``length`` events ending at ``end``."""
    states, ids = _walk_ids(space, rng, end, length)
    states.reverse()
    forward = list(map(space.inverses.__getitem__, reversed(ids)))
    return Walk(tuple(states), tuple(map(space.events.__getitem__, forward)), tuple(forward))


@dataclass(frozen=True)
class Sample:
    """A chain and its partners (each ends where the chain ends)."""

    chain: Walk
    partners: tuple[Walk, ...]


def sample_split(space: StateSpace, rng: random.Random, count: int, length: int, partners: int,
                 start_walk: int = 0, tier2_weight: float = 1.0,
                 starts: Sequence[Tree] | None = None) -> list[Sample]:
    """``count`` chains of ``length`` events (see ``sample_chain`` for ``start_walk``,
    ``tier2_weight`` and ``starts``), each with ``partners`` partners of lengths drawn uniformly
    from 0 to ``length`` (uniform backward walks)."""
    out = []
    for _ in range(count):
        chain = sample_chain(space, rng, length, start_walk, tier2_weight, starts)
        mates = tuple(sample_partner(space, rng, chain.end, rng.randint(0, length)) for _ in range(partners))
        out.append(Sample(chain, mates))
    return out
