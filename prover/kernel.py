"""The counted kernel service: every question a searcher puts to Lean passes through
``Kernel.ask`` and is counted against its owner (one search problem).

Two questions exist.

- ``Successor(tree, event)``: what is the tree after this event? The answer comes from Lean,
  not from Python: the question sends only the congruence *proof term* of the step
  (``congrArg (fun t => context) (lemma bindings)``, the same term the certifier uses) as a
  ``def`` without a stated type, then ``#check``s it and reads the type Lean inferred,
  ``∀ atoms, Eq lhs rhs``; ``rhs`` parsed back into a tree is the answer. Python's own
  ``chains.rules.apply`` never reaches the file or the answer. The answer counts only on
  positive confirmation: the file had no error or warning and ``#print axioms`` said the
  definition depends on no axiom. (Proposing which events to ask about is the searcher's
  syntactic pattern match on a tree it holds; the kernel decides what the step yields.)
- ``PathClaim(start, target, steps)``: is this a path from ``start`` to ``target``? One
  question, however long the path: each step is a theorem stating the claimer's own tree
  before the step equals that tree after the event (rendered by ``leanbridge.render``), and a
  final theorem ``∀ atoms, start = target`` is proved by ``Eq.trans`` of the step theorems.
  Lean then checks that the steps chain (the right side of each is the left side of the
  next), begin at the true start and end at the true target; a claimer whose trees are wrong
  is refused at the first link that does not hold. Certified only on positive confirmation
  of the final theorem.

Many questions go into one Lean file (one Lean process), up to ``batch_size`` per file and
``jobs`` files at once; the count is of questions, and the service also counts the Lean
processes and the distinct questions actually elaborated. Answers are values; a Lean that
crashes or cannot start is an exception (``KernelError``). With ``reuse_answers`` an identical
question asked again (by any owner) is answered from this service's memory of Lean's earlier
answer; it is still counted as a question.
"""
from __future__ import annotations

import re
import threading
import time
from collections import Counter
from collections.abc import Hashable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

from chains.rules import Event, redex
from chains.trees import ADD, MUL, Tree
from leanbridge.corelib import CoreLibrary
from leanbridge.discovery import LeanInstall
from leanbridge.errors import LeanBridgeError, RenderError
from leanbridge.render import bound_atoms, file_header, lean_term, step_proof, step_statement
from leanbridge.runner import LeanLimits, LeanRunError, Message, run_lean_file

CERTIFIED, REJECTED = "certified", "rejected"


class KernelError(Exception):
    """Lean could not answer (crash, time-out, unexpected output): the run stops."""


class BudgetExceeded(Exception):
    """A searcher asked more questions than its budget allows (a bug in the searcher)."""


@dataclass(frozen=True)
class KernelConfig:
    """How questions reach Lean."""

    jobs: int = 2  # Lean processes at once
    limits: LeanLimits = LeanLimits(timeout_s=300.0, memory_mb=8192)
    batch_size: int = 2000  # questions per Lean file at most
    reuse_answers: bool = True  # answer a repeated identical question from memory (still counted)


@dataclass(frozen=True)
class Successor:
    """What is ``tree`` after ``event``?"""

    tree: Tree
    event: Event


@dataclass(frozen=True)
class PathClaim:
    """``steps[k] = (tree_k, event_k)``: the claimer holds ``tree_k`` and applies ``event_k``;
    ``tree_0`` should be ``start`` and the last event should lead to ``target``."""

    start: Tree
    target: Tree
    steps: tuple[tuple[Tree, Event], ...]

    @property
    def events(self) -> tuple[Event, ...]:
        return tuple(event for _, event in self.steps)


Question = Successor | PathClaim


@dataclass(frozen=True)
class Answer:
    """Lean's answer on one question."""

    status: str  # CERTIFIED or REJECTED
    tree: Tree | None = None  # for a Successor: the tree Lean inferred after the event
    detail: str = ""  # why it was rejected

    @property
    def certified(self) -> bool:
        return self.status == CERTIFIED


@dataclass
class _Block:
    """One question rendered as consecutive lines of a Lean file."""

    question: Question
    lines: list[str]
    confirm: str  # the declaration whose axioms are audited
    check_line: int | None = None  # for a Successor: offset of its #check line in ``lines``
    refused: str | None = None  # set when the question cannot even be rendered


def _render_successor(q: Successor, name: str, atoms: Sequence[str]) -> _Block:
    if redex(q.tree, q.event) is None:
        return _Block(q, [], name, refused=f"event {q.event} has no redex in the tree")
    # the proof term alone, with no stated type: the type Lean infers is the answer
    names, proof = bound_atoms(atoms, [q.tree]), step_proof(q.tree, q.event)
    lines = [f"noncomputable def {name} := fun ({' '.join(names)} : N) => {proof}",
             f"#check @{name}",
             f"#print axioms {name}"]
    return _Block(q, lines, name, check_line=1)


