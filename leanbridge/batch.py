"""Answer one batch of questions in as few Lean files as the answers allow, with positive confirmation.

An answer other than a rejection is given only from a file Lean finished without any error
or warning, and only when ``#print axioms`` said that the question's declaration depends on
no axiom. (Lean prints that answer even for a declaration whose elaboration failed, and stops
reporting errors after about a hundred in a file, so neither the answer alone nor silence is
enough.) A file with errors rejects the questions the errors point at, each with Lean's
message, and sends the rest to a new file. A file whose Lean crashes or times out is retried,
then bisected, so that the question at fault is isolated; Lean crashing or timing out on a
single question is an exception (``QuestionFailed``), never an answer.

``answer_batch`` is the unit of work of ``leanbridge.asker``: a pure function of its arguments,
so it can run in a thread here or as a task on another machine (``leanbridge.cluster``), and
``AskConfig`` travels with it. With ``AskConfig.checker`` ``Checker.KERNEL`` it sends the steps
and equivalences (``Certify``) to the kernel route (``leanbridge.kernel``, the same retry and
bisection, the same positive confirmation read from the kernel); probes and path claims are
elaborated against holes, so they always go to Lean's elaborator as text.
"""
from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass

from leanbridge.checker import Checker
from leanbridge.corelib import CoreLibrary
from leanbridge.discovery import LeanInstall
from leanbridge.kernel import answer_kernel_batch
from leanbridge.questions import Block, Certify, Question, confirm, header, rejection, render
from leanbridge.runner import LeanLimits, LeanRunError, Message, run_lean_file, with_retries
from leanbridge.verdicts import Answer


class QuestionFailed(LeanRunError):
    """Lean crashed, timed out or said nothing on one question alone; ``index`` is its place in the
    caller's list."""

    def __init__(self, message: str, index: int) -> None:
        super().__init__(message)
        self.index = index


@dataclass(frozen=True)
class AskConfig:
    """How questions reach Lean."""

    jobs: int = 2  # Lean processes at once
    limits: LeanLimits = LeanLimits()
    batch_size: int = 1000  # questions per Lean file at most
    retries: int = 1  # reruns of a file whose Lean crashed, before bisecting it
    cluster: str | None = None  # a Ray address ("auto": a running local cluster); None: Lean here
    checker: Checker = Checker.ELABORATOR  # who certifies steps and equivalences

    def __post_init__(self) -> None:
        if not isinstance(self.checker, Checker):  # a name is read into a Checker where it enters
            raise TypeError(f"checker must be a Checker, not {type(self.checker).__name__}")


@dataclass(frozen=True)
class BatchResult:
    answers: tuple[tuple[int, Answer], ...]  # (index in the caller's list, answer)
    processes: int  # Lean processes this batch started
    seconds: float  # wall time spent in Lean


def answer_batch(lean: LeanInstall, core: CoreLibrary, atoms: Sequence[str], limits: LeanLimits,
                 items: Sequence[tuple[int, Question]], retries: int = 1,
                 checker: Checker = Checker.ELABORATOR) -> BatchResult:
    """Answer ``(index, question)`` pairs in as few Lean files (or kcheck runs) as the answers allow."""
    if checker is Checker.KERNEL:
        certify = [(i, q) for i, q in items if isinstance(q, Certify)]
        answers, processes, seconds = answer_kernel_batch(lean, core, atoms, limits, certify, retries, QuestionFailed)
        rest = [(i, q) for i, q in items if not isinstance(q, Certify)]
        if rest:
            text = answer_batch(lean, core, atoms, limits, rest, retries)
            answers += text.answers
            processes, seconds = processes + text.processes, seconds + text.seconds
        return BatchResult(tuple(answers), processes, seconds)
    runs = [0, 0.0]

    def run(blocks: list[Block]) -> list[Message]:
        lines = header(core.module)
        for block in blocks:
            lines.extend(block.lines)
        source = "\n".join(lines) + "\n"
        return with_retries(lambda: run_lean_file(lean, source, core.olean_dir, limits), retries, runs)

    named = [(index, q, render(q, f"q{index}", atoms)) for index, q in items]
    answers = _answer(named, run, atoms, len(header(core.module)))
    return BatchResult(tuple(answers), runs[0], runs[1])


