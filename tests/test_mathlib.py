"""Mathlib probe verdicts: the Benchmark 4 reader, the directory and length split, the novel-premise
mark, every probe kind and the command, on the project's fixture (tests/data/bench4, written by
tests/data/make_bench4.py). The replay itself runs only where a Dojo can open a theorem; here its
loop is driven by a stand-in Dojo, and the command must end in one line."""
import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from types import SimpleNamespace

import pytest
from click.testing import CliRunner

from leanbridge.cli import main
from leanbridge.errorclass import ERROR_CLASSES
from leanbridge.mathlib.benchmark import (BenchmarkError, iter_corpus, premise_kind, read_metadata, read_theorems)
from leanbridge.mathlib.dataset import journal_path, plan, repo_of, replay_plan
from leanbridge.mathlib.probes import PROBE_KINDS, PremiseIndex, permute_arguments, proof_probes
from leanbridge.mathlib.replay import (DojoReplayer, ProofReplay, ReplayConfig, ReplayUnavailable, probe_label,
                                       probe_record, replay_proof, verdict_of)
from leanbridge.verdicts import label
from leanbridge.mathlib.selection import SEED_DIRS, SelectionSpec, in_dirs, seeded_rng, select

BENCH = Path(__file__).resolve().parent / "data" / "bench4"
TRAIN = ["Nat.lt_succ_of_le'", "Nat.factorial_lt_factorial_succ'", "List.length_append_comm'", "Int.emod_two_cases'",
         "Real.rpow_natCast_add'"]
TEST = ["Nat.lt_succ_of_le_of_lt'", "Int.emod_emod_add_emod'", "List.length_map_append'"]
NOVEL = {"Int.emod_emod_add_emod'", "List.length_map_append'"}
ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def theorems():
    return read_theorems(BENCH, "random")


@pytest.fixture(scope="module")
def fixture_plan():
    return plan(BENCH, "random", SelectionSpec())


def by_name(theorems, name):
    return next(t for t in theorems if t.full_name == name)


# --- reader -----------------------------------------------------------------------------------

def test_reader_reads_theorems_tactics_states_and_premises(theorems):
    assert len(theorems) == 11 and len({t.key for t in theorems}) == 11
    t1 = by_name(theorems, "Nat.lt_succ_of_le'")
    assert t1.file_path == "Mathlib/Data/Nat/Basic.lean" and t1.start == (120, 1)
    assert t1.url == "https://github.com/leanprover-community/mathlib4"
    first, last = t1.tactics
    assert first.tactic == "rw [Nat.lt_succ_iff]" and first.annotated == "rw [<a>Nat.lt_succ_iff</a>]"
    assert first.marks == ("Nat.lt_succ_iff",)
    assert first.premises[0].full_name == "Nat.lt_succ_iff" and first.premises[0].def_path == "Init/Data/Nat/Basic.lean"
    assert first.state_before == "n m : ℕ\nh : n ≤ m\n⊢ n < m.succ" and last.state_after == "no goals"
    assert t1.linear and t1.premise_names == {"Nat.lt_succ_iff"}
    term_proof = by_name(theorems, "Nat.pred_le_self'")
    assert term_proof.tactics == () and not term_proof.linear


def test_both_splits_hold_the_same_theorems(theorems):
    novel = read_theorems(BENCH, "novel_premises")
    assert {t.key for t in novel} == {t.key for t in theorems}
    assert {t.part for t in theorems} == {"train", "val", "test"}
    assert read_metadata(BENCH)["from_repo"]["commit"] == "0123456789abcdef0123456789abcdef01234567"
    assert repo_of(read_metadata(BENCH))[0] == "https://github.com/leanprover-community/mathlib4"


def test_corpus_kinds_come_from_the_code_not_the_syntax_node():
    kinds = {p.full_name: p.kind for p in iter_corpus(BENCH)}
    assert kinds["Nat.factorial"] == "def"  # node kind "commanddeclaration", like every theorem
    assert kinds["Nat.factorial_succ"] == kinds["add_comm"] == "theorem"  # add_comm's code starts with @[to_additive]
    assert kinds["Nat.factorial_pos"] == kinds["Nat.lt_mul_of_one_lt_left"] == "theorem"  # lemma, Mathlib's lemma
    assert kinds["Real.instLinearOrderedField"] == "instance"
    assert kinds["AddMonoid"] == "structure" and kinds["Nat"] == "inductive"
    assert premise_kind("", "mathlibtacticlemma") == "theorem" and premise_kind("", "weird") == "other"


def _broken_copy(tmp_path, edit):
    root = tmp_path / "bench"
    shutil.copytree(BENCH, root)
    edit(root)
    return root


