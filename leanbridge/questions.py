"""The questions Lean is asked, how each is written as Lean text, and how Lean's output on it
is read back as an answer (``leanbridge.verdicts``).

- ``Certify(statement)``: a step or an equivalence, as a theorem. Complete when certified.
- ``Probe(tree, event)``: what does Lean make of ``event`` tried on ``tree``? Only the proof
  term goes into the file, with the tree stated and the result left to Lean:
  ``(congr_fst _ (congr_snd _ (lemma _ _)) : Eq tree _)``. The path is walked by the core's
  ``congr_fst``/``congr_snd``, which leave the operation and the other argument to
  unification, and the lemma's arguments are holes too, so Lean decides whether the path is
  in the tree and whether the lemma's left side is there. Accepted with the tree Lean
  inferred (read from ``#check``), or rejected with Lean's message, its class read from the
  message: ``leaf`` (the path meets an atom: the position is a leaf or outside the tree),
  ``operator`` (the node there has the other operation), ``pattern`` (the same operation,
  but not the lemma's left side). Python's rules never enter the file.
- ``PathClaim(start, target, steps)``: a claimed rewrite path, one theorem per step and a
  final ``Eq.trans`` chain from ``start`` to ``target``. Complete when Lean accepts it.

Every question becomes a ``Block`` of consecutive lines ending in ``#print axioms`` of the
declaration that answers it; an answer other than a rejection is given only on positive
confirmation (see ``leanbridge.asker``).
"""
from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from chains.rewrite.rules import Event
from chains.rewrite.trees import ADD, MUL, Tree
from leanbridge.errorclass import classify_error
from leanbridge.errors import RenderError
from leanbridge.render import LEMMAS, Statement, bound_atoms, lean_term
from leanbridge.verdicts import Accepted, Answer, Complete, Rejected

# Arity of each core lemma: the holes a probe leaves for Lean to fill.
_ARITY = {"N.add_comm": 2, "N.mul_comm": 2, "N.add_assoc": 3, "N.mul_assoc": 3,
          "N.left_distrib": 3, "N.right_distrib": 3}
_NAVIGATE = {"0": "congr_fst", "1": "congr_snd"}


@dataclass(frozen=True)
class Certify:
    """Is this statement a theorem that depends on no axiom?"""

    statement: Statement


@dataclass(frozen=True)
class Probe:
    """What does Lean make of ``event`` tried on ``tree``?"""

    tree: Tree
    event: Event


@dataclass(frozen=True)
class PathClaim:
    """``steps[k] = (tree_k, event_k)``: the claimer holds ``tree_k`` and applies ``event_k``;
    ``tree_0`` should be ``start`` and the last event should lead to ``target``. A claimer that
    holds no trees (it planned on latent states) gives ``tree_k = None`` for k > 0: Lean then
    infers every intermediate tree from the events' proof terms."""

    start: Tree
    target: Tree
    steps: tuple[tuple[Tree, Event], ...]

    @property
    def events(self) -> tuple[Event, ...]:
        return tuple(event for _, event in self.steps)


Question = Certify | Probe | PathClaim


@dataclass(frozen=True)
class Block:
    """A question written as consecutive lines; the last line audits ``name``'s axioms."""

    lines: tuple[str, ...]
    name: str
    check_offset: int | None = None  # for a probe: the line of its ``#check``, from the block's first


def probe_term(event: Event) -> str:
    """The proof term of a probe, with every argument a hole for Lean to fill."""
    if event.rule not in LEMMAS or event.path.strip("01"):
        raise RenderError(f"event {event} is not a known rule at a path of 0s and 1s")
    lemma, reverse = LEMMAS[event.rule]
    term = f"{lemma} {' '.join('_' * _ARITY[lemma])}"
    if reverse:
        term = f"Eq.symm ({term})"
    for step in reversed(event.path):
        term = f"{_NAVIGATE[step]} _ ({term})"
    return term


def probe_statement(question: Probe, atoms: Sequence[str]) -> Statement:
    """The declaration body of a probe: content-addressed like any statement."""
    bound = bound_atoms(atoms, [question.tree])
    return Statement("probe", f":= fun ({' '.join(bound)} : N) => "
                              f"({probe_term(question.event)} : Eq ({lean_term(question.tree)}) _)")


def render(question: Question, name: str, atoms: Sequence[str]) -> Block:
    """The lines of ``question`` under the declaration ``name``; RenderError for text outside the grammar."""
    if isinstance(question, Certify):
        return Block((f"theorem {name} {question.statement.text}", f"#print axioms {name}"), name)
    if isinstance(question, Probe):
        # no stated type: the type Lean infers is the answer (the linters are off in the header)
        body = probe_statement(question, atoms).text
        return Block((f"noncomputable def {name} {body}", f"#check @{name}", f"#print axioms {name}"),
                     name, check_offset=1)
    return _render_claim(question, name, atoms)


