"""Fresh certified training histories (``tracker.fresh``): a seeded stream (same seed and step,
same histories; a resumed run repeats the straight one), uniformly drawn start states that cover the
machine, partners that end where their history does, and no history in a loss before every step of
it is certified (with the real Lean on a tiny Bits dataset, and a certifier that refuses a step).
On rewrite chains (``tracker.fresh.RewriteFreshStream``, a tiny tier-1 dataset and the real Lean): the training
split's sampler, held-out events and pairs drawn around, targets the rules reach, every step in the
store before a batch is served, and a few steps of training."""
from __future__ import annotations

import random
from collections import Counter
from dataclasses import replace

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from chains.groups import S5
from chains.holdout import HoldOut
from chains.manifest import read_manifest
from chains.programs.dataset import ProgramsSpec
from chains.programs.domain import ProgramsDomain
from chains.programs.syntax import VARIABLES, Machine
from chains.protocol import run_events
from chains.rewrite.dataset import read_split
from chains.rewrite.holdout import choose
from chains.rewrite.rules import Event, apply
from chains.rewrite.sampling import sample_split
from chains.rewrite.space import Domain, StateSpace, domain_of
from chains.rewrite.trees import parse_tokens
from leanbridge.asker import AskConfig
from leanbridge.certify_programs import certify_programs
from leanbridge.checker import Checker
from leanbridge.confirm import ClaimCertifier, ProgramsCertifier, StepCertifier, StepNotCertified
from leanbridge.discovery import find_lean
from leanbridge.programs import build_programs
from tracker.config import TrainConfig
from tracker.data import history_tensors, load_dataset
from tracker.domain_data import DomainBuilder
from tracker.domain_fresh import Draw, FreshStream, FreshStreamRefused, draw_histories
from tracker.fresh import RewriteDraw, RewriteSampler, fresh_stream, rewrite_stream
from tracker.train import Trainer, train

pytestmark = pytest.mark.usefixtures("one_thread_module")

BITS = ProgramsDomain(Machine(2))
ARITHMETIC = ProgramsDomain(Machine(16))
DRAW = Draw(chains=6, lengths=(4, 16), partners=2, uniform=2, uniform_length=4)


def _end(domain, start, events):
    return run_events(domain, start, events)[-1] if events else start


@given(st.integers(0, 2**31), st.integers(0, 10**6))
@settings(max_examples=10, deadline=None)
def test_a_step_draws_the_same_histories_for_the_same_seed_and_another_step_others(seed, step):
    first = draw_histories(BITS, DRAW, seed, step)
    assert draw_histories(BITS, DRAW, seed, step) == first
    assert draw_histories(BITS, DRAW, seed, step + 1) != first


@given(st.integers(0, 2**31), st.integers(0, 10**6), st.sampled_from([BITS, ARITHMETIC]))
@settings(max_examples=10, deadline=None)
def test_every_partner_ends_where_its_history_does_and_each_history_has_the_draws_lengths(seed, step, domain):
    histories = draw_histories(domain, DRAW, seed, step)
    assert len(histories) == DRAW.chains
    for b, (start, events, partners) in enumerate(histories):
        uniform = b >= DRAW.chains - DRAW.uniform
        lo, hi = (1, DRAW.uniform_length) if uniform else DRAW.lengths
        assert lo <= len(events) <= hi
        if not uniform:
            assert start == (0,) * VARIABLES  # programs start at the zero state
        assert len(partners) == DRAW.partners
        assert all(s == start and _end(domain, s, e) == _end(domain, start, events) for s, e in partners)


@given(st.integers(0, 2**31))
@settings(max_examples=3, deadline=None)
def test_the_uniformly_drawn_starts_cover_the_machine(seed):
    """Bits: 1,000 steps of 8 uniform histories reach every one of the 256 states, and each
    variable holds each value about half the time; S5: all 120 elements."""
    draw = Draw(chains=8, lengths=(4, 16), partners=0, uniform=8, uniform_length=1)
    starts = [h[0] for step in range(1_000) for h in draw_histories(BITS, draw, seed, step)]
    assert len(set(starts)) == 2 ** VARIABLES
    for v in range(VARIABLES):
        share = sum(s[v] for s in starts) / len(starts)
        assert 0.45 < share < 0.55
    elements = {h[0] for step in range(200) for h in draw_histories(S5, draw, seed, step)}
    assert len(elements) == 120


