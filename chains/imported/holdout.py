"""Held-out protocols on a domain of one's own (``certify --domain package.module:Name --hold-out``),
drawn through the domain's own sampling only.

- ``events:K``: K events, drawn among those the domain's own histories use and some history and its
  partner go without, appear in no training history or partner; every test history holds one, put at a uniformly random place where it
  applies (a prefix drawn by the domain, the held-out event, the rest drawn from where it leads).
- ``pairs:K``: K ordered pairs of events that the domain's histories take adjacently (and some
  history and its partner go without) appear adjacently in no training history or partner; every test history holds one, put the same way.
- ``states``: sampling unchanged; the manifest counts the states training visits and the test
  histories ending at a state training never visited.

A history that must avoid what is held out is drawn again until it does, at most ``DRAWS`` times:
a protocol the domain cannot satisfy is refused in one line (``HoldOutRefused``).
"""
from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TypeVar

from chains.holdout import HoldOut, HoldOutRefused
from chains.manifest import DatasetError
from chains.protocol import EventRefused, StateDomain, run_events
from chains.seeds import split_rng

T = TypeVar("T")
DRAWS = 1_000  # draws of one history before the protocol is declared impossible for it
SURVEY = 400  # histories of 2 to SURVEY_LENGTH events drawn to find the events and pairs the domain uses
SURVEY_LENGTH = 16


@dataclass(frozen=True)
class HeldOut:
    """What a protocol holds out: events, or ordered adjacent pairs of events (none under ``states``)."""

    kind: str
    events: tuple = ()
    pairs: tuple = ()

    def allows(self, events: Sequence) -> bool:
        """No held-out event, or no held-out pair adjacently, in ``events``."""
        return self.first_held(events) is None

    def first_held(self, events: Sequence) -> int | None:
        """The index of the event that completes the first held-out event (or pair); None when none."""
        if self.kind == "events":
            held = set(self.events)
            return next((k for k, e in enumerate(events) if e in held), None)
        if self.kind == "pairs":
            held = set(self.pairs)
            return next((k + 1 for k, pair in enumerate(zip(events, events[1:])) if pair in held), None)
        return None


def choose(domain: StateDomain, protocol: HoldOut, seed: int) -> HeldOut:
    """The events or pairs ``protocol`` holds out of ``domain``, drawn from ``seed`` among those its
    own histories use; HoldOutRefused when it uses too few to keep some for training."""
    if protocol.kind == "states":
        return HeldOut("states")
    rng = split_rng(seed, f"holdout-{protocol}")
    drawn = []  # (history's events, its partner's events)
    for _ in range(SURVEY):
        start = domain.start_state(rng)
        events = domain.sample_events(rng, start, rng.randint(2, SURVEY_LENGTH))
        drawn.append((list(events), list(domain.sample_partner(rng, start, events)[1])))
    items = (lambda ev: ev) if protocol.kind == "events" else (lambda ev: list(zip(ev, ev[1:])))
    used = dict.fromkeys(item for events, _ in drawn for item in items(events))
    # an item every partner holds (one the partner sampler always inserts) could never leave training
    avoidable = [item for item in used if any(item not in items(a) and item not in items(b) for a, b in drawn)]
    if len(used) <= protocol.count:
        raise HoldOutRefused(f"the domain's histories use {len(used)} distinct {protocol.kind}; holding out "
                             f"{protocol.count} would leave none for training")
    if len(avoidable) < protocol.count:
        raise HoldOutRefused(f"only {len(avoidable)} of the {protocol.kind} the domain's histories use can be left out "
                             f"of a history and its partner; {protocol.count} asked")
    chosen = tuple(rng.sample(avoidable, protocol.count))
    return HeldOut("events", events=chosen) if protocol.kind == "events" else HeldOut("pairs", pairs=chosen)


def avoiding(draw: Callable[[], T], events_of: Callable[[T], Sequence], held: HeldOut, what: str) -> T:
    """``draw()`` again until its events (``events_of``) hold nothing held out."""
    for _ in range(DRAWS):
        drawn = draw()
        if held.allows(events_of(drawn)):
            return drawn
    raise HoldOutRefused(f"could not draw {what} without the held-out {held.kind} in {DRAWS} tries")


def holding(domain: StateDomain, rng: random.Random, start, length: int, held: HeldOut) -> list:
    """A test history of ``length`` events holding one held-out event (or pair) at a uniformly random
    place where it applies; HoldOutRefused when none applies in ``DRAWS`` tries."""
    inserted = 1 if held.kind == "events" else 2
    if length < inserted:
        raise HoldOutRefused(f"test histories of {length} events cannot hold a held-out pair")
    for _ in range(DRAWS):
        item = rng.choice(held.events if held.kind == "events" else held.pairs)
        item = (item,) if held.kind == "events" else tuple(item)
        at = rng.randrange(length - inserted + 1)
        prefix = domain.sample_events(rng, start, at)
        here = run_events(domain, start, prefix)[-1] if prefix else start
        try:
            after = run_events(domain, here, item)[-1]
        except EventRefused:
            continue
        return [*prefix, *item, *domain.sample_events(rng, after, length - at - inserted)]
    raise HoldOutRefused(f"no held-out {held.kind[:-1]} applied where test histories reach, in {DRAWS} tries")


def held_of(domain: StateDomain, manifest: dict, where: str) -> HeldOut | None:
    """What a manifest's ``holdout`` holds out, read back with the domain's ``parse_event``."""
    holdout = manifest.get("holdout")
    if not holdout:
        return None
    try:
        if holdout.get("kind") == "events":
            return HeldOut("events", events=tuple(domain.parse_event(t) for t in holdout["events"]))
        if holdout.get("kind") == "pairs":
            return HeldOut("pairs", pairs=tuple((domain.parse_event(a), domain.parse_event(b))
                                                for a, b in holdout["pairs"]))
    except (ValueError, KeyError, TypeError) as e:
        raise DatasetError(f"{where}: its holdout field names no events of the domain ({e})") from None
    return HeldOut("states")