def test_malformed_benchmarks_are_refused_in_one_line(tmp_path):
    def duplicate(root):
        data = json.loads((root / "random" / "val.json").read_text())
        (root / "random" / "val.json").write_text(json.dumps(data + data[:1]))

    def bad_marks(root):
        data = json.loads((root / "random" / "val.json").read_text())
        data[0]["traced_tactics"][0]["annotated_tactic"][1] = []
        (root / "random" / "val.json").write_text(json.dumps(data))

    cases = [
        (duplicate, "is listed twice"),
        (bad_marks, "<a> marks but 0 premises"),
        (lambda root: (root / "random" / "test.json").write_text("{"), "is not readable JSON"),
        (lambda root: (root / "random" / "test.json").write_text("{}"), "must hold a JSON list"),
        (lambda root: (root / "random" / "train.json").unlink(), "is missing: not a LeanDojo Benchmark 4 directory"),
    ]
    for i, (edit, expected) in enumerate(cases):
        root = _broken_copy(tmp_path / str(i), edit)
        with pytest.raises(BenchmarkError, match=re.escape(expected)) as e:
            read_theorems(root, "random")
        assert "\n" not in str(e.value)
    with pytest.raises(BenchmarkError, match="unknown split"):
        read_theorems(BENCH, "sideways")
    root = _broken_copy(tmp_path / "corpus", lambda root: (root / "corpus.jsonl").write_text("not json\n"))
    with pytest.raises(BenchmarkError, match="line 1 is not JSON"):
        list(iter_corpus(root))


# --- selection and split ----------------------------------------------------------------------

def test_directories_hold_their_files_and_subdirectories():
    assert in_dirs("Mathlib/Data/Nat/Basic.lean", ["Mathlib/Data/Nat"])
    assert in_dirs("Mathlib/Data/Nat.lean", ["Mathlib/Data/Nat/"])
    assert not in_dirs("Mathlib/Data/NatFoo/Basic.lean", ["Mathlib/Data/Nat"])
    assert in_dirs("Mathlib/Data/Int/GCD.lean", ["Mathlib/Data/Nat", "Mathlib/Data/Int/GCD.lean"])
    assert not in_dirs("Mathlib/Algebra/Group/Basic.lean", SEED_DIRS)


def test_proofs_are_split_by_length_within_the_directories(theorems):
    selection = select(theorems, SelectionSpec())
    assert {t.full_name for t in selection.train} == set(TRAIN)
    assert {t.full_name for t in selection.test} == set(TEST)
    assert all(1 <= len(t.tactics) <= 4 for t in selection.train)
    assert all(8 <= len(t.tactics) <= 15 for t in selection.test)
    counts = selection.counts
    assert (counts["theorems"], counts["in_dirs"], counts["no_tactics"], counts["between_lengths"]) == (11, 10, 1, 1)
    # the benchmark's own split does not matter: novel_premises gives the same selection
    other = select(read_theorems(BENCH, "novel_premises"), SelectionSpec())
    assert {t.key for t in other.train} == {t.key for t in selection.train}


def test_test_proofs_naming_a_premise_no_training_proof_names_are_novel(theorems):
    selection = select(theorems, SelectionSpec())
    assert {k.split(":", 1)[1] for k in selection.novel} == NOVEL
    assert selection.counts["novel_premise"] == 2
    # without the list proofs in training, the third test proof names an unseen premise too
    narrow = select(theorems, SelectionSpec(dirs=("Mathlib/Data/Int", "Mathlib/Data/List/Basic.lean")))
    assert {t.full_name for t in narrow.train} == {"Int.emod_two_cases'", "List.length_append_comm'"}
    assert {k.split(":", 1)[1] for k in narrow.novel} == {"Int.emod_emod_add_emod'", "List.length_map_append'"}


def test_max_theorems_samples_each_split_with_the_seed(theorems):
    a = select(theorems, SelectionSpec(max_theorems=2, seed=3))
    b = select(theorems, SelectionSpec(max_theorems=2, seed=3))
    assert len(a.train) == len(a.test) == 2 and a == b
    seen = set().union(*(t.premise_names for t in a.train))
    assert a.novel == {t.key for t in a.test if t.premise_names - seen}


def test_bad_selections_are_refused():
    for kwargs in ({"dirs": ()}, {"train_max_steps": 8}, {"test_min_steps": 16}, {"max_theorems": 0}):
        with pytest.raises(ValueError):
            SelectionSpec(**kwargs)


# --- probes -----------------------------------------------------------------------------------

