"""Which proofs, and which split.

Proofs come from given Mathlib directories; the benchmark's own train/val/test assignment is
ignored and the proofs are split by length instead: short proofs (at most 4 steps) train, long
ones (8 to 15) test, the lengths between are left out. A test proof is *novel* when it names a
premise that no training proof names; the seed's headline test set was the novel proofs that
Lean confirmed at every step.
"""
from __future__ import annotations

import hashlib
import random
from collections.abc import Sequence
from dataclasses import dataclass, field

from leanbridge.mathlib.benchmark import BenchTheorem

# The seed's five directories: natural numbers, integers, reals, lists, special functions.
SEED_DIRS = ("Mathlib/Data/Nat", "Mathlib/Data/Int", "Mathlib/Data/Real", "Mathlib/Data/List",
             "Mathlib/Analysis/SpecialFunctions")


def seeded_rng(*parts: object) -> random.Random:
    """A generator that depends on ``parts`` only (not on PYTHONHASHSEED or the platform)."""
    digest = hashlib.sha256("\0".join(map(str, parts)).encode()).digest()
    return random.Random(int.from_bytes(digest[:8], "big"))


def in_dirs(file_path: str, dirs: Sequence[str]) -> bool:
    """``file_path`` lies under one of ``dirs`` (``Mathlib/Data/Nat`` holds ``Mathlib/Data/Nat.lean``
    and everything in ``Mathlib/Data/Nat/``)."""
    for d in dirs:
        d = d.rstrip("/")
        if d.endswith(".lean"):
            if file_path == d:
                return True
        elif file_path == d + ".lean" or file_path.startswith(d + "/"):
            return True
    return False


@dataclass(frozen=True)
class SelectionSpec:
    dirs: tuple[str, ...] = SEED_DIRS  # Mathlib directories (or single .lean files) to take proofs from
    train_max_steps: int = 4  # training proofs have 1 .. train_max_steps traced tactics
    test_min_steps: int = 8  # test proofs have test_min_steps .. test_max_steps
    test_max_steps: int = 15
    max_theorems: int | None = None  # at most this many proofs per split, a seeded sample (None: all)
    seed: int = 0  # the sample under max_theorems, and every probe

    def __post_init__(self) -> None:
        if not self.dirs:
            raise ValueError("no Mathlib directory given")
        if not 1 <= self.train_max_steps < self.test_min_steps <= self.test_max_steps:
            raise ValueError("need 1 <= train_max_steps < test_min_steps <= test_max_steps")
        if self.max_theorems is not None and self.max_theorems < 1:
            raise ValueError("max_theorems must be positive")

    def part_of(self, steps: int) -> str | None:
        if 1 <= steps <= self.train_max_steps:
            return "train"
        if self.test_min_steps <= steps <= self.test_max_steps:
            return "test"
        return None


@dataclass(frozen=True)
class Selection:
    train: tuple[BenchTheorem, ...]
    test: tuple[BenchTheorem, ...]
    novel: frozenset[str]  # keys of the test proofs that name a premise no training proof names
    counts: dict = field(compare=False)  # how many proofs each filter kept or dropped

    def split(self, name: str) -> tuple[BenchTheorem, ...]:
        return {"train": self.train, "test": self.test}[name]


def _sample(theorems: list[BenchTheorem], cap: int | None, seed: int, part: str) -> tuple[BenchTheorem, ...]:
    if cap is None or len(theorems) <= cap:
        return tuple(theorems)
    chosen = set(seeded_rng(seed, "sample", part).sample(range(len(theorems)), cap))
    return tuple(t for i, t in enumerate(theorems) if i in chosen)  # keep the benchmark's order


def select(theorems: Sequence[BenchTheorem], spec: SelectionSpec, total: int | None = None) -> Selection:
    """The training and test proofs of ``spec`` and the novel-premise marks. Novelty is judged
    against the training proofs selected (after any ``max_theorems`` sample): the proofs a model
    trained on this data has seen. ``total``: how many theorems the split had, where ``theorems``
    was already filtered by directory."""
    in_scope = [t for t in theorems if in_dirs(t.file_path, spec.dirs)]
    by_part: dict[str, list[BenchTheorem]] = {"train": [], "test": []}
    for t in in_scope:
        part = spec.part_of(len(t.tactics))
        if part is not None:
            by_part[part].append(t)
    train = _sample(by_part["train"], spec.max_theorems, spec.seed, "train")
    test = _sample(by_part["test"], spec.max_theorems, spec.seed, "test")
    seen = frozenset().union(*(t.premise_names for t in train))
    novel = frozenset(t.key for t in test if t.premise_names - seen)
    counts = {
        "theorems": len(theorems) if total is None else total,
        "in_dirs": len(in_scope),
        "no_tactics": sum(1 for t in in_scope if not t.tactics),
        "between_lengths": sum(1 for t in in_scope if t.tactics and spec.part_of(len(t.tactics)) is None),
        "train_available": len(by_part["train"]),
        "test_available": len(by_part["test"]),
        "train": len(train),
        "test": len(test),
        "novel_premise": len(novel),
        "linear": {"train": sum(t.linear for t in train), "test": sum(t.linear for t in test)},
    }
    return Selection(train, test, novel, counts)
