"""Search problems: a start tree and a target tree of the same class at a given rewrite
distance, the length of a shortest path in the state graph (breadth-first within the class).

Problems are drawn reproducibly from a seed, one independent generator per distance: a start
tree uniformly among the domain's start trees, then a target uniformly among the trees at
exactly that distance from it; a start whose class holds no tree that far away is redrawn.
With trees to avoid (``prove --unvisited``: those a tracker's training split visits), starts and
targets are drawn among the other trees only. A problem may also carry a *prefix*: a history of ``prefix`` rewrites that ends at the start
tree (a uniformly random backward walk from the start, read forwards, as the dataset's
partners are), for a searcher that reads its start through a long history.
"""
from __future__ import annotations

import json
import random
from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from chains.rewrite.rules import Event
from chains.rewrite.sampling import sample_partner
from chains.rewrite.space import Domain, StateSpace
from chains.rewrite.trees import Tree, parse_polish, polish


class ProblemError(ValueError):
    """Problems that cannot be drawn as asked (a distance the class graph does not allow)."""


@dataclass(frozen=True)
class Problem:
    id: str  # "d<distance>-<index>"
    distance: int  # shortest rewrite distance from start to target
    start: Tree
    target: Tree
    prefix_start: Tree  # where the prefix history begins (the start itself when there is no prefix)
    prefix: tuple[Event, ...] = ()  # events leading from prefix_start to start

    def to_json(self) -> dict:
        return {"id": self.id, "distance": self.distance, "start": polish(self.start),
                "target": polish(self.target), "prefix_start": polish(self.prefix_start),
                "prefix": [str(e) for e in self.prefix]}

    @classmethod
    def from_json(cls, obj: dict, atoms: Sequence[str]) -> Problem:
        return cls(obj["id"], int(obj["distance"]), parse_polish(obj["start"], atoms),
                   parse_polish(obj["target"], atoms), parse_polish(obj["prefix_start"], atoms),
                   tuple(Event.parse(e) for e in obj["prefix"]))


def distances_from(space: StateSpace, start: int, limit: int | None = None) -> dict[int, int]:
    """Shortest rewrite distance from ``start`` to every tree of its class (to ``limit`` steps)."""
    dist = {start: 0}
    queue = deque([start])
    while queue:
        here = queue.popleft()
        if limit is not None and dist[here] >= limit:
            continue
        for _, there in space.successors(here):
            if there not in dist:
                dist[there] = dist[here] + 1
                queue.append(there)
    return dist


def max_distance(domain: Domain) -> int:
    """The largest distance between two trees of one class (the diameter of the class graphs),
    over the classes of the domain's start trees."""
    space = StateSpace(domain)
    return max(max(distances_from(space, i).values()) for i in space.start_trees())


def _prefix(space: StateSpace, rng: random.Random, start: int, length: int) -> tuple[Tree, tuple[Event, ...]]:
    if length == 0:
        return space.trees[start], ()
    walk = sample_partner(space, rng, start, length)
    return space.trees[walk.states[0]], walk.events


def make_problems(domain: Domain, distances: Sequence[int], per_distance: int, seed: int,
                  prefix: int = 0, avoid: frozenset[Tree] = frozenset()) -> list[Problem]:
    """``per_distance`` problems at each distance, the same for the same arguments; neither the
    start nor the target is one of ``avoid`` (the trees a tracker's training visited)."""
    if per_distance < 1:
        raise ProblemError("problems per distance must be at least 1")
    if prefix < 0:
        raise ProblemError("the prefix length must be at least 0")
    space = StateSpace(domain)
    avoided = {space.id(t) for t in avoid}
    starts = [s for s in space.start_trees() if s not in avoided]
    table: dict[int, dict[int, list[int]]] = {}  # start -> distance -> trees at that distance

    def at(start: int, d: int) -> list[int]:
        if start not in table:
            by: dict[int, list[int]] = {}
            for tree, k in distances_from(space, start).items():
                if tree not in avoided:
                    by.setdefault(k, []).append(tree)
            table[start] = {k: sorted(v, key=lambda i: polish(space.trees[i])) for k, v in by.items()}
        return table[start].get(d, [])

    problems = []
    for d in distances:
        if d < 1:
            raise ProblemError(f"distance {d}: distances must be at least 1")
        if not any(at(s, d) for s in starts):
            if avoided:
                raise ProblemError(_unvisited_refusal(d, space, avoided, starts))
            raise ProblemError(f"distance {d}: no two trees of one class are that far apart "
                               f"(the largest distance is {max_distance(domain)})")
        rng = random.Random(f"{seed}:problems:{d}")
        for n in range(per_distance):
            while True:
                start = rng.choice(starts)
                targets = at(start, d)
                if targets:
                    break
            target = rng.choice(targets)
            prefix_start, events = _prefix(space, random.Random(f"{seed}:prefix:{d}:{n}"), start, prefix)
            problems.append(Problem(f"d{d}-{n:05d}", d, space.trees[start], space.trees[target],
                                    prefix_start, events))
    return problems


def _unvisited_refusal(d: int, space: StateSpace, avoided: set[int], starts: list[int]) -> str:
    """Why no problem at distance ``d`` avoids the trees training visited: training visits every
    start tree (so every tree a problem could start at), or the trees it left are not that far apart."""
    if not starts:
        return (f"--unvisited: training visits every start tree of the domain ({len(space.start_trees())}), so no "
                "problem can start where it never went; use a dataset whose training leaves trees unvisited "
                "(more atoms, or certify --hold-out states)")
    unvisited = len(space.trees) - len(avoided)
    return (f"distance {d}: no two of the {unvisited} trees training never visited are that far apart "
            "within one class")


def write_problems(path: Path, problems: Sequence[Problem]) -> None:
    with open(path, "w", encoding="utf-8") as handle:
        for problem in problems:
            handle.write(json.dumps(problem.to_json(), separators=(",", ":")) + "\n")
