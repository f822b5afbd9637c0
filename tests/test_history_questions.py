"""How a rejected question of a dataset of histories is named: its first use, what it claims in
the domain's words (worked out once, for a question not yet gathered), and Lean's reason."""
from __future__ import annotations

from dial_domain import Dial

from leanbridge.domain_lean import DomainQuestion, step_statement
from leanbridge.history_questions import Questions, cut, step_claim
from leanbridge.verdicts import Rejected


def test_a_rejection_names_the_first_use_and_the_claim_worked_out_once():
    questions, said = Questions("library", "githash"), []

    def claim():
        said.append(1)
        return step_claim("turn", "0", "2")

    question = DomainQuestion(step_statement(Dial(), 0, "turn", 2))
    key = questions.add(question, "train.jsonl chain train-00000 step 6 (from 0)", claim)
    assert questions.add(question, "train.jsonl chain train-00001 step 0 (from 0)", claim) == key
    assert len(said) == 1  # the second use neither recomputes the claim nor replaces the first place
    message = questions.rejected(key, Rejected("type_mismatch", "Type mismatch"))
    assert message == ("train.jsonl chain train-00000 step 6 (from 0): Lean rejected event 'turn' from state '0' "
                       "to the claimed state '2' (type_mismatch: Type mismatch)")
    other = questions.add(DomainQuestion(step_statement(Dial(), 1, "turn", 2)), "test-8.jsonl chain test-8-00000")
    assert questions.rejected(other, Rejected("x", "y")).endswith(": Lean rejected the statement (x: y)")


def test_long_texts_are_cut_in_the_middle_and_whitespace_collapsed():
    assert cut("a  b\nc") == "'a b c'"
    long = cut("x" * 100 + "END", limit=21)
    assert long == "'" + "x" * 10 + "…" + "xxxxxxxEND" + "'" and len(long) == 23
