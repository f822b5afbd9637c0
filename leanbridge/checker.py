"""Certify statements with the Lean kernel, in parallel, with positive confirmation.

A statement is certified only when it was elaborated in a file that Lean finished with no
error or warning at all, and Lean then answered ``'<name>' does not depend on any axioms``
for it. (Lean prints that answer even for a theorem whose elaboration failed, and stops
reporting errors after about a hundred in a file, so neither the answer alone nor silence
is enough.) A file with errors rejects the theorems the errors point at and sends the rest
to a new file; a file whose Lean crashes or times out is retried, then bisected, so the
statement at fault is isolated.
"""
from __future__ import annotations

import math
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass

from leanbridge.corelib import CoreLibrary
from leanbridge.discovery import LeanInstall
from leanbridge.render import Statement, file_header, lean_file, theorem_name
from leanbridge.runner import LeanLimits, LeanRunError, LeanTimeout, Message, run_lean_file

CERTIFIED, REJECTED = "certified", "rejected"


@dataclass(frozen=True)
class Verdict:
    """Lean's answer on one statement."""

    status: str  # CERTIFIED or REJECTED
    detail: str  # why it was rejected: "error: ...", "axioms: ...", "timeout: ...", "crash: ..."
    seconds: float  # share of the deciding Lean run's wall time

    @property
    def certified(self) -> bool:
        return self.status == CERTIFIED


@dataclass(frozen=True)
class _Item:
    index: int  # position in the caller's list
    name: str
    statement: Statement


class Checker:
    """Sends statements to Lean in files of at most ``batch_size`` theorems over ``jobs`` processes."""

    def __init__(self, lean: LeanInstall, core: CoreLibrary, jobs: int, limits: LeanLimits = LeanLimits(),
                 batch_size: int = 1000, retries: int = 1) -> None:
        self.lean, self.core, self.jobs, self.limits = lean, core, max(1, jobs), limits
        self.batch_size, self.retries = batch_size, retries
        self.processes = 0  # Lean processes started
        self._lock = threading.Lock()

    def check(self, statements: Sequence[tuple[str, Statement]],
              on_verdicts: Callable[[list[tuple[int, Verdict]]], None]) -> None:
        """Check ``(key, statement)`` pairs; ``on_verdicts`` gets each file's verdicts, indexed into
        ``statements``, in the calling thread as they arrive."""
        items = [_Item(i, theorem_name(st, key), st) for i, (key, st) in enumerate(statements)]
        if not items:
            return
        # a multiple of the process count, so no process idles at the end; none over batch_size
        n_files = self.jobs * max(2, math.ceil(len(items) / (self.batch_size * self.jobs)))
        size = math.ceil(len(items) / n_files)
        batches = [items[i:i + size] for i in range(0, len(items), size)]
        with ThreadPoolExecutor(max_workers=self.jobs) as pool:
            futures = [pool.submit(self._check_batch, batch) for batch in batches]
            try:
                for future in as_completed(futures):
                    on_verdicts(future.result())
            except BaseException:
                for future in futures:
                    future.cancel()
                raise

    def _run(self, items: list[_Item]) -> tuple[list[Message], float]:
        source = lean_file(self.core.module, [(it.name, it.statement) for it in items])
        for attempt in range(self.retries + 1):
            start = time.perf_counter()
            with self._lock:
                self.processes += 1
            try:
                return run_lean_file(self.lean, source, self.core.olean_dir, self.limits), time.perf_counter() - start
            except LeanTimeout:
                raise  # the same file would time out again: bisect instead
            except LeanRunError:
                if attempt == self.retries:
                    raise
        raise AssertionError("unreachable")

    def _split(self, items: list[_Item]) -> list[tuple[int, Verdict]]:
        mid = len(items) // 2
        return self._check_batch(items[:mid]) + self._check_batch(items[mid:])

    def _check_batch(self, items: list[_Item]) -> list[tuple[int, Verdict]]:
        try:
            messages, seconds = self._run(items)
        except LeanRunError as e:
            if len(items) > 1:
                return self._split(items)
            kind = "timeout" if isinstance(e, LeanTimeout) else "crash"
            return [(items[0].index, Verdict(REJECTED, f"{kind}: {e}", 0.0))]
        share = seconds / len(items)
        first_line = len(file_header(self.core.module)) + 1  # each theorem takes two lines from here
        problems: dict[int, str] = {}  # position in items -> first error or warning
        unattributed = []
        for m in messages:
            if m.severity == "information":
                continue
            position = (m.line - first_line) // 2
            if m.line >= first_line and position < len(items):
                problems.setdefault(position, f"{m.severity}: {m.text.splitlines()[0] if m.text else ''}")
            else:
                unattributed.append(m)
        if unattributed:
            if len(items) > 1:
                return self._split(items)
            return [(items[0].index, Verdict(REJECTED, f"error: {unattributed[0].text.splitlines()[0]}", share))]
        if problems:
            rejected = [(items[p].index, Verdict(REJECTED, why, share)) for p, why in problems.items()]
            rest = [it for p, it in enumerate(items) if p not in problems]
            return rejected + (self._check_batch(rest) if rest else [])
        answers = {m.text for m in messages if m.severity == "information"}
        verdicts = []
        for it in items:
            if f"'{it.name}' does not depend on any axioms" in answers:
                verdicts.append((it.index, Verdict(CERTIFIED, "", share)))
            else:
                said = next((a for a in answers if a.startswith(f"'{it.name}'")), "no answer from #print axioms")
                verdicts.append((it.index, Verdict(REJECTED, f"axioms: {said}", share)))
        return verdicts
