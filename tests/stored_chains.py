"""Stored chains served to ``tracker.stream.stream`` in blocks, as its drawn chains are
(``DrawnChains``, ``DomainChains``): a dataset split's rewrite chains (``StoredChains``) and given
histories of a ``StateDomain`` (``StoredDomainChains``). The tests stream them to check that the
streamed path judges stored chains exactly as the stored-chain evaluation does."""
from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np

from chains.manifest import DatasetError
from chains.rewrite.dataset import read_split
from chains.rewrite.space import StateSpace
from tracker.domain_data import DomainBuilder
from tracker.stream import StreamError


class StoredBlocks:
    """Stored histories of one length served in blocks, as drawn ones are: ``states`` (N, L + 1)
    state ids and ``events`` (N, L) event ids."""

    def __init__(self, states: np.ndarray, events: np.ndarray) -> None:
        self.states, self.events = states, events
        self.done = 0
        self.here = list(self.states[:, 0])

    @property
    def count(self) -> int:
        return len(self.states)

    @property
    def length(self) -> int:
        return self.events.shape[1]

    def block(self, steps: int) -> tuple[np.ndarray, np.ndarray]:
        """The next ``steps`` events of every history and the states around them."""
        if self.done + steps > self.length:
            raise StreamError(f"the stored histories hold {self.length} steps, not {self.done + steps}")
        states = self.states[:, self.done:self.done + steps + 1]
        events = self.events[:, self.done:self.done + steps]
        self.done += steps
        return states, events


class StoredChains(StoredBlocks):
    """The chains of a dataset split (equal lengths)."""

    def __init__(self, space: StateSpace, path: Path, count: int | None = None) -> None:
        self.space = space
        walks = []
        for where, record in read_split(path, space.domain):
            if count is not None and len(walks) == count:
                break
            states, ids = [space.id(record.start)], []
            for k, event in enumerate(record.events):
                moves = dict(zip(*space.moves(states[-1])))
                e = space.event_id(event)
                if e not in moves:
                    raise DatasetError(f"{where} step {k}: event {event} does not apply")
                ids.append(e)
                states.append(moves[e])
            walks.append((states, ids))
        if not walks or len({len(ids) for _, ids in walks}) != 1:
            raise DatasetError(f"{path}: no chains, or chains of different lengths")
        super().__init__(np.array([s for s, _ in walks], dtype=np.int64),  # (N, L + 1)
                         np.array([e for _, e in walks], dtype=np.int64))  # (N, L)


class StoredDomainChains(StoredBlocks):
    """Given histories of one length (start, events): a dataset's test programs."""

    def __init__(self, space: DomainBuilder, histories: Sequence[tuple[object, Sequence]]) -> None:
        if not histories or len({len(events) for _, events in histories}) != 1:
            raise ValueError("no histories, or histories of different lengths")
        self.space = space
        rows = [space.history(start, events) for start, events in histories]  # (items, state ids) each
        super().__init__(np.array([ids for _, ids in rows], dtype=np.int64),  # (N, L + 1)
                         np.array([[i for _, i in items[1:]] for items, _ in rows], dtype=np.int64))  # (N, L)
