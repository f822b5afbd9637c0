"""Confirming a stream's steps: a block of chains, as arrays of interned state and event ids,
counts only once every step in it is certified by Lean for this Lean build and core library.

The streamed evaluation (``tracker.stream``) and the long histories of the step-by-step
objectives (``stepwise.distill``) draw chains a block at a time and never write them out; before
any step of a block is judged or trained on, its distinct steps not yet confirmed go through the
one certification path (the certificate store answers for what it holds, Lean is asked for the
rest), and are then looked up in the store. A step Lean rejects, or one the store does not then
hold, raises ``StepNotCertified`` naming the chain and step.

``StepCertifier`` confirms rewrite steps by their step statements (``leanbridge.render``);
``ProgramsCertifier`` confirms program steps by trace questions (``leanbridge.certify_programs``),
each run of consecutive steps along a chain one trace; ``EvaluatedCertifier`` confirms the steps of
a domain of one's own by its step statements (``leanbridge.domain_lean``); ``claim_certifier``
chooses between the last two for a domain.
"""
from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Protocol

import numpy as np

from chains.programs.domain import ProgramsDomain
from chains.programs.syntax import Machine
from chains.protocol import KernelEvaluated
from chains.rewrite.rules import Event
from chains.rewrite.space import StateSpace
from chains.rewrite.trees import Tree, polish
from leanbridge.asker import AskConfig
from leanbridge.certificates import CertificationFailed, certify_steps
from leanbridge.certify_programs import Trace, certify_traces
from leanbridge.corelib import CoreLibrary
from leanbridge.discovery import LeanInstall, find_lean
from leanbridge.domain_lean import DomainModule, DomainQuestion, build_domain_module
from leanbridge.domain_lean import step_statement as step_statement_of
from leanbridge.history_questions import Questions, ask_missing
from leanbridge.programs import ProgramsLibrary, build_programs
from leanbridge.programs.check import LocalExecutor
from leanbridge.render import step_statement
from leanbridge.store import CertificateStore

Progress = Callable[[str, int, int], None]  # (phase, done, total)
_KEY_BITS = 20  # a rewrite step (tree id, event id) as one int: tree << _KEY_BITS | event
_EVENT_BITS = 32  # a program step (state id, statement id) as one int: state << _EVENT_BITS | statement


Block = tuple[np.ndarray, np.ndarray, int]  # states (N, S + 1), events (N, S), the first step's number


def walk_blocks(walks: Iterable[tuple[Sequence[int], Sequence[int]]]) -> list[Block]:
    """Walks given as (state ids, S + 1 of them; event ids, S) of any lengths, as blocks of one length
    each in the order their lengths first occur, what ``confirm_blocks`` (or ``confirm``, block by
    block) reads; a walk of no event has no step and is left out."""
    blocks: dict[int, tuple[list, list]] = {}  # events per walk -> (its states, its events), a row each
    for states, events in walks:
        if len(events):
            rows = blocks.setdefault(len(events), ([], []))
            rows[0].append(list(states))
            rows[1].append(list(events))
    return [(np.array(states, dtype=np.int64), np.array(ids, dtype=np.int64), 1) for states, ids in blocks.values()]


class Interned(Protocol):
    """The ids of a block: ``states[i]`` and ``events[j]`` are the state and event they stand for
    (``tracker.domain_data.DomainBuilder`` grows both as chains are drawn)."""

    states: Sequence
    events: Sequence


class StepNotCertified(Exception):
    """A step whose statement Lean did not certify (rejected, or not in the store afterwards);
    the message names the chain and the step. Nothing is reported after it."""


