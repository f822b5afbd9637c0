"""Fresh certified training histories, for every domain: each step's batch drawn afresh from the
dataset's domain as its training split was drawn, seeded by the run's seed and the step, and every
step of it certified through the certificate store before it enters a loss.

``fresh_stream`` serves a dataset of programs, groups or a domain of one's own by
``tracker.domain_fresh`` (its module says how), and a rewrite dataset by ``RewriteFreshStream``:

- Each step's B chains are drawn as ``certify`` drew the dataset's training split (its atoms, tier,
  size bound, length, partners, starts, start walk and tier-2 weight) by ``chains.rewrite.holdout``'s
  ``sample_split``, which under a held-out protocol of events or pairs draws around them as the
  training split was drawn, from ``random.Random(seed * 1_000_003 + step)``: a pure function of the
  seed and the step, whatever the ``StateSpace`` drawn in has interned before. With
  ``uniform_share``, that share of them (the last) starts from a tree drawn uniformly among the
  domain's reachable trees and runs 1 to ``uniform_length`` events.
- ``AHEAD`` steps' chains are drawn at once and every step of them and of their partners confirmed
  by ``leanbridge.confirm.StepCertifier`` in one call (the store, then Lean for what it lacks, by the
  checker that certified the dataset). A partner is equivalent to its chain because both are
  histories of certified steps ending at one tree, which is what the dataset's ``rfl`` certificate
  states.
- A step's chains are packed as the loader packs a dataset (``tracker.data.history_tensors``):
  item ids, tree ids, successor tables and the dataset's ``Vocab``, the item table padded to the
  model's item width E and the trees to the dataset's tree width P.

A dataset with wrong partners on purpose is refused: a fresh stream draws certified partners only.
"""
from __future__ import annotations

import random
from collections import Counter
from dataclasses import asdict, dataclass, replace
from pathlib import Path

import torch

from chains.manifest import DOMAIN_FORMAT, ELABORATOR, PROGRAMS_FORMAT, read_manifest, rewrite_settings
from chains.rewrite.holdout import HeldOut, sample_split
from chains.rewrite.rules import Event
from chains.rewrite.sampling import Sample, Walk
from chains.rewrite.space import EXPLORE_LIMIT, Domain, EnumerationIncomplete, StateSpace, reachable_trees
from chains.rewrite.trees import Tree
from leanbridge.asker import AskConfig
from leanbridge.certificates import default_store, quiet
from leanbridge.checker import Checker
from leanbridge.confirm import ClaimCertifier, StepCertifier
from leanbridge.corelib import build_core
from leanbridge.discovery import find_lean
from tracker.data import Batch, TrackerData, Vocab, held_out, history_tensors
from tracker.domain_fresh import FreshStream, FreshStreamRefused, domain_fresh_stream, whole_batch

# trees a rewrite certifier's space interns before it starts afresh (its table of confirmed steps is
# trees x events): a tier-1 domain (960 trees of four atoms) never reaches it
SPACE_CAP = EXPLORE_LIMIT


def fresh_stream(directory: Path | str, data: TrackerData, seed: int, chains: int, uniform_share: float,
                 uniform_length: int, certifier: ClaimCertifier | StepCertifier | None = None) -> FreshStream:
    """The fresh stream of the dataset at ``directory`` (``data``, read from it, gives the vocabulary
    and the model's item width); ``certifier`` by default the domain's own over the default store (a
    ``StepCertifier`` by the dataset's checker for rewrite chains). FreshStreamRefused for a rewrite
    dataset with wrong partners on purpose, and for one of programs, groups or an own domain with a
    held-out protocol of events or pairs."""
    manifest = read_manifest(directory)
    if manifest.get("format") in (PROGRAMS_FORMAT, DOMAIN_FORMAT):
        return domain_fresh_stream(directory, manifest, data, seed, chains, uniform_share, uniform_length, certifier)
    return rewrite_stream(directory, manifest, data, seed, chains, uniform_share, uniform_length, certifier)