class Refusing(ClaimCertifier):
    """A certifier that certifies nothing: the first step it is asked about is refused."""

    certificate = "none"

    def __init__(self, domain) -> None:
        super().__init__(DomainBuilder(domain), None, None, None, ".", lambda *a: None, Counter())
        self.asked = 0

    def certify(self, blocks):
        self.asked += sum(int(needed.sum()) for _, _, needed, _ in blocks)
        raise StepNotCertified("chain 0 step 1: not certified (a certifier that certifies nothing)")


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    """A tiny Bits dataset certified by Lean into a store of its own."""
    root = tmp_path_factory.mktemp("fresh")
    spec = ProgramsSpec(machine=Machine(2), chains=16, partners=1, test_lengths=(16,), test_chains=4)
    certify_programs(spec, root / "data", root / "store.sqlite", AskConfig())
    return root


@pytest.fixture(scope="module")
def programs_certifier(tiny):
    lean = find_lean()
    library = build_programs(lean)
    return lambda: ProgramsCertifier(DomainBuilder(BITS), BITS.machine, lean, library, AskConfig(jobs=1),
                                     tiny / "store.sqlite", lambda *a: None)


def test_a_step_the_certifier_refuses_never_reaches_a_loss(tiny):
    config = TrainConfig(data=str(tiny / "data"), objective="invariance", width=16, steps=3, batch_chains=4,
                         stream="fresh", checkpoint_every=3)
    data = load_dataset(tiny / "data")
    trainer = Trainer(replace(config, stream="dataset"), data)  # then handed a stream of its own
    refusing = Refusing(BITS)
    trainer.fresh = fresh_stream(tiny / "data", data, config.seed, config.batch_chains, 0.0, 4, refusing)
    before = {k: v.clone() for k, v in trainer.model.state_dict().items()}
    with pytest.raises(StepNotCertified, match="chain 0 step 1"):
        trainer.train_step(0)
    assert refusing.asked > 0
    assert all(torch.equal(before[k], v) for k, v in trainer.model.state_dict().items())  # no step was taken


def test_every_step_of_a_fresh_batch_is_in_the_store_before_the_batch_is_served(tiny, programs_certifier):
    data = load_dataset(tiny / "data")
    stream = fresh_stream(tiny / "data", data, 7, 4, 0.5, 3, programs_certifier())
    stream.batch(0)
    assert stream.counts["asked"] > 0 and stream.counts["histories"] == 4 * 2
    # a new certifier over the same store confirms every history of the step without Lean
    again = programs_certifier()
    space = again.space
    for start, events, partners in draw_histories(BITS, stream.draw, 7, 0):
        for s, e in [(start, events), *partners]:
            again.confirm(np.array([space.history(s, e)[1]]), np.array([[space.event(x) for x in e]]), 1)
    assert again.counts["asked"] == 0 and again.counts["from_store"] > 0


def test_a_fresh_batch_holds_the_steps_histories_with_their_true_states(tiny, programs_certifier):
    data = load_dataset(tiny / "data")
    stream = fresh_stream(tiny / "data", data, 3, 4, 0.25, 3, programs_certifier())
    tensors, batch = stream.batch(5)
    histories = draw_histories(BITS, stream.draw, 3, 5)
    rows = [(start, events) for start, events, _ in histories] + [p for _, _, ps in histories for p in ps]
    assert batch.chains == 4 and batch.partners == 1 and len(batch.items) == len(rows)
    for row, (start, events) in enumerate(rows):
        states = [start, *run_events(BITS, start, events)]
        ids = batch.trees[row][: len(states)].tolist()
        # each step's target is the state Python's interpreter reaches, read back from the tensors
        assert [tuple(c - 1 for c in tensors.tree_tokens[i].tolist()) for i in ids] == states
        assert (batch.items[row][len(states):] == 0).all()


