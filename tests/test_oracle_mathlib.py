"""train-oracle on Mathlib probe data (format mathlib-probes/1): the text tokenizer, the loader's
tensors, the arms and objectives that apply, and one-line refusals of those that do not.

THE VERDICTS BELOW ARE A FIXTURE, NOT LEAN'S. The proofs, states and tactics are written in
Mathlib's style, and each probe's verdict was written by hand to look like what Lean would say;
no Lean or LeanDojo judged them (no traced Mathlib exists on these machines). They exercise the
format and the code, and say nothing about Mathlib."""
import json
import shutil

import pytest
import torch
from click.testing import CliRunner
from hypothesis import given, settings, strategies as st

from chains.manifest import DatasetError
from chains.writer import file_sha256
from oracle.cli import main as train_oracle
from oracle.data import load_probe_dataset, sample_probe_batch
from oracle.mathlib.tokens import PAD, UNK, TextVocab, TokenizerSpec, split
from oracle.scorer import TrainedOracle
from oracle.train import OracleConfig, OracleTrainer

# (name, initial state, steps); a step is (gold tactic, {kind: (tactic, verdict)}); the gold's own
# verdict is "accepted" with one goal left, "complete" at the last step. Hand-written: a fixture.
TRAIN = [
    ("Nat.lt_succ_of_le'", "n m : ℕ\nh : n ≤ m\n⊢ n < m.succ", [
        ("rw [Nat.lt_succ_iff]", {"misplaced": ("exact h", "rejected:type_mismatch"),
                                  "swap": ("rw [Nat.succ_le_iff]", "rejected:pattern_not_found"),
                                  "random": ("omega", "complete")}),
        ("exact h", {"misplaced": ("rw [Nat.lt_succ_iff]", "rejected:pattern_not_found"),
                     "random": ("simp", "rejected:simp_failed")})]),
    ("Nat.add_sub_cancel_left'", "a b : ℕ\n⊢ a + b - a = b", [
        ("rw [Nat.add_comm]", {"misplaced": ("exact Nat.add_sub_cancel", "rejected:type_mismatch"),
                               "swap": ("rw [Nat.mul_comm]", "rejected:pattern_not_found"),
                               "random": ("rw [Nat.lt_succ_iff]", "rejected:pattern_not_found")}),
        ("exact Nat.add_sub_cancel", {"misplaced": ("rw [Nat.add_comm]", "accepted"),
                                      "swap": ("exact Nat.add_sub_cancel_left", "rejected:type_mismatch"),
                                      "random": ("omega", "complete")})]),
    ("List.length_append_comm'", "α : Type u_1\nl₁ l₂ : List α\n⊢ (l₁ ++ l₂).length = (l₂ ++ l₁).length", [
        ("simp only [List.length_append]", {"misplaced": ("omega", "rejected:omega_failed"),
                                            "swap": ("simp only [List.length_map]", "rejected:simp_failed"),
                                            "random": ("exact h", "rejected:unknown_identifier")}),
        ("omega", {"misplaced": ("simp only [List.length_append]", "rejected:simp_failed"),
                   "random": ("ring", "complete")})]),
    ("Int.emod_two_cases'", "n : ℤ\n⊢ n % 2 = 0 ∨ n % 2 = 1", [
        ("have h := Int.emod_two_eq_zero_or_one n", {"misplaced": ("exact h", "rejected:unknown_identifier"),
                                                     "swap": ("have h := Int.emod_emod_of_dvd n", "accepted"),
                                                     "random": ("simp", "rejected:simp_failed")}),
        ("exact h", {"misplaced": ("have h := Int.emod_two_eq_zero_or_one n", "accepted"),
                     "random": ("omega", "complete")})]),
    ("Real.mul_le_add_sq'", "x y : ℝ\nhx : 0 ≤ x\nhy : 0 ≤ y\n⊢ x * y ≤ (x + y) ^ 2", [
        ("have hxy : 0 ≤ x * y := mul_nonneg hx hy",
         {"misplaced": ("nlinarith [sq_nonneg (x - y), sq_nonneg (x + y)]", "complete"),
          "swap": ("have hxy : 0 ≤ x * y := add_nonneg hx hy", "rejected:type_mismatch"),
          "permuted": ("have hxy : 0 ≤ x * y := mul_nonneg hy hx", "rejected:type_mismatch"),
          "random": ("rw [Nat.add_comm]", "rejected:pattern_not_found")}),
        ("nlinarith [sq_nonneg (x - y), sq_nonneg (x + y)]",
         {"misplaced": ("have hxy : 0 ≤ x * y := mul_nonneg hx hy", "accepted"),
          "swap": ("nlinarith [sq_abs (x - y), sq_nonneg (x + y)]", "rejected:linarith_failed"),
          "permuted": ("nlinarith [sq_nonneg (x + y), sq_nonneg (x - y)]", "complete"),
          "random": ("omega", "rejected:omega_failed")})]),
    ("Nat.factorial_pos'", "n : ℕ\n⊢ 0 < n.factorial", [
        ("apply Nat.pos_of_ne_zero", {"misplaced": ("intro h", "rejected:other"),
                                      "swap": ("apply Nat.succ_pos", "rejected:apply_failed"),
                                      "random": ("simp", "complete")}),
        ("intro h", {"misplaced": ("apply Nat.pos_of_ne_zero", "rejected:apply_failed"),
                     "random": ("omega", "rejected:omega_failed")}),
        ("exact Nat.factorial_ne_zero n h", {"misplaced": ("intro h", "rejected:other"),
                                             "swap": ("exact Nat.succ_ne_zero n h", "rejected:type_mismatch"),
                                             "permuted": ("exact Nat.factorial_ne_zero h n",
                                                          "rejected:application_type_mismatch"),
                                             "random": ("exact h", "rejected:type_mismatch")})]),
]

