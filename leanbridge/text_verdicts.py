"""Lean's verdict on a claim about any domain's histories, given as text: a history (a start state
and events) ends at a state, or two histories end at the same state.

The text is read by the domain's own ``parse_state`` and ``parse_event`` before a character of Lean
is written; text they refuse raises ``StatementTextError`` (a ``ValueError``) in one line naming the
part (``the end state``, ``event 3 of the right history``), and no Lean process is started. The
domain's Python rules are not asked whether the claim holds: the statement says what the caller
claims, and Lean decides (``Complete``, or ``Rejected`` with its class). Only a Lean that cannot be
found, crashes or times out, or a module that does not compile, raises.

Each domain goes by the route its capabilities give it, not by its name:

- a ``chains.protocol.KernelEvaluated`` domain (a domain of one's own, the groups) by
  ``leanbridge.domain_lean``'s statements, proved by ``rfl`` with the kernel evaluating the domain
  module's ``step``: a history ``Eq (step eₙ (… (step e₁ s))) s'``, two histories
  ``Eq (step … s) (step … s')``;
- a domain with a register machine (``machine``: the programs) by the programs library's
  statements: a history ``Eq (M.run p s) s'``, two histories ``Eq (M.run p s) (M.run q s')``;
- a domain of expression trees (``domain``: a ``chains.rewrite.space.Domain``) by the rewrite
  route: a history of at most one event is ``certify_text``'s equation or step, a longer one a path
  claim whose every intermediate tree Lean infers from the events' proof terms; two histories are
  two such claims that each ends at one tree (the right history's end by the domain's rules, or
  the left's when those refuse it: only the claim, which Lean then decides), both to be certified.
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Protocol, runtime_checkable

from chains.domains import resolve
from chains.programs.syntax import Machine
from chains.protocol import KernelEvaluated, StateDomain
from chains.rewrite.space import Domain
from leanbridge.asker import AskConfig, Asker
from leanbridge.checker import Checker
from leanbridge.corelib import CoreLibrary, build_core
from leanbridge.discovery import LeanInstall, find_lean
from leanbridge.domain_lean import build_domain_module, check_statements
from leanbridge.domain_lean import equivalence_statement as domain_equivalence
from leanbridge.domain_lean import run_statement as domain_run
from leanbridge.programs.check import CheckConfig, answer_statements
from leanbridge.programs.library import build_programs
from leanbridge.programs.render import histories_equivalence_statement
from leanbridge.programs.render import run_statement as program_run
from leanbridge.render import Statement
from leanbridge.runner import LeanLimits
from leanbridge.statements import StatementTextError, certify_text, history_question
from leanbridge.verdicts import Answer, Complete, Rejected

History = tuple[str, Sequence[str]]  # (start state, events), as text


@runtime_checkable
class OnMachine(Protocol):
    """A domain whose states are a register machine's (``chains.programs``): the programs library's
    interpreters evaluate its histories."""

    machine: Machine


@runtime_checkable
class OverTrees(Protocol):
    """A domain of expression trees under rewrite rules (``chains.rewrite``): its steps are
    congruence proofs from the core library's lemmas."""

    domain: Domain


def certify_history_text(domain: StateDomain | str, start: str, events: Sequence[str], end: str, *,
                         params: Mapping[str, object] | None = None, checker: Checker = Checker.ELABORATOR,
                         limits: LeanLimits = LeanLimits(), lean: LeanInstall | None = None,
                         core: CoreLibrary | None = None) -> Answer:
    """Lean's verdict on the claim that the history from ``start`` by ``events`` ends at ``end``.
    ``domain`` is a domain value or what ``chains.domains.resolve`` takes (``"programs"``,
    ``"groups"`` with ``params``, ``"package.module:Name"``). ``checker`` decides who certifies a
    rewrite step or equation (the other routes' statements are elaborated and kernel-checked as
    their datasets' are); ``lean`` and ``core`` default to ``find_lean()`` and ``build_core(lean)``."""
    domain = _domain(domain, params)
    first, moves = _history(domain, start, events, "the history")
    last = _state(domain, end, "the end state")
    if isinstance(domain, KernelEvaluated):
        return _evaluated(domain, domain_run(domain, first, moves, last), limits, lean, core)
    if _machine(domain) is not None:
        return _programs(program_run(domain.machine, moves, first, last), limits, lean, core)
    atoms = _atoms(domain, ("the history", moves))
    if len(events) <= 1:
        return certify_text(start, end, events[0] if events else None, atoms=atoms, checker=checker, limits=limits,
                            lean=lean, core=core)
    return _rewrite([history_question(start, events, end, atoms)], atoms, checker, limits, lean, core)


