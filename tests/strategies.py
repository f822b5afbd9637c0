"""Hypothesis strategies for trees, shared by the property tests."""
from __future__ import annotations

from hypothesis import strategies as st

from chains.rewrite.trees import ATOM_NAMES, OPS, Tree


def tier1_trees(k: int = 4):
    """Random tier-1 trees over the first ``k`` atoms (each atom once)."""
    atoms = ATOM_NAMES[:k]

    @st.composite
    def build(draw) -> Tree:
        order = draw(st.permutations(atoms))
        forest: list[Tree] = list(order)
        while len(forest) > 1:  # join two neighbours until one tree is left
            i = draw(st.integers(0, len(forest) - 2))
            op = draw(st.sampled_from(OPS))
            forest[i:i + 2] = [(op, forest[i], forest[i + 1])]
        return forest[0]

    return build()


def any_trees(atoms: str = "abcd", max_leaves: int = 8):
    """Random trees in which atoms may repeat (tier-2 states)."""
    return st.recursive(st.sampled_from(atoms),
                        lambda inner: st.tuples(st.sampled_from(OPS), inner, inner),
                        max_leaves=max_leaves)
