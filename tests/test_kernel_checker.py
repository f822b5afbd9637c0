"""The kernel route (certify --checker kernel) against the real kcheck binary and the real Lean:
correct steps and equivalences certified, wrong ones rejected, a core library with an axiom
refused, the same datasets as the elaborator route, and the same verdicts on random statements."""
import hashlib
import json
import random
import shutil
import subprocess
from pathlib import Path
from unittest import mock

import pytest
from click.testing import CliRunner
from hypothesis import given, settings, strategies as st

from chains.rewrite.rules import Event, apply, redex, successors, tier_rules
from chains.rewrite.trees import ADD, MUL, all_trees, atom_names, random_tree
from leanbridge import kernel, kernelterms
from leanbridge.batch import answer_batch
from leanbridge.checker import Checker, KernelCheckerError
from leanbridge.cli import main as certify
from leanbridge.corelib import CORE_MODULE, CoreLibrary, core_source
from leanbridge.errors import RenderError
from leanbridge.kernel import read_answer, run_kcheck
from leanbridge.kernelterms import KERNEL_TOKEN, KernelStatement, kernel_statement, kernel_type_text
from leanbridge.questions import Certify, Probe, parse_kernel_type
from leanbridge.render import equivalence_statement, step_statement
from leanbridge.runner import LeanLimits
from leanbridge.verdicts import Complete, Rejected
from tests.strategies import any_trees, tier1_trees

LIMITS = LeanLimits(timeout_s=120)


def ask(lean, core, atoms, questions, checker=Checker.KERNEL):
    """Answers to ``questions`` (in order) from one batch of ``checker``."""
    result = answer_batch(lean, core, atoms, LIMITS, list(enumerate(questions)), checker=checker)
    answers = dict(result.answers)
    return [answers[i] for i in range(len(questions))]


def steps_of(trees, atoms, rules, max_size=None):
    return [Certify(step_statement(tree, event, atoms)) for tree in trees
            for event, _ in successors(tree, rules, max_size)]


def tier2_trees(rng, atoms, count):
    """Trees with a product over a sum (or a sum of products) somewhere: distributivity and
    factoring apply, at several sizes."""
    out = []
    while len(out) < count:
        a, b, c = (random_tree(rng, rng.sample(atoms, rng.randint(1, 2))) for _ in range(3))
        shape = rng.choice([(MUL, a, (ADD, b, c)), (MUL, (ADD, a, b), c), (ADD, (MUL, a, b), (MUL, a, c)),
                            (ADD, (MUL, a, c), (MUL, b, c))])
        out.append(shape if rng.random() < 0.5 else (ADD, shape, rng.choice(atoms)))
    return out


# -- the emitter ---------------------------------------------------------------------------------

@settings(max_examples=200)
@given(tree=st.one_of(tier1_trees(4), tier1_trees(5), any_trees("abcde", 10)), data=st.data())
def test_a_kernel_line_holds_only_the_grammars_tokens(tree, data):
    atoms = atom_names(5)
    events = [event for event, _ in successors(tree, tier_rules(2))]
    if events:
        question = Certify(step_statement(tree, data.draw(st.sampled_from(events)), atoms))
    else:
        question = Certify(equivalence_statement(tree, tree, atoms))
    line = kernel_statement(question, f"q{data.draw(st.integers(0, 10**6))}", atoms).line
    assert KERNEL_TOKEN.sub("", line).strip(" ") == ""
    assert line.count("(") == line.count(")")


def kernel_lines_digest() -> tuple[int, str]:
    """sha256 over the kernel lines of every tier-2 step and self-equivalence of every tree on
    three and four atoms."""
    digest, n = hashlib.sha256(), 0
    for k in (3, 4):
        atoms = atom_names(k)
        for tree in all_trees(atoms):
            questions = [Certify(step_statement(tree, event, atoms)) for event, _ in successors(tree, tier_rules(2), 15)]
            questions.append(Certify(equivalence_statement(tree, tree, atoms)))
            for question in questions:
                digest.update(kernel_statement(question, f"q{n}", atoms).line.encode() + b"\n")
                n += 1
    return n, digest.hexdigest()


def test_kernel_lines_keep_their_bytes():
    # as the kernel route first wrote them (commit def329a), before its terms were cached per subtree
    assert kernel_lines_digest() == (5460, "e7f97820c666c6eef1330ef326715850ad3c9224d20db4ea1a8844f690895cfb")


