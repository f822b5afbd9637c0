"""Lean statements about programs, rendered from the program AST (``chains.programs.syntax``) only.

Every statement, operand and state is checked against its machine before a character is written
(a statement by ``syntax.check_statement``, a state value by its type and range), and every
number in the text is formatted here from a checked ``int``: nothing a user typed reaches a
Lean file. A statement is ``leanbridge.render.Statement`` (its kind and the declaration's text
after the theorem's name, proof included), so it is keyed in the certificate store as any other
(``Statement.key(library.library_hash, lean.githash)``).

The four forms, each proved by a Bool check the kernel evaluates and a soundness lemma of
``lake/Programs.lean``:

- a step: ``Eq (M.exec s st) st'``, by ``M.eqState_sound _ _ rfl``;
- a trace, statements with the claimed state after each (``leanbridge.programs.questions`` cuts
  long ones into chunks of ``TRACE_CHUNK``): ``M.Effects st ws`` (each statement's claimed value for
  the variable it assigns; the form when every claimed state differs from the one before it at
  most in that variable), by ``M.checkWrites_sound _ _ rfl``, or else ``M.Steps st t`` (whole
  claimed states), by ``M.check_sound _ _ rfl``;
- an equivalence from one start state: ``Eq (M.run p st) (M.run q st)``, by
  ``M.eqState_sound _ _ rfl`` (of two histories from two start states, ``Eq (M.run p st) (M.run q st')``);
- an equivalence of Bits programs from every start state:
  ``∀ (st : Bits.State), Eq (Bits.run p st) (Bits.run q st)``, by ``Bits.equivAll_sound rfl``.
"""
from __future__ import annotations

from collections.abc import Sequence

from chains.programs import syntax
from chains.programs.syntax import Machine, Operand
from leanbridge.errors import RenderError
from leanbridge.render import Statement

STEP, TRACE, EQUIVALENCE, RUN = "step", "trace", "equivalence", "run"  # the statements' kinds


def namespace(machine: Machine) -> str:
    """The Lean namespace of a machine's interpreter."""
    if not isinstance(machine, Machine):
        raise RenderError(f"{machine!r:.40} is not a machine")
    return "Bits" if machine.values == 2 else "Arith"


def _value(machine: Machine, value: object) -> str:
    if type(value) is not int or not 0 <= value < machine.values:
        raise RenderError(f"{value!r:.20} is not a value of the {machine.name} machine (0 to {machine.values - 1})")
    return f"Bit.b{value}" if machine.values == 2 else f"Hex.h{value}"


def _operand(machine: Machine, operand: Operand) -> str:
    if not isinstance(operand, Operand) or type(operand.var) is not bool or type(operand.value) is not int:
        raise RenderError(f"{operand!r:.40} is not an operand")
    return f"{namespace(machine)}.Opd.{'v' if operand.var else 'c'}{operand.value}"


def statement_term(machine: Machine, statement: syntax.Statement) -> str:
    """``(M.Stmt.op Reg.rT operands)``; RenderError for a statement that is not the machine's."""
    if not isinstance(statement, syntax.Statement) or type(statement.target) is not int \
            or type(statement.op) is not str or not isinstance(statement.args, tuple):
        raise RenderError(f"{statement!r:.60} is not a statement")
    operands = " ".join(_operand(machine, o) for o in statement.args)  # their types, before their ranges
    try:
        syntax.check_statement(statement, machine)
    except syntax.ProgramSyntaxError as e:
        raise RenderError(str(e)) from None
    return f"({namespace(machine)}.Stmt.{statement.op} Reg.r{statement.target} {operands})"


def state_term(machine: Machine, state: Sequence[int]) -> str:
    """``(M.State.mk v0 … v7)``; RenderError for anything but eight values of the machine."""
    if not isinstance(state, tuple) or len(state) != syntax.VARIABLES:
        raise RenderError(f"{state!r:.60} is not a state ({syntax.VARIABLES} values, v0 first)")
    return f"({namespace(machine)}.State.mk {' '.join(_value(machine, v) for v in state)})"


def program_term(machine: Machine, program: Sequence[syntax.Statement]) -> str:
    """``(M.Prog.cons s1 (M.Prog.cons s2 … M.Prog.nil))``."""
    ns = namespace(machine)
    statements = [statement_term(machine, s) for s in program]
    return "".join(f"({ns}.Prog.cons {s} " for s in statements) + f"{ns}.Prog.nil" + ")" * len(statements)


