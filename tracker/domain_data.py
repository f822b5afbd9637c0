"""A dataset of any ``chains.protocol.StateDomain`` as the tracker's tensors.

The tensors mean what ``tracker.data`` documents for rewrite chains: an item is what the tracker
reads at one step (a start state's tokens, or one event's), a state's readout is one output
class a position (``domain.readout()``), and every history is a row of item ids with the state
id after each step. Output ids come first in the vocabulary: 0 is padding, then ``o0 … o{n-1}``
(the readout's classes), then the domain's input tokens.

The programs domain is read this way; the rewrite domain has its own loader (``tracker.data``),
whose tensors its cached files and registered checkpoints hold bit for bit.
"""
from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import torch

from chains.protocol import EventRefused, StateDomain
from tracker.packing import PAD, Row, pack, successor_tables

SUCCESSOR_EVENTS = 32  # events tried from every training end state by the metric loss's look-ahead


@dataclass(frozen=True)
class DomainVocab:
    """Token ids shared by every model of one domain: PAD, the readout's output classes, then the
    domain's input tokens (``tracker.data.Vocab``'s interface)."""

    classes: int  # the most output classes of any readout position
    inputs: tuple[str, ...]  # the domain's vocabulary
    # the domain: its name (as a cached dataset records it), or the domain itself where one is at hand
    # (a loaded dataset's, a loaded run's), which the models built for it can ask (the registers'
    # geometry, chains.registers)
    domain: str | StateDomain = ""

    @property
    def tokens(self) -> tuple[str, ...]:
        return (PAD, *(f"o{c}" for c in range(self.classes)), *self.inputs)

    @property
    def n_out(self) -> int:
        return 1 + self.classes

    def output_ids(self, classes: Sequence[int]) -> list[int]:
        """A readout's classes as output ids: class c is ``o{c}``, id c + 1 (0 is padding)."""
        return [c + 1 for c in classes]

    def classes_of(self, ids: Sequence[int]) -> list[int]:
        return [i - 1 for i in ids]

    @property
    def size(self) -> int:
        return len(self.tokens)

    def index(self) -> dict[str, int]:
        return {tok: i for i, tok in enumerate(self.tokens)}


class DomainBuilder:
    """Interns a domain's states and events while its histories are replayed."""

    def __init__(self, domain: StateDomain) -> None:
        self.domain = domain
        self.states: list = []
        self.state_id: dict[int, int] = {}  # domain.state_key -> state id
        self.events: list = []
        self.event_id: dict = {}

    def state(self, state) -> int:
        key = self.domain.state_key(state)
        if key not in self.state_id:
            self.state_id[key] = len(self.states)
            self.states.append(state)
        return self.state_id[key]

    def event(self, event) -> int:
        if event not in self.event_id:
            self.event_id[event] = len(self.events)
            self.events.append(event)
        return self.event_id[event]

    def history(self, start, events: Sequence) -> tuple[list[tuple[str, int]], list[int]]:
        """(items, states after each step): items are ("tree", state id) for the start, then
        ("event", event id), as ``tracker.packing.pack`` reads them."""
        here = self.state(start)
        items, states = [("tree", here)], [here]
        state = start
        for event in events:
            state = self.domain.apply(state, event)
            here = self.state(state)
            items.append(("event", self.event(event)))
            states.append(here)
        return items, states

    def tables(self, vocab: DomainVocab) -> tuple[torch.Tensor, torch.Tensor]:
        """(item_tokens (1 + R + events, E), state_tokens (R, P)) as ``tracker.data._item_tables``."""
        index = vocab.index()
        starts = [[index[t] for t in self.domain.start_tokens(s)] for s in self.states]
        events = [[index[t] for t in self.domain.event_tokens(e)] for e in self.events]
        width = max(map(len, starts + events))
        items = torch.zeros(1 + len(starts) + len(events), width, dtype=torch.long)
        for r, ids in enumerate(starts + events):
            items[1 + r, :len(ids)] = torch.tensor(ids)
        classes = torch.tensor([self.domain.state_classes(s) for s in self.states], dtype=torch.long)  # (R, P)
        return items, classes + 1  # output ids: o_c is c + 1


def build_tensors(domain: StateDomain, splits: dict[str, Sequence[tuple[object, Sequence, list[tuple[object, Sequence]]]]],
                  first_held: Callable[[Sequence], int | None] | None = None) -> dict:
    """The cache blob of ``tracker.data`` (item and state tables, packed splits, successor tables)
    for ``splits``: file name -> (start, events, [(partner start, partner events)]) per chain.
    ``first_held(events)``, with a held-out protocol of events or pairs, gives the index of the
    event that completes a history's first held-out occurrence (None: none)."""
    builder = DomainBuilder(domain)
    rows: dict[str, list[Row]] = {}
    for name, chains in splits.items():
        rows[name] = [(builder.history(start, events), [builder.history(s, e) for s, e in partners])
                      for start, events, partners in chains]
    train_rows = rows.pop("train.jsonl")
    seen = {r for chain, mates in train_rows for _, states in [chain, *mates] for r in states}
    succ = look_ahead(domain, builder, sorted({chain[1][-1] for chain, _ in train_rows}))
    n_states = len(builder.states)  # every state interned: item ids below are final
    vocab = DomainVocab(max(domain.readout()), domain.vocabulary(), domain.name)
    items, state_tokens = builder.tables(vocab)
    tests = {}
    for name, split_rows in rows.items():
        split = pack(split_rows, n_states, with_trees=False)
        split["end_seen"] = torch.tensor([chain[1][-1] in seen for chain, _ in split_rows], dtype=torch.bool)
        if first_held is not None:
            firsts = [first_held([builder.events[i] for _, i in chain[0][1:]]) for chain, _ in split_rows]
            firsts = [None if k is None else k + 1 for k in firsts]  # item 0 is the start
            split["first_heldout"] = torch.tensor([-1 if k is None else k for k in firsts], dtype=torch.long)
            split["first_heldout_tree"] = torch.tensor([-1 if k is None else chain[1][k]
                                                        for k, (chain, _) in zip(firsts, split_rows)], dtype=torch.long)
        tests[int(name[len("test-"):-len(".jsonl")])] = split
    succ_items, succ_trees = successor_tables(succ, n_states)
    return {"vocab": {"classes": vocab.classes, "inputs": list(vocab.inputs), "domain": vocab.domain},
            "item_tokens": items, "tree_tokens": state_tokens, "tree_items": torch.arange(1, n_states + 1),
            "train": pack(train_rows, n_states, with_trees=True), "tests": tests,
            "succ_items": succ_items, "succ_trees": succ_trees,
            "trees": [domain.state_text(s) for s in builder.states]}


def look_ahead(domain: StateDomain, builder: DomainBuilder, ends: Sequence[int]) -> dict[int, list[tuple[int, int]]]:
    """The metric loss's one-step look-ahead: from each end state id, (event id, state id after it)
    for those of the first SUCCESSOR_EVENTS events interned that apply."""
    probe = builder.events[:SUCCESSOR_EVENTS]
    return {r: [(builder.event(e), builder.state(after)) for e, after in _applying(domain, builder.states[r], probe)]
            for r in ends}


def _applying(domain: StateDomain, state, events: Sequence) -> list[tuple[object, object]]:
    """(event, state after it) for each of ``events`` that applies to ``state``."""
    out = []
    for event in events:
        try:
            out.append((event, domain.apply(state, event)))
        except EventRefused:
            continue
    return out