class StepCertifier:
    """Confirms, block by block, that every step's statement is certified: the distinct steps not
    yet confirmed are certified by ``certify_steps`` (the store first, then Lean), then looked up in
    the store under this Lean build, core library and checker; only then do they count."""

    def __init__(self, space: StateSpace, lean: LeanInstall, core: CoreLibrary, bridge: AskConfig,
                 store: Path, progress: Progress) -> None:
        self.space, self.lean, self.core, self.bridge = space, lean, core, bridge
        self.store, self.progress = store, progress
        self.checker = bridge.checker.identity  # as the report records it
        self.confirmed = np.zeros((0, 0), dtype=bool)  # [state id, event id]: the step's statement is confirmed
        self.counts = {"distinct_steps": 0, "from_store": 0, "asked": 0, "lean_processes": 0}

    def _key(self, tree: Tree, event: Event) -> str:
        """The store's key of the step's statement (``leanbridge.render.Statement.key``), as
        ``certify_steps`` renders and keys it."""
        statement = step_statement(tree, event, self.space.domain.atom_names)
        return statement.key(self.core.hash, self.lean.githash, self.bridge.checker)

    def _table(self, states: np.ndarray, events: np.ndarray) -> np.ndarray:
        """``confirmed``, grown to hold every state and event id of a block."""
        rows, cols = int(states.max(initial=-1)) + 1, int(events.max(initial=-1)) + 1
        held = self.confirmed.shape
        if rows > held[0] or cols > held[1]:
            grown = np.zeros((max(rows, 2 * held[0]), max(cols, held[1])), dtype=bool)
            grown[:held[0], :held[1]] = self.confirmed
            self.confirmed = grown
        return self.confirmed

    def restart(self, space: StateSpace) -> None:
        """Read ids of ``space`` from now on, the steps confirmed so far forgotten (they were ids of
        the old space); the store keeps their certificates, so meeting them again costs no Lean."""
        self.space = space
        self.confirmed = np.zeros((0, 0), dtype=bool)

    def confirm(self, states: np.ndarray, events: np.ndarray, first_step: int) -> None:
        """Every step of a block: states (N, S + 1) before each step and after the last, events
        (N, S), the block's first step numbered ``first_step`` (1-based). StepNotCertified naming
        the first step (in chain order) that Lean did not certify."""
        self.confirm_blocks([(states, events, first_step)])

    def confirm_blocks(self, blocks: Sequence[tuple[np.ndarray, np.ndarray, int]]) -> None:
        """Every step of several blocks, each as ``confirm`` reads one (histories of different lengths):
        their distinct steps not yet confirmed are certified in one call, one trip to the store and Lean."""
        steps, where, found = [], {}, []
        for states, events, first_step in blocks:
            if int(events.max(initial=0)) >> _KEY_BITS:
                raise ValueError(f"more than {1 << _KEY_BITS} distinct events")
            before = states[:, :-1]  # (N, S) the state each step leaves
            fresh = ~self._table(before, events)[before, events]  # (N, S) steps not confirmed yet
            if not fresh.any():
                continue
            at = np.flatnonzero(fresh)  # their places in the block, in chain order
            keys = (before.ravel()[at] << _KEY_BITS) | events.ravel()[at]
            uniq, first = np.unique(keys, return_index=True)
            found.append(uniq)
            width = events.shape[1]
            for key, index in sorted(zip(uniq.tolist(), at[first].tolist()), key=lambda pair: pair[1]):  # first use
                n, k = divmod(index, width)
                tree, event = self.space.trees[key >> _KEY_BITS], self.space.events[key & ((1 << _KEY_BITS) - 1)]
                statement = self._key(tree, event)
                if statement not in where:  # a step of an earlier block
                    here = f"chain {n} step {first_step + k}"
                    steps.append((tree, event, here))
                    where[statement] = (here, tree, event)
        if not steps:
            return
        try:
            done = certify_steps(steps, self.lean, self.core, self.space.domain.atom_names, self.store, self.bridge,
                                 lambda phase, n, total: self.progress("certify", n, total))
        except CertificationFailed as e:
            raise StepNotCertified(f"not certified by Lean, so not counted: {e}") from None
        with CertificateStore(self.store, self.core.hash, self.lean.githash) as store:
            held = store.certified(where)
        for key, (here, tree, event) in where.items():
            if key not in held:
                raise StepNotCertified(f"{here}: {event} on {polish(tree)} is not certified in the store "
                                       f"{self.store} for this Lean build and core library; not counted")
        uniq = np.unique(np.concatenate(found))
        self.confirmed[uniq >> _KEY_BITS, uniq & ((1 << _KEY_BITS) - 1)] = True
        for name, value in (("distinct_steps", done.distinct), ("from_store", done.from_store),
                            ("asked", done.asked), ("lean_processes", done.lean_processes)):
            self.counts[name] += value


