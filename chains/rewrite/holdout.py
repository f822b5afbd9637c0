"""Held-out protocols: parts of the domain that training never shows and every test chain holds.

``certify --hold-out`` names one protocol (``HoldOut``); ``choose`` draws what it holds out
from the dataset's seed (``HeldOut``), and ``sample_split`` draws a split under it:

- ``events:K``: K events (rule@position) among those some tree of the domain can apply, drawn so
  that every rule and every position keeps other events in training. Training chains' walks
  never pick a held-out event, and partners' backward walks never take a step whose inverse is
  one (a partner read forwards uses the inverses of its backward steps), so no training chain or
  partner holds one. A test chain is a uniform walk from a start tree, redrawn whole until it
  holds at least one held-out event.
- ``pairs:K``: K ordered pairs ``(e1, e2)`` of events (``e2`` neither ``e1`` nor its inverse),
  drawn among the adjacent pairs seen at least ``PAIR_MIN_SEEN`` times in uniform walks of
  ``PAIR_WALK`` events in all (``survey``). Training walks never pick ``e2`` right after ``e1``, and partners read
  forwards never hold ``e1`` immediately followed by ``e2``. A test chain walks ``m < L - 1``
  uniform events, goes on uniformly until a held-out pair applies, applies one (drawn among those
  that apply), and finishes uniformly; it is redrawn whole when it would run past ``L`` first.
- ``states``: no change to sampling; the manifest counts the trees training visits.

Under every protocol the manifest's ``holdout`` field (``manifest_field``) records the trees the
training split visits (every state of every training chain and partner) and, per test split, the
chains that end at a tree training never visited. ``HoldOutCheck`` reads the field back and
checks the files against it (``certify --verify``). Every draw is a pure function of the seed.
"""
from __future__ import annotations

import random
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field

from chains.holdout import KINDS, HoldOut, HoldOutRefused
from chains.manifest import DatasetError
from chains.rewrite.rules import RULES, Event, EventSyntaxError, successors
from chains.rewrite.sampling import Sample, Walk, random_walk, sample_chain, sample_partner, sample_split as plain_split
from chains.rewrite.space import Domain, StateSpace
from chains.rewrite.trees import Tree, ordered_trees

# the held-out pairs are drawn among the adjacent pairs of uniform walks of PAIR_WALK events in all,
# each of SURVEY_LENGTH events from its own random start tree (a single walk never leaves its
# start's equivalence class, and would see the events and pairs of that class only)
PAIR_WALK = 20_000
SURVEY_LENGTH = 100
PAIR_MIN_SEEN = 20  # a pair is a candidate when those walks hold it adjacently at least this often
CHOICE_DRAWS = 1_000  # draws of a held-out event set before one that keeps every rule and position
CHAIN_DRAWS = 100_000  # draws of one chain before its protocol is declared impossible


def domain_events(domain: Domain, rng: random.Random | None = None) -> list[Event]:
    """Every event some tree of ``domain`` can apply, sorted: on tier 1 exactly those of the trees
    of one atom order (every shape and operator choice; no tier-1 rule looks at the atoms); on
    tier 2 those and the events of the walks of ``survey`` drawn with ``rng`` (the size-changing
    rules reach trees no start tree is)."""
    found = set()
    for tree in ordered_trees(domain.atom_names):
        found.update(event for event, _ in successors(tree, domain.rules, domain.size_bound))
    if domain.tier != 1:
        for walk in survey(domain, rng if rng is not None else random.Random(0)):
            found.update(walk)
    return sorted(found)