def _render_claim(q: PathClaim, name: str, atoms: Sequence[str]) -> Block:
    # Step k states the claimer's tree k equals its tree k + 1 (the target after the last
    # event) and is proved by the event's probe term, so Lean decides what each event yields;
    # the final theorem chains the steps with Eq.trans, so Lean also checks that they link up
    # from the true start to the true target.
    goal_atoms = bound_atoms(atoms, [q.start, q.target])
    if any(tree is None for tree, _ in q.steps[1:]):
        return _render_events_claim(q, name, goal_atoms)
    trees = [tree for tree, _ in q.steps] + [q.target]
    lines, links = [], []
    for k, (_, event) in enumerate(q.steps):
        step = f"{name}_{k}"
        bound = bound_atoms(atoms, trees[k:k + 2])
        lines.append(f"theorem {step} : ∀ ({' '.join(bound)} : N), Eq ({lean_term(trees[k])}) "
                     f"({lean_term(trees[k + 1])}) := fun {' '.join('_' * len(bound))} => {probe_term(event)}")
        links.append(f"({step} {' '.join(bound)})")
    if links:
        proof = links[-1]
        for link in reversed(links[:-1]):
            proof = f"Eq.trans {link} ({proof})"
        binder = " ".join(goal_atoms)
    else:
        proof, binder = "rfl", " ".join("_" for _ in goal_atoms)
    statement = f"Eq ({lean_term(q.start)}) ({lean_term(q.target)})"
    if goal_atoms:
        statement = f"∀ ({' '.join(goal_atoms)} : N), {statement}"
        proof = f"fun {binder} => {proof}"
    lines += [f"theorem {name} : {statement} := {proof}", f"#print axioms {name}"]
    return Block(tuple(lines), name)


def _render_events_claim(q: PathClaim, name: str, goal_atoms: Sequence[str]) -> Block:
    # One theorem start = target proved by the events' probe terms chained with Eq.trans: each
    # term is elaborated against (the tree Lean inferred so far) = _, so Lean decides what every
    # event yields, and the chain must end at the target.
    terms = [probe_term(event) for event in q.events]
    statement = f"Eq ({lean_term(q.start)}) ({lean_term(q.target)})"
    proof = f"({terms[-1]})" if terms else "rfl"
    for term in reversed(terms[:-1]):
        proof = f"Eq.trans ({term}) ({proof})"
    if goal_atoms:
        statement = f"∀ ({' '.join(goal_atoms)} : N), {statement}"
        proof = f"fun {' '.join(goal_atoms) if terms else ' '.join('_' for _ in goal_atoms)} => {proof}"
    return Block((f"theorem {name} : {statement} := {proof}", f"#print axioms {name}"), name)


def header(core_module: str) -> list[str]:
    # Synchronous elaboration: a declaration that fails is then not added at all (with async
    # elaboration it is added with a sorry-like value and #print axioms still says "none").
    # pp.fieldNotation off so that an inferred type reads ``N.add a b``. The linters are off:
    # they are style hints (an unused variable; "a def whose type is a Prop should be a
    # theorem", which a probe must be, since it must not state its type), not checks of a
    # proof, and they took an eighth of Lean's instructions per statement (benchmarks/lean_profile.py).
    return ["prelude", f"import {core_module}", "set_option Elab.async false",
            "set_option pp.fieldNotation false", "set_option linter.all false"]


def confirm(question: Question, block: Block, info: dict[int, str], first: int, atoms: Sequence[str]) -> Answer:
    """The answer to ``question`` from a file Lean finished without any error or warning:
    ``info`` maps line numbers to Lean's information messages; the block starts at ``first``."""
    said = info[first + len(block.lines) - 1]  # the asker has checked that Lean answered there
    if said != f"'{block.name}' does not depend on any axioms":
        return Rejected("axioms", said.splitlines()[0] if said else said)
    if not isinstance(question, Probe):
        return Complete()
    text = info.get(first + block.check_offset)
    if text is None:
        return Rejected("no_type", "no answer from #check")
    try:
        lhs, rhs = parse_inferred_type(text, block.name, atoms)
    except InferredTypeError as e:
        return Rejected("no_type", f"cannot read Lean's inferred type ({e}): {text[:120]}")
    if lhs != question.tree:
        return Rejected("no_type", "Lean's left side is not the tree asked about")
    return Accepted(rhs)


def rejection(question: Question, message: str) -> Rejected:
    """A rejection with its class read from Lean's message."""
    first = message.splitlines()[0] if message else ""
    if isinstance(question, Probe):
        return Rejected(probe_error_class(message), first)
    return Rejected(classify_error(message), first)


def with_goal(answer: Answer, goal: Tree | None) -> Answer:
    """A probe's answer relative to a goal: accepted onto the goal is complete."""
    if goal is not None and isinstance(answer, Accepted) and answer.tree == goal:
        return Complete(answer.tree)
    return answer