def test_fresh_training_repeats_itself_and_a_resumed_run_ends_where_the_straight_one_does(tiny, tmp_path):
    config = TrainConfig(data=str(tiny / "data"), objective="invariance", width=16, steps=6, batch_chains=4,
                         stream="fresh", uniform_share=0.5, uniform_length=2, checkpoint_every=3, warmup_steps=1)
    straight = train(config, tmp_path / "a", show_progress=False)
    again = train(config, tmp_path / "b", show_progress=False)
    assert straight["final_losses"] == again["final_losses"]
    trainer = Trainer(config, load_dataset(config.data))  # stopped after 3 steps, then resumed
    for step in range(3):
        trainer.train_step(step)
        trainer.step += 1
    (tmp_path / "c").mkdir()
    torch.save(trainer.checkpoint(), tmp_path / "c" / "checkpoint.pt")
    resumed = train(config, tmp_path / "c", resume=True, show_progress=False)
    assert resumed["final_losses"] == straight["final_losses"]
    assert straight["fresh_stream"]["draw"]["uniform"] == 2
    assert straight["fresh_stream"]["counts"]["histories"] == 6 * 4 * 2
    assert straight["fresh_stream"]["lean"]["version"] == "4.35.0"


def test_the_register_per_variable_reads_fresh_batches_and_keeps_its_own_items(tiny, tmp_path):
    config = TrainConfig(data=str(tiny / "data"), arch="registers", objective="plain", width=16, steps=2,
                         batch_chains=4, stream="fresh", checkpoint_every=2, warmup_steps=1)
    data = load_dataset(tiny / "data")
    trainer = Trainer(config, data)
    own = trainer.model.embed.item_tokens
    trainer.train_step(0)
    assert trainer.model.embed.item_tokens is own and trainer.model.item_kind.shape[0] == own.shape[0]


def test_a_fresh_stream_is_refused_where_it_cannot_be_drawn(tiny):
    data = load_dataset(tiny / "data")
    with pytest.raises(ValueError, match="uniform_share"):
        TrainConfig(uniform_share=0.5)  # a dataset's split draws no uniform state
    with pytest.raises(FreshStreamRefused, match="uniform state"):
        FreshStream(_NoUniform(), DRAW, 0, data.vocab, data.item_len, Refusing(BITS))


class _NoUniform:
    name = "plain"


def test_one_history_at_a_time_or_all_at_once_the_stream_draws_the_same(tiny, programs_certifier):
    data = load_dataset(tiny / "data")
    a = fresh_stream(tiny / "data", data, 11, 4, 0.0, 4, programs_certifier())
    b = fresh_stream(tiny / "data", data, 11, 4, 0.0, 4, programs_certifier())
    b.histories(2)  # drawn ahead from step 2
    assert a.histories(3) == b.histories(3) == draw_histories(BITS, a.draw, 11, 3)


# ---- rewrite chains (tracker.fresh.RewriteFreshStream), with the real Lean on a tiny tier-1 dataset ----

TIER1 = Domain(atoms=4)
REWRITE_DRAW = RewriteDraw(chains=6, length=8, partners=2)


def _as_trees(space: StateSpace, samples) -> list:
    """Samples as trees and events (ids depend on what a space interned before)."""
    return [[(space.trees[w.states[0]], w.events, space.trees[w.end]) for w in (s.chain, *s.partners)]
            for s in samples]


@given(st.integers(0, 2**31), st.integers(0, 10**6))
@settings(max_examples=10, deadline=None)
def test_a_step_draws_the_chains_the_training_split_would_from_its_generator_whatever_the_space_holds(seed, step):
    sampler = RewriteSampler(TIER1, REWRITE_DRAW, None)
    used = StateSpace(TIER1)
    sampler.samples(used, seed, step + 1)  # another step's chains interned first
    first = _as_trees(used, sampler.samples(used, seed, step))
    space = StateSpace(TIER1)
    assert _as_trees(space, sampler.samples(space, seed, step)) == first
    split = StateSpace(TIER1)  # certify's sampler, the generator seeded by (seed, step)
    assert _as_trees(split, sample_split(split, random.Random(seed * 1_000_003 + step), 6, 8, 2)) == first
    assert _as_trees(space, sampler.samples(space, seed, step + 2)) != first


