"""The programs domain as a ``chains.protocol.StateDomain``: states are the eight values, events
are statements, every statement applies to every state. Lean certifies it through its own route
(``leanbridge.programs``: traces and, on Bits, truth tables of every start state). A statement reads
the variables it names and writes one (``chains.registers.NamedWrites``: the registers arch holds a
register per variable)."""
from __future__ import annotations

import random
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from itertools import product

from chains.programs.sampling import random_partner, random_program
from chains.programs.syntax import (MACHINE_VALUES, VARIABLES, Machine, ProgramSyntaxError, State, Statement,
                                    check_statement, const, execute, parse_state, parse_statement, state_text, var)
from chains.protocol import EventRefused
from chains.records import Record, Words, parse_record

EVENT_WIDTH = 6  # tokens an event is read as: target, operation, four operand slots (padded)
PROGRAM_WORDS = Words(history="program", events="statements")  # how a bad line of a programs file is named

_VALUES = {values: frozenset(range(values)) for values in MACHINE_VALUES}  # a machine's values, by their count


@dataclass(frozen=True)
class ProgramsDomain:
    machine: Machine = field(default_factory=Machine)
    name: str = "programs"

    def describe(self) -> dict:
        return {"name": self.name, "machine": self.machine.name, "values": self.machine.values,
                "variables": VARIABLES}

    def state_text(self, state: State) -> str:
        return state_text(state)

    def parse_state(self, text: str) -> State:
        return parse_state(text, self.machine)

    def state_key(self, state: State) -> int:
        key = 0
        for v in reversed(state):
            key = key * self.machine.values + v
        return key

    def event_text(self, event: Statement) -> str:
        return str(event)

    def parse_event(self, text: str) -> Statement:
        return parse_statement(text, self.machine)

    def apply(self, state: State, event: Statement) -> State:
        try:
            check_statement(event, self.machine)
        except ProgramSyntaxError as e:
            raise EventRefused(f"'{event}' is not a statement of the {self.machine.name} machine: {e}") from None
        if len(state) != VARIABLES or not _VALUES[self.machine.values].issuperset(state):
            raise EventRefused(f"{state!r:.60} is not a state of the {self.machine.name} machine")
        return execute(event, state, self.machine.values)

    def statements(self) -> Iterator[Statement]:
        """Every statement of the machine (a generator: the Arithmetic machine has 2.7 million)."""
        operands = [var(i) for i in range(VARIABLES)] + [const(c) for c in range(self.machine.values)]
        for target in range(VARIABLES):
            for op, arity in self.machine.ops.items():
                for args in product(operands, repeat=arity):
                    yield Statement(target, op, args)

    def successors(self, state: State) -> Iterator[tuple[Statement, State]]:
        for statement in self.statements():
            yield statement, execute(statement, state, self.machine.values)

    def start_state(self, rng: random.Random) -> State:
        return (0,) * VARIABLES

    def uniform_state(self, rng: random.Random) -> State:
        """Each variable's value drawn uniformly (``chains.protocol.UniformStates``)."""
        return tuple(rng.randrange(self.machine.values) for _ in range(VARIABLES))

    def sample_events(self, rng: random.Random, start: State, length: int) -> list[Statement]:
        return list(random_program(rng, self.machine, length))

    def sample_partner(self, rng: random.Random, start: State, events: Sequence[Statement]
                       ) -> tuple[State, list[Statement]]:
        return start, list(random_partner(rng, self.machine, tuple(events)))

    def short_history(self, start: State, end: State) -> list[Statement]:
        """One constant assignment for each variable that differs (``chains.protocol.ShortHistories``):
        at most eight statements, whatever led from ``start`` to ``end``."""
        return [Statement(v, "set", (const(value),)) for v, (was, value) in enumerate(zip(start, end)) if was != value]

    def vocabulary(self) -> tuple[str, ...]:
        return (("pad", "=") + tuple(f"v{i}" for i in range(VARIABLES)) + tuple(f"c{c}" for c in range(self.machine.values))
                + tuple(self.machine.ops))

    def start_tokens(self, state: State) -> list[str]:
        return [f"c{v}" for v in state]

    def event_tokens(self, event: Statement) -> list[str]:
        args = [f"v{o.value}" if o.var else f"c{o.value}" for o in event.args]
        return [f"v{event.target}", event.op] + args + ["pad"] * (EVENT_WIDTH - 2 - len(args))

    def readout(self) -> tuple[int, ...]:
        return (self.machine.values,) * VARIABLES

    def named_writes(self, tokens: Sequence[str]) -> tuple[tuple[int, ...], int] | None:
        """The variables a statement's operands name and the one it assigns, read off its tokens
        (``chains.registers.NamedWrites``); None for tokens that are not a statement's (a start state's)."""
        names = {f"v{i}": i for i in range(VARIABLES)}
        if len(tokens) != EVENT_WIDTH or tokens[0] not in names or tokens[1] not in self.machine.ops:
            return None
        return tuple(names[t] for t in tokens[2:] if t in names), names[tokens[0]]

    def state_classes(self, state: State) -> list[int]:
        return list(state)

    def parse_record(self, line: str, where: str) -> Record:
        return parse_record(self, line, where, words=PROGRAM_WORDS)

    def record_histories(self, record: Record) -> tuple[tuple[State, Sequence[Statement]],
                                                        list[tuple[State, Sequence[Statement]]]]:
        return (record.history.start, record.history.events), [(m.start, m.events) for m in record.partners]

    def state_of_classes(self, classes: Sequence[int]) -> State:
        state = tuple(int(c) for c in classes)
        if len(state) != VARIABLES or not all(0 <= v < self.machine.values for v in state):
            raise ValueError(f"classes {list(classes)!r:.60} are not {VARIABLES} values of the {self.machine.name} machine")
        return state
