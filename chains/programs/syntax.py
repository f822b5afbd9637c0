"""Programs on a register machine: variables, statements, their text and their meaning.

A machine has eight variables ``v0``–``v7`` over ``values`` values: 2 (*Bits*: the operations
``not``, ``and``, ``or``, ``xor``) or 16 (*Arithmetic*: ``+``, ``-``, ``*`` modulo 16 and a
conditional ``if a < b then c else d``). Every statement assigns one variable from an expression
whose operands are variables or constants; every statement applies to every state. A state is the
tuple of the eight values, ``v0`` first; as text it is one hexadecimal digit a variable
(``"01100000"``: ``v1`` and ``v2`` are 1).

Statement text, one statement a line::

    v3 = 1                      set        (a constant or a variable)
    v3 = not v1                 not        (Bits)
    v3 = v1 xor v2              and, or, xor (Bits); +, -, * (Arithmetic)
    v3 = if v1 < v2 then v4 else 7          (Arithmetic)

``parse_statement`` reads exactly this grammar (single spaces, nothing else) and refuses anything
else with ``ProgramSyntaxError`` in one line; ``str(statement)`` writes it back.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

VARIABLES = 8
MACHINE_VALUES = (2, 16)  # Bits, Arithmetic

# operation -> (arity, the symbol its text uses); "set" is written as its operand alone
BITS_OPS: dict[str, int] = {"set": 1, "not": 1, "and": 2, "or": 2, "xor": 2}
ARITH_OPS: dict[str, int] = {"set": 1, "add": 2, "sub": 2, "mul": 2, "ite": 4}
_SYMBOL = {"and": "and", "or": "or", "xor": "xor", "add": "+", "sub": "-", "mul": "*"}
_BINARY = {symbol: op for op, symbol in _SYMBOL.items()}


class ProgramSyntaxError(ValueError):
    """Text that is not a statement or a state of the machine; the message says what is wrong."""


@dataclass(frozen=True)
class Machine:
    """Which register machine: its number of values (2: Bits, 16: Arithmetic)."""

    values: int = 2

    def __post_init__(self) -> None:
        if self.values not in MACHINE_VALUES:
            raise ValueError(f"values must be one of {', '.join(map(str, MACHINE_VALUES))}, not {self.values}")

    @property
    def name(self) -> str:
        return "bits" if self.values == 2 else "arithmetic"

    @property
    def ops(self) -> dict[str, int]:
        return BITS_OPS if self.values == 2 else ARITH_OPS

    @property
    def states(self) -> int:
        return self.values ** VARIABLES


@dataclass(frozen=True, order=True)
class Operand:
    """A variable (``var`` true, ``value`` its index) or a constant (``value`` itself)."""

    var: bool
    value: int

    def __str__(self) -> str:
        return f"v{self.value}" if self.var else str(self.value)


def var(index: int) -> Operand:
    return Operand(True, index)


def const(value: int) -> Operand:
    return Operand(False, value)


@dataclass(frozen=True, order=True)
class Statement:
    """``v{target} = op(args)``."""

    target: int
    op: str
    args: tuple[Operand, ...]

    def __str__(self) -> str:
        a = self.args
        if self.op == "set":
            body = str(a[0])
        elif self.op == "not":
            body = f"not {a[0]}"
        elif self.op == "ite":
            body = f"if {a[0]} < {a[1]} then {a[2]} else {a[3]}"
        else:
            body = f"{a[0]} {_SYMBOL[self.op]} {a[1]}"
        return f"v{self.target} = {body}"

    def reads(self) -> frozenset[int]:
        """The variables the statement reads."""
        return frozenset(o.value for o in self.args if o.var)


def check_statement(statement: Statement, machine: Machine) -> Statement:
    """``statement`` when it is one of ``machine``'s; ProgramSyntaxError otherwise."""
    arity = machine.ops.get(statement.op)
    if arity is None:
        raise ProgramSyntaxError(f"{statement.op!r} is not an operation of the {machine.name} machine "
                                 f"({', '.join(machine.ops)})")
    if len(statement.args) != arity:
        raise ProgramSyntaxError(f"{statement.op} takes {arity} operand(s), not {len(statement.args)}")
    if not 0 <= statement.target < VARIABLES:
        raise ProgramSyntaxError(f"v{statement.target} is not a variable (v0 to v{VARIABLES - 1})")
    for o in statement.args:
        if o.var and not 0 <= o.value < VARIABLES:
            raise ProgramSyntaxError(f"v{o.value} is not a variable (v0 to v{VARIABLES - 1})")
        if not o.var and not 0 <= o.value < machine.values:
            raise ProgramSyntaxError(f"{o.value} is not a value of the {machine.name} machine "
                                     f"(0 to {machine.values - 1})")
    return statement


