"""Verify a certified dataset from scratch.

``verify_dataset`` trusts nothing stored: it re-parses every line, replays every event,
recomputes every certificate id and sends every distinct statement to Lean again, by the one
certification path (``leanbridge.certificates``), into a fresh store.
"""
from __future__ import annotations

import dataclasses
import time
from collections import Counter
from pathlib import Path

from chains.manifest import ELABORATOR, DatasetError, Manifest, load_manifest, manifest_path
from chains.rewrite.dataset import read_split
from chains.rewrite.holdout import HoldOutCheck
from chains.rewrite.probes import PROBE_KINDS
from chains.rewrite.rules import Event, apply, successors
from chains.rewrite.space import Domain, domain_of
from chains.rewrite.trees import Tree
from chains.writer import file_sha256
from leanbridge import kernel
from leanbridge.asker import AskConfig
from leanbridge.certificates import PROGRESS_EVERY, Progress, Statements, cert_id, check_all, first_failure, quiet
from leanbridge.checker import Checker, sources_hash
from leanbridge.corelib import CoreLibrary, build_core
from leanbridge.discovery import PROBE_TIMEOUT_S, LeanInstall, find_lean
from leanbridge.errors import shown
from leanbridge.probing import ProbeBook, RefereeDisagreement
from leanbridge.store import CertificateStore

