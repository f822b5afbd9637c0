"""Build a certified dataset, and verify one from scratch.

``certify_dataset`` samples the chains of a ``DatasetSpec``, renders each distinct step and
equivalence once, asks Lean for every statement the store does not already hold as
certified (for this Lean build and core library), and writes the dataset only when every
statement is certified. ``verify_dataset`` trusts nothing stored: it re-parses every line,
replays every event, recomputes every certificate id and sends every distinct statement to
Lean again, into a fresh store.

The checker (``AskConfig.checker``: Lean's elaborator, or the kernel route through kcheck)
is part of a certificate's identity. Datasets are made by the kernel route unless the caller
asks for the elaborator (``DATASET_BRIDGE``; ``certify --checker elaborator``): a kernel-route statement's key names ``kernel:<kcheck
sources' sha256>``, and the manifest's ``checker`` says which one certified the dataset
(``elaborator`` when absent: datasets written before there was a choice).
"""
from __future__ import annotations

import contextlib
import dataclasses
import itertools
import json
import queue
import threading
import time
from collections import Counter
from collections.abc import Callable, Hashable, Iterable, Iterator
from pathlib import Path

from chains.corrupt import Corrupted, corrupt_split
from chains.corrupt import manifest_field as corrupt_field
from chains.dataset import DatasetError, DatasetSpec, DatasetWriter, file_sha256, read_split
from chains.holdout import HeldOut, HoldOutCheck, Visits, choose
from chains.holdout import sample_split as holdout_split
from chains.manifest import ELABORATOR, Manifest, load_manifest, manifest_path
from chains.probes import PROBE_KINDS, SEED_ACCEPTED, ProbeSampler, probe_rng
from chains.rules import Event, apply, successors
from chains.sampling import Walk, sample_split, split_rng
from chains.space import Domain, StateSpace, domain_size, reachable_trees
from chains.trees import Tree, polish
from leanbridge import kernel
from leanbridge.asker import AskConfig, Asker, QuestionFailed
from leanbridge.corelib import CoreLibrary, build_core
from leanbridge.discovery import PROBE_TIMEOUT_S, LeanInstall, find_lean
from leanbridge.errors import shown
from leanbridge.paths import cache_dir, portable_path
from leanbridge.probing import ProbeBook, RefereeDisagreement
from leanbridge.questions import Certify
from leanbridge.render import Statement, equivalence_statement, step_statement
from leanbridge.store import CertificateStore
from leanbridge.verdicts import Rejected

CERT_ID_LENGTH = 16
PACKAGE_VERSION = "0.1.0"

Progress = Callable[[str, int, int], None]  # (phase, done, total)


def _quiet(phase: str, done: int, total: int) -> None:
    pass


PROGRESS_EVERY = 64  # chains between progress reports while rendering and writing (a split with probes takes minutes)


def default_store() -> Path:
    return cache_dir() / "certificates.sqlite"


class CertificationFailed(Exception):
    """Lean rejected at least one statement; the message names the first."""


# What ``certify_dataset`` asks with when its caller names nothing: the kernel route.
# (``AskConfig()`` itself keeps the elaborator, for the prover's and the probes' questions.)
DATASET_BRIDGE = AskConfig(checker="kernel")


def checker_identity(checker: str) -> str:
    """What the manifest records as the checker: ``elaborator``, or ``kernel:<kcheck sha256>``."""
    return kernel.identity() if checker == "kernel" else ELABORATOR


class _Statements:
    """Distinct statements of a run, keyed by content address, with the first place each is used."""

    def __init__(self, core: CoreLibrary, lean: LeanInstall, atoms: tuple[str, ...], checker: str = ELABORATOR
                 ) -> None:
        self.core, self.lean, self.atoms = core, lean, atoms
        self.identity = checker  # the checker as the manifest records it (``checker_identity``)
        # the elaborator's keys are the keys of every dataset made before the kernel route
        self.checker = None if checker == ELABORATOR else checker
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


