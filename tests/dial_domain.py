"""A tiny domain written only against ``chains.protocol``: a dial of six positions turned one step
forward, one back, or half way round. docs/guide/bring-your-own-domain.md walks through it; the
tests run it through the protocol's contract, the tracker's tensors and Lean."""
from __future__ import annotations

import random
from collections.abc import Iterator, Sequence

from chains.protocol import EventRefused, LeanTerm

POSITIONS = 6
MOVES = {"turn": 1, "back": -1, "half": 3}  # a move's name -> how far it turns the dial

LEAN = """prelude
import Core

namespace Dial

inductive Pos where
  | p0 | p1 | p2 | p3 | p4 | p5

inductive Move where
  | turn | back | half

/-- The position after a move: one table a move, by the recursors alone. -/
noncomputable def step (m : Move) (p : Pos) : Pos :=
  Move.rec (motive := fun _ => Pos)
    (Pos.rec (motive := fun _ => Pos) Pos.p1 Pos.p2 Pos.p3 Pos.p4 Pos.p5 Pos.p0 p)
    (Pos.rec (motive := fun _ => Pos) Pos.p5 Pos.p0 Pos.p1 Pos.p2 Pos.p3 Pos.p4 p)
    (Pos.rec (motive := fun _ => Pos) Pos.p3 Pos.p4 Pos.p5 Pos.p0 Pos.p1 Pos.p2 p)
    m

end Dial
"""


class Dial:
    """States are positions 0-5, events are move names; every move applies everywhere."""

    name = "dial"

    def describe(self) -> dict:
        return {"name": self.name, "positions": POSITIONS}

    # states and events, and their text
    def state_text(self, state: int) -> str:
        return str(state)

    def parse_state(self, text: str) -> int:
        if text not in {str(p) for p in range(POSITIONS)}:
            raise ValueError(f"{text!r:.20} is not a position (0 to {POSITIONS - 1})")
        return int(text)

    def state_key(self, state: int) -> int:
        return state

    def event_text(self, event: str) -> str:
        return event

    def parse_event(self, text: str) -> str:
        if text not in MOVES:
            raise ValueError(f"{text!r:.20} is not a move ({', '.join(MOVES)})")
        return text

    # dynamics
    def apply(self, state: int, event: str) -> int:
        if event not in MOVES:
            raise EventRefused(f"{event!r:.20} is not a move of the dial")
        return (state + MOVES[event]) % POSITIONS

    def successors(self, state: int) -> Iterator[tuple[str, int]]:
        for move in MOVES:
            yield move, self.apply(state, move)

    def start_state(self, rng: random.Random) -> int:
        return rng.randrange(POSITIONS)

    # sampling
    def sample_events(self, rng: random.Random, start: int, length: int) -> list[str]:
        return [rng.choice(tuple(MOVES)) for _ in range(length)]

    def sample_partner(self, rng: random.Random, start: int, events: Sequence[str]) -> tuple[int, list[str]]:
        """The moves shuffled (the dial's moves commute), then a cancelling turn and back inserted."""
        partner = list(events)
        rng.shuffle(partner)
        at = rng.randint(0, len(partner))
        return start, partner[:at] + ["turn", "back"] + partner[at:]

    # the trackers' tokens
    def vocabulary(self) -> tuple[str, ...]:
        return (*(f"at{p}" for p in range(POSITIONS)), *MOVES)

    def start_tokens(self, state: int) -> list[str]:
        return [f"at{state}"]

    def event_tokens(self, event: str) -> list[str]:
        return [event]

    def readout(self) -> tuple[int, ...]:
        return (POSITIONS,)

    def state_classes(self, state: int) -> list[int]:
        return [state]

    def state_of_classes(self, classes: Sequence[int]) -> int:
        if len(classes) != 1 or not 0 <= classes[0] < POSITIONS:
            raise ValueError(f"classes {list(classes)!r:.40} are not one position of the dial")
        return int(classes[0])

    # what Lean is asked: KernelEvaluated
    def lean_source(self) -> str:
        return LEAN

    def lean_namespace(self) -> str:
        return "Dial"

    def lean_state(self, state: int) -> LeanTerm:
        return LeanTerm(f"Dial.Pos.p{state}")

    def lean_event(self, event: str) -> LeanTerm:
        return LeanTerm(f"Dial.Move.{event}")
