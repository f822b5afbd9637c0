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

from chains.rules import Event, apply, redex
from chains.trees import ADD, ATOM_NAMES, MUL, Tree, replace, subtree
from leanbridge.errors import RenderError
from leanbridge.questions import Certify, Question
from leanbridge.render import HOLE, LEMMAS, bound_atoms

_OP = {ADD: "N.add", MUL: "N.mul"}
EQ, RFL, SYMM, CONGR = "Eq.{1}", "rfl.{1}", "Eq.symm.{1}", "congrArg.{1,1}"
_HOLE_MARK = object()  # stands for the rewritten node inside a congruence context

# Every token a kernel line may contain (kcheck's whitelist of constants is a subset of these).
_CONSTANTS = ("N", "N.add", "N.mul", EQ, RFL, SYMM, CONGR, *(name for name, _ in LEMMAS.values()))
KERNEL_TOKEN = re.compile(r"q[0-9]+|#[0-9]+|[()]|pi|fun|" + "|".join(
    re.escape(t) for t in sorted({*_CONSTANTS, HOLE, *ATOM_NAMES}, key=len, reverse=True)))


@dataclass(frozen=True)
class KernelStatement:
    """A question as kcheck's input line, and what the kernel's rendering of the checked type
    must read back as."""

    line: str  # "NAME TYPE VALUE"
    binders: tuple[str, ...]  # the atoms quantified, outermost first
    lhs: Tree
    rhs: Tree


def _term(tree, depth: int, index: dict[str, int]) -> str:
    """``tree`` under ``depth`` binders, atom ``x`` bound at position ``index[x]`` (0 outermost):
    its de Bruijn index is ``depth - 1 - index[x]``; the hole mark is the innermost binder."""
    if tree is _HOLE_MARK:
        return "#0"
    if isinstance(tree, str):
        if tree not in index:
            raise RenderError(f"leaf {tree!r} is not a bound atom")
        return f"#{depth - 1 - index[tree]}"
    if not (isinstance(tree, tuple) and len(tree) == 3 and tree[0] in _OP):
        raise RenderError(f"node {tree!r:.40} is not an operator node")
    op, left, right = tree
    return f"({_OP[op]} {_term(left, depth, index)} {_term(right, depth, index)})"


def _check(tree) -> Tree:
    """``tree`` itself, once every leaf is an atom name and every node an operator node."""
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


def _step(tree: Tree, event: Event, atoms: Sequence[str]) -> tuple[list[str], Tree, str]:
    """(binders, the tree after the event, proof body) of a step, proved by congruence from the
    event's core lemma as ``render.step_proof`` does."""
    if not isinstance(event, Event) or event.rule not in LEMMAS or event.path.strip("01"):
        raise RenderError(f"event {event!r:.60} is not a known rule at a path of 0s and 1s")
    bound = bound_atoms(atoms, [_check(tree)])
    index, k = {a: i for i, a in enumerate(bound)}, len(bound)
    bindings = redex(tree, event)
    if bindings is None:
        raise RenderError(f"event {event} does not apply")
    result = apply(tree, event)
    lemma, reverse = LEMMAS[event.rule]
    before, after = subtree(tree, event.path), subtree(result, event.path)
    proof = f"({lemma} {' '.join(_term(b, k, index) for b in bindings)})"
    if reverse:  # the lemma proves after = before: turn it round
        proof = f"({SYMM} N {_term(after, k, index)} {_term(before, k, index)} {proof})"
    if event.path:  # the context around the node, a function of one more binder
        context = _term(replace(tree, event.path, _HOLE_MARK), k + 1, index)
        proof = (f"({CONGR} N N {_term(before, k, index)} {_term(after, k, index)} "
                 f"(fun {HOLE} N {context}) {proof})")
    return bound, result, proof


def kernel_statement(question: Question, name: str, atoms: Sequence[str]) -> KernelStatement:
    """The kcheck line of a step or equivalence under the declaration ``name`` (``q<digits>``)."""
    if not isinstance(question, Certify):
        raise RenderError(f"the kernel route certifies steps and equivalences, not {type(question).__name__}")
    if not re.fullmatch(r"q[0-9]+", name):
        raise RenderError(f"declaration name {name!r:.40} is not q<digits>")
    statement = question.statement
    if statement.kind == "step" and len(statement.source) == 2:
        tree, event = statement.source
        bound, rhs, proof = _step(tree, event, atoms)
        lhs = tree
    elif statement.kind == "equivalence" and len(statement.source) == 2:
        lhs, rhs = statement.source
        bound = bound_atoms(atoms, [_check(lhs), _check(rhs)])
        index = {a: i for i, a in enumerate(bound)}
        proof = f"({RFL} N {_term(lhs, len(bound), index)})"
    else:
        raise RenderError(f"a {statement.kind} statement without the trees it was rendered from")
    index, k = {a: i for i, a in enumerate(bound)}, len(bound)
    equation = f"({EQ} N {_term(lhs, k, index)} {_term(rhs, k, index)})"
    line = f"{name} {_telescope('pi', bound, equation)} {_telescope('fun', bound, proof)}"
    return KernelStatement(line, tuple(bound), lhs, rhs)
