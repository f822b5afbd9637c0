"""Writes tests/data/bench4/, a small fixture in the layout of LeanDojo Benchmark 4.

The theorems are written for these tests (names end in a prime so none is taken for Mathlib's):
realistic tactics, goal states and premise annotations, shaped to exercise the reader, the
directory and length split, the novel-premise mark and every probe kind. The repository commit
in metadata.json is made up. Run ``python tests/data/make_bench4.py`` after editing.
"""
from __future__ import annotations

import json
import re
from pathlib import Path

OUT = Path(__file__).resolve().parent / "bench4"
URL = "https://github.com/leanprover-community/mathlib4"
COMMIT = "0123456789abcdef0123456789abcdef01234567"
NO_GOALS = "no goals"

# corpus: file -> [(full_name, kind node, code, start line)]
CORPUS = {
    "Init/Prelude.lean": [
        ("congrArg", "commanddeclaration", "theorem congrArg {α : Sort u} {β : Sort v} {a₁ a₂ : α} (f : α → β) (h : a₁ = a₂) : f a₁ = f a₂", 300),
        ("Nat", "commanddeclaration", "inductive Nat where\n  | zero : Nat\n  | succ (n : Nat) : Nat", 1050),
    ],
    "Init/Data/Nat/Basic.lean": [
        ("Nat.lt_succ_iff", "commanddeclaration", "theorem Nat.lt_succ_iff {m n : Nat} : m < succ n ↔ m ≤ n", 60),
        ("Nat.le_of_lt_succ", "commanddeclaration", "theorem Nat.le_of_lt_succ {m n : Nat} : m < succ n → m ≤ n", 64),
        ("Nat.succ_le_of_lt", "commanddeclaration", "theorem Nat.succ_le_of_lt {n m : Nat} (h : n < m) : succ n ≤ m", 70),
        ("Nat.le_trans", "commanddeclaration", "protected theorem Nat.le_trans {n m k : Nat} : n ≤ m → m ≤ k → n ≤ k", 90),
        ("Nat.pred", "commanddeclaration", "def Nat.pred : Nat → Nat\n  | 0 => 0\n  | succ a => a", 20),
        ("Nat.pred.match_1", "commanddeclaration", "def Nat.pred.match_1 := ...", 21),
    ],
    "Mathlib/Algebra/Group/Defs.lean": [
        ("add_comm", "commanddeclaration", "@[to_additive]\ntheorem add_comm [AddCommMagma G] : ∀ a b : G, a + b = b + a", 560),
        ("add_assoc", "commanddeclaration", "theorem add_assoc [AddSemigroup G] : ∀ a b c : G, a + b + c = a + (b + c)", 400),
        ("add_zero", "commanddeclaration", "@[simp]\ntheorem add_zero [AddZeroClass M] : ∀ a : M, a + 0 = a", 450),
        ("zero_add", "commanddeclaration", "@[simp]\ntheorem zero_add [AddZeroClass M] : ∀ a : M, 0 + a = a", 445),
        ("AddMonoid", "commanddeclaration", "class AddMonoid (M : Type u) extends AddSemigroup M, AddZeroClass M", 500),
    ],
    "Mathlib/Data/Nat/Factorial/Basic.lean": [
        ("Nat.factorial", "commanddeclaration", "/-- `Nat.factorial n` is the factorial of `n`. -/\ndef Nat.factorial : ℕ → ℕ\n  | 0 => 1\n  | succ n => succ n * factorial n", 30),
        ("Nat.factorial_succ", "commanddeclaration", "theorem Nat.factorial_succ (n : ℕ) : (n + 1)! = (n + 1) * n !", 50),
        ("Nat.factorial_pos", "lemma", "lemma Nat.factorial_pos : ∀ n, 0 < n !", 60),
        ("Nat.self_le_factorial", "commanddeclaration", "theorem Nat.self_le_factorial : ∀ n : ℕ, n ≤ n !", 80),
        ("Nat.lt_factorial_self", "commanddeclaration", "theorem Nat.lt_factorial_self {n : ℕ} (hi : 3 ≤ n) : n < n !", 120),
    ],
    "Mathlib/Algebra/Order/Ring/Lemmas.lean": [
        ("Nat.lt_mul_of_one_lt_left", "mathlibtacticlemma", "lemma Nat.lt_mul_of_one_lt_left {a b : ℕ} (hb : 0 < b) (ha : 1 < a) : b < a * b", 210),
        ("Nat.lt_mul_of_one_lt_right", "mathlibtacticlemma", "lemma Nat.lt_mul_of_one_lt_right {a b : ℕ} (ha : 0 < a) (hb : 1 < b) : a < a * b", 215),
    ],
    "Init/Data/Int/DivModLemmas.lean": [
        ("Int.emod_nonneg", "commanddeclaration", "theorem Int.emod_nonneg : ∀ (a : Int) {b : Int}, b ≠ 0 → 0 ≤ a % b", 300),
        ("Int.emod_lt_of_pos", "commanddeclaration", "theorem Int.emod_lt_of_pos (a : Int) {b : Int} (H : 0 < b) : a % b < b", 310),
        ("Int.emod_two_eq_zero_or_one", "commanddeclaration", "theorem Int.emod_two_eq_zero_or_one (n : Int) : n % 2 = 0 ∨ n % 2 = 1", 320),
        ("Int.emod_emod_of_dvd", "commanddeclaration", "theorem Int.emod_emod_of_dvd (n : Int) {m k : Int} (h : m ∣ k) : (n % k) % m = n % m", 330),
        ("Int.mul_emod_right", "commanddeclaration", "@[simp] theorem Int.mul_emod_right (a b : Int) : (a * b) % a = 0", 340),
        ("Int.add_mul_emod_self_left", "commanddeclaration", "theorem Int.add_mul_emod_self_left (a b c : Int) : (a + b * c) % b = a % b", 350),
    ],
    "Init/Data/Int/Lemmas.lean": [
        ("Int.dvd_mul_right", "commanddeclaration", "protected theorem Int.dvd_mul_right (a b : Int) : a ∣ a * b", 40),
        ("Int.dvd_mul_left", "commanddeclaration", "protected theorem Int.dvd_mul_left (a b : Int) : b ∣ a * b", 44),
    ],
    "Init/Data/List/Lemmas.lean": [
        ("List.length_append", "commanddeclaration", "@[simp] theorem List.length_append (as bs : List α) : (as ++ bs).length = as.length + bs.length", 100),
        ("List.length_map", "commanddeclaration", "@[simp] theorem List.length_map (as : List α) (f : α → β) : (as.map f).length = as.length", 110),
        ("List.map_append", "commanddeclaration", "@[simp] theorem List.map_append (f : α → β) : ∀ l₁ l₂, map f (l₁ ++ l₂) = map f l₁ ++ map f l₂", 120),
        ("List.length_reverse", "commanddeclaration", "@[simp] theorem List.length_reverse (as : List α) : as.reverse.length = as.length", 130),
    ],
    "Mathlib/Analysis/SpecialFunctions/Pow/Real.lean": [
        ("Real.rpow_natCast", "commanddeclaration", "@[simp, norm_cast]\ntheorem Real.rpow_natCast (x : ℝ) (n : ℕ) : x ^ (n : ℝ) = x ^ n", 45),
        ("Real.rpow_add", "commanddeclaration", "theorem Real.rpow_add (hx : 0 < x) (y z : ℝ) : x ^ (y + z) = x ^ y * x ^ z", 60),
        ("Real.rpow_le_rpow_left_iff", "commanddeclaration", "theorem Real.rpow_le_rpow_left_iff (hx : 1 < x) : x ^ y ≤ x ^ z ↔ y ≤ z", 500),
    ],
    "Mathlib/Data/Real/Basic.lean": [
        ("Real.instLinearOrderedField", "commanddeclaration", "noncomputable instance Real.instLinearOrderedField : LinearOrderedField ℝ := ...", 300),
        ("_private.Mathlib.Data.Real.Basic.0.Real.mk_le", "commanddeclaration", "private theorem mk_le ...", 120),
    ],
}


