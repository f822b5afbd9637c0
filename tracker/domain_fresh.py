"""Fresh certified training histories of programs, groups and domains of one's own (``tracker.fresh``
serves every domain): every step's batch drawn afresh from the dataset's domain.

A dataset's training split is drawn once and read for many epochs, so a model can fit it by
memory and still not have learned the domain's steps. A fresh stream draws each step's B histories
from the domain's own sampling, as the dataset drew its training split (the same lengths and number
of partners), with a generator seeded by the run's seed and the step: a resumed run repeats the
straight one's batches bit for bit, and two runs of one seed read the same histories.

With ``uniform_share``, that share of a batch (its last histories) starts instead from a state
drawn uniformly over the domain's states (``chains.protocol.UniformStates``) and runs 1 to
``uniform_length`` events: the step is taught on the states it will meet far into a long history,
not only on those a short history from the start state reaches.

No history enters a loss before every step of it and of its partners is certified: the stream
draws ``AHEAD`` steps' batches at once and confirms every step of them through the certificate
store (``leanbridge.confirm.claim_certifier``: the store, then Lean for what it lacks). A partner is
equivalent to its history because both are chains of certified steps from one start to one state.
The datasets' held-out protocols of events or pairs are not drawn around, so a fresh stream refuses
a dataset that has one.
"""
from __future__ import annotations

import random
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

import torch

from chains.domains import domain_of_manifest
from chains.manifest import PROGRAMS_FORMAT
from chains.protocol import StateDomain, UniformStates
from leanbridge.batch import AskConfig
from leanbridge.certificates import default_store, quiet
from leanbridge.confirm import ClaimCertifier, claim_certifier, walk_blocks
from tracker.data import Batch, TrackerData
from tracker.domain_data import DomainBuilder, DomainVocab, look_ahead
from tracker.packing import pack, successor_tables

AHEAD = 20  # steps whose batches are drawn and certified together (one trip to the store and Lean)
# states the certifier's space interns before it starts afresh: a small domain's steps (Bits: 256
# states) stay confirmed for the whole run, a large one's space (Arithmetic: 16^8) stays bounded
SPACE_CAP = 1_000_000

History = tuple[object, tuple, list[tuple[object, tuple]]]  # start, events, partners as (start, events)


class FreshStreamRefused(ValueError):
    """A dataset or model a fresh stream cannot serve; the message says why in one line."""


@dataclass(frozen=True)
class Draw:
    """How a step's histories are drawn: ``lengths`` events (uniform, inclusive) from the domain's
    start state, ``partners`` certified partners each; the last ``uniform`` of ``chains`` histories
    from a uniformly drawn state, of 1 to ``uniform_length`` events."""

    chains: int
    lengths: tuple[int, int]
    partners: int
    uniform: int = 0
    uniform_length: int = 4

    def __post_init__(self) -> None:
        if self.chains < 1 or not 1 <= self.lengths[0] <= self.lengths[1] or self.partners < 0:
            raise ValueError("a draw needs chains >= 1, 1 <= shortest <= longest length and partners >= 0")
        if not 0 <= self.uniform <= self.chains or self.uniform_length < 1:
            raise ValueError("a draw's uniform histories must be 0 to chains, each of 1 or more events")


def draw_of(manifest: dict, chains: int, uniform_share: float, uniform_length: int) -> Draw:
    """The draw of a dataset's training split (its lengths and partners, from its manifest), ``chains``
    histories a step, ``uniform_share`` of them from uniformly drawn states."""
    if manifest.get("format") == PROGRAMS_FORMAT:
        lengths = (int(manifest["min_length"]), int(manifest["max_length"]))
    else:
        lengths = (int(manifest["length"]),) * 2
    return Draw(chains, lengths, int(manifest.get("partners") or 0), round(uniform_share * chains), uniform_length)


def draw_histories(domain: StateDomain, draw: Draw, seed: int, step: int) -> list[History]:
    """Step ``step``'s histories, a pure function of (domain, draw, seed, step)."""
    rng = random.Random(seed * 1_000_003 + step)
    out = []
    for b in range(draw.chains):
        if b >= draw.chains - draw.uniform:
            start, length = domain.uniform_state(rng), rng.randint(1, draw.uniform_length)
        else:
            start, length = domain.start_state(rng), rng.randint(*draw.lengths)
        events = tuple(domain.sample_events(rng, start, length))
        partners = []
        for _ in range(draw.partners):
            p_start, p_events = domain.sample_partner(rng, start, events)
            partners.append((p_start, tuple(p_events)))
        out.append((start, events, partners))
    return out


