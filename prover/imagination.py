"""What the imagination searcher needs from a tracker, and the imaginations it can use.

An ``Imagination`` reads a history (a start state and its events) into a latent state, moves
latent states by events, and decodes latent states into the domain's states (trees on rewrite
chains). The searcher never looks inside a latent state; it batches many of them per call.

- ``TrackerImagination``: a trained tracker from a ``train-tracker`` run directory, a thin
  adapter over ``tracker.inference`` (``load_run``, ``TrackedRun``), which loads it and reads,
  moves and decodes its states in batches.
"""
from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

if TYPE_CHECKING:  # torch is imported only when a tracker is loaded
    from tracker.inference import TrackedRun

Latent = Any  # opaque to the searcher
State = Any  # a state of the domain searched (a tree on rewrite chains)
Event = Any  # an event of that domain
History = tuple[State, Sequence[Event]]  # (start state, events read after it)


@runtime_checkable
class Imagination(Protocol):
    def encode(self, histories: Sequence[History]) -> list[Latent]:
        """The latent state after reading each history."""

    def step(self, states: Sequence[Latent], events: Sequence[Event]) -> list[Latent]:
        """``states[i]`` moved by ``events[i]``."""

    def decode(self, states: Sequence[Latent]) -> list[State | None]:
        """The state each latent state stands for (None when it reads as no state)."""

    def describe(self) -> dict:
        """Identity for the report (kind, run directory, dataset it was trained on, ...)."""


class TrackerUnavailable(Exception):
    """No usable tracker at the given place; the message says why and what to run."""


class TrackerImagination:
    """A trained tracker (``tracker.inference.TrackedRun``) as an imagination: a thin adapter.

    Loading, reading items, moving states and decoding are the run's own batched methods
    (``encode_batch``, ``step_batch``, ``decode_batch``); what a latent state holds is the run's
    business (for the slot recurrence, the slot ``w`` (C,) before its output norm). The start
    tree's Polish tokens are the first item, then one item per event, exactly as training fed
    them; any tree or event of the domain can be read, not only those of the dataset.
    """

    def __init__(self, run: TrackedRun) -> None:
        self.run = run

    @property
    def model(self):
        """The run's torch module (for tests that compare with its own forward pass)."""
        return self.run.model

    def encode(self, histories: Sequence[History]) -> list[Latent]:
        return self.run.encode_batch(histories)

    def step(self, states: Sequence[Latent], events: Sequence[Event]) -> list[Latent]:
        return self.run.step_batch(states, events)

    def decode(self, states: Sequence[Latent]) -> list[State | None]:
        return self.run.decode_batch(states)

    def describe(self) -> dict:
        return {**self.run.describe(), "device": str(self.run.device)}


def load_tracker(run_dir: Path, data_dir: Path, device: str = "cpu") -> Imagination:
    """The tracker saved in ``run_dir``, checked against the dataset at ``data_dir``, on
    ``device`` (a torch device, already resolved); TrackerUnavailable (one line) when it
    cannot be used."""
    try:
        from tracker.inference import RunUnavailable, load_run
    except ImportError as e:
        raise TrackerUnavailable(f"the tracker package cannot be imported ({e})") from None
    try:
        return TrackerImagination(load_run(Path(run_dir), Path(data_dir), device))
    except RunUnavailable as e:
        raise TrackerUnavailable(str(e)) from None
