"""A soft checker on purpose: a share of the training partners replaced by wrong ones.

``certify --corrupt-partners KIND:F`` (``Corruption``) replaces round(F x the training split's
partners) of them, drawn from the dataset's seed, by histories that end at another tree than
their chain:

- ``near``: a near miss, a tree one rewrite from the chain's end (drawn uniformly among the
  end's successors that are other trees), the class next door;
- ``far``: a random other class, a start tree drawn uniformly among those other than the end.

A wrong partner keeps the length of the partner it replaces and is a uniformly random backward
walk from its wrong end, read forwards, as every partner is (``chains.rewrite.sampling.sample_partner``):
every step of it is a true step, certified like any other, and only its claimed equivalence with
the chain is false. It is written as what it is: no equivalence certificate, and its kind under
``wrong`` (``chains.rewrite.dataset.Partner``). The draws come from a generator of their own
(``corrupt_rng``), so every chain and every partner that is kept are those of the same spec
without the option, bit for bit. Test splits are never corrupted.
"""
from __future__ import annotations

import random
from dataclasses import dataclass

from chains.rewrite.sampling import Sample, sample_partner
from chains.rewrite.space import StateSpace

KINDS = ("near", "far")  # the kinds of wrong partner, as --corrupt-partners names them
SAMPLING = {
    "near": "a tree one rewrite from the chain's end (uniform among its successors that are other trees), "
            "reached by a uniformly random backward walk of the replaced partner's length",
    "far": "a start tree drawn uniformly among those other than the chain's end, reached by a uniformly random "
           "backward walk of the replaced partner's length",
}
WHICH = "round(share x training partners) of them, drawn uniformly without replacement from the seed"


@dataclass(frozen=True)
class Corruption:
    """What ``--corrupt-partners`` asks for: ``kind:share``."""

    kind: str  # one of KINDS
    share: float  # fraction of the training split's partners replaced, in (0, 1]

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"the kind of wrong partner must be one of {', '.join(KINDS)}, not {self.kind!r}")
        if not 0 < self.share <= 1:
            raise ValueError(f"the share of partners replaced must lie in (0, 1], not {self.share}")

    @classmethod
    def parse(cls, text: str) -> Corruption:
        """``near:0.05`` or ``far:0.2``; ValueError saying what is wrong."""
        kind, colon, share = text.partition(":")
        try:
            value = float(share)
        except ValueError:
            value = None
        if not colon or value is None:
            raise ValueError(f"{text!r} is not KIND:SHARE (near:0.05, far:0.2)")
        return cls(kind, value)

    def __str__(self) -> str:
        return f"{self.kind}:{self.share:g}"


@dataclass(frozen=True)
class Corrupted:
    """A training split with some partners replaced: the samples (wrong partners in place) and
    which ones are wrong."""

    samples: list[Sample]
    wrong: frozenset[tuple[int, int]]  # (chain index, partner index) of every replaced partner
    partners: int  # partners of the split, replaced or not


def corrupt_rng(seed: int) -> random.Random:
    """The generator of the corruption's draws: its own, so the chains and the kept partners do
    not move."""
    return random.Random(f"{seed}:corrupt-partners")


def wrong_end(space: StateSpace, rng: random.Random, end: int, kind: str) -> int:
    """A state other than ``end``: one rewrite away (``near``) or any start tree (``far``)."""
    if kind == "near":
        # in the order of the end's successors (a function of the tree, not of interning order)
        others = list(dict.fromkeys(state for state in space.moves(end)[1] if state != end))
        if not others:
            raise ValueError(f"tree {space.trees[end]} has no successor that is another tree")
        return others[rng.randrange(len(others))]
    while True:
        state = space.random_start(rng)
        if state != end:
            return state


def corrupt_split(space: StateSpace, samples: list[Sample], corruption: Corruption, seed: int) -> Corrupted:
    """Replace round(share x partners) of the partners of ``samples`` by wrong ones (see the module)."""
    places = [(n, p) for n, sample in enumerate(samples) for p in range(len(sample.partners))]
    rng = corrupt_rng(seed)
    chosen = sorted(rng.sample(places, round(corruption.share * len(places))))
    out = list(samples)
    for n, p in chosen:
        sample = out[n]
        end = wrong_end(space, rng, sample.chain.end, corruption.kind)
        mate = sample_partner(space, rng, end, len(sample.partners[p].events))
        out[n] = Sample(sample.chain, sample.partners[:p] + (mate,) + sample.partners[p + 1:])
    return Corrupted(out, frozenset(chosen), len(places))


def manifest_field(corruption: Corruption, corrupted: Corrupted) -> dict:
    """The manifest's ``corrupt_partners``: what was asked, how many were replaced, and how."""
    return {"kind": corruption.kind, "share": corruption.share, "split": "train",
            "replaced": len(corrupted.wrong), "partners": corrupted.partners,
            "which": WHICH, "sampling": SAMPLING[corruption.kind]}
