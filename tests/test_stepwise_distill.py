"""Nerode self-distillation of the step-by-step model (``stepwise.distill``) on rewrite chains
(``stepwise.rewrite_pairs``): the pairs are what they claim (v a shortest certified equivalent of u, or for the control a history ending elsewhere; w
applies after both), no tree of a long history is ever tokenised for the loss, a pair whose long
history is its short one costs nothing, reading a tail through a copied cache is the forward pass,
and a run with rounds certifies its histories and resumes bit for bit."""
from __future__ import annotations

import random

import networkx as nx
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from stepwise_sizes import EVAL, TINY

from chains.manifest import read_manifest
from chains.rewrite.rules import apply
from chains.rewrite.space import Domain, StateSpace, domain_of
from stepwise.config import StepwiseConfig
from stepwise.data import load_stepwise, sequence
from stepwise.distill import DistillPair, DistillSchedule, LongChain, distill_loss, labelled_loss
from stepwise.model import StepwiseModel
from stepwise.rewrite_pairs import PairSampler, as_values
from stepwise.train import StepwiseTrainer, long_histories, train
from training.checkpoint import CHECKPOINT
from training.loop import train_loop

pytestmark = pytest.mark.usefixtures("one_thread_module")

SPACE = StateSpace(Domain(atoms=4, tier=1))


@pytest.fixture(scope="module")
def tiny(stepwise_tiny):
    return stepwise_tiny


@pytest.fixture(scope="module")
def data(tiny):
    return load_stepwise(tiny)


def graph_distance(start: int, end: int) -> int:
    """The fewest events from ``start`` to ``end``, by networkx over the trees' successors."""
    graph, todo = nx.DiGraph(), [start]
    while todo:
        here = todo.pop()
        for _, there in SPACE.successors(here):
            if not graph.has_edge(here, there):
                graph.add_edge(here, there)
                todo.append(there)
    return nx.shortest_path_length(graph, start, end)


def walk_trees(start, events):
    """The trees after each event, by chains.rewrite.rules.apply; None where one does not apply."""
    tree, out = SPACE.trees[start], []
    for e in events:
        tree = apply(tree, SPACE.events[e])
        if tree is None:
            return None
        out.append(tree)
    return out


@settings(max_examples=25, deadline=None)
@given(st.integers(0, 2**32 - 1), st.booleans())
def test_the_pairs_are_what_they_claim(seed, control):
    n = 8
    chains, pairs = PairSampler(SPACE, n).draw(random.Random(seed), 2, 3, (9, 16), control=control)
    assert len(chains) == 2 and len(pairs) == 6
    for pair in pairs:
        chain = chains[pair.chain]
        assert 9 <= pair.cut <= 16 and len(chain.events) == 17
        trees = walk_trees(chain.states[0], chain.events)
        assert trees is not None and trees[pair.cut - 1] == SPACE.trees[pair.long_end]
        short = walk_trees(pair.short_states[0], pair.short_events)
        assert pair.short_states[0] == chain.states[0]
        end_v = short[-1] if short else SPACE.trees[pair.short_states[0]]
        assert end_v == SPACE.trees[pair.short_states[-1]]
        # self-distillation: v is a shortest history to u's end; the control's ends elsewhere
        assert pair.equivalent is (not control) and (end_v == SPACE.trees[pair.long_end]) is (not control)
        assert len(pair.short_events) == graph_distance(pair.short_states[0], pair.short_states[-1])
        # w applies after both, and the teacher reads at most n events where it can
        assert pair.then_events and walk_trees(pair.long_end, pair.then_events) is not None
        assert walk_trees(pair.short_states[-1], pair.then_events) is not None
        assert len(pair.short_events) + len(pair.then_events) <= max(n, len(pair.short_events) + 1)


@given(st.integers(1, 6), st.integers(1, 50), st.integers(2, 16))
def test_the_rounds_double_the_length(rounds, round_steps, base):
    schedule = DistillSchedule(steps=rounds * round_steps + 7, rounds=rounds, round_steps=round_steps, base=base)
    assert schedule.lengths(6) is None and schedule.round(7) == 1
    seen = [schedule.lengths(step) for step in range(7, schedule.steps)]
    assert seen[0] == (base + 1, 2 * base) and seen[-1] == (base * 2 ** (rounds - 1) + 1, base * 2 ** rounds)
    assert all(b[0] == a[1] + 1 and b[1] == 2 * a[1] for a, b in zip(seen, seen[1:]) if a != b)


def model_for(data) -> StepwiseModel:
    torch.manual_seed(0)
    return StepwiseModel(StepwiseConfig(data="unused", **TINY).model(data.vocab.size))