@dataclass(frozen=True)
class HeldOut:
    """What a protocol holds out for one seed (``choose``): events, or ordered pairs of events."""

    protocol: HoldOut
    events: tuple[Event, ...] = ()  # events: sorted
    pairs: tuple[tuple[Event, Event], ...] = ()  # pairs: sorted

    @property
    def kind(self) -> str:
        return self.protocol.kind

    def sentence(self) -> str:
        """What was held out and how test chains were drawn, in words (the manifest's ``protocol``)."""
        if self.kind == "events":
            return (f"{len(self.events)} events (rule@position) held out, drawn so that every rule and every "
                    "position keeps other events in training: no training chain or partner holds one (training "
                    "walks never pick one; partners' backward walks never take a step whose inverse is one); "
                    "every test chain is a uniformly random walk from a start tree, redrawn whole until it holds "
                    "at least one; test partners are unconstrained")
        if self.kind == "pairs":
            return (f"{len(self.pairs)} ordered event pairs held out, drawn among the adjacent pairs seen at least "
                    f"{PAIR_MIN_SEEN} times in uniformly random walks of {SURVEY_LENGTH} events from "
                    f"{PAIR_WALK // SURVEY_LENGTH} random start trees: no training chain or "
                    "partner holds one adjacently; every test chain of length L walks m < L-1 uniform events from a "
                    "start tree, goes on uniformly until a held-out pair applies, applies one (drawn uniformly among "
                    "those that apply) and finishes uniformly, redrawn whole when it would pass L first; test "
                    "partners are unconstrained")
        return ("nothing held out of sampling: the trees the training split visits (every state of every "
                "training chain and partner) are counted, and per test split the chains ending at a tree "
                "training never visited")

    def manifest_field(self, visited: int, trees: int, unseen: dict[str, int]) -> dict:
        """The manifest's ``holdout`` object: the protocol, what it holds out, the trees training
        visits (``visited`` of the domain's ``trees``) and per test split the chains whose end tree
        training never visited (``unseen``)."""
        out: dict = {"kind": self.kind}
        if self.kind == "events":
            out["events"] = [str(e) for e in self.events]
        elif self.kind == "pairs":
            out["pairs"] = [[str(a), str(b)] for a, b in self.pairs]
        out.update({"visited_trees": visited, "visited_share": round(visited / trees, 6) if trees else 0.0,
                    "unseen_end_chains": dict(unseen), "protocol": self.sentence()})
        return out

    @classmethod
    def from_field(cls, obj: dict, where: str) -> HeldOut:
        """What a manifest's ``holdout`` field (``manifest_field``) holds out; DatasetError naming
        ``where`` when the field names no protocol or malformed events."""
        kind = obj.get("kind")
        if kind not in KINDS:
            raise DatasetError(f"{where}: holdout kind is {str(kind)[:40]!r}, not one of {', '.join(KINDS)}")
        try:
            if kind == "events":
                events = obj.get("events")
                if not isinstance(events, list) or not events:
                    raise DatasetError(f"{where}: holdout events must be a non-empty list of events")
                return cls(HoldOut(kind, len(events)), events=tuple(sorted(map(Event.parse, events))))
            if kind == "pairs":
                pairs = obj.get("pairs")
                if not (isinstance(pairs, list) and pairs
                        and all(isinstance(p, list) and len(p) == 2 for p in pairs)):
                    raise DatasetError(f"{where}: holdout pairs must be a non-empty list of [event, event]")
                return cls(HoldOut(kind, len(pairs)),
                           pairs=tuple(sorted((Event.parse(a), Event.parse(b)) for a, b in pairs)))
            return cls(HoldOut(kind))
        except EventSyntaxError as e:
            raise DatasetError(f"{where}: holdout: {e}") from None

    def first_held(self, events: Sequence[Event]) -> tuple[int, str] | None:
        """(step, what) of the first held-out item ``events`` holds (a pair is named at its second
        event), or None."""
        if self.kind == "events":
            held = set(self.events)
            for k, event in enumerate(events):
                if event in held:
                    return k, f"held-out event {event}"
        elif self.kind == "pairs":
            held = set(self.pairs)
            for k in range(1, len(events)):
                if (events[k - 1], events[k]) in held:
                    return k, f"held-out pair {events[k - 1]} then {events[k]} (steps {k - 1} and {k})"
        return None


