"""The state space of a domain: trees interned as integer ids, their applicable events, and
the state graph. Successors are computed on first use, so large domains (six atoms, tier 2)
cost only what a sample visits."""
from __future__ import annotations

import random
from collections import deque
from itertools import product
from dataclasses import dataclass

from chains.manifest import PROGRAMS_FORMAT, DatasetError
from chains.rewrite.rules import Event, successors, tier_rules
from chains.rewrite.trees import Tree, all_trees, atom_names, count_classes, count_trees, polish, random_tree

# the most states a breadth-first enumeration of a domain visits (``domain_size``, ``reachable_trees``)
EXPLORE_LIMIT = 250_000


class EnumerationIncomplete(ValueError):
    """A domain whose reachable trees outnumber the enumeration limit; the message names both."""


@dataclass(frozen=True)
class Domain:
    """Which trees and rules a dataset ranges over."""

    atoms: int = 4  # number of distinct atoms in a start tree, 2..6
    tier: int = 1  # 1: commutativity and associativity; 2: adds distributivity and factoring
    max_size: int | None = None  # tier 2 only: no step may produce a tree of more tokens

    def __post_init__(self) -> None:
        atom_names(self.atoms)  # validates the range
        tier_rules(self.tier)
        if self.tier == 1 and self.max_size is not None:
            raise ValueError("--max-size applies to tier 2 only")
        if self.tier == 2:
            start_size = 2 * self.atoms - 1
            if self.max_size is not None and self.max_size < start_size:
                raise ValueError(f"max size {self.max_size} is below the start trees' size {start_size}")

    @property
    def atom_names(self) -> tuple[str, ...]:
        return atom_names(self.atoms)

    @property
    def rules(self) -> tuple[str, ...]:
        return tier_rules(self.tier)

    @property
    def size_bound(self) -> int | None:
        if self.tier == 1:
            return None
        # default 4k - 1 tokens: for four atoms every tree reachable by distribution fits
        return self.max_size if self.max_size is not None else 4 * self.atoms - 1

    @property
    def positions(self) -> tuple[str, ...]:
        """Every path at which some tree of the domain can have an operator node, shortest
        first: the positions a probe or a blind searcher may name."""
        leaves = self.atoms if self.tier == 1 else (self.size_bound + 1) // 2
        return tuple("".join(bits) for depth in range(leaves - 1) for bits in product("01", repeat=depth))


class StateSpace:
    """Interned trees of one domain and their successors (each computed once)."""

    def __init__(self, domain: Domain) -> None:
        self.domain = domain
        self.trees: list[Tree] = []
        self._ids: dict[Tree, int] = {}
        self._succ: dict[int, list[tuple[Event, int]]] = {}
        # events interned as small integers, for the hot loops of sampling and certification
        self.events: list[Event] = []
        self._event_ids: dict[Event, int] = {}
        self.inverses: list[int] = []  # event id -> the id of the event undoing it (same position)
        # state -> (event ids, next states, their count, its bit length): the sampler's table
        self.move_table: dict[int, tuple[tuple[int, ...], tuple[int, ...], int, int]] = {}

    def id(self, tree: Tree) -> int:
        i = self._ids.get(tree)
        if i is None:
            i = self._ids[tree] = len(self.trees)
            self.trees.append(tree)
        return i

    def successors(self, i: int) -> list[tuple[Event, int]]:
        out = self._succ.get(i)
        if out is None:
            out = self._succ[i] = [
                (event, self.id(result))
                for event, result in successors(self.trees[i], self.domain.rules, self.domain.size_bound)
            ]
        return out

    def find(self, tree: Tree) -> int | None:
        """The id of ``tree`` if it is interned, else None (interns nothing)."""
        return self._ids.get(tree)

    def event_id(self, event: Event) -> int:
        """The interned id of ``event`` (``self.events[id] == event``)."""
        i = self._event_ids.get(event)
        if i is None:
            i = self._event_ids[event] = len(self.events)
            self.events.append(event)
            self.inverses.append(i)  # until its inverse is interned (an event may be its own)
            self.inverses[i] = self.event_id(event.inverse)
        return i

    def moves(self, i: int) -> tuple[tuple[int, ...], tuple[int, ...]]:
        """``successors(i)`` as two aligned tuples: the event ids and the states they lead to."""
        return self.move_entry(i)[:2]

    def move_entry(self, i: int) -> tuple[tuple[int, ...], tuple[int, ...], int, int]:
        """``moves(i)`` with the number of successors and its bit length (``move_table[i]``)."""
        out = self.move_table.get(i)
        if out is None:
            succ = self.successors(i)
            if not succ:
                raise IndexError(f"state {i} has no successor to choose from")
            out = self.move_table[i] = (tuple(self.event_id(e) for e, _ in succ), tuple(j for _, j in succ),
                                        len(succ), len(succ).bit_length())
        return out

    def random_start(self, rng: random.Random) -> int:
        return self.id(random_tree(rng, self.domain.atom_names))

    def start_trees(self) -> list[int]:
        return [self.id(t) for t in all_trees(self.domain.atom_names)]

    def explore(self, limit: int) -> tuple[int, int, bool]:
        """Breadth-first search from every start tree, up to ``limit`` states.

        Returns (states seen, classes among them, complete). Steps are reversible, so the
        connected components of the reachable graph are the equivalence classes of trees.
        """
        seen, classes, complete = self._reach(limit)
        return len(seen), classes, complete

    def _reach(self, limit: int) -> tuple[set[int], int, bool]:
        """``explore`` with the states seen themselves."""
        seen: set[int] = set()
        classes = 0
        for root in self.start_trees():
            if root in seen:
                continue
            classes += 1
            seen.add(root)
            queue = deque([root])
            while queue:
                for _, j in self.successors(queue.popleft()):
                    if j not in seen:
                        if len(seen) >= limit:
                            return seen, classes, False
                        seen.add(j)
                        queue.append(j)
        return seen, classes, True


