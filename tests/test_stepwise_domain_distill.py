"""Nerode self-distillation of the step-by-step model on domains other than rewrite chains
(``stepwise.domain_pairs``): on programs v is the domain's own short history (constant
assignments) to u's end and the control's v ends elsewhere; on a domain without one (the dial) v is
a shortest history found by search; w applies after both; every step of u, v and w reaches the
certifier; no state of a long history is tokenised for the loss; a short history that lies is
refused; and a run with rounds on programs certifies its histories through Lean and the store."""
from __future__ import annotations

import random
from collections import deque

import numpy as np
import pytest
import torch
from conftest import run_certify
from dial_domain import POSITIONS, Dial
from hypothesis import given, settings
from hypothesis import strategies as st
from stepwise_sizes import TINY

from chains.programs.domain import ProgramsDomain
from chains.programs.syntax import Statement, const
from chains.protocol import run_events
from stepwise.config import StepwiseConfig
from stepwise.distill import distill_loss, labelled_loss
from stepwise.domain_data import DomainStepVocab
from stepwise.domain_pairs import DomainPairs
from stepwise.evaluate import StepwiseEvalConfig
from stepwise.model import StepwiseModel
from stepwise.train import train
from tracker.domain_data import DomainBuilder

pytestmark = pytest.mark.usefixtures("one_thread_module")

BITS = ProgramsDomain()
N = 16  # the training programs' length the pairs are drawn for


class Claims:
    """A certifier that keeps every step it is asked to confirm, as (state, event, state after)."""

    def __init__(self, space: DomainBuilder) -> None:
        self.space, self.steps = space, set()

    def confirm(self, states: np.ndarray, events: np.ndarray, first_step: int) -> None:
        for row, ids in zip(states.tolist(), events.tolist()):
            self.steps |= {(self.space.states[a], self.space.events[e], self.space.states[b])
                           for a, e, b in zip(row, ids, row[1:])}


def pairs_of(domain, seed: int, control: bool, lengths: tuple[int, int] = (N + 1, 2 * N), base: int = N):
    space = DomainBuilder(domain)
    claims = Claims(space)
    chains, pairs = DomainPairs(domain, base, claims, space).draw(random.Random(seed), 2, 3, lengths, control)
    return chains, pairs, claims.steps


def steps_of(domain, start, events) -> set:
    states = [start, *run_events(domain, start, events)]
    return set(zip(states, events, states[1:]))


@settings(max_examples=25, deadline=None)
@given(st.integers(0, 2**32 - 1), st.booleans())
def test_the_programs_pairs_are_what_they_claim_and_every_step_reaches_the_certifier(seed, control):
    chains, pairs, certified = pairs_of(BITS, seed, control)
    assert len(chains) == 2 and len(pairs) == 6
    for chain in chains:
        assert len(chain.events) == 2 * N + 1 and list(chain.states[1:]) == run_events(BITS, *chain.states[:1],
                                                                                       chain.events)
        assert steps_of(BITS, chain.states[0], chain.events) <= certified
    for pair in pairs:
        chain = chains[pair.chain]
        assert N + 1 <= pair.cut <= 2 * N and pair.long_end == chain.states[pair.cut]
        assert pair.short_states[0] == chain.states[0]
        assert list(pair.short_states[1:]) == run_events(BITS, pair.short_states[0], pair.short_events)
        assert pair.equivalent is (not control)
        if not control:  # the domain's own short history: one constant assignment per differing variable
            differ = [v for v in range(8) if pair.short_states[0][v] != pair.long_end[v]]
            assert pair.short_events == tuple(Statement(v, "set", (const(pair.long_end[v]),)) for v in differ)
        assert 1 <= len(pair.short_events) + len(pair.then_events) <= max(N, len(pair.short_events) + 1)
        assert pair.then_events
        for start, events in ((pair.short_states[0], pair.short_events), (pair.long_end, pair.then_events),
                              (pair.short_states[-1], pair.then_events)):
            assert steps_of(BITS, start, events) <= certified


def dial_distance(start: int, end: int) -> int:
    """The fewest moves from ``start`` to ``end``, breadth-first over the dial's successors."""
    seen, todo = {start: 0}, deque([start])
    while todo:
        here = todo.popleft()
        for _, there in Dial().successors(here):
            if there not in seen:
                seen[there] = seen[here] + 1
                todo.append(there)
    return seen[end]


@settings(max_examples=15, deadline=None)
@given(st.integers(0, 2**32 - 1))
def test_on_a_domain_without_short_histories_v_is_a_shortest_one(seed):
    chains, pairs, _ = pairs_of(Dial(), seed, control=False, lengths=(7, 12), base=6)
    for pair in pairs:
        assert pair.equivalent and pair.short_states[-1] == pair.long_end < POSITIONS
        assert len(pair.short_events) == dial_distance(pair.short_states[0], pair.long_end)


def test_a_short_history_that_does_not_end_where_it_claims_is_refused():
    class Lying(ProgramsDomain):
        def short_history(self, start, end):
            return [Statement(0, "set", (const(1 - end[0]),))]

    with pytest.raises(ValueError, match="short history from 00000000 ends at"):
        pairs_of(Lying(), 0, control=False)


def test_no_state_of_a_long_history_is_tokenised_for_the_loss(monkeypatch):
    """The distillation reads starts and events only; the ceiling, which reads labels, writes the
    states along its histories (so the spy would see them)."""
    chains, pairs, _ = pairs_of(BITS, 3, control=False)
    vocab = DomainStepVocab(BITS)
    torch.manual_seed(0)
    model = StepwiseModel(StepwiseConfig(data="unused", **TINY).model(vocab.size))
    seen = []
    state_ids = DomainStepVocab.state_ids
    monkeypatch.setattr(DomainStepVocab, "state_ids", lambda self, state: seen.append(state) or state_ids(self, state))
    distill_loss(model, model, vocab, chains, pairs, len(BITS.readout()) + 1).backward()
    assert not seen
    labelled_loss(model, vocab, lambda chain: run_events(BITS, *chain), chains, pairs)
    assert {c.states[1] for c in chains} <= set(seen)


@pytest.mark.lean
def test_a_programs_run_with_rounds_certifies_its_histories(store, tmp_path):
    data = tmp_path / "bits"
    code, output = run_certify(["--domain", "programs", "--chains", "40", "--test-chains", "4", "--test-lengths",
                                "16", "--out", str(data), "--store", str(store)])
    assert code == 0, output
    config = StepwiseConfig(data=str(data), steps=4, objective="control", rounds=1, round_steps=2, long_chains=1,
                            cuts=2, **TINY)
    report = train(config, tmp_path / "run", show_progress=False, store=store,
                   eval_config=StepwiseEvalConfig(lengths=(16,), chains=2))
    assert set(report["final_losses"]) == {"ce", "distill"} and report["steps"] == 4