class ClaimCertifier:
    """Confirms, block by block, that every step of a stream of interned states and events is
    certified: a step is confirmed as the whole claim (state before, event, state after), so a step
    met again counts without Lean only when it claims the state it was certified to reach. The
    distinct claims not yet confirmed go to ``certify`` (a subclass's: the store, then Lean), which
    raises ``StepNotCertified`` naming the chain and step of the first step Lean did not certify, or
    one the store does not then hold."""

    certificate = ""  # what certifies a step, in words, as a report records it

    def __init__(self, space: Interned, lean: LeanInstall, library: ProgramsLibrary | DomainModule, bridge: AskConfig,
                 store: Path, progress: Progress, counts: dict[str, int]) -> None:
        self.space, self.lean, self.library, self.bridge = space, lean, library, bridge
        self.store, self.progress = Path(store), progress
        self.confirmed = np.zeros(0, dtype=np.int64)  # sorted (state before << 32 | event) of confirmed steps
        self.reached = np.zeros(0, dtype=np.int64)  # the state each of them was certified to reach
        self.counts = counts

    def restart(self, space: Interned) -> None:
        """Read ids of ``space`` from now on, the steps confirmed so far forgotten (they were ids of
        the old space); the store keeps their certificates, so meeting them again costs no Lean."""
        self.space = space
        self.confirmed = np.zeros(0, dtype=np.int64)
        self.reached = np.zeros(0, dtype=np.int64)

    def _known(self, keys: np.ndarray, after: np.ndarray) -> np.ndarray:
        """Whether each step (keys, after: (M,)) is a confirmed one."""
        if not len(self.confirmed):
            return np.zeros(keys.shape, dtype=bool)
        at = np.minimum(np.searchsorted(self.confirmed, keys), len(self.confirmed) - 1)
        return (self.confirmed[at] == keys) & (self.reached[at] == after)

    def confirm(self, states: np.ndarray, events: np.ndarray, first_step: int) -> None:
        """Every step of a block: states (N, S + 1) before each step and after the last, events
        (N, S), the block's first step numbered ``first_step`` (1-based)."""
        self.confirm_blocks([(states, events, first_step)])

    def confirm_blocks(self, blocks: Sequence[tuple[np.ndarray, np.ndarray, int]]) -> None:
        """Every step of several blocks, each as ``confirm`` reads one (histories of different lengths):
        their distinct claims not yet confirmed are certified in one call, one trip to the store and Lean."""
        marks, claims, seen = [], [], set()
        for states, events, _ in blocks:
            keys = ((states[:, :-1] << _EVENT_BITS) | events).ravel()  # (N S,) in chain order
            after = states[:, 1:].ravel()  # (N S,)
            fresh = np.flatnonzero(~self._known(keys, after))  # places of steps not confirmed
            needed = np.zeros(keys.shape, dtype=bool)
            if len(fresh):
                distinct, first = np.unique(np.stack([keys[fresh], after[fresh]], 1), axis=0, return_index=True)
                new = [i for i, claim in enumerate(map(tuple, distinct.tolist())) if claim not in seen]
                seen.update(map(tuple, distinct[new].tolist()))
                needed[fresh[first[new]]] = True  # each distinct claim at its first place
                claims.append(distinct[new])
            marks.append(needed.reshape(events.shape))
        if not seen:
            return
        claims = np.concatenate(claims)
        done = self.certify([(states, events, needed, first_step)
                             for (states, events, first_step), needed in zip(blocks, marks) if needed.any()])
        # Lean certified every claim, so no two of them differ in the state one step reaches
        merged = np.concatenate([np.stack([self.confirmed, self.reached], 1), claims])
        merged = merged[np.unique(merged[:, 0], return_index=True)[1]]
        self.confirmed, self.reached = merged[:, 0], merged[:, 1]
        for name, value in {"distinct_steps": len(claims), **done}.items():
            self.counts[name] += value

    def certify(self, blocks: list[tuple[np.ndarray, np.ndarray, np.ndarray, int]]) -> dict[str, int]:
        """Certify the ``needed`` (N, S) steps of each block (states, events, needed, first step);
        the counts to add."""
        raise NotImplementedError

    def progress_of_certify(self, phase: str, done: int, total: int) -> None:
        self.progress("certify", done, total)

    def provenance(self) -> dict:
        """The Lean build and libraries every confirmed step was certified against, as reports record them."""
        return {"lean": {"version": self.lean.version, "githash": self.lean.githash, "source": self.lean.source},
                "core_hash": self.library.core.hash, "library_hash": self.library.library_hash}