def _answer(named: list[tuple[int, Question, Block]], run: Callable[[list[Block]], list[Message]],
            atoms: Sequence[str], header_lines: int) -> list[tuple[int, Answer]]:
    try:
        messages = run([block for _, _, block in named])
    except LeanRunError as e:
        if len(named) > 1:
            mid = len(named) // 2
            return _answer(named[:mid], run, atoms, header_lines) + _answer(named[mid:], run, atoms, header_lines)
        index, question, _ = named[0]
        raise QuestionFailed(f"Lean failed on {type(question).__name__.lower()} {index}: {e}", index) from e
    spans, line = [], header_lines + 1
    for _, _, block in named:
        spans.append((line, line + len(block.lines) - 1))
        line += len(block.lines)
    problems: dict[int, str] = {}  # position in ``named`` -> Lean's first complaint about it
    info: dict[int, str] = {}  # line -> information text
    outside = []
    for m in messages:
        if m.severity == "information":
            info[m.line] = m.text
            continue
        owner = _owner(spans, m.line)
        if owner is None:
            outside.append(m)
        else:
            problems.setdefault(owner, m.text if m.severity == "error" else f"warning: {m.text}")
    if outside:
        if len(named) > 1:
            mid = len(named) // 2
            return _answer(named[:mid], run, atoms, header_lines) + _answer(named[mid:], run, atoms, header_lines)
        raise LeanRunError(f"Lean reported outside any question: {outside[0].severity}: "
                           f"{outside[0].text.splitlines()[0] if outside[0].text else ''}")
    if problems:
        rejected = [(named[p][0], rejection(named[p][1], why)) for p, why in problems.items()]
        rest = [item for p, item in enumerate(named) if p not in problems]
        return rejected + (_answer(rest, run, atoms, header_lines) if rest else [])
    # A file without an error or warning answers every question on its last line, #print axioms.
    # Silence there is no answer at all (a Lean that does not elaborate what it is given), never
    # a rejection and never a confirmation.
    silent = [p for p, span in enumerate(spans) if span[1] not in info]
    if silent:
        index, question, _ = named[silent[0]]
        raise QuestionFailed(f"Lean finished without an error but said nothing about {type(question).__name__.lower()} "
                             f"{index} (no #print axioms answer): it is not answering questions", index)
    return [(index, confirm(q, block, info, spans[p][0], atoms)) for p, (index, q, block) in enumerate(named)]


def _owner(spans: list[tuple[int, int]], line: int) -> int | None:
    lo, hi = 0, len(spans) - 1  # spans are sorted and contiguous
    while lo <= hi:
        mid = (lo + hi) // 2
        first, last = spans[mid]
        if line < first:
            hi = mid - 1
        elif line > last:
            lo = mid + 1
        else:
            return mid
    return None


Items = list[tuple[int, Question]]


def answered_in_threads(task: Callable[[Items], BatchResult], batches: list[Items], slots: int) -> Iterator[BatchResult]:
    """``task`` of every batch, ``slots`` threads at once (each drives one Lean process), each
    result as it is ready; the first failure is raised, and a consumer that stops early starts
    nothing more. The local executors of both domains answer their batches so."""
    if slots <= 1 or len(batches) <= 1:
        yield from map(task, batches)
        return
    with ThreadPoolExecutor(max_workers=slots) as pool:
        futures = [pool.submit(task, items) for items in batches]
        try:
            for future in as_completed(futures):
                yield future.result()
        finally:  # a failure, or the consumer stopped early: start nothing more
            for future in futures:
                future.cancel()
