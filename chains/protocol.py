"""The contract a domain implements, so that sampling, certification, training and search can
take any domain as a value.

A domain has states and events. A history is a start state and a list of events; its state is
where the events lead; two histories are equivalent when they end in the same state, which Lean
certifies. ``StateDomain`` is what the pipeline asks of a domain; ``chains.domains`` is the
registry that names every domain, shipped or one's own. A domain Lean certifies by evaluating its
step function is also ``KernelEvaluated``: its states and events rendered as ``LeanTerm`` values
(constructor applications, never text), from which ``leanbridge.domain_lean`` writes the statements.
"""
from __future__ import annotations

import random
import re
from collections.abc import Hashable, Iterator, Sequence
from dataclasses import dataclass
from typing import Protocol, TypeVar, runtime_checkable

State = TypeVar("State", bound=Hashable)
Event = TypeVar("Event", bound=Hashable)

_NAME = re.compile(r"[A-Za-z][A-Za-z0-9_]*(\.[A-Za-z][A-Za-z0-9_]*)*")


class EventRefused(ValueError):
    """An event that does not apply to a state; the one-line message says why."""


@dataclass(frozen=True)
class LeanTerm:
    """A Lean term as a constant applied to arguments: ``LeanTerm("B.one")``,
    ``LeanTerm("State.mk", (b0, …, b7))``. Names are checked identifiers, so no text a user typed
    reaches a Lean file."""

    head: str
    args: tuple[LeanTerm, ...] = ()

    def __post_init__(self) -> None:
        if not _NAME.fullmatch(self.head):
            raise ValueError(f"{self.head!r:.40} is not a Lean constant name")


@runtime_checkable
class StateDomain(Protocol[State, Event]):
    """What the pipeline asks of a domain. Every method is a pure function of its arguments (and
    of ``rng`` where one is given), so the same seed gives the same data."""

    name: str  # the domain's name in manifests and on the command line

    def describe(self) -> dict:
        """The manifest's ``domain`` object: the name and every parameter that decides the states."""

    # states and events, and their text
    def state_text(self, state: State) -> str: ...
    def parse_state(self, text: str) -> State: ...
    def state_key(self, state: State) -> int:
        """A distinct integer a state (interning)."""
    def event_text(self, event: Event) -> str: ...
    def parse_event(self, text: str) -> Event: ...

    # dynamics
    def apply(self, state: State, event: Event) -> State:
        """The state ``event`` leads to; ``EventRefused`` when it does not apply."""
    def successors(self, state: State) -> Iterator[tuple[Event, State]]:
        """Every event that applies to ``state`` and where it leads."""
    def start_state(self, rng: random.Random) -> State:
        """A start state drawn as the domain's histories draw theirs."""

    # sampling
    def sample_events(self, rng: random.Random, start: State, length: int) -> list[Event]:
        """A random history of ``length`` events from ``start``."""
    def sample_partner(self, rng: random.Random, start: State, events: Sequence[Event]) -> tuple[State, list[Event]]:
        """Another history ending where ``start`` and ``events`` end."""

    # the trackers' tokens
    def vocabulary(self) -> tuple[str, ...]:
        """Every token a start state or an event is read as."""
    def start_tokens(self, state: State) -> list[str]: ...
    def event_tokens(self, event: Event) -> list[str]: ...
    def readout(self) -> tuple[int, ...]:
        """The readout's classes per position: a state is read as ``len(readout())`` tokens."""
    def state_classes(self, state: State) -> list[int]:
        """A state as one class per readout position."""
    def state_of_classes(self, classes: Sequence[int]) -> State:
        """The state whose ``state_classes`` are ``classes`` (a decoded readout); ValueError, in one
        line, when no state has them."""


@runtime_checkable
class Recorded(Protocol[State, Event]):
    """A domain whose certified datasets this package writes and reads: one JSON object a line, a
    history (start state, events) with its certified partners (``chains.domains`` reads a
    manifest's domain)."""

    def parse_record(self, line: str, where: str) -> object:
        """One line of a split, strictly: the domain's own record; DatasetError naming ``where``."""
    def record_histories(self, record) -> tuple[tuple[State, Sequence[Event]], list[tuple[State, Sequence[Event]]]]:
        """A record's history and its partners, each as (start, events)."""


@runtime_checkable
class ShortHistories(Protocol[State, Event]):
    """A domain that names a short history between two states without search (the short
    equivalents of self-distillation, ``stepwise.domain_pairs``); another domain's are searched for
    breadth-first over its ``successors``."""

    def short_history(self, start: State, end: State) -> list[Event] | None:
        """A history of few events from ``start`` to ``end``; None when the domain knows none."""


@runtime_checkable
class UniformStates(Protocol[State]):
    """A domain that draws a state uniformly over all of its states: the start of a training
    history that teaches a step the states it will meet, not only those its start state's
    histories reach (``tracker.fresh``)."""

    def uniform_state(self, rng: random.Random) -> State: ...


@runtime_checkable
class KernelEvaluated(Protocol[State, Event]):
    """A domain Lean certifies by evaluation: its prelude-mode module (importing the core library)
    defines ``step : Event → State → State`` in namespace ``lean_namespace()``, and a step is the
    theorem ``Eq (step e s) s'`` proved by ``rfl`` (``leanbridge.domain_lean``). The rewrite domain
    (congruence proofs from core lemmas) and the programs domain (traces and truth tables) have
    routes of their own."""

    def lean_source(self) -> str:
        """The module's whole text; it begins with ``prelude`` and ``import Core``."""
    def lean_namespace(self) -> str: ...
    def lean_state(self, state: State) -> LeanTerm: ...
    def lean_event(self, event: Event) -> LeanTerm: ...


def run_events(domain: StateDomain, start, events: Sequence) -> list:
    """The states a history visits after each event (``EventRefused`` at the first that does not apply)."""
    states = []
    for event in events:
        start = domain.apply(start, event)
        states.append(start)
    return states
