"""Lean text for steps and equivalences, rendered only from parsed trees and a closed set of
rule names. Nothing else reaches a Lean file: every leaf is checked against the atom names
and every node against the two operators before a character is emitted.

A step ``e = e'`` is a theorem universally quantified over the atoms, proved by congruence
(``congrArg`` with the context around the rewritten node) from one core lemma; an
equivalence of two histories is ``rfl`` between the trees they end at. The atoms are bound
before the colon (``(a b : N) : Eq … := proof``): the same type as ``∀ (a b : N), Eq …`` with
a proof that needs no ``fun``, which Lean parses and elaborates in fewer steps.
"""
from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import lru_cache

from chains.rewrite.rules import RULES, Event, apply, redex
from chains.rewrite.trees import ADD, ATOM_NAMES, MUL, Tree
from leanbridge.checker import Checker
from leanbridge.errors import RenderError

# rule -> (core lemma, used right to left)
LEMMAS: dict[str, tuple[str, bool]] = {
    "add_comm": ("N.add_comm", False),
    "mul_comm": ("N.mul_comm", False),
    "add_assoc": ("N.add_assoc", False),
    "mul_assoc": ("N.mul_assoc", False),
    "add_assoc_rev": ("N.add_assoc", True),
    "mul_assoc_rev": ("N.mul_assoc", True),
    "distrib_left": ("N.left_distrib", False),
    "distrib_right": ("N.right_distrib", False),
    "factor_left": ("N.left_distrib", True),
    "factor_right": ("N.right_distrib", True),
}
assert set(LEMMAS) == set(RULES), "every rule needs its core lemma"

_OP_FUNCTION = {ADD: "N.add", MUL: "N.mul"}
HOLE = "t"  # the bound variable of a congruence context; never an atom name

# Every token a generated line may contain (the property tests hold rendering to it); names of
# declarations are ``q<index>`` and ``q<index>_<step>``.
_KEYWORDS = ("theorem", "noncomputable", "def", "#check", "#print", "axioms", "@", "∀", "fun", "=>", ":=", ":",
             ",", "(", ")", "_", "N", "Eq", "Eq.symm", "Eq.trans", "congrArg", "congr_fst", "congr_snd", "rfl",
             "N.add", "N.mul", HOLE, *ATOM_NAMES, *(name for name, _ in LEMMAS.values()))
GRAMMAR_TOKEN = re.compile(
    r"q[0-9]+(?:_[0-9]+)?|" + "|".join(re.escape(k) for k in sorted(set(_KEYWORDS), key=len, reverse=True)))


def _term(tree: Tree, hole: str | None = None, path: str = "") -> str:
    """Prefix Lean term of ``tree``; with ``hole``, the node at that path becomes ``t``."""
    if hole is None or not hole.startswith(path):  # no hole in this subtree
        try:
            return _plain_term(tree)
        except TypeError:  # unhashable, so not a tree: the checks below say what is wrong
            pass
    return _checked_term(tree, hole, path)


@lru_cache(maxsize=1 << 18)
def _plain_term(tree: Tree) -> str:
    """``_term(tree)``, made once per distinct (sub)tree: a tier-2 dataset renders about 90,000
    statements over far fewer trees."""
    return _checked_term(tree, None, "")


def _checked_term(tree: Tree, hole: str | None, path: str) -> str:
    if hole is not None and path == hole:
        return HOLE
    if isinstance(tree, str):
        if len(tree) != 1 or tree not in ATOM_NAMES:
            raise RenderError(f"leaf {tree!r} is not an atom name")
        return tree
    if not (isinstance(tree, tuple) and len(tree) == 3 and tree[0] in _OP_FUNCTION):
        raise RenderError(f"node {tree!r:.40} is not an operator node")
    op, left, right = tree
    return f"{_OP_FUNCTION[op]} {_arg(left, hole, path + '0')} {_arg(right, hole, path + '1')}"


def _arg(tree: Tree, hole: str | None, path: str) -> str:
    text = _term(tree, hole, path)
    return text if " " not in text else f"({text})"


