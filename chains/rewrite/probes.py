"""Probe events tried at each step of a chain, and Python's referee for Lean's verdicts on them.

At step ``t`` of a chain (the tree reached after ``t`` events, before event ``t``) five probes
are tried, one of each kind:

- ``gold``: the chain's next event;
- ``misplaced``: the event of another step of the same chain (the hard class: it is often
  applicable, but not always, and not where the gold is);
- ``swap``: another rule of the domain at the gold's position;
- ``permuted``: the gold rule at another position of the domain (possibly outside the tree);
- ``random``: an event of another chain of the same split.

Whether a probe applies is Lean's to say (``leanbridge.questions.Probe``); ``referee`` is the
independent check that every verdict of Lean agrees with the rules of ``chains.rewrite.rules``.
"""
from __future__ import annotations

import json
import random
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from chains.manifest import DatasetError
from chains.rewrite.rules import RULES, Event, apply
from chains.rewrite.sampling import below, exact_getrandbits
from chains.rewrite.space import Domain, StateSpace
from chains.rewrite.trees import ADD, MUL, Tree, parse_polish, skeleton, subtree

PROBE_KINDS = ("gold", "misplaced", "swap", "permuted", "random")
# Accepted fraction per kind on natural Mathlib proofs, for comparison in manifests.
# what an accepted probe's successor shares with the chain's end: the end itself, its skeleton, neither
PROBE_GROUPS = ("complete", "same skeleton", "other skeleton")
SEED_ACCEPTED = {"misplaced": 0.219, "swap": 0.103, "permuted": 0.448, "random": 0.057}
# The operation at the root of each rule's left side.
ROOT_OPERATION = {"add_comm": ADD, "mul_comm": MUL, "add_assoc": ADD, "mul_assoc": MUL, "add_assoc_rev": ADD,
                  "mul_assoc_rev": MUL, "distrib_left": MUL, "distrib_right": MUL, "factor_left": ADD,
                  "factor_right": ADD}
assert set(ROOT_OPERATION) == set(RULES), "every rule needs its root operation"


@dataclass(frozen=True)
class ProbeRecord:
    """One probe of a dataset: its kind, the event tried and Lean's verdict
    (``accepted``, ``complete`` or ``rejected:<class>``)."""

    kind: str
    event: Event
    verdict: str

    @property
    def accepted(self) -> bool:
        return not self.verdict.startswith("rejected")


def probe_rng(seed: int, split: str) -> random.Random:
    """The probes of a split have their own generator, so adding probes changes no chain."""
    return random.Random(f"{seed}:{split}:probes")


def referee(tree: Tree, event: Event) -> tuple[Tree | None, str | None]:
    """What the rules say of ``event`` on ``tree``: (the tree after it, None) when it applies,
    else (None, why not) with the class Lean's message should carry: ``leaf`` (no operator
    node at the position), ``operator`` (the node has the other operation), ``pattern``
    (the operation matches, the rule's left side does not)."""
    result = apply(tree, event)  # a probe is a rewrite: the domain's size bound is a sampling matter
    if result is not None:
        return result, None
    node = subtree(tree, event.path)
    if node is None or isinstance(node, str):
        return None, "leaf"
    return None, "operator" if node[0] != ROOT_OPERATION[event.rule] else "pattern"