def choose(protocol: HoldOut, domain: Domain, seed: int) -> HeldOut:
    """The items ``protocol`` holds out for ``seed``, drawn from ``random.Random(f"{seed}:holdout")``;
    HoldOutRefused when the domain has too few to hold out so many."""
    rng = random.Random(f"{seed}:holdout")
    if protocol.kind == "events":
        return HeldOut(protocol, events=_choose_events(protocol.count, domain, rng))
    if protocol.kind == "pairs":
        return HeldOut(protocol, pairs=_choose_pairs(protocol.count, domain, rng))
    return HeldOut(protocol)


def _choose_events(count: int, domain: Domain, rng: random.Random) -> tuple[Event, ...]:
    candidates = domain_events(domain, rng)
    rules = {e.rule for e in candidates}
    positions = {e.path for e in candidates}
    too_many = (f"cannot hold out {count} of the {len(candidates)} events of the domain and keep every rule and "
                "every position in training; choose fewer")
    if count >= len(candidates):
        raise HoldOutRefused(too_many)
    for _ in range(CHOICE_DRAWS):
        chosen = set(rng.sample(candidates, count))
        kept = [e for e in candidates if e not in chosen]
        if {e.rule for e in kept} == rules and {e.path for e in kept} == positions:
            return tuple(sorted(chosen))
    raise HoldOutRefused(too_many)


