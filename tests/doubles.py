"""Stand-ins the prover's tests search with, each exact by the domain's own rules: a perfect
tracker (``OracleImagination``), one that decodes wrong states (``CorruptImagination``), a perfect
verdict oracle (``RulesOracle``), and the shortest distance between two trees by breadth-first
search (``shortest_distance``), against which the searches and the problems are checked."""
from __future__ import annotations

from collections.abc import Callable, Sequence

from chains.protocol import EventRefused, StateDomain
from chains.rewrite.space import Domain, StateSpace
from chains.rewrite.trees import Tree
from prover.imagination import Event, History, Latent, State
from prover.problems import distances_from


def moved(domain: StateDomain, state: State | None, event: Event) -> State | None:
    """Where ``event`` leads from ``state`` by the domain's ``apply``; None where it does not apply
    (or from None)."""
    if state is None:
        return None
    try:
        return domain.apply(state, event)
    except EventRefused:
        return None


class OracleImagination:
    """A perfect tracker: the latent state is the domain's state itself, moved by the domain's
    ``apply``. An event that does not apply leads to the state None, which decodes to no state."""

    def __init__(self, domain: StateDomain) -> None:
        self.domain = domain

    def encode(self, histories: Sequence[History]) -> list[Latent]:
        out = []
        for start, events in histories:
            state = start
            for event in events:
                state = moved(self.domain, state, event)
            out.append(state)
        return out

    def step(self, states: Sequence[Latent], events: Sequence[Event]) -> list[Latent]:
        return [moved(self.domain, s, e) for s, e in zip(states, events, strict=True)]

    def decode(self, states: Sequence[Latent]) -> list[State | None]:
        return list(states)

    def describe(self) -> dict:
        return {"kind": "oracle"}


class CorruptImagination(OracleImagination):
    """Moves exactly but decodes ``wrong(state)`` instead of the state, for every state that has
    taken at least ``after`` steps since it was encoded (``after=0``: every state): a tracker whose
    decoding is wrong, which must not get a solution accepted."""

    def __init__(self, domain: StateDomain, wrong: Callable[[State], State], after: int = 1) -> None:
        super().__init__(domain)
        self.wrong, self.after = wrong, after

    # the latent state is (state, steps taken since encoding)
    def encode(self, histories: Sequence[History]) -> list[Latent]:
        return [(t, 0) for t in super().encode(histories)]

    def step(self, states: Sequence[Latent], events: Sequence[Event]) -> list[Latent]:
        moved = super().step([s[0] for s in states], events)
        return [(t, s[1] + 1) for t, s in zip(moved, states)]

    def decode(self, states: Sequence[Latent]) -> list[State | None]:
        return [None if t is None else (self.wrong(t) if n >= self.after else t) for t, n in states]

    def describe(self) -> dict:
        return {"kind": "corrupt", "after": self.after}


class RulesOracle:
    """A perfect verdict oracle: replays the history with the domain's own ``apply`` and says 1.0
    exactly for the events that apply. The upper bound of the oracle searcher."""

    def __init__(self, domain: StateDomain) -> None:
        self.domain = domain

    def score(self, histories: Sequence[tuple[State, State, Sequence[Event]]],
              candidates: Sequence[Sequence[Event]]) -> list[list[float]]:
        out = []
        for (start, _, events), events_now in zip(histories, candidates, strict=True):
            state = start
            for event in events:
                state = moved(self.domain, state, event)
            out.append([float(moved(self.domain, state, e) is not None) for e in events_now])
        return out

    def describe(self) -> dict:
        return {"kind": "rules"}


def shortest_distance(domain: Domain, start: Tree, target: Tree) -> int | None:
    """Length of a shortest path from ``start`` to ``target``, None in different classes."""
    space = StateSpace(domain)
    return distances_from(space, space.id(start)).get(space.id(target))