_OPERAND = r"(v[0-9]+|[0-9]+)"
_SET = re.compile(rf"v([0-9]+) = {_OPERAND}")
_NOT = re.compile(rf"v([0-9]+) = not {_OPERAND}")
_BIN = re.compile(rf"v([0-9]+) = {_OPERAND} (and|or|xor|\+|-|\*) {_OPERAND}")
_ITE = re.compile(rf"v([0-9]+) = if {_OPERAND} < {_OPERAND} then {_OPERAND} else {_OPERAND}")


def _operand(text: str) -> Operand:
    digits = text[1:] if text[0] == "v" else text
    if len(digits) > 2 or (len(digits) > 1 and digits[0] == "0"):  # no leading zeros: one text a statement
        raise ProgramSyntaxError(f"{text!r:.20} is not a variable or a value")
    return var(int(digits)) if text[0] == "v" else const(int(digits))


def parse_statement(text: str, machine: Machine) -> Statement:
    """One statement of ``machine`` from its text; ProgramSyntaxError naming what is wrong."""
    if not isinstance(text, str):
        raise ProgramSyntaxError(f"a statement is text, not {type(text).__name__}")
    return _parsed(text, machine)


@lru_cache(maxsize=1 << 17)
def _parsed(text: str, machine: Machine) -> Statement:
    """``parse_statement`` of a text, kept: a dataset repeats its statements (Bits has 2,560), and a
    statement is a frozen value. A text that is no statement raises and is not kept."""
    for pattern, op in ((_SET, "set"), (_NOT, "not"), (_ITE, "ite"), (_BIN, None)):
        m = pattern.fullmatch(text)
        if m is None:
            continue
        groups = m.groups()
        if op is None:  # binary: target, left, symbol, right
            op, operands = _BINARY[groups[2]], (groups[1], groups[3])
        else:
            operands = groups[1:]
        target = _operand(f"v{groups[0]}")
        return check_statement(Statement(target.value, op, tuple(map(_operand, operands))), machine)
    raise ProgramSyntaxError(f"{text!r:.60} is not a statement (e.g. 'v3 = v1 xor v2', 'v0 = 1', 'v2 = not v5')")


State = tuple[int, ...]


def zero_state() -> State:
    return (0,) * VARIABLES


def state_text(state: State) -> str:
    return "".join("0123456789abcdef"[v] for v in state)


def parse_state(text: str, machine: Machine) -> State:
    """A state from its text (one hexadecimal digit a variable, ``v0`` first)."""
    if not isinstance(text, str) or len(text) != VARIABLES:
        raise ProgramSyntaxError(f"{text!r:.30} is not a state ({VARIABLES} hexadecimal digits, v0 first)")
    try:
        state = tuple(int(c, 16) for c in text)
    except ValueError:
        raise ProgramSyntaxError(f"{text!r:.30} is not a state ({VARIABLES} hexadecimal digits, v0 first)") from None
    if any(v >= machine.values for v in state) or text != text.lower():
        raise ProgramSyntaxError(f"{text!r} is not a state of the {machine.name} machine "
                                 f"(every digit 0 to {machine.values - 1:x})")
    return state


def evaluate(statement: Statement, state: State, values: int) -> int:
    """The value ``statement`` assigns in ``state`` (Python's reading, the referee of Lean's)."""
    a = [state[o.value] if o.var else o.value for o in statement.args]
    op = statement.op
    if op == "set":
        return a[0]
    if op == "not":
        return 1 - a[0]
    if op == "and":
        return a[0] & a[1]
    if op == "or":
        return a[0] | a[1]
    if op == "xor":
        return a[0] ^ a[1]
    if op == "add":
        return (a[0] + a[1]) % values
    if op == "sub":
        return (a[0] - a[1]) % values
    if op == "mul":
        return (a[0] * a[1]) % values
    if op == "ite":
        return a[2] if a[0] < a[1] else a[3]
    raise ValueError(f"unknown operation {op!r}")


def execute(statement: Statement, state: State, values: int) -> State:
    """The state after ``statement``."""
    out = list(state)
    out[statement.target] = evaluate(statement, state, values)
    return tuple(out)


def run(program: tuple[Statement, ...] | list[Statement], state: State, values: int) -> State:
    for statement in program:
        state = execute(statement, state, values)
    return state
