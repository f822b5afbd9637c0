"""Program statements certified by the real Lean binary (``leanbridge.programs``), never mocked:
Lean agrees with Python's interpreter on random statements and states of both machines; a wrong
claimed state is never certified; a trace with one wrong state is rejected; true equivalences
are certified (from the zero state, and on Bits from every start state) and false ones rejected."""
import random
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from chains.programs.sampling import random_program, swapped
from chains.programs.syntax import VARIABLES, Machine, Operand, Statement, execute, parse_statement, run, zero_state
from leanbridge.batch import QuestionFailed
from leanbridge.errors import RenderError
from leanbridge.process import LeanLimits
from leanbridge.programs import (EquivalenceQuestion, RunQuestion, StepQuestion, TraceQuestion, build_programs,
                                 check_programs, library_hash, trace_questions)
from leanbridge.programs.library import ProgramsLibraryError, audit_source
from leanbridge.verdicts import Complete, Rejected

REPO = Path(__file__).resolve().parents[1]
BITS, ARITH = Machine(2), Machine(16)


@pytest.fixture(scope="module")
def library(lean, core):
    return build_programs(lean, core=core)


def operands(machine: Machine):
    return st.one_of(st.builds(Operand, st.just(True), st.integers(0, VARIABLES - 1)),
                     st.builds(Operand, st.just(False), st.integers(0, machine.values - 1)))


def statements(machine: Machine):
    return st.sampled_from(sorted(machine.ops.items())).flatmap(
        lambda op: st.builds(Statement, st.integers(0, VARIABLES - 1), st.just(op[0]),
                             st.tuples(*[operands(machine)] * op[1])))


def states(machine: Machine):
    return st.tuples(*[st.integers(0, machine.values - 1)] * VARIABLES)


def program(machine: Machine, *lines: str) -> tuple[Statement, ...]:
    return tuple(parse_statement(line, machine) for line in lines)


def trace_of(machine: Machine, start, statements_):
    states_, state = [], start
    for statement in statements_:
        state = execute(statement, state, machine.values)
        states_.append(state)
    return tuple(states_)


@st.composite
def step_cases(draw):
    """(machine, statement, before, claimed after, whether the claim is true)."""
    machine = draw(st.sampled_from((BITS, ARITH)))
    statement, before = draw(statements(machine)), draw(states(machine))
    after = execute(statement, before, machine.values)
    if draw(st.booleans()):
        where = draw(st.integers(0, VARIABLES - 1))
        wrong = (after[where] + draw(st.integers(1, machine.values - 1))) % machine.values
        after = after[:where] + (wrong,) + after[where + 1:]
        return machine, statement, before, after, False
    return machine, statement, before, after, True


@settings(max_examples=5)
@given(st.lists(step_cases(), min_size=60, max_size=60))
def test_lean_agrees_with_python_on_random_steps_of_both_machines(lean, library, cases):
    answers, processes = check_programs([StepQuestion(*case[:4]) for case in cases], lean, library)
    truths = {case[4] for case in cases}
    assert processes == len(truths)  # one Lean file, and one more for the true claims after a rejection
    for (machine, statement, before, after, true), answer in zip(cases, answers):
        assert isinstance(answer, Complete if true else Rejected), (machine.name, str(statement), before, after)


def test_every_wrong_claimed_state_is_rejected_even_among_many_errors(lean, library):
    statement, before = parse_statement("v2 = if v0 < v1 then v3 else 9", ARITH), (3, 5, 0, 12, 0, 0, 0, 0)
    after = execute(statement, before, 16)
    wrong = [after[:i] + (v,) + after[i + 1:] for i in range(VARIABLES) for v in range(16) if v != after[i]]
    questions = [StepQuestion(ARITH, statement, before, claimed) for claimed in wrong]
    questions.insert(60, StepQuestion(ARITH, statement, before, after))
    answers, processes = check_programs(questions, lean, library)  # 120 errors in one file, then the true claim
    assert processes == 2
    assert isinstance(answers.pop(60), Complete)
    assert all(isinstance(a, Rejected) and a.error_class == "application_type_mismatch" for a in answers)


