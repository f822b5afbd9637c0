"""Fresh certified training histories (``tracker.fresh``): a seeded stream (same seed and step,
same histories; a resumed run repeats the straight one), uniformly drawn start states that cover the
machine, partners that end where their history does, and no history in a loss before every step of
it is certified (with the real Lean on a tiny Bits dataset, and a certifier that refuses a step)."""
from __future__ import annotations

from collections import Counter
from dataclasses import replace

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from chains.groups import S5
from chains.programs.dataset import ProgramsSpec
from chains.programs.domain import ProgramsDomain
from chains.programs.syntax import VARIABLES, Machine
from chains.protocol import run_events
from leanbridge.asker import AskConfig
from leanbridge.certify_programs import certify_programs
from leanbridge.confirm import ClaimCertifier, ProgramsCertifier, StepNotCertified
from leanbridge.discovery import find_lean
from leanbridge.programs import build_programs
from tracker.config import TrainConfig
from tracker.data import load_dataset
from tracker.domain_data import DomainBuilder
from tracker.fresh import Draw, FreshStream, FreshStreamRefused, draw_histories, fresh_stream
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