class FreshStream:
    """Certified batches for a run's steps (see the module). ``certifier`` confirms the steps of
    histories interned in its space (a ``DomainBuilder`` of ``domain``); ``counts`` says what it took."""

    def __init__(self, domain: StateDomain, draw: Draw, seed: int, vocab: DomainVocab, item_len: int,
                 certifier: ClaimCertifier) -> None:
        if draw.uniform and not isinstance(domain, UniformStates):
            raise FreshStreamRefused(f"the {domain.name} domain draws no uniform state "
                                     "(chains.protocol.UniformStates); train with --uniform-share 0")
        self.domain, self.draw, self.seed, self.vocab, self.item_len = domain, draw, seed, vocab, item_len
        self.certifier = certifier
        self._ready: dict[int, list[History]] = {}  # step -> its certified histories, drawn ahead
        self.counts: Counter = Counter()  # histories served, and the certifier's counts of this call

    def histories(self, step: int) -> list[History]:
        """Step ``step``'s histories, every step of them and their partners certified (StepNotCertified
        from the certifier naming the first that is not)."""
        if step not in self._ready:
            self._ready = {s: self.drawn(s) for s in range(step, step + AHEAD)}
            self._certify(self._ready)
        histories = self._ready.pop(step)
        self.counts["histories"] += len(histories) * (1 + self.draw.partners)
        return histories

    def drawn(self, step: int) -> list[History]:
        """Step ``step``'s histories as drawn, not yet certified."""
        return draw_histories(self.domain, self.draw, self.seed, step)

    def _certify(self, steps: dict[int, list[History]]) -> None:
        space = self.certifier.space
        if len(space.states) > SPACE_CAP:  # ids of a fresh space; the store keeps what was certified
            space = DomainBuilder(self.domain)
            self.certifier.restart(space)
        self._confirm((space.history(s, e)[1], [space.event(x) for x in e])
                      for histories in steps.values() for start, events, partners in histories
                      for s, e in [(start, events), *partners] if e)

    def _confirm(self, walks: Iterable[tuple[Sequence[int], Sequence[int]]]) -> None:
        """Every step of ``walks`` (state ids, event ids of the certifier's space) confirmed in one call,
        and what that took added to ``counts``."""
        before = Counter(self.certifier.counts)
        self.certifier.confirm_blocks(walk_blocks(walks))
        self.counts.update(Counter(self.certifier.counts) - before)

    def describe(self) -> dict:
        """What a report records of the stream: its draw, what serving it took in this call (histories,
        partners included; the certifier's counts) and what certified every step."""
        return {"draw": asdict(self.draw), "counts": dict(self.counts), "certificate": self.certifier.certificate,
                **self.certifier.provenance()}

    def batch(self, step: int) -> tuple[TrackerData, Batch]:
        """Step ``step``'s certified histories as tensors of their own (items, states and successor
        tables; ``TrackerData``'s meaning, no test split) and the batch of all of them."""
        histories = self.histories(step)
        return batch_tensors(self.domain, self.vocab, self.item_len, histories)


def batch_tensors(domain: StateDomain, vocab: DomainVocab, item_len: int, histories: Sequence[History]
                  ) -> tuple[TrackerData, Batch]:
    """``histories`` as a ``TrackerData`` of their own (items E = ``item_len`` tokens wide, the
    model's) and the batch of every one of them with its partners, in order."""
    space = DomainBuilder(domain)
    rows = [(space.history(start, events), [space.history(s, e) for s, e in partners])
            for start, events, partners in histories]
    succ = look_ahead(domain, space, sorted({chain[1][-1] for chain, _ in rows}))
    n_states = len(space.states)
    items, state_tokens = space.tables(vocab)
    if items.shape[1] > item_len:
        raise FreshStreamRefused(f"a fresh {domain.name} item is {items.shape[1]} tokens wide, the model reads "
                                 f"{item_len}")
    items = torch.nn.functional.pad(items, (0, item_len - items.shape[1]))
    train = pack(rows, n_states, with_trees=True)
    succ_items, succ_trees = successor_tables(succ, n_states)
    data = TrackerData(vocab=vocab, item_tokens=items, tree_tokens=state_tokens,
                       tree_items=torch.arange(1, n_states + 1), train=train, tests={},
                       succ_items=succ_items, succ_trees=succ_trees, identity={})
    return data, whole_batch(train)


def whole_batch(train: dict[str, torch.Tensor]) -> Batch:
    """Every chain of a packed split (``tracker.packing.pack``, with trees) with its partners, in order."""
    ci, ct = train["chain_items"], train["chain_trees"]  # (B, T)
    pi, pt = train["partner_items"], train["partner_trees"]  # (B, K, T)
    return Batch(items=torch.cat([ci, pi.reshape(-1, pi.shape[-1])]).long(),
                 trees=torch.cat([ct, pt.reshape(-1, pt.shape[-1])]).long(), chains=len(ci), partners=pi.shape[1])


def domain_fresh_stream(directory: Path | str, manifest: dict, data: TrackerData, seed: int, chains: int,
                        uniform_share: float, uniform_length: int, certifier: ClaimCertifier | None = None
                        ) -> FreshStream:
    """The fresh stream of the programs, groups or own-domain dataset at ``directory`` (its
    ``manifest``; ``data``, read from it, gives the vocabulary and the model's item width);
    ``certifier`` by default the domain's own over the default store. FreshStreamRefused for a
    dataset with a held-out protocol of events or pairs."""
    kind = (manifest.get("holdout") or {}).get("kind")
    if kind in ("events", "pairs"):
        raise FreshStreamRefused(f"{directory} holds {kind} out of training, which a fresh stream does not draw "
                                 "around; train it with --stream dataset")
    domain = domain_of_manifest(manifest, str(directory))
    if certifier is None:
        # one Lean process at a time: a run trains at one thread, and its certificates come from one core
        certifier = claim_certifier(domain, DomainBuilder(domain), default_store(), quiet, AskConfig(jobs=1))
    draw = draw_of(manifest, chains, uniform_share, uniform_length)
    return FreshStream(domain, draw, seed, data.vocab, data.item_len, certifier)


