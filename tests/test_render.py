"""The renderer emits only the grammar, and refuses anything outside it before writing."""
import re

import pytest
from hypothesis import given, strategies as st

from chains.rewrite.rules import RULES, Event, successors, tier_rules
from chains.rewrite.trees import polish
from leanbridge.errors import RenderError
from leanbridge.questions import Certify, PathClaim, Probe, render
from leanbridge.render import GRAMMAR_TOKEN, equivalence_statement, step_statement
from tests.strategies import any_trees

any_events = st.builds(Event, st.sampled_from(sorted(RULES)), st.text("01", max_size=6))


def only_grammar(text: str) -> bool:
    """True when ``text`` splits into grammar tokens and single spaces, nothing else."""
    pos = 0
    while pos < len(text):
        if text[pos] == " ":
            pos += 1
            continue
        match = GRAMMAR_TOKEN.match(text, pos)
        if not match or match.end() == pos:
            return False
        end = match.end()
        if end < len(text) and (text[end - 1].isalnum() or text[end - 1] == "_") and (text[end].isalnum() or text[end] in "_."):
            return False  # a token glued to a longer identifier
        pos = end
    return True


@given(any_trees(), any_trees())
def test_rendering_emits_only_the_grammar(tree, other):
    statements = [step_statement(tree, event, "abcd") for event, _ in successors(tree, tier_rules(2))]
    statements.append(equivalence_statement(tree, other, "abcd"))
    for statement in statements:
        block = render(Certify(statement), "q17", "abcd")
        occurring = sorted(set(polish(tree).split() + (polish(other).split() if statement.kind == "equivalence" else [])) - {"+", "*"})
        assert block.lines[0].startswith(f"theorem q17 ({' '.join(occurring)} : N) : Eq ")
        assert block.lines[1] == "#print axioms q17"
        assert only_grammar(block.lines[0]), block.lines[0]
        assert "\n" not in statement.text


@given(any_trees(), any_trees(), st.lists(any_events, max_size=4))
def test_probes_and_claims_emit_only_the_grammar(tree, other, events):
    """Any event, applicable or not, inside the tree or not, renders to grammar alone: the
    probe leaves the verdict to Lean."""
    for event in events:
        block = render(Probe(tree, event), "q3", "abcd")
        assert [line.split(" ")[0] for line in block.lines] == ["noncomputable", "#check", "#print"]
        assert all(only_grammar(line) for line in block.lines), block.lines
    claim = PathClaim(tree, other, tuple((tree, event) for event in events))
    assert all(only_grammar(line) for line in render(claim, "q12", "abcd").lines)


def test_the_grammar_check_itself_rejects_foreign_text():
    assert only_grammar("theorem q0 : ∀ (a : N), Eq a a := fun _ => rfl")
    for bad in ("#exit", "axiom", "a\nb", "sorry", "aa", "N.foo", "Eq.mp", "by rfl", "q0x", "#eval"):
        assert not only_grammar(bad), bad


@pytest.mark.parametrize("leaf", ["#exit", "axiom", "(", "a\nb", "aa", "g", "", "sorry"])
def test_leaves_outside_the_grammar_never_reach_lean(leaf):
    with pytest.raises(RenderError):
        equivalence_statement(("+", "a", leaf), "a", "abcd")
    with pytest.raises(RenderError):
        step_statement(("+", "a", leaf), Event("add_comm", ""), "abcd")


def test_bad_atom_names_and_operators_are_refused():
    with pytest.raises(RenderError):
        equivalence_statement("a", "a", ["a", "#exit"])
    with pytest.raises(RenderError):
        equivalence_statement(("-", "a", "b"), "a", "abcd")


def test_an_event_that_does_not_apply_is_not_rendered():
    with pytest.raises(RenderError):
        step_statement(("+", "a", "b"), Event("mul_comm", ""), "ab")


def test_statement_keys_depend_on_lean_and_core():
    st_ = equivalence_statement("a", "a", "ab")
    assert len({st_.key("core1", "lean1"), st_.key("core2", "lean1"), st_.key("core1", "lean2")}) == 3
    assert re.fullmatch("[0-9a-f]{64}", st_.key("c", "l"))
