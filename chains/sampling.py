"""Random chains and their certified partners, reproducible from a seed.

A chain starts at a uniformly random tier-1 tree and takes a uniformly random applicable
event at each step. A partner of a chain is another history ending at the same tree: a
random walk backwards from the chain's end (every rule has an inverse at the same position),
read forwards. Its start is a random member of the class and its length is drawn per
partner, so partners come in every length, not only the reduced one.
"""
from __future__ import annotations

import random
from dataclasses import dataclass

from chains.rules import Event
from chains.space import StateSpace


@dataclass(frozen=True)
class Walk:
    """A history as interned states: ``states[0]`` is the start, ``states[k+1]`` follows
    ``events[k]``."""

    states: tuple[int, ...]
    events: tuple[Event, ...]

    @property
    def end(self) -> int:
        return self.states[-1]


def random_walk(space: StateSpace, rng: random.Random, start: int, length: int) -> Walk:
    states, events = [start], []
    here = start
    for _ in range(length):
        event, here = rng.choice(space.successors(here))
        events.append(event)
        states.append(here)
    return Walk(tuple(states), tuple(events))


def sample_chain(space: StateSpace, rng: random.Random, length: int) -> Walk:
    return random_walk(space, rng, space.random_start(rng), length)


def sample_partner(space: StateSpace, rng: random.Random, end: int, length: int) -> Walk:
    """A history of ``length`` events ending at ``end``."""
    back = random_walk(space, rng, end, length)
    return Walk(back.states[::-1], tuple(event.inverse for event in reversed(back.events)))


def split_rng(seed: int, split: str) -> random.Random:
    """An independent generator per dataset split, so adding a split changes no other."""
    return random.Random(f"{seed}:{split}")


@dataclass(frozen=True)
class Sample:
    """A chain and its partners (each ends where the chain ends)."""

    chain: Walk
    partners: tuple[Walk, ...]


def sample_split(space: StateSpace, rng: random.Random, count: int, length: int, partners: int) -> list[Sample]:
    """``count`` chains of ``length`` events, each with ``partners`` partners of lengths drawn
    uniformly from 0 to ``length``."""
    out = []
    for _ in range(count):
        chain = sample_chain(space, rng, length)
        mates = tuple(sample_partner(space, rng, chain.end, rng.randint(0, length)) for _ in range(partners))
        out.append(Sample(chain, mates))
    return out
