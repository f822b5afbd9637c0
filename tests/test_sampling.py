import random

import pytest
from hypothesis import given, settings, strategies as st

from chains.rewrite.rules import apply
from chains.rewrite.sampling import random_walk, sample_split
from chains.rewrite.space import Domain, EnumerationIncomplete, StateSpace, reachable_trees
from chains.rewrite.trees import all_trees, count_trees, polish, size
from chains.seeds import split_rng


def _walks(domain, seed, count=20, length=12, partners=2):
    space = StateSpace(domain)
    samples = sample_split(space, split_rng(seed, "train"), count, length, partners)
    return [([space.trees[i] for i in s.chain.states], s.chain.events,
             [([space.trees[i] for i in p.states], p.events) for p in s.partners]) for s in samples]


@settings(max_examples=25, deadline=None)
@given(st.integers(0, 2**32), st.sampled_from([Domain(4, 1), Domain(3, 2), Domain(5, 1)]))
def test_chains_are_reproducible_from_their_seed(seed, domain):
    assert _walks(domain, seed) == _walks(domain, seed)


def test_different_seeds_give_different_chains():
    assert _walks(Domain(), 0) != _walks(Domain(), 1)


def test_splits_are_independent_streams():
    a = sample_split(StateSpace(Domain()), split_rng(0, "train"), 5, 8, 0)
    b = sample_split(StateSpace(Domain()), split_rng(0, "test-8"), 5, 8, 0)
    assert [s.chain.events for s in a] != [s.chain.events for s in b]


@settings(max_examples=20, deadline=None)
@given(st.integers(0, 1000), st.sampled_from([Domain(4, 1), Domain(4, 2), Domain(6, 1)]))
def test_every_step_applies_and_partners_end_where_the_chain_ends(seed, domain):
    for states, events, partners in _walks(domain, seed):
        for history_states, history_events in [(states, events)] + partners:
            assert len(history_states) == len(history_events) + 1
            for before, event, after in zip(history_states, history_events, history_states[1:]):
                assert apply(before, event, domain.size_bound) == after
            assert history_states[-1] == states[-1]


def test_partners_come_in_varied_lengths():
    lengths = {len(p[1]) for _, _, partners in _walks(Domain(), 3, count=50) for p in partners}
    assert len(lengths) > 5


def _reference_split(space, rng, count, length, partners):
    """The sampler as first written, one ``rng.choice`` over the successors per step: the fast
    sampler must draw exactly the same chains (the datasets' bytes depend on it)."""
    def walk(start, n):
        states, events, here = [start], [], start
        for _ in range(n):
            event, here = rng.choice(space.successors(here))
            events.append(event)
            states.append(here)
        return states, events

    out = []
    for _ in range(count):
        states, events = walk(space.random_start(rng), length)
        mates = []
        for _ in range(partners):
            back_states, back_events = walk(states[-1], rng.randint(0, length))
            mates.append((tuple(back_states[::-1]), tuple(e.inverse for e in reversed(back_events))))
        out.append(((tuple(states), tuple(events)), mates))
    return out


class _NotCPythonRandom(random.Random):
    def choice(self, seq):  # a subclass may draw differently: the sampler must then call it
        return super().choice(seq)


@settings(max_examples=15, deadline=None)
@given(st.integers(0, 2**32), st.sampled_from([Domain(4, 1), Domain(4, 2), Domain(6, 1), Domain(3, 2, 9)]))
def test_the_fast_sampler_draws_what_rng_choice_draws(seed, domain):
    for make in (random.Random, _NotCPythonRandom):
        fast = sample_split(StateSpace(domain), make(seed), 30, 20, 2)
        slow = _reference_split(StateSpace(domain), make(seed), 30, 20, 2)
        assert [((s.chain.states, s.chain.events), [(p.states, p.events) for p in s.partners]) for s in fast] == slow
        space = StateSpace(domain)
        walk = sample_split(space, make(seed), 3, 20, 1)[0].partners[0]
        assert walk.events == tuple(space.events[i] for i in walk.ids)


def _every_step_applies(space, samples):
    """Every step of every chain and partner follows by its event, and each partner ends where its chain ends."""
    for sample in samples:
        for walk in (sample.chain, *sample.partners):
            for before, event, after in zip(walk.states, walk.events, walk.states[1:]):
                assert apply(space.trees[before], event, space.domain.size_bound) == space.trees[after]
            assert walk.end == sample.chain.end


def test_a_start_walk_moves_the_starts_off_the_start_trees_and_keeps_every_step_valid():
    domain = Domain(4, 2)
    space = StateSpace(domain)
    walked = sample_split(space, split_rng(0, "train"), 200, 8, 2, start_walk=64)
    start_trees = set(space.start_trees())
    starts = [s.chain.states[0] for s in walked]
    # about half the states a long walk visits are larger than a start tree (see the dataset's manifest)
    assert 0.2 < sum(s not in start_trees for s in starts) / len(starts) < 0.8
    _every_step_applies(space, walked)


