"""Build a certified dataset.

``certify_dataset`` samples the chains of a ``DatasetSpec``, renders each distinct step and
equivalence once, asks Lean for every statement the store does not already hold as certified
(for this Lean build, core library and checker) by the one certification path
(``leanbridge.certificates``), and writes the dataset only when every statement is certified.
``leanbridge.verify`` re-checks a dataset from scratch.
"""
from __future__ import annotations

import contextlib
import dataclasses
import json
import time
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path

from chains.manifest import Manifest
from chains.rewrite.corrupt import Corrupted, corrupt_split, manifest_field as corrupt_field
from chains.rewrite.dataset import DatasetSpec
from chains.rewrite.holdout import HeldOut, Visits, choose, sample_split as holdout_split
from chains.rewrite.probes import PROBE_KINDS, SEED_ACCEPTED, ProbeSampler, probe_rng
from chains.rewrite.sampling import Walk, sample_split
from chains.rewrite.space import StateSpace, domain_size, reachable_trees
from chains.rewrite.trees import Tree, polish
from chains.seeds import split_rng
from chains.version import package_version
from chains.writer import DatasetWriter, file_sha256
from leanbridge import kernel
from leanbridge.asker import AskConfig
from leanbridge.certificates import (DATASET_BRIDGE, PROGRESS_EVERY, CertificationFailed, LeanRun, Progress,
                                     Statements, cert_id, first_failure, quiet)
from leanbridge.checker import Checker
from leanbridge.corelib import build_core
from leanbridge.discovery import PROBE_TIMEOUT_S, find_lean
from leanbridge.paths import portable_path
from leanbridge.probing import ProbeBook
from leanbridge.store import CertificateStore

_KEY_BITS = 20  # a step or probe (state, event id) as one int key: state << _KEY_BITS | event id


class _LineWriter:
    """The JSON text of histories, byte for byte what ``json.dumps(record, separators=(",", ":"))``
    writes for a history's dict (``{"start", "events", "end", "certs"}``: Polish trees, event texts,
    certificate ids, in that order), assembled from strings made once per distinct tree,
    event and statement instead of once per use: the default tier-1 dataset has 5.6 million
    step instances over 4,800 distinct statements (``tests/test_certify.py`` holds the bytes)."""

    def __init__(self, space: StateSpace, statements: Statements) -> None:
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
                self._certs[key] = json.dumps(cert_id(self.statements.step(
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
                    progress: Progress = quiet, force: bool = False) -> dict:
    """Sample, certify and write the dataset of ``spec`` to ``out``; return its manifest.
    ``bridge.checker`` certifies the steps and equivalences (by default the kernel route).

    Raises CertificationFailed (and writes nothing) when Lean rejects any statement, and
    EnumerationIncomplete (before anything is opened or written) when ``spec.starts`` asks for
    every reachable tree of a domain too large to enumerate, and HoldOutRefused (as early) when
    ``spec.holdout`` asks for more than the domain has to hold out, and OutputError (as early) when
    ``out`` holds a dataset made with other settings, unless ``force``. Every answer Lean gives is
    committed to the store as it comes, so a killed run resumes from it.
    """
    started = time.perf_counter()
    starts = reachable_trees(spec.domain) if spec.starts == "reachable" else None  # training starts' pool
    held = choose(spec.holdout, spec.domain, spec.seed) if spec.holdout is not None else None
    lean = find_lean(min(PROBE_TIMEOUT_S, bridge.limits.timeout_s))
    core = build_core(lean, bridge.limits)
    if bridge.checker is Checker.KERNEL:
        kernel.prepare(lean, core, bridge.limits)  # built and audited before anything is opened for writing
    writer = DatasetWriter(out, spec.settings(bridge.checker.identity), force)  # fails early: unwritable, or another dataset
    closing = contextlib.ExitStack()  # on failure: ask Lean nothing more, close the store
    try:
        phases: dict[str, float] = {"sample": 0.0, "render": 0.0}  # wall seconds per phase, for the benchmark
        space = StateSpace(spec.domain)
        statements = Statements(core, lean, spec.domain.atom_names, bridge.checker)
        book = ProbeBook(lean, core, spec.domain.atom_names) if spec.probes else None
        store = CertificateStore(store_path, core.hash, lean.githash)
        run = LeanRun(statements, store, bridge, progress)
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
    statements: Statements  # every distinct step and equivalence, with the first place each is used
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


def _sample_splits(spec: DatasetSpec, space: StateSpace, statements: Statements, book: ProbeBook | None,
                   hand_over: Callable[[], None], progress: Progress, phases: dict[str, float],
                   starts: list[Tree] | None = None, held: HeldOut | None = None) -> _Sampled:
    """Sample every split of ``spec`` and render its chains' JSON, each distinct step,
    equivalence and probe added once to ``statements`` (``book``). Training chains start at a
    tree drawn from ``starts`` when given (``reachable_trees``), test chains at a start tree.
    With ``held`` (``chains.rewrite.holdout.choose``) every split is drawn under its protocol, and the
    states training visits and the test chains' ends are collected.
    With ``spec.corrupt`` a share of the training partners is replaced by wrong ones
    (``chains.rewrite.corrupt``): their steps are certified like any other, their equivalence with the
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
        split = _draw_split(spec, space, name, count, length, starts, held, visits)
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
                equivalence = cert_id(statements.equivalence(
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


def _draw_split(spec: DatasetSpec, space: StateSpace, name: str, count: int, length: int,
                starts: list[Tree] | None, held: HeldOut | None, visits: Visits | None) -> list:
    """The chains of split ``name``, drawn under ``held``'s protocol when there is one (the
    states training visits and the test chains' ends then go into ``visits``)."""
    training = name == "train"  # the sampling knobs shape the training chains only
    if held is None:
        return sample_split(space, split_rng(spec.seed, name), count, length, spec.partners,
                            spec.start_walk if training else 0, spec.tier2_weight if training else 1.0,
                            starts if training else None)
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
    return split


def _certify_statements(sampled: _Sampled, run: LeanRun, store: CertificateStore, bridge: AskConfig,
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
                f"{first_failure(statements, rejected)}")
        phases["lean wait"] = time.perf_counter() - mark  # for Lean, after rendering
        phases["lean"] = run.busy  # Lean at work, from the first split rendered on
        if book is None:
            return _Certified(checked, certified, len(rejected), processes)
        mark = time.perf_counter()
        probes_checked, probe_processes = book.ask(store, bridge, progress)
        phases["lean probes"] = time.perf_counter() - mark
        return _Certified(checked, certified, len(rejected), processes, probes_checked, probe_processes)


def _write_dataset(spec: DatasetSpec, sampled: _Sampled, certified: _Certified, writer: DatasetWriter,
                   store_path: Path, phases: dict[str, float], started: float, progress: Progress = quiet) -> dict:
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
        checker=statements.checker.identity, package_version=package_version(), store=portable_path(store_path), probes=probes)
    phases["write"] = time.perf_counter() - mark
    manifest = dataclasses.replace(manifest, phase_seconds={k: round(v, 3) for k, v in phases.items()},
                                   seconds=round(time.perf_counter() - started, 3)).to_json()
    writer.commit(manifest)
    return manifest