def test_no_tree_of_a_long_history_is_tokenised_for_the_loss(data, monkeypatch):
    """The distillation tokenises start trees only (what the model is given); the ceiling, which
    reads labels, tokenises the trees along its histories (so the spy would see them)."""
    chains, pairs = as_values(SPACE, *PairSampler(SPACE, 8).draw(random.Random(3), 2, 3, (9, 16)))
    starts = {c.states[0] for c in chains}
    seen = []
    tree_ids = type(data.vocab).tree_ids
    monkeypatch.setattr(type(data.vocab), "tree_ids", lambda self, tree: seen.append(tree) or tree_ids(self, tree))
    model = model_for(data)
    distill_loss(model, model, data.vocab, chains, pairs, data.max_state_tokens + 1).backward()
    assert seen and set(seen) <= starts
    seen.clear()
    labelled_loss(model, data.vocab, data.replay, chains, pairs)
    assert set(seen) - starts


def test_a_pair_whose_long_history_is_its_short_one_costs_nothing(data):
    """u = v (a shortest history, cut at its end): the student reads what the teacher reads."""
    sampler = PairSampler(SPACE, 8)
    start = SPACE.start_trees()[5]
    far = max(sampler._reach(start), key=lambda t: len(sampler.shortest(start, t)[1]))
    states, events = sampler.shortest(start, far)
    then = sampler._joint_walk(random.Random(0), far, far, 2)
    extra = dict(zip(*SPACE.moves(far)))
    event = next(iter(extra))
    chain = LongChain((*states, extra[event]), (*events, event))
    pair = DistillPair(0, len(events), far, states, events, then)
    model = model_for(data)
    loss = distill_loss(model, model, data.vocab, *as_values(SPACE, [chain], [pair]), data.max_state_tokens + 1)
    assert len(events) >= 2 and float(loss.detach()) == pytest.approx(0.0, abs=1e-6)


def test_a_tail_read_after_a_copied_cache_is_the_forward_pass(data):
    model = model_for(data)
    ids = torch.tensor([sequence(data.vocab, data.test_chains(8, 1)[0])[0]])  # (1, L)
    cache = model.start(1, ids.shape[1])
    with torch.no_grad():
        model.read(ids[:, :40], cache)
    copy = cache.prefix(0, 30, ids.shape[1] - 30)
    tail = model.read(ids[:, 30:], copy)  # (1, L - 30, V), with a gradient
    assert torch.allclose(tail, model(ids)[:, 30:], atol=1e-5) and tail.requires_grad
    assert cache.length == 40 and not cache.keys[0].requires_grad  # the original is untouched


@pytest.mark.lean
def test_a_run_with_rounds_certifies_its_histories_and_resumes_bit_for_bit(tiny, data, tmp_path):
    store = tiny.parent / "store.sqlite"
    config = StepwiseConfig(data=str(tiny), steps=4, checkpoint_every=2, objective="self-distill", rounds=1,
                            round_steps=2, long_chains=2, cuts=2, **TINY)
    straight = train(config, tmp_path / "straight", show_progress=False, eval_config=EVAL, data=data, store=store)
    trainer = StepwiseTrainer(config, data)
    trainer.long = long_histories(config, data, store, trainer.rounds)
    (tmp_path / "resumed").mkdir()
    train_loop(trainer, config, tmp_path / "resumed" / CHECKPOINT, show_progress=False, until=3)
    assert trainer.long.source.certifier.steps.counts["distinct_steps"] > 0  # the long histories went through the store
    assert trainer.long.teacher_round == 1 and "teacher" in torch.load(tmp_path / "resumed" / CHECKPOINT,
                                                                       weights_only=False)
    resumed = train(config, tmp_path / "resumed", resume=True, show_progress=False, eval_config=EVAL, data=data,
                    store=store)
    assert set(straight["final_losses"]) == {"ce", "distill"} and resumed["resumed_from_step"] == 3
    weights = [torch.load(tmp_path / run / CHECKPOINT, weights_only=False)["model"] for run in ("straight", "resumed")]
    assert all(torch.equal(weights[0][k], weights[1][k]) for k in weights[0])


def test_the_rounds_learn_at_the_capped_rate(data):
    config = StepwiseConfig(data="unused", steps=100, rounds=2, round_steps=20, round_lr=1e-4, **TINY)
    trainer = StepwiseTrainer(config, data)
    assert trainer.rate(59) is None and trainer.rate(60) == pytest.approx(1e-4) and trainer.rate(99) <= 1e-4


def test_rounds_that_do_not_fit_the_steps_are_refused():
    with pytest.raises(ValueError, match="do not fit"):
        StepwiseConfig(objective="self-distill", steps=100, rounds=5, round_steps=50)
    StepwiseConfig(objective="plain", steps=100, rounds=5, round_steps=50)  # no rounds to fit


def test_the_run_reads_the_domain_of_its_dataset(tiny):
    assert domain_of(read_manifest(tiny), str(tiny)) == SPACE.domain
