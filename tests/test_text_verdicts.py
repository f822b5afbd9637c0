"""One verdict from the real Lean binary on a claim about any domain's histories, given as text
(``leanbridge.text_verdicts``): true claims certified, false ones rejected by Lean (never by the
domain's Python rules), bad text refused in one line before any Lean process or file exists."""
from __future__ import annotations

import subprocess
import tempfile

import pytest

import leanbridge
import leanbridge.text_verdicts as text_verdicts
from chains.domains import resolve
from leanbridge import StatementTextError, certify_equivalence_text, certify_history_text
from leanbridge.checker import Checker
from leanbridge.verdicts import Complete, Rejected

ZERO = "00000000"

# (domain spec, params, start, events, end, true?): each claim's verdict is Lean's
HISTORIES = [
    ("programs", {}, ZERO, ["v3 = 1", "v2 = not v3"], "00010000", True),
    ("programs", {}, ZERO, ["v3 = 1", "v2 = not v3"], "00110000", False),
    ("programs", {}, "01000000", [], "01000000", True),
    ("programs", {}, ZERO, ["v1 = 1", "v4 = v1 xor v1"], "01000000", True),
    ("programs", {"values": 16}, ZERO, ["v3 = 7", "v2 = v3 + v3"], "00e70000", True),
    ("programs", {"values": 16}, ZERO, ["v3 = 7", "v2 = v3 * v3"], "00e70000", False),
    ("programs", {"values": 16}, ZERO, ["v1 = 3", "v0 = if v1 < 5 then v1 else 9"], "33000000", True),
    ("groups", {}, "01234", ["s0", "s0"], "01234", True),
    ("groups", {}, "01234", ["s0"], "01234", False),
    ("groups", {"group": "A5"}, "01234", ["c0", "c0", "c0"], "01234", True),
    ("dial_domain:Dial", {}, "0", ["turn", "half"], "4", True),
    ("dial_domain:Dial", {}, "0", ["turn"], "2", False),
    ("rewrite", {}, "* + a b * c d", ["mul_comm@", "add_comm@1"], "* * c d + b a", True),
    ("rewrite", {}, "* + a b * c d", ["mul_comm@", "add_comm@1"], "* * c d + a b", False),
    ("rewrite", {}, "* + a b * c d", ["mul_comm@"], "* * c d + a b", True),
    ("rewrite", {}, "* + a b * c d", ["add_comm@1"], "* + b a * c d", False),  # the rule finds no + there
    ("rewrite", {}, "+ a b", [], "+ a b", True),
    ("rewrite", {}, "+ a b", [], "+ b a", False),
]

# (domain spec, params, left, right, true?)
EQUIVALENCES = [
    ("programs", {}, (ZERO, ["v3 = 1"]), (ZERO, ["v3 = 0", "v3 = not v3"]), True),
    ("programs", {}, (ZERO, ["v3 = 1"]), (ZERO, ["v2 = 1"]), False),
    ("programs", {}, (ZERO, ["v3 = 1"]), ("00010000", []), True),  # two start states
    ("programs", {"values": 16}, (ZERO, ["v1 = 2", "v2 = v1 * v1"]), (ZERO, ["v2 = 4", "v1 = 2"]), True),
    ("programs", {"values": 16}, (ZERO, ["v1 = 2", "v2 = v1 * v1"]), (ZERO, ["v1 = 2", "v2 = v1 + 1"]), False),
    ("groups", {}, ("01234", ["s0", "s1", "s0"]), ("01234", ["s1", "s0", "s1"]), True),  # the braid relation
    ("groups", {}, ("01234", ["s0", "s1"]), ("01234", ["s1", "s0"]), False),
    ("groups", {"group": "S3xS3"}, ("012345", ["s0", "t0"]), ("012345", ["t0", "s0"]), True),
    ("dial_domain:Dial", {}, ("1", ["turn", "back"]), ("4", ["half"]), True),
    ("dial_domain:Dial", {}, ("1", ["turn"]), ("1", ["back"]), False),
    ("rewrite", {}, ("* + a b * c d", ["mul_comm@", "add_comm@1"]), ("* * c d + b a", []), True),
    ("rewrite", {}, ("* + a b * c d", ["mul_comm@"]), ("* + b a * c d", ["add_comm@0", "mul_comm@"]), True),
    ("rewrite", {}, ("* + a b * c d", ["mul_comm@"]), ("* + b a * c d", ["mul_comm@"]), False),
    ("rewrite", {}, ("+ a b", ["add_comm@"]), ("+ a b", ["mul_comm@"]), False),  # the right one does not apply
]


def _ids(cases):
    return [f"{c[0]}-{i}-{'true' if c[-1] else 'false'}" for i, c in enumerate(cases)]


@pytest.mark.parametrize("spec, params, start, events, end, true", HISTORIES, ids=_ids(HISTORIES))
def test_a_history_claim_gets_lean_verdict(spec, params, start, events, end, true, lean, core):
    answer = certify_history_text(spec, start, events, end, params=params, lean=lean, core=core)
    assert isinstance(answer, Complete if true else Rejected), answer