def test_a_trace_is_certified_and_one_wrong_intermediate_state_rejects_it(lean, library):
    rng = random.Random(7)
    start = tuple(rng.randrange(16) for _ in range(VARIABLES))
    statements_ = tuple(Statement(rng.randrange(8), op, tuple(
        Operand(True, rng.randrange(8)) if rng.random() < 0.7 else Operand(False, rng.randrange(16))
        for _ in range(ARITH.ops[op]))) for op in (rng.choice(sorted(ARITH.ops)) for _ in range(300)))
    states_ = trace_of(ARITH, start, statements_)
    k, target = 150, statements_[150].target
    # statement k claimed to assign another value, and the rest run on from that claim
    wrong = states_[k][:target] + ((states_[k][target] + 1) % 16,) + states_[k][target + 1:]
    wrong_value = states_[:k] + (wrong,) + trace_of(ARITH, wrong, statements_[k + 1:])
    other = (target + 1) % VARIABLES  # a variable statement k does not assign: the claim leaves the frame
    wrong_frame = states_[:k] + tuple(s[:other] + ((s[other] + 1) % 16,) + s[other + 1:] for s in states_[k:])
    traces = [trace_questions(ARITH, start, statements_, claimed) for claimed in (states_, wrong_value, wrong_frame)]
    assert [len(t) for t in traces] == [5, 5, 5] and traces[1][:2] == traces[0][:2]  # chunks of 64
    answers, _ = check_programs([q for t in traces for q in t], lean, library)
    verdicts = [[type(a).__name__ for a in answers[i:i + 5]] for i in (0, 5, 10)]
    assert verdicts[0] == ["Complete"] * 5
    assert verdicts[1][2] == verdicts[2][2] == "Rejected"  # the chunk of statements 129-192
    assert verdicts[1] == ["Complete"] * 2 + ["Rejected"] + ["Complete"] * 2
    assert ".Effects " in traces[1][2].text and ".Steps " in traces[2][2].text


def test_true_equivalences_are_certified_and_false_ones_rejected(lean, library):
    bits = program(BITS, "v0 = not v1", "v2 = v3 and v4", "v5 = 1", "v1 = v0 xor v5", "v6 = v2 or v7", "v3 = 0",
                   "v4 = v6 xor v1", "v7 = not v3")
    arith = program(ARITH, "v0 = 3", "v1 = v2 + 5", "v3 = v0 * 7", "v4 = if v1 < v3 then v0 else 2", "v2 = v4 - v0",
                    "v5 = v6 * 3", "v6 = v1 + v1", "v7 = if v0 < 4 then 1 else v5")
    assert swapped(bits) != bits and swapped(arith) != arith
    broken_bits = bits[:-1] + (parse_statement("v7 = v3", BITS),)  # v7 ends 0, not 1
    broken_arith = arith[:2] + (parse_statement("v3 = v0 * 5", ARITH),) + arith[3:]
    z = zero_state()
    for p, q, machine in ((bits, broken_bits, BITS), (arith, broken_arith, ARITH)):
        assert run(p, z, machine.values) != run(q, z, machine.values)
    # equal from the zero state (v1 is 0 there), not from a state where v1 is 1
    narrow = (program(BITS, "v0 = v1", "v2 = not v0"), program(BITS, "v0 = 0", "v2 = 1"))
    questions = [EquivalenceQuestion(BITS, bits, swapped(bits), z),
                 EquivalenceQuestion(BITS, bits, swapped(bits)),
                 EquivalenceQuestion(ARITH, arith, swapped(arith), z),
                 EquivalenceQuestion(BITS, bits, broken_bits, z),
                 EquivalenceQuestion(BITS, bits, broken_bits),
                 EquivalenceQuestion(ARITH, arith, broken_arith, z),
                 EquivalenceQuestion(BITS, *narrow, z),
                 EquivalenceQuestion(BITS, *narrow)]
    answers, _ = check_programs(questions, lean, library)
    assert [type(a).__name__ for a in answers] == ["Complete"] * 3 + ["Rejected"] * 3 + ["Complete", "Rejected"]


def small_bits_programs():
    """Short Bits programs over v0 … v2, so that two of them are often equivalent."""
    operand = st.one_of(st.builds(Operand, st.just(True), st.integers(0, 2)), st.builds(Operand, st.just(False),
                                                                                       st.integers(0, 1)))
    statement = st.sampled_from(sorted(BITS.ops.items())).flatmap(
        lambda op: st.builds(Statement, st.integers(0, 2), st.just(op[0]), st.tuples(*[operand] * op[1])))
    return st.lists(statement, min_size=1, max_size=4).map(tuple)


@settings(max_examples=3)
@given(st.lists(st.tuples(small_bits_programs(), small_bits_programs()), min_size=40, max_size=40))
def test_lean_agrees_with_python_on_equivalence_from_every_start_state(lean, library, pairs):
    every = [tuple((n >> i) & 1 for i in range(VARIABLES)) for n in range(256)]
    answers, _ = check_programs([EquivalenceQuestion(BITS, p, q) for p, q in pairs], lean, library)
    for (p, q), answer in zip(pairs, answers):
        equal = all(run(p, s, 2) == run(q, s, 2) for s in every)
        assert isinstance(answer, Complete if equal else Rejected), ([str(x) for x in p], [str(x) for x in q])


def test_programs_that_differ_from_two_start_states_only_are_not_equivalent(lean, library):
    conjunction = program(BITS, "v0 = v1 and v2", *(f"v0 = v0 and v{i}" for i in range(3, 8)))  # v1 … v7 all 1
    answers, _ = check_programs([EquivalenceQuestion(BITS, conjunction, program(BITS, "v0 = 0"), zero_state()),
                                 EquivalenceQuestion(BITS, conjunction, program(BITS, "v0 = 0"))], lean, library)
    assert isinstance(answers[0], Complete) and isinstance(answers[1], Rejected)


