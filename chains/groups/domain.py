"""A group's word problem as a domain: states are group elements, events are generators.

A history starts at the identity; its state is the product of its generators (``chains.groups.group``
fixes the convention), and two histories are equivalent when their words multiply to the same
element. With ``distractor`` the events include ``id``, which changes nothing: histories that
differ only in where it falls take the same path through the group. The domain implements
``chains.protocol.StateDomain``, ``KernelEvaluated`` (Lean evaluates the group's module,
``chains.groups.lean``), ``ShortHistories`` (a shortest word between two elements, read off the
Cayley graph) and ``chains.registers.PermutedPositions`` (a generator permutes the positions' points,
so the registers arch holds a register per position).
"""
from __future__ import annotations

import random
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import ClassVar

from chains.groups.group import Group, Perm, identity, inverse, is_permutation, product
from chains.groups.lean import DISTRACTOR, lean_source, namespace
from chains.protocol import EventRefused, LeanTerm

PARTNER_WORDS = ("random", "reduced", "path")  # GroupDomain.partner_words


@dataclass(frozen=True)
class GroupDomain:
    """The word problem of ``group``, its generators as events (and ``id`` with ``distractor``)."""

    group: Group
    distractor: bool = False  # draw the event id, which changes nothing, among the generators
    # a partner is a random equivalent word of any length (random), the history's reduced form
    # (reduced), or (path, with the distractor) the history's own generators in their order with its
    # distractors moved: the kinds of partner the group comparison sets side by side, the last its control
    partner_words: str = "random"

    name: ClassVar[str] = "groups"

    def __post_init__(self) -> None:
        if self.partner_words not in PARTNER_WORDS:
            raise ValueError(f"partner_words {self.partner_words!r:.20} is not one of {', '.join(PARTNER_WORDS)}")
        if self.partner_words == "path" and not self.distractor:
            raise ValueError("partner_words path moves the distractors: it needs the distractor")

    def describe(self) -> dict:
        described = {"name": self.name, "group": self.group.name, "points": self.group.points,
                     "generators": {name: list(g) for name, g in self.group.generators}, "distractor": self.distractor}
        # recorded only when not the default, so that a dataset certified before the choice existed
        # still describes its domain as it did
        return described if self.partner_words == "random" else {**described, "partner_words": self.partner_words}

    @property
    def events(self) -> tuple[str, ...]:
        """Every event, in the order histories draw them."""
        return (*(name for name, _ in self.group.generators), *((DISTRACTOR,) if self.distractor else ()))

    def reduced(self, events: Sequence[str]) -> list[str]:
        """A word's reduced form: the canonical shortest word for the element it multiplies to."""
        return self.group.cayley.word(self._run(identity(self.group.points), events))

    # states and events, and their text
    def state_text(self, state: Perm) -> str:
        return "".join(map(str, state))  # one-line notation: at most ten points, one digit each

    def parse_state(self, text: str) -> Perm:
        state = tuple(int(c) for c in text) if text.isascii() and text.isdigit() else ()
        if state not in self.group.cayley.index:
            raise ValueError(f"{text!r:.20} is not an element of {self.group.name} (its {self.group.points} "
                             f"points' images, one digit each, e.g. {self.state_text(identity(self.group.points))})")
        return state

    def state_key(self, state: Perm) -> int:
        return self.group.cayley.index[state]

    def event_text(self, event: str) -> str:
        return event

    def parse_event(self, text: str) -> str:
        if text not in self.events:
            raise ValueError(f"{text!r:.20} is not an event of {self.group.name} ({', '.join(self.events)})")
        return text

    # dynamics
    def apply(self, state: Perm, event: str) -> Perm:
        if event not in self.events:
            raise EventRefused(f"{str(event)!r:.20} is not an event of {self.group.name} ({', '.join(self.events)})")
        return state if event == DISTRACTOR else product(state, self.group.generator(event))

    def _run(self, state: Perm, events: Sequence[str]) -> Perm:
        for event in events:
            state = self.apply(state, event)
        return state

    def successors(self, state: Perm) -> Iterator[tuple[str, Perm]]:
        for event in self.events:
            yield event, self.apply(state, event)

    def start_state(self, rng: random.Random) -> Perm:
        return identity(self.group.points)  # the word problem: every word is read from the identity

    def uniform_state(self, rng: random.Random) -> Perm:
        """An element drawn uniformly over the group (``chains.protocol.UniformStates``)."""
        return rng.choice(self.group.cayley.elements)

    # sampling
    def sample_events(self, rng: random.Random, start: Perm, length: int) -> list[str]:
        return [rng.choice(self.events) for _ in range(length)]

    def sample_partner(self, rng: random.Random, start: Perm, events: Sequence[str]) -> tuple[Perm, list[str]]:
        """A random word of 0 to ``len(events)`` events, then a random shortest word from where it
        leads to where ``events`` lead: equivalent words of every length, the reduced forms among them.
        With ``partner_words`` reduced: the history's reduced form (``reduced``), drawing nothing; with
        path: the same path through the group, the history's generators in their order and as many
        distractors at places drawn anew (a word of the same length)."""
        if self.partner_words == "reduced":
            return start, self.reduced(events)
        if self.partner_words == "path":
            moves = [e for e in events if e != DISTRACTOR]
            places = set(rng.sample(range(len(events)), len(events) - len(moves)))  # where the distractors go
            it = iter(moves)
            return start, [DISTRACTOR if i in places else next(it) for i in range(len(events))]
        end = self._run(start, events)
        prefix = self.sample_events(rng, start, rng.randint(0, len(events)))
        return start, [*prefix, *self._geodesic(rng, self._run(start, prefix), end)]

    def _geodesic(self, rng: random.Random, here: Perm, end: Perm) -> list[str]:
        """A shortest word from ``here`` to ``end``, each step drawn among the generators that keep it shortest."""
        distance = self.group.cayley.distance
        rest = product(inverse(here), end)  # what is left to multiply by
        word = []
        while distance[rest] > 0:
            closer = [name for name, g in self.group.generators
                      if distance[product(inverse(g), rest)] == distance[rest] - 1]
            name = rng.choice(closer)
            word.append(name)
            rest = product(inverse(self.group.generator(name)), rest)
        return word

    def short_history(self, start: Perm, end: Perm) -> list[str] | None:
        """The canonical shortest word from ``start`` to ``end``; None when either is not an element."""
        index = self.group.cayley.index
        if start not in index or end not in index:
            return None
        return self.group.cayley.word(product(inverse(start), end))

    # the trackers' tokens
    def vocabulary(self) -> tuple[str, ...]:
        return (*(f"x{i}" for i in range(self.group.points)), *self.events)

    def start_tokens(self, state: Perm) -> list[str]:
        return [f"x{i}" for i in state]

    def event_tokens(self, event: str) -> list[str]:
        return [event]

    def readout(self) -> tuple[int, ...]:
        return (self.group.points,) * self.group.points  # the point at each position

    def state_classes(self, state: Perm) -> list[int]:
        return list(state)

    # the registers' geometry: chains.registers.PermutedPositions
    def position_moves(self, tokens: Sequence[str]) -> tuple[int, ...] | None:
        """A generator's permutation (position i takes the point at position g(i), as ``apply``
        multiplies), the identity for the distractor; None for tokens that are not one event."""
        if len(tokens) != 1 or tokens[0] not in self.events:
            return None
        return identity(self.group.points) if tokens[0] == DISTRACTOR else self.group.generator(tokens[0])

    def state_of_classes(self, classes: Sequence[int]) -> Perm:
        state = tuple(int(c) for c in classes)
        if state not in self.group.cayley.index:
            what = (f"an element of {self.group.name}" if is_permutation(state, self.group.points)
                    else f"a permutation of 0..{self.group.points - 1}")
            raise ValueError(f"classes {list(state)!r:.40} are not {what}")
        return state

    # what Lean is asked: KernelEvaluated
    def lean_source(self) -> str:
        return lean_source(self.group)

    def lean_namespace(self) -> str:
        return namespace(self.group)

    def lean_state(self, state: Perm) -> LeanTerm:
        ns = namespace(self.group)
        return LeanTerm(f"{ns}.Elem.mk", tuple(LeanTerm(f"{ns}.Pt.x{i}") for i in state))

    def lean_event(self, event: str) -> LeanTerm:
        return LeanTerm(f"{namespace(self.group)}.Gen.{self.parse_event(event)}")
