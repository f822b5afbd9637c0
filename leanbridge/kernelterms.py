"""Kernel terms for the kernel route (``certify --checker kernel``): a ``Certify`` question as
one line of kcheck's input (``leanbridge/kcheck/kcheck.c``), the same theorem the elaborator
route states in Lean text, written the way the kernel sees it once elaboration is done.

Every implicit argument and universe is explicit (``Eq.{1} N lhs rhs``, ``congrArg.{1,1} N N
before after context proof``), atoms are bound by ``pi``/``fun`` binders named after them and
referred to by de Bruijn index (``#0`` is the innermost binder). As in ``render``, the line is
built only from trees and events checked here, node by node, against the atom names, the two
operators and the closed set of rules: anything else is a ``RenderError`` before a character is
emitted, and kcheck's own parser accepts nothing outside ``KERNEL_TOKEN``.
"""
from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

from chains.rewrite.rules import Event, apply, redex
from chains.rewrite.trees import ADD, ATOM_NAMES, MUL, Tree, replace, subtree
from leanbridge.errors import RenderError
from leanbridge.questions import Certify, Question
from leanbridge.render import HOLE, LEMMAS, _leaves, bound_atoms

_OP = {ADD: "N.add", MUL: "N.mul"}
EQ, RFL, SYMM, CONGR = "Eq.{1}", "rfl.{1}", "Eq.symm.{1}", "congrArg.{1,1}"
_HOLE_MARK = object()  # stands for the rewritten node inside a congruence context

# Every token a kernel line may contain (kcheck's whitelist of constants is a subset of these).
_CONSTANTS = ("N", "N.add", "N.mul", EQ, RFL, SYMM, CONGR, *(name for name, _ in LEMMAS.values()))
KERNEL_TOKEN = re.compile(r"q[0-9]+|#[0-9]+|[()]|pi|fun|" + "|".join(
    re.escape(t) for t in sorted({*_CONSTANTS, HOLE, *ATOM_NAMES}, key=len, reverse=True)))
_NAME = re.compile(r"q[0-9]+")


@dataclass(frozen=True)
class KernelStatement:
    """A question as kcheck's input line, and what the kernel's rendering of the checked type
    must read back as."""

    line: str  # "NAME TYPE VALUE"
    binders: tuple[str, ...]  # the atoms quantified, outermost first
    lhs: Tree
    rhs: Tree


def _term(tree, depth: int, bound: tuple[str, ...]) -> str:
    """``tree`` under ``depth`` binders, atom ``x`` bound at position ``bound.index(x)`` (0
    outermost): its de Bruijn index is ``depth - 1 - bound.index(x)``; the hole mark is the
    innermost binder."""
    try:
        return _cached_term(tree, depth, bound)
    except TypeError:  # unhashable, so not a tree: the walk below says what is wrong
        return _walk_term(tree, depth, bound)


@lru_cache(maxsize=1 << 18)
def _cached_term(tree, depth: int, bound: tuple[str, ...]) -> str:
    """``_term``, made once per distinct (sub)tree, depth and binders: a five-atom dataset's
    151,201 statements share far fewer subtrees."""
    return _walk_term(tree, depth, bound)


def _walk_term(tree, depth: int, bound: tuple[str, ...]) -> str:
    if tree is _HOLE_MARK:
        return "#0"
    if isinstance(tree, str):
        if tree not in bound:
            raise RenderError(f"leaf {tree!r} is not a bound atom")
        return f"#{depth - 1 - bound.index(tree)}"
    if not (isinstance(tree, tuple) and len(tree) == 3 and tree[0] in _OP):
        raise RenderError(f"node {tree!r:.40} is not an operator node")
    op, left, right = tree
    return f"({_OP[op]} {_term(left, depth, bound)} {_term(right, depth, bound)})"


def _check(tree) -> Tree:
    """``tree`` itself, once every leaf is an atom name and every node an operator node."""
    try:
        return _cached_check(tree)
    except TypeError:  # unhashable, so not a tree: the walk below says what is wrong
        return _walk_check(tree)


@lru_cache(maxsize=1 << 18)
def _cached_check(tree) -> Tree:
    return _walk_check(tree)


def _walk_check(tree) -> Tree:
    if isinstance(tree, str):
        if len(tree) != 1 or tree not in ATOM_NAMES:
            raise RenderError(f"leaf {tree!r:.40} is not an atom name")
    elif isinstance(tree, tuple) and len(tree) == 3 and tree[0] in _OP:
        _check(tree[1])
        _check(tree[2])
    else:
        raise RenderError(f"node {tree!r:.40} is not an operator node")
    return tree