def premise(name: str) -> dict:
    for path, entries in CORPUS.items():
        for full_name, _, _, line in entries:
            if full_name == name:
                return {"full_name": name, "def_path": path, "def_pos": [line, 1], "def_end_pos": [line + 2, 40]}
    # a premise outside the corpus (e.g. a constructor): LeanDojo still annotates it
    return {"full_name": name, "def_path": "Init/Prelude.lean", "def_pos": [1000, 1], "def_end_pos": [1000, 30]}


def theorem(file_path: str, full_name: str, line: int, state: str, steps: list[tuple[str, str]]) -> dict:
    """steps: (annotated tactic, state after); each state before is the state after the step before."""
    traced = []
    for annotated, after in steps:
        names = re.findall(r"<a>(.*?)</a>", annotated)
        traced.append({
            "tactic": re.sub(r"</?a>", "", annotated),
            "annotated_tactic": [annotated, [premise(n) for n in names]],
            "state_before": state,
            "state_after": after,
        })
        state = after
    return {"url": URL, "commit": COMMIT, "file_path": file_path, "full_name": full_name,
            "start": [line, 1], "end": [line + len(steps) + 1, 10], "traced_tactics": traced}


H_NM = "n m : ℕ\nh : n ≤ m\n"
INT_H = "a : ℤ\nh : 0 ≤ a % 2\nh' : a % 2 < 2\n"
THEOREMS = {
    # training length (1-4 steps), inside the directories
    "T1": theorem("Mathlib/Data/Nat/Basic.lean", "Nat.lt_succ_of_le'", 120, H_NM + "⊢ n < m.succ", [
        ("rw [<a>Nat.lt_succ_iff</a>]", H_NM + "⊢ n ≤ m"),
        ("exact h", NO_GOALS)]),
    "T2": theorem("Mathlib/Data/Nat/Factorial/Basic.lean", "Nat.factorial_lt_factorial_succ'", 88,
                  "n : ℕ\nhn : 0 < n\n⊢ n ! < (n + 1)!", [
        ("rw [<a>Nat.factorial_succ</a>]", "n : ℕ\nhn : 0 < n\n⊢ n ! < (n + 1) * n !"),
        ("apply <a>Nat.lt_mul_of_one_lt_left</a> (<a>Nat.factorial_pos</a> n)", "case ha\nn : ℕ\nhn : 0 < n\n⊢ 1 < n + 1"),
        ("omega", NO_GOALS)]),
    "T3": theorem("Mathlib/Data/List/Basic.lean", "List.length_append_comm'", 300,
                  "α : Type u_1\nl₁ l₂ : List α\n⊢ (l₁ ++ l₂).length = (l₂ ++ l₁).length", [
        ("simp only [<a>List.length_append</a>, <a>add_comm</a>]", NO_GOALS)]),
    "T4": theorem("Mathlib/Data/Int/Basic.lean", "Int.emod_two_cases'", 210, "a : ℤ\n⊢ a % 2 = 0 ∨ a % 2 = 1", [
        ("have h := <a>Int.emod_nonneg</a> a (by decide : (2 : ℤ) ≠ 0)", "a : ℤ\nh : 0 ≤ a % 2\n⊢ a % 2 = 0 ∨ a % 2 = 1"),
        ("have h' := <a>Int.emod_lt_of_pos</a> a (by decide : (0 : ℤ) < 2)", INT_H + "⊢ a % 2 = 0 ∨ a % 2 = 1"),
        ("rcases <a>Int.emod_two_eq_zero_or_one</a> a with h₀ | h₁",
         "case inl\n" + INT_H + "h₀ : a % 2 = 0\n⊢ a % 2 = 0 ∨ a % 2 = 1\n\ncase inr\n" + INT_H
         + "h₁ : a % 2 = 1\n⊢ a % 2 = 0 ∨ a % 2 = 1"),
        ("exacts [<a>Or.inl</a> h₀, <a>Or.inr</a> h₁]", NO_GOALS)]),
    "T5": theorem("Mathlib/Analysis/SpecialFunctions/Pow/Real.lean", "Real.rpow_natCast_add'", 400,
                  "x : ℝ\nhx : 0 < x\nn m : ℕ\n⊢ x ^ (↑n + ↑m) = x ^ n * x ^ m", [
        ("rw [<a>Real.rpow_add</a> hx]", "x : ℝ\nhx : 0 < x\nn m : ℕ\n⊢ x ^ ↑n * x ^ ↑m = x ^ n * x ^ m"),
        ("simp [<a>Real.rpow_natCast</a>]", NO_GOALS)]),
    # outside the directories
    "T6": theorem("Mathlib/Algebra/Group/Basic.lean", "add_right_comm'", 90,
                  "G : Type u_1\ninst : AddCommSemigroup G\na b c : G\n⊢ a + b + c = a + c + b", [
        ("rw [<a>add_assoc</a>, <a>add_comm</a> b c]", "G : Type u_1\ninst : AddCommSemigroup G\na b c : G\n⊢ a + (c + b) = a + c + b"),
        ("rw [← <a>add_assoc</a>]", NO_GOALS)]),
    # between the lengths (6 steps)
    "T7": theorem("Mathlib/Data/Nat/Factorial/Basic.lean", "Nat.two_le_factorial'", 140,
                  "n : ℕ\nhn : 2 ≤ n\n⊢ 2 ≤ n !", [
        ("have h := <a>Nat.self_le_factorial</a> n", "n : ℕ\nhn : 2 ≤ n\nh : n ≤ n !\n⊢ 2 ≤ n !"),
        ("revert h", "n : ℕ\nhn : 2 ≤ n\n⊢ n ≤ n ! → 2 ≤ n !"),
        ("revert hn", "n : ℕ\n⊢ 2 ≤ n → n ≤ n ! → 2 ≤ n !"),
        ("intro h₁ h₂", "n : ℕ\nh₁ : 2 ≤ n\nh₂ : n ≤ n !\n⊢ 2 ≤ n !"),
        ("apply <a>Nat.le_trans</a> h₁", "n : ℕ\nh₁ : 2 ≤ n\nh₂ : n ≤ n !\n⊢ n ≤ n !"),
        ("exact h₂", NO_GOALS)]),
    # a term-mode proof: no tactics
    "T8": theorem("Mathlib/Data/Nat/Basic.lean", "Nat.pred_le_self'", 160, "", []),
    # test length (8-15 steps); T9 names only premises the training proofs name
    "T9": theorem("Mathlib/Data/Nat/Basic.lean", "Nat.lt_succ_of_le_of_lt'", 500,
                  "n m k : ℕ\nh₁ : n ≤ m\nh₂ : m < k\n⊢ n + 0 < k.succ", [
        ("rw [<a>add_comm</a>]", "n m k : ℕ\nh₁ : n ≤ m\nh₂ : m < k\n⊢ 0 + n < k.succ"),
        ("rw [<a>Nat.lt_succ_iff</a>]", "n m k : ℕ\nh₁ : n ≤ m\nh₂ : m < k\n⊢ 0 + n ≤ k"),
        ("have h₃ : m ≤ k := by omega", "n m k : ℕ\nh₁ : n ≤ m\nh₂ : m < k\nh₃ : m ≤ k\n⊢ 0 + n ≤ k"),
        ("clear h₂", "n m k : ℕ\nh₁ : n ≤ m\nh₃ : m ≤ k\n⊢ 0 + n ≤ k"),
        ("revert h₁ h₃", "n m k : ℕ\n⊢ n ≤ m → m ≤ k → 0 + n ≤ k"),
        ("intro ha hb", "n m k : ℕ\nha : n ≤ m\nhb : m ≤ k\n⊢ 0 + n ≤ k"),
        ("norm_num", "n m k : ℕ\nha : n ≤ m\nhb : m ≤ k\n⊢ n ≤ k"),
        ("omega", NO_GOALS)]),
    # T10 and T11 name premises no training proof names: the novel ones
    "T10": theorem("Mathlib/Data/Int/GCD.lean", "Int.emod_emod_add_emod'", 150,
                   "a b c : ℤ\nh : c ∣ b\n⊢ a % b % c + b % c = a % c", [
        ("have hc : c ∣ b := h", "a b c : ℤ\nh hc : c ∣ b\n⊢ a % b % c + b % c = a % c"),
        ("clear h", "a b c : ℤ\nhc : c ∣ b\n⊢ a % b % c + b % c = a % c"),
        ("obtain ⟨k, rfl⟩ := hc", "a c k : ℤ\n⊢ a % (c * k) % c + c * k % c = a % c"),
        ("rw [<a>Int.emod_emod_of_dvd</a> a (<a>Int.dvd_mul_right</a> c k)]", "a c k : ℤ\n⊢ a % c + c * k % c = a % c"),
        ("rw [<a>Int.mul_emod_right</a>]", "a c k : ℤ\n⊢ a % c + 0 = a % c"),
        ("nth_rewrite 2 [← <a>add_zero</a> (a % c)]", "a c k : ℤ\n⊢ a % c + 0 = a % c + 0"),
        ("apply <a>congrArg</a> (a % c + ·)", "case h\na c k : ℤ\n⊢ 0 = 0"),
        ("show (0 : ℤ) = 0", "case h\na c k : ℤ\n⊢ 0 = 0"),
        ("rfl", NO_GOALS)]),
    "T11": theorem("Mathlib/Data/List/Basic.lean", "List.length_map_append'", 800,
                   "α β : Type u_1\nf : α → β\nl₁ l₂ : List α\n⊢ (List.map f (l₁ ++ l₂)).length = l₁.length + l₂.length", [
        ("rw [<a>List.map_append</a>]",
         "α β : Type u_1\nf : α → β\nl₁ l₂ : List α\n⊢ (List.map f l₁ ++ List.map f l₂).length = l₁.length + l₂.length"),
        ("rw [<a>List.length_append</a>]",
         "α β : Type u_1\nf : α → β\nl₁ l₂ : List α\n⊢ (List.map f l₁).length + (List.map f l₂).length = l₁.length + l₂.length"),
        ("rw [<a>List.length_map</a>]",
         "α β : Type u_1\nf : α → β\nl₁ l₂ : List α\n⊢ l₁.length + (List.map f l₂).length = l₁.length + l₂.length"),
        ("congr 1", "case e_a\nα β : Type u_1\nf : α → β\nl₁ l₂ : List α\n⊢ (List.map f l₂).length = l₂.length"),
        ("generalize l₂ = l", "case e_a\nα β : Type u_1\nf : α → β\nl₁ l : List α\n⊢ (List.map f l).length = l.length"),
        ("clear l₁", "case e_a\nα β : Type u_1\nf : α → β\nl : List α\n⊢ (List.map f l).length = l.length"),
        ("revert l", "case e_a\nα β : Type u_1\nf : α → β\n⊢ ∀ (l : List α), (List.map f l).length = l.length"),
        ("exact fun l => <a>List.length_map</a> l f", NO_GOALS)]),
}