class ProgramsCertifier(ClaimCertifier):
    """Program steps confirmed by trace questions: the claims not yet confirmed, taken in chain
    order, are cut into runs of consecutive steps along each chain, each run one trace (from the
    state before it, the state after each statement)."""

    certificate = ("trace: the state after each of a run of consecutive statements, from the state before them, "
                   "by kernel evaluation")

    def __init__(self, space: Interned, machine: Machine, lean: LeanInstall, library: ProgramsLibrary,
                 bridge: AskConfig, store: Path, progress: Progress) -> None:
        super().__init__(space, lean, library, bridge, store, progress,
                         {"distinct_steps": 0, "traces": 0, "from_store": 0, "asked": 0, "lean_processes": 0})
        self.machine = machine

    def certify(self, blocks: list[tuple[np.ndarray, np.ndarray, np.ndarray, int]]) -> dict[str, int]:
        traces = [trace for block in blocks for trace in self.traces(*block)]
        try:
            done = certify_traces(self.machine, traces, self.lean, self.library, self.store, self.bridge,
                                  self.progress_of_certify)
        except CertificationFailed as e:
            raise StepNotCertified(f"not certified by Lean, so not counted: {e}") from None
        with CertificateStore(self.store, self.library.library_hash, self.lean.githash) as store:
            held = store.certified(done.keys)
        for key, where in done.keys.items():
            if key not in held:
                raise StepNotCertified(f"{where}: their trace is not certified in the store {self.store} for this "
                                       "Lean build and these libraries; not counted")
        return {"traces": done.distinct, "from_store": done.from_store, "asked": done.asked,
                "lean_processes": done.lean_processes}

    def traces(self, states: np.ndarray, events: np.ndarray, needed: np.ndarray, first_step: int) -> list[Trace]:
        """One trace per run of consecutive ``needed`` (N, S) steps of a chain."""
        space, out = self.space, []
        for n in np.flatnonzero(needed.any(1)).tolist():
            edges = np.flatnonzero(np.diff(np.concatenate([[0], needed[n].astype(np.int8), [0]])))
            for a, b in zip(edges[::2].tolist(), edges[1::2].tolist()):  # the run of steps a .. b - 1 (0-based)
                out.append(Trace(space.states[states[n, a]], tuple(space.events[e] for e in events[n, a:b].tolist()),
                                 tuple(space.states[s] for s in states[n, a + 1:b + 1].tolist()), f"chain {n}",
                                 first_step + a))
        return out


class EvaluatedCertifier(ClaimCertifier):
    """Steps of a domain of one's own confirmed by its step statements (``Eq (step e s) s'``, the
    kernel evaluating the domain's module), one a distinct claim."""

    certificate = "step: Eq (step e s) s' by rfl, the kernel evaluating the domain module's step function"

    def __init__(self, space: Interned, domain: KernelEvaluated, lean: LeanInstall, module: DomainModule,
                 bridge: AskConfig, store: Path, progress: Progress) -> None:
        super().__init__(space, lean, module, bridge, store, progress,
                         {"distinct_steps": 0, "from_store": 0, "asked": 0, "lean_processes": 0})
        self.domain = domain

    def certify(self, blocks: list[tuple[np.ndarray, np.ndarray, np.ndarray, int]]) -> dict[str, int]:
        space = self.space
        questions = Questions(self.library.library_hash, self.lean.githash)
        keys: dict[str, str] = {}
        for states, events, needed, first_step in blocks:
            for n, k in zip(*np.nonzero(needed)):
                before, event, after = (space.states[states[n, k]], space.events[events[n, k]],
                                        space.states[states[n, k + 1]])
                here = f"chain {n} step {first_step + k}"
                keys.setdefault(questions.add(DomainQuestion(step_statement_of(self.domain, before, event, after)),
                                              here), here)
        with CertificateStore(self.store, self.library.library_hash, self.lean.githash) as store:
            try:
                asked, processes = ask_missing(questions, list(keys), store, self.bridge, self.lean, self.library,
                                               self.progress_of_certify,
                                               LocalExecutor(self.lean, self.library, self.bridge.jobs))
            except CertificationFailed as e:
                raise StepNotCertified(f"not certified by Lean, so not counted: {e}") from None
            held = store.certified(keys)
        for key, where in keys.items():
            if key not in held:
                raise StepNotCertified(f"{where}: not certified in the store {self.store} for this Lean build and "
                                       "this domain's module; not counted")
        return {"from_store": len(keys) - asked, "asked": asked, "lean_processes": processes}


def claim_certifier(domain, space: Interned, store: Path, progress: Progress,
                    bridge: AskConfig = AskConfig()) -> ClaimCertifier:
    """The certifier of the steps of a domain other than rewrite trees, as
    ``chains.domains.domain_of_manifest`` gives it: programs by trace questions, a domain of one's
    own (``chains.imported.load.RecordedDomain``) by its step statements; Lean asked as ``bridge`` says."""
    lean = find_lean()
    if isinstance(domain, ProgramsDomain):
        return ProgramsCertifier(space, domain.machine, lean, build_programs(lean), bridge, store, progress)
    own = domain.domain
    return EvaluatedCertifier(space, own, lean, build_domain_module(own, lean), bridge, store, progress)
