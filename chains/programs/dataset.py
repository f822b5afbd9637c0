"""A programs dataset's contents: its spec, its sampled splits and the held-out protocols.

``ProgramsSpec`` decides everything a dataset holds; ``sample_splits`` draws its programs (a pure
function of the spec: the same spec gives the same programs). Every program starts at the zero
state. Training programs have a length uniform in ``[min_length, max_length]``; each test split
has programs of one length. Each program carries ``partners`` equivalent programs
(``chains.programs.sampling``).

Held-out protocols (``--hold-out``, parsed by ``chains.holdout.HoldOut``):

- ``events:K``: K statements no training program or partner holds and every test program holds
  (one of them put at a uniformly random place of a uniformly drawn program);
- ``pairs:K``: K ordered statement pairs no training program or partner holds adjacently and
  every test program holds adjacently, drawn among pairs whose second statement reads the first's
  target (the pair is a real data flow, never two independent statements);
- ``states``: sampling unchanged; the manifest counts the states training visits and the test
  programs ending at a state training never visited.
"""
from __future__ import annotations

import random
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field

from chains.holdout import HoldOut, HoldOutRefused
from chains.programs.sampling import Program, random_partner, random_program, random_statement
from chains.programs.syntax import Machine, Statement, State, execute, zero_state
from chains.seeds import split_rng

DEFAULT_TEST_LENGTHS = (16, 64, 256, 1024, 4096)
# Named sizes of a dataset (``certify --domain programs --preset NAME``): the ``ProgramsSpec`` fields
# they set, every other field at its default. small: a first dataset to train and evaluate on within
# minutes (``make demo-programs``), a fortieth of the default's statements, test programs to 256.
PRESETS: dict[str, dict[str, object]] = {
    "small": {"chains": 500, "test_lengths": (16, 64, 256), "test_chains": 32},
}
DRAWS = 10_000  # draws of a held-out choice before the protocol is declared impossible


@dataclass(frozen=True, kw_only=True)
class ProgramsSpec:
    """Everything that decides a programs dataset's contents."""

    machine: Machine = field(default_factory=Machine)
    chains: int = 5000  # training programs
    min_length: int = 4  # statements per training program: uniform in [min_length, max_length]
    max_length: int = 16
    partners: int = 2  # certified equivalent programs per program
    test_lengths: tuple[int, ...] = DEFAULT_TEST_LENGTHS  # one test split per length
    test_chains: int = 128  # programs per test split
    seed: int = 0
    holdout: HoldOut | None = None

    def __post_init__(self) -> None:
        if self.chains < 1 or self.test_chains < 1:
            raise ValueError("chains and test_chains must be at least 1")
        if not 1 <= self.min_length <= self.max_length:
            raise ValueError("program lengths need 1 <= min_length <= max_length")
        if self.partners < 0:
            raise ValueError("partners must be at least 0")
        if any(n < 2 for n in self.test_lengths) or len(set(self.test_lengths)) != len(self.test_lengths):
            raise ValueError("test lengths must be distinct and at least 2")

    def settings(self) -> dict:
        """The settings this spec makes a dataset with, as ``chains.manifest.programs_settings``
        reads them back from its manifest."""
        return {"domain": "programs", "values": self.machine.values, "chains": self.chains,
                "min_length": self.min_length, "max_length": self.max_length, "partners": self.partners,
                "test_lengths": list(self.test_lengths), "test_chains": self.test_chains, "seed": self.seed,
                "hold_out": None if self.holdout is None else str(self.holdout)}

    def split_names(self) -> list[tuple[str, int | None]]:
        """(file stem, program length or None for the training split's range), in writing order."""
        return [("train", None)] + [(f"test-{n}", n) for n in self.test_lengths]


@dataclass(frozen=True)
class Sample:
    """A program and its partners."""

    program: Program
    partners: tuple[Program, ...]


@dataclass(frozen=True)
class HeldPrograms:
    """What a held-out protocol holds out: statements, or ordered adjacent statement pairs."""

    kind: str
    statements: tuple[Statement, ...] = ()
    pairs: tuple[tuple[Statement, Statement], ...] = ()

    def allows(self, program: Sequence[Statement]) -> bool:
        """No held-out statement, or no held-out pair adjacently, in ``program``."""
        if self.kind == "events":
            held = set(self.statements)
            return not any(s in held for s in program)
        if self.kind == "pairs":
            held = set(self.pairs)
            return not any((a, b) in held for a, b in zip(program, program[1:]))
        return True

    def first_held(self, program: Sequence[Statement]) -> int | None:
        """The index of the statement that completes the program's first held-out statement (or
        pair); None when it holds none."""
        if self.kind == "events":
            held = set(self.statements)
            return next((k for k, s in enumerate(program) if s in held), None)
        if self.kind == "pairs":
            held = set(self.pairs)
            return next((k + 1 for k, pair in enumerate(zip(program, program[1:])) if pair in held), None)
        return None

    def holds(self, program: Sequence[Statement]) -> bool:
        return self.kind == "states" or not self.allows(program)


def choose(protocol: HoldOut, machine: Machine, seed: int) -> HeldPrograms:
    """The statements or pairs ``protocol`` holds out, drawn from ``seed``."""
    rng = split_rng(seed, f"holdout-{protocol}")
    if protocol.kind == "states":
        return HeldPrograms("states")
    if protocol.kind == "events":
        chosen: dict[Statement, None] = {}
        for _ in range(DRAWS):
            if len(chosen) == protocol.count:
                break
            chosen[random_statement(rng, machine)] = None
        else:
            raise HoldOutRefused(f"could not draw {protocol.count} distinct statements to hold out")
        return HeldPrograms("events", statements=tuple(chosen))
    pairs: dict[tuple[Statement, Statement], None] = {}
    for _ in range(DRAWS):
        if len(pairs) == protocol.count:
            break
        first = random_statement(rng, machine)
        second = random_statement(rng, machine)
        if first.target in second.reads():
            pairs[first, second] = None
    else:
        raise HoldOutRefused(f"could not draw {protocol.count} distinct statement pairs to hold out")
    return HeldPrograms("pairs", pairs=tuple(pairs))


def trace(program: Sequence[Statement], start: State, values: int) -> list[State]:
    """The state after each statement of ``program`` from ``start``."""
    states = []
    for statement in program:
        start = execute(statement, start, values)
        states.append(start)
    return states


def _test_program(rng: random.Random, machine: Machine, length: int, held: HeldPrograms | None) -> Program:
    program = list(random_program(rng, machine, length))
    if held is None or held.kind == "states":
        return tuple(program)
    if held.kind == "events":
        program[rng.randrange(length)] = rng.choice(held.statements)
    else:
        i = rng.randrange(length - 1)
        program[i:i + 2] = rng.choice(held.pairs)
    return tuple(program)


def sample_split(spec: ProgramsSpec, name: str, length: int | None,
                 held: HeldPrograms | None = None) -> Iterator[Sample]:
    """The programs of one split, with their partners; a pure function of the spec and name."""
    rng = split_rng(spec.seed, name)
    machine = spec.machine
    count = spec.chains if length is None else spec.test_chains
    training = length is None
    guard = held.allows if training and held is not None else None
    for _ in range(count):
        if training:
            program = random_program(rng, machine, rng.randint(spec.min_length, spec.max_length),
                                     None if guard is None else (lambda p, s: guard(list(p) + [s])))
        else:
            program = _test_program(rng, machine, length, held)
        partners = tuple(random_partner(rng, machine, program, guard) for _ in range(spec.partners))
        yield Sample(program, partners)


def start_state() -> State:
    """Every program starts here."""
    return zero_state()