@dataclass(frozen=True)
class RewriteDraw:
    """How a step's chains are drawn: ``chains`` of ``length`` events with ``partners`` partners each,
    as the dataset's training split (``starts``, ``start_walk``, ``tier2_weight``, and ``hold_out`` in
    the manifest's words, drawn around); the last ``uniform`` of them from a tree drawn uniformly among
    the domain's reachable trees, of 1 to ``uniform_length`` events."""

    chains: int
    length: int
    partners: int
    starts: str = "start"
    start_walk: int = 0
    tier2_weight: float = 1.0
    hold_out: str | None = None
    uniform: int = 0
    uniform_length: int = 4

    def __post_init__(self) -> None:
        if self.chains < 1 or self.length < 1 or self.partners < 0:
            raise ValueError("a draw needs chains >= 1, length >= 1 and partners >= 0")
        if not 0 <= self.uniform <= self.chains or self.uniform_length < 1:
            raise ValueError("a draw's uniform chains must be 0 to chains, each of 1 or more events")


@dataclass(frozen=True)
class Drawn:
    """A drawn history as ``tracker.data.history_tensors`` replays it."""

    start: Tree
    events: tuple[Event, ...]
    end: Tree


class RewriteSampler:
    """A step's chains over one ``StateSpace`` (see the module)."""

    def __init__(self, domain: Domain, draw: RewriteDraw, held: HeldOut | None) -> None:
        """EnumerationIncomplete when the chains start among every reachable tree of a domain too
        large to enumerate (``--starts reachable``, or uniform chains)."""
        self.domain, self.draw, self.held = domain, draw, held
        # the trees a chain may start from (--starts reachable) and those a uniform chain does
        pool = reachable_trees(domain) if draw.starts == "reachable" or draw.uniform else None
        self.starts = pool if draw.starts == "reachable" else None
        self.reachable = pool

    def samples(self, space: StateSpace, seed: int, step: int) -> list[Sample]:
        """Step ``step``'s chains with their partners, as walks of ids of ``space``."""
        draw, held = self.draw, self.held
        rng = random.Random(seed * 1_000_003 + step)
        out = sample_split(space, rng, draw.chains - draw.uniform, draw.length, draw.partners, held, True,
                           draw.start_walk, draw.tier2_weight, self.starts)
        for _ in range(draw.uniform):
            length = rng.randint(1, draw.uniform_length)
            out += sample_split(space, rng, 1, length, draw.partners, held, True, 0, draw.tier2_weight, self.reachable)
        return out


def history_of(space: StateSpace, walk: Walk) -> Drawn:
    """A walk of ``space`` as trees and events."""
    return Drawn(space.trees[walk.states[0]], walk.events, space.trees[walk.end])


def rewrite_draw_of(manifest: dict, chains: int, uniform_share: float, uniform_length: int
                    ) -> tuple[Domain, RewriteDraw]:
    """The domain and the draw of a rewrite dataset's training split (from its manifest), ``chains``
    chains a step, ``uniform_share`` of them from uniformly drawn trees."""
    settings = rewrite_settings(manifest)
    domain = Domain(atoms=settings["atoms"], tier=settings["tier"], max_size=settings["max_size"])
    return domain, RewriteDraw(chains, settings["length"], settings["partners"] or 0, settings["starts"],
                               settings["start_walk"], settings["tier2_weight"], settings["hold_out"],
                               round(uniform_share * chains), uniform_length)


