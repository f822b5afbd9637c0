"""Properties of the rewrite rules, against independent referees: sympy for values and a
generic pattern matcher for applicability."""
import pytest
import sympy
from hypothesis import given, settings, strategies as st

from chains.rewrite.rules import RULES, Event, apply, redex, successors, tier_rules
from chains.rewrite.space import Domain
from chains.rewrite.trees import ADD, internal_positions, replace, size, subtree, tokens
from tests.strategies import any_trees, tier1_trees

SYMBOLS = sympy.symbols("a b c d e f")

# Each rule written as a pattern over metavariables X, Y, Z, independently of chains.rewrite.rules.
PATTERNS = {
    "add_comm": (("+", "X", "Y"), ("+", "Y", "X")),
    "mul_comm": (("*", "X", "Y"), ("*", "Y", "X")),
    "add_assoc": (("+", ("+", "X", "Y"), "Z"), ("+", "X", ("+", "Y", "Z"))),
    "mul_assoc": (("*", ("*", "X", "Y"), "Z"), ("*", "X", ("*", "Y", "Z"))),
    "add_assoc_rev": (("+", "X", ("+", "Y", "Z")), ("+", ("+", "X", "Y"), "Z")),
    "mul_assoc_rev": (("*", "X", ("*", "Y", "Z")), ("*", ("*", "X", "Y"), "Z")),
    "distrib_left": (("*", "X", ("+", "Y", "Z")), ("+", ("*", "X", "Y"), ("*", "X", "Z"))),
    "distrib_right": (("*", ("+", "X", "Y"), "Z"), ("+", ("*", "X", "Z"), ("*", "Y", "Z"))),
    "factor_left": (("+", ("*", "X", "Y"), ("*", "X", "Z")), ("*", "X", ("+", "Y", "Z"))),
    "factor_right": (("+", ("*", "X", "Z"), ("*", "Y", "Z")), ("*", ("+", "X", "Y"), "Z")),
}


def unify(pattern, tree, env):
    if pattern in ("X", "Y", "Z"):
        if pattern in env:
            return env if env[pattern] == tree else None
        return {**env, pattern: tree}
    if isinstance(tree, str) or pattern[0] != tree[0]:
        return None
    env = unify(pattern[1], tree[1], env)
    return None if env is None else unify(pattern[2], tree[2], env)


def instantiate(pattern, env):
    if isinstance(pattern, str):
        return env[pattern]
    return (pattern[0], instantiate(pattern[1], env), instantiate(pattern[2], env))


def value(tree):
    if isinstance(tree, str):
        return SYMBOLS["abcdef".index(tree)]
    left, right = value(tree[1]), value(tree[2])
    return left + right if tree[0] == ADD else left * right


events = st.builds(Event, st.sampled_from(sorted(RULES)), st.text("01", max_size=4))


@given(any_trees(), events)
def test_applicability_is_exactly_the_left_side_matching(tree, event):
    node = subtree(tree, event.path)
    lhs, rhs = PATTERNS[event.rule]
    env = None if node is None else unify(lhs, node, {})
    assert (redex(tree, event) is not None) == (env is not None)
    result = apply(tree, event)
    if env is not None:
        assert result == replace(tree, event.path, instantiate(rhs, env))
    else:
        assert result is None


@settings(max_examples=200)
@given(any_trees(max_leaves=6), st.sampled_from((1, 2)))
def test_every_step_preserves_the_polynomial(tree, tier):
    before = sympy.expand(value(tree))
    for event, after in successors(tree, tier_rules(tier)):
        assert sympy.expand(value(after) - before) == 0, f"{event} changed the value"


@given(any_trees())
def test_every_event_is_undone_by_its_inverse(tree):
    for event, after in successors(tree, tier_rules(2)):
        assert apply(after, event.inverse) == tree


@given(any_trees())
def test_factoring_inverts_distribution_where_both_apply(tree):
    for path in internal_positions(tree):
        for distribute, factor in (("distrib_left", "factor_left"), ("distrib_right", "factor_right")):
            spread = apply(tree, Event(distribute, path))
            if spread is not None:
                assert apply(spread, Event(factor, path)) == tree
            folded = apply(tree, Event(factor, path))
            if folded is not None:
                assert apply(folded, Event(distribute, path)) == tree


@given(tier1_trees(4), st.integers(7, 15))
def test_no_step_exceeds_the_size_bound(tree, bound):
    for _, after in successors(tree, tier_rules(2), bound):
        assert size(after) <= bound
    unbounded = successors(tree, tier_rules(2))
    bounded = successors(tree, tier_rules(2), bound)
    assert [e for e, t in unbounded if size(t) <= bound] == [e for e, _ in bounded]


@given(tier1_trees(4))
def test_tier1_successors_stay_in_the_domain(tree):
    for _, after in successors(tree, tier_rules(1)):
        assert sorted(t for t in tokens(after) if t.isalpha()) == list("abcd")


def test_domain_rejects_bad_settings():
    for kwargs in ({"tier": 3}, {"atoms": 7}, {"tier": 1, "max_size": 9}, {"tier": 2, "max_size": 5}):
        with pytest.raises(ValueError):
            Domain(**kwargs)