def survey(domain: Domain, rng: random.Random) -> list[tuple[Event, ...]]:
    """The events of uniform walks of ``SURVEY_LENGTH`` events, each from its own random start
    tree, ``PAIR_WALK`` events in all."""
    space = StateSpace(domain)
    return [random_walk(space, rng, space.random_start(rng), SURVEY_LENGTH).events
            for _ in range(PAIR_WALK // SURVEY_LENGTH)]


def pair_counts(domain: Domain, rng: random.Random) -> Counter[tuple[Event, Event]]:
    """Adjacent pairs ``(e1, e2)`` (``e2`` neither ``e1`` nor its inverse) of the walks of
    ``survey``, counted."""
    return Counter((a, b) for events in survey(domain, rng) for a, b in zip(events, events[1:])
                   if b != a and b != a.inverse)


def _choose_pairs(count: int, domain: Domain, rng: random.Random) -> tuple[tuple[Event, Event], ...]:
    candidates = sorted(pair for pair, n in pair_counts(domain, rng).items() if n >= PAIR_MIN_SEEN)
    if count > len(candidates):
        raise HoldOutRefused(f"cannot hold out {count} pairs: random walks of {PAIR_WALK} events in all hold only "
                             f"{len(candidates)} pairs at least {PAIR_MIN_SEEN} times; choose fewer")
    return tuple(sorted(rng.sample(candidates, count)))


# ---- sampling under a protocol ----

_NONE: frozenset[int] = frozenset()


class _Blocked:
    """Which event ids a walk may not take next, given the one it took last (None at its start):
    forwards (a training chain) and backwards (a partner's walk from the chain's end, whose
    inverses read in reverse are the partner)."""

    def __init__(self, held: HeldOut, space: StateSpace) -> None:
        ids = space.event_id
        inverse = space.inverses
        self.kind = held.kind
        if held.kind == "events":
            self.forward_held = frozenset(map(ids, held.events))
            self.backward_held = frozenset(inverse[e] for e in self.forward_held)  # steps whose inverse is held out
        self.after: dict[int, set[int]] = {}  # e1 -> every e2 held out after it
        self.back_after: dict[int, set[int]] = {}  # backward step b' -> every b that may not follow it
        for a, b in held.pairs:
            first, second = ids(a), ids(b)
            self.after.setdefault(first, set()).add(second)
            # the partner holds (inv b_m, inv b_{m-1}) adjacently: forbid b_m = inv(e1) after b_{m-1} = inv(e2)
            self.back_after.setdefault(inverse[second], set()).add(inverse[first])

    def forward(self, last: int | None) -> frozenset[int] | set[int]:
        if self.kind == "events":
            return self.forward_held
        return self.after.get(last, _NONE)

    def backward(self, last: int | None) -> frozenset[int] | set[int]:
        if self.kind == "events":
            return self.backward_held
        return self.back_after.get(last, _NONE)


def _pick(space: StateSpace, rng: random.Random, options: list[int], events: tuple[int, ...],
          tier2_weight: float) -> int:
    """An index into ``options``' moves: uniform, or tier-2 events weighted by ``tier2_weight``."""
    if tier2_weight == 1.0:
        return options[rng.randrange(len(options))]
    weights = [tier2_weight if RULES[space.events[events[i]].rule].tier == 2 else 1.0 for i in options]
    return rng.choices(options, weights)[0]


def _avoiding(space: StateSpace, rng: random.Random, start: int, length: int, blocked, tier2_weight: float
              ) -> tuple[list[int], list[int]] | None:
    """States and event ids of a random walk that never takes a blocked event (``blocked(last)``);
    None when it reaches a state with no allowed move."""
    states, ids = [start], []
    here, last = start, None
    for _ in range(length):
        events, nexts = space.moves(here)
        no = blocked(last)
        options = [i for i, e in enumerate(events) if e not in no]
        if not options:
            return None
        r = _pick(space, rng, options, events, tier2_weight)
        last = events[r]
        here = nexts[r]
        ids.append(last)
        states.append(here)
    return states, ids


def _walk(space: StateSpace, states: Sequence[int], ids: Sequence[int]) -> Walk:
    return Walk(tuple(states), tuple(map(space.events.__getitem__, ids)), tuple(ids))


def _training_chain(space: StateSpace, rng: random.Random, length: int, blocks: _Blocked, start_walk: int,
                    tier2_weight: float, starts: Sequence[Tree] | None) -> Walk:
    """``sampling.sample_chain`` under the protocol: the history never takes a blocked event (the
    start walk, not part of the history, is uniform); a chain that reaches a state with no allowed
    move starts again from a new start."""
    for _ in range(CHAIN_DRAWS):
        start = space.random_start(rng) if starts is None else space.id(rng.choice(starts))
        if start_walk:
            start = random_walk(space, rng, start, start_walk).end
        walk = _avoiding(space, rng, start, length, blocks.forward, tier2_weight)
        if walk is not None:
            return _walk(space, *walk)
    raise HoldOutRefused(f"no training chain of {length} events avoids the held-out items in {CHAIN_DRAWS} draws")


def _training_partner(space: StateSpace, rng: random.Random, end: int, length: int, blocks: _Blocked) -> Walk:
    """``sampling.sample_partner`` under the protocol: the backward walk never takes a step that
    would put a held-out item into the partner read forwards; redrawn when it is stuck."""
    for _ in range(CHAIN_DRAWS):
        walk = _avoiding(space, rng, end, length, blocks.backward, 1.0)
        if walk is not None:
            states, ids = walk
            states.reverse()
            return _walk(space, states, list(map(space.inverses.__getitem__, reversed(ids))))
    raise HoldOutRefused(f"no partner of {length} events avoids the held-out items in {CHAIN_DRAWS} draws")


def _events_test_chain(space: StateSpace, rng: random.Random, length: int, held: frozenset[int]) -> Walk:
    """A uniform walk from a start tree holding at least one held-out event (redrawn until it does)."""
    for _ in range(CHAIN_DRAWS):
        walk = sample_chain(space, rng, length)
        if not held.isdisjoint(walk.ids):
            return walk
    raise HoldOutRefused(f"no test chain of {length} events held a held-out event in {CHAIN_DRAWS} draws; "
                         "hold out more events or use longer test chains")


def _pairs_test_chain(space: StateSpace, rng: random.Random, length: int, after: dict[int, set[int]]) -> Walk:
    """A chain holding a held-out pair adjacently: ``m < length - 1`` uniform events from a start
    tree, uniform events until some held-out pair applies, one of those that apply (uniformly),
    uniform events to ``length``; redrawn whole when it would pass ``length`` before a pair applied."""
    for _ in range(CHAIN_DRAWS):
        head = random_walk(space, rng, space.random_start(rng), rng.randrange(length - 1))
        states, ids = list(head.states), list(head.ids)
        while len(ids) + 2 <= length:
            here = states[-1]
            events, nexts = space.moves(here)
            found = []
            for first, middle in zip(events, nexts):
                seconds = after.get(first)
                if seconds:
                    then, ends = space.moves(middle)
                    found.extend((first, middle, second, end) for second, end in zip(then, ends) if second in seconds)
            if found:
                first, middle, second, end = found[rng.randrange(len(found))]
                tail = random_walk(space, rng, end, length - len(ids) - 2)
                return _walk(space, [*states, middle, *tail.states], [*ids, first, second, *tail.ids])
            r = rng.randrange(len(events))
            ids.append(events[r])
            states.append(nexts[r])
    raise HoldOutRefused(f"no test chain of {length} events held a held-out pair in {CHAIN_DRAWS} draws; "
                         "hold out more pairs or use longer test chains")


def sample_split(space: StateSpace, rng: random.Random, count: int, length: int, partners: int,
                 held: HeldOut | None, training: bool, start_walk: int = 0, tier2_weight: float = 1.0,
                 starts: Sequence[Tree] | None = None) -> list[Sample]:
    """``chains.rewrite.sampling.sample_split`` under ``held`` (the same when None or ``states``): a
    training split (``training``) holds no held-out item in any chain or partner; every chain of
    a test split holds one, and test partners are unconstrained."""
    if held is None or held.kind == "states":
        return plain_split(space, rng, count, length, partners, start_walk, tier2_weight, starts)
    blocks = _Blocked(held, space)
    out = []
    for _ in range(count):
        if training:
            chain = _training_chain(space, rng, length, blocks, start_walk, tier2_weight, starts)
            mates = tuple(_training_partner(space, rng, chain.end, rng.randint(0, length), blocks)
                          for _ in range(partners))
        else:
            chain = (_events_test_chain(space, rng, length, blocks.forward_held) if held.kind == "events"
                     else _pairs_test_chain(space, rng, length, blocks.after))
            mates = tuple(sample_partner(space, rng, chain.end, rng.randint(0, length)) for _ in range(partners))
        out.append(Sample(chain, mates))
    return out


# ---- the trees training visits ----

@dataclass
class Visits:
    """The trees the training split visits and, per test split, the chains ending elsewhere
    (count them as the splits come, training first)."""

    trees: set = field(default_factory=set)  # every state of every training chain and partner
    test_ends: dict[str, list] = field(default_factory=dict)  # test split -> its chains' end trees

    def unseen(self) -> dict[str, int]:
        return {name: sum(end not in self.trees for end in ends) for name, ends in self.test_ends.items()}


# ---- reading the manifest's field back (certify --verify) ----

class HoldOutCheck:
    """The manifest's ``holdout`` field, read back to check a dataset's files against it:
    ``training`` and ``test`` raise DatasetError naming the place of the first violation,
    ``visit``/``end`` collect the trees, ``compare`` checks the counts the field records."""

    def __init__(self, obj: dict, where: str) -> None:
        self.where = where
        self.held = HeldOut.from_field(obj, where)
        self.recorded = obj
        self.visits = Visits()
        self._noun = "event" if self.held.kind == "events" else "pair"

    def training(self, events: Sequence[Event], where: str, partner: bool) -> None:
        found = self.held.first_held(events)
        if found is not None:
            step, what = found
            raise DatasetError(f"{where} step {step}: {what} in a training {'partner' if partner else 'chain'}")

    def test(self, events: Sequence[Event], where: str) -> None:
        if self.held.kind != "states" and self.held.first_held(events) is None:
            raise DatasetError(f"{where}: holds no held-out {self._noun}, though every test chain must")

    def compare(self, trees: int) -> None:
        """The recorded counts against the ones the files give (``trees``: the manifest's)."""
        found = self.held.manifest_field(len(self.visits.trees), trees, self.visits.unseen())
        for key in ("visited_trees", "visited_share", "unseen_end_chains"):
            if self.recorded.get(key) != found[key]:
                raise DatasetError(f"{self.where}: holdout {key} is {str(self.recorded.get(key))[:80]}, "
                                   f"the files give {str(found[key])[:80]}")