class RewriteFreshStream(FreshStream):
    """``FreshStream`` over rewrite chains (see the module): the step's chains drawn by ``sampler`` in
    the space of ``certifier``, confirmed ``AHEAD`` steps at a time, packed with the item table E =
    ``item_len`` and the trees P = ``tree_len`` tokens wide (the dataset's)."""

    def __init__(self, sampler: RewriteSampler, seed: int, vocab: Vocab, item_len: int, tree_len: int,
                 certifier: StepCertifier) -> None:
        self.sampler, self.draw, self.seed, self.vocab = sampler, sampler.draw, seed, vocab
        self.item_len, self.tree_len, self.certifier = item_len, tree_len, certifier
        self._ready: dict[int, list[Sample]] = {}  # step -> its certified chains, drawn ahead
        self.counts: Counter = Counter()

    def histories(self, step: int) -> list[Sample]:
        if step not in self._ready and len(self.certifier.space.trees) > SPACE_CAP:
            # before the next steps are drawn: their ids of a fresh space (the store keeps what was certified)
            self.certifier.restart(StateSpace(self.sampler.domain))
        return super().histories(step)

    def drawn(self, step: int) -> list[Sample]:
        return self.sampler.samples(self.certifier.space, self.seed, step)

    def _certify(self, steps: dict[int, list[Sample]]) -> None:
        self._confirm((walk.states, walk.ids) for samples in steps.values() for sample in samples
                      for walk in (sample.chain, *sample.partners))

    def describe(self) -> dict:
        certifier = self.certifier
        lean = certifier.lean
        return {"draw": asdict(self.draw), "counts": dict(self.counts),
                "certificate": "step: e_k = e_{k+1} for all atoms, by congruence from one core lemma",
                "checker": certifier.checker,
                "lean": {"version": lean.version, "githash": lean.githash, "source": lean.source},
                "core_hash": certifier.core.hash}

    def batch(self, step: int) -> tuple[TrackerData, Batch]:
        samples = self.histories(step)
        space = self.certifier.space  # the space they were drawn in (histories may have started a fresh one)
        rows = [(history_of(space, s.chain), [history_of(space, p) for p in s.partners]) for s in samples]
        data = history_tensors(self.vocab, space.domain, rows, f"fresh step {step}")
        items, trees = data.item_tokens, data.tree_tokens  # (I, E'), (R, P')
        if items.shape[1] > self.item_len or trees.shape[1] > self.tree_len:
            raise FreshStreamRefused(f"a fresh rewrite item or tree ({items.shape[1]}, {trees.shape[1]} tokens) is "
                                     f"wider than the dataset's ({self.item_len}, {self.tree_len})")
        data = replace(data, item_tokens=torch.nn.functional.pad(items, (0, self.item_len - items.shape[1])),
                       tree_tokens=torch.nn.functional.pad(trees, (0, self.tree_len - trees.shape[1])))
        return data, whole_batch(data.train)


def rewrite_stream(directory: Path | str, manifest: dict, data: TrackerData, seed: int, chains: int,
                   uniform_share: float, uniform_length: int, certifier: StepCertifier | None = None
                   ) -> RewriteFreshStream:
    """The fresh stream of the rewrite dataset at ``directory`` (its ``manifest``; ``data``, read from
    it, gives the vocabulary and the model's item width); ``certifier`` by default a ``StepCertifier``
    over the default store by the checker that certified the dataset. FreshStreamRefused for a dataset
    with wrong partners on purpose, or one whose chains start among more reachable trees than can be
    enumerated."""
    if manifest.get("corrupt_partners") is not None:
        raise FreshStreamRefused(f"{directory} has wrong partners on purpose, which a fresh stream does not draw; "
                                 "train it with --stream dataset")
    domain, draw = rewrite_draw_of(manifest, chains, uniform_share, uniform_length)
    try:
        sampler = RewriteSampler(domain, draw, held_out(manifest))
    except EnumerationIncomplete as e:
        raise FreshStreamRefused(f"a fresh stream draws starts among every reachable tree: {e}") from None
    if certifier is None:
        lean = find_lean()
        # one Lean process at a time: a run trains at one thread, and its certificates come from one core
        bridge = AskConfig(jobs=1, checker=Checker.recorded(manifest.get("checker", ELABORATOR)))
        certifier = StepCertifier(StateSpace(domain), lean, build_core(lean), bridge, default_store(), quiet)
    # the dataset's tree width: a tier-1 tree keeps its start's 2k - 1 tokens, a tier-2 one is bounded
    tree_len = domain.size_bound or 2 * domain.atoms - 1
    return RewriteFreshStream(sampler, seed, data.vocab, data.item_len, tree_len, certifier)
