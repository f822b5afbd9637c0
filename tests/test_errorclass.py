"""The error classifier on real Lean error texts: our Lean 4.35.0's own messages for every class
it can produce in prelude mode, and literal Mathlib / LeanDojo texts for the tactic classes
(no tactic runs in our Lean)."""
import pytest

from leanbridge.errorclass import ERROR_CLASSES, classify_error, headline
from leanbridge.runner import LeanLimits, run_lean_file

# What Init would give a file that declares a class (the compiler's axioms) or applies a
# non-function (CoeFun): declared here, in test files only, never in the core library.
COMPILER_AXIOMS = """unsafe axiom lcAny : Type
unsafe axiom lcErased : Type
unsafe axiom lcProof {α : Prop} : α
unsafe axiom lcUnreachable {α : Sort u} : α
"""
COE_FUN = COMPILER_AXIOMS + """@[reducible] def outParam (α : Sort u) : Sort u := α
class CoeFun (α : Sort u) (γ : outParam (α → Sort v)) where
  coe : (f : α) → γ f
"""

# (class, Lean source after `prelude / import Core / set_option Elab.async false`): each file
# makes Lean print exactly one error.
OUR_LEAN = [
    ("type_mismatch", "theorem t (a b : N) : Eq (N.add a b) (N.mul a b) := N.add_comm a b"),
    ("application_type_mismatch",
     "theorem t (a b c : N) : Eq (N.mul a b) (N.mul a c) := congrArg (N.mul a) (N.add_comm _ _)"),
    ("unknown_identifier", "theorem t (a : N) : Eq a a := foo a"),
    ("unknown_constant", "#print axioms N.nonexistent"),
    ("invalid_field", "theorem t : Eq N.zero N.zero := N.zero.foo"),
    ("function_expected", COE_FUN + "theorem t : Eq N.zero N.zero := rfl rfl"),
    ("failed_to_synthesize", COMPILER_AXIOMS + "class Inh (α : Type) : Type where\n  x : α\n"
                             "noncomputable def t : N := Inh.x"),
    ("motive_not_type_correct", """inductive V : N → Type where
  | mk (n : N) : V n
@[elab_as_elim] theorem myrec {motive : N → Prop} {a b : N} (h : Eq a b) (m : motive a) : motive b :=
  Eq.ndrec (motive := motive) m h
noncomputable def f (n : N) (_v : V n) : N := n
theorem t (n m : N) (v : V n) (h : Eq m n) : Eq (f n v) (f n v) := myrec h rfl"""),
    ("unsolved_goals", "theorem t (a : N) : Eq a a := by"),
    ("syntax_error", "theorem t : Eq N.zero N.zero := (rfl"),
    ("timeout", "set_option maxHeartbeats 1 in\ntheorem t : Eq (N.mul (N.succ (N.succ N.zero)) (N.succ (N.succ N.zero))) "
                "(N.mul (N.succ (N.succ N.zero)) (N.succ (N.succ N.zero))) := rfl"),
    ("max_recursion", "set_option maxRecDepth 20 in\ntheorem t : Eq (N.add (N.add (N.add (N.add (N.add (N.add (N.add "
                      "(N.add N.zero N.zero) N.zero) N.zero) N.zero) N.zero) N.zero) N.zero) N.zero) N.zero := rfl"),
    ("other", "theorem rfl : Eq N.zero N.zero := Eq.refl N.zero"),  # "`rfl` has already been declared"
]