@settings(max_examples=300)
@given(lhs=any_trees("abcde", 12), rhs=any_trees("abcde", 12), data=st.data())
def test_the_printed_type_is_what_the_parser_reads_as_the_question(lhs, rhs, data):
    # read_answer certifies a rendering equal to kernel_type_text without parsing it: that text
    # must read back as exactly the statement's binders and trees, and anything else is parsed
    atoms = atom_names(5)
    statement = kernel_statement(Certify(equivalence_statement(lhs, rhs, atoms)), "q1", atoms)
    text = kernel_type_text(statement, atoms)
    assert parse_kernel_type(text, atoms) == (list(statement.binders), lhs, rhs)
    assert read_answer(statement, f"q1 ok {text}", atoms) == Complete()
    assert read_answer(statement, f"q1 ok {text.replace(' ', '  ')}", atoms) == Complete()  # parsed: same trees
    other = data.draw(any_trees("abcde", 12))
    if other != rhs:
        wrong = kernel_type_text(KernelStatement("", statement.binders, lhs, other), atoms)
        assert read_answer(statement, f"q1 ok {wrong}", atoms).error_class == "type_readback"
    assert kernel_type_text(statement, atoms[:1]) is None or set(statement.binders) <= {"a"}


@pytest.mark.parametrize("bad", [("+", "a", "z"), ("-", "a", "b"), ("+", "a"), 7, "ab", ("+", "a", ["b"])])
def test_anything_not_a_tree_is_a_render_error(bad):
    atoms = atom_names(4)
    statement = equivalence_statement("a", "a", atoms)
    with pytest.raises(RenderError):
        kernel_statement(Certify(type(statement)("equivalence", "x", (bad, bad))), "q0", atoms)
    with pytest.raises(RenderError):
        kernel_statement(Certify(type(statement)("step", "x", (bad, Event("add_comm", "")))), "q0", atoms)


def test_events_names_and_questions_outside_the_grammar_are_render_errors():
    atoms = atom_names(4)
    tree = (ADD, "a", "b")
    make = type(equivalence_statement("a", "a", atoms))
    for event in (Event("no_such_rule", ""), Event("add_comm", "2"), Event("mul_comm", ""), "add_comm@"):
        with pytest.raises(RenderError):
            kernel_statement(Certify(make("step", "x", (tree, event))), "q0", atoms)
    with pytest.raises(RenderError):
        kernel_statement(Certify(make("step", "x")), "q0", atoms)  # no trees to build it from
    with pytest.raises(RenderError):
        kernel_statement(Certify(equivalence_statement(tree, tree, atoms)), "q0 N", atoms)
    with pytest.raises(RenderError):
        kernel_statement(Probe(tree, Event("add_comm", "")), "q0", atoms)


# -- verdicts --------------------------------------------------------------------------------------

def test_correct_steps_and_equivalences_are_certified(lean, core):
    rng = random.Random(0)
    questions = []
    for k in (4, 5):
        atoms = atom_names(k)
        trees = rng.sample(list(all_trees(atoms)), 12)
        questions.append((atoms, steps_of(trees, atoms, tier_rules(1))
                          + [Certify(equivalence_statement(t, t, atoms)) for t in trees]))
    atoms = atom_names(4)
    trees = tier2_trees(rng, atoms, 40)
    tier2 = steps_of(trees, atoms, tier_rules(2))
    assert {q.statement.source[1].rule for q in tier2} >= {"distrib_left", "distrib_right", "factor_left",
                                                           "factor_right"}
    questions.append((atoms, tier2))
    for atoms, batch in questions:
        assert ask(lean, core, atoms, batch) == [Complete()] * len(batch)


def _first_step(atoms, rule, at_root):
    for tree in all_trees(atoms):
        for event, _ in successors(tree, tier_rules(1)):
            if event.rule == rule and (event.path == "") == at_root:
                return tree, event
    raise AssertionError(rule)


# (rule, at the root?) of the steps tampered with: a reversed lemma under a context, a root
# rewrite, an associativity under a context
TAMPERED = [("add_assoc_rev", False), ("add_comm", True), ("mul_assoc", False)]
OTHER_LEMMA = {"N.add_comm": "N.mul_comm", "N.mul_comm": "N.add_comm", "N.add_assoc": "N.mul_assoc",
               "N.mul_assoc": "N.add_assoc"}


