"""The one certification path: the distinct statements of a run, keyed by content and named by
their first use, asked of Lean beside the certificate store, every answer recorded as it comes.

``certify_dataset`` (``leanbridge.certify``) certifies a dataset's statements by this path,
``verify_dataset`` (``leanbridge.verify``) re-checks them by it into a fresh store, and
``certify_steps`` certifies a list of steps by it for the tracker's streams and the prover's
prefixes, so the same statements get the same keys and certificate ids everywhere.

The checker (``AskConfig.checker``, a ``leanbridge.checker.Checker``) is part of a certificate's
identity. Datasets are made by the kernel route unless the caller asks for the elaborator
(``DATASET_BRIDGE``; ``certify --checker elaborator``): a kernel-route statement's key names
``kernel:<kcheck sources' sha256>``, and the manifest's ``checker`` says which one certified the
dataset (``elaborator`` when the manifest names none).
"""
from __future__ import annotations

import dataclasses
import itertools
import queue
import threading
import time
from collections.abc import Callable, Hashable, Iterable
from pathlib import Path

from chains.rewrite.rules import Event
from chains.rewrite.trees import Tree
from leanbridge import kernel
from leanbridge.asker import AskConfig, Asker
from leanbridge.batch import QuestionFailed
from leanbridge.checker import Checker
from leanbridge.corelib import CoreLibrary
from leanbridge.discovery import LeanInstall
from leanbridge.paths import cache_dir
from leanbridge.questions import Certify
from leanbridge.render import Statement, equivalence_statement, step_statement
from leanbridge.store import CertificateStore
from leanbridge.verdicts import Rejected

CERT_ID_LENGTH = 16

Progress = Callable[[str, int, int], None]  # (phase, done, total)


def quiet(phase: str, done: int, total: int) -> None:
    """A progress callback that shows nothing."""
    pass


PROGRESS_EVERY = 64  # chains between progress reports while rendering and writing (a split with probes takes minutes)


def default_store() -> Path:
    """The certificate store commands use unless told otherwise: the cache's."""
    return cache_dir() / "certificates.sqlite"


class CertificationFailed(Exception):
    """Lean rejected at least one statement; the message names the first."""


# What ``certify_dataset`` asks with when its caller names nothing: the kernel route.
# (``AskConfig()`` itself keeps the elaborator, for the prover's and the probes' questions.)
DATASET_BRIDGE = AskConfig(checker=Checker.KERNEL)


class Statements:
    """Distinct statements of a run, keyed by content address, with the first place each is used."""

    def __init__(self, core: CoreLibrary, lean: LeanInstall, atoms: tuple[str, ...],
                 checker: Checker = Checker.ELABORATOR) -> None:
        self.core, self.lean, self.atoms = core, lean, atoms
        self.checker = checker  # whose certificates the keys name (``Statement.key``)
        self.by_key: dict[str, Statement] = {}
        self.first_use: dict[str, str] = {}
        self._steps: dict[tuple[Hashable, Event], str] = {}
        self._equivalences: dict[tuple[Tree, Tree], str] = {}

    def _add(self, statement: Statement, where: str) -> str:
        key = statement.key(self.core.hash, self.lean.githash, self.checker)
        if key not in self.by_key:
            self.by_key[key] = statement
            self.first_use[key] = where
        return key

    def step(self, state: Hashable, tree: Tree, event: Event, where: Callable[[], str]) -> str:
        """Key of the step statement; ``state`` identifies ``tree`` (an interned id is cheaper to hash)."""
        key = self._steps.get((state, event))
        if key is None:
            key = self._steps[(state, event)] = self._add(step_statement(tree, event, self.atoms), where())
        return key

    def equivalence(self, left: Tree, right: Tree, where: Callable[[], str]) -> str:
        key = self._equivalences.get((left, right))
        if key is None:
            key = self._equivalences[(left, right)] = self._add(
                equivalence_statement(left, right, self.atoms), where())
        return key