def verify_dataset(directory: Path, bridge: AskConfig = AskConfig(), progress: Progress = quiet,
                   checker: Checker | None = None) -> dict:
    """Re-check a dataset from scratch; raise DatasetError naming the first failure. The
    statements go to ``checker``, by default the one the
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
    manifest_checker: Checker  # the route the manifest names


@dataclasses.dataclass
class _Replayed:
    """What the chains hold, replayed in Python: the distinct statements, the probes to ask."""

    statements: Statements
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


def _open_for_verify(directory: Path, bridge: AskConfig, checker: Checker | None) -> _Opened:
    """Read: the manifest, its domain, this machine's Lean and core library (the ones it was
    certified with) and the checker to use (a kcheck other than this package's is refused)."""
    manifest = load_manifest(directory)
    where_manifest = str(manifest_path(directory))
    domain = domain_of(manifest.to_json(), where_manifest)
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
    manifest_checker = Checker.recorded(certified_by)
    if certified_by != manifest_checker.identity:
        raise DatasetError(f"{where_manifest}: certified by kcheck {shown(certified_by[7:], 12)}; this package's kcheck "
                           f"is {sources_hash()[:12]}")
    bridge = dataclasses.replace(bridge, checker=checker or manifest_checker)
    if bridge.checker is Checker.KERNEL:
        kernel.prepare(lean, core, bridge.limits)
    return _Opened(manifest, where_manifest, domain, lean, core, bridge, manifest_checker)


def _replay_dataset(directory: Path, opened: _Opened, progress: Progress) -> _Replayed:
    """Read, then replay: every listed file's chains and partners, each event applied in Python
    and each certificate id compared with its statement's (ids are the manifest's checker's);
    the files' chain counts and the totals of steps and equivalences against the manifest. With a
    held-out protocol in the manifest, no training chain or partner may hold a held-out item and
    every test chain must hold one (checked as each chain is replayed, naming its place), and the
    trees training visits are counted against the manifest's."""
    domain, manifest = opened.domain, opened.manifest
    replayed = _Replayed(Statements(opened.core, opened.lean, domain.atom_names, opened.manifest_checker),
                         ProbeBook(opened.lean, opened.core, domain.atom_names), [],
                         {kind: Counter() for kind in PROBE_KINDS})
    replay = _Replay(opened, replayed)
    for name in sorted(manifest.files):  # a plain name, a chain count and a sha256 each (check_manifest)
        replay.file(directory, name, progress)
    for field, value in (("steps", replayed.steps), ("equivalences", replayed.equivalences)):
        if getattr(manifest, field) != value:
            raise DatasetError(f"{opened.where}: {field} is {getattr(manifest, field)}, the files hold {value}")
    if replay.held is not None:
        replay.held.compare(manifest.trees)
    corrupt = manifest.corrupt_partners
    if corrupt is not None and corrupt.get("replaced") != len(replayed.not_certified):
        raise DatasetError(f"{opened.where}: corrupt_partners replaced {corrupt.get('replaced')} partners, the "
                           f"files mark {len(replayed.not_certified)} wrong")
    return replayed


class _Replay:
    """``_replay_dataset``'s work, file by file and chain by chain, into ``replayed``."""

    def __init__(self, opened: _Opened, replayed: _Replayed) -> None:
        self.opened, self.replayed = opened, replayed
        self.domain, self.bound = opened.domain, opened.domain.size_bound
        self.expected = opened.manifest.files
        self.held = None if opened.manifest.holdout is None else HoldOutCheck(opened.manifest.holdout, opened.where)
        self.corrupt = opened.manifest.corrupt_partners
        self.near: dict[Tree, set[Tree]] = {}  # tree -> the trees one rewrite away
        # (tree, event) -> (the tree after it, its statement's certificate id): the chains repeat a
        # few thousand distinct steps millions of times, each worked out once
        self.known: dict[tuple[Tree, Event], tuple[Tree, str]] = {}

    def file(self, directory: Path, name: str, progress: Progress) -> None:
        """Replay every chain of the listed file ``name`` and count them against the manifest."""
        path = directory / name
        if not path.is_file():
            raise DatasetError(f"{path}: listed in the manifest but missing")
        expected = self.expected[name].get("chains", 0)
        progress(f"replay {name}", 0, expected)
        held = self.held
        training = held is not None and name == "train.jsonl"
        testing = held is not None and name.startswith("test-")
        visited = held.visits.trees if training else None
        ends = held.visits.test_ends.setdefault(name.removesuffix(".jsonl"), []) if testing else None
        count = 0
        for where, record in read_split(path, self.domain):
            if count % PROGRESS_EVERY == 0:
                progress(f"replay {name}", count, expected)
            self.history(record, where, visited)
            if training:
                held.training(record.events, where, partner=False)
            elif testing:
                held.test(record.events, where)
                ends.append(record.end)
            self.partners(record, where, name, visited, training)
            if record.probes is not None:
                self.probes(record, where)
            count += 1
        progress(f"replay {name}", count, count)
        if count != self.expected[name].get("chains"):
            raise DatasetError(f"{path}: {count} chains, the manifest says {self.expected[name].get('chains')}")

    def history(self, history, where: str, visited: set | None = None) -> None:
        """Replay one chain or partner: each event applies, each certificate id is its step's."""
        tree = history.start
        if visited is not None:
            visited.add(tree)
        for k, (event, cert) in enumerate(zip(history.events, history.certs)):
            done = self.known.get((tree, event))
            if done is None:
                here = f"{where} step {k}"
                result = apply(tree, event, self.bound)
                if result is None:
                    raise DatasetError(f"{here}: event {event} does not apply")
                done = self.known[(tree, event)] = (
                    result, cert_id(self.replayed.statements.step(tree, tree, event, lambda: here)))
            if done[1] != cert:
                raise DatasetError(f"{where} step {k}: certificate id {cert} is not the id of this step's statement")
            tree = done[0]
            if visited is not None:
                visited.add(tree)
        if tree != history.end:
            raise DatasetError(f"{where}: the stored end tree does not follow from its events")
        self.replayed.steps += len(history.events)

    def partners(self, record, where: str, name: str, visited: set | None, training: bool) -> None:
        """Replay a chain's partners; each ends at its chain's tree with that equivalence's id,
        or is a wrong partner the manifest declares."""
        for p, mate in enumerate(record.partners):
            mate_where = f"{where} partner {p}"
            self.history(mate, mate_where, visited)
            if training:
                self.held.training(mate.events, mate_where, partner=True)
            if mate.wrong:
                self.judge_wrong(mate, record, mate_where, name)
                continue
            if mate.end != record.end:
                raise DatasetError(f"{mate_where}: does not end at its chain's tree")
            key = self.replayed.statements.equivalence(record.end, mate.end, lambda: f"{mate_where} equivalence")
            if cert_id(key) != mate.equivalence:
                raise DatasetError(f"{mate_where}: equivalence id {mate.equivalence} is not this pair's")
            self.replayed.equivalences += 1

    def judge_wrong(self, mate, record, mate_where: str, name: str) -> None:
        """A partner marked wrong: allowed only where the manifest put wrong partners, of its
        kind, and wrong indeed."""
        corrupt = self.corrupt
        if corrupt is None or name != f"{corrupt.get('split')}.jsonl" or mate.wrong != corrupt.get("kind"):
            raise DatasetError(f"{mate_where}: marked a wrong partner ({mate.wrong}), which the manifest's "
                               "corrupt_partners does not declare here")
        if mate.end == record.end:
            raise DatasetError(f"{mate_where}: marked a wrong partner, yet it ends at its chain's tree")
        if mate.wrong == "near":
            if record.end not in self.near:
                self.near[record.end] = {t for _, t in successors(record.end, self.domain.rules, self.bound)}
            if mate.end not in self.near[record.end]:
                raise DatasetError(f"{mate_where}: marked a near miss, yet its end is not one rewrite from its "
                                   "chain's")
        self.replayed.not_certified.append(f"{mate_where} ({mate.wrong})")

    def probes(self, record, where: str) -> None:
        """Collect a chain's probes, each to be asked of Lean once, with the dataset's verdicts."""
        replayed = self.replayed
        tree = record.start
        for t, (event, probes) in enumerate(zip(record.events, record.probes)):
            for j, probe in enumerate(probes):
                here = f"{where} step {t} probe {j} ({probe.kind} {probe.event})"
                replayed.probe_uses.append((replayed.book.add(tree, tree, probe.event, lambda: here), record.end,
                                            probe.verdict, here))
                replayed.probe_counts[probe.kind][probe.verdict] += 1
            tree = apply(tree, event, self.bound)


def _recheck(opened: _Opened, replayed: _Replayed, progress: Progress) -> _Rechecked:
    """Re-check: every distinct statement, then every distinct probe, asked of Lean with a fresh
    in-memory store (nothing stored is trusted); a rejected statement, or a probe on which Lean
    and Python's rules disagree, is the dataset's failure."""
    with CertificateStore(":memory:", opened.core.hash, opened.lean.githash) as fresh:
        checked, rejected, processes = check_all(replayed.statements, fresh, opened.bridge, progress)
        if rejected:
            raise DatasetError(first_failure(replayed.statements, rejected))
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
            "lean": opened.lean.describe(), "core_hash": opened.core.hash, "checker": opened.bridge.checker.value,
            "manifest_checker": opened.manifest_checker.value,
            **({} if opened.manifest.corrupt_partners is None else {"not_certified": replayed.not_certified})}
