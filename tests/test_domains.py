"""The domain contract (``chains.contract.check_domain``, which a domain's author runs too) against
every domain: the rewrite tiers, the programs machines and a tiny third domain written only against
the protocol (tests/dial_domain.py), which Lean also certifies by evaluating its own module."""
from __future__ import annotations

import random

import pytest
from hypothesis import given, settings, strategies as st

from chains.contract import check_domain, check_history
from chains.groups import A5, S3xS3, S5_distractor
from chains.programs.domain import ProgramsDomain
from chains.programs.syntax import Machine, Statement, const
from chains.protocol import EventRefused, KernelEvaluated, run_events
from chains.rewrite.domain import RewriteDomain
from chains.rewrite.rules import Event
from chains.rewrite.space import Domain
from dial_domain import Dial
from tracker.domain_data import build_tensors

DOMAINS = {
    "rewrite-tier1-a4": RewriteDomain(Domain(4, 1)),
    "rewrite-tier2-a4": RewriteDomain(Domain(4, 2)),
    "rewrite-tier1-a6": RewriteDomain(Domain(6, 1)),
    "programs-bits": ProgramsDomain(Machine(2)),
    "programs-arithmetic": ProgramsDomain(Machine(16)),
    "dial": Dial(),
    "groups-S5-distractor": S5_distractor,
    "groups-A5": A5,
    "groups-S3xS3": S3xS3,
}
# an event each domain has a name for but that does not apply (None: every event applies everywhere)
REFUSED = {
    "rewrite-tier1-a4": Event("distrib_left", ""),
    "rewrite-tier2-a4": Event("add_comm", "0101"),
    "rewrite-tier1-a6": Event("add_comm", "0101010"),
    "programs-bits": Statement(0, "mul", (const(1), const(1))),
    "programs-arithmetic": Statement(9, "set", (const(1),)),
    "dial": "spin",
    "groups-S5-distractor": "c0",
    "groups-A5": "id",
    "groups-S3xS3": "s2",
}


def history(domain, seed: int, length: int):
    rng = random.Random(seed)
    start = domain.start_state(rng)
    return rng, start, domain.sample_events(rng, start, length)


@pytest.mark.parametrize("name", DOMAINS)
def test_every_domain_keeps_the_contract_a_user_checks_with(name):
    check_domain(DOMAINS[name])


@pytest.mark.parametrize("name", DOMAINS)
@settings(max_examples=15)
@given(seed=st.integers(0, 2**32 - 1), length=st.integers(0, 12))
def test_a_history_and_its_partner_keep_the_contract(name, seed, length):
    check_history(DOMAINS[name], seed, length)


@pytest.mark.parametrize("name", DOMAINS)
def test_an_event_that_does_not_apply_is_refused_in_one_line(name):
    domain = DOMAINS[name]
    _, start, _ = history(domain, 1, 0)
    with pytest.raises(EventRefused) as refused:
        domain.apply(start, REFUSED[name])
    assert "\n" not in str(refused.value)


@pytest.mark.parametrize("name", DOMAINS)
def test_a_readout_that_names_no_state_is_refused_in_one_line(name):
    domain = DOMAINS[name]
    readout = domain.readout()
    if isinstance(domain, RewriteDomain):
        wrong = [1] + [0] * (len(readout) - 1)  # an operator alone: no tree
    else:
        wrong = list(readout)  # one past every position's last class
    with pytest.raises(ValueError) as refused:
        domain.state_of_classes(wrong)
    assert "\n" not in str(refused.value)


@pytest.mark.parametrize("name", DOMAINS)
def test_every_domain_becomes_the_trackers_tensors(name):
    domain = DOMAINS[name]
    rng = random.Random(0)

    def chains(count: int, length: int):
        out = []
        for _ in range(count):
            start = domain.start_state(rng)
            events = domain.sample_events(rng, start, length)
            out.append((start, events, [domain.sample_partner(rng, start, events)]))
        return out

    blob = build_tensors(domain, {"train.jsonl": chains(6, 5), "test-12.jsonl": chains(3, 12)})
    states, positions = blob["tree_tokens"].shape
    assert positions == len(domain.readout()) and len(blob["trees"]) == states
    assert blob["train"]["chain_items"].shape[0] == 6 and set(blob["tests"]) == {12}
    test = blob["tests"][12]
    # every test chain's recorded end is the state its events reach
    assert test["end"].shape == (3,) and int(test["chain_items"][:, 0].min()) >= 1


def test_the_dial_is_certified_by_lean_evaluating_its_own_module(lean):
    from leanbridge.domain_lean import build_domain_module, check_statements, equivalence_statement, step_statement
    from leanbridge.verdicts import Complete, Rejected

    dial = Dial()
    assert isinstance(dial, KernelEvaluated)
    module = build_domain_module(dial, lean)
    rng, start, events = history(dial, 7, 9)
    states = [start, *run_events(dial, start, events)]
    steps = [step_statement(dial, s, e, after) for s, e, after in zip(states, events, states[1:])]
    partner_start, partner = dial.sample_partner(rng, start, events)
    equal = equivalence_statement(dial, start, events, partner_start, partner)
    wrong_step = step_statement(dial, 0, "turn", 2)
    wrong_equal = equivalence_statement(dial, start, events, start, [*events, "turn"])
    answers = check_statements(module, [*steps, equal, wrong_step, wrong_equal], lean)
    assert all(isinstance(a, Complete) for a in answers[:len(steps) + 1])
    assert all(isinstance(a, Rejected) for a in answers[-2:])