_LONG = [  # gold tactics of the test proofs; their probes follow a hand-written pattern below
    ("Nat.lt_succ_of_le_of_lt'", "a b c : ℕ\nh₁ : a ≤ b\nh₂ : b < c\n⊢ a < c + 1", False, [
        "have h₃ : a < c := Nat.lt_of_le_of_lt h₁ h₂", "have h₄ : c < c + 1 := Nat.lt_succ_self c",
        "apply Nat.lt_trans h₃", "rw [Nat.add_comm]", "rw [Nat.lt_iff_add_one_le]", "rw [Nat.add_comm 1 c]",
        "apply Nat.le_of_lt_succ", "omega"]),
    ("Int.emod_emod_add_emod'", "m n k : ℤ\n⊢ (m % n + k) % n = (m + k) % n", True, [
        "rw [Int.add_emod]", "rw [Int.emod_emod_of_dvd m (dvd_refl n)]", "rw [← Int.add_emod]",
        "conv_lhs => rw [Int.add_comm]", "conv_rhs => rw [Int.add_comm]", "rw [Int.add_emod k]",
        "rw [Int.emod_emod]", "rw [← Int.add_emod]", "rfl"]),
    ("List.length_map_append'", "α β : Type u_1\nf : α → β\nl₁ l₂ : List α\n⊢ (List.map f (l₁ ++ l₂)).length = "
     "l₁.length + l₂.length", True, [
        "rw [List.map_append]", "rw [List.length_append]", "rw [List.length_map]", "rw [List.length_map]",
        "simp only [Nat.add_comm]", "rw [Nat.add_comm]", "simp only [List.length_map]", "rfl"]),
]


def _long_steps(golds: list[str]) -> list[tuple[str, dict]]:
    """Probes of a test proof: the next step's tactic misplaced (rejected, except at the end, where
    it is the previous one and accepted), a swap and a random tactic, both rejected."""
    steps = []
    for t, gold in enumerate(golds):
        other = golds[t + 1] if t + 1 < len(golds) else golds[t - 1]
        steps.append((gold, {"misplaced": (other, "rejected:pattern_not_found" if t + 1 < len(golds) else "accepted"),
                             "swap": (gold.replace("add", "mul", 1), "rejected:unknown_constant")
                             if "add" in gold else None,
                             "random": ("positivity", "rejected:positivity_failed")}))
    return steps


TEST = [(name, start, steps, novel) for name, start, novel, golds in _LONG for steps in [_long_steps(golds)]]


def proof_record(rid: str, name: str, start: str, steps, novel: bool = False) -> dict:
    probes = []
    for t, (gold, others) in enumerate(steps):
        row = [["gold", gold, "complete"] if t == len(steps) - 1 else ["gold", gold, "accepted", 1]]
        for kind, probe in others.items():
            if probe is not None:
                row.append([kind, probe[0], probe[1]] + ([1] if probe[1] == "accepted" else []))
        probes.append(row)
    return {"id": rid, "full_name": name, "file_path": f"Mathlib/{name.split('.')[0]}/Basic.lean", "start": start,
            "events": [g for g, _ in steps], "novel_premise": novel, "premises": [[] for _ in steps],
            "probes": probes}