@given(st.integers(0, 2**31), st.sampled_from(["events:3", "pairs:2"]))
@settings(max_examples=4, deadline=None)
def test_fresh_chains_and_partners_draw_around_the_held_out_events_or_pairs(seed, protocol):
    kind, count = protocol.split(":")
    held = choose(HoldOut(kind, int(count)), TIER1, 0)
    draw = RewriteDraw(chains=8, length=8, partners=2, uniform=2)
    sampler, space = RewriteSampler(TIER1, draw, held), StateSpace(TIER1)
    for step in range(5):
        for walks in _as_trees(space, sampler.samples(space, seed, step)):
            assert len(walks[0][1]) == 8 or 1 <= len(walks[0][1]) <= draw.uniform_length
            for start, events, end in walks:
                assert held.first_held(events) is None and end == walks[0][2]


@pytest.fixture(scope="module")
def tiny_rewrite(certify_tiny):
    """A tiny tier-1 dataset certified by Lean into a store of its own (beside it)."""
    return certify_tiny(12, 4)


@pytest.fixture(scope="module")
def step_certifier(tiny_rewrite, lean, core):
    return lambda: StepCertifier(StateSpace(TIER1), lean, core, AskConfig(checker=Checker.KERNEL),
                                 tiny_rewrite.parent / "store.sqlite", lambda *a: None)


def _decoded(data, item: int) -> tuple[str, object]:
    """An item id of ``data`` read back from its tokens: ("tree", the tree) or ("event", the event)."""
    vocab = data.vocab
    toks = [vocab.tokens[t] for t in data.item_tokens[item].tolist() if t != 0]
    if toks[0] in vocab.rules:
        return "event", Event(toks[0], "".join(toks[1:]))
    return "tree", parse_tokens(toks, vocab.atoms)


def test_a_fresh_rewrite_batch_holds_the_trees_the_rules_reach_every_step_in_the_store_first(tiny_rewrite,
                                                                                              step_certifier):
    data = load_dataset(tiny_rewrite)
    stream = fresh_stream(tiny_rewrite, data, 5, 4, 0.0, 4, step_certifier())
    tensors, batch = stream.batch(3)
    assert stream.counts["asked"] > 0 and stream.counts["histories"] == 4 * 3
    assert tensors.item_len == data.item_len and tensors.tree_len == data.tree_len
    assert batch.chains == 4 and batch.partners == 2 and len(batch.items) == 12
    for row in range(len(batch.items)):
        items = [_decoded(tensors, i) for i in batch.items[row][batch.mask[row]].tolist()]
        kind, here = items[0]
        assert kind == "tree" and all(k == "event" for k, _ in items[1:])
        assert len(items) == 9 if row < 4 else len(items) <= 9  # a chain of the training length, partners up to it
        trees = [here]
        for _, event in items[1:]:
            trees.append(apply(trees[-1], event))
        # each step's target is the tree Python's rules reach, read back from the tensors
        assert [_decoded(tensors, 1 + i)[1] for i in batch.trees[row][: len(trees)].tolist()] == trees
        assert (batch.trees[row][len(trees):] == -1).all()
    ends = batch.ends
    assert (ends[4:].view(4, 2) == ends[:4, None]).all()  # every partner ends at its chain's tree
    # a new certifier over the same store confirms every step of the step's chains without Lean
    again = step_certifier()
    for walks in stream.sampler.samples(again.space, 5, 3):
        for walk in (walks.chain, *walks.partners):
            if walk.ids:
                again.confirm(np.array([walk.states]), np.array([walk.ids]), 1)
    assert again.counts["asked"] == 0 and again.counts["from_store"] > 0


def test_the_same_seed_and_step_give_the_same_rewrite_chains_drawn_ahead_or_not(tiny_rewrite, step_certifier):
    data = load_dataset(tiny_rewrite)
    a = fresh_stream(tiny_rewrite, data, 11, 4, 0.0, 4, step_certifier())
    b = fresh_stream(tiny_rewrite, data, 11, 4, 0.0, 4, step_certifier())
    b.histories(2)  # drawn ahead from step 2
    assert _as_trees(a.certifier.space, a.histories(3)) == _as_trees(b.certifier.space, b.histories(3))
    assert torch.equal(a.batch(4)[1].items, b.batch(4)[1].items)