def test_every_step_gets_gold_first_and_at_most_one_probe_of_each_kind(fixture_plan):
    seen_kinds = set()
    for part in ("train", "test"):
        for thm, probes in fixture_plan.jobs(part):
            assert len(probes) == len(thm.tactics)
            for t, step in enumerate(probes):
                kinds = [p.kind for p in step]
                assert kinds[0] == "gold" and step[0].text == thm.tactics[t].tactic
                assert kinds == [k for k in PROBE_KINDS if k in kinds]
                assert all(p.text != step[0].text for p in step[1:])
                seen_kinds.update(kinds)
    assert seen_kinds == set(PROBE_KINDS)


def test_misplaced_and_random_probes_are_tactics_of_the_same_and_of_other_proofs(fixture_plan):
    for part in ("train", "test"):
        pool = fixture_plan.selection.split(part)
        for thm, probes in fixture_plan.jobs(part):
            own = {s.tactic for s in thm.tactics}
            others = {s.tactic for o in pool if o.key != thm.key for s in o.tactics}
            for step in probes:
                for p in step:
                    if p.kind == "misplaced":
                        assert p.text in own
                    if p.kind == "random":
                        assert p.text in others
    one_step = by_name(fixture_plan.selection.train, "List.length_append_comm'")
    assert "misplaced" not in {p.kind for p in fixture_plan.probes[one_step.key][0]}


def test_swaps_replace_one_premise_by_a_visible_premise_of_the_same_kind(fixture_plan):
    corpus = {p.full_name: p for p in iter_corpus(BENCH)}
    swaps = 0
    for part in ("train", "test"):
        for thm, probes in fixture_plan.jobs(part):
            for t, step in enumerate(probes):
                for p in (p for p in step if p.kind == "swap"):
                    swaps += 1
                    tactic = thm.tactics[t]
                    pieces = re.split(r"<a>(.*?)</a>", tactic.annotated)
                    matches = []
                    for i, original in enumerate(tactic.premises):
                        for name, q in corpus.items():
                            trial = pieces[:]
                            trial[2 * i + 1] = name
                            if "".join(trial) == p.text:
                                matches.append((original.full_name, q))
                    assert matches, p.text
                    original, q = matches[0]
                    assert q.full_name != original and q.kind == corpus[original].kind
                    assert q.path != thm.file_path or q.start < thm.start
    assert swaps >= 10


def test_swaps_never_pick_later_same_file_auxiliary_or_private_premises(theorems):
    index = PremiseIndex.build(iter_corpus(BENCH))
    assert "Nat.pred.match_1" not in index.kind_of
    assert not any(n.startswith("_private") for n in index.kind_of)
    real = by_name(theorems, "Real.rpow_natCast_add'")
    int_cases = by_name(theorems, "Int.emod_two_cases'")
    for seed in range(30):
        for step in proof_probes(real, [real], index, seed):
            assert all("rpow_le_rpow_left_iff" not in p.text for p in step)
        # Or.inl and Or.inr are not in the corpus: the last step of this proof has no swap
        assert "swap" not in {p.kind for p in proof_probes(int_cases, [int_cases], index, seed)[3]}


def test_permuted_probes_reorder_arguments_only():
    rng = seeded_rng(0)
    assert permute_arguments("exacts [Or.inl h₀, Or.inr h₁]", rng) == "exacts [Or.inr h₁, Or.inl h₀]"
    assert permute_arguments("exact Nat.le_trans h₁ h₂", rng) == "exact Nat.le_trans h₂ h₁"
    assert permute_arguments("intro ha hb", rng) == "intro hb ha"
    assert permute_arguments("simp only [foo, bar] at h ⊢", rng) == "simp only [bar, foo] at h ⊢"
    for fixed in ("omega", "rw [h] at h'", "show (0 : ℤ) = 0", "generalize l₂ = l", "nth_rewrite 2 [← add_zero a]",
                  "rcases Int.emod_two_eq_zero_or_one a with h₀ | h₁", "exact foo x x", "calc a = b := h\n  _ = c := h'"):
        assert permute_arguments(fixed, rng) is None, fixed


def test_permuted_probes_keep_the_gold_tokens(fixture_plan):
    def tokens(text):
        return sorted(re.sub(r"[,()\[\]⟨⟩]", " ", text).split())

    permuted = [(thm.tactics[t].tactic, p.text) for part in ("train", "test") for thm, probes in fixture_plan.jobs(part)
                for t, step in enumerate(probes) for p in step if p.kind == "permuted"]
    assert len(permuted) >= 5
    assert all(tokens(gold) == tokens(text) and gold != text for gold, text in permuted)


def test_probes_are_the_same_on_every_build(fixture_plan):
    again = plan(BENCH, "random", SelectionSpec())
    assert again.probes == fixture_plan.probes
    other_seed = plan(BENCH, "random", SelectionSpec(seed=1))
    assert other_seed.probes != fixture_plan.probes


# --- the command: dry run and refusals --------------------------------------------------------