class LeanRun:
    """The statements of a run that ``store`` lacks, asked of Lean in a background thread as
    they are handed over (``hand_over``, between splits) while this thread goes on sampling and
    rendering; on two cores Lean then works during Python's phases instead of after them.
    Lean's answers are recorded in the store on this thread, whenever it hands over or waits,
    so a killed run keeps what Lean answered. ``finish`` waits for every answer."""

    def __init__(self, statements: Statements, store: CertificateStore, bridge: AskConfig,
                 progress: Progress) -> None:
        self.statements, self.store, self.progress = statements, store, progress
        self.asker = Asker(statements.lean, statements.core, statements.atoms, bridge)
        self.todo: list[tuple[str, Statement]] = []  # sent to Lean, in order
        self.rejected: dict[str, Rejected] = {}
        self._handed = 0  # entries of statements.by_key looked at so far
        self._chunks: queue.Queue = queue.Queue()  # (index of its first statement in todo, statements); None: stop
        self._answers: queue.Queue = queue.Queue()  # (answers indexed into todo, Lean seconds per answer)
        self._failure: tuple[int, BaseException] | None = None  # (index of the chunk's first statement, error)
        self._thread: threading.Thread | None = None
        self._recorded = 0
        self.busy = 0.0  # wall seconds Lean was at work (overlapping this thread's sampling and rendering)

    def hand_over(self) -> None:
        """Send Lean the statements added since the last call that the store does not hold."""
        keys = list(itertools.islice(self.statements.by_key, self._handed, None))
        self._handed += len(keys)
        have = self.store.certified(keys)
        chunk = [(key, self.statements.by_key[key]) for key in keys if key not in have]
        self._record()
        if not chunk:
            return
        self._chunks.put((len(self.todo), [statement for _, statement in chunk]))
        self.todo.extend(chunk)
        self.progress("lean", self._recorded, len(self.todo))
        if self._thread is None:
            self._thread = threading.Thread(target=self._work, name="certify-lean", daemon=True)
            self._thread.start()

    def _work(self) -> None:
        while (item := self._chunks.get()) is not None:
            first, chunk = item
            if self._failure is not None:
                continue  # drain: nothing more is asked after a failure
            started = time.perf_counter()
            try:
                self.asker.ask([Certify(statement) for statement in chunk], lambda answers, seconds: self._answers.put(
                    ([(first + index, answer) for index, answer in answers], seconds)))
            except BaseException as e:  # noqa: BLE001 -- handed to the owning thread, which raises it
                self._failure = (first, e)
            self.busy += time.perf_counter() - started

    def _record(self) -> None:
        while not self._answers.empty():
            answers, seconds = self._answers.get()
            rows = []
            for index, answer in answers:
                key, statement = self.todo[index]
                rows.append((key, statement.kind, statement.text, answer, seconds))
                if not answer.complete:
                    self.rejected[key] = answer if isinstance(answer, Rejected) else Rejected("not_complete", str(answer))
            self.store.record(rows)
            self._recorded += len(rows)
            self.progress("lean", self._recorded, len(self.todo))

    def close(self) -> None:
        """Ask nothing more (after a failure of this thread). The file in flight is not waited
        for: its Lean process ends by itself, by its time-out, or with the thread that owns it
        (which dies with this process)."""
        if self._thread is not None:
            self._failure = self._failure or (0, RuntimeError("stopped"))
            self._chunks.put(None)
            self._thread = None

    def finish(self) -> tuple[int, dict[str, Rejected], int]:
        """Hand over the rest, wait for every answer. Returns (kernel checked, rejections, processes)."""
        self.hand_over()
        self.progress("lean", self._recorded, len(self.todo))
        if self._thread is not None:
            self._chunks.put(None)
            while self._thread.is_alive():
                self._thread.join(0.2)
                self._record()
            self._thread = None
        self._record()
        if self._failure is not None:
            first, error = self._failure
            if isinstance(error, QuestionFailed):
                key = self.todo[first + error.index][0]
                raise CertificationFailed(f"{self.statements.first_use[key]}: {error}") from error
            raise error
        return len(self.todo), self.rejected, self.asker.processes


def check_all(statements: Statements, store: CertificateStore, bridge: AskConfig,
               progress: Progress) -> tuple[int, dict[str, Rejected], int]:
    """Certify every statement missing from ``store``. Returns (kernel checked, rejections, processes)."""
    run = LeanRun(statements, store, bridge, progress)
    try:
        return run.finish()
    finally:
        run.close()


@dataclasses.dataclass(frozen=True)
class StepsCertified:
    """What ``certify_steps`` did: every distinct step is certified, from the store or by Lean now."""

    distinct: int  # distinct step statements
    from_store: int  # ... already certified in the store for this Lean build, core library and checker
    asked: int  # ... sent to Lean by this call (each answer recorded in the store)
    lean_processes: int  # Lean (or kcheck) processes this call started
    checker: str  # the checker's identity, as a manifest records it (``Checker.identity``)


def certify_steps(steps: Iterable[tuple[Tree, Event, str]], lean: LeanInstall, core: CoreLibrary,
                  atoms: tuple[str, ...], store_path: Path, bridge: AskConfig = DATASET_BRIDGE,
                  progress: Progress = quiet) -> StepsCertified:
    """Certify each distinct step ``(tree, event, where)`` (``where`` names its first use in a
    message) by the path ``certify_dataset`` takes: the same statements and keys, served from the
    store at ``store_path`` when it holds them as certified for this Lean build, core library and
    checker, asked of Lean (by ``bridge.checker``) otherwise, every answer committed to the store as
    it comes. Raises CertificationFailed naming the first rejected step."""
    checker = bridge.checker.identity
    statements = Statements(core, lean, atoms, bridge.checker)
    for tree, event, where in steps:
        statements.step(tree, tree, event, lambda where=where: where)
    if not statements.by_key:
        return StepsCertified(0, 0, 0, 0, checker)
    with CertificateStore(store_path, core.hash, lean.githash) as store:
        have = len(store.certified(statements.by_key))
        if bridge.checker is Checker.KERNEL and have < len(statements.by_key):
            kernel.prepare(lean, core, bridge.limits)  # built and audited before Lean is asked anything
        checked, rejected, processes = check_all(statements, store, bridge, progress)
    if rejected:
        raise CertificationFailed(f"{len(rejected)} of {len(statements.by_key)} steps failed; first: "
                                  f"{first_failure(statements, rejected)}")
    return StepsCertified(len(statements.by_key), have, checked, processes, checker)


def first_failure(statements: Statements, rejected: dict[str, Rejected]) -> str:
    """Where the first rejected statement (in file order) is first used, and Lean's reason."""
    key = next(k for k in statements.first_use if k in rejected)  # first in file order
    answer = rejected[key]
    return f"{statements.first_use[key]}: Lean rejected the statement ({answer.error_class}: {answer.message})"


def cert_id(key: str) -> str:
    """The certificate id a dataset stores for the statement of store key ``key``."""
    return key[:CERT_ID_LENGTH]