def describe(domain: Domain) -> str:
    """The domain in words, for messages: ``tier-2 domain of 4 atoms and trees of at most 15 tokens``."""
    bound = f" and trees of at most {domain.size_bound} tokens" if domain.size_bound is not None else ""
    return f"tier-{domain.tier} domain of {domain.atoms} atoms{bound}"


def reachable_trees(domain: Domain, limit: int | None = None) -> list[Tree]:
    """Every tree of ``domain`` a chain can visit, sorted by Polish string, so that a draw from
    the list depends on no interning order: on tier 1 all trees (``all_trees``; each is a start
    tree), on tier 2 those reachable from a start tree within the size bound (breadth-first, as
    ``domain_size`` counts them). EnumerationIncomplete when tier 2 has more than ``limit``
    (default ``EXPLORE_LIMIT``)."""
    if domain.tier == 1:
        trees = list(all_trees(domain.atom_names))
    else:
        limit = EXPLORE_LIMIT if limit is None else limit
        space = StateSpace(domain)
        seen, _, complete = space._reach(limit)
        if not complete:
            raise EnumerationIncomplete(f"the {describe(domain)} has more reachable trees than the enumeration "
                                        f"limit of {limit:,}; choose fewer atoms or a smaller size bound")
        trees = [space.trees[i] for i in seen]
    return sorted(trees, key=polish)


def domain_size(domain: Domain, limit: int | None = None) -> dict:
    """The manifest's ``trees``/``classes`` with how they were obtained (breadth-first up to
    ``limit`` states, default ``EXPLORE_LIMIT``)."""
    limit = EXPLORE_LIMIT if limit is None else limit
    if domain.tier == 1:
        return {"trees": count_trees(domain.atoms), "classes": count_classes(domain.atoms),
                "trees_counted": "all trees of the domain (closed form)"}
    states, classes, complete = StateSpace(domain).explore(limit)
    how = ("reachable within the size bound from the start trees (breadth-first, complete)" if complete
           else f"states seen before the enumeration limit of {limit} (incomplete)")
    return {"trees": states, "classes": classes, "trees_counted": how}


def domain_of(manifest: dict, where: str) -> Domain:
    """The rewrite domain of a manifest's JSON object; DatasetError naming ``where`` when it makes none
    (a programs dataset among them: its readers are named in the message)."""
    if manifest.get("format") == PROGRAMS_FORMAT:
        raise DatasetError(f"{where}: a programs dataset, where rewrite chains are expected")
    try:
        return Domain(atoms=manifest["atoms"], tier=manifest["tier"], max_size=manifest.get("max_size"))
    except (KeyError, TypeError, ValueError) as e:
        raise DatasetError(f"{where}: bad domain in manifest ({e})") from None
