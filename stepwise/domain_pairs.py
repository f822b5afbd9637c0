"""The pairs of Nerode self-distillation over any domain but rewrite trees (``stepwise.distill.PairSource``).

u is a history drawn by the domain's own sampling (``start_state``, then ``sample_events``), as
its datasets draw theirs; v is a short history from the same start to u's end: the domain's own
(``chains.protocol.ShortHistories``; on programs one constant assignment for each variable that
differs) or, for a domain without one, a shortest history found breadth-first over its
``successors`` within n events; w is drawn by the domain's sampling after u's end and cut where an
event does not apply after v's, of 1 to n - |v| events, so that the teacher reads at most n events.
The control's v is a history of 1 to n events drawn from the start that ends elsewhere than u.

Every step of u, v and w (after u and after v) is certified through the store by the domain's
certifier (``leanbridge.confirm.claim_certifier``: programs by trace questions, a domain of one's
own by its step statements) before a pair is used.
"""
from __future__ import annotations

import random

from chains.protocol import EventRefused, ShortHistories, StateDomain, run_events
from leanbridge.confirm import ClaimCertifier, walk_blocks
from stepwise.distill import DistillPair, LongChain
from tracker.domain_data import DomainBuilder

ATTEMPTS = 100  # cuts tried for one pair before the domain is judged to offer no short history for it
SEARCHED = 100_000  # states a breadth-first search for short histories from one start visits at most


class DomainPairs:
    """Certified pairs over one domain (see the module), interned by ``space`` for ``certifier``."""

    def __init__(self, domain: StateDomain, base: int, certifier: ClaimCertifier, space: DomainBuilder) -> None:
        self.domain, self.base, self.certifier, self.space = domain, base, certifier, space
        self._parents: dict[int, dict] = {}  # start's key -> state's key -> (state before, event), breadth-first

    def shortcut(self, start, end) -> tuple | None:
        """A short history (at most n events) from ``start`` to ``end``, or None where none is known;
        ValueError when the domain's own short history does not end at ``end``."""
        if isinstance(self.domain, ShortHistories):
            events = self.domain.short_history(start, end)
            if events is None or len(events) > self.base:
                return None
            reached = run_events(self.domain, start, events)[-1] if events else start
            if reached != end:
                raise ValueError(f"the {self.domain.name} domain's short history from {self.domain.state_text(start)} "
                                 f"ends at {self.domain.state_text(reached)}, not {self.domain.state_text(end)}")
            return tuple(events)
        return self._searched(start, end)

    def _searched(self, start, end) -> tuple | None:
        key = self.domain.state_key
        parents = self._parents.get(key(start))
        if parents is None:
            parents, frontier = {key(start): None}, [start]
            for _ in range(self.base):
                reached = []
                for state in frontier:
                    for event, after in self.domain.successors(state):
                        if key(after) not in parents and len(parents) < SEARCHED:
                            parents[key(after)] = (state, event)
                            reached.append(after)
                frontier = reached
            self._parents[key(start)] = parents
        if key(end) not in parents:
            return None
        events, here = [], key(end)
        while parents[here] is not None:
            before, event = parents[here]
            events.append(event)
            here = key(before)
        return tuple(reversed(events))

    def elsewhere(self, rng: random.Random, start, end) -> tuple | None:
        """A history of 1 to n events drawn from ``start`` that ends elsewhere than ``end``, or None."""
        events = tuple(self.domain.sample_events(rng, start, rng.randint(1, self.base)))
        return events if run_events(self.domain, start, events)[-1] != end else None

    def joint(self, rng: random.Random, a, b, length: int) -> tuple:
        """Up to ``length`` events drawn after ``a`` that apply after ``b`` in turn too (fewer where
        one does not)."""
        events = []
        for event in self.domain.sample_events(rng, a, length):
            try:
                b = self.domain.apply(b, event)
            except EventRefused:
                break
            events.append(event)
        return tuple(events)

    def _pair(self, rng: random.Random, n: int, chain: LongChain, lengths: tuple[int, int], control: bool
              ) -> DistillPair:
        start = chain.states[0]
        for _ in range(ATTEMPTS):
            cut = rng.randint(*lengths)
            end = chain.states[cut]
            short = self.elsewhere(rng, start, end) if control else self.shortcut(start, end)
            if short is None:
                continue
            short_states = (start, *run_events(self.domain, start, short))
            then = self.joint(rng, end, short_states[-1], rng.randint(1, max(1, self.base - len(short))))
            if then:
                return DistillPair(n, cut, end, short_states, short, then)
        what = "ending elsewhere" if control else "to the end of a long one"
        raise ValueError(f"the {self.domain.name} domain offers no history of at most {self.base} events {what} "
                         f"from {self.domain.state_text(start)} ({ATTEMPTS} cuts tried)")

    def draw(self, rng: random.Random, chains: int, cuts: int, lengths: tuple[int, int], control: bool = False
             ) -> tuple[list[LongChain], list[DistillPair]]:
        """``chains`` histories of ``lengths[1] + 1`` events, each cut after ``cuts`` random numbers of
        events in ``lengths``: one pair per cut, certified (see the module)."""
        walks, pairs = [], []
        for n in range(chains):
            start = self.domain.start_state(rng)
            events = tuple(self.domain.sample_events(rng, start, lengths[1] + 1))
            walks.append(LongChain((start, *run_events(self.domain, start, events)), events))
            pairs += [self._pair(rng, n, walks[-1], lengths, control) for _ in range(cuts)]
        self.confirm(walks, pairs)
        return walks, pairs

    def confirm(self, walks: list[LongChain], pairs: list[DistillPair]) -> None:
        """Every step of the walks, of each v and of each w after u and after v, certified (runs of
        one length confirmed as one block); StepNotCertified naming the first that is not."""
        runs = [(c.states[0], c.events) for c in walks]
        for p in pairs:
            runs += [(p.short_states[0], p.short_events), (p.long_end, p.then_events),
                     (p.short_states[-1], p.then_events)]
        interned = [(self.space.history(start, events)[1], [self.space.event(e) for e in events])
                    for start, events in runs if events]
        for block in walk_blocks(interned):
            self.certifier.confirm(*block)
