"""Put lists of questions to Lean in batches, over several processes here or over a Ray cluster.

The questions are cut into batches (files) so that no process idles at the end; each batch is
answered by ``leanbridge.batch.answer_batch`` (positive confirmation, retries and bisection), in
a thread here (``LocalExecutor``) or as a task on another machine (``leanbridge.cluster``,
imported only when ``AskConfig.cluster`` names a Ray cluster).
"""
from __future__ import annotations

import math
from collections.abc import Callable, Iterator, Sequence
from types import ModuleType
from typing import Protocol

from leanbridge.batch import AskConfig, BatchResult, Items, answer_batch, answered_in_threads
from leanbridge.corelib import CoreLibrary
from leanbridge.discovery import LeanInstall
from leanbridge.errors import LeanBridgeError
from leanbridge.questions import Question
from leanbridge.verdicts import Answer


class Executor(Protocol):
    """Where batches are answered: ``slots`` Lean processes at once; ``answers`` yields each
    batch's result as it is ready, in any order, and raises the first failure."""

    slots: int

    def answers(self, atoms: tuple[str, ...], config: AskConfig, batches: list[Items]) -> Iterator[BatchResult]: ...


class LocalExecutor:
    """Batches answered by Lean processes on this machine, one thread per process."""

    def __init__(self, lean: LeanInstall, core: CoreLibrary, jobs: int) -> None:
        self.lean, self.core, self.slots = lean, core, max(1, jobs)

    def answers(self, atoms: tuple[str, ...], config: AskConfig, batches: list[Items]) -> Iterator[BatchResult]:
        def task(items: Items) -> BatchResult:
            return answer_batch(self.lean, self.core, atoms, config.limits, items, config.retries, config.checker)

        return answered_in_threads(task, batches, self.slots)


def executor_for(lean: LeanInstall, core: CoreLibrary, config: AskConfig) -> Executor:
    """Threads here, or tasks on the Ray cluster ``config.cluster`` (Ray is imported only then)."""
    if config.cluster is None:
        return LocalExecutor(lean, core, config.jobs)
    return cluster_module().RayExecutor(config.cluster, lean, core)


def cluster_module() -> ModuleType:
    """``leanbridge.cluster``, imported now (and Ray with it), whence the Ray executors of rewrite
    chains and of programs come, only once a cluster is asked for; LeanBridgeError in one line
    where Ray is not installed."""
    try:
        from leanbridge import cluster
    except ModuleNotFoundError as e:
        raise LeanBridgeError(f"a cluster needs Ray ({e}): pip install -e '.[cluster]'") from None
    return cluster


class Asker:
    """Answers lists of questions over ``config.jobs`` Lean processes here, or over the CPUs of
    the Ray cluster ``config.cluster``; counts the processes."""

    def __init__(self, lean: LeanInstall, core: CoreLibrary, atoms: Sequence[str], config: AskConfig = AskConfig()
                 ) -> None:
        self.lean, self.core, self.atoms, self.config = lean, core, tuple(atoms), config
        self.processes = 0  # Lean processes started
        self.lean_seconds = 0.0  # wall time spent in Lean, summed over processes

    def batches(self, n: int, slots: int | None = None) -> list[range]:
        """Index ranges of the files for ``n`` questions: none over ``batch_size``, at least one
        per process once there are two questions for each, and a multiple of the process count
        (``slots``, default ``config.jobs``), so that no process idles at the end."""
        if n == 0:
            return []
        jobs = max(1, self.config.jobs if slots is None else slots)
        n_files = max(math.ceil(n / self.config.batch_size), min(jobs, n // 2), 1)
        if n_files > 1:
            n_files = jobs * math.ceil(n_files / jobs)
        size = math.ceil(n / n_files)
        return [range(i, min(n, i + size)) for i in range(0, n, size)]

    def ask(self, questions: Sequence[Question],
            on_answers: Callable[[list[tuple[int, Answer]], float], None] | None = None) -> list[Answer]:
        """Answer every question. ``on_answers`` gets each file's answers (indexed into
        ``questions``) and the Lean seconds per answer, in this thread, as they arrive."""
        answers: list[Answer | None] = [None] * len(questions)
        if not questions:
            return []
        executor = executor_for(self.lean, self.core, self.config)
        batches = [[(i, questions[i]) for i in rows] for rows in self.batches(len(questions), executor.slots)]
        for result in executor.answers(self.atoms, self.config, batches):
            self.processes += result.processes
            self.lean_seconds += result.seconds
            for index, answer in result.answers:
                answers[index] = answer
            if on_answers is not None:
                on_answers(list(result.answers), result.seconds / max(1, len(result.answers)))
        return answers  # type: ignore[return-value]