def _render_claim(q: PathClaim, name: str, atoms: Sequence[str]) -> _Block:
    try:
        goal_atoms = bound_atoms(atoms, [q.start, q.target])
    except RenderError:
        return _Block(q, [], name, refused="start or target names an atom outside the domain")
    lines, links = [], []
    for k, (tree, event) in enumerate(q.steps):
        if redex(tree, event) is None:
            return _Block(q, [], name, refused=f"step {k}: event {event} has no redex in the claimed tree")
        step = f"{name}_{k}"
        lines.append(f"theorem {step} : {step_statement(tree, event, atoms).text}")
        bound = bound_atoms(atoms, [tree])
        links.append(f"({step} {' '.join(bound)})" if bound else step)
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
    lines.append(f"theorem {name} : {statement} := {proof}")
    lines.append(f"#print axioms {name}")
    return _Block(q, lines, name)


_NAME = {"N.add": ADD, "N.mul": MUL}


_TOKEN = re.compile(r"[(),]|[^\s(),]+")


class _TypeSyntaxError(ValueError):
    pass


def parse_inferred_type(text: str, name: str, atoms: Sequence[str]) -> tuple[Tree, Tree]:
    """Parse Lean's ``#check`` answer ``name : ∀ (a b : N), Eq lhs rhs`` into (lhs, rhs)."""
    toks = _TOKEN.findall(text)
    pos = 0

    def take(expected: str | None = None) -> str:
        nonlocal pos
        if pos >= len(toks):
            raise _TypeSyntaxError("type ends early")
        tok = toks[pos]
        pos += 1
        if expected is not None and tok != expected:
            raise _TypeSyntaxError(f"expected {expected!r}, found {tok!r}")
        return tok

    def term() -> Tree:
        tok = take()
        if tok == "(":
            head = take()
            if head not in _NAME:
                raise _TypeSyntaxError(f"unexpected head {head!r}")
            left, right = term(), term()
            take(")")
            return (_NAME[head], left, right)
        if tok in atoms:
            return tok
        raise _TypeSyntaxError(f"unexpected token {tok!r}")

    take(name)
    take(":")
    if pos < len(toks) and toks[pos] == "∀":
        take("∀")
        take("(")
        while toks[pos] != ":":
            if take() not in atoms:
                raise _TypeSyntaxError("a bound variable that is not an atom")
        take(":")
        take("N")
        take(")")
        take(",")
    take("Eq")
    lhs, rhs = term(), term()
    if pos != len(toks):
        raise _TypeSyntaxError("trailing tokens after the equation")
    return lhs, rhs


def _key(question: Question) -> Hashable:
    return question