@pytest.mark.parametrize("spec, params, left, right, true", EQUIVALENCES, ids=_ids(EQUIVALENCES))
def test_an_equivalence_claim_gets_lean_verdict(spec, params, left, right, true, lean, core):
    answer = certify_equivalence_text(spec, left, right, params=params, lean=lean, core=core)
    assert isinstance(answer, Complete if true else Rejected), answer


def test_a_domain_value_and_the_kernel_checker(lean, core):
    """A domain given as a value goes by its capabilities' route; the rewrite route takes the checker."""
    bits, s5 = resolve("programs"), resolve("groups", group="S5")
    assert certify_history_text(bits, ZERO, ["v0 = 1"], "10000000", lean=lean, core=core) == Complete()
    assert certify_equivalence_text(s5, ("01234", ["s3", "s3"]), ("01234", []), lean=lean, core=core) == Complete()
    for checker in Checker:
        step = certify_history_text("rewrite", "+ a b", ["add_comm@"], "+ b a", checker=checker, lean=lean, core=core)
        wrong = certify_history_text("rewrite", "+ a b", ["add_comm@"], "+ a b", checker=checker, lean=lean, core=core)
        assert isinstance(step, Complete) and isinstance(wrong, Rejected)


def test_the_python_rules_are_not_consulted(lean, core, monkeypatch):
    """A domain whose Python rules lie changes nothing: the statement is the caller's claim and Lean decides."""
    dial = resolve("dial_domain:Dial")
    monkeypatch.setattr(type(dial), "apply", lambda self, state, event: state)  # every move a no-op, in Python
    assert isinstance(certify_history_text(dial, "0", ["turn"], "0", lean=lean, core=core), Rejected)
    assert certify_history_text(dial, "0", ["turn"], "1", lean=lean, core=core) == Complete()


MALFORMED = [
    (lambda: certify_history_text("programs", "0000000", ["v3 = 1"], "00010000"),
     "the start state of the history '0000000'"),
    (lambda: certify_history_text("programs", ZERO, ["v3 = 1", "v9 = 1"], "00010000"), "event 2 of the history"),
    (lambda: certify_history_text("programs", ZERO, ["v3 = 1"], "0001000x"), "the end state '0001000x'"),
    (lambda: certify_history_text("programs", ZERO, ["v3 = 1 + 1"], "00010000"), "event 1 of the history"),
    (lambda: certify_equivalence_text("programs", (ZERO, ["v3 = 1"]), (ZERO, ["v3 == 1"])),
     "event 1 of the right history"),
    (lambda: certify_equivalence_text("programs", ("0", []), (ZERO, [])), "the start state of the left history"),
    (lambda: certify_history_text("groups", "01234", ["s7"], "01234"), "'s7' is not an event of S5"),
    (lambda: certify_history_text("groups", "01234", [], "11234"), "the end state"),
    (lambda: certify_history_text("dial_domain:Dial", "6", ["turn"], "1"), "not a position"),
    (lambda: certify_history_text("rewrite", "* + a b * c e", ["mul_comm@"], "* * c d + a b"), "token 'e'"),
    (lambda: certify_history_text("rewrite", "+ a b", ["add_comm@", "add_com@"], "+ a b"), "event 2 of the history"),
    (lambda: certify_history_text("rewrite", "+ a b", ["distrib_left@"], "+ a b"), "not a rule of the tier-1"),
]


@pytest.mark.parametrize("call, reason", MALFORMED, ids=[r for _, r in MALFORMED])
def test_bad_text_is_refused_in_one_line_before_lean(call, reason, monkeypatch, tmp_path):
    def no_lean(*a, **k):
        raise AssertionError("Lean was looked for on text the domain refuses")

    def no_process(*a, **k):
        raise AssertionError("a process was started on text the domain refuses")

    monkeypatch.setattr(text_verdicts, "find_lean", no_lean)
    monkeypatch.setattr(subprocess, "Popen", no_process)  # every Lean, kcheck and gcc start goes through it
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))  # where a Lean file would be written
    with pytest.raises(StatementTextError, match=reason) as refused:
        call()
    assert isinstance(refused.value, ValueError) and "\n" not in str(refused.value)
    assert list(tmp_path.iterdir()) == []


def test_misused_calls_are_refused_in_one_line():
    with pytest.raises(TypeError, match="give a list of events"):
        certify_history_text("programs", ZERO, "v3 = 1", "00010000")
    with pytest.raises(TypeError, match="not a \\(start, events\\) pair"):
        certify_equivalence_text("programs", ZERO, (ZERO, []))
    with pytest.raises(TypeError, match="params go with a domain named by its spec"):
        certify_history_text(resolve("programs"), ZERO, [], ZERO, params={"values": 16})
    with pytest.raises(ValueError, match="neither a shipped domain"):
        certify_history_text("no-such-domain", ZERO, [], ZERO)


def test_exported_beside_certify_text():
    assert leanbridge.certify_history_text is certify_history_text
    assert leanbridge.certify_equivalence_text is certify_equivalence_text
    assert {"certify_text", "certify_history_text", "certify_equivalence_text"} <= set(leanbridge.__all__)