# -- reading Lean's text back ---------------------------------------------------------------

_NAME = {"N.add": ADD, "N.mul": MUL}
_TOKEN = re.compile(r"[(),]|[^\s(),]+")


class InferredTypeError(ValueError):
    pass


class _Reader:
    """The tokens of a type Lean printed, read left to right."""

    def __init__(self, text: str, atoms: Sequence[str]) -> None:
        self.toks, self.pos, self.atoms = _TOKEN.findall(text), 0, atoms

    def peek(self) -> str | None:
        return self.toks[self.pos] if self.pos < len(self.toks) else None

    def take(self, expected: str | None = None) -> str:
        if self.pos >= len(self.toks):
            raise InferredTypeError("type ends early")
        tok = self.toks[self.pos]
        self.pos += 1
        if expected is not None and tok != expected:
            raise InferredTypeError(f"expected {expected!r}, found {tok!r}")
        return tok

    def term(self) -> Tree:
        tok = self.take()
        if tok == "(":
            head = self.take()
            if head not in _NAME:
                raise InferredTypeError(f"unexpected head {head!r}")
            left, right = self.term(), self.term()
            self.take(")")
            return (_NAME[head], left, right)
        if tok in self.atoms:
            return tok
        raise InferredTypeError(f"unexpected token {tok!r}")

    def end(self) -> None:
        if self.pos != len(self.toks):
            raise InferredTypeError("trailing tokens after the equation")


def parse_inferred_type(text: str, name: str, atoms: Sequence[str]) -> tuple[Tree, Tree]:
    """Parse Lean's ``#check`` answer ``name : ∀ (a b : N), Eq lhs rhs`` into (lhs, rhs)."""
    read = _Reader(text, atoms)
    read.take(name)
    read.take(":")
    if read.peek() == "∀":
        read.take("∀")
        read.take("(")
        while read.peek() not in (":", None):
            if read.take() not in atoms:
                raise InferredTypeError("a bound variable that is not an atom")
        read.take(":")
        read.take("N")
        read.take(")")
        read.take(",")
    read.take("Eq")
    lhs, rhs = read.term(), read.term()
    read.end()
    return lhs, rhs


def parse_kernel_type(text: str, atoms: Sequence[str]) -> tuple[list[str], Tree, Tree]:
    """Parse the kernel route's rendering of a checked type (Lean's ``Expr`` printer, universes
    shown: ``forall (a : N) (b : N), Eq.{1} N lhs rhs``) into (bound atoms in order, lhs, rhs)."""
    read = _Reader(text, atoms)
    bound = []
    if read.peek() == "forall":
        read.take("forall")
        while read.peek() == "(":
            read.take("(")
            atom = read.take()
            if atom not in atoms:
                raise InferredTypeError("a bound variable that is not an atom")
            bound.append(atom)
            read.take(":")
            read.take("N")
            read.take(")")
        read.take(",")
    read.take("Eq.{1}")
    read.take("N")
    lhs, rhs = read.term(), read.term()
    read.end()
    return bound, lhs, rhs


_MISMATCH = re.compile(r"has type\s+Eq (?P<has>.*?)\s+but is expected to have type\s+Eq (?P<want>.*?)"
                       r"(?:\s+in the application|$)", re.DOTALL)
_META = re.compile(r"\?m\.\d+|\?\w+")


def _split_eq_sides(text: str) -> tuple[str, str] | None:
    """``(lhs) (rhs)`` or ``a ?m.3`` → the two argument texts of ``Eq``."""
    text = " ".join(text.split())
    sides, depth, start = [], 0, 0
    for i, ch in enumerate(text + " "):
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
        elif ch == " " and depth == 0:
            if i > start:
                sides.append(text[start:i])
            start = i + 1
    return (sides[0], sides[1]) if len(sides) == 2 else None


def _head(side: str) -> str:
    """The head symbol of a printed term: ``N.add``, ``N.mul``, an atom, or a metavariable."""
    return side.lstrip("(").split(" ")[0]


def probe_error_class(message: str) -> str:
    """Why Lean refused a probe, read from its type-mismatch message: the side of the expected
    ``Eq`` that is not a hole is the node the lemma met; compare it with the lemma's side."""
    match = _MISMATCH.search(message)
    if match is None:
        return classify_error(message)
    has, want = _split_eq_sides(match["has"]), _split_eq_sides(match["want"])
    if has is None or want is None:
        return classify_error(message)
    side = 0 if not _META.fullmatch(want[0]) else 1  # Eq.symm turns the node to the right
    node, lemma = _head(want[side]), _head(has[side])
    if node not in _NAME:
        return "leaf"
    if lemma in _NAME and lemma != node:
        return "operator"
    return "pattern"
