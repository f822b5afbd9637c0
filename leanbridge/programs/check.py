"""Program statements checked by the real Lean binary, many to a file, with positive confirmation.

Each statement is one theorem on one line, followed by ``#print axioms`` of it. A statement is
certified (``Complete``) only from a file that Lean finished without any error or warning, under
``Elab.async false``, and only when ``#print axioms`` said that its theorem depends on no axiom.
A file with errors rejects the statements whose lines the errors are on (``Rejected``, its class
read from Lean's message by ``leanbridge.errorclass``) and sends the rest to a new file, where
they are confirmed or not on their own. A Lean that crashes or times out on a file is retried,
then the file is bisected; on one statement alone it is an exception (``QuestionFailed``), never
an answer, and so is Lean running out of a resource (recursion depth, heartbeats), which says
nothing about the statement's truth.

``check_programs`` answers questions (``leanbridge.programs.questions``), ``answer_statements``
their theorems (``leanbridge.render.Statement``): cut into files (``batches``), each answered by
``answer_batch`` through an ``Executor``, as ``leanbridge.asker`` does for rewrite chains: over
``jobs`` Lean processes here (``LocalExecutor``, the default), or as tasks on the nodes of a Ray
cluster (``leanbridge.cluster.RayProgramsExecutor``, which refuses a node with another Lean or
programs library). ``answer_batch`` is a pure function of its arguments, so it runs in a thread
here or on another machine alike.
"""
from __future__ import annotations

import math
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, replace
from typing import Protocol

from leanbridge.batch import BatchResult, QuestionFailed, answered_in_threads
from leanbridge.discovery import LeanInstall
from leanbridge.errorclass import classify_error
from leanbridge.process import LeanLimits
from leanbridge.programs.library import PROGRAMS_MODULE, ProgramsLibrary
from leanbridge.programs.questions import ProgramQuestion
from leanbridge.programs.render import nesting
from leanbridge.render import Statement
from leanbridge.runner import LeanRunError, Message, run_lean_file, with_retries
from leanbridge.verdicts import Answer, Complete, Rejected

# Error classes that say Lean ran out of something, not that the statement is false.
RESOURCE_CLASSES = ("timeout", "max_recursion")
Items = list[tuple[int, Statement]]  # one file's statements, each with its index in the caller's list


@dataclass(frozen=True)
class CheckConfig:
    """How program statements reach Lean."""

    jobs: int = 1  # Lean processes at once
    batch_size: int = 1000  # theorems per Lean file at most
    batch_chars: int = 4_000_000  # characters of statements per Lean file at most (about 20 s of Lean)
    retries: int = 1  # reruns of a file whose Lean crashed, before bisecting it
    limits: LeanLimits = LeanLimits()


def header(depth: int, module: str = PROGRAMS_MODULE) -> list[str]:
    """The lines before the statements: the library ``module``, synchronous elaboration (a failed
    theorem is then not added at all), no linters (style hints, never checks of a proof), no
    heartbeat limit (the wall-clock limit stands), and a recursion depth for terms ``depth``
    parentheses deep."""
    return ["prelude", f"import {module}", "set_option Elab.async false", "set_option linter.all false",
            "set_option maxHeartbeats 0", f"set_option maxRecDepth {max(512, 4 * depth + 512)}"]


HEADER_LINES = len(header(0))


def batches(statements: Sequence[Statement], config: CheckConfig) -> list[list[int]]:
    """Indices of the files for ``statements``: consecutive, none over ``batch_size`` theorems nor
    (unless one statement alone is) ``batch_chars`` characters, and at least ``jobs`` files once
    there are enough statements, so that no process idles while another has work."""
    if not statements:
        return []
    total = sum(len(s.text) for s in statements)
    files = max(math.ceil(len(statements) / config.batch_size), math.ceil(total / config.batch_chars),
                min(max(1, config.jobs), len(statements)))
    share = math.ceil(total / files)
    out: list[list[int]] = [[]]
    size = 0
    for index, statement in enumerate(statements):
        if out[-1] and (size + len(statement.text) > share or len(out[-1]) >= config.batch_size):
            out.append([])
            size = 0
        out[-1].append(index)
        size += len(statement.text)
    return out


class Executor(Protocol):
    """Where files of program statements are answered: ``slots`` Lean processes at once;
    ``answers`` yields each file's result as it is ready, in any order, and raises the first
    failure (the shape of ``leanbridge.asker.Executor``)."""

    slots: int

    def answers(self, config: CheckConfig, batches: list[Items]) -> Iterator[BatchResult]: ...


class LocalExecutor:
    """Files answered by Lean processes on this machine, one thread per process."""

    def __init__(self, lean: LeanInstall, library: ProgramsLibrary, jobs: int) -> None:
        self.lean, self.library, self.slots = lean, library, max(1, jobs)

    def answers(self, config: CheckConfig, batches: list[Items]) -> Iterator[BatchResult]:
        def task(items: Items) -> BatchResult:
            return answer_batch(self.lean, self.library, items, config)

        return answered_in_threads(task, batches, self.slots)


