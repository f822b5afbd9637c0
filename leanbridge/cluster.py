"""Batches of questions answered as Ray tasks on the nodes of a cluster (``certify --cluster``).

Each task finds Lean and builds (or loads) the core library on its own node, answers its batch
with ``answer_batch`` and returns the answers with the node's Lean githash and core hash, and
on the kernel route its kcheck's identity (sources' sha256 and the Lean githash it runs). A
programs task (``certify --domain programs``) builds (or loads) the programs library instead,
answers its file of program statements with ``leanbridge.programs.check.answer_batch`` and
returns the answers with the node's Lean githash and ``library_hash`` (both libraries). The
driver refuses answers whose identity differs from its own, and it alone writes the
certificate store. A task whose worker dies is retried by Ray on another worker (its answers
arrive once, whichever attempt gives them); its Lean dies with the worker (see
``leanbridge.process.lean_process``). Ray is imported only here, and this module only when a
cluster is asked for.

``connect``, ``ClusterError`` and ``TASK_RETRIES`` are also those of the tracker's runs on a
cluster (``training.cluster``): one way to join a cluster and one error for a cluster's faults.
"""
from __future__ import annotations

import functools
import os
import socket
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any, TypeVar

import ray

from leanbridge import kernel
from leanbridge.batch import AskConfig, BatchResult, Items, QuestionFailed, answer_batch
from leanbridge.checker import Checker
from leanbridge.corelib import CoreLibrary, build_core
from leanbridge.discovery import LeanInstall, find_lean
from leanbridge.errors import LeanBridgeError, shown
from leanbridge.programs.check import CheckConfig, Items as ProgramItems, answer_batch as answer_programs_batch
from leanbridge.programs.library import ProgramsLibrary, build_programs
from leanbridge.runner import LeanLimits, LeanRunError

TASK_RETRIES = 3  # reruns of a task whose worker or node died
T = TypeVar("T")


class ClusterError(LeanBridgeError):
    """The cluster cannot be reached, work sent to it failed there (the message names the task or
    run and why), or a node answered with another Lean, core library, programs library or kcheck."""


@dataclass(frozen=True)
class NodeAnswer:
    """What a task sends back: the batch's answers, or why it failed, and who answered."""

    node: str  # host and worker pid
    lean_githash: str
    core_hash: str
    result: BatchResult | None
    failure: str | None = None  # Lean's failure, when there is no result
    failed_index: int | None = None  # the question Lean failed on alone (QuestionFailed)
    # the kernel route only: (kcheck's sources' sha256, the Lean githash it runs); None otherwise
    kcheck: tuple[str, str] | None = None


@dataclass(frozen=True)
class ProgramsAnswer:
    """What a programs task sends back: the file's answers, or why it failed, and who answered."""

    node: str  # host and worker pid
    lean_githash: str
    library_hash: str  # ProgramsLibrary.library_hash: the programs and core libraries together
    result: BatchResult | None
    failure: str | None = None  # Lean's failure, when there is no result
    failed_index: int | None = None  # the statement Lean failed on alone (QuestionFailed)


def _node() -> str:
    return f"{socket.gethostname()} (pid {os.getpid()})"


@functools.cache
def _node_lean(limits: LeanLimits) -> tuple[LeanInstall, CoreLibrary]:
    """This node's Lean and core library, found and built once per worker process."""
    lean = find_lean()
    return lean, build_core(lean, limits)


@functools.cache
def _node_programs(limits: LeanLimits) -> tuple[LeanInstall, ProgramsLibrary]:
    """This node's Lean and programs library (over its core library), built once per worker process."""
    lean, core = _node_lean(limits)
    return lean, build_programs(lean, limits, core)


def answer_on_node(atoms: tuple[str, ...], config: AskConfig, items: Items) -> NodeAnswer:
    """The body of a task: answer ``items`` with this node's Lean."""
    node = _node()
    try:
        lean, core = _node_lean(config.limits)
        kcheck = kernel.running_identity(lean) if config.checker is Checker.KERNEL else None
    except LeanBridgeError as e:
        return NodeAnswer(node, "", "", None, f"no usable Lean on this node: {e}")
    try:
        result = answer_batch(lean, core, atoms, config.limits, items, config.retries, config.checker)
    except QuestionFailed as e:
        return NodeAnswer(node, lean.githash, core.hash, None, str(e), e.index, kcheck)
    except LeanRunError as e:
        return NodeAnswer(node, lean.githash, core.hash, None, str(e), kcheck=kcheck)
    return NodeAnswer(node, lean.githash, core.hash, result, kcheck=kcheck)


def answer_programs_on_node(config: CheckConfig, items: ProgramItems) -> ProgramsAnswer:
    """The body of a programs task: answer ``items`` (program statements) with this node's Lean
    and programs library."""
    node = _node()
    try:
        lean, library = _node_programs(config.limits)
    except LeanBridgeError as e:
        return ProgramsAnswer(node, "", "", None, f"no usable Lean or programs library on this node: {e}")
    try:
        result = answer_programs_batch(lean, library, items, config)
    except QuestionFailed as e:
        return ProgramsAnswer(node, lean.githash, library.library_hash, None, str(e), e.index)
    except LeanRunError as e:
        return ProgramsAnswer(node, lean.githash, library.library_hash, None, str(e))
    return ProgramsAnswer(node, lean.githash, library.library_hash, result)