def test_no_start_walk_draws_what_the_sampler_always_drew():
    space = StateSpace(Domain(4, 2))
    plain = sample_split(space, split_rng(5, "train"), 30, 8, 2)
    zero = sample_split(space, split_rng(5, "train"), 30, 8, 2, start_walk=0, tier2_weight=1.0, starts=None)
    assert plain == zero
    assert all(s.chain.states[0] in set(space.start_trees()) for s in plain)


def test_a_tier2_weight_raises_the_share_of_size_changing_events_and_keeps_every_step_valid():
    from chains.rewrite.rules import RULES

    domain = Domain(4, 2)
    space = StateSpace(domain)

    def share(samples):
        events = [e for s in samples for e in s.chain.events]
        return sum(RULES[e.rule].tier == 2 for e in events) / len(events)

    uniform = sample_split(space, split_rng(2, "train"), 300, 8, 1)
    weighted = sample_split(space, split_rng(2, "train"), 300, 8, 1, tier2_weight=8.0)
    assert share(weighted) > 1.5 * share(uniform)
    _every_step_applies(space, weighted)
    fresh = StateSpace(domain)  # state ids depend on the order of interning: compare trees and events
    again = sample_split(fresh, split_rng(2, "train"), 300, 8, 1, tier2_weight=8.0)
    assert [([space.trees[i] for i in s.chain.states], s.chain.events) for s in weighted] == \
        [([fresh.trees[i] for i in s.chain.states], s.chain.events) for s in again]


def test_the_reachable_trees_are_every_tree_a_chain_can_visit_in_one_canonical_order():
    for domain in (Domain(3, 2, 9), Domain(4, 2, 11), Domain(4, 1)):
        trees = reachable_trees(domain)
        space = StateSpace(domain)
        states, _, complete = space.explore(10**6)
        assert complete and len(trees) == len(set(trees)) == states
        assert [polish(t) for t in trees] == sorted(polish(t) for t in trees)
        assert set(trees) == set(space.trees)  # a complete search interns exactly what it reaches
    tier1 = reachable_trees(Domain(4, 1))
    assert set(tier1) == set(all_trees("abcd")) and len(tier1) == count_trees(4)
    assert {size(t) for t in reachable_trees(Domain(3, 2, 9))} == {5, 7}  # start trees have 5 tokens


def test_an_enumeration_past_the_limit_is_refused_naming_the_domain_and_the_limit():
    named = "tier-2 domain of 3 atoms and trees of at most 9 tokens.*limit of 50"
    with pytest.raises(EnumerationIncomplete, match=named):
        reachable_trees(Domain(3, 2, 9), limit=50)
    assert len(reachable_trees(Domain(3, 2, 9), limit=72)) == 72


@settings(max_examples=20, deadline=None)
@given(st.integers(0, 2**32), st.integers(0, 30), st.sampled_from([Domain(3, 2, 9), Domain(4, 1), Domain(4, 2, 11)]))
def test_reachable_starts_depend_on_the_seed_only_and_keep_every_step_valid(seed, interned, domain):
    starts = reachable_trees(domain)
    space = StateSpace(domain)  # other states interned first: ids move, the chains' trees must not
    random_walk(space, random.Random(seed + 1), space.random_start(random.Random(seed)), interned)
    fresh = StateSpace(domain)
    a = sample_split(space, split_rng(seed, "train"), 20, 6, 2, starts=starts)
    b = sample_split(fresh, split_rng(seed, "train"), 20, 6, 2, starts=reachable_trees(domain))  # enumerated again
    assert [([space.trees[i] for i in s.chain.states], s.chain.events) for s in a] == \
        [([fresh.trees[i] for i in s.chain.states], s.chain.events) for s in b]
    _every_step_applies(space, a)


def test_reachable_starts_are_uniform_over_the_domain_and_compose_with_a_start_walk():
    domain = Domain(3, 2, 9)
    starts = reachable_trees(domain)  # 48 start trees of 5 tokens, 24 larger trees of 7
    space = StateSpace(domain)
    drawn = sample_split(space, split_rng(0, "train"), 3600, 1, 0, starts=starts)
    counts = {t: 0 for t in starts}
    for sample in drawn:
        counts[space.trees[sample.chain.states[0]]] += 1
    assert min(counts.values()) > 20 and max(counts.values()) < 80  # 50 expected per tree
    assert 0.3 < sum(size(space.trees[s.chain.states[0]]) == 7 for s in drawn) / len(drawn) < 0.37
    plain = sample_split(space, split_rng(0, "train"), 200, 8, 2)
    assert {size(space.trees[s.chain.states[0]]) for s in plain} == {5}
    walked = sample_split(space, split_rng(0, "train"), 200, 8, 2, start_walk=5, tier2_weight=3.0, starts=starts)
    assert walked != sample_split(space, split_rng(0, "train"), 200, 8, 2, tier2_weight=3.0, starts=starts)
    _every_step_applies(space, walked)
