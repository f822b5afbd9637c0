"""Random programs and their certified partners (equivalent programs).

Programs start at the zero state. Statements are drawn so that states stay spread: on the
Arithmetic machine a product's second operand is an odd constant half of the time (an odd factor
is a bijection modulo 16; random products alone drive most variables to 0 within a few hundred
statements), and constants enter through ``set`` and ``ite``.

A partner of a program is another program that ends in the same state from *every* start state,
made by moves that keep the meaning of any program:

- ``swap``: two adjacent independent statements exchanged (neither writes what the other reads
  or writes);
- ``dead``: a dead statement removed (one whose target is overwritten before any read), or, half
  the time and whenever none is found, a statement inserted just before a statement that
  overwrites its target without reading it;
- ``equal``: a statement replaced by one that assigns the same value in every state (operands of
  a commutative operation exchanged; ``a and a`` for ``a``; ``a + 0`` for ``a``; ``a xor a`` for
  ``0``; ``if a < b then c else c`` for ``c``; and the reverse).

Lean certifies every partner's equivalence; Python's interpreter is only the referee here.
"""
from __future__ import annotations

import random
from collections.abc import Sequence

from chains.programs.syntax import VARIABLES, Machine, Operand, Statement, const, var

Program = tuple[Statement, ...]
MOVES = ("swap", "dead", "equal")
VAR_SHARE = 0.7  # an operand is a variable this often, else a constant


def _operand(rng: random.Random, machine: Machine) -> Operand:
    if rng.random() < VAR_SHARE:
        return var(rng.randrange(VARIABLES))
    return const(rng.randrange(machine.values))


_ARITH_WEIGHTS = {"set": 0.15, "add": 0.25, "sub": 0.2, "mul": 0.15, "ite": 0.25}


def random_statement(rng: random.Random, machine: Machine, target: int | None = None) -> Statement:
    """One statement drawn from the machine's distribution (``target`` fixes the variable written)."""
    target = rng.randrange(VARIABLES) if target is None else target
    if machine.values == 2:
        op = rng.choice(tuple(machine.ops))
    else:
        op = rng.choices(tuple(_ARITH_WEIGHTS), weights=tuple(_ARITH_WEIGHTS.values()))[0]
    args = [_operand(rng, machine) for _ in range(machine.ops[op])]
    if op == "mul" and rng.random() < 0.5:
        args[1] = const(rng.randrange(1, machine.values, 2))
    return Statement(target, op, tuple(args))


def random_program(rng: random.Random, machine: Machine, length: int,
                   allowed=None) -> Program:
    """``length`` statements; ``allowed(program_so_far, statement)`` may refuse a draw (a hold-out)."""
    program: list[Statement] = []
    while len(program) < length:
        statement = random_statement(rng, machine)
        if allowed is None or allowed(program, statement):
            program.append(statement)
    return tuple(program)


def independent(a: Statement, b: Statement) -> bool:
    """``a; b`` and ``b; a`` have the same meaning: neither writes what the other touches."""
    return a.target != b.target and a.target not in b.reads() and b.target not in a.reads()


def swapped(program: Sequence[Statement]) -> Program:
    """A deterministic partner: left to right, every pair of adjacent independent statements swapped."""
    out, i = list(program), 0
    while i + 1 < len(out):
        if independent(out[i], out[i + 1]):
            out[i], out[i + 1] = out[i + 1], out[i]
            i += 2
        else:
            i += 1
    return tuple(out)


def is_dead(program: Sequence[Statement], i: int) -> bool:
    """Statement ``i``'s value is overwritten before any read (the next statement touching its
    target writes it without reading it); a write that survives to the end is never dead."""
    x = program[i].target
    for later in program[i + 1:]:
        if x in later.reads():
            return False
        if later.target == x:
            return True
    return False


def equal_replacements(s: Statement, machine: Machine) -> list[Statement]:
    """Statements that assign what ``s`` assigns in every state (never ``s`` itself)."""
    out: list[Statement] = []
    a = s.args
    commutative = {"and", "or", "xor", "add", "mul"}
    if s.op in commutative and a[0] != a[1]:
        out.append(Statement(s.target, s.op, (a[1], a[0])))
    if s.op == "set":
        x = a[0]
        if machine.values == 2:
            out += [Statement(s.target, "and", (x, x)), Statement(s.target, "or", (x, const(0)))]
        else:
            out += [Statement(s.target, "add", (x, const(0))), Statement(s.target, "mul", (x, const(1)))]
    if s.op in {"and", "or"} and a[0] == a[1]:
        out.append(Statement(s.target, "set", (a[0],)))
    if s.op in {"or", "add"} and a[1] == const(0):
        out.append(Statement(s.target, "set", (a[0],)))
    if s.op == "mul" and a[1] == const(1):
        out.append(Statement(s.target, "set", (a[0],)))
    if s.op in {"xor", "sub"} and a[0] == a[1]:
        out.append(Statement(s.target, "set", (const(0),)))
    if s.op == "ite" and a[2] == a[3]:
        out.append(Statement(s.target, "set", (a[2],)))
    return out


SITE_TRIES = 64  # positions tried for a move before it is given up (a program may have no site for it)


def _site(rng: random.Random, n: int, fits) -> int | None:
    """A position in ``range(n)`` where ``fits(i)``, uniform among them (drawn by rejection, so a
    move costs the same on a program of 4,096 statements as on one of 16); None after SITE_TRIES misses."""
    for _ in range(SITE_TRIES if n > 0 else 0):
        i = rng.randrange(n)
        if fits(i):
            return i
    return None


def _move(rng: random.Random, machine: Machine, program: list[Statement], allowed) -> bool:
    """One meaning-keeping move on ``program`` in place; False when the drawn move found no site."""
    kind = rng.choice(MOVES)
    n = len(program)
    if kind == "swap":
        i = _site(rng, n - 1, lambda i: independent(program[i], program[i + 1]))
        if i is None:
            return False
        candidate = program[:i] + [program[i + 1], program[i]] + program[i + 2:]
    elif kind == "dead":
        i = _site(rng, n, lambda i: is_dead(program, i)) if rng.random() < 0.5 else None
        if i is not None:
            candidate = program[:i] + program[i + 1:]
        else:
            # just before a statement j that writes x without reading it, `x = anything` is dead
            j = _site(rng, n, lambda j: program[j].target not in program[j].reads())
            if j is None:
                return False
            candidate = program[:j] + [random_statement(rng, machine, program[j].target)] + program[j:]
    else:
        i = _site(rng, n, lambda i: bool(equal_replacements(program[i], machine)))
        if i is None:
            return False
        candidate = program[:i] + [rng.choice(equal_replacements(program[i], machine))] + program[i + 1:]
    if allowed is not None and not allowed(candidate):
        return False
    program[:] = candidate
    return True


def random_partner(rng: random.Random, machine: Machine, program: Program, allowed=None) -> Program:
    """A program equivalent to ``program`` from every start: a number of moves uniform in
    [1, len(program)], each drawn among the moves that have a site (``allowed(candidate)`` may
    refuse a result, for hold-outs)."""
    work = list(program)
    moves = rng.randint(1, max(1, len(program)))
    tries = 0
    while moves and tries < 20 * len(program) + 20:
        tries += 1
        if _move(rng, machine, work, allowed):
            moves -= 1
    return tuple(work)