def _json_and_last_line(output: str):
    body, last = output.rstrip("\n").rsplit("\n", 1)
    return json.loads(body), last


def test_dry_run_counts_the_probes_and_writes_nothing(tmp_path, fixture_plan):
    out = tmp_path / "nested" / "probes"
    result = CliRunner().invoke(main, ["--mathlib", str(BENCH), "--dry-run", "--out", str(out)])
    assert result.exit_code == 0, result.output
    report, last = _json_and_last_line(result.output)
    counts = fixture_plan.probe_counts()
    assert report["probes"] == counts
    assert counts["train"]["proofs"] == 5 and counts["test"]["proofs"] == 3
    assert counts["train"]["steps"] == 12 and counts["test"]["steps"] == 25
    assert counts["train"]["by_kind"]["gold"] == 12 and counts["test"]["by_kind"]["gold"] == 25
    assert report["selection"]["novel_premise"] == 2
    total = counts["train"]["probes"] + counts["test"]["probes"]
    assert total == 134  # the README quotes this run
    assert last == (f"dry run: 5 training and 3 test proofs (2 with a novel premise), {total} probes; "
                    f"nothing replayed or written")
    assert not (tmp_path / "nested").exists()


def test_dry_run_respects_dirs_split_and_max_theorems():
    result = CliRunner().invoke(main, ["--mathlib", str(BENCH), "--dry-run", "--dirs", "Mathlib/Data/Nat",
                                       "--split", "novel_premises", "--max-theorems", "1"])
    assert result.exit_code == 0, result.output
    report, _ = _json_and_last_line(result.output)
    assert report["split"] == "novel_premises" and report["dirs"] == ["Mathlib/Data/Nat"]
    assert report["probes"]["train"]["proofs"] == 1 and report["probes"]["test"]["proofs"] == 1
    assert report["selection"]["train_available"] == 2


def test_mathlib_options_need_mathlib_and_bad_benchmarks_get_one_line(tmp_path):
    runner = CliRunner()
    result = runner.invoke(main, ["--dirs", "Mathlib/Data/Nat"])
    assert result.exit_code == 2 and "--dirs goes with --mathlib" in result.output
    result = runner.invoke(main, ["--mathlib", str(BENCH), "--dry-run", "--atoms", "5"])
    assert result.exit_code == 2 and "--atoms is for rewrite chains, not for --mathlib" in result.output
    result = runner.invoke(main, ["--mathlib", str(BENCH), "--verify", str(tmp_path)])
    assert result.exit_code == 2 and "--verify is for rewrite chains" in result.output
    result = runner.invoke(main, ["--mathlib", str(tmp_path), "--dry-run"])
    assert result.exit_code == 1
    assert result.output.strip().splitlines() == [
        f"Error: {tmp_path}/metadata.json is missing: not a LeanDojo Benchmark 4 directory"]


def test_without_a_dojo_the_command_ends_in_one_line_and_writes_nothing(tmp_path):
    """Here (no lean_dojo, or lean_dojo with no lake, network or traced Mathlib) the replay cannot
    run: one line saying what is missing and how to provide it, no traceback, nothing written."""
    out = tmp_path / "data" / "mathlib-probes"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.run([sys.executable, "-m", "leanbridge.cli", "--mathlib", str(BENCH), "--out", str(out)],
                          capture_output=True, text=True, env=env, cwd=tmp_path, timeout=300)
    print(proc.stderr)
    assert proc.returncode == 1
    assert "Traceback" not in proc.stderr + proc.stdout
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("Error: ")
    if importlib.util.find_spec("lean_dojo") is None:
        assert lines[0] == ("Error: lean_dojo is not installed: pip install -e '.[mathlib]' "
                            "(lean-dojo==4.20.0); see README, 'Mathlib probes'")
    else:  # installed, but no lake, network or traced Mathlib here
        assert re.search(r"lake|DISABLE_REMOTE_CACHE|CACHE_DIR", lines[0])
    assert not (tmp_path / "data").exists()


# --- the replay loop, on a stand-in Dojo --------------------------------------------------------
# A stand-in for lean_dojo's result types and exceptions, and a scripted Dojo: the gold tactic of
# step t takes state t to state t + 1 (the last one finishes the proof); "split" leaves two goals,
# "sorry" is given up, "slow" times out, anything else is an unknown identifier.

@dataclass(frozen=True)
class TacticState:
    pp: str
    id: int
    num_goals: int = 1


@dataclass(frozen=True)
class ProofFinished:
    tactic_state_id: int


@dataclass(frozen=True)
class LeanError:
    error: str


@dataclass(frozen=True)
class ProofGivenUp:
    pass


class DojoTacticTimeoutError(Exception):
    pass


class DojoCrashError(Exception):
    pass


class DojoInitError(Exception):
    pass