def check_programs(questions: Sequence[ProgramQuestion], lean: LeanInstall, library: ProgramsLibrary,
                   limits: LeanLimits = LeanLimits(), jobs: int = 1, executor: Executor | None = None
                   ) -> tuple[list[Answer], int]:
    """Lean's answer to each question, in order (``Complete`` or ``Rejected``), and the number of
    Lean processes started, over ``jobs`` processes here unless an ``executor`` is given (then
    its ``slots``). Identical theorems are asked once."""
    theorems = [q.theorem for q in questions]
    distinct = list(dict.fromkeys(theorems))
    answers, processes = answer_statements(lean, library, distinct, CheckConfig(jobs=jobs, limits=limits), executor)
    found = dict(zip(distinct, answers))
    return [found[t] for t in theorems], processes


def answer_statements(lean: LeanInstall, library: ProgramsLibrary, statements: Sequence[Statement],
                      config: CheckConfig = CheckConfig(), executor: Executor | None = None
                      ) -> tuple[list[Answer], int]:
    """Lean's answer to each statement, in order (``Complete`` or ``Rejected``), and the number of
    Lean processes started; the files go to ``executor`` (default: ``config.jobs`` threads here),
    at least one for each of its slots once there are enough statements."""
    executor = executor if executor is not None else LocalExecutor(lean, library, config.jobs)
    answers: list[Answer | None] = [None] * len(statements)
    processes = 0
    groups = batches(statements, replace(config, jobs=executor.slots))
    for result in executor.answers(config, [[(i, statements[i]) for i in rows] for rows in groups]):
        processes += result.processes
        for index, answer in result.answers:
            answers[index] = answer
    return answers, processes  # type: ignore[return-value]


def answer_batch(lean: LeanInstall, library: ProgramsLibrary, items: Sequence[tuple[int, Statement]],
                 config: CheckConfig = CheckConfig()) -> BatchResult:
    """``(index, answer)`` for ``(index, statement)`` pairs, in as few Lean files as the answers
    allow, with the number of Lean processes that took and their seconds. ``library`` is any
    compiled module with its ``module`` name and ``olean_dir`` (the programs library, or a domain's
    own module: ``leanbridge.domain_lean``)."""
    tally = [0, 0.0]  # processes started, seconds

    def run(named: list[tuple[int, Statement]]) -> list[Message]:
        lines = header(max(nesting(s) for _, s in named), library.module)
        for index, statement in named:
            lines += [f"theorem q{index} {statement.text}", f"#print axioms q{index}"]
        source = "\n".join(lines) + "\n"
        return with_retries(lambda: run_lean_file(lean, source, library.olean_dir, config.limits), config.retries,
                            tally)

    answers = _answer(list(items), run)
    return BatchResult(tuple(answers), int(tally[0]), tally[1])


def _answer(named: list[tuple[int, Statement]], run: Callable[[list[tuple[int, Statement]]], list[Message]]
            ) -> list[tuple[int, Answer]]:
    if not named:
        return []
    try:
        messages = run(named)
    except LeanRunError as e:
        if len(named) > 1:
            return _halves(named, run)
        raise QuestionFailed(f"Lean failed on program statement {named[0][0]}: {e}", named[0][0]) from e
    # statement p is on line HEADER_LINES + 2p + 1, its #print axioms on the next
    info: dict[int, str] = {}
    problems: dict[int, str] = {}
    outside = []
    for m in messages:
        if m.severity == "information":
            info[m.line] = m.text
            continue
        p = (m.line - HEADER_LINES - 1) // 2
        if m.line <= HEADER_LINES or p >= len(named):
            outside.append(m)
        else:
            problems.setdefault(p, m.text if m.severity == "error" else f"warning: {m.text}")
    if outside:
        if len(named) > 1:
            return _halves(named, run)
        raise LeanRunError(f"Lean reported outside any statement: {outside[0].severity}: "
                           f"{outside[0].text.splitlines()[0] if outside[0].text else ''}")
    if problems:
        answers = []
        for p, message in problems.items():
            rejected = rejection(message)
            if rejected.error_class in RESOURCE_CLASSES or "deep recursion" in message:
                raise QuestionFailed(f"Lean ran out of a resource on program statement {named[p][0]}: "
                                     f"{rejected.message}", named[p][0])
            answers.append((named[p][0], rejected))
        rest = [item for p, item in enumerate(named) if p not in problems]
        return answers + _answer(rest, run)
    answers = []
    for p, (index, _) in enumerate(named):
        said = info.get(HEADER_LINES + 2 * p + 2)
        if said is None:
            raise QuestionFailed(f"Lean finished without an error but said nothing about program statement {index} "
                                 "(no #print axioms answer)", index)
        if said == f"'q{index}' does not depend on any axioms":
            answers.append((index, Complete()))
        else:
            answers.append((index, Rejected("axioms", said.splitlines()[0] if said else said)))
    return answers


def _halves(named: list[tuple[int, Statement]], run: Callable[[list[tuple[int, Statement]]], list[Message]]
            ) -> list[tuple[int, Answer]]:
    mid = len(named) // 2
    return _answer(named[:mid], run) + _answer(named[mid:], run)


def rejection(message: str) -> Rejected:
    """A rejection with its class read from Lean's message, and the message's first line."""
    return Rejected(classify_error(message), message.splitlines()[0] if message else "")