def test_a_certificate_key_names_the_statement_both_libraries_and_the_lean_build(lean, library):
    step = StepQuestion(BITS, parse_statement("v0 = 1", BITS), zero_state(), (1,) + zero_state()[1:])
    same = StepQuestion(BITS, parse_statement("v0 = 1", BITS), zero_state(), (1,) + zero_state()[1:])
    other = StepQuestion(BITS, parse_statement("v0 = 1", BITS), (1,) + zero_state()[1:], (1,) + zero_state()[1:])
    key = step.key(library.library_hash, lean.githash)
    assert key == same.key(library.library_hash, lean.githash) != other.key(library.library_hash, lean.githash)
    assert key != step.key(library.core.hash, lean.githash) and key != step.key(library.library_hash, "0" * 40)
    assert library.library_hash == library_hash(library.core.hash, library.hash)
    assert len({library.library_hash, library.core.hash, library.hash}) == 3
    assert step.kind == "step" and step.text.startswith(": Eq (Bits.exec (Bits.Stmt.set Reg.r0 Bits.Opd.c1) ")


def test_statements_outside_the_machines_are_refused_before_lean():
    s = parse_statement("v1 = v2 and v3", BITS)
    z = zero_state()
    for bad in (StepQuestion(BITS, Statement(8, "set", (Operand(False, 1),)), z, z),
                StepQuestion(BITS, Statement(1, "set", (Operand(False, 2),)), z, z),
                StepQuestion(ARITH, Statement(1, "add", (Operand(False, 16), Operand(True, 0))), z, z),
                StepQuestion(ARITH, s, z, z),  # a Bits operation
                StepQuestion(BITS, s, (0,) * 7, z),
                StepQuestion(BITS, s, (True,) + (0,) * 7, z),
                StepQuestion(BITS, Statement(1, "set", (Operand(True, "0)) (x"),)), z, z),
                TraceQuestion(BITS, z, (s,), ()),
                EquivalenceQuestion(ARITH, (), ())):  # every start state: Bits only
        with pytest.raises(RenderError):
            bad.theorem
    with pytest.raises(RenderError):
        trace_questions(BITS, z, [s], [z], chunk=0)


def test_the_library_ships_with_the_package_and_refuses_admitted_facts():
    shipped = REPO / "leanbridge" / "lean" / "Programs.lean"
    assert shipped.read_bytes() == (REPO / "lake" / "Programs.lean").read_bytes()
    assert 'name = "Programs"' in (REPO / "lake" / "lakefile.toml").read_text()
    audit_source("-- no axiom here\n/- nor sorry -/\ntheorem t : True := True.intro\n")
    for text in ("axiom cheat : False", "theorem t : False := sorry", "theorem t : P := by native_decide"):
        with pytest.raises(ProgramsLibraryError):
            audit_source(text)


def test_a_library_missing_what_certificates_use_fails_its_audit(tmp_path, monkeypatch, lean, core):
    source = tmp_path / "Programs.lean"
    source.write_text("prelude\nimport Core\ntheorem Bits.exec : Eq N.zero N.zero := rfl\n")
    monkeypatch.setenv("EXACT_STATE_PROGRAMS", str(source))
    monkeypatch.setenv("EXACT_STATE_CACHE", str(tmp_path / "cache"))
    with pytest.raises(ProgramsLibraryError, match="auditing the programs library: Unknown constant `Bits.run`"):
        build_programs(lean, core=core)
    source.write_text("prelude\nimport Core\ntheorem t : Eq N.zero (N.succ N.zero) := rfl\n")
    with pytest.raises(ProgramsLibraryError, match="does not compile"):
        build_programs(lean, core=core)
    assert not list((tmp_path / "cache" / "programs").glob("*/Programs.olean"))  # nothing half-built is kept


def test_a_lean_time_out_is_an_exception_not_an_answer(lean, library):
    step = StepQuestion(BITS, parse_statement("v0 = 1", BITS), zero_state(), (1,) + zero_state()[1:])
    with pytest.raises(QuestionFailed):
        check_programs([step, step], lean, library, LeanLimits(timeout_s=0.001))


@pytest.mark.parametrize("values", [2, 16])
def test_a_whole_run_is_certified_in_one_theorem_and_a_wrong_end_rejected(lean, library, values):
    machine = Machine(values)
    p = random_program(random.Random(values), machine, 60)
    end = run(p, zero_state(), values)
    wrong = tuple((v + 1) % values if i == 5 else v for i, v in enumerate(end))
    answers, _ = check_programs([RunQuestion(machine, zero_state(), p, end),
                                 RunQuestion(machine, zero_state(), p, wrong)], lean, library)
    assert isinstance(answers[0], Complete) and isinstance(answers[1], Rejected)