def _telescope(binder: str, atoms: Sequence[str], body: str) -> str:
    for atom in reversed(atoms):
        body = f"({binder} {atom} N {body})"
    return body


def _step(tree: Tree, event: Event, atoms: Sequence[str], claimed: Tree | None = None
          ) -> tuple[tuple[str, ...], Tree, str]:
    """(binders, the right side, proof body) of a step, proved by congruence from the event's
    core lemma as ``render.step_proof`` does; the right side is the tree after the event, or the
    ``claimed`` one (``leanbridge.statements``), which the kernel then holds to the proof."""
    if not isinstance(event, Event) or event.rule not in LEMMAS or event.path.strip("01"):
        raise RenderError(f"event {event!r:.60} is not a known rule at a path of 0s and 1s")
    sides = [_check(tree)] if claimed is None else [_check(tree), _check(claimed)]
    bound = tuple(bound_atoms(atoms, sides))
    k = len(bound)
    bindings = redex(tree, event)
    if bindings is None:
        raise RenderError(f"event {event} does not apply")
    result = apply(tree, event)
    lemma, reverse = LEMMAS[event.rule]
    before, after = subtree(tree, event.path), subtree(result, event.path)
    proof = f"({lemma} {' '.join(_term(b, k, bound) for b in bindings)})"
    if reverse:  # the lemma proves after = before: turn it round
        proof = f"({SYMM} N {_term(after, k, bound)} {_term(before, k, bound)} {proof})"
    if event.path:  # the context around the node, a function of one more binder
        context = _term(replace(tree, event.path, _HOLE_MARK), k + 1, bound)
        proof = (f"({CONGR} N N {_term(before, k, bound)} {_term(after, k, bound)} "
                 f"(fun {HOLE} N {context}) {proof})")
    return bound, result if claimed is None else claimed, proof


def kernel_statement(question: Question, name: str, atoms: Sequence[str]) -> KernelStatement:
    """The kcheck line of a step or equivalence under the declaration ``name`` (``q<digits>``)."""
    if not isinstance(question, Certify):
        raise RenderError(f"the kernel route certifies steps and equivalences, not {type(question).__name__}")
    if not _NAME.fullmatch(name):
        raise RenderError(f"declaration name {name!r:.40} is not q<digits>")
    statement = question.statement
    if statement.kind == "step" and len(statement.source) in (2, 3):  # (tree, event[, claimed tree])
        tree, event, *claimed = statement.source
        bound, rhs, proof = _step(tree, event, atoms, *claimed)
        lhs = tree
    elif statement.kind == "equivalence" and len(statement.source) == 2:
        lhs, rhs = statement.source
        bound = tuple(bound_atoms(atoms, [_check(lhs), _check(rhs)]))
        proof = f"({RFL} N {_term(lhs, len(bound), bound)})"
    else:
        raise RenderError(f"a {statement.kind} statement without the trees it was rendered from")
    k = len(bound)
    equation = f"({EQ} N {_term(lhs, k, bound)} {_term(rhs, k, bound)})"
    line = f"{name} {_telescope('pi', bound, equation)} {_telescope('fun', bound, proof)}"
    return KernelStatement(line, bound, lhs, rhs)


def kernel_type_text(statement: KernelStatement, atoms: Sequence[str]) -> str | None:
    """How Lean's ``Expr`` printer (kcheck's ``ok`` line) shows the type of ``statement``'s
    theorem, ``forall (a : N) (b : N), Eq.{1} N lhs rhs``: the text ``parse_kernel_type``
    reads as exactly ``statement``'s binders and trees. None when a binder or leaf is not among
    ``atoms`` (that parser would refuse the text)."""
    allowed = set(atoms)
    if not (allowed.issuperset(statement.binders) and allowed.issuperset(_leaves(statement.lhs))
            and allowed.issuperset(_leaves(statement.rhs))):
        return None
    binders = "".join(f" ({atom} : N)" for atom in statement.binders)
    equation = f"Eq.{{1}} N {_shown(statement.lhs)} {_shown(statement.rhs)}"
    return f"forall{binders}, {equation}" if binders else equation


@lru_cache(maxsize=1 << 18)
def _shown(tree: Tree) -> str:
    """A tree as Lean's ``Expr`` printer shows it: an atom bare, a node ``(N.add l r)``."""
    if isinstance(tree, str):
        return tree
    op, left, right = tree
    return f"({_OP[op]} {_shown(left)} {_shown(right)})"