SPLITS = {
    "random": {"train": ["T1", "T2", "T4", "T6", "T7", "T9", "T10"], "val": ["T3", "T8"], "test": ["T5", "T11"]},
    "novel_premises": {"train": ["T1", "T2", "T3", "T4", "T5", "T6", "T7", "T8"], "val": ["T9"], "test": ["T10", "T11"]},
}


def main() -> None:
    OUT.mkdir(exist_ok=True)
    with open(OUT / "corpus.jsonl", "w", encoding="utf-8") as f:
        for path, entries in CORPUS.items():
            premises = [{"full_name": n, "code": code, "start": [line, 1], "end": [line + 2, 40], "kind": kind}
                        for n, kind, code, line in entries]
            f.write(json.dumps({"path": path, "imports": [], "premises": premises}, ensure_ascii=False) + "\n")
    (OUT / "metadata.json").write_text(json.dumps({
        "creation_time": "2024-04-08 12:00:00", "from_repo": {"url": URL, "commit": COMMIT},
        "leandojo_version": "1.7.1"}, indent=2) + "\n")
    for split, parts in SPLITS.items():
        (OUT / split).mkdir(exist_ok=True)
        for part, names in parts.items():
            (OUT / split / f"{part}.json").write_text(
                json.dumps([THEOREMS[n] for n in names], ensure_ascii=False, indent=1) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
