"""The Lean bridge against the real Lean binary: discovery, the core audit, positive
confirmation, rejection, time-outs and the store."""
import stat

import pytest

from chains.rewrite.rules import successors, tier_rules
from chains.rewrite.trees import all_trees, parse_polish
from leanbridge.asker import AskConfig, Asker
from leanbridge.batch import QuestionFailed
from leanbridge.corelib import audit_source
from leanbridge.discovery import LEAN_ENV, LEAN_GITHASH, LEAN_VERSION, find_lean
from leanbridge.errors import CoreLibraryError, LeanNotFoundError
from leanbridge.questions import Certify
from leanbridge.render import Statement, equivalence_statement, step_statement
from leanbridge.runner import LeanLimits
from leanbridge.store import CertificateStore

ATOMS = "abcd"


def check(lean, core, statements, **kwargs):
    return Asker(lean, core, ATOMS, AskConfig(jobs=2, **kwargs)).ask([Certify(st) for st in statements])


def _walk_successors():
    """(tree, its successors) for every tree of the four-atom domain, each once."""
    for tree in all_trees(ATOMS):
        yield tree, successors(tree, tier_rules(1))


def good_steps(n):
    out = []
    for tree, steps in _walk_successors():
        out += [step_statement(tree, event, ATOMS) for event, _ in steps]
        if len(out) >= n:
            return out[:n]


def bad_steps(n):
    """Mis-stated steps: one event's proof under another event's equation."""
    out = []
    for tree, steps in _walk_successors():
        statements = [step_statement(tree, event, ATOMS) for event, _ in steps]
        for first, second in zip(statements, statements[1:] + statements[:1]):
            out.append(Statement("step", second.text.split(" := ")[0] + " := " + first.text.split(" := ")[1]))
        if len(out) >= n:
            return out[:n]


def test_bundled_lean_is_the_pinned_build(lean):
    assert lean.version == LEAN_VERSION
    assert lean.githash == LEAN_GITHASH


def test_lean_named_by_the_environment_must_exist(monkeypatch, tmp_path):
    monkeypatch.setenv(LEAN_ENV, str(tmp_path / "missing"))
    with pytest.raises(LeanNotFoundError, match="not a file"):
        find_lean()


def test_lean_of_another_version_is_refused(monkeypatch, tmp_path):
    fake = tmp_path / "lean"
    fake.write_text("#!/bin/sh\necho 'Lean (version 4.9.0, x86_64, commit 0000, Release)'\necho 0000\n")
    fake.chmod(fake.stat().st_mode | stat.S_IEXEC)
    monkeypatch.setenv(LEAN_ENV, str(fake))
    with pytest.raises(LeanNotFoundError, match="needs Lean 4.35.0"):
        find_lean()


@pytest.mark.parametrize("text", ["theorem x : Eq a a := sorry", "axiom bad : False",
                                  "unsafe axiom lcFoo : Prop", "  axiom N.add_comm' : True"])
def test_core_audit_refuses_admitted_facts(text):
    with pytest.raises(CoreLibraryError):
        audit_source("prelude\n" + text + "\n")


def test_core_audit_accepts_the_compiler_axioms_and_comments():
    audit_source("prelude\n/- no sorry here -/\n-- nor axiom here\nunsafe axiom lcAny : Type\n")


def test_correct_steps_and_equivalences_are_certified(lean, core):
    statements = good_steps(30) + [equivalence_statement(parse_polish("* a b", "ab"), parse_polish("* a b", "ab"), "ab")]
    verdicts = check(lean, core, statements)
    assert all(v.complete for v in verdicts), [v for v in verdicts if not v.complete]


def test_every_rule_of_both_tiers_is_certified(lean, core):
    statements, rules = [], set()
    for source in ("+ * a + b c * + c d a", "+ * a b * a c", "+ * a c * b c", "+ a + b c", "+ + a b c",
                   "* a * b c", "* * a b c"):
        tree = parse_polish(source, ATOMS)
        for event, _ in successors(tree, tier_rules(2)):
            rules.add(event.rule)
            statements.append(step_statement(tree, event, ATOMS))
    assert rules == set(tier_rules(2))
    assert all(v.complete for v in check(lean, core, statements))


def test_misstated_steps_and_false_equivalences_are_rejected(lean, core):
    a_plus_b = parse_polish("+ a b", "ab")
    statements = [bad_steps(1)[0], equivalence_statement(a_plus_b, parse_polish("+ b a", "ab"), "ab")]
    verdicts = check(lean, core, statements)
    assert [v.accepted for v in verdicts] == [False, False]
    assert [v.error_class for v in verdicts] == ["type_mismatch", "type_mismatch"]


def test_many_errors_in_one_file_never_certify_a_bad_step(lean, core):
    # Lean stops reporting errors after about a hundred in a file; silence is not acceptance
    bad, good = bad_steps(150), good_steps(150)
    mixed = [x for pair in zip(bad, good) for x in pair]
    verdicts = check(lean, core, mixed, batch_size=1000)
    for statement, verdict in zip(mixed, verdicts):
        assert verdict.complete == (statement in good), statement.text


def test_a_lean_time_out_is_an_exception_not_an_answer(lean, core):
    with pytest.raises(QuestionFailed, match="ran past"):
        check(lean, core, good_steps(3), limits=LeanLimits(timeout_s=0.001))


def test_a_lean_that_cannot_start_is_an_exception_not_an_answer(lean, core):
    with pytest.raises(QuestionFailed, match="died"):
        check(lean, core, good_steps(2), limits=LeanLimits(memory_mb=300))


def test_store_answers_only_for_its_own_lean_and_core(tmp_path, lean, core):
    statement = good_steps(1)[0]
    [verdict] = check(lean, core, [statement])
    key = statement.key(core.hash, lean.githash)
    with CertificateStore(tmp_path / "s.sqlite", core.hash, lean.githash) as store:
        store.record([(key, statement.kind, statement.text, verdict, 0.1)])
        store.record([(key, statement.kind, statement.text, verdict, 0.1)])  # idempotent: one row
        assert store.certified([key, "0" * 64]) == {key}
        assert store.count() == {"certified": 1}
    with CertificateStore(tmp_path / "s.sqlite", core.hash, "another-build") as other:
        assert other.certified([key]) == set()
    with CertificateStore(tmp_path / "s.sqlite", "another-core", lean.githash) as other:
        assert other.certified([key]) == set()