def certify_equivalence_text(domain: StateDomain | str, left: History, right: History, *,
                             params: Mapping[str, object] | None = None, checker: Checker = Checker.ELABORATOR,
                             limits: LeanLimits = LeanLimits(), lean: LeanInstall | None = None,
                             core: CoreLibrary | None = None) -> Answer:
    """Lean's verdict on the claim that the histories ``left`` and ``right``, each ``(start,
    events)`` as text, end at the same state; the rest as ``certify_history_text``."""
    domain = _domain(domain, params)
    (first, moves), (other, other_moves) = (_history(domain, *_pair(left, "left"), "the left history"),
                                            _history(domain, *_pair(right, "right"), "the right history"))
    if isinstance(domain, KernelEvaluated):
        return _evaluated(domain, domain_equivalence(domain, first, moves, other, other_moves), limits, lean,
                          core)
    if _machine(domain) is not None:
        return _programs(histories_equivalence_statement(domain.machine, first, moves, other, other_moves), limits,
                         lean, core)
    atoms = _atoms(domain, ("the left history", moves), ("the right history", other_moves))
    end = domain.state_text(_claimed_end(domain, (other, other_moves), (first, moves)))
    questions = [history_question(start, list(events), end, atoms) for start, events in (left, right)]
    return _rewrite(questions, atoms, checker, limits, lean, core)


# -- reading the text -------------------------------------------------------------------------

def _domain(domain: StateDomain | str, params: Mapping[str, object] | None) -> StateDomain:
    if isinstance(domain, str):
        return resolve(domain, **dict(params or {}))
    if params:
        raise TypeError("params go with a domain named by its spec (resolve's), not with a domain value")
    return domain


def _line(error: Exception) -> str:
    text = str(error).strip()
    return (text.splitlines()[0] if text else type(error).__name__)[:200]


def _state(domain: StateDomain, text: object, what: str):
    if not isinstance(text, str):
        raise TypeError(f"{what} is {type(text).__name__}, not text")
    try:
        return domain.parse_state(text)
    except ValueError as e:
        raise StatementTextError(f"{what} {text!r:.60}: {_line(e)}") from None


def _history(domain: StateDomain, start: object, events: object, what: str) -> tuple[object, list]:
    """A history's start state and events read by the domain; StatementTextError naming the part."""
    if isinstance(events, str) or not isinstance(events, Sequence):
        raise TypeError(f"the events of {what} are {type(events).__name__}; give a list of events")
    first = _state(domain, start, f"the start state of {what}")
    moves = []
    for k, text in enumerate(events, 1):
        if not isinstance(text, str):
            raise TypeError(f"event {k} of {what} is {type(text).__name__}, not text")
        try:
            moves.append(domain.parse_event(text))
        except ValueError as e:
            raise StatementTextError(f"event {k} of {what} {text!r:.60}: {_line(e)}") from None
    return first, moves


def _pair(history: object, side: str) -> tuple[object, object]:
    if not isinstance(history, tuple | list) or len(history) != 2:
        raise TypeError(f"the {side} history is not a (start, events) pair")
    return history[0], history[1]


# -- the routes -------------------------------------------------------------------------------

def _machine(domain: StateDomain) -> Machine | None:
    return domain.machine if isinstance(domain, OnMachine) and isinstance(domain.machine, Machine) else None


def _atoms(domain: StateDomain, *histories: tuple[str, Sequence]) -> tuple[str, ...]:
    """The atom names of a domain of trees; StatementTextError for an event of a history (its name,
    its events) whose rule the domain has not."""
    trees = domain.domain if isinstance(domain, OverTrees) else None
    if not isinstance(trees, Domain):
        raise TypeError(f"no Lean route for the domain {getattr(domain, 'name', domain)!r:.40}: it is neither "
                        "KernelEvaluated (chains.protocol) nor a register machine's nor a domain of trees")
    for what, events in histories:
        for k, event in enumerate(events, 1):
            if event.rule not in trees.rules:
                raise StatementTextError(f"event {k} of {what} '{event}': {event.rule} is not a rule of the "
                                         f"tier-{trees.tier} domain ({', '.join(trees.rules)})")
    return trees.atom_names


def _claimed_end(domain: StateDomain, *histories: tuple[object, Sequence]):
    """Where the first history the domain's rules can run ends (or the first's start): the state
    both claims name. Only a claim: Lean decides whether each history ends there."""
    for start, events in histories:
        state = start
        try:
            for event in events:
                state = domain.apply(state, event)
        except ValueError:
            continue
        return state
    return histories[0][0]


def _evaluated(domain: KernelEvaluated, statement: Statement, limits: LeanLimits, lean: LeanInstall | None,
               core: CoreLibrary | None) -> Answer:
    lean = find_lean() if lean is None else lean
    module = build_domain_module(domain, lean, limits, core)
    return check_statements(module, [statement], lean, limits)[0]


def _programs(statement: Statement, limits: LeanLimits, lean: LeanInstall | None, core: CoreLibrary | None
              ) -> Answer:
    lean = find_lean() if lean is None else lean
    library = build_programs(lean, limits, core)
    return answer_statements(lean, library, [statement], CheckConfig(limits=limits))[0][0]


def _rewrite(questions: list, atoms: Sequence[str], checker: Checker, limits: LeanLimits, lean: LeanInstall | None,
             core: CoreLibrary | None) -> Answer:
    lean = find_lean() if lean is None else lean
    core = build_core(lean) if core is None else core
    answers = Asker(lean, core, atoms, AskConfig(jobs=1, limits=limits, checker=checker)).ask(questions)
    return next((a for a in answers if isinstance(a, Rejected)), Complete())
