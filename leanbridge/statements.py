"""Statements of the domain given as text, certified by Lean: a step (a tree, an event, the tree
it is claimed to lead to) or an equation between two trees, trees in the domain's Polish notation
(``* + a b c`` is ``(a + b) * c``), events as ``rule@path``.

The text is parsed into trees and events of the grammar (``chains.rewrite.trees``, ``chains.rewrite.rules``)
before a character of Lean is written: text outside it (a token that is no operator or atom, a
tree that ends early or runs on, an event that is not ``rule@path``) is refused here with
``StatementTextError``, a ``ValueError``, in one line, and no Lean process is started. A
statement Lean refuses comes back as ``Rejected`` with its class, under either checker; only a
Lean that cannot be found, crashes or times out raises.

- An equation ``left = right`` is the domain's equivalence (two histories end at the same tree):
  proved by ``rfl``, it holds only when both sides are one tree. An equality that takes rewriting
  is a path of steps.
- A step ``before = after`` by ``event`` is stated with the caller's ``after`` and proved by the
  event's congruence proof from its core lemma, as a dataset's steps are: Lean refuses it when
  ``after`` is not what the event makes of ``before``. Both checkers take it. When the event's
  rule does not find its left side at the event's position there is no such proof to write: the
  step is then asked as a one-step path claim, the lemma's arguments and the path left to Lean to
  fit (``leanbridge.questions.PathClaim``), which Lean's elaborator answers under either checker,
  as it answers every probe and path.
"""
from __future__ import annotations

from collections.abc import Sequence

from chains.rewrite.rules import Event, EventSyntaxError, redex
from chains.rewrite.trees import ATOM_NAMES, Tree, TreeSyntaxError, atom_names, parse_polish
from leanbridge.asker import AskConfig, Asker
from leanbridge.checker import Checker
from leanbridge.corelib import CoreLibrary, build_core
from leanbridge.discovery import LeanInstall, find_lean
from leanbridge.questions import Certify, PathClaim, Question
from leanbridge.render import Statement, bound_atoms, equivalence_statement, lean_term, step_proof
from leanbridge.runner import LeanLimits
from leanbridge.verdicts import Answer


class StatementTextError(ValueError):
    """Text that is not a state (here a tree) or an event of the domain's grammar; the message names
    which part it is."""


def domain_atoms(atoms: int | Sequence[str]) -> tuple[str, ...]:
    """The atom names of a domain given by their count (``4``: ``a b c d``) or by the names."""
    if isinstance(atoms, int):
        try:
            return atom_names(atoms)
        except ValueError as e:
            raise StatementTextError(str(e)) from None
    names = tuple(atoms)
    if not names or any(a not in ATOM_NAMES or len(a) != 1 for a in names) or len(set(names)) != len(names):
        raise StatementTextError(f"atoms {names!r:.60} are not distinct names among {' '.join(ATOM_NAMES)}")
    return names


def parse_tree(text: str, atoms: Sequence[str], what: str = "tree") -> Tree:
    """``text`` as a tree over ``atoms``; StatementTextError naming ``what`` when it is none."""
    try:
        return parse_polish(text, atoms)
    except TreeSyntaxError as e:
        raise StatementTextError(f"{what} {text!r:.60}: {e}") from None


def parse_event(text: str) -> Event:
    """``text`` as an event ``rule@path``; StatementTextError when it is none."""
    try:
        return Event.parse(text)
    except EventSyntaxError as e:
        raise StatementTextError(str(e)) from None


def claimed_step_statement(before: Tree, event: Event, after: Tree, atoms: Sequence[str]) -> Statement:
    """``before = after`` proved by ``event``'s congruence proof, which must apply to ``before``:
    the statement is false (and Lean refuses it) when ``after`` is not the event's result."""
    bound = " ".join(bound_atoms(atoms, [before, after]))
    return Statement("step", f"({bound} : N) : Eq ({lean_term(before)}) ({lean_term(after)}) := "
                             f"{step_proof(before, event)}", (before, event, after))


def step_question(before: str, event: str, after: str, atoms: int | Sequence[str] = 4) -> Question:
    """The question whether ``event`` takes the tree ``before`` to the tree ``after``."""
    names = domain_atoms(atoms)
    start = parse_tree(before, names, "the tree before the step")
    move = parse_event(event)
    end = parse_tree(after, names, "the tree after the step")
    if redex(start, move) is None:  # no congruence proof to write: Lean fits the event itself
        return PathClaim(start, end, ((start, move),))
    return Certify(claimed_step_statement(start, move, end, names))


def history_question(start: str, events: Sequence[str], end: str, atoms: int | Sequence[str] = 4) -> Question:
    """The question whether ``events``, in turn from the tree ``start``, lead to the tree ``end``:
    with no event the equation, with one the step (``step_question``), with more a path claim whose
    every intermediate tree Lean infers from the events' proof terms (``PathClaim``)."""
    if isinstance(events, str):
        raise TypeError("events is one string; give a list of events, each rule@path")
    if len(events) == 0:
        return equation_question(start, end, atoms)
    if len(events) == 1:
        return step_question(start, events[0], end, atoms)
    names = domain_atoms(atoms)
    first = parse_tree(start, names, "the start tree")
    moves = [parse_event(event) for event in events]
    target = parse_tree(end, names, "the end tree")
    return PathClaim(first, target, ((first, moves[0]), *((None, move) for move in moves[1:])))


def equation_question(left: str, right: str, atoms: int | Sequence[str] = 4) -> Certify:
    """The question whether the trees ``left`` and ``right`` are one tree (proved by ``rfl``)."""
    names = domain_atoms(atoms)
    return Certify(equivalence_statement(parse_tree(left, names, "the left side"),
                                         parse_tree(right, names, "the right side"), names))


def certify_text(left: str, right: str, event: str | None = None, *, atoms: int | Sequence[str] = 4,
                 checker: Checker = Checker.ELABORATOR, limits: LeanLimits = LeanLimits(), lean: LeanInstall | None = None,
                 core: CoreLibrary | None = None) -> Answer:
    """Lean's verdict on the equation ``left = right`` or, with ``event``, on the step from
    ``left`` to ``right`` by that event: ``Complete`` when certified, ``Rejected`` with its class
    otherwise. The text is parsed first (StatementTextError before any Lean); ``lean`` and
    ``core`` default to ``find_lean()`` and ``build_core(lean)``."""
    if event is None:
        question: Question = equation_question(left, right, atoms)
    else:
        question = step_question(left, event, right, atoms)
    config = AskConfig(jobs=1, limits=limits, checker=checker)
    lean = find_lean() if lean is None else lean
    core = build_core(lean) if core is None else core
    return Asker(lean, core, domain_atoms(atoms), config).ask([question])[0]