LD = SimpleNamespace(TacticState=TacticState, ProofFinished=ProofFinished, LeanError=LeanError,
                     ProofGivenUp=ProofGivenUp, DojoTacticTimeoutError=DojoTacticTimeoutError,
                     DojoCrashError=DojoCrashError, DojoInitError=DojoInitError, __version__="stand-in")


class ScriptedDojo:
    """State ids are (session, step): a state of a closed session must never be used again."""

    def __init__(self, golds, opens, broken_gold=None):
        self.golds, self.opens, self.broken_gold = golds, opens, broken_gold
        self.busy = False
        self.session = len(opens)

    def __enter__(self):
        self.opens.append(1)
        return self, TacticState("state 0", (self.session, 0))

    def __exit__(self, *exc):
        self.busy = True  # closed
        return False

    def run_tac(self, state, tactic):
        assert not self.busy, "a timed-out or closed Dojo was used again"
        session, t = state.id
        assert session == self.session, "a state of another session"
        if tactic == self.golds[t] and t != self.broken_gold:
            if t + 1 == len(self.golds):
                return ProofFinished(t + 1)
            return TacticState(f"state {t + 1}", (self.session, t + 1))
        if tactic == "split":
            return TacticState(f"split {t}", (self.session, 100 + t), num_goals=2)
        if tactic == "sorry":
            return ProofGivenUp()
        if tactic == "slow":
            self.busy = True
            raise DojoTacticTimeoutError()
        return LeanError(f"<stdin>:1:0: unknown identifier '{tactic}'")


def probe(kind, text):
    from leanbridge.mathlib.probes import Probe
    return Probe(kind, text)


def scripted(golds, probes, broken_gold=None, max_reopen=3):
    opens = []
    result = replay_proof(lambda: ScriptedDojo(golds, opens, broken_gold), LD, golds, probes, max_reopen)
    return result, len(opens)


def test_replay_judges_every_probe_on_the_state_before_its_step():
    golds = ["intro x", "simp", "omega"]
    probes = [[probe("gold", "intro x"), probe("misplaced", "omega"), probe("random", "split")],
              [probe("gold", "simp"), probe("swap", "sorry")],
              [probe("gold", "omega"), probe("permuted", "bad")]]
    result, opens = scripted(golds, probes)
    assert result.confirmed and opens == 1 and result.start == "state 0"
    rows = [[probe_record(p, v) for p, v in zip(step, vs)] for step, vs in zip(probes, result.verdicts)]
    assert rows == [
        [["gold", "intro x", "accepted", 1], ["misplaced", "omega", "rejected:unknown_identifier"],
         ["random", "split", "accepted", 2]],
        [["gold", "simp", "accepted", 1], ["swap", "sorry", "rejected:given_up"]],
        [["gold", "omega", "complete"], ["permuted", "bad", "rejected:unknown_identifier"]],
    ]


def test_a_time_out_is_recorded_as_rejected_timeout_and_the_theorem_is_reopened_at_the_same_step():
    golds = ["intro x", "simp", "omega"]
    probes = [[probe("gold", "intro x")],
              [probe("gold", "simp"), probe("misplaced", "slow"), probe("random", "split")],
              [probe("gold", "omega"), probe("swap", "slow"), probe("permuted", "sorry")]]
    result, opens = scripted(golds, probes)
    assert result.confirmed and opens == 3 and result.reopened == 2
    assert [probe_label(v) for v in result.verdicts[1]] == ["accepted", "rejected:timeout", "accepted"]
    assert result.verdicts[1][2].goals_left == 2  # judged on the state before step 1 of the reopened theorem
    assert [probe_label(v) for v in result.verdicts[2]] == ["complete", "rejected:timeout", "rejected:given_up"]
    too_many, _ = scripted(golds, [[probe("gold", "intro x"), probe("random", "slow")], [], []], max_reopen=0)
    assert not too_many.confirmed and "time-outs or crashes" in too_many.reason


def test_a_proof_lean_does_not_confirm_at_every_step_is_not_confirmed():
    golds = ["intro x", "simp", "omega"]
    probes = [[probe("gold", g)] for g in golds]
    result, _ = scripted(golds, probes, broken_gold=1)
    assert not result.confirmed and result.reason.startswith("step 1: the gold tactic leaves no state")
    result, _ = scripted(golds[:2], [[probe("gold", "intro x")], [probe("gold", "split")]])
    assert not result.confirmed and "does not complete the proof" in result.reason


