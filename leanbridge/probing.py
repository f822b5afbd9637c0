"""Lean's verdicts on the probes of a dataset, each distinct probe asked once, every verdict
checked against Python's referee.

A probe's verdict lives in the certificate store like any statement (content-addressed by the
probe's Lean text, the core library and the Lean build): a stored rejection is as much Lean's
answer as a stored acceptance. Whether an accepted probe completes the chain (its tree is the
chain's end) is read per use, since the same probe serves chains with different goals.
"""
from __future__ import annotations

from collections.abc import Callable, Hashable
from typing import Protocol

from chains.rewrite.probes import referee
from chains.rewrite.rules import Event
from chains.rewrite.trees import Tree, polish
from leanbridge.asker import AskConfig, Asker
from leanbridge.batch import QuestionFailed
from leanbridge.corelib import CoreLibrary
from leanbridge.discovery import LeanInstall
from leanbridge.errors import LeanBridgeError
from leanbridge.questions import Probe, probe_statement, with_goal
from leanbridge.store import CertificateStore
from leanbridge.verdicts import Accepted, Answer, Rejected, label


class RefereeDisagreement(LeanBridgeError):
    """Lean's verdict on a probe differs from the rules': the message names where."""


class Progress(Protocol):
    def __call__(self, phase: str, done: int, total: int) -> None: ...


class ProbeBook:
    """The distinct probes of a run, with the first place each is used and Lean's answers."""

    def __init__(self, lean: LeanInstall, core: CoreLibrary, atoms: tuple[str, ...]) -> None:
        self.lean, self.core, self.atoms = lean, core, atoms
        self.probes: list[Probe] = []
        self.first_use: list[str] = []
        self.answers: list[Answer | None] = []
        self._index: dict[tuple[Hashable, Event], int] = {}

    def __len__(self) -> int:
        return len(self.probes)

    def add(self, state: Hashable, tree: Tree, event: Event, where: Callable[[], str]) -> int:
        """Index of the probe ``event`` on ``tree``; ``state`` identifies ``tree`` (cheaper to hash)."""
        index = self._index.get((state, event))
        if index is None:
            index = self._index[(state, event)] = len(self.probes)
            self.probes.append(Probe(tree, event))
            self.first_use.append(where())
            self.answers.append(None)
        return index

    def verdict(self, index: int, goal: Tree) -> str:
        """The dataset's verdict string for probe ``index`` on a chain whose end is ``goal``."""
        answer = self.answers[index]
        if answer is None:
            raise RuntimeError("verdict asked before Lean answered")
        return label(with_goal(answer, goal))

    def outcomes(self) -> list[tuple[str, Tree | None]]:
        """Per probe, ``verdict``'s two cases: its label on a chain whose end is not the tree
        it was accepted onto, and that tree (None when no goal makes it complete)."""
        if any(answer is None for answer in self.answers):
            raise RuntimeError("outcomes asked before Lean answered")
        return [(label(answer), answer.tree if isinstance(answer, Accepted) else None) for answer in self.answers]

    def ask(self, store: CertificateStore, config: AskConfig, progress: Progress) -> tuple[int, int]:
        """Answer every probe from ``store`` or from Lean (recording Lean's answers), then hold
        each answer against the referee. Returns (probes sent to Lean, Lean processes)."""
        keys = [probe_statement(p, self.atoms).key(self.core.hash, self.lean.githash) for p in self.probes]
        stored = store.answers(keys, self.atoms)
        todo = [i for i, key in enumerate(keys) if key not in stored]
        for i, key in enumerate(keys):
            if key in stored:
                self.answers[i] = stored[key]
        done = 0
        progress("lean probes", 0, len(todo))

        def on_answers(answers: list[tuple[int, Answer]], seconds: float) -> None:
            nonlocal done
            rows = []
            for j, answer in answers:
                i = todo[j]
                self.answers[i] = answer
                rows.append((keys[i], "probe", probe_statement(self.probes[i], self.atoms).text, answer, seconds))
            store.record(rows)
            done += len(answers)
            progress("lean probes", done, len(todo))

        asker = Asker(self.lean, self.core, self.atoms, config)
        try:
            asker.ask([self.probes[i] for i in todo], on_answers)
        except QuestionFailed as e:
            raise LeanBridgeError(f"{self.first_use[todo[e.index]]}: {e}") from e
        self.check_against_referee()
        return len(todo), asker.processes

    def check_against_referee(self) -> None:
        """Raise RefereeDisagreement at the first probe (in file order) where Lean and the rules differ."""
        for i, (probe, answer) in enumerate(zip(self.probes, self.answers)):
            after, why_not = referee(probe.tree, probe.event)
            if answer.accepted != (after is not None) or (after is not None and answer.tree != after) or \
                    (isinstance(answer, Rejected) and answer.error_class != why_not):
                lean_said = label(answer) + (f" onto {polish(answer.tree)}" if answer.tree is not None else "")
                rules_say = f"rejected:{why_not}" if after is None else f"accepted onto {polish(after)}"
                raise RefereeDisagreement(f"{self.first_use[i]}: Lean says {lean_said} for {probe.event}, "
                                          f"the rules say {rules_say}")