@pytest.mark.parametrize("rule,at_root", TAMPERED)
def test_wrong_statements_are_rejected(lean, core, rule, at_root):
    atoms = atom_names(4)
    tree, event = _first_step(atoms, rule, at_root)
    question = Certify(step_statement(tree, event, atoms))
    other = next(t for t in all_trees(atoms) if t != apply(tree, event))
    lemma, reverse = kernelterms.LEMMAS[rule]
    wrong = {}
    with mock.patch.object(kernelterms, "apply", lambda t, e: other):  # the statement claims another tree
        wrong["rhs"] = kernel_statement(question, "q0", atoms)
    with mock.patch.dict(kernelterms.LEMMAS, {rule: (OTHER_LEMMA[lemma], reverse)}):
        wrong["lemma"] = kernel_statement(question, "q1", atoms)
    with mock.patch.object(kernelterms, "redex", _swapped):
        wrong["args"] = kernel_statement(question, "q2", atoms)
    right = kernel_statement(question, "q3", atoms)
    said = run_kcheck(kernel.prepare(lean, core, LIMITS), core, [s.line for s in (*wrong.values(), right)], LIMITS,
                      lean.githash)
    verdicts = [read_answer(s, line, atoms) for s, line in zip((*wrong.values(), right), said)]
    assert verdicts[-1] == Complete()
    for verdict in verdicts[:-1]:
        assert isinstance(verdict, Rejected)
        assert verdict.error_class in ("declTypeMismatch", "appTypeMismatch"), verdict
    # the kernel accepted ``right``: a question about other trees does not read back from its type
    mislabelled = kernelterms.KernelStatement(right.line, right.binders, right.rhs, right.lhs)
    assert read_answer(mislabelled, said[-1], atoms).error_class == "type_readback"


def _swapped(tree, event):
    """The lemma's arguments in the wrong order (the first two exchanged)."""
    bindings = list(redex(tree, event))
    bindings[0], bindings[1] = bindings[1], bindings[0]
    return tuple(bindings)


def test_probes_still_go_to_the_elaborator_with_the_kernel_checker(lean, core):
    atoms = atom_names(3)
    tree = (ADD, "a", (MUL, "b", "c"))
    answers = ask(lean, core, atoms, [Probe(tree, Event("add_comm", "")), Certify(equivalence_statement(tree, tree, atoms)),
                                      Probe(tree, Event("mul_comm", ""))])
    assert answers[0].accepted and answers[0].tree == (ADD, (MUL, "b", "c"), "a")
    assert answers[1] == Complete()
    assert isinstance(answers[2], Rejected) and answers[2].error_class == "operator"


BAD_CORE_LEMMA = """theorem N.add_comm (n m : N) : Eq (N.add n m) (N.add m n) :="""


def test_a_core_library_with_an_axiom_is_refused(lean, core, tmp_path):
    """kcheck's own audit: a core whose add_comm is an axiom in disguise starts nothing."""
    text = core_source().read_text()
    start = text.index(BAD_CORE_LEMMA)
    end = text.index("\ntheorem", start + 1)
    bad = (text[:start] + "axiom cheat (n m : N) : Eq (N.add n m) (N.add m n)\n\n"
           f"{BAD_CORE_LEMMA} cheat n m\n" + text[end:])
    (tmp_path / f"{CORE_MODULE}.lean").write_text(bad)
    subprocess.run([str(lean.path), f"{CORE_MODULE}.lean", "-o", f"{CORE_MODULE}.olean"], cwd=tmp_path, check=True,
                   capture_output=True)
    bad_core = CoreLibrary(tmp_path / f"{CORE_MODULE}.lean", "bad", tmp_path)
    atoms = atom_names(3)
    line = kernel_statement(Certify(equivalence_statement("a", "a", atoms)), "q0", atoms).line
    with pytest.raises(KernelCheckerError, match="axiom cheat"):
        run_kcheck(kernel.build_kcheck(lean), bad_core, [line], LIMITS, lean.githash)


@settings(max_examples=3)
@given(seed=st.integers(0, 2**32 - 1))
def test_the_kernel_and_the_elaborator_give_the_same_verdicts(lean, core, seed):
    """A few dozen random statements, true and false: the same verdict, certified or not, from both."""
    rng = random.Random(seed)
    atoms = atom_names(rng.choice((3, 4, 5)))
    questions = []
    for _ in range(12):
        tree = random_tree(rng, atoms)
        events = [e for e, _ in successors(tree, tier_rules(2), 4 * len(atoms) - 1)]
        if events:
            questions.append(Certify(step_statement(tree, rng.choice(events), atoms)))
        # an equivalence of two histories that may or may not end at the same tree
        other = tree if rng.random() < 0.5 else random_tree(rng, atoms)
        questions.append(Certify(equivalence_statement(tree, other, atoms)))
    by_kernel = ask(lean, core, atoms, questions)
    by_text = ask(lean, core, atoms, questions, checker=Checker.ELABORATOR)
    assert [a.complete for a in by_kernel] == [a.complete for a in by_text]
    assert any(not a.complete for a in by_kernel) or all(
        q.statement.kind == "step" or q.statement.source[0] == q.statement.source[1] for q in questions)


