"""The rewrite domain as a ``chains.protocol.StateDomain``: states are trees (``chains.rewrite.trees``),
events are rules at positions (``chains.rewrite.rules``), tier 1 or 2 over two to six atoms.

The rewrite domain's datasets, tensors and certificates come from its own modules (``chains.rewrite.sampling``,
``tracker.data``, ``leanbridge.render``), whose bytes registered runs depend on; this view gives the
same dynamics to code written against the protocol. An event rewrites the subtree at one node
(``chains.registers.SubtreeMoves``: the registers arch holds a register per tree position, by path)."""
from __future__ import annotations

import random
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from functools import cached_property

from chains.protocol import EventRefused
from chains.rewrite.dataset import ChainRecord, parse_chain_line
from chains.rewrite.rules import Event, EventSyntaxError, apply, successors
from chains.rewrite.sampling import random_walk, sample_partner
from chains.rewrite.space import Domain, StateSpace
from chains.rewrite.trees import OPS, Tree, TreeSyntaxError, parse_polish, parse_tokens, polish, random_tree, tokens


@dataclass(frozen=True)
class RewriteDomain:
    domain: Domain = field(default_factory=Domain)
    name: str = "rewrite"

    @cached_property
    def _space(self) -> StateSpace:
        return StateSpace(self.domain)

    def describe(self) -> dict:
        return {"name": self.name, "atoms": self.domain.atoms, "tier": self.domain.tier,
                "max_size": self.domain.size_bound}

    def state_text(self, state: Tree) -> str:
        return polish(state)

    def parse_state(self, text: str) -> Tree:
        try:
            return parse_polish(text, self.domain.atom_names)
        except TreeSyntaxError as e:
            raise ValueError(str(e)) from None

    def state_key(self, state: Tree) -> int:
        return int.from_bytes(polish(state).encode(), "big")

    def event_text(self, event: Event) -> str:
        return str(event)

    def parse_event(self, text: str) -> Event:
        try:
            return Event.parse(text)
        except EventSyntaxError as e:
            raise ValueError(str(e)) from None

    def apply(self, state: Tree, event: Event) -> Tree:
        after = apply(state, event, self.domain.size_bound) if event.rule in self.domain.rules else None
        if after is None:
            raise EventRefused(f"{event} does not apply to {polish(state)}")
        return after

    def successors(self, state: Tree) -> Iterator[tuple[Event, Tree]]:
        yield from successors(state, self.domain.rules, self.domain.size_bound)

    def start_state(self, rng: random.Random) -> Tree:
        return random_tree(rng, self.domain.atom_names)

    def sample_events(self, rng: random.Random, start: Tree, length: int) -> list[Event]:
        return list(random_walk(self._space, rng, self._space.id(start), length).events)

    def sample_partner(self, rng: random.Random, start: Tree, events: Sequence[Event]) -> tuple[Tree, list[Event]]:
        end = start
        for event in events:
            end = self.apply(end, event)
        walk = sample_partner(self._space, rng, self._space.id(end), rng.randint(0, len(events)))
        return self._space.trees[walk.states[0]], list(walk.events)

    def vocabulary(self) -> tuple[str, ...]:
        return (*OPS, *self.domain.atom_names, *self.domain.rules, "0", "1")

    def start_tokens(self, state: Tree) -> list[str]:
        return tokens(state)

    def event_tokens(self, event: Event) -> list[str]:
        return [event.rule, *event.path]

    def subtree_moved(self, tokens: Sequence[str]) -> str | None:
        """The path of the node an event rewrites, read off its tokens (``chains.registers.SubtreeMoves``);
        None for tokens that are not an event's (a tree's)."""
        if not tokens or tokens[0] not in self.domain.rules or not set(tokens[1:]) <= {"0", "1"}:
            return None
        return "".join(tokens[1:])

    def readout(self) -> tuple[int, ...]:
        """One position a token of the largest tree, each a class per operator, atom and padding."""
        size = self.domain.size_bound or 2 * self.domain.atoms - 1
        return (1 + len(OPS) + self.domain.atoms,) * size

    def state_classes(self, state: Tree) -> list[int]:
        index = {t: 1 + i for i, t in enumerate((*OPS, *self.domain.atom_names))}  # 0: past the tree's end
        ids = [index[t] for t in tokens(state)]
        return ids + [0] * (len(self.readout()) - len(ids))

    def parse_record(self, line: str, where: str) -> ChainRecord:
        return parse_chain_line(line, self.domain, where)

    def record_histories(self, record: ChainRecord) -> tuple[tuple[Tree, Sequence[Event]],
                                                             list[tuple[Tree, Sequence[Event]]]]:
        return (record.start, record.events), [(mate.start, mate.events) for mate in record.partners]

    def state_of_classes(self, classes: Sequence[int]) -> Tree:
        names = (*OPS, *self.domain.atom_names)
        ids = list(classes)
        while ids and ids[-1] == 0:
            ids.pop()
        if not all(0 < c <= len(names) for c in ids):
            raise ValueError(f"classes {ids!r:.60} are not a tree's tokens followed by padding")
        try:
            return parse_tokens([names[c - 1] for c in ids], self.domain.atom_names)
        except TreeSyntaxError as e:
            raise ValueError(f"classes {ids!r:.60} are not one tree: {e}") from None
