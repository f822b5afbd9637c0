"""Expression trees over atoms: the states of every chain.

A tree is an atom (a one-letter string) or a tuple ``(op, left, right)`` with ``op`` one of
``+`` and ``*``. Trees are written in Polish notation, each operator before its arguments,
one token per atom or operator: ``+ * a b c`` is ``(a * b) + c``. A position is the path from
the root to a node, a string of ``0`` (left) and ``1`` (right); the root is ``""``.
"""
from __future__ import annotations

import itertools
import math
import random
from collections.abc import Iterator, Sequence
from functools import lru_cache
from typing import Union

Tree = Union[str, tuple]  # atom | (op, left, right)

ADD, MUL = "+", "*"
OPS = (ADD, MUL)
ATOM_NAMES = "abcdef"
MIN_ATOMS, MAX_ATOMS = 2, len(ATOM_NAMES)


class TreeSyntaxError(ValueError):
    """A token sequence that is not a tree of the grammar."""


def atom_names(k: int) -> tuple[str, ...]:
    """The first ``k`` atom names; ``k`` must lie in [MIN_ATOMS, MAX_ATOMS]."""
    if not MIN_ATOMS <= k <= MAX_ATOMS:
        raise ValueError(f"atoms must be between {MIN_ATOMS} and {MAX_ATOMS}, got {k}")
    return tuple(ATOM_NAMES[:k])


def tokens(tree: Tree) -> list[str]:
    """The Polish token list of ``tree``."""
    out: list[str] = []
    stack = [tree]
    while stack:
        node = stack.pop()
        if isinstance(node, str):
            out.append(node)
        else:
            out.append(node[0])
            stack.append(node[2])
            stack.append(node[1])
    return out


def polish(tree: Tree) -> str:
    return " ".join(tokens(tree))


def parse_tokens(toks: Sequence[str], atoms: Sequence[str]) -> Tree:
    """Parse Polish tokens; every token must be an operator or one of ``atoms``."""
    allowed = set(atoms)
    pos = 0

    def parse() -> Tree:
        nonlocal pos
        if pos >= len(toks):
            raise TreeSyntaxError("tree ends early")
        tok = toks[pos]
        pos += 1
        if tok in OPS:
            left = parse()
            return (tok, left, parse())
        if tok in allowed:
            return tok
        raise TreeSyntaxError(f"token {tok!r} is not an operator or an atom of {''.join(atoms)}")

    if not toks:
        raise TreeSyntaxError("empty tree")
    tree = parse()
    if pos != len(toks):
        raise TreeSyntaxError(f"{len(toks) - pos} extra token(s) after the tree")
    return tree


def parse_polish(text: str, atoms: Sequence[str]) -> Tree:
    if not isinstance(text, str):
        raise TreeSyntaxError(f"a tree must be a string of tokens, got {type(text).__name__}")
    return parse_tokens(text.split(" "), atoms)


def size(tree: Tree) -> int:
    """Number of tokens (nodes) of ``tree``."""
    return 1 if isinstance(tree, str) else 1 + size(tree[1]) + size(tree[2])


def skeleton(tree: Tree) -> tuple:
    """The tree with every leaf forgotten: its shape and its operators."""
    if isinstance(tree, str):
        return ()
    op, left, right = tree
    return (op, skeleton(left), skeleton(right))


def subtree(tree: Tree, path: str) -> Tree | None:
    """The subtree at ``path``, or None when the path leaves the tree."""
    for step in path:
        if isinstance(tree, str):
            return None
        tree = tree[1] if step == "0" else tree[2]
    return tree


def replace(tree: Tree, path: str, new: Tree) -> Tree:
    """``tree`` with the subtree at ``path`` (which must exist) replaced by ``new``."""
    if not path:
        return new
    op, left, right = tree
    if path[0] == "0":
        return (op, replace(left, path[1:], new), right)
    return (op, left, replace(right, path[1:], new))


def internal_positions(tree: Tree, prefix: str = "") -> Iterator[str]:
    """Paths of the operator nodes, in Polish order."""
    if isinstance(tree, str):
        return
    yield prefix
    yield from internal_positions(tree[1], prefix + "0")
    yield from internal_positions(tree[2], prefix + "1")


@lru_cache(maxsize=None)
def _shapes(n_leaves: int) -> tuple:
    """Every full binary shape with ``n_leaves`` leaves; a leaf is None."""
    if n_leaves == 1:
        return (None,)
    return tuple(
        (left, right)
        for k in range(1, n_leaves)
        for left in _shapes(k)
        for right in _shapes(n_leaves - k)
    )


def _fill(shape, leaves: Iterator[str], ops: Iterator[str]) -> Tree:
    if shape is None:
        return next(leaves)
    op = next(ops)
    left = _fill(shape[0], leaves, ops)
    return (op, left, _fill(shape[1], leaves, ops))


def all_trees(atoms: Sequence[str]) -> Iterator[Tree]:
    """The tier-1 domain: each atom exactly once, every shape, order and operator choice."""
    k = len(atoms)
    for shape in _shapes(k):
        for order in itertools.permutations(atoms):
            for ops in itertools.product(OPS, repeat=k - 1):
                yield _fill(shape, iter(order), iter(ops))


def ordered_trees(atoms: Sequence[str]) -> Iterator[Tree]:
    """Every shape and operator choice with the atoms in the given order: one tree per way a
    tier-1 rule can find its left side (no rule looks at the atoms)."""
    k = len(atoms)
    for shape in _shapes(k):
        for ops in itertools.product(OPS, repeat=k - 1):
            yield _fill(shape, iter(atoms), iter(ops))


def random_tree(rng: random.Random, atoms: Sequence[str]) -> Tree:
    """A uniformly random tier-1 tree (shape, order and operators are independent)."""
    k = len(atoms)
    shape = rng.choice(_shapes(k))
    order = list(atoms)
    rng.shuffle(order)
    ops = [rng.choice(OPS) for _ in range(k - 1)]
    return _fill(shape, iter(order), iter(ops))


def count_trees(k: int) -> int:
    """|tier-1 domain| = Catalan(k-1) shapes x k! orders x 2^(k-1) operator choices."""
    return math.comb(2 * (k - 1), k - 1) // k * math.factorial(k) * 2 ** (k - 1)


def count_classes(k: int) -> int:
    """Classes of the tier-1 domain under commutativity and associativity.

    A class is an AC normal form: a root operator over a set partition of the atoms into at
    least two blocks, each block an atom or a normal form whose root is the other operator.
    Both operators give the same count by symmetry, hence the factor 2.
    """

    @lru_cache(maxsize=None)
    def rooted(n: int) -> int:
        # forms over n labelled atoms whose root is a fixed operator (n >= 2)
        return sum(_partitions_weighted(n, blocks) for blocks in range(2, n + 1))

    @lru_cache(maxsize=None)
    def child(n: int) -> int:
        return 1 if n == 1 else rooted(n)

    @lru_cache(maxsize=None)
    def _partitions_weighted(n: int, blocks: int) -> int:
        # sum over partitions of n labelled atoms into `blocks` blocks of prod child(|block|);
        # fix the block holding atom 1 (size s) and recurse on the rest
        if blocks == 0:
            return 1 if n == 0 else 0
        if n == 0:
            return 0
        return sum(
            math.comb(n - 1, s - 1) * child(s) * _partitions_weighted(n - s, blocks - 1)
            for s in range(1, n - blocks + 2)  # leave an atom for each later block
        )

    return 2 * rooted(k)
