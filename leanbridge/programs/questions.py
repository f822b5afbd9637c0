"""The questions put to Lean about programs, one theorem each, as callers state them.

- ``StepQuestion``: one statement from state ``before`` gives the claimed ``after``.
- ``TraceQuestion``: statements run in turn from ``start`` pass through the claimed ``states``,
  one after each; ``trace_questions`` cuts a long program into questions of ``TRACE_CHUNK``
  statements, each from the claimed state before it, which together certify every step.
- ``EquivalenceQuestion``: two programs end in the same state from ``start``, or, with ``start``
  None, from every start state (the Bits machine only).
- ``RunQuestion``: a program run from ``start`` ends at ``end`` (the prover's one call).

A question's ``theorem`` is a ``leanbridge.render.Statement`` (``leanbridge.programs.render``):
``kind`` and ``text`` are what a certificate store records, and
``key(library.library_hash, lean.githash)`` its content address, which names the statement, both
libraries and the Lean build.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property

from chains.programs import syntax
from chains.programs.syntax import Machine
from leanbridge.errors import RenderError
from leanbridge.programs.render import equivalence_statement, run_statement, step_statement, trace_statement
from leanbridge.render import Statement

State = tuple[int, ...]
# Statements one trace theorem covers: 32 to 128 certify at the same speed (about 2,500 to 3,000
# statements a second on one core); Lean's default recursion depth would hold up to about 200.
TRACE_CHUNK = 64


class TheoremQuestion:
    """What every question offers: its theorem, the theorem's kind and text, its store key (a
    subclass renders the theorem)."""

    @cached_property
    def theorem(self) -> Statement:
        """The theorem, rendered once (RenderError for a question outside the machine)."""
        return self._render()

    @property
    def kind(self) -> str:
        return self.theorem.kind

    @property
    def text(self) -> str:
        return self.theorem.text

    def key(self, library_hash: str, lean_githash: str) -> str:
        """Content address: the theorem, the libraries it is stated against (``ProgramsLibrary.library_hash``,
        ``DomainModule.library_hash``) and the Lean build."""
        return self.theorem.key(library_hash, lean_githash)

    def _render(self) -> Statement:
        raise NotImplementedError


@dataclass(frozen=True)
class StepQuestion(TheoremQuestion):
    """``statement`` run from ``before`` gives ``after``."""

    machine: Machine
    statement: syntax.Statement
    before: State
    after: State

    def _render(self) -> Statement:
        return step_statement(self.machine, self.statement, self.before, self.after)


@dataclass(frozen=True)
class TraceQuestion(TheoremQuestion):
    """``statements`` run in turn from ``start`` pass through ``states``, one after each."""

    machine: Machine
    start: State
    statements: tuple[syntax.Statement, ...]
    states: tuple[State, ...]

    def _render(self) -> Statement:
        return trace_statement(self.machine, self.start, self.statements, self.states)


@dataclass(frozen=True)
class EquivalenceQuestion(TheoremQuestion):
    """``left`` and ``right`` end in the same state from ``start``; from every start state when
    ``start`` is None (the Bits machine only)."""

    machine: Machine
    left: tuple[syntax.Statement, ...]
    right: tuple[syntax.Statement, ...]
    start: State | None = None

    def _render(self) -> Statement:
        return equivalence_statement(self.machine, self.left, self.right, self.start)


@dataclass(frozen=True)
class RunQuestion(TheoremQuestion):
    """``statements`` run from ``start`` end at ``end`` (the intermediate states are not claimed)."""

    machine: Machine
    start: State
    statements: tuple[syntax.Statement, ...]
    end: State

    def _render(self) -> Statement:
        return run_statement(self.machine, self.statements, self.start, self.end)


ProgramQuestion = StepQuestion | TraceQuestion | EquivalenceQuestion | RunQuestion


def trace_questions(machine: Machine, start: State, statements: Sequence[syntax.Statement],
                    states: Sequence[State], chunk: int = TRACE_CHUNK) -> tuple[TraceQuestion, ...]:
    """The questions that certify a whole trace: one per ``chunk`` statements, each from the claimed
    state before its first statement (an empty trace: one question of no statements)."""
    if len(statements) != len(states):
        raise RenderError(f"a trace of {len(statements)} statements needs as many claimed states, not {len(states)}")
    if type(chunk) is not int or chunk < 1:
        raise RenderError(f"chunk must be a positive number of statements, not {chunk!r:.20}")
    return tuple(TraceQuestion(machine, start if first == 0 else tuple(states[first - 1]),
                               tuple(statements[first:first + chunk]), tuple(states[first:first + chunk]))
                 for first in range(0, max(1, len(statements)), chunk))


def equivalence_form(machine: Machine) -> str:
    """What an equivalence certificate of ``machine`` states, for a manifest: on Bits, from every
    start state; on Arithmetic (16^8 start states), from the one start state asked about."""
    if machine.values == 2:
        return ("for every start state: ∀ st, run p st = run q st, from one kernel evaluation of both programs "
                "on truth tables of the 256 states (Bits.equivAll_sound)")
    return "from the start state: run p s0 = run q s0, by kernel evaluation (Arith.eqState_sound)"