def test_verdicts_of_the_real_lean_dojo_types():
    ld = pytest.importorskip("lean_dojo", reason="lean_dojo is not installed (the mathlib extra)")
    assert verdict_of(ld.TacticState("x : ℕ\n⊢ x = x\n\ny : ℕ\n⊢ y = y", 3), ld).goals_left == 2
    assert label(verdict_of(ld.ProofFinished(4), ld)) == "complete"
    assert label(verdict_of(ld.LeanError("unsolved goals\n⊢ False"), ld)) == "rejected:unsolved_goals"
    assert label(verdict_of(ld.ProofGivenUp(), ld)) == "rejected:given_up"


class StandInReplayer:
    """Replays with scripted Dojos: every gold tactic confirmed except in ``broken`` proofs, every
    other probe an unknown identifier."""

    ld = LD
    config = ReplayConfig()

    def __init__(self, broken=()):
        self.broken = set(broken)

    def replay(self, thm, probes):
        golds = [t.tactic for t in thm.tactics]
        if thm.full_name in self.broken:
            return ProofReplay(False, "", reason="step 0: the gold tactic leaves no state to go on from")
        result, _ = scripted(golds, probes)
        return result


def test_replayed_records_have_the_shared_probe_format(tmp_path, fixture_plan):
    out = tmp_path / "probes"
    manifest = replay_plan(fixture_plan, StandInReplayer(broken={"Nat.lt_succ_of_le_of_lt'"}), out)
    assert sorted(p.name for p in out.iterdir()) == ["manifest.json", "test.jsonl", "train.jsonl"]
    assert not list(tmp_path.glob(".probes.tmp-*"))
    train = [json.loads(line) for line in (out / "train.jsonl").read_text().splitlines()]
    test = [json.loads(line) for line in (out / "test.jsonl").read_text().splitlines()]
    assert [r["id"] for r in train] == [f"train-{i:05d}" for i in range(5)]
    assert {r["full_name"] for r in test} == NOVEL  # the unconfirmed proof is left out
    assert manifest["dropped"] == {"unconfirmed": 1} and manifest["novel_premise_confirmed"] == 2
    verdicts = {"accepted", "complete"} | {f"rejected:{c}" for c in ERROR_CLASSES}
    kinds = {k: 0 for k in PROBE_KINDS}
    for r in train + test:
        assert set(r) == {"id", "full_name", "file_path", "start", "events", "novel_premise", "premises", "probes"}
        assert len(r["probes"]) == len(r["events"]) == len(r["premises"])
        assert r["novel_premise"] == (r["full_name"] in NOVEL)
        for t, step in enumerate(r["probes"]):
            assert step[0][:2] == ["gold", r["events"][t]]
            for entry in step:
                kind, text, verdict = entry[:3]
                kinds[kind] += 1
                assert verdict in verdicts
                assert (len(entry) == 4 and isinstance(entry[3], int)) == (verdict == "accepted")
            assert step[0][2] == ("complete" if t == len(r["events"]) - 1 else "accepted")
    assert manifest["probes"]["by_kind"] == kinds
    assert sum(manifest["probes"]["by_verdict"].values()) == sum(kinds.values())
    assert manifest["probes"]["by_kind_and_verdict"]["misplaced"].keys() <= {"rejected:unknown_identifier"}
    assert manifest["records"] == {"train": 5, "test": 2}
    assert json.loads((out / "manifest.json").read_text())["files"]["train.jsonl"]["records"] == 5


def test_a_rerun_resumes_from_the_journal(tmp_path, fixture_plan):
    out = tmp_path / "probes"
    first = replay_plan(fixture_plan, StandInReplayer(broken={"Nat.lt_succ_of_le_of_lt'"}), out)
    assert first["resumed_from_journal"] == 0 and journal_path(out).exists()

    class MustNotReplay(StandInReplayer):
        def replay(self, thm, probes):
            raise AssertionError(f"{thm.full_name} was replayed again")

    before = {name: (out / name).read_text() for name in ("train.jsonl", "test.jsonl")}
    again = replay_plan(fixture_plan, MustNotReplay(), out)
    assert again["resumed_from_journal"] == 8  # the unconfirmed proof too: it opened
    assert {name: (out / name).read_text() for name in before} == before
    assert again["probes"] == first["probes"] and again["dropped"] == first["dropped"]
    # another seed makes other probes: those proofs are replayed
    other = plan(BENCH, "random", SelectionSpec(seed=1))
    third = replay_plan(other, StandInReplayer(), out)
    assert third["resumed_from_journal"] < 8


