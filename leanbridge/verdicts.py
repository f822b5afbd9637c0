"""Lean's answers as values, in the manner of LeanDojo's result types.

Every question put to Lean (a statement to certify, a probe event tried on a tree, a claimed
path) comes back as one of three values. A crash or a time-out is not an answer: it is an
exception (``leanbridge.runner.LeanRunError``).

- ``Accepted``: Lean elaborated the term, in a file it finished without any error or
  warning, and ``#print axioms`` said it depends on no axiom; ``tree`` is the tree Lean
  inferred (for a probe), and the goal is still open.
- ``Complete``: accepted, and nothing is left to prove: a certified statement or path, or a
  probe whose inferred tree is the goal.
- ``Rejected``: Lean refused it; ``error_class`` is read from Lean's message, ``message`` is
  the message's first line.
"""
from __future__ import annotations

from dataclasses import dataclass

from chains.rewrite.trees import Tree


@dataclass(frozen=True)
class Accepted:
    tree: Tree | None = None  # what Lean inferred the step leads to
    goals_left: int = 1

    accepted = True
    complete = False


@dataclass(frozen=True)
class Complete:
    tree: Tree | None = None  # for a probe: the inferred tree, which is the goal

    accepted = True
    complete = True
    goals_left = 0


@dataclass(frozen=True)
class Rejected:
    error_class: str  # e.g. "leaf", "operator", "pattern", "type_mismatch", "axioms"
    message: str  # Lean's words, first line

    accepted = False
    complete = False
    tree = None


Answer = Accepted | Complete | Rejected


def label(answer: Answer) -> str:
    """The verdict as a dataset stores it: ``accepted``, ``complete`` or ``rejected:<class>``."""
    if isinstance(answer, Rejected):
        return f"rejected:{answer.error_class}"
    return "complete" if answer.complete else "accepted"