# -- the command -------------------------------------------------------------------------------

SMALL = ["--atoms", "4", "--chains", "30", "--length", "4", "--partners", "2", "--test-lengths", "6",
         "--test-chains", "6", "--jobs", "2"]


def run(args):
    result = CliRunner().invoke(certify, [str(a) for a in args], catch_exceptions=False)
    return result.exit_code, result.output


def histories(directory: Path) -> dict:
    """Every file's chains without certificate ids: trees, events, partners."""
    out = {}
    for path in sorted(directory.glob("*.jsonl")):
        records = [json.loads(line) for line in path.read_text().splitlines()]
        for r in records:
            r.pop("certs")
            for p in r["partners"]:
                p.pop("certs")
                p.pop("equivalence")
        out[path.name] = records
    return out


@pytest.fixture(scope="module")
def datasets(tmp_path_factory):
    root = tmp_path_factory.mktemp("kernel")
    for checker in ("elaborator", "kernel"):
        code, output = run([*SMALL, "--checker", checker, "--out", root / checker, "--store", root / "s.sqlite"])
        assert code == 0, output
    return root


def test_the_kernel_route_writes_the_elaborator_routes_chains(datasets):
    kernel_manifest = json.loads((datasets / "kernel" / "manifest.json").read_text())
    text_manifest = json.loads((datasets / "elaborator" / "manifest.json").read_text())
    assert kernel_manifest["checker"] == Checker.KERNEL.identity and text_manifest["checker"] == "elaborator"
    # the same store, yet every statement checked again: kernel certificates are keyed apart
    assert kernel_manifest["kernel_checked"] == text_manifest["kernel_checked"] == kernel_manifest["certified"] > 0
    assert histories(datasets / "kernel") == histories(datasets / "elaborator")
    kernel_ids = {r["certs"][0] for r in map(json.loads, (datasets / "kernel" / "train.jsonl").open()) if r["certs"]}
    text_ids = {r["certs"][0] for r in map(json.loads, (datasets / "elaborator" / "train.jsonl").open()) if r["certs"]}
    assert kernel_ids and not kernel_ids & text_ids


def test_a_second_kernel_run_hits_the_store(datasets, tmp_path):
    code, output = run([*SMALL, "--checker", "kernel", "--out", tmp_path / "again", "--store", datasets / "s.sqlite"])
    assert code == 0, output
    assert json.loads((tmp_path / "again" / "manifest.json").read_text())["kernel_checked"] == 0
    for name in ("train.jsonl", "test-6.jsonl"):
        assert (tmp_path / "again" / name).read_bytes() == (datasets / "kernel" / name).read_bytes()


def test_the_kernel_route_is_certifys_default(datasets, tmp_path):
    code, output = run([*SMALL, "--out", tmp_path / "default", "--store", datasets / "s.sqlite"])
    assert code == 0, output
    manifest = json.loads((tmp_path / "default" / "manifest.json").read_text())
    assert manifest["checker"] == Checker.KERNEL.identity and manifest["kernel_checked"] == 0  # the kernel route's keys
    for name in ("train.jsonl", "test-6.jsonl"):
        assert (tmp_path / "default" / name).read_bytes() == (datasets / "kernel" / name).read_bytes()


def test_verify_uses_the_manifests_checker_or_the_one_asked_for(datasets):
    code, output = run(["--verify", datasets / "kernel"])
    assert code == 0 and '"checker": "kernel"' in output and "note:" not in output, output
    code, output = run(["--verify", datasets / "kernel", "--checker", "elaborator"])
    assert code == 0 and "note:" in output and "re-checked with the elaborator checker" in output, output
    code, output = run(["--verify", datasets / "elaborator", "--checker", "kernel"])
    assert code == 0 and "certified by the elaborator checker" in output, output


def test_verify_refuses_a_manifest_naming_another_kcheck(datasets, tmp_path):
    copy = tmp_path / "copy"
    shutil.copytree(datasets / "kernel", copy)
    manifest = json.loads((copy / "manifest.json").read_text())
    manifest["checker"] = "kernel:" + "0" * 64
    (copy / "manifest.json").write_text(json.dumps(manifest))
    code, output = run(["--verify", copy])
    assert code == 1 and "certified by kcheck 000000000000" in output and len(output.strip().splitlines()) == 1