def write_dataset(root, train: list[dict], test: list[dict]):
    """A dataset directory as certify --mathlib lays it out, its manifest counted from the records."""
    root.mkdir(parents=True, exist_ok=True)
    by_kind, by_verdict, files = {}, {}, {}
    for part, records in (("train", train), ("test", test)):
        path = root / f"{part}.jsonl"
        path.write_text("".join(json.dumps(r, ensure_ascii=False, sort_keys=True) + "\n" for r in records))
        files[path.name] = {"sha256": file_sha256(path), "records": len(records)}
        for r in records:
            for step in r["probes"]:
                for kind, _, verdict, *_ in step:
                    by_kind[kind] = by_kind.get(kind, 0) + 1
                    by_verdict[verdict] = by_verdict.get(verdict, 0) + 1
    manifest = {"format": "mathlib-probes/1", "source": "mathlib", "seed": 0,
                "benchmark": {"metadata": {"from_repo": {"url": "https://github.com/leanprover-community/mathlib4",
                                                         "commit": "0123456789abcdef0123456789abcdef01234567"}}},
                "records": {"train": len(train), "test": len(test)},
                "novel_premise_confirmed": sum(r["novel_premise"] for r in test),
                "probes": {"by_kind": by_kind, "by_verdict": dict(sorted(by_verdict.items()))},
                "lean_dojo": {"version": "fixture: verdicts written by hand, not Lean's"}, "files": files}
    (root / "manifest.json").write_text(json.dumps(manifest, indent=2, sort_keys=True))
    return root


def fixture_records():
    train = [proof_record(f"train-{i:05d}", *p) for i, p in enumerate(TRAIN)]
    test = [proof_record(f"test-{i:05d}", name, start, steps, novel) for i, (name, start, steps, novel) in
            enumerate(TEST)]
    return train, test


@pytest.fixture(scope="module")
def mathlib(tmp_path_factory):
    return write_dataset(tmp_path_factory.mktemp("mathlib") / "probes", *fixture_records())


# ---- the tokenizer -----------------------------------------------------------------------------

def test_lean_text_splits_at_names_dots_brackets_and_lines():
    assert split("n m : ℕ\nh : n ≤ m\n⊢ n < m.succ") == ["n", "m", ":", "ℕ", "\n", "h", ":", "n", "≤", "m", "\n",
                                                        "⊢", "n", "<", "m", ".", "succ"]
    assert split("rw [← Nat.succ_le_iff] at h₁ <;> exact ⟨x✝¹, 2⟩") == [
        "rw", "[", "←", "Nat", ".", "succ_le_iff", "]", "at", "h₁", "<;>", "exact", "⟨", "x✝¹", ",", "2", "⟩"]
    assert split("have h : a := b") == ["have", "h", ":", "a", ":=", "b"] and split("  \n \n ") == ["\n"]


def test_the_vocabulary_is_deterministic_and_counts_only_what_it_is_given():
    texts = ["rw [Nat.add_comm]", "rw [Nat.mul_comm]", "exact h", "rw [h]"]
    vocab = TextVocab.build(texts, min_count=2)
    assert vocab == TextVocab.build(list(reversed(texts)), min_count=2)  # order of the texts does not matter
    assert vocab.tokens[:2] == (PAD, UNK) and vocab.tokens[2:4] == ("[", "]")  # commonest first, ties by text
    assert "add_comm" not in vocab.tokens and "Nat" in vocab.tokens  # seen once / twice
    unk = vocab.index[UNK]
    assert vocab.encode("rw [Int.sub_comm]", 10) == [vocab.index["rw"], vocab.index["["], unk, vocab.index["."],
                                                     unk, vocab.index["]"]]
    assert vocab.encode("rw [h] at h", 3) == vocab.encode("rw [h]", 3)  # a tactic keeps its head
    assert vocab.encode("x : ℕ\n⊢ rw h", 2, keep="tail") == vocab.encode("rw h", 2)  # a state keeps its goal


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=300), st.integers(1, 40), st.sampled_from(["head", "tail"]))
def test_any_text_encodes_to_ids_of_the_vocabulary_within_the_length(text, max_len, keep):
    vocab = TextVocab.build(["rw [Nat.succ_le_iff] at h", "n m : ℕ\n⊢ n ≤ m", text[:20]], min_count=1)
    ids = vocab.encode(text, max_len, keep)
    assert len(ids) <= max_len and all(1 <= i < vocab.size for i in ids)  # never the padding id
    assert len(ids) == min(max_len, len(split(text)))
    assert all(tok == "\n" or (tok.strip() and tok == tok.strip()) for tok in split(text))