def connect(address: str) -> None:
    """Join the Ray cluster at ``address`` (``auto``: the one running on this machine), once per
    process (a process already joined stays on its cluster); ClusterError in one line when there
    is none to join."""
    if ray.is_initialized():
        return
    try:
        ray.init(address=address, logging_level="ERROR", log_to_driver=False)
    except (ConnectionError, RuntimeError, ValueError) as e:
        raise ClusterError(f"cannot reach a Ray cluster at {address!r}: {shown(str(e), 300)}") from e


def _task(body: Callable[..., Any]) -> Any:
    """``body`` as a Ray task of one CPU, rerun when its worker or node dies."""
    return ray.remote(num_cpus=1, max_retries=TASK_RETRIES, retry_exceptions=False)(body)


def _slots() -> int:
    return max(1, int(ray.cluster_resources().get("CPU", 1)))


def _gathered(pending: list, checked: Callable[[Any], T]) -> Iterator[T]:
    """Each task's reply, ``checked``, as it arrives; the rest are cancelled at the first failure
    or when the consumer stops early."""
    try:
        while pending:
            done, pending = ray.wait(pending, num_returns=1)
            try:
                reply = ray.get(done[0])
            except ray.exceptions.RayError as e:
                raise ClusterError(f"a task failed on the cluster after {TASK_RETRIES} retries: {e}") from e
            yield checked(reply)
    finally:
        for ref in pending:
            ray.cancel(ref, force=True)


def _result(reply: NodeAnswer | ProgramsAnswer) -> BatchResult:
    """The answers of a node whose identity was accepted, or its failure raised as here."""
    if reply.failed_index is not None:
        raise QuestionFailed(f"on node {reply.node}: {reply.failure}", reply.failed_index)
    if reply.result is None:
        raise LeanRunError(f"on node {reply.node}: {reply.failure}")
    return reply.result


class RayExecutor:
    """Batches answered as Ray tasks, one CPU each; ``slots`` is the cluster's CPU count."""

    def __init__(self, address: str, lean: LeanInstall, core: CoreLibrary) -> None:
        connect(address)
        self.lean, self.core = lean, core
        self.slots = _slots()
        self._task = _task(answer_on_node)

    def checked(self, reply: NodeAnswer, checker: Checker = Checker.ELABORATOR) -> BatchResult:
        """The batch's answers, once the node is known to have asked this run's Lean and core
        (and, on the kernel route, this run's kcheck)."""
        if reply.lean_githash and (reply.lean_githash, reply.core_hash) != (self.lean.githash, self.core.hash):
            raise ClusterError(
                f"node {reply.node} answered with Lean {reply.lean_githash[:12]} and core {reply.core_hash[:12]}; "
                f"this run uses Lean {self.lean.githash[:12]} and core {self.core.hash[:12]}")
        if reply.lean_githash and checker is Checker.KERNEL:
            ours = kernel.running_identity(self.lean)
            if reply.kcheck != ours:
                theirs = (f"kcheck {reply.kcheck[0][:12]} on Lean {reply.kcheck[1][:12]}" if reply.kcheck
                          else "no kcheck")
                raise ClusterError(f"node {reply.node} answered with {theirs}; this run uses kcheck {ours[0][:12]} "
                                   f"on Lean {ours[1][:12]} (install the same leanbridge on every node)")
        return _result(reply)

    def answers(self, atoms: tuple[str, ...], config: AskConfig, batches: list[Items]) -> Iterator[BatchResult]:
        yield from _gathered([self._task.remote(atoms, config, items) for items in batches],
                             lambda reply: self.checked(reply, config.checker))


class RayProgramsExecutor:
    """Files of program statements answered as Ray tasks, one CPU each (a
    ``leanbridge.programs.check.Executor``); ``slots`` is the cluster's CPU count."""

    def __init__(self, address: str, lean: LeanInstall, library: ProgramsLibrary) -> None:
        connect(address)
        self.lean, self.library = lean, library
        self.slots = _slots()
        self._task = _task(answer_programs_on_node)

    def checked(self, reply: ProgramsAnswer) -> BatchResult:
        """The file's answers, once the node is known to have asked this run's Lean and programs
        library (``library_hash``: the programs library and the core library it imports)."""
        ours = (self.lean.githash, self.library.library_hash)
        if reply.lean_githash and (reply.lean_githash, reply.library_hash) != ours:
            raise ClusterError(
                f"node {reply.node} answered with Lean {reply.lean_githash[:12]} and programs library "
                f"{reply.library_hash[:12]}; this run uses Lean {ours[0][:12]} and programs library {ours[1][:12]} "
                "(install the same leanbridge on every node)")
        return _result(reply)

    def answers(self, config: CheckConfig, batches: list[ProgramItems]) -> Iterator[BatchResult]:
        yield from _gathered([self._task.remote(config, items) for items in batches], self.checked)