# Literal texts of the Lean and Mathlib that LeanDojo Benchmark 4 was traced with (and their
# newer wordings), as a LeanDojo replay returns them; ``<stdin>:l:c:`` is how LeanDojo's REPL
# reports a tactic it cannot parse.
FIXTURES = [
    ("pattern_not_found", "tactic 'rewrite' failed, did not find instance of the pattern in the target expression\n"
                          "  ?n + 0\nn m : ℕ\nh : n ≤ m\n⊢ n < m.succ"),
    ("pattern_not_found", "Tactic `rewrite` failed: Did not find an instance of the pattern in the target expression\n"
                          "  ?a * ?b\n\nx : ℝ\n⊢ x + 0 = x"),
    ("motive_not_type_correct", "tactic 'rewrite' failed, motive is not type correct\n  fun _a => Fin _a\nn : ℕ\n"
                                "h : n = 0\n⊢ Fin n"),
    ("motive_not_type_correct", "motive is not type correct:\n  fun _a => v.get _a = x\nError: Application type mismatch"),
    ("rewrite_failed", "tactic 'rewrite' failed, equality or iff proof expected\n  n < m\nn m : ℕ\nh : n < m\n⊢ n ≤ m"),
    ("rewrite_failed", "tactic 'rewrite' failed, pattern is a metavariable\n  ?a\nfrom equation\n  ?a = ?a + 0"),
    ("type_mismatch", "type mismatch\n  h\nhas type\n  n < m : Prop\nbut is expected to have type\n  n ≤ m : Prop"),
    ("type_mismatch", "proof type mismatch: n ≤ m != n < m"),
    ("application_type_mismatch", "application type mismatch\n  Nat.le_of_lt h\nargument\n  h\nhas type\n  n ≤ m : Prop\n"
                                  "but is expected to have type\n  ?n < ?m : Prop"),
    ("unknown_identifier", "unknown identifier 'Nat.lt_succ_iff_lt_or_eq'"),
    ("unknown_constant", "unknown constant 'Nat.factorial_lt_factorial'"),
    ("invalid_field", "invalid field 'succ_le', the environment does not contain 'LT.lt.succ_le'\n  h\nhas type\n  n < m"),
    ("function_expected", "function expected\n  h\nterm has type\n  n ≤ m"),
    ("failed_to_synthesize", "failed to synthesize instance\n  HAdd ℕ ℤ ?m.4512"),
    ("failed_to_synthesize", "failed to synthesize\n  OfNat ℝ≥0∞ 2\nnumerals are polymorphic in Lean"),
    ("apply_failed", "tactic 'apply' failed to unify\n  ?a + ?b ≤ ?a + ?c\nwith\n  n + 1 ≤ m\nn m : ℕ\nh : n < m\n⊢ n + 1 ≤ m"),
    ("apply_failed", "Tactic `apply` failed: could not unify the conclusion of `Nat.le_refl`\n  ?n ≤ ?n\nwith the goal\n"
                     "  n ≤ m + 1"),
    ("linarith_failed", "linarith failed to find a contradiction\ncase a\nx y : ℝ\nh : x < y\na✝ : x ≥ y + 1\n⊢ False failed"),
    ("simp_failed", "simp made no progress"),
    ("simp_failed", "dsimp made no progress"),
    ("simp_failed", "simp_all made no progress"),
    ("omega_failed", "omega could not prove the goal:\na possible counterexample may satisfy the constraints\n  c ≥ 0\n"
                     "  b ≥ 0\n  a - b ≤ -1\nwhere\n a := ↑n\n b := ↑m"),
    ("norm_num_failed", "norm_num failed to simplify"),
    ("ring_failed", "ring failed, ring_nf subsidiary goal\nx y : ℝ\n⊢ x * y = y * x + 1"),
    ("ring_failed", "ring_nf failed"),
    ("positivity_failed", "failed to prove positivity: the expression x - 1 is not known to be positive"),
    ("positivity_failed", "not a positivity goal"),
    ("decide_failed", "failed to reduce to true/false\n  Nat.Prime 2047"),
    ("decide_failed", "tactic 'decide' proved that the proposition\n  2 + 2 = 5\nis false"),
    ("rfl_failed", "The rfl tactic failed. Possible reasons:\n- The goal is not a reflexive relation (neither `=` nor a "
                   "relation with a @[refl] lemma).\n- The arguments of the relation are not equal."),
    ("unsolved_goals", "unsolved goals\ncase inr\nn : ℕ\nh : n % 2 = 1\n⊢ n % 2 = 0 ∨ n % 2 = 1"),
    ("no_goals", "no goals to be proved"),
    ("syntax_error", "<stdin>:1:5: unknown tactic"),
    ("syntax_error", "<stdin>:1:12: unexpected token 'at'; expected ']'"),
    ("syntax_error", "<stdin>:1:7: expected term"),
    ("timeout", "(deterministic) timeout at `whnf`, maximum number of heartbeats (200000) has been reached\n"
                "use `set_option maxHeartbeats <num>` to set the limit"),
    ("other", "proof contains metavariables"),
    ("other", "kernel type check failed: (kernel) declaration has metavariables '_example'"),
]

# Classes a message never produces: LeanDojo answers sorry/admit with ProofGivenUp, not an error
# (tests/test_mathlib.py checks the replay turns it into rejected:given_up).
NOT_FROM_MESSAGES = {"given_up"}


@pytest.fixture(scope="module")
def our_lean_texts(lean, core):
    """(expected class, Lean's message) for every OUR_LEAN case, from real runs of our Lean."""
    out = []
    for expected, body in OUR_LEAN:
        source = f"prelude\nimport {core.module}\nset_option Elab.async false\n{body}\n"
        messages = run_lean_file(lean, source, core.olean_dir, LeanLimits(timeout_s=120))
        errors = [m.text for m in messages if m.severity == "error"]
        assert len(errors) == 1, f"{expected}: Lean printed {errors!r}"
        out.append((expected, errors[0]))
    return out


def test_every_message_of_our_lean_gets_its_class(our_lean_texts):
    wrong = [(expected, classify_error(text), text) for expected, text in our_lean_texts
             if classify_error(text) != expected]
    assert not wrong


def test_our_lean_prints_the_wording_the_rules_expect(our_lean_texts):
    texts = dict(our_lean_texts)
    assert texts["type_mismatch"].startswith("Type mismatch\n")
    assert texts["application_type_mismatch"].startswith("Application type mismatch: The argument\n")
    assert texts["unknown_identifier"] == "Unknown identifier `foo`"


@pytest.mark.parametrize("expected, text", FIXTURES)
def test_mathlib_and_leandojo_texts_get_their_class(expected, text):
    assert classify_error(text) == expected


def test_every_class_is_covered():
    covered = {c for c, _ in OUR_LEAN} | {c for c, _ in FIXTURES} | NOT_FROM_MESSAGES
    assert covered == set(ERROR_CLASSES)
    assert len(set(ERROR_CLASSES)) == len(ERROR_CLASSES)


def test_the_class_comes_from_the_headline_only():
    # goals printed below a headline may say anything
    assert classify_error("unsolved goals\nh : linarith failed to find a contradiction\n⊢ False") == "unsolved_goals"
    assert classify_error("Type mismatch\n  h\nhas type\n  unknown identifier 'x'") == "type_mismatch"
    assert classify_error("unsolved goals\n⊢ a\nunknown tactic") == "unsolved_goals"


def test_location_prefixes_are_stripped():
    assert headline("Check.lean:3:4: error: Type mismatch\n  x") == "Type mismatch"
    assert classify_error("error: unknown constant 'Foo.bar'") == "unknown_constant"
    assert classify_error("<stdin>:1:0: unexpected end of input") == "syntax_error"


def test_unknown_and_empty_messages_are_other():
    assert classify_error("") == "other"
    assert classify_error("something Lean has never said") == "other"
    assert classify_error("\n\n") == "other"
