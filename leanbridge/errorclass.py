"""Lean's error messages, sorted into a closed set of classes by their headline wording.

The class of a rejection is a label the oracle learns to predict, so the set is closed and
documented here, and the same function classifies the errors of chain probes (our Lean 4.35.0
on prelude-mode terms) and of Mathlib probes (a LeanDojo replay on an older Mathlib toolchain).
The rules read the *headline* of a message, its first non-empty line once a location prefix
(``File.lean:3:4: error:``) is stripped, case-insensitively, so both Lean 4.35's wording
("Type mismatch", "Unknown identifier `x`") and the wording of the Lean that traced LeanDojo
Benchmark 4 ("type mismatch", "unknown identifier 'x'") land in the same class. A headline no
rule matches is ``"other"``; a class is never guessed from the body of a message (a goal or a
term printed below the headline may contain any words).
"""
from __future__ import annotations

import re

# The classes, in the order the rules are tried (first match wins), then the two that no
# message wording produces.
ERROR_CLASSES: tuple[str, ...] = (
    "timeout",  # "(deterministic) timeout at `whnf`, maximum number of heartbeats (200000) has been reached"
    "max_recursion",  # "maximum recursion depth has been reached"
    "motive_not_type_correct",  # "motive is not type correct" (rw, elab_as_elim eliminators, induction)
    "pattern_not_found",  # rw: "did not find (an) instance of the pattern in the target expression"
    "rewrite_failed",  # any other rw failure: "equality or iff proof expected", "pattern is a metavariable"
    "application_type_mismatch",  # "Application type mismatch: The argument ... has type ... but is expected"
    "type_mismatch",  # "Type mismatch\n  t\nhas type ..."; LeanDojo's "proof type mismatch: goal != proof"
    "unknown_identifier",  # "Unknown identifier `foo`" / "unknown identifier 'foo'"
    "unknown_constant",  # "Unknown constant `N.foo`" / "unknown constant 'Nat.foo'"
    "invalid_field",  # "Invalid field `foo`: The environment does not contain `N.foo`" / "invalid field notation"
    "function_expected",  # "Function expected at" / "function expected"
    "failed_to_synthesize",  # "failed to synthesize instance of type class\n  Inh N" / "failed to synthesize\n  ..."
    "apply_failed",  # "tactic 'apply' failed to unify" / "Tactic `apply` failed: could not unify ..."
    "linarith_failed",  # "linarith failed to find a contradiction" (nlinarith prints the same)
    "simp_failed",  # "simp made no progress", "dsimp made no progress", "simp failed ...", "simp_all ..."
    "omega_failed",  # "omega could not prove the goal" / "omega did not find a contradiction"
    "norm_num_failed",  # "norm_num failed to simplify" / "norm_num extension failed"
    "ring_failed",  # "ring failed", "ring_nf failed"
    "positivity_failed",  # "failed to prove positivity" / "not a positivity goal"
    "decide_failed",  # "failed to reduce to true/false", "decide failed", "Tactic `decide` failed"
    "rfl_failed",  # "The rfl tactic failed" / "rfl failed"
    "unsolved_goals",  # "unsolved goals\n⊢ ..."
    "no_goals",  # "no goals to be proved"
    "syntax_error",  # the parser: "unknown tactic", "unexpected token ...", "unexpected end of input", "expected term"
    "given_up",  # no message: LeanDojo's ProofGivenUp (the tactic was sorry or admit)
    "other",  # every headline no rule above matches
)

_RULES: tuple[tuple[str, re.Pattern[str]], ...] = tuple((name, re.compile(pattern, re.IGNORECASE)) for name, pattern in (
    ("timeout", r"\(deterministic\) timeout|maximum number of heartbeats|^timeout\b"),
    ("max_recursion", r"maximum recursion depth"),
    ("motive_not_type_correct", r"motive is not type correct"),
    ("pattern_not_found", r"did not find (an )?instance of the pattern"),
    ("rewrite_failed", r"^tactic [`']rewrite[`'] failed|^equality or iff proof expected|^pattern is a metavariable"),
    ("application_type_mismatch", r"^application type mismatch"),
    ("type_mismatch", r"^type mismatch|^proof type mismatch"),
    ("unknown_identifier", r"^unknown identifier"),
    ("unknown_constant", r"^unknown constant|^unknown declaration"),
    ("invalid_field", r"^invalid field"),
    ("function_expected", r"^function expected"),
    ("failed_to_synthesize", r"^failed to synthesize"),
    ("apply_failed", r"^tactic [`']apply[`'] failed|^could not unify"),
    ("linarith_failed", r"^n?linarith failed"),
    ("simp_failed", r"^(d?simp|simp_all|simp_arith|dsimp only) (made no progress|failed)|^simp failed"),
    ("omega_failed", r"^omega (could not|did not|failed)"),
    ("norm_num_failed", r"^norm_num (failed|extension failed)|^norm_num1? failed"),
    ("ring_failed", r"^ring(_nf|1)? failed"),
    ("positivity_failed", r"^failed to prove positivity|^not a positivity goal|^positivity failed"),
    ("decide_failed", r"^failed to reduce to true|^failed to reduce to false|^decide failed|^tactic [`']decide[`'] "
                      r"(failed|proved that the proposition)"),
    ("rfl_failed", r"^the rfl tactic failed|^rfl failed|^tactic [`']rfl[`'] failed"),
    ("unsolved_goals", r"^unsolved goals"),
    ("no_goals", r"^no goals"),
    ("syntax_error", r"^unknown tactic|^unexpected token|^unexpected end of input|^unexpected identifier|"
                     r"^expected [a-z'`]|^unexpected syntax"),
))
assert [name for name, _ in _RULES] == list(ERROR_CLASSES[:-2]), "every class a message can produce has one rule"

# "File.lean:3:4: error: ", "<stdin>:1:0: error: ", "error: ", "3:4: error: ": where a message is
# quoted with its location (LeanDojo's replay and lake's build output both do this).
_PREFIX = re.compile(r"^\s*(?:[^\n:]*:\d+:\d+:\s*)?(?:error:\s*)?", re.IGNORECASE)


def headline(message: str) -> str:
    """The first non-empty line of a Lean message, without its location prefix."""
    text = _PREFIX.sub("", message, count=1)
    for line in text.splitlines():
        if line.strip():
            return line.strip()
    return ""


def classify_error(message: str) -> str:
    """The class in ``ERROR_CLASSES`` of one Lean error message, read from its headline."""
    head = headline(message)
    for name, rule in _RULES:
        if rule.search(head):
            return name
    return "other"
