"""The streamed evaluation (``tracker.stream``) on a dataset of a ``chains.protocol.StateDomain``
(programs): the domain's chains drawn from a seed, and the tracker's token rows and readout targets.

A space (``tracker.domain_data.DomainBuilder``) interns the states and events the chains meet, so
that a block of chains is two arrays of ids as it is on rewrite chains and the stream's loop, its
stepper and its saved state serve both. Chain n is drawn with its own generator
``random.Random(f"{seed}:stream:{n}")``: the domain's start state, then the domain's
``sample_events`` a block at a time (on programs, ``chains.programs.sampling.random_program``,
whose draws continue across blocks: the blocks together are one program).

On programs every step is certified by the trace questions a programs dataset is certified with
(``leanbridge.confirm.ProgramsCertifier``).
"""
from __future__ import annotations

import random
from collections import Counter
from collections.abc import Sequence

import numpy as np
import torch

from chains.protocol import StateDomain
from tracker.domain_data import DomainBuilder
from tracker.domain_run import DomainRun


class DomainChains:
    """``count`` chains of ``space.domain`` drawn from ``seed`` (see the module's docstring), a block
    at a time; each chain's state at every step of ``marks`` is kept (as text) for the report's floor."""

    def __init__(self, space: DomainBuilder, seed: int, count: int, marks: Sequence[int] = ()) -> None:
        self.space, self.domain = space, space.domain
        self.rngs = [random.Random(f"{seed}:stream:{n}") for n in range(count)]
        self.states = [self.domain.start_state(rng) for rng in self.rngs]  # each chain's current state
        self.here = [space.state(s) for s in self.states]  # and its id
        self.drawn = 0  # steps drawn so far
        self.marks = sorted(set(marks))
        self.at: dict[str, list[str]] = {}  # str(step) -> each chain's state there, as text

    @property
    def count(self) -> int:
        return len(self.rngs)

    def block(self, steps: int) -> tuple[np.ndarray, np.ndarray]:
        """(states (N, steps + 1): the state before the block then after each step; events (N, steps))."""
        states = np.empty((self.count, steps + 1), dtype=np.int64)
        events = np.empty((self.count, steps), dtype=np.int64)
        space, domain = self.space, self.domain
        for n, rng in enumerate(self.rngs):
            state, row = self.states[n], [self.here[n]]
            drawn = domain.sample_events(rng, state, steps)
            for k, event in enumerate(drawn):
                state = domain.apply(state, event)
                row.append(space.state(state))
                events[n, k] = space.event(event)
            states[n] = row
            self.states[n], self.here[n] = state, row[-1]
        for mark in self.marks:
            if self.drawn < mark <= self.drawn + steps:
                self.at[str(mark)] = [domain.state_text(space.states[s]) for s in states[:, mark - self.drawn].tolist()]
        self.drawn += steps
        return states, events

    def saved(self) -> dict:
        """Each chain's state (text) and generator, the steps drawn and the states kept at the marks."""
        return {"states": [self.domain.state_text(s) for s in self.states],
                "rngs": [rng.getstate() for rng in self.rngs], "drawn": self.drawn, "at": self.at}

    def restore(self, saved: dict) -> None:
        self.states = [self.domain.parse_state(text) for text in saved["states"]]
        self.here = [self.space.state(s) for s in self.states]
        for rng, state in zip(self.rngs, saved["rngs"]):
            rng.setstate(generator_state(state))
        self.drawn, self.at = saved["drawn"], {k: list(v) for k, v in saved["at"].items()}


def generator_state(value):
    """A generator state as ``random.Random.setstate`` takes it (a saved state's lists back to tuples)."""
    return tuple(generator_state(v) for v in value) if isinstance(value, (list, tuple)) else value


class DomainRows:
    """What ``tracker.stream.Stepper`` reads of a space for a ``DomainRun``: the token rows of its
    events and start states as the run reads them, and each state's readout target (its classes as
    output ids: ``o_c`` is c + 1, so PAD, id 0, is never right)."""

    def __init__(self, run: DomainRun, space: DomainBuilder) -> None:
        self.run, self.space, self.domain = run, space, space.domain
        self.states, self.events = space.states, space.events  # interned so far; they grow

    def event_rows(self, events: Sequence) -> torch.Tensor:
        """(U, E) token ids of ``events``."""
        return self.run._items([self.domain.event_tokens(e) for e in events])

    def start_rows(self, state_ids: Sequence[int]) -> torch.Tensor:
        """(N, E) token ids of each state read as a start."""
        return self.run._items([self.domain.start_tokens(self.space.states[s]) for s in state_ids])

    def targets(self, states: Sequence) -> torch.Tensor:
        """(R, P) output ids of each state's classes."""
        classes = [self.domain.state_classes(s) for s in states]
        return torch.tensor(classes, dtype=torch.long).reshape(len(states), -1) + 1


def commonest_floor(at: dict[str, list[str]]) -> dict[str, float]:
    """Per step of ``at`` (each chain's state there, as text): the share of chains whose whole state
    is the one made of each variable's commonest value among them (ties to the smallest value), the
    predict-the-commonest-value floor a tracker must beat."""
    out = {}
    for step, texts in at.items():
        commonest = "".join(max(sorted(Counter(column).items()), key=lambda kv: kv[1])[0] for column in zip(*texts))
        out[step] = sum(text == commonest for text in texts) / len(texts)
    return out


def commonest_state_floor(at: dict[str, list[str]]) -> dict[str, float]:
    """Per step of ``at`` (each chain's state there, as text): the share of chains at the commonest
    state among them, the floor of a tracker that always names it (a domain of one's own, whose
    states' text has no columns to read)."""
    return {step: max(Counter(texts).values()) / len(texts) for step, texts in at.items()}


def describe_sampling(domain: StateDomain) -> str:
    """How the stream draws a chain of ``domain``, for the report."""
    return (f"chain n: random.Random(f'{{seed}}:stream:{{n}}'); the {domain.name} domain's start state, then its "
            "sample_events a block at a time (programs: chains.programs.sampling.random_program)")
