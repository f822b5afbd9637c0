"""The programs domain in Python: the statement grammar, the interpreter, sampling, partners and
the held-out protocols (the Lean side is tests/test_programs_lean.py)."""
from __future__ import annotations

import random
from itertools import product

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from chains.holdout import HoldOut
from chains.programs.dataset import ProgramsSpec, choose, sample_split
from chains.programs.sampling import equal_replacements, independent, is_dead, random_partner, random_program
from chains.programs.syntax import (VARIABLES, Machine, ProgramSyntaxError, Statement, const, execute,
                                    parse_state, parse_statement, run, state_text, var, zero_state)

MACHINES = (Machine(2), Machine(16))


def operands(machine: Machine):
    return st.one_of(st.builds(var, st.integers(0, VARIABLES - 1)), st.builds(const, st.integers(0, machine.values - 1)))


def statements(machine: Machine):
    return st.sampled_from(sorted(machine.ops)).flatmap(
        lambda op: st.builds(Statement, st.integers(0, VARIABLES - 1), st.just(op),
                             st.tuples(*[operands(machine)] * machine.ops[op])))


def states(machine: Machine):
    return st.tuples(*[st.integers(0, machine.values - 1)] * VARIABLES)


@pytest.mark.parametrize("machine", MACHINES, ids=lambda m: m.name)
@given(data=st.data())
def test_a_statements_text_reads_back_as_itself(machine, data):
    statement = data.draw(statements(machine))
    assert parse_statement(str(statement), machine) == statement


@pytest.mark.parametrize("machine", MACHINES, ids=lambda m: m.name)
@given(data=st.data())
def test_a_state_text_reads_back_as_itself(machine, data):
    state = data.draw(states(machine))
    assert parse_state(state_text(state), machine) == state


@pytest.mark.parametrize("text, machine, says", [
    ("v8 = 1", Machine(2), "v8 is not a variable"),
    ("v1 = 2", Machine(2), "2 is not a value of the bits machine"),
    ("v1 = v2 * v3", Machine(2), "'mul' is not an operation of the bits machine"),
    ("v1 = not v2", Machine(16), "'not' is not an operation of the arithmetic machine"),
    ("v1 =  v2", Machine(2), "is not a statement"),
    ("v1 = v02", Machine(2), "is not a variable or a value"),
    ("v1 = v2 xor v3; v4 = 1", Machine(2), "is not a statement"),
    ("v1 = if v2 < v3 then v4", Machine(16), "is not a statement"),
])
def test_text_outside_the_grammar_is_refused_in_one_line(text, machine, says):
    with pytest.raises(ProgramSyntaxError, match=says) as caught:
        parse_statement(text, machine)
    assert "\n" not in str(caught.value)


def test_the_interpreter_computes_each_operation():
    m = Machine(16)
    state = (3, 5, 0, 0, 0, 0, 0, 15)
    cases = {"v2 = v0 + v1": 8, "v2 = v0 - v1": 14, "v2 = v1 * v7": 11, "v2 = v7 + 1": 0,
             "v2 = if v0 < v1 then 9 else 4": 9, "v2 = if v1 < v0 then 9 else 4": 4, "v2 = v7": 15}
    for text, value in cases.items():
        assert execute(parse_statement(text, m), state, 16)[2] == value, text
    b = Machine(2)
    bits = (1, 0, 1, 1, 0, 0, 0, 0)
    cases = {"v4 = v0 and v1": 0, "v4 = v0 or v1": 1, "v4 = v0 xor v2": 0, "v4 = not v1": 1, "v4 = 1": 1}
    for text, value in cases.items():
        assert execute(parse_statement(text, b), bits, 2)[4] == value, text


@pytest.mark.parametrize("machine", MACHINES, ids=lambda m: m.name)
@given(data=st.data())
def test_equal_replacements_assign_the_same_value_in_every_state(machine, data):
    statement = data.draw(statements(machine))
    for replacement in equal_replacements(statement, machine):
        assert replacement != statement
        for _ in range(20):
            state = data.draw(states(machine))
            assert execute(replacement, state, machine.values) == execute(statement, state, machine.values)


