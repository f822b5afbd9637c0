from hypothesis import given, settings
from hypothesis import strategies as st

from chains.rules import apply
from chains.sampling import sample_split, split_rng
from chains.space import Domain, StateSpace


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
