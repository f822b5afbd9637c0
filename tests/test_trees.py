import networkx as nx
import pytest
from hypothesis import given

from chains.rewrite.space import Domain, StateSpace
from chains.rewrite.trees import (TreeSyntaxError, all_trees, atom_names, count_classes, count_trees, parse_polish,
    polish, size, tokens)
from tests.strategies import any_trees, tier1_trees


def state_graph(space: StateSpace, nodes: list[int]) -> nx.DiGraph:
    """The state graph over ``nodes`` and everything one step from them; edges carry the event."""
    g = nx.DiGraph()
    for i in nodes:
        g.add_node(i)
        for event, j in space.successors(i):
            g.add_edge(i, j, event=str(event))
    return g


@pytest.mark.parametrize("k", [2, 3, 4])
def test_counts_match_enumeration_and_graph_components(k):
    trees = list(all_trees(atom_names(k)))
    assert len(trees) == len(set(trees)) == count_trees(k)
    space = StateSpace(Domain(atoms=k, tier=1))
    graph = state_graph(space, [space.id(t) for t in trees])
    assert graph.number_of_nodes() == count_trees(k)  # tier 1 never leaves the domain
    assert nx.number_weakly_connected_components(graph) == count_classes(k)


def test_four_atoms_is_the_seed_domain():
    assert count_trees(4) == 960
    assert all(len(tokens(t)) == 7 for t in all_trees("abcd"))


@given(any_trees())
def test_polish_round_trip(tree):
    text = polish(tree)
    assert parse_polish(text, "abcd") == tree
    assert len(text.split(" ")) == size(tree)


@given(tier1_trees(5))
def test_tier1_trees_use_each_atom_once(tree):
    assert sorted(t for t in tokens(tree) if t.isalpha()) == list("abcde")


@pytest.mark.parametrize("text", ["+ a #exit", "+ a axiom", "+ a (b)", "+ a b\n", "+ a", "+ a b c", "", "+ a e",
                                  "+  a b", "N.add a b"])
def test_parser_refuses_anything_outside_the_grammar(text):
    with pytest.raises(TreeSyntaxError):
        parse_polish(text, "abcd")


def test_atoms_out_of_range_are_refused():
    for k in (1, 7):
        with pytest.raises(ValueError):
            atom_names(k)