# ---- the loader ---------------------------------------------------------------------------------

def test_mathlib_probes_load_as_oracle_tensors(mathlib):
    data = load_probe_dataset(mathlib)
    assert data.tracker is None and data.embedding == "factored"
    assert set(data.tests) == {8, 9} and data.kinds == ("gold", "misplaced", "swap", "permuted", "random")
    manifest = json.loads((mathlib / "manifest.json").read_text())
    assert data.verdicts == tuple(manifest["probes"]["by_verdict"])
    train = data.train
    assert train["items"].shape == (6, 4)  # the longest training proof has 3 tactics
    assert train["probes"].shape[:2] == (6, 3) and train["partner_items"].shape == (6, 0, 4)
    assert (train["items"][:, 1:3] != 0).all() and (train["items"][:5, 3] == 0).all()  # 2-step proofs padded
    assert int((train["verdicts"] >= 0).sum()) == sum(len(s[1]) + 1 - sum(v is None for v in s[1].values())
                                                      for p in TRAIN for s in p[2])
    # the gold of every step is accepted, the last one completes the proof
    gold = data.kinds.index("gold")
    for split_ in [train, *data.tests.values()]:
        verdicts = split_["verdicts"][split_["kinds"] == gold].long()
        assert bool(data.accepting[verdicts].all())
    assert data.verdicts[data.tests[8]["verdicts"][0, 7, 0]] == "complete"
    assert data.tests[8]["novel"].tolist() == [False, True] and data.tests[9]["novel"].tolist() == [True]
    # ids in range; the item and probe tables fit the factored embedding's position table
    assert int(data.item_tokens.max()) < data.vocab_size and int(data.probe_tokens.max()) < data.vocab_size
    assert data.probe_tokens.shape[1] <= data.item_tokens.shape[1]
    tokens = data.identity["dataset"]["tokens"]
    assert tokens["vocab_size"] == data.vocab_size and 0 < tokens["test_unknown_fraction"] < 1
    # the vocabulary comes from the training split alone: a name only the test proofs use is unknown
    assert "emod_emod_of_dvd" not in data.encoding["text_vocab"] and "add_comm" in data.encoding["text_vocab"]
    batch = sample_probe_batch(data, 4, False, torch.Generator().manual_seed(0))
    assert batch.histories.items.shape == (4, 4) and batch.probes.shape[:2] == (4, 3)


def test_a_longer_state_keeps_its_goal(mathlib, tmp_path):
    train, test = fixture_records()
    train[0]["start"] = "\n".join(f"h{i} : {i} < {i + 1}" for i in range(200)) + "\n⊢ n < n + 1"
    data = load_probe_dataset(write_dataset(tmp_path / "long", train, test))
    spec = TokenizerSpec()
    row = data.item_tokens[data.train["items"][0, 0]]
    assert int((row != 0).sum()) == spec.state_tokens and data.identity["dataset"]["tokens"]["truncated"]["states"] == 1
    vocab = data.encoding["text_vocab"]
    assert [vocab[i] for i in row[spec.state_tokens - 6: spec.state_tokens].tolist()] == ["⊢", "n", "<", "n", "+", "1"]


def _one_line_error(path, match):
    with pytest.raises(DatasetError) as raised:
        load_probe_dataset(path)
    message = str(raised.value)
    assert "\n" not in message and match in message, message
    return message


def test_bad_records_are_refused_in_one_line_naming_file_and_record(tmp_path, mathlib):
    edited = tmp_path / "edited"
    shutil.copytree(mathlib, edited)
    with open(edited / "test.jsonl", "a") as f:
        f.write("\n")
    assert "test.jsonl" in _one_line_error(edited, "edited after the replay")

    train, test = fixture_records()
    train[2]["probes"][1][0][1] = "simp"  # a gold probe that is not the proof's tactic
    message = _one_line_error(write_dataset(tmp_path / "gold", train, test), "train.jsonl line 3 (record train-00002)")
    assert "step 1" in message and "not the proof's tactic" in message

    train, test = fixture_records()
    test[1]["probes"] = test[1]["probes"][:-1]
    _one_line_error(write_dataset(tmp_path / "steps", train, test), "test.jsonl line 2 (record test-00001)")

    train, test = fixture_records()
    train[0]["probes"][0][1] = ["misplaced", "exact h", "rejected:type_mismatch", 2]
    _one_line_error(write_dataset(tmp_path / "goals", train, test), "goals left")

    manifest = json.loads((mathlib / "manifest.json").read_text())
    other = tmp_path / "other"
    shutil.copytree(mathlib, other)
    (other / "manifest.json").write_text(json.dumps({**manifest, "format": "mathlib-probes/2"}))
    _one_line_error(other, "format 'mathlib-probes/2' is none of")