class _LeanRun:
    """The statements of a run that ``store`` lacks, asked of Lean in a background thread as
    they are handed over (``hand_over``, between splits) while this thread goes on sampling and
    rendering; on two cores Lean then works during Python's phases instead of after them.
    Lean's answers are recorded in the store on this thread, whenever it hands over or waits,
    so a killed run keeps what Lean answered. ``finish`` waits for every answer."""

    def __init__(self, statements: _Statements, store: CertificateStore, bridge: AskConfig,
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


def _check_all(statements: _Statements, store: CertificateStore, bridge: AskConfig,
               progress: Progress) -> tuple[int, dict[str, Rejected], int]:
    """Certify every statement missing from ``store``. Returns (kernel checked, rejections, processes)."""
    run = _LeanRun(statements, store, bridge, progress)
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
    checker: str  # the checker's identity, as a manifest records it (``checker_identity``)


def certify_steps(steps: Iterable[tuple[Tree, Event, str]], lean: LeanInstall, core: CoreLibrary,
                  atoms: tuple[str, ...], store_path: Path, bridge: AskConfig = DATASET_BRIDGE,
                  progress: Progress = _quiet) -> StepsCertified:
    """Certify each distinct step ``(tree, event, where)`` (``where`` names its first use in a
    message) by the path ``certify_dataset`` takes: the same statements and keys, served from the
    store at ``store_path`` when it holds them as certified for this Lean build, core library and
    checker, asked of Lean (by ``bridge.checker``) otherwise, every answer committed to the store as
    it comes. Raises CertificationFailed naming the first rejected step."""
    checker = checker_identity(bridge.checker)
    statements = _Statements(core, lean, atoms, checker)
    for tree, event, where in steps:
        statements.step(tree, tree, event, lambda where=where: where)
    if not statements.by_key:
        return StepsCertified(0, 0, 0, 0, checker)
    with CertificateStore(store_path, core.hash, lean.githash) as store:
        have = len(store.certified(statements.by_key))
        if bridge.checker == "kernel" and have < len(statements.by_key):
            kernel.prepare(lean, core, bridge.limits)  # built and audited before Lean is asked anything
        checked, rejected, processes = _check_all(statements, store, bridge, progress)
    if rejected:
        raise CertificationFailed(f"{len(rejected)} of {len(statements.by_key)} steps failed; first: "
                                  f"{_first_failure(statements, rejected)}")
    return StepsCertified(len(statements.by_key), have, checked, processes, checker)


_KEY_BITS = 20  # a step or probe (state, event id) as one int key: state << _KEY_BITS | event id


class _LineWriter:
    """The JSON text of histories, byte for byte what ``json.dumps(record, separators=(",", ":"))``
    writes for ``encode_history``'s dicts, assembled from strings made once per distinct tree,
    event and statement instead of once per use: the default tier-1 dataset has 5.6 million
    step instances over 4,800 distinct statements (``tests/test_certify.py`` holds the bytes)."""

    def __init__(self, space: StateSpace, statements: _Statements) -> None:
        self.space, self.statements = space, statements
        self._trees: dict[int, str] = {}  # state -> its Polish text, JSON-quoted
        self._events: list[str] = []  # event id -> its text, JSON-quoted
        self._certs: dict[int, str] = {}  # state << _KEY_BITS | event id -> certificate id, JSON-quoted
        self._uses: Counter[int] = Counter()  # event id -> steps that use it
        self.steps = 0

    def _tree(self, state: int) -> str:
        text = self._trees.get(state)
        if text is None:
            text = self._trees[state] = json.dumps(polish(self.space.trees[state]))
        return text

    def _event_texts(self) -> list[str]:
        """Event id -> JSON-quoted text, for every event interned so far."""
        events = self.space.events
        while len(self._events) < len(events):
            self._events.append(json.dumps(str(events[len(self._events)])))
        return self._events

    def _certs_of(self, walk: Walk, where: str) -> str:
        try:
            return ",".join([self._certs[state << _KEY_BITS | event] for state, event in zip(walk.states, walk.ids)])
        except KeyError:
            pass
        for k, (state, event) in enumerate(zip(walk.states, walk.ids)):
            key = state << _KEY_BITS | event
            if key not in self._certs:
                if event >> _KEY_BITS:
                    raise ValueError(f"more than {1 << _KEY_BITS} distinct events")
                self._certs[key] = json.dumps(_cert_id(self.statements.step(
                    state, self.space.trees[state], self.space.events[event], lambda: f"{where} step {k}")))
        return ",".join([self._certs[state << _KEY_BITS | event] for state, event in zip(walk.states, walk.ids)])

    def history(self, walk: Walk, where: str) -> str:
        """``"start":…,"events":[…],"end":…,"certs":[…]`` of ``walk``; ``where`` names it in messages."""
        certs = self._certs_of(walk, where)
        self.steps += len(walk.ids)
        self._uses.update(walk.ids)
        events = ",".join(map(self._event_texts().__getitem__, walk.ids))
        return (f'"start":{self._tree(walk.states[0])},"events":[{events}],'
                f'"end":{self._tree(walk.end)},"certs":[{certs}]')

    def steps_by_rule(self) -> Counter[str]:
        out: Counter[str] = Counter()
        for event, n in self._uses.items():
            out[self.space.events[event].rule] += n
        return out


class _ProbeVerdicts:
    """The ``"probes"`` JSON of a chain from Lean's answers, one string per distinct (probe,
    kind, complete or not) rather than a verdict per use, and the counts by kind and verdict.
    A probe's code is ``index * len(PROBE_KINDS) + kind``; a chain has ``len(PROBE_KINDS)``
    codes per step, in ``PROBE_KINDS`` order, so the first kind's string opens the step's
    list and the last one's closes it."""

    def __init__(self, book: ProbeBook, space: StateSpace) -> None:
        self.book = book
        outcomes = book.outcomes()
        self._labels = [label for label, _ in outcomes]
        # per code: the state its probe's accepted tree is, where that tree is a state (-1: no goal completes it)
        found = [-1 if tree is None or space.find(tree) is None else space.find(tree) for _, tree in outcomes]
        self._completes = [state for state in found for _ in PROBE_KINDS]
        self._text = _Fragments(self._fragment)  # code << 1 | complete -> [kind, event, verdict] as JSON
        self._uses: Counter[int] = Counter()

    def _fragment(self, use: int) -> str:
        index, kind = divmod(use >> 1, len(PROBE_KINDS))
        verdict = "complete" if use & 1 else self._labels[index]
        text = json.dumps([PROBE_KINDS[kind], str(self.book.probes[index].event), verdict], separators=(",", ":"))
        return ("[" if kind == 0 else "") + text + ("]" if kind == len(PROBE_KINDS) - 1 else "")

    def json(self, codes: list[int], goal: int) -> str:
        """The probes of a chain ending at state ``goal``."""
        if len(codes) % len(PROBE_KINDS):
            raise ValueError("a chain's probes come in steps of one probe per kind")
        completes = self._completes
        uses = [code << 1 | (completes[code] == goal) for code in codes]
        self._uses.update(uses)
        return "[" + ",".join(map(self._text.__getitem__, uses)) + "]"

    def counts(self) -> dict[str, Counter[str]]:
        out: dict[str, Counter[str]] = {kind: Counter() for kind in PROBE_KINDS}
        for use, n in self._uses.items():
            index, kind = divmod(use >> 1, len(PROBE_KINDS))
            out[PROBE_KINDS[kind]]["complete" if use & 1 else self._labels[index]] += n
        return out


class _Fragments(dict):
    """A dict that makes a missing value with ``make(key)`` (``map(d.__getitem__, …)`` at C speed)."""

    def __init__(self, make: Callable[[int], str]) -> None:
        super().__init__()
        self._make = make

    def __missing__(self, key: int) -> str:
        value = self[key] = self._make(key)
        return value


def _first_failure(statements: _Statements, rejected: dict[str, Rejected]) -> str:
    key = next(k for k in statements.first_use if k in rejected)  # first in file order
    answer = rejected[key]
    return f"{statements.first_use[key]}: Lean rejected the statement ({answer.error_class}: {answer.message})"


def _cert_id(key: str) -> str:
    return key[:CERT_ID_LENGTH]


def probe_manifest(counts: dict[str, Counter[str]], probe_chains: int, distinct: int, checked: int,
                   processes: int) -> dict:
    """The manifest's account of the probes: counts by kind and verdict, and the accepted
    fraction per kind beside the seed's on natural proofs."""
    accepted = {kind: round(sum(n for v, n in c.items() if not v.startswith("rejected")) / max(1, sum(c.values())), 4)
                for kind, c in counts.items()}
    return {"kinds": list(PROBE_KINDS), "probe_chains": probe_chains,
            "probes": sum(sum(c.values()) for c in counts.values()), "distinct_probes": distinct,
            "kernel_checked": checked, "lean_processes": processes, "referee_disagreements": 0,
            "verdicts": sorted({v for c in counts.values() for v in c}),
            "by_kind": {kind: dict(sorted(c.items())) for kind, c in counts.items()},
            "accepted_fraction": accepted, "seed_accepted_fraction": SEED_ACCEPTED}


def certify_dataset(spec: DatasetSpec, out: Path, store_path: Path, bridge: AskConfig = DATASET_BRIDGE,
                    progress: Progress = _quiet) -> dict:
    """Sample, certify and write the dataset of ``spec`` to ``out``; return its manifest.
    ``bridge.checker`` certifies the steps and equivalences (by default the kernel route).

    Raises CertificationFailed (and writes nothing) when Lean rejects any statement, and
    EnumerationIncomplete (before anything is opened or written) when ``spec.starts`` asks for
    every reachable tree of a domain too large to enumerate, and HoldOutRefused (as early) when
    ``spec.holdout`` asks for more than the domain has to hold out. Every answer Lean gives is
    committed to the store as it comes, so a killed run resumes from it.
    """
    started = time.perf_counter()
    starts = reachable_trees(spec.domain) if spec.starts == "reachable" else None  # training starts' pool
    held = choose(spec.holdout, spec.domain, spec.seed) if spec.holdout is not None else None
    lean = find_lean(min(PROBE_TIMEOUT_S, bridge.limits.timeout_s))
    core = build_core(lean, bridge.limits)
    checker = checker_identity(bridge.checker)
    if bridge.checker == "kernel":
        kernel.prepare(lean, core, bridge.limits)  # built and audited before anything is opened for writing
    writer = DatasetWriter(out)  # fails early on an unwritable output
    closing = contextlib.ExitStack()  # on failure: ask Lean nothing more, close the store
    try:
        phases: dict[str, float] = {"sample": 0.0, "render": 0.0}  # wall seconds per phase, for the benchmark
        space = StateSpace(spec.domain)
        statements = _Statements(core, lean, spec.domain.atom_names, checker)
        book = ProbeBook(lean, core, spec.domain.atom_names) if spec.probes else None
        store = CertificateStore(store_path, core.hash, lean.githash)
        run = _LeanRun(statements, store, bridge, progress)
        closing.callback(store.close)
        closing.callback(run.close)
        sampled = _sample_splits(spec, space, statements, book, run.hand_over, progress, phases, starts, held)
        certified = _certify_statements(sampled, run, store, bridge, progress, phases)
        manifest = _write_dataset(spec, sampled, certified, writer, store_path, phases, started, progress)
        closing.pop_all()
        return manifest
    except BaseException:
        closing.close()
        writer.abort()
        raise


@dataclasses.dataclass(frozen=True)
class _Sampled:
    """What sampling and rendering leave for certification and writing."""

    space: StateSpace
    statements: _Statements  # every distinct step and equivalence, with the first place each is used
    text: _LineWriter  # the chains' JSON text, and the step counts
    book: ProbeBook | None  # the distinct probes (with --probes), Lean's verdicts still to ask
    lines: dict[str, list]  # per split: finished lines, or (line so far, goal, probe codes)
    equivalences: int  # equivalence instances (one per partner) over every split
    held: HeldOut | None = None  # with a held-out protocol: what it held out
    visits: Visits | None = None  # ... and the states training visited, the test chains' ends
    corrupted: Corrupted | None = None  # with spec.corrupt: the training partners replaced by wrong ones


@dataclasses.dataclass(frozen=True)
class _Certified:
    """Lean's account of a sampled dataset, every statement certified."""

    kernel_checked: int  # statements sent to Lean by this run (the others were in the store)
    certified: int  # distinct statements the store holds as certified
    failed: int  # rejected statements (0: a rejection raises CertificationFailed)
    lean_processes: int  # Lean processes started for the steps and equivalences
    probes_checked: int = 0  # distinct probes sent to Lean (with --probes)
    probe_processes: int = 0


def _sample_splits(spec: DatasetSpec, space: StateSpace, statements: _Statements, book: ProbeBook | None,
                   hand_over: Callable[[], None], progress: Progress, phases: dict[str, float],
                   starts: list[Tree] | None = None, held: HeldOut | None = None) -> _Sampled:
    """Sample every split of ``spec`` and render its chains' JSON, each distinct step,
    equivalence and probe added once to ``statements`` (``book``). Training chains start at a
    tree drawn from ``starts`` when given (``reachable_trees``), test chains at a start tree.
    With ``held`` (``chains.holdout.choose``) every split is drawn under its protocol, and the
    states training visits and the test chains' ends are collected.
    With ``spec.corrupt`` a share of the training partners is replaced by wrong ones
    (``chains.corrupt``): their steps are certified like any other, their equivalence with the
    chain is never added, and their JSON says ``"wrong"`` in place of an equivalence id.
    ``hand_over`` is called after each split, so that Lean checks a split's new statements while
    the next splits are sampled and rendered."""
    text = _LineWriter(space, statements)
    probe_index: dict[int, int] = {}  # state << _KEY_BITS | event id -> the probe's index in book
    lines: dict[str, list] = {}  # per split: finished lines, or (line so far, goal, probe codes)
    equivalence_count = 0
    visits = Visits() if held is not None else None
    corrupted = None
    for name, count, length in spec.splits():
        mark = time.perf_counter()
        progress(f"sample {name}", 0, count)
        training = name == "train"  # the sampling knobs shape the training chains only
        if held is None:
            split = sample_split(space, split_rng(spec.seed, name), count, length, spec.partners,
                                 spec.start_walk if training else 0, spec.tier2_weight if training else 1.0,
                                 starts if training else None)
        else:
            split = holdout_split(space, split_rng(spec.seed, name), count, length, spec.partners, held, training,
                                  spec.start_walk if training else 0, spec.tier2_weight if training else 1.0,
                                  starts if training else None)
            if training:
                for sample in split:
                    visits.trees.update(sample.chain.states)
                    for mate in sample.partners:
                        visits.trees.update(mate.states)
            else:
                visits.test_ends[name] = [sample.chain.end for sample in split]
        wrong: frozenset[tuple[int, int]] = frozenset()  # (chain, partner) replaced by a wrong one
        if training and spec.corrupt is not None:
            corrupted = corrupt_split(space, split, spec.corrupt, spec.seed)
            split, wrong = corrupted.samples, corrupted.wrong
        progress(f"sample {name}", count, count)
        phases["sample"] += time.perf_counter() - mark
        mark = time.perf_counter()
        encoded: list = []
        rng = probe_rng(spec.seed, name)
        sampler = ProbeSampler(space, rng) if book is not None else None
        for n, sample in enumerate(split):
            if n % PROGRESS_EVERY == 0:
                progress(f"render {name}", n, count)
            chain_id = f"{name}-{n:05d}"
            where = f"{name}.jsonl chain {chain_id}"
            chain = sample.chain
            head = f'{{"id":{json.dumps(chain_id)},{text.history(chain, where)},"partners":['
            partners = []
            for p, mate in enumerate(sample.partners):
                mate_where = f"{where} partner {p}"
                history = text.history(mate, mate_where)
                if (n, p) in wrong:  # stored as what it is: no equivalence, no certificate
                    partners.append(f'{{{history},"wrong":{json.dumps(spec.corrupt.kind)}}}')
                    continue
                equivalence = _cert_id(statements.equivalence(
                    space.trees[chain.end], space.trees[mate.end], lambda: f"{mate_where} equivalence"))
                partners.append(f'{{{history},"equivalence":{json.dumps(equivalence)}}}')
                equivalence_count += 1
            line = f'{head}{",".join(partners)}]'
            if sampler is not None and (name == "train" or n < spec.probe_chains):
                other = split[(n + 1 + rng.randrange(max(1, len(split) - 1))) % len(split)].chain.ids
                codes = []
                for t, state in enumerate(chain.states[:-1]):
                    for kind, event in enumerate(sampler.sample(chain.ids, t, other)):
                        key = state << _KEY_BITS | event
                        index = probe_index.get(key)
                        if index is None:
                            index = probe_index[key] = book.add(
                                state, space.trees[state], space.events[event],
                                lambda: f"{where} step {t} probe {PROBE_KINDS[kind]}")
                        codes.append(index * len(PROBE_KINDS) + kind)
                encoded.append((line, chain.end, codes))
            else:
                encoded.append(line + "}")
        lines[name] = encoded
        progress(f"render {name}", count, count)
        hand_over()
        phases["render"] += time.perf_counter() - mark
    return _Sampled(space, statements, text, book, lines, equivalence_count, held, visits, corrupted)


def _certify_statements(sampled: _Sampled, run: _LeanRun, store: CertificateStore, bridge: AskConfig,
                        progress: Progress, phases: dict[str, float]) -> _Certified:
    """Wait for Lean's answer to every statement of ``sampled`` the store lacked, then ask for
    the probes' verdicts; closes ``store``. Raises CertificationFailed naming the first rejected
    statement (in file order)."""
    statements, book = sampled.statements, sampled.book
    mark = time.perf_counter()
    with store:
        checked, rejected, processes = run.finish()
        certified = len(store.certified(statements.by_key))
        if rejected:
            raise CertificationFailed(
                f"{len(rejected)} of {len(statements.by_key)} statements failed; first: "
                f"{_first_failure(statements, rejected)}")
        phases["lean wait"] = time.perf_counter() - mark  # for Lean, after rendering
        phases["lean"] = run.busy  # Lean at work, from the first split rendered on
        if book is None:
            return _Certified(checked, certified, len(rejected), processes)
        mark = time.perf_counter()
        probes_checked, probe_processes = book.ask(store, bridge, progress)
        phases["lean probes"] = time.perf_counter() - mark
        return _Certified(checked, certified, len(rejected), processes, probes_checked, probe_processes)


def _write_dataset(spec: DatasetSpec, sampled: _Sampled, certified: _Certified, writer: DatasetWriter,
                   store_path: Path, phases: dict[str, float], started: float, progress: Progress = _quiet) -> dict:
    """Finish the chains' lines with the probes' verdicts, write the split files and the
    manifest, and move the dataset into place. Returns the manifest."""
    mark = time.perf_counter()
    space, statements, text, book = sampled.space, sampled.statements, sampled.text, sampled.book
    verdicts = _ProbeVerdicts(book, space) if book is not None else None

    def finished(name: str, entries: list) -> Iterator[str]:
        for n, entry in enumerate(entries):
            if n % PROGRESS_EVERY == 0:
                progress(f"write {name}", n, len(entries))
            if isinstance(entry, str):
                yield entry
            else:
                line, goal, codes = entry
                yield f'{line},"probes":{verdicts.json(codes, goal)}}}'

    files = {}
    for name, encoded in sampled.lines.items():
        path = writer.write_lines(f"{name}.jsonl", finished(name, encoded))
        progress(f"write {name}", len(encoded), len(encoded))
        files[path.name] = {"chains": len(encoded), "sha256": file_sha256(path)}
    kinds = Counter(st.kind for st in statements.by_key.values())
    probes = None if book is None else probe_manifest(
        verdicts.counts(), spec.probe_chains, len(book), certified.probes_checked, certified.probe_processes)
    domain = spec.domain
    size = domain_size(domain)
    holdout = None if sampled.held is None else sampled.held.manifest_field(
        len(sampled.visits.trees), size["trees"], sampled.visits.unseen())
    manifest = Manifest(
        atoms=domain.atoms, tier=domain.tier, max_size=domain.size_bound, rules=tuple(domain.rules),
        **size,
        seed=spec.seed, chains=spec.chains, length=spec.length, partners=spec.partners,
        test_lengths=tuple(spec.test_lengths), test_chains=spec.test_chains,
        starts=spec.starts, start_walk=spec.start_walk, tier2_weight=spec.tier2_weight, holdout=holdout,
        corrupt_partners=None if sampled.corrupted is None else corrupt_field(spec.corrupt, sampled.corrupted),
        steps=text.steps, steps_by_rule=dict(sorted(text.steps_by_rule().items())),
        distinct_steps=kinds["step"], equivalences=sampled.equivalences,
        distinct_equivalences=kinds["equivalence"], files=files,
        kernel_checked=certified.kernel_checked, certified=certified.certified, failed=certified.failed,
        lean_processes=certified.lean_processes, lean=statements.lean.describe(), core_hash=statements.core.hash,
        checker=statements.identity, package_version=PACKAGE_VERSION, store=portable_path(store_path), probes=probes)
    phases["write"] = time.perf_counter() - mark
    manifest = dataclasses.replace(manifest, phase_seconds={k: round(v, 3) for k, v in phases.items()},
                                   seconds=round(time.perf_counter() - started, 3)).to_json()
    writer.commit(manifest)
    return manifest


def verify_dataset(directory: Path, bridge: AskConfig = AskConfig(), progress: Progress = _quiet,
                   checker: str | None = None) -> dict:
    """Re-check a dataset from scratch; raise DatasetError naming the first failure. The
    statements go to ``checker`` (``AskConfig.checker``'s values), by default the one the
    manifest names; certificate ids are always those of the manifest's checker.

    Four steps, each failing before the next begins: read (the manifest, this Lean and its
    checker, then every chain replayed in Python against the manifest's counts), re-check (every
    distinct statement and probe asked of Lean, with a store of its own), judge (Lean's verdicts
    and the files against what the dataset says) and report.

    A dataset made with wrong partners on purpose (the manifest's ``corrupt_partners``) passes
    when exactly its marked partners are wrong: each replays to a tree other than its chain's
    (for a near miss, one rewrite from it), their count is the manifest's, and the report's
    ``not_certified`` names every one (file, line, chain, partner); their steps are re-checked
    like every other."""
    started = time.perf_counter()
    directory = Path(directory)
    opened = _open_for_verify(directory, bridge, checker)
    replayed = _replay_dataset(directory, opened, progress)
    rechecked = _recheck(opened, replayed, progress)
    _judge(directory, opened, replayed)
    return _verify_report(directory, opened, replayed, rechecked, started)


@dataclasses.dataclass(frozen=True)
class _Opened:
    """A dataset's manifest, and the Lean, core library and checker that are to re-check it."""

    manifest: Manifest
    where: str  # how messages name the manifest
    domain: Domain
    lean: LeanInstall
    core: CoreLibrary
    bridge: AskConfig  # its checker: the one asked for, else the manifest's
    manifest_checker: str  # "elaborator" or "kernel": the route the manifest names


@dataclasses.dataclass
class _Replayed:
    """What the chains hold, replayed in Python: the distinct statements, the probes to ask."""

    statements: _Statements
    book: ProbeBook
    probe_uses: list[tuple[int, Tree, str, str]]  # (probe, goal, the dataset's verdict, where)
    probe_counts: dict[str, Counter[str]]  # the dataset's verdicts by probe kind
    steps: int = 0
    equivalences: int = 0
    # where every partner marked wrong stands ("<file> line N (chain ID) partner P (near|far)"), in file order
    not_certified: list[str] = dataclasses.field(default_factory=list)


@dataclasses.dataclass(frozen=True)
class _Rechecked:
    """Lean's work on a dataset's statements and probes, all accepted as the dataset says."""

    kernel_checked: int  # statements sent to Lean
    probes_checked: int  # distinct probes sent to Lean
    lean_processes: int


def _open_for_verify(directory: Path, bridge: AskConfig, checker: str | None) -> _Opened:
    """Read: the manifest, its domain, this machine's Lean and core library (the ones it was
    certified with) and the checker to use (a kcheck other than this package's is refused)."""
    manifest = load_manifest(directory)
    where_manifest = str(manifest_path(directory))
    domain = manifest.domain(where_manifest)
    if domain.size_bound != manifest.max_size:
        raise DatasetError(f"{where_manifest}: max_size {manifest.max_size} does not match tier {domain.tier}")
    lean = find_lean(min(PROBE_TIMEOUT_S, bridge.limits.timeout_s))
    core = build_core(lean, bridge.limits)
    if manifest.lean.get("githash") != lean.githash or manifest.core_hash != core.hash:
        raise DatasetError(
            f"{where_manifest}: certified with Lean {shown(str(manifest.lean.get('githash', '?')), 12)} "
            f"and core {shown(manifest.core_hash, 12)}; this is Lean {lean.githash[:12]} and core "
            f"{core.hash[:12]}")
    certified_by = manifest.checker
    if not (certified_by == ELABORATOR or certified_by.startswith("kernel:")):
        raise DatasetError(f"{where_manifest}: checker {shown(str(certified_by), 40)} is not elaborator or kernel:<sha256>")
    if certified_by != ELABORATOR and certified_by != kernel.identity():
        raise DatasetError(f"{where_manifest}: certified by kcheck {shown(certified_by[7:], 12)}; this package's kcheck "
                           f"is {kernel.sources_hash()[:12]}")
    manifest_checker = ELABORATOR if certified_by == ELABORATOR else "kernel"
    bridge = dataclasses.replace(bridge, checker=checker or manifest_checker)
    if bridge.checker == "kernel":
        kernel.prepare(lean, core, bridge.limits)
    return _Opened(manifest, where_manifest, domain, lean, core, bridge, manifest_checker)


def _replay_dataset(directory: Path, opened: _Opened, progress: Progress) -> _Replayed:
    """Read, then replay: every listed file's chains and partners, each event applied in Python
    and each certificate id compared with its statement's (ids are the manifest's checker's);
    the files' chain counts and the totals of steps and equivalences against the manifest. With a
    held-out protocol in the manifest, no training chain or partner may hold a held-out item and
    every test chain must hold one (checked as each chain is replayed, naming its place), and the
    trees training visits are counted against the manifest's."""
    domain, bound, manifest = opened.domain, opened.domain.size_bound, opened.manifest
    replayed = _Replayed(_Statements(opened.core, opened.lean, domain.atom_names, manifest.checker),
                         ProbeBook(opened.lean, opened.core, domain.atom_names), [],
                         {kind: Counter() for kind in PROBE_KINDS})
    statements = replayed.statements
    expected_files = manifest.files  # a plain name, a chain count and a sha256 each (check_manifest)
    held = None if manifest.holdout is None else HoldOutCheck(manifest.holdout, opened.where)
    corrupt = manifest.corrupt_partners
    near: dict[Tree, set[Tree]] = {}  # tree -> the trees one rewrite away

    def judge_wrong(mate, record, mate_where: str, name: str) -> None:
        """A partner marked wrong: allowed only where the manifest put wrong partners, of its
        kind, and wrong indeed."""
        if corrupt is None or name != f"{corrupt.get('split')}.jsonl" or mate.wrong != corrupt.get("kind"):
            raise DatasetError(f"{mate_where}: marked a wrong partner ({mate.wrong}), which the manifest's "
                               "corrupt_partners does not declare here")
        if mate.end == record.end:
            raise DatasetError(f"{mate_where}: marked a wrong partner, yet it ends at its chain's tree")
        if mate.wrong == "near":
            if record.end not in near:
                near[record.end] = {t for _, t in successors(record.end, domain.rules, bound)}
            if mate.end not in near[record.end]:
                raise DatasetError(f"{mate_where}: marked a near miss, yet its end is not one rewrite from its "
                                   "chain's")
        replayed.not_certified.append(f"{mate_where} ({mate.wrong})")

    # (tree, event) -> (the tree after it, its statement's certificate id): the chains repeat a
    # few thousand distinct steps millions of times, each worked out once
    known: dict[tuple[Tree, Event], tuple[Tree, str]] = {}

    def replay(history, where: str, visited: set | None = None) -> None:
        tree = history.start
        if visited is not None:
            visited.add(tree)
        for k, (event, cert) in enumerate(zip(history.events, history.certs)):
            done = known.get((tree, event))
            if done is None:
                here = f"{where} step {k}"
                result = apply(tree, event, bound)
                if result is None:
                    raise DatasetError(f"{here}: event {event} does not apply")
                done = known[(tree, event)] = (result, _cert_id(statements.step(tree, tree, event, lambda: here)))
            if done[1] != cert:
                raise DatasetError(f"{where} step {k}: certificate id {cert} is not the id of this step's statement")
            tree = done[0]
            if visited is not None:
                visited.add(tree)
        if tree != history.end:
            raise DatasetError(f"{where}: the stored end tree does not follow from its events")
        replayed.steps += len(history.events)

    def collect_probes(record, where: str) -> None:
        tree = record.start
        for t, (event, probes) in enumerate(zip(record.events, record.probes)):
            for j, probe in enumerate(probes):
                here = f"{where} step {t} probe {j} ({probe.kind} {probe.event})"
                replayed.probe_uses.append((replayed.book.add(tree, tree, probe.event, lambda: here), record.end,
                                            probe.verdict, here))
                replayed.probe_counts[probe.kind][probe.verdict] += 1
            tree = apply(tree, event, bound)

    for name in sorted(expected_files):
        path = directory / name
        if not path.is_file():
            raise DatasetError(f"{path}: listed in the manifest but missing")
        progress(f"replay {name}", 0, expected_files[name].get("chains", 0))
        count = 0
        training = held is not None and name == "train.jsonl"
        testing = held is not None and name.startswith("test-")
        visited = held.visits.trees if training else None
        ends = held.visits.test_ends.setdefault(name.removesuffix(".jsonl"), []) if testing else None
        for where, record in read_split(path, domain):
            if count % PROGRESS_EVERY == 0:
                progress(f"replay {name}", count, expected_files[name].get("chains", 0))
            replay(record, where, visited)
            if training:
                held.training(record.events, where, partner=False)
            elif testing:
                held.test(record.events, where)
                ends.append(record.end)
            for p, mate in enumerate(record.partners):
                mate_where = f"{where} partner {p}"
                replay(mate, mate_where, visited)
                if training:
                    held.training(mate.events, mate_where, partner=True)
                if mate.wrong:
                    judge_wrong(mate, record, mate_where, name)
                    continue
                if mate.end != record.end:
                    raise DatasetError(f"{mate_where}: does not end at its chain's tree")
                key = statements.equivalence(record.end, mate.end, lambda: f"{mate_where} equivalence")
                if _cert_id(key) != mate.equivalence:
                    raise DatasetError(f"{mate_where}: equivalence id {mate.equivalence} is not this pair's")
                replayed.equivalences += 1
            if record.probes is not None:
                collect_probes(record, where)
            count += 1
        progress(f"replay {name}", count, count)
        if count != expected_files[name].get("chains"):
            raise DatasetError(f"{path}: {count} chains, the manifest says {expected_files[name].get('chains')}")

    for field, value in (("steps", replayed.steps), ("equivalences", replayed.equivalences)):
        if getattr(manifest, field) != value:
            raise DatasetError(f"{opened.where}: {field} is {getattr(manifest, field)}, the files hold {value}")
    if held is not None:
        held.compare(manifest.trees)
    if corrupt is not None and corrupt.get("replaced") != len(replayed.not_certified):
        raise DatasetError(f"{opened.where}: corrupt_partners replaced {corrupt.get('replaced')} partners, the "
                           f"files mark {len(replayed.not_certified)} wrong")
    return replayed


def _recheck(opened: _Opened, replayed: _Replayed, progress: Progress) -> _Rechecked:
    """Re-check: every distinct statement, then every distinct probe, asked of Lean with a fresh
    in-memory store (nothing stored is trusted); a rejected statement, or a probe on which Lean
    and Python's rules disagree, is the dataset's failure."""
    with CertificateStore(":memory:", opened.core.hash, opened.lean.githash) as fresh:
        checked, rejected, processes = _check_all(replayed.statements, fresh, opened.bridge, progress)
        if rejected:
            raise DatasetError(_first_failure(replayed.statements, rejected))
        probes_checked = 0
        if replayed.probe_uses:
            try:
                probes_checked, probe_processes = replayed.book.ask(fresh, opened.bridge, progress)
            except RefereeDisagreement as e:
                raise DatasetError(str(e)) from None
            processes += probe_processes
    return _Rechecked(checked, probes_checked, processes)


def _judge(directory: Path, opened: _Opened, replayed: _Replayed) -> None:
    """Judge: each probe's recorded verdict against Lean's, the verdicts by kind against the
    manifest's probe summary, and each file against the manifest's hash (an edit that left the
    chains valid still fails here)."""
    for index, goal, said, where in replayed.probe_uses:
        verdict = replayed.book.verdict(index, goal)
        if verdict != said:
            raise DatasetError(f"{where}: the dataset says {said}, Lean says {verdict}")
    manifest = opened.manifest
    expected_probes = manifest.probes.get("by_kind", {}) if manifest.probes is not None else {}
    found_probes = ({kind: dict(sorted(c.items())) for kind, c in replayed.probe_counts.items()}
                    if replayed.probe_uses else {})
    if expected_probes != found_probes:
        kind = next(k for k in sorted(set(expected_probes) | set(found_probes))
                    if expected_probes.get(k) != found_probes.get(k))
        raise DatasetError(f"{opened.where}: {kind} probes by verdict are {expected_probes.get(kind)}, "
                           f"the files hold {found_probes.get(kind)}")
    for name, meta in sorted(manifest.files.items()):
        if file_sha256(directory / name) != meta.get("sha256"):
            raise DatasetError(f"{directory / name}: contents differ from the manifest's hash (edited after certification)")


def _verify_report(directory: Path, opened: _Opened, replayed: _Replayed, rechecked: _Rechecked,
                   started: float) -> dict:
    """Report: what was replayed and re-checked, by which Lean and checker, in how long."""
    return {"dataset": str(directory), "steps": replayed.steps, "equivalences": replayed.equivalences,
            "distinct_statements": len(replayed.statements.by_key), "kernel_checked": rechecked.kernel_checked,
            "failed": 0, "probes": len(replayed.probe_uses), "distinct_probes": rechecked.probes_checked,
            "lean_processes": rechecked.lean_processes, "seconds": round(time.perf_counter() - started, 3),
            "lean": opened.lean.describe(), "core_hash": opened.core.hash, "checker": opened.bridge.checker,
            "manifest_checker": opened.manifest_checker,
            **({} if opened.manifest.corrupt_partners is None else {"not_certified": replayed.not_certified})}