@pytest.mark.parametrize("machine", MACHINES, ids=lambda m: m.name)
@given(data=st.data())
def test_independent_statements_commute_and_dead_ones_vanish(machine, data):
    a, b = data.draw(statements(machine)), data.draw(statements(machine))
    program = [a, b]
    for _ in range(10):
        state = data.draw(states(machine))
        if independent(a, b):
            assert run([a, b], state, machine.values) == run([b, a], state, machine.values)
        if is_dead(program, 0):
            assert run([a, b], state, machine.values) == run([b], state, machine.values)


@pytest.mark.parametrize("machine", MACHINES, ids=lambda m: m.name)
@settings(max_examples=30)
@given(seed=st.integers(0, 2**32 - 1), length=st.integers(1, 24))
def test_a_partner_ends_where_its_program_ends_from_every_start(machine, seed, length):
    rng = random.Random(seed)
    program = random_program(rng, machine, length)
    partner = random_partner(rng, machine, program)
    starts = (product(range(2), repeat=VARIABLES) if machine.values == 2
              else [zero_state()] + [tuple(rng.randrange(16) for _ in range(VARIABLES)) for _ in range(300)])
    for start in starts:
        assert run(partner, start, machine.values) == run(program, start, machine.values)


def test_partners_are_other_programs_of_other_lengths():
    rng = random.Random(1)
    m = Machine(2)
    pairs = [(p, random_partner(rng, m, p)) for p in (random_program(rng, m, 12) for _ in range(200))]
    assert sum(p != q for p, q in pairs) > 150
    assert len({len(q) - len(p) for p, q in pairs}) > 3


def test_arithmetic_programs_keep_their_states_spread():
    """Random products modulo 16 would drive registers to 0; the generator keeps them spread."""
    rng = random.Random(0)
    m = Machine(16)
    ends = [run(random_program(rng, m, 256), zero_state(), 16) for _ in range(200)]
    zeros = sum(v == 0 for end in ends for v in end) / (8 * len(ends))
    assert zeros < 0.25


def test_the_same_spec_draws_the_same_programs():
    spec = ProgramsSpec(machine=Machine(16), chains=30, test_chains=3, test_lengths=(16, 64), seed=5)
    first = [list(sample_split(spec, name, n)) for name, n in spec.split_names()]
    again = [list(sample_split(spec, name, n)) for name, n in spec.split_names()]
    assert first == again
    other = [list(sample_split(ProgramsSpec(machine=Machine(16), chains=30, test_chains=3, test_lengths=(16, 64),
                                            seed=6), name, n)) for name, n in spec.split_names()]
    assert other != first
    assert all(4 <= len(s.program) <= 16 for s in first[0])
    assert all(len(s.program) == 64 for s in first[2])


@pytest.mark.parametrize("protocol", ["events:3", "pairs:2"])
@pytest.mark.parametrize("machine", MACHINES, ids=lambda m: m.name)
def test_a_held_out_protocol_keeps_training_clean_and_every_test_program_holds_it(protocol, machine):
    spec = ProgramsSpec(machine=machine, chains=300, test_chains=20, test_lengths=(16, 64), seed=3,
                        holdout=HoldOut.parse(protocol))
    held = choose(spec.holdout, machine, spec.seed)
    training = list(sample_split(spec, "train", None, held))
    for sample in training:
        assert held.allows(sample.program)
        assert all(held.allows(p) for p in sample.partners)
    for name, length in spec.split_names()[1:]:
        assert all(held.holds(s.program) and not held.allows(s.program) for s in sample_split(spec, name, length, held))


def test_a_held_out_pair_is_a_data_flow():
    held = choose(HoldOut.parse("pairs:5"), Machine(2), 0)
    assert all(first.target in second.reads() for first, second in held.pairs)