def bound_atoms(atoms: Sequence[str], trees: Sequence[Tree]) -> list[str]:
    """The atoms (in ``atoms`` order) that occur in ``trees``: what a statement quantifies.
    An atom that does not occur is not quantified."""
    for atom in atoms:
        if atom not in ATOM_NAMES or len(atom) != 1:
            raise RenderError(f"atom {atom!r} is not an atom name")
    occurring = set().union(*(_leaves(t) for t in trees))
    bound = [a for a in atoms if a in occurring]
    if occurring - set(bound):
        raise RenderError(f"atoms {sorted(occurring - set(bound))} are not among {''.join(atoms)}")
    return bound


def _leaves(tree: Tree) -> frozenset[str]:
    try:
        return _cached_leaves(tree)
    except TypeError:  # unhashable, so not a tree: the uncached walk meets what is wrong
        return _walk_leaves(tree)


@lru_cache(maxsize=1 << 18)
def _cached_leaves(tree: Tree) -> frozenset[str]:
    """The leaves of ``tree``, found once per distinct (sub)tree (every statement asks twice:
    its text here, its kernel term in ``kernelterms``)."""
    return _walk_leaves(tree)


def _walk_leaves(tree: Tree) -> frozenset[str]:
    return frozenset((tree,)) if isinstance(tree, str) else _leaves(tree[1]) | _leaves(tree[2])


@dataclass(frozen=True)
class Statement:
    """One theorem to certify: its kind (``step`` or ``equivalence``) and its text after the name."""

    kind: str
    text: str  # "(a b : N) : Eq ... := ...", what follows ``theorem <name> ``
    # What the text was rendered from, for the kernel route (``leanbridge.kernelterms``):
    # (tree, event) for a step, (left, right) for an equivalence. Not part of the statement's
    # identity, which the text carries.
    source: tuple = field(default=(), compare=False, repr=False)

    def key(self, core_hash: str, lean_githash: str, checker: Checker = Checker.ELABORATOR) -> str:
        """Content address: the statement, the core library and the Lean build; and, for a
        checker other than the elaborator, that checker's identity (``kernel:<sources' sha256>``),
        so its certificates never answer for the elaborator's nor the other way round."""
        material = f"{core_hash}\n{lean_githash}\n{self.kind}\n{self.text}"
        if checker.keyed is not None:
            material = f"{checker.keyed}\n{material}"
        return hashlib.sha256(material.encode()).hexdigest()


def lean_term(tree: Tree) -> str:
    """The prefix Lean term of a tree (``N.add a (N.mul b c)``), every node checked."""
    return _term(tree)


def step_proof(tree: Tree, event: Event) -> str:
    """The congruence proof term of ``tree = tree'`` (``tree'``: after ``event``), with the
    atoms free: ``congrArg (fun (t : N) => context) (lemma x y z)``."""
    if event.rule not in LEMMAS:
        raise RenderError(f"rule {event.rule!r} is not a known rule")
    bindings = redex(tree, event)
    if bindings is None:
        raise RenderError(f"event {event} does not apply")
    lemma, reverse = LEMMAS[event.rule]
    proof = f"{lemma} {' '.join(_arg(b, None, '') for b in bindings)}"
    if reverse:
        proof = f"Eq.symm ({proof})"
    if event.path:
        proof = f"congrArg (fun ({HOLE} : N) => {_term(tree, hole=event.path)}) ({proof})"
    return proof


def step_statement(tree: Tree, event: Event, atoms: Sequence[str]) -> Statement:
    """``tree = tree'`` where ``tree'`` is ``tree`` after ``event``, with its congruence proof."""
    proof = step_proof(tree, event)
    result = apply(tree, event)
    return Statement("step", f"({' '.join(bound_atoms(atoms, [tree]))} : N) : "
                             f"Eq ({_term(tree)}) ({_term(result)}) := {proof}", (tree, event))


def equivalence_statement(left: Tree, right: Tree, atoms: Sequence[str]) -> Statement:
    """The two histories end at the same tree: ``left = right`` by ``rfl``."""
    return Statement("equivalence", f"({' '.join(bound_atoms(atoms, [left, right]))} : N) : "
                                    f"Eq ({_term(left)}) ({_term(right)}) := rfl", (left, right))