def step_statement(machine: Machine, statement: syntax.Statement, before: tuple[int, ...],
                   after: tuple[int, ...]) -> Statement:
    """``exec statement before = after``, with the caller's ``after``: false (and rejected by Lean)
    when ``after`` is not the state the statement leads to."""
    ns = namespace(machine)
    return Statement(STEP, f": Eq ({ns}.exec {statement_term(machine, statement)} {state_term(machine, before)}) "
                           f"{state_term(machine, after)} := {ns}.eqState_sound _ _ rfl")


def frame_respected(before: tuple[int, ...], statement: syntax.Statement, after: tuple[int, ...]) -> bool:
    """Does ``after`` differ from ``before`` at most in the variable ``statement`` assigns? Then the
    claim ``after`` is said in full by its value of that variable (the ``Effects`` form)."""
    return all(a == b for i, (a, b) in enumerate(zip(before, after)) if i != statement.target)


def trace_statement(machine: Machine, start: tuple[int, ...], statements: Sequence[syntax.Statement],
                    states: Sequence[tuple[int, ...]]) -> Statement:
    """One theorem: ``statements`` run in turn from ``start`` pass through ``states`` (the claimed
    state after each), every step from the claimed state before it. False (and rejected by Lean)
    when any claimed state is not what its statement makes of the one before."""
    if len(statements) != len(states):
        raise RenderError(f"a trace of {len(statements)} statements needs as many claimed states, not {len(states)}")
    ns, previous, compact = namespace(machine), start, True
    before = state_term(machine, start)
    for statement, after in zip(statements, states):
        state_term(machine, after)
        compact = compact and frame_respected(previous, statement, after)
        previous = after
    pairs = list(zip(statements, states))
    if compact:
        body = "".join(f"({ns}.Writes.cons {statement_term(machine, s)} {_value(machine, after[s.target])} "
                       for s, after in pairs)
        return Statement(TRACE, f": {ns}.Effects {before} {body}{ns}.Writes.nil{')' * len(pairs)} := "
                                f"{ns}.checkWrites_sound _ _ rfl")
    body = "".join(f"({ns}.Trace.cons {statement_term(machine, s)} {state_term(machine, after)} " for s, after in pairs)
    return Statement(TRACE, f": {ns}.Steps {before} {body}{ns}.Trace.nil{')' * len(pairs)} := {ns}.check_sound _ _ rfl")


def equivalence_statement(machine: Machine, left: Sequence[syntax.Statement], right: Sequence[syntax.Statement],
                          start: tuple[int, ...] | None = None) -> Statement:
    """``run left start = run right start``; with ``start`` None, the same from every start state
    (the Bits machine only: its 256 states are checked at once on truth tables)."""
    ns, p, q = namespace(machine), program_term(machine, left), program_term(machine, right)
    if start is None:
        if machine.values != 2:
            raise RenderError("an equivalence from every start state is offered on the Bits machine only")
        return Statement(EQUIVALENCE, f": ∀ (st : Bits.State), Eq (Bits.run {p} st) (Bits.run {q} st) := "
                                      "Bits.equivAll_sound rfl")
    s = state_term(machine, start)
    return Statement(EQUIVALENCE, f": Eq ({ns}.run {p} {s}) ({ns}.run {q} {s}) := {ns}.eqState_sound _ _ rfl")


def histories_equivalence_statement(machine: Machine, start: tuple[int, ...], left: Sequence[syntax.Statement],
                                    other_start: tuple[int, ...], right: Sequence[syntax.Statement]) -> Statement:
    """``run left start = run right other_start``: two histories end in the same state. From one
    start state it is ``equivalence_statement``'s very text (so the store keys it as a dataset's)."""
    if start == other_start:
        return equivalence_statement(machine, left, right, start)
    ns, p, q = namespace(machine), program_term(machine, left), program_term(machine, right)
    return Statement(EQUIVALENCE, f": Eq ({ns}.run {p} {state_term(machine, start)}) "
                                  f"({ns}.run {q} {state_term(machine, other_start)}) := {ns}.eqState_sound _ _ rfl")


def run_statement(machine: Machine, program: Sequence[syntax.Statement], start: tuple[int, ...],
                  end: tuple[int, ...]) -> Statement:
    """``run program start = end``: a whole program's effect in one theorem (a path the prover
    found, certified with one kernel call)."""
    ns = namespace(machine)
    return Statement(RUN, f": Eq ({ns}.run {program_term(machine, program)} {state_term(machine, start)}) "
                          f"{state_term(machine, end)} := {ns}.eqState_sound _ _ rfl")


def nesting(statement: Statement) -> int:
    """How deeply the statement's term nests (its deepest parenthesis): what Lean's elaborator
    recursion depth must allow."""
    depth = deepest = 0
    for ch in statement.text:
        if ch == "(":
            depth += 1
            deepest = max(deepest, depth)
        elif ch == ")":
            depth -= 1
    return deepest