def test_a_rewrite_step_the_certifier_refuses_never_reaches_a_loss(tiny_rewrite, step_certifier):
    config = TrainConfig(data=str(tiny_rewrite), objective="invariance", width=16, steps=3, batch_chains=4,
                         checkpoint_every=3)
    data = load_dataset(tiny_rewrite)
    trainer = Trainer(config, data)
    refusing = step_certifier()
    refusing.confirm_blocks = _refuse
    trainer.fresh = fresh_stream(tiny_rewrite, data, config.seed, config.batch_chains, 0.0, 4, refusing)
    before = {k: v.clone() for k, v in trainer.model.state_dict().items()}
    with pytest.raises(StepNotCertified, match="chain 0 step 1"):
        trainer.train_step(0)
    assert all(torch.equal(before[k], v) for k, v in trainer.model.state_dict().items())  # no step was taken


def _refuse(blocks):
    raise StepNotCertified("chain 0 step 1: not certified (a certifier that certifies nothing)")


def test_a_rewrite_dataset_with_wrong_partners_on_purpose_is_refused(tiny_rewrite, step_certifier):
    manifest = {**read_manifest(tiny_rewrite), "corrupt_partners": {"kind": "near", "share": 0.5}}
    with pytest.raises(FreshStreamRefused, match="wrong partners on purpose"):
        rewrite_stream(tiny_rewrite, manifest, load_dataset(tiny_rewrite), 0, 4, 0.0, 4, step_certifier())


def test_split_tensors_of_a_datasets_training_chains_read_as_the_loader_reads_them(tiny_rewrite):
    data = load_dataset(tiny_rewrite, use_cache=False)
    domain = domain_of(read_manifest(tiny_rewrite), "here")
    records = [record for _, record in read_split(tiny_rewrite / "train.jsonl", domain)]
    own = history_tensors(data.vocab, domain, [(r, r.partners) for r in records], "train.jsonl")
    for name in ("chain_items", "chain_trees", "partner_items", "partner_trees"):
        a, b = own.train[name], data.train[name]
        assert a.shape == b.shape
        tokens = (own.item_tokens, data.item_tokens) if "items" in name else (own.tree_tokens, data.tree_tokens)
        assert tokens[0].shape[1] == tokens[1].shape[1]
        # every step's item and tree as tokens (-1 at padding): the same, whatever ids each table gave them
        assert torch.equal(_rows_of(tokens[0], a), _rows_of(tokens[1], b))


def _rows_of(table: torch.Tensor, ids: torch.Tensor) -> torch.Tensor:
    return torch.where((ids >= 0)[..., None], table[ids.clamp(min=0).long()], -1)


@pytest.mark.parametrize("arch", ["recurrence", "transformer"])
def test_three_fresh_steps_train_on_rewrite_chains_and_the_report_says_so(tiny_rewrite, tmp_path, arch):
    config = TrainConfig(data=str(tiny_rewrite), arch=arch, objective="combo", width=16, steps=3, batch_chains=4,
                         stream="fresh", checkpoint_every=3, warmup_steps=1)
    report = train(config, tmp_path / arch, show_progress=False)
    fresh = report["fresh_stream"]
    assert report["steps"] == 3 and fresh["counts"]["histories"] == 3 * 4 * 3
    assert fresh["draw"]["length"] == 8 and fresh["checker"].startswith("kernel:")
    assert fresh["counts"]["distinct_steps"] > 0 and fresh["lean"]["version"] == "4.35.0"


def test_the_rewrite_registers_read_fresh_batches_and_keep_their_own_items(tiny_rewrite):
    config = TrainConfig(data=str(tiny_rewrite), arch="registers", layout="paths", objective="plain", width=8,
                         steps=2, batch_chains=4, stream="fresh", checkpoint_every=2, warmup_steps=1)
    trainer = Trainer(config, load_dataset(tiny_rewrite))
    model = trainer.model
    own = {k: getattr(model, k) for k in ("item_kind", "item_heap", "item_rule", "item_node")}
    tensors, _ = trainer.fresh.batch(0)
    with model.reading(tensors.item_tokens):
        assert model.item_kind.shape[0] == tensors.n_items
        assert torch.equal(model.item_kind[1:1 + tensors.tree_tokens.shape[0]], torch.ones(tensors.tree_tokens.shape[0],
                                                                                            dtype=torch.long))
    trainer.train_step(0)
    assert all(getattr(model, k) is v for k, v in own.items())
