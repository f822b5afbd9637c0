"""The counted kernel service: every question a searcher puts to Lean passes through
``Kernel.ask`` and is counted against its owner (one search problem).

Two kinds of question are asked, both written, run and judged by ``leanbridge`` (this module
only counts them): ``Probe(tree, event)``, what is the tree after this event? (accepted with
the tree Lean inferred from the event's proof term, or rejected with Lean's reason), and
``PathClaim(start, target, steps)``, is this a path from ``start`` to ``target``? (one
question however long the path; complete when Lean accepts it). See ``leanbridge.questions``.

The count is of questions; the service also counts the Lean processes and the distinct
questions actually sent to Lean. Answers are values; a Lean that crashes or cannot start is an
exception (``KernelError``). With ``reuse_answers`` an identical question asked again (by any
owner) is answered from this service's memory of Lean's earlier answer; it is still counted
as a question.
"""
from __future__ import annotations

from collections import Counter
from collections.abc import Hashable, Sequence
from dataclasses import dataclass

from leanbridge.asker import AskConfig, Asker
from leanbridge.corelib import CoreLibrary
from leanbridge.discovery import LeanInstall
from leanbridge.errors import LeanBridgeError
from leanbridge.questions import PathClaim, Probe
from leanbridge.runner import LeanLimits
from leanbridge.verdicts import Answer

__all__ = ["BudgetExceeded", "Kernel", "KernelConfig", "KernelError", "PathClaim", "Probe", "open_kernel"]

Question = Probe | PathClaim


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

    @property
    def ask(self) -> AskConfig:
        return AskConfig(jobs=self.jobs, limits=self.limits, batch_size=self.batch_size)


class Kernel:
    """The counted service. ``calls[owner]`` is the number of questions ``owner`` asked;
    ``budget`` (per owner, None for none) is enforced here, before anything reaches Lean."""

    def __init__(self, lean: LeanInstall, core: CoreLibrary, atoms: Sequence[str],
                 config: KernelConfig = KernelConfig(), budget: int | None = None) -> None:
        self.lean, self.core, self.atoms, self.config, self.budget = lean, core, tuple(atoms), config, budget
        self.calls: Counter[Hashable] = Counter()  # questions asked, per owner
        self.questions = 0  # questions asked, all owners
        self.elaborated = 0  # distinct questions sent to Lean (the rest answered from memory)
        self._asker = Asker(lean, core, atoms, config.ask)
        self._memory: dict[Question, Answer] = {}

    @property
    def processes(self) -> int:
        """Lean processes started."""
        return self._asker.processes

    @property
    def lean_seconds(self) -> float:
        """Wall time spent in Lean, summed over processes."""
        return self._asker.lean_seconds

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
        todo = list(dict.fromkeys(q for _, q in questions
                                  if not (self.config.reuse_answers and q in self._memory)))
        fresh: dict[Question, Answer] = {}
        if todo:
            try:
                fresh = dict(zip(todo, self._asker.ask(todo)))
            except LeanBridgeError as e:
                raise KernelError(f"Lean could not answer the kernel's questions: {e}") from e
            self.elaborated += len(todo)
            if self.config.reuse_answers:
                self._memory.update(fresh)
        return [fresh[q] if q in fresh else self._memory[q] for _, q in questions]


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