def test_the_journal_keeps_every_outcome_and_the_records_their_verdicts(tmp_path):
    """Lean's answers come back from the journal as the answers they were, a time-out and a crash
    as the exceptions they were; the records keep a time-out as rejected:timeout and leave a
    crashed probe out; the journal's lines keep their format."""
    from leanbridge.mathlib.dataset import ReplayJournal
    from leanbridge.runner import LeanRunError, LeanTimeout
    from leanbridge.verdicts import Accepted, Complete, Rejected

    outcomes = [Accepted(goals_left=2), Complete(), Rejected("unknown_identifier", "<stdin>:1:0: unknown identifier 'x'\n"),
                Rejected("given_up", ""), LeanTimeout("slow timed out"), LeanRunError("Lean crashed")]
    probes = [probe(kind, f"tactic {k}") for k, kind in enumerate(["gold", "swap", "misplaced", "permuted", "random",
                                                                   "random"])]
    ReplayJournal(tmp_path / "j.jsonl", "c0ffee", 10).add("key", ProofReplay(True, "state 0", [outcomes]))
    back = ReplayJournal(tmp_path / "j.jsonl", "c0ffee", 10).get("key").verdicts[0]
    assert back[:4] == [Accepted(goals_left=2), Complete(), Rejected("unknown_identifier", "unknown identifier 'x'"),
                        Rejected("given_up", "")]
    assert isinstance(back[4], LeanTimeout) and type(back[5]) is LeanRunError
    rows = [[probe_record(p, v) for p, v in zip(probes, vs) if probe_label(v) is not None] for vs in (outcomes, back)]
    assert rows[0] == rows[1] == [["gold", "tactic 0", "accepted", 2], ["swap", "tactic 1", "complete"],
                                  ["misplaced", "tactic 2", "rejected:unknown_identifier"],
                                  ["permuted", "tactic 3", "rejected:given_up"], ["random", "tactic 4", "rejected:timeout"]]
    line = json.loads((tmp_path / "j.jsonl").read_text())
    assert line["replay"]["verdicts"] == [[["accepted", 2, ""], ["complete", None, ""],
                                           ["rejected:unknown_identifier", None, "unknown identifier 'x'"],
                                           ["rejected:given_up", None, ""], ["rejected:timeout", None, ""], None]]


def test_a_replay_that_cannot_start_writes_nothing(tmp_path, fixture_plan):
    class Unavailable(StandInReplayer):
        def replay(self, thm, probes):
            raise ReplayUnavailable("LeanDojo cannot open it")

    with pytest.raises(ReplayUnavailable):
        replay_plan(fixture_plan, Unavailable(), tmp_path / "a" / "probes")
    assert list(tmp_path.iterdir()) == []


# --- the real replay, where a Dojo can open a theorem -------------------------------------------

BENCH_ENV, REPO_ENV = "EXACT_STATE_BENCH4", "EXACT_STATE_MATHLIB_REPO"


def test_replay_in_a_real_dojo(tmp_path):
    """On a machine with lean-dojo, lake and a traced Mathlib: EXACT_STATE_BENCH4 names LeanDojo
    Benchmark 4 (and EXACT_STATE_MATHLIB_REPO a local clone at its commit, where GitHub is out of
    reach). Replays two natural-number proofs of each split and checks the gold verdicts."""
    bench = os.environ.get(BENCH_ENV)
    if not bench:
        pytest.skip(f"no Mathlib replay here: set {BENCH_ENV} to a LeanDojo Benchmark 4 directory on a machine "
                    f"with lean-dojo, lake and a traced Mathlib (README, 'Mathlib probes')")
    try:
        replayer = DojoReplayer(*repo_of(read_metadata(bench)), ReplayConfig(repo=os.environ.get(REPO_ENV)))
    except ReplayUnavailable as e:
        pytest.skip(f"no Mathlib replay here: {e}")
    p = plan(Path(bench), "random", SelectionSpec(dirs=("Mathlib/Data/Nat",), max_theorems=2))
    manifest = replay_plan(p, replayer, tmp_path / "probes")
    assert manifest["records"]["train"] + manifest["records"]["test"] >= 1, manifest["dropped_examples"]
    for line in (tmp_path / "probes" / "train.jsonl").read_text().splitlines():
        r = json.loads(line)
        assert [step[0][2] for step in r["probes"]][-1] == "complete"
        assert all(step[0][2] == "accepted" for step in r["probes"][:-1])


class StandInDojoReplayer(DojoReplayer):
    """DojoReplayer's bookkeeping on scripted Dojos; ``fail`` names the theorems that cannot be opened."""

    def __init__(self, fail):
        self.config, self.ld, self.fail = ReplayConfig(), LD, set(fail)
        self.opened = self.failed_before_first = 0
        self.opens = []

    def _session(self, thm):
        if thm.full_name in self.fail:
            raise DojoInitError(f"Failed to locate the theorem with `{thm.full_name}` as its fully qualified name.")
        return ScriptedDojo([t.tactic for t in thm.tactics], self.opens)