# ---- training: the arms that apply, and the refusals -------------------------------------------

TINY = ["--steps", "3", "--width", "16", "--probe-width", "8", "--batch-chains", "4", "--quiet"]


@pytest.mark.parametrize("arch", ["recurrence", "transformer", "blind", "probe-slot"])
def test_train_oracle_reads_mathlib_probes_end_to_end(mathlib, tmp_path, arch):
    out = tmp_path / "run"
    result = CliRunner().invoke(train_oracle, ["--data", str(mathlib), "--arch", arch, "--objective", "plain",
                                               "--out", str(out), *TINY])
    assert result.exit_code == 0, result.output
    report = json.loads((out / "report.json").read_text())
    assert report["arch"] == arch and set(report["accuracy"]) == {"8", "9"}
    assert all(0 <= v <= 1 for v in report["accuracy"].values())
    assert report["pooled"]["lengths"] == [8, 9] and report["pooled"]["hard"]["7-12"]["probes"] > 0
    novel = report["novel_premise"]
    assert novel["proofs"] == 2 and 0 <= novel["accuracy"] <= 1 and novel["pooled"]["lengths"] == [8, 9]
    assert report["pair_distance"] == {} and report["dataset"]["format"] == "mathlib-probes/1"
    assert bool(report["unrelated_distance"]) == (arch != "blind")
    assert (out / "checkpoint.pt").is_file() and (out / "accuracy.png").stat().st_size > 0
    if arch == "recurrence":
        resumed = CliRunner().invoke(train_oracle, ["--data", str(mathlib), "--arch", arch, "--objective", "plain",
                                                    "--out", str(out), "--resume", *TINY])
        assert resumed.exit_code == 0, resumed.output
        with pytest.raises(ValueError, match="Mathlib"):
            TrainedOracle(out)  # the prover's scorer reads trees and events, not Lean text


@pytest.mark.parametrize("args,why", [([], "certified partners"), (["--objective", "combo", "--arch", "transformer"],
                                                                   "certified partners"),
                                      (["--arch", "truth", "--objective", "plain"], "true proof state")])
def test_what_mathlib_data_cannot_serve_is_refused_in_one_line(mathlib, tmp_path, args, why):
    result = CliRunner().invoke(train_oracle, ["--data", str(mathlib), "--out", str(tmp_path / "run"), *TINY, *args])
    assert result.exit_code != 0 and why in result.output and "Traceback" not in result.output
    assert len(result.output.strip().splitlines()) == 1 and not (tmp_path / "run" / "checkpoint.pt").exists()


def test_the_verdict_loss_falls_on_mathlib_probes(mathlib):
    """Forty steps on one batch lower the verdict loss by a tenth at least, through the tokens."""
    data = load_probe_dataset(mathlib)
    trainer = OracleTrainer(OracleConfig(data=str(mathlib), objective="plain", width=16, probe_width=8, steps=40),
                            data)
    batch = sample_probe_batch(data, 6, False, torch.Generator().manual_seed(1))
    first = None
    for _ in range(40):
        loss = trainer.losses(batch, 0)["verdict"]
        first = loss.item() if first is None else first
        trainer.optimizer.zero_grad()
        loss.backward()
        trainer.optimizer.step()
    assert loss.item() < 0.9 * first


def test_unreadable_lines_are_refused_in_one_line(tmp_path, mathlib):
    for name, garbage in (("bytes", b"\xff\xfe not text\n"), ("json", b"{not json\n"), ("nested", b"[" * 100000 + b"\n"),
                          ("list", b"[1, 2]\n")):
        broken = tmp_path / name
        shutil.copytree(mathlib, broken)
        with open(broken / "train.jsonl", "ab") as f:
            f.write(garbage)
        manifest = json.loads((broken / "manifest.json").read_text())
        manifest["files"]["train.jsonl"]["sha256"] = file_sha256(broken / "train.jsonl")
        (broken / "manifest.json").write_text(json.dumps(manifest))
        _one_line_error(broken, f"train.jsonl line {len(TRAIN) + 1}")
