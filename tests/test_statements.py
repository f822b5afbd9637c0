"""Statements given as text (leanbridge.statements), certified by the real Lean under either
checker: a true step or equation is complete, a false one rejected with its class, text outside
the grammar refused in one line before any Lean process or file exists, and on random statements
of the grammar Lean agrees with the domain's rules and nothing raises."""
from __future__ import annotations

import subprocess
import tempfile

import pytest
from hypothesis import given, settings, strategies as st

import leanbridge
from chains.rewrite.rules import RULES, Event, apply
from chains.rewrite.trees import polish
from leanbridge.checker import Checker
from leanbridge.statements import StatementTextError, certify_text
from leanbridge.verdicts import Complete, Rejected
from tests.strategies import any_trees, tier1_trees

START = "* + a b * c d"  # (a + b) * (c * d)


@pytest.mark.parametrize("checker", list(Checker))
def test_a_true_step_and_equation_are_certified(lean, core, checker):
    assert certify_text(START, "* * c d + a b", "mul_comm@", checker=checker, lean=lean, core=core) == Complete()
    assert certify_text(START, "* + b a * c d", "add_comm@0", checker=checker, lean=lean, core=core) == Complete()
    assert certify_text(START, START, checker=checker, lean=lean, core=core) == Complete()


@pytest.mark.parametrize("checker", list(Checker))
@pytest.mark.parametrize("left, right, event", [
    (START, "* * c d + b a", "mul_comm@"),       # the event applies, the claimed result is another tree
    (START, "* * c d + a b", "add_comm@"),       # the root is a product: add_comm has no left side there
    (START, "* * c d + a b", "mul_comm@0101"),   # a position outside the tree
    (START, "* + b a * c d", None),              # an equation between two trees: not rfl
    ("+ a b", "+ b c", "add_comm@"),             # an atom on the right the left side lacks
])
def test_a_false_statement_is_rejected_with_its_class(lean, core, checker, left, right, event):
    answer = certify_text(left, right, event, checker=checker, lean=lean, core=core)
    assert isinstance(answer, Rejected), answer
    assert answer.error_class and answer.error_class != "other" and "\n" not in answer.message


def test_the_package_exports_it():
    assert leanbridge.certify_text is certify_text and leanbridge.StatementTextError is StatementTextError


MALFORMED = [
    (("* + a b * c e", START, None), "token 'e' is not an operator or an atom of abcd"),
    (("* + a b", START, None), "tree ends early"),
    ((START, "+ a b c", None), "extra token"),
    ((START, "* + a  b * c d", None), "token ''"),
    ((START, START, "add_comm"), "not of the form rule@position"),
    ((START, START, "add_com@0"), "names no known rule"),
    ((START, START, "add_comm@2"), "position other than 0s and 1s"),
    ((START, 7, None), "must be a string"),
    ((START, START, "mul_comm@"), "atoms must be between 2 and 6"),
]


@pytest.mark.parametrize("args, reason", MALFORMED)
def test_text_outside_the_grammar_is_refused_before_lean(args, reason, monkeypatch, tmp_path):
    def no_process(*a, **k):
        raise AssertionError("a process was started for text outside the grammar")

    monkeypatch.setattr(subprocess, "Popen", no_process)  # every Lean, kcheck and gcc start goes through it
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))  # where a Lean file would be written
    atoms = 9 if reason.startswith("atoms") else 4
    with pytest.raises(StatementTextError, match=reason) as refused:
        certify_text(*args, atoms=atoms)
    assert isinstance(refused.value, ValueError) and "\n" not in str(refused.value)
    assert list(tmp_path.iterdir()) == []


def test_the_atoms_may_be_named(lean, core):
    assert certify_text("+ a c", "+ c a", "add_comm@", atoms="ac", lean=lean, core=core) == Complete()
    with pytest.raises(StatementTextError, match="token 'b'"):
        certify_text("+ a b", "+ b a", "add_comm@", atoms="ac", lean=lean, core=core)
    with pytest.raises(StatementTextError, match="not distinct names"):
        certify_text("+ a b", "+ b a", "add_comm@", atoms="aab", lean=lean, core=core)


def paths(max_depth: int = 3):
    return st.text(alphabet="01", max_size=max_depth)


@st.composite
def statements(draw):
    """(left, right, event or None) over four atoms: a step whose claimed result is the event's
    own half the time, else another tree; or an equation of a tree with itself or another."""
    trees = st.one_of(tier1_trees(4), any_trees("abcd", max_leaves=6))
    left = draw(trees)
    if draw(st.booleans()):
        return left, draw(st.sampled_from([left, draw(trees)])), None
    event = Event(draw(st.sampled_from(sorted(RULES))), draw(paths()))
    result = apply(left, event)
    right = result if result is not None and draw(st.booleans()) else draw(trees)
    return left, right, event


@settings(max_examples=25)
@given(statements(), st.sampled_from(list(Checker)))
def test_lean_agrees_with_the_rules_on_random_statements(lean, core, statement, checker):
    left, right, event = statement
    answer = certify_text(polish(left), polish(right), None if event is None else str(event), checker=checker,
                          lean=lean, core=core)
    true = left == right if event is None else apply(left, event) == right
    assert answer == Complete() if true else isinstance(answer, Rejected), (statement, checker, answer)