def test_theorems_that_cannot_be_opened_are_dropped_unless_none_can(fixture_plan):
    jobs = fixture_plan.jobs("train")
    names = [thm.full_name for thm, _ in jobs]
    replayer = StandInDojoReplayer(fail=names[:2])
    first, second = (replayer.replay(thm, probes) for thm, probes in jobs[:2])
    assert not first.confirmed and first.reason.startswith("cannot open: DojoInitError: Failed to locate")
    assert replayer.replay(*jobs[2]).confirmed
    assert not replayer.replay(*jobs[0]).confirmed  # after one opened, a failure drops that proof only
    nothing_opens = StandInDojoReplayer(fail=names)
    for thm, probes in jobs[:2]:
        assert not nothing_opens.replay(thm, probes).confirmed
    with pytest.raises(ReplayUnavailable, match="could not open any of the first 3 theorems"):
        nothing_opens.replay(*jobs[2])


# --- the replay through the real lean_dojo.Dojo, on a scripted REPL -----------------------------

SCRIPTED_REPL = Path(__file__).resolve().parent / "data" / "scripted_repl.py"


def test_replay_through_lean_dojo_against_a_scripted_repl(tmp_path, monkeypatch, fixture_plan):
    """Where lean_dojo is installed but no Lean is: the real ``Dojo`` (its pexpect process, its REPL
    protocol, its result types and time-outs) drives the replay, with ``lake env lean`` answered
    by tests/data/scripted_repl.py and the traced file (which needs a traced Mathlib) left out."""
    ld = pytest.importorskip("lean_dojo", reason="lean_dojo is not installed (the mathlib extra)")
    import psutil
    import lean_dojo.interaction.dojo as dojo_module

    thm, probes = fixture_plan.jobs("test")[0]
    assert thm.full_name == "Nat.lt_succ_of_le_of_lt'"
    script = tmp_path / "script.json"
    script.write_text(json.dumps({"states": [t.state_before for t in thm.tactics],
                                  "golds": [t.tactic for t in thm.tactics]}, ensure_ascii=False))
    bin_dir, traced = tmp_path / "bin", tmp_path / "traced"
    bin_dir.mkdir()
    (traced / "Mathlib").mkdir(parents=True)
    (traced / "Lean4Repl.lean").touch()
    (bin_dir / "lake").write_text(f"#!/bin/sh\nexec {sys.executable} {SCRIPTED_REPL}\n")
    (bin_dir / "lake").chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}:{os.environ['PATH']}")
    monkeypatch.setenv("SCRIPTED_REPL", str(script))
    monkeypatch.setattr(dojo_module, "get_traced_repo_path", lambda repo, build_deps=True: traced)

    class ScriptedFileDojo(ld.Dojo):
        def _locate_traced_file(self, traced_repo_path):
            return SimpleNamespace(has_prelude=False, abs_path=traced / self.file_path)

        def _modify_file(self, traced_file):
            self.modified_file = tempfile.NamedTemporaryFile("wt", suffix=".lean", dir=traced / "Mathlib").__enter__()

    class Replayer(DojoReplayer):
        def __init__(self):
            self.config, self.ld = ReplayConfig(timeout_s=10), ld
            self.opened = self.failed_before_first = 0

        def _session(self, thm):
            return ScriptedFileDojo(ld.Theorem(SimpleNamespace(), thm.file_path, thm.full_name),
                                    timeout=self.config.timeout_s)

    extra = {0: probe("random", "split"), 2: probe("random", "slow"), 3: probe("swap", "sorry")}
    probes = [[p for p in step if p.kind != "random" or t not in extra] + ([extra[t]] if t in extra else [])
              for t, step in enumerate(probes)]
    result = Replayer().replay(thm, probes)
    assert result.confirmed, result.reason
    assert result.start == thm.tactics[0].state_before and result.reopened == 1
    verdicts = [[probe_record(p, v) for p, v in zip(step, vs)] for step, vs in zip(probes, result.verdicts)]
    assert [step[0] for step in verdicts] == [["gold", t.tactic, "accepted", 1] for t in thm.tactics[:-1]] + [
        ["gold", thm.tactics[-1].tactic, "complete"]]
    assert ["random", "split", "accepted", 2] in verdicts[0]
    assert ["random", "slow", "rejected:timeout"] in verdicts[2]
    assert ["swap", "sorry", "rejected:given_up"] in verdicts[3]
    others = [entry[2] for step in verdicts for entry in step[1:] if entry[1] not in ("split", "slow", "sorry")]
    assert others and set(others) == {"rejected:unknown_identifier"}
    # every REPL process, the timed-out one too, is killed (LeanDojo does not reap them: zombies stay)
    live = [p for p in psutil.Process().children(recursive=True) if p.status() != psutil.STATUS_ZOMBIE]
    assert not [p for p in live if "scripted_repl" in " ".join(p.cmdline())]