class ProbeSampler:
    """The probes of a chain's steps, drawn over interned event ids (``StateSpace.events``) so that
    a step costs little, in ``PROBE_KINDS`` order, every draw as ``rng.choice`` draws: ``misplaced``
    a few draws of another step, preferring an event other than the gold; ``swap`` another rule at
    the gold's position; ``permuted`` the gold's rule at another position; ``random`` an event of
    the other chain (``tests/test_probes.py`` holds it to a plain reference over events)."""

    def __init__(self, space: StateSpace, rng: random.Random) -> None:
        self.space, self.rng = space, rng
        self._below = below(rng)
        self._getrandbits = exact_getrandbits(rng)
        # gold id -> (ids of the other rules at its position, their count and its bit length,
        #             ids of its rule at the other positions, their count and its bit length)
        self._alternatives: dict[int, tuple[tuple[int, ...], int, int, tuple[int, ...], int, int]] = {}

    def _alternatives_of(self, gold: int) -> tuple[tuple[int, ...], int, int, tuple[int, ...], int, int]:
        event, domain, intern = self.space.events[gold], self.space.domain, self.space.event_id
        swap = tuple(intern(Event(r, event.path)) for r in domain.rules if r != event.rule)
        moved = tuple(intern(Event(event.rule, p)) for p in domain.positions if p != event.path)
        if not swap or not moved:  # rng.choice of nothing (a two-atom domain's root)
            raise IndexError(f"no other rule or position to probe beside {event}")
        out = self._alternatives[gold] = (swap, len(swap), len(swap).bit_length(),
                                          moved, len(moved), len(moved).bit_length())
        return out

    def sample(self, ids: Sequence[int], step: int, other: Sequence[int]) -> tuple[int, int, int, int, int]:
        """The ids of the probes of ``step`` of a chain with event ids ``ids``, in ``PROBE_KINDS``
        order; ``other`` holds the event ids of another chain of the split."""
        gold = ids[step]
        n = len(ids)
        bits = self._getrandbits
        if bits is None:
            return self._sample(ids, step, other)
        misplaced = gold
        if n > 1:  # a few draws of another step, preferring a different event
            m = n - 1
            k = m.bit_length()
            for _ in range(8):
                r = bits(k)
                while r >= m:
                    r = bits(k)
                misplaced = ids[(step + 1 + r) % n]
                if misplaced != gold:
                    break
            else:
                misplaced = self._different(ids, gold)
        swap, n_swap, k_swap, moved, n_moved, k_moved = self._alternatives.get(gold) or self._alternatives_of(gold)
        # each draw is rng.choice's: the first getrandbits(bit length) below the count
        r = bits(k_swap)
        while r >= n_swap:
            r = bits(k_swap)
        swapped = swap[r]
        r = bits(k_moved)
        while r >= n_moved:
            r = bits(k_moved)
        permuted = moved[r]
        m = len(other)
        k = m.bit_length()
        r = bits(k)
        while r >= m:
            r = bits(k)
        return gold, misplaced, swapped, permuted, other[r]

    def _different(self, ids: Sequence[int], gold: int) -> int:
        different = [e for e in ids if e != gold]
        return different[self._below(len(different))] if different else gold

    def _sample(self, ids: Sequence[int], step: int, other: Sequence[int]) -> tuple[int, int, int, int, int]:
        """``sample`` for a generator whose draws are not CPython's: every draw through it."""
        below_ = self._below
        gold = ids[step]
        n = len(ids)
        misplaced = gold
        if n > 1:
            for _ in range(8):
                misplaced = ids[(step + 1 + below_(n - 1)) % n]
                if misplaced != gold:
                    break
            else:
                misplaced = self._different(ids, gold)
        swap, _, _, moved, _, _ = self._alternatives.get(gold) or self._alternatives_of(gold)
        return gold, misplaced, swap[below_(len(swap))], moved[below_(len(moved))], other[below_(len(other))]


def probe_groups(path: Path, domain: Domain) -> list[list[list[int]]]:
    """For each probe-carrying chain of a split file, for each step, for each probe: its group
    index in PROBE_GROUPS when Lean accepted it, else -1 (the file's order, which is the tensors')."""
    out = []
    with open(path, encoding="utf-8") as handle:
        for line in handle:
            if '"probes"' not in line:
                continue
            record = json.loads(line)
            if "probes" not in record:
                continue
            goal = parse_polish(record["end"], domain.atom_names)
            tree, chain = parse_polish(record["start"], domain.atom_names), []
            for t, entry in enumerate(record["probes"]):
                row = []
                for _kind, text, verdict in entry:
                    if verdict.startswith("rejected"):
                        row.append(-1)
                        continue
                    successor = apply(tree, Event.parse(text), domain.size_bound)
                    if successor is None:
                        raise DatasetError(f"{path}: chain {record['id']} step {t}: Lean accepted {text}, "
                                           "which the rules do not apply")
                    row.append(0 if successor == goal else (1 if skeleton(successor) == skeleton(goal) else 2))
                chain.append(row)
                tree = apply(tree, Event.parse(record["events"][t]), domain.size_bound)
            out.append(chain)
    return out