class Kernel:
    """The counted service. ``calls[owner]`` is the number of questions ``owner`` asked;
    ``budget`` (per owner, None for none) is enforced here, before anything reaches Lean."""

    def __init__(self, lean: LeanInstall, core: CoreLibrary, atoms: Sequence[str],
                 config: KernelConfig = KernelConfig(), budget: int | None = None) -> None:
        self.lean, self.core, self.atoms, self.config, self.budget = lean, core, tuple(atoms), config, budget
        self.calls: Counter[Hashable] = Counter()  # questions asked, per owner
        self.questions = 0  # questions asked, all owners
        self.processes = 0  # Lean processes started
        self.elaborated = 0  # distinct questions sent to Lean (the rest answered from memory)
        self.lean_seconds = 0.0  # wall time spent waiting for Lean
        self._memory: dict[Hashable, Answer] = {}
        self._lock = threading.Lock()

    def remaining(self, owner: Hashable) -> int | None:
        return None if self.budget is None else self.budget - self.calls[owner]

    def ask(self, questions: Sequence[tuple[Hashable, Question]]) -> list[Answer]:
        """Answer ``(owner, question)`` pairs, all counted; raises BudgetExceeded (asking
        nothing) when an owner would pass its budget."""
        wanted = Counter(owner for owner, _ in questions)
        if self.budget is not None:
            for owner, n in wanted.items():
                if self.calls[owner] + n > self.budget:
                    raise BudgetExceeded(f"{owner} would ask {self.calls[owner] + n} questions, "
                                         f"over its budget of {self.budget}")
        self.calls.update(wanted)
        self.questions += len(questions)
        todo: dict[Hashable, Question] = {}
        for _, q in questions:
            k = _key(q)
            if not (self.config.reuse_answers and k in self._memory):
                todo.setdefault(k, q)
        if todo:
            answers = self._answer(list(todo.values()))
            self.elaborated += len(todo)
            fresh = dict(zip(todo, answers))
            if self.config.reuse_answers:
                self._memory.update(fresh)
        else:
            fresh = {}
        return [fresh[_key(q)] if _key(q) in fresh else self._memory[_key(q)] for _, q in questions]

    def successor(self, owner: Hashable, tree: Tree, event: Event) -> Answer:
        return self.ask([(owner, Successor(tree, event))])[0]

    def certify_path(self, owner: Hashable, claim: PathClaim) -> Answer:
        return self.ask([(owner, claim)])[0]

    # -- Lean files -------------------------------------------------------------------------

    def _answer(self, questions: list[Question]) -> list[Answer]:
        blocks = []
        for i, q in enumerate(questions):
            name = f"k{i}" if isinstance(q, Successor) else f"c{i}"
            try:
                render = _render_successor if isinstance(q, Successor) else _render_claim
                blocks.append(render(q, name, self.atoms))
            except RenderError as e:
                blocks.append(_Block(q, [], name, refused=f"cannot be rendered: {e}"))
        answers: list[Answer | None] = [None] * len(blocks)
        live = []
        for i, b in enumerate(blocks):
            if b.refused is not None:
                answers[i] = Answer(REJECTED, detail=b.refused)
            else:
                live.append(i)
        size = self.config.batch_size
        chunks = [live[i:i + size] for i in range(0, len(live), size)]
        # at least one chunk per job, so both processes work on a large round
        if len(chunks) < self.config.jobs and len(live) >= 2 * self.config.jobs:
            per = -(-len(live) // self.config.jobs)
            chunks = [live[i:i + per] for i in range(0, len(live), per)]
        if len(chunks) <= 1:
            results = [self._run_chunk(blocks, c) for c in chunks]
        else:
            with ThreadPoolExecutor(max_workers=self.config.jobs) as pool:
                results = list(pool.map(lambda c: self._run_chunk(blocks, c), chunks))
        for result in results:
            for i, answer in result.items():
                answers[i] = answer
        return answers  # type: ignore[return-value]

    def _header(self) -> list[str]:
        # pp.fieldNotation off so that the inferred type reads ``N.add a b``; the defProp lint
        # (a style hint: "a def whose type is a Prop should be a theorem") is off because a
        # theorem needs a stated type, which is what the successor question must not give.
        return [*file_header(self.core.module), "set_option pp.fieldNotation false",
                "set_option linter.defProp false"]

    def _run(self, source: str) -> list[Message]:
        start = time.perf_counter()
        with self._lock:
            self.processes += 1
        try:
            messages = run_lean_file(self.lean, source, self.core.olean_dir, self.config.limits)
        except LeanRunError as e:
            raise KernelError(f"Lean could not answer the kernel's questions: {e}") from e
        finally:
            with self._lock:
                self.lean_seconds += time.perf_counter() - start
        return messages

    def _run_chunk(self, blocks: list[_Block], chunk: list[int]) -> dict[int, Answer]:
        """Answers for ``blocks[i]``, ``i`` in ``chunk``: a file with errors rejects the blocks
        they point at and sends the rest to a fresh file, so every certified answer comes
        from a file Lean finished without any error or warning."""
        out: dict[int, Answer] = {}
        pending = list(chunk)
        while pending:
            header = self._header()
            lines = list(header)
            spans = []  # (first line, last line) 1-based of each pending block
            for i in pending:
                first = len(lines) + 1
                lines.extend(blocks[i].lines)
                spans.append((first, len(lines)))
            messages = self._run("\n".join(lines) + "\n")
            problems: dict[int, str] = {}
            info: dict[int, str] = {}  # line -> information text
            for m in messages:
                owner = next((p for p, (a, b) in enumerate(spans) if a <= m.line <= b), None)
                if m.severity == "information":
                    info[m.line] = m.text
                    continue
                if owner is None:
                    raise KernelError(f"Lean reported outside any question: {m.severity}: "
                                      f"{m.text.splitlines()[0] if m.text else ''}")
                problems.setdefault(owner, f"{m.severity}: {m.text.splitlines()[0] if m.text else ''}")
            if problems:
                for p, why in problems.items():
                    out[pending[p]] = Answer(REJECTED, detail=why)
                pending = [i for p, i in enumerate(pending) if p not in problems]
                continue
            for p, i in enumerate(pending):
                out[i] = self._confirm(blocks[i], spans[p][0], info)
            pending = []
        return out

    def _confirm(self, block: _Block, first: int, info: dict[int, str]) -> Answer:
        axioms_line = first + len(block.lines) - 1
        said = info.get(axioms_line, "no answer from #print axioms")
        if said != f"'{block.confirm}' does not depend on any axioms":
            return Answer(REJECTED, detail=f"axioms: {said}")
        if isinstance(block.question, PathClaim):
            return Answer(CERTIFIED)
        text = info.get(first + block.check_line)
        if text is None:
            return Answer(REJECTED, detail="no answer from #check")
        try:
            lhs, rhs = parse_inferred_type(text, block.confirm, self.atoms)
        except _TypeSyntaxError as e:
            return Answer(REJECTED, detail=f"cannot read Lean's inferred type ({e}): {text[:120]}")
        if lhs != block.question.tree:
            return Answer(REJECTED, detail="Lean's left side is not the tree asked about")
        return Answer(CERTIFIED, tree=rhs)


def open_kernel(atoms: Sequence[str], config: KernelConfig = KernelConfig(), budget: int | None = None) -> Kernel:
    """A kernel on the project's Lean and core library (found and built on first use)."""
    from leanbridge.corelib import build_core
    from leanbridge.discovery import PROBE_TIMEOUT_S, find_lean

    try:
        lean = find_lean(min(PROBE_TIMEOUT_S, config.limits.timeout_s))
        core = build_core(lean, config.limits)
    except LeanBridgeError as e:
        raise KernelError(str(e)) from e
    return Kernel(lean, core, atoms, config, budget)
